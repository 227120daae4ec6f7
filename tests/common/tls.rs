//! Helpers for the service tests: a test PKI made with rcgen (a CA, the
//! server's certificate, client certificates from that CA and from another
//! one), an in-process `ferry serve` on a free loopback port with a SQLite
//! (or given) store, and a small HTTPS client (rustls + hyper) that can
//! present a client certificate or a bearer token and read responses whole
//! or as a stream. Include with `#[path = "common/tls.rs"] mod tls;`.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ferry::server::{AppState, Server, ServerConfig};
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper_util::rt::TokioIo;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use serde_json::Value;
use tempfile::TempDir;
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio_rustls::TlsConnector;

/// A client certificate and key, PEM.
#[derive(Clone)]
pub struct ClientCert {
    pub cert_pem: String,
    pub key_pem: String,
}

struct Ca {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let key = KeyPair::generate().expect("CA key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let cert = params.self_signed(&key).expect("CA cert");
        Ca {
            pem: cert.pem(),
            issuer: Issuer::new(params, key),
        }
    }

    fn leaf(&self, cn: &str, sans: &[&str], eku: ExtendedKeyUsagePurpose) -> ClientCert {
        self.leaf_with_serial(cn, sans, eku, None)
    }

    fn leaf_with_serial(
        &self,
        cn: &str,
        sans: &[&str],
        eku: ExtendedKeyUsagePurpose,
        serial: Option<u64>,
    ) -> ClientCert {
        let key = KeyPair::generate().expect("leaf key");
        let sans: Vec<String> = sans.iter().map(|s| s.to_string()).collect();
        let mut params = CertificateParams::new(sans).expect("leaf params");
        params.serial_number = serial.map(rcgen::SerialNumber::from);
        params.distinguished_name.push(DnType::CommonName, cn);
        params.extended_key_usages = match eku {
            // A server that also calls another one (file-server-uri).
            ExtendedKeyUsagePurpose::Any => vec![
                ExtendedKeyUsagePurpose::ServerAuth,
                ExtendedKeyUsagePurpose::ClientAuth,
            ],
            eku => vec![eku],
        };
        let cert = params.signed_by(&key, &self.issuer).expect("leaf cert");
        ClientCert {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        }
    }

    /// A CRL revoking the certificate with `serial`.
    fn crl(&self, serial: u64) -> String {
        let params = rcgen::CertificateRevocationListParams {
            this_update: rcgen::date_time_ymd(2024, 1, 1),
            next_update: rcgen::date_time_ymd(2099, 1, 1),
            crl_number: rcgen::SerialNumber::from(1u64),
            issuing_distribution_point: None,
            revoked_certs: vec![rcgen::RevokedCertParams {
                serial_number: rcgen::SerialNumber::from(serial),
                revocation_time: rcgen::date_time_ymd(2024, 1, 2),
                reason_code: Some(rcgen::RevocationReason::KeyCompromise),
                invalidity_date: None,
            }],
            key_identifier_method: rcgen::KeyIdMethod::Sha256,
        };
        params
            .signed_by(&self.issuer)
            .expect("crl")
            .pem()
            .expect("crl pem")
    }
}

/// Serial number of [`Pki::revoked`].
const REVOKED_SERIAL: u64 = 4242;

/// The test PKI, written into a temporary directory.
pub struct Pki {
    pub dir: TempDir,
    pub ca_pem: String,
    /// `client-ok` from the CA (also DNS SAN `ok.clients.test`).
    pub client: ClientCert,
    /// `stranger` from the CA: a valid certificate not on the allowlist.
    pub stranger: ClientCert,
    /// `client-ok` from another CA.
    pub foreign: ClientCert,
    /// `revoked` from the CA, listed in `crl.pem`.
    pub revoked: ClientCert,
    ca: Ca,
}

impl Pki {
    pub fn new() -> Pki {
        let dir = tempfile::Builder::new()
            .prefix("ferry-server-test-")
            .tempdir()
            .expect("temp dir");
        let ca = Ca::new("ferry test CA");
        let other = Ca::new("some other CA");
        let server = ca.leaf(
            "ferry-server",
            &["localhost", "127.0.0.1"],
            ExtendedKeyUsagePurpose::ServerAuth,
        );
        std::fs::write(dir.path().join("ca.pem"), &ca.pem).expect("write");
        std::fs::write(dir.path().join("server.pem"), &server.cert_pem).expect("write");
        std::fs::write(dir.path().join("server.key"), &server.key_pem).expect("write");
        std::fs::write(dir.path().join("crl.pem"), ca.crl(REVOKED_SERIAL)).expect("write");
        // Any: both server and client authentication.
        let peer = ca.leaf(
            "ferry-peer",
            &["localhost", "127.0.0.1"],
            ExtendedKeyUsagePurpose::Any,
        );
        std::fs::write(dir.path().join("peer.pem"), &peer.cert_pem).expect("write");
        std::fs::write(dir.path().join("peer.key"), &peer.key_pem).expect("write");
        Pki {
            ca_pem: ca.pem.clone(),
            client: ca.leaf(
                "client-ok",
                &["ok.clients.test"],
                ExtendedKeyUsagePurpose::ClientAuth,
            ),
            stranger: ca.leaf("stranger", &[], ExtendedKeyUsagePurpose::ClientAuth),
            foreign: other.leaf("client-ok", &[], ExtendedKeyUsagePurpose::ClientAuth),
            revoked: ca.leaf_with_serial(
                "revoked",
                &[],
                ExtendedKeyUsagePurpose::ClientAuth,
                Some(REVOKED_SERIAL),
            ),
            dir,
            ca,
        }
    }

