//! A real PuppetDB (Debian's puppetdb 7 package) for the tests of one test
//! binary, started once and only when a test first asks for it: a
//! throwaway PostgreSQL cluster (`pg.rs`, with `pg_trgm`), a test PKI made
//! with rcgen (a CA, PuppetDB's server certificate for 127.0.0.1, a client
//! certificate, and a CA that signed neither), and PuppetDB's JVM serving
//! HTTPS (client certificates required) and plain HTTP on loopback ports,
//! all in a temporary directory. Facts are fed with PuppetDB's
//! `replace_facts` command over the plain port. [`shutdown`] stops it (the
//! test binary's `main` calls it after the tests ran); the JVM also dies
//! with the test process.
//!
//! Include with `#[path = "common/puppetdb.rs"] mod puppetdb;` next to
//! `#[path = "common/pg.rs"] mod pg;`.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use serde_json::Value;
use tempfile::TempDir;

use crate::pg::Pg;

/// Where PuppetDB's jar is (Debian's package).
pub const JAR: &str = "/usr/share/puppetdb/puppetdb.jar";
const BOOTSTRAP: &str = "/etc/puppetdb/bootstrap.cfg";

/// A running PuppetDB.
pub struct PuppetDb {
    pub dir: TempDir,
    /// `https://127.0.0.1:PORT` (client certificates required).
    pub https_url: String,
    /// The plain HTTP port (commands and checks).
    pub http_port: u16,
    pub cacert: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
    /// A CA that signed neither PuppetDB's certificate nor the client's.
    pub other_ca: PathBuf,
    java: Mutex<Option<Child>>,
    _pg: Pg,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

/// A CA, and leaves signed by it: (ca pem, issuer).
fn ca(name: &str) -> (String, Issuer<'static, KeyPair>) {
    let key = KeyPair::generate().expect("CA key");
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let cert = params.self_signed(&key).expect("CA cert");
    (cert.pem(), Issuer::new(params, key))
}

fn leaf(
    issuer: &Issuer<'static, KeyPair>,
    cn: &str,
    sans: &[&str],
    eku: ExtendedKeyUsagePurpose,
) -> (String, String) {
    let key = KeyPair::generate().expect("key");
    let sans: Vec<String> = sans.iter().map(|s| s.to_string()).collect();
    let mut params = CertificateParams::new(sans).expect("params");
    params.distinguished_name.push(DnType::CommonName, cn);
    params.extended_key_usages = vec![eku];
    let cert = params.signed_by(&key, issuer).expect("leaf");
    (cert.pem(), key.serialize_pem())
}

static SHARED: Mutex<Option<Arc<PuppetDb>>> = Mutex::new(None);

/// The binary's PuppetDB, started on first use.
pub fn shared() -> Arc<PuppetDb> {
    let mut slot = SHARED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(db) = slot.as_ref() {
        return db.clone();
    }
    let db = Arc::new(PuppetDb::start());
    *slot = Some(db.clone());
    db
}

/// Stops the binary's PuppetDB and its PostgreSQL, if they were started.
pub fn shutdown() {
    let db = SHARED.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(db) = db {
        db.stop();
    }
}

impl PuppetDb {
    fn start() -> PuppetDb {
        assert!(
            Path::new(JAR).is_file(),
            "{JAR} is missing: apt-get install puppetdb (scripts/test.sh does it)"
        );
        let started = Instant::now();
        let pg = Pg::start();
        let url = pg.database("puppetdb");
        let out = Command::new("psql")
            .arg(&url)
            .args(["-v", "ON_ERROR_STOP=1", "-c", "CREATE EXTENSION pg_trgm"])
            .output()
            .expect("psql");
        assert!(
            out.status.success(),
            "create extension pg_trgm: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let dir = tempfile::Builder::new()
            .prefix("ferry-puppetdb-")
            .tempdir()
            .expect("temp dir");
        let d = dir.path();
        std::fs::create_dir_all(d.join("conf.d")).expect("conf.d");
        std::fs::create_dir_all(d.join("var")).expect("vardir");
        let (ca_pem, issuer) = ca("ferry puppetdb test CA");
        let (other_pem, _) = ca("some other CA");
        let (server_pem, server_key) = leaf(
            &issuer,
            "puppetdb.test",
            &["127.0.0.1", "localhost"],
            ExtendedKeyUsagePurpose::ServerAuth,
        );
        let (client_pem, client_key) = leaf(
            &issuer,
            "ferry-client",
            &[],
            ExtendedKeyUsagePurpose::ClientAuth,
        );
        let p = |n: &str| d.join(n);
        write(&p("ca.pem"), &ca_pem);
        write(&p("other-ca.pem"), &other_pem);
        write(&p("server.pem"), &server_pem);
        write(&p("server.key"), &server_key);
        write(&p("client.pem"), &client_pem);
        write(&p("client.key"), &client_key);
        let (http_port, https_port) = (free_port(), free_port());
        let db_port = url
            .split("127.0.0.1:")
            .nth(1)
            .and_then(|r| r.split('/').next())
            .expect("pg port")
            .to_string();
        write(
            &p("conf.d/config.ini"),
            &format!(
                "[global]\nvardir = {var}\nlogging-config = {log}\n\n[database]\nsubname = //127.0.0.1:{db_port}/puppetdb\nusername = ferry\npassword = unused\n\n[jetty]\nhost = 127.0.0.1\nport = {http_port}\nssl-host = 127.0.0.1\nssl-port = {https_port}\nssl-cert = {cert}\nssl-key = {key}\nssl-ca-cert = {ca}\nclient-auth = need\n\n[command-processing]\nthreads = 1\n",
                var = p("var").display(),
                log = p("logback.xml").display(),
                cert = p("server.pem").display(),
                key = p("server.key").display(),
                ca = p("ca.pem").display(),
            ),
        );
        // The authorization service wants rules; it guards only /metrics.
        write(
            &p("conf.d/auth.conf"),
            "authorization: {\n  version: 1\n  rules: [\n    { match-request: { path: \"/\", type: path }, deny: \"*\", sort-order: 999, name: \"deny all\" }\n  ]\n}\n",
        );
        write(
            &p("logback.xml"),
            "<configuration>\n  <appender name=\"F\" class=\"ch.qos.logback.core.FileAppender\">\n    <file>LOG</file>\n    <encoder><pattern>%d %-5p [%c{2}] %m%n</pattern></encoder>\n  </appender>\n  <root level=\"warn\"><appender-ref ref=\"F\"/></root>\n</configuration>\n"
                .replace("LOG", &p("puppetdb.log").display().to_string())
                .as_str(),
        );
        let java = spawn_java(d);
        let db = PuppetDb {
            https_url: format!("https://127.0.0.1:{https_port}"),
            http_port,
            cacert: p("ca.pem"),
            cert: p("client.pem"),
            key: p("client.key"),
            other_ca: p("other-ca.pem"),
            java: Mutex::new(Some(java)),
            dir,
            _pg: pg,
        };
        db.wait_ready(Duration::from_secs(180));
        eprintln!("puppetdb: ready in {:.1}s", started.elapsed().as_secs_f64());
        db
    }

    /// The JVM's log, for failure messages.
    pub fn log(&self) -> String {
        let mut text =
            std::fs::read_to_string(self.dir.path().join("puppetdb.log")).unwrap_or_default();
        text.push_str(
            &std::fs::read_to_string(self.dir.path().join("java.out")).unwrap_or_default(),
        );
        let skip = text.chars().count().saturating_sub(4000);
        text.chars().skip(skip).collect()
    }

    fn wait_ready(&self, limit: Duration) {
        let started = Instant::now();
        while started.elapsed() < limit {
            if let Some(c) = self.java.lock().unwrap_or_else(|e| e.into_inner()).as_mut()
                && let Ok(Some(status)) = c.try_wait()
            {
                panic!("PuppetDB exited ({status}) while starting:\n{}", self.log());
            }
            if let Ok((200, _)) = self.http("GET", "/pdb/meta/v1/version", "") {
                return;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        panic!("PuppetDB did not answer within {limit:?}:\n{}", self.log());
    }

    /// One plain HTTP request: (status, body).
    pub fn http(&self, method: &str, path: &str, body: &str) -> std::io::Result<(u16, String)> {
        let mut s = TcpStream::connect(("127.0.0.1", self.http_port))?;
        s.set_read_timeout(Some(Duration::from_secs(30)))?;
        write!(
            s,
            "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )?;
        let mut raw = Vec::new();
        s.read_to_end(&mut raw)?;
        let text = String::from_utf8_lossy(&raw).into_owned();
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        Ok((status, body.to_string()))
    }

    /// A query over plain HTTP: its rows.
    pub fn query(&self, query: &Value) -> Result<Vec<Value>, String> {
        let body = serde_json::json!({ "query": query }).to_string();
        match self.http("POST", "/pdb/query/v4", &body) {
            Ok((200, b)) => match serde_json::from_str(&b) {
                Ok(Value::Array(rows)) => Ok(rows),
                _ => Err(format!("not rows: {b}")),
            },
            Ok((status, b)) => Err(format!("{status}: {b}")),
            Err(e) => Err(e.to_string()),
        }
    }

    /// Replaces each node's facts (`replace_facts`, version 5) and waits
    /// until PuppetDB has stored them all.
    pub fn replace_facts(&self, nodes: &[(String, String, Value)]) {
        for (certname, environment, facts) in nodes {
            let payload = serde_json::json!({
                "certname": certname,
                "environment": environment,
                "producer_timestamp": "2026-01-01T00:00:00.000Z",
                "producer": "ferry-tests",
                "values": facts,
            });
            let path = format!("/pdb/cmd/v1?command=replace_facts&version=5&certname={certname}");
            let (status, body) = self
                .http("POST", &path, &payload.to_string())
                .expect("replace_facts");
            assert_eq!(status, 200, "replace_facts {certname}: {body}");
        }
        let started = Instant::now();
        loop {
            let want: Vec<&str> = nodes.iter().map(|(c, _, _)| c.as_str()).collect();
            let have = self
                .query(&Value::String("nodes[certname] {}".into()))
                .unwrap_or_default();
            let have: Vec<&str> = have.iter().filter_map(|r| r["certname"].as_str()).collect();
            if want.iter().all(|w| have.contains(w)) {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "PuppetDB did not store the facts of {want:?} (has {have:?}):\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn stop(&self) {
        if let Some(mut c) = self.java.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Starts the JVM from a thread that lives as long as the process, with
/// SIGKILL as its parent-death signal: it never outlives the tests.
fn spawn_java(dir: &Path) -> Child {
    let dir = dir.to_path_buf();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let out = std::fs::File::create(dir.join("java.out")).expect("java.out");
        let err = out.try_clone().expect("java.out");
        let mut cmd = Command::new("java");
        cmd.args(["-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", JAR])
            .args(["clojure.main", "-m", "puppetlabs.puppetdb.core", "services"])
            .arg("--config")
            .arg(dir.join("conf.d"))
            .args(["--bootstrap-config", BOOTSTRAP])
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        // SAFETY: prctl is async-signal-safe; nothing else runs in the child.
        unsafe {
            use std::os::unix::process::CommandExt;
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let _ = tx.send(
            cmd.spawn()
                .expect("start java (apt-get install default-jre-headless)"),
        );
        loop {
            std::thread::park();
        }
    });
    rx.recv().expect("java started")
}