    /// A client certificate from the CA whose CN is `certname` (a Puppet
    /// node's).
    pub fn node(&self, certname: &str) -> ClientCert {
        self.ca
            .leaf(certname, &[], ExtendedKeyUsagePurpose::ClientAuth)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The TLS lines of a server config whose certificate also serves as
    /// a client certificate (for `file-server-uri`).
    pub fn peer_config_lines(&self) -> String {
        format!(
            "ssl-cert: {}\nssl-key: {}\nssl-ca-cert: {}\n",
            self.path("peer.pem").display(),
            self.path("peer.key").display(),
            self.path("ca.pem").display()
        )
    }

    /// The TLS lines of a server config.
    pub fn config_lines(&self) -> String {
        format!(
            "ssl-cert: {}\nssl-key: {}\nssl-ca-cert: {}\n",
            self.path("server.pem").display(),
            self.path("server.key").display(),
            self.path("ca.pem").display()
        )
    }
}

/// `extra` config lines, with `allowlist: [client-ok]` added when they do
/// not mention an allowlist (a test that wants none says `# no allowlist`):
/// without one, every certificate is only a node's, and the tests'
/// `client` certificate is the operator's.
pub fn with_operator(extra: &str) -> String {
    if extra.contains("allowlist") {
        extra.to_string()
    } else {
        format!("{extra}\nallowlist: [client-ok]\n")
    }
}

/// A server running in this process.
pub struct TestServer {
    pub addr: SocketAddr,
    pub state: Arc<AppState>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl TestServer {
    /// Starts a server with the PKI's TLS files, `port: 0`, its cache in
    /// `dir`, and `extra` config lines (which may set `store`).
    pub async fn start(pki: &Pki, dir: &Path, extra: &str) -> TestServer {
        Self::start_with_tls(&pki.config_lines(), dir, extra).await
    }

    /// As [`TestServer::start`], with the given TLS config lines.
    pub async fn start_with_tls(tls_lines: &str, dir: &Path, extra: &str) -> TestServer {
        let text = format!(
            "{tls_lines}host: 127.0.0.1\nport: 0\ncache-dir: {}\n{}",
            dir.display(),
            with_operator(extra)
        );
        let path = dir.join("server.yaml");
        std::fs::create_dir_all(dir).expect("dir");
        std::fs::write(&path, &text).expect("write config");
        let config = ServerConfig::load(&path).expect("config");
        let server = Server::bind(config).await.expect("bind");
        let (stop, stopped) = oneshot::channel::<()>();
        let addr = server.local_addr();
        let state = server.state();
        let task = tokio::spawn(server.run(async {
            let _ = stopped.await;
        }));
        TestServer {
            addr,
            state,
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// Stops accepting and waits for the accept loop to end.
    pub async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.task.take() {
            let _ = t.await;
        }
        self.state.store.close().await;
    }
}

/// A server started by [`TestServer::in_background`]: it serves until the
/// test process ends.
pub struct Background {
    pub addr: SocketAddr,
    pub state: Arc<AppState>,
    /// The server's runtime, for calls on its state (the store's pool
    /// lives there).
    pub rt: tokio::runtime::Handle,
    pub pki: Pki,
    /// Its cache-dir (and config file).
    pub dir: TempDir,
}

impl TestServer {
    /// A server with a new PKI on a thread and runtime of its own, its
    /// cache in a new temporary directory; `extra(dir)` gives its config
    /// lines (as [`TestServer::start`] takes them).
    pub fn in_background(extra: impl FnOnce(&Path) -> String + Send + 'static) -> Background {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("ferry-serve".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .expect("runtime");
                rt.block_on(async move {
                    let pki = Pki::new();
                    let dir = tempfile::Builder::new()
                        .prefix("ferry-test-server-")
                        .tempdir()
                        .expect("dir");
                    let config = extra(dir.path());
                    let server = TestServer::start(&pki, dir.path(), &config).await;
                    let _ = tx.send(Background {
                        addr: server.addr,
                        state: Arc::clone(&server.state),
                        rt: tokio::runtime::Handle::current(),
                        pki,
                        dir,
                    });
                    // Serve until the test process ends.
                    std::future::pending::<()>().await;
                    drop(server);
                });
            })
            .expect("server thread");
        rx.recv().expect("the server started")
    }
}

/// An HTTPS client trusting the test CA.
#[derive(Clone)]
pub struct Client {
    connector: TlsConnector,
    pub bearer: Option<String>,
}

/// A whole response.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub content_type: String,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "not JSON ({e}): {} {}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

impl Client {
    /// A client presenting `cert` (or none).
    pub fn new(pki: &Pki, cert: Option<&ClientCert>) -> Client {
        Client::trusting(&pki.ca_pem, cert)
    }

    /// A client trusting the CA certificate(s) `ca_pem`, presenting
    /// `cert` (or none).
    pub fn trusting(ca_pem: &str, cert: Option<&ClientCert>) -> Client {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = rustls::RootCertStore::empty();
        for c in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
            roots.add(c.expect("ca pem")).expect("add root");
        }
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_root_certificates(roots);
        let config = match cert {
            Some(c) => {
                let chain: Vec<CertificateDer<'static>> =
                    CertificateDer::pem_slice_iter(c.cert_pem.as_bytes())
                        .collect::<Result<_, _>>()
                        .expect("cert pem");
                let key = PrivateKeyDer::from_pem_slice(c.key_pem.as_bytes()).expect("key pem");
                builder
                    .with_client_auth_cert(chain, key)
                    .expect("client auth")
            }
            None => builder.with_no_client_auth(),
        };
        Client {
            connector: TlsConnector::from(Arc::new(config)),
            bearer: None,
        }
    }

    pub fn with_bearer(mut self, token: &str) -> Client {
        self.bearer = Some(token.to_string());
        self
    }

    /// A raw TLS connection to the server, for hand-written HTTP.
    pub async fn raw(
        &self,
        addr: SocketAddr,
    ) -> std::io::Result<tokio_rustls::client::TlsStream<TcpStream>> {
        let tcp = TcpStream::connect(addr).await?;
        let name = ServerName::try_from("localhost").expect("name");
        self.connector.connect(name, tcp).await
    }

    /// Sends one request on a new connection; returns the response head and body stream.
    pub async fn open(
        &self,
        addr: SocketAddr,
        method: &str,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> std::io::Result<hyper::Response<Incoming>> {
        let tcp = TcpStream::connect(addr).await?;
        let name = ServerName::try_from("localhost").expect("name");
        let tls = self.connector.connect(name, tcp).await?;
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
            .await
            .map_err(std::io::Error::other)?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let mut req = hyper::Request::builder()
            .method(method)
            .uri(path)
            .header("host", "localhost")
            .header("content-type", "application/json");
        if let Some(token) = &self.bearer {
            req = req.header("authorization", format!("Bearer {token}"));
        }
        let req = req
            .body(Full::new(Bytes::from(body.unwrap_or_default())))
            .map_err(std::io::Error::other)?;
        sender
            .send_request(req)
            .await
            .map_err(std::io::Error::other)
    }

    /// Sends one request and reads the whole response.
    pub async fn send(
        &self,
        addr: SocketAddr,
        method: &str,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> std::io::Result<Resp> {
        let resp = self.open(addr, method, path, body).await?;
        let status = resp.status().as_u16();
        let content_type = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(std::io::Error::other)?
            .to_bytes()
            .to_vec();
        Ok(Resp {
            status,
            content_type,
            body,
        })
    }

    pub async fn get(&self, addr: SocketAddr, path: &str) -> Resp {
        self.send(addr, "GET", path, None).await.expect("GET")
    }

    pub async fn post(&self, addr: SocketAddr, path: &str, body: &Value) -> Resp {
        self.send(addr, "POST", path, Some(body.to_string().into_bytes()))
            .await
            .expect("POST")
    }
}

/// Reads a server-sent-event stream until `job_finished` (or the end),
/// returning the event types in order and their data.
pub async fn read_sse(resp: hyper::Response<Incoming>) -> Vec<(String, Value)> {
    let mut body = resp.into_body();
    let mut text = String::new();
    let mut events = Vec::new();
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else { break };
        if let Some(data) = frame.data_ref() {
            text.push_str(&String::from_utf8_lossy(data));
        }
        while let Some(end) = text.find("\n\n") {
            let block: String = text.drain(..end + 2).collect();
            let mut kind = String::new();
            let mut data = String::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event:") {
                    kind = v.trim().to_string();
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push_str(v.trim());
                }
            }
            if !kind.is_empty() {
                let done = kind == "job_finished";
                events.push((kind, serde_json::from_str(&data).unwrap_or(Value::Null)));
                if done {
                    return events;
                }
            }
        }
    }
    events
}

/// An SSH target object for bolt-server requests on the fixture's sshd.
pub fn ssh_target(host: &str, port: u16, user: &str, key: &Path, known_hosts: &Path) -> Value {
    serde_json::json!({
        "hostname": host,
        "port": port,
        "user": user,
        "private-key-content": std::fs::read_to_string(key).expect("key"),
        "known-hosts-content": std::fs::read_to_string(known_hosts).expect("known_hosts"),
    })
}
