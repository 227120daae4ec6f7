//! A stock Puppet 7 agent (Debian's `puppet` package) run against a test
//! server: `puppet agent -t` with its own confdir, vardir and ssldir in a
//! throwaway directory, never touching /etc/puppet. The ssldir is empty
//! (the agent bootstraps through the server's CA) or holds certificates
//! from the test PKI (`certs/ca.pem`, `certs/<certname>.pem`,
//! `private_keys/<certname>.pem`, `crl.pem`: no CSR round trip). Include
//! with `#[path = "common/agent.rs"] mod agent;` beside
//! `#[path = "common/tls.rs"] mod tls;`.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

use crate::tls::Pki;

/// Whether the `puppet` command is there; says why a test is skipped
/// when it is not.
pub fn have_puppet() -> bool {
    let found = Command::new("puppet")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!(
            "skipped: no `puppet` command (Debian's puppet package; scripts/test.sh installs it)"
        );
    }
    found
}

/// What a `puppet agent -t` run printed and how it exited.
pub struct Run {
    pub code: i32,
    pub output: String,
}

impl Run {
    pub fn says(&self, words: &str) -> bool {
        self.output.contains(words)
    }
}

/// An agent's throwaway directories (and certificate, if it has one).
pub struct Agent {
    pub certname: String,
    dir: tempfile::TempDir,
}

impl Agent {
    /// An agent with an empty ssldir.
    pub fn empty(certname: &str) -> Agent {
        let dir = tempfile::Builder::new()
            .prefix("ferry-agent-")
            .tempdir()
            .expect("dir");
        for sub in ["conf", "out"] {
            std::fs::create_dir_all(dir.path().join(sub)).expect("mkdir");
        }
        std::fs::write(dir.path().join("conf/puppet.conf"), "").expect("puppet.conf");
        Agent {
            certname: certname.to_string(),
            dir,
        }
    }

    /// An agent whose ssldir holds a certificate `pki` made for it.
    pub fn with_cert(certname: &str, pki: &Pki) -> Agent {
        let agent = Agent::empty(certname);
        let ssl = agent.path("ssl");
        for sub in ["certs", "private_keys"] {
            std::fs::create_dir_all(ssl.join(sub)).expect("mkdir");
        }
        let cert = pki.node(certname);
        std::fs::write(ssl.join("certs/ca.pem"), &pki.ca_pem).expect("write");
        std::fs::copy(pki.path("crl.pem"), ssl.join("crl.pem")).expect("copy crl");
        std::fs::write(ssl.join(format!("certs/{certname}.pem")), &cert.cert_pem).expect("write");
        std::fs::write(
            ssl.join(format!("private_keys/{certname}.pem")),
            &cert.key_pem,
        )
        .expect("write");
        agent
    }

    pub fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p)
    }

    /// `puppet agent -t` against the server on `port` of localhost, with
    /// `puppet.conf` text (`None`: as it is) and extra arguments. Facts
    /// and files the test's manifests write go to `out/`
    /// (`$ferry_test_dir`).
    pub fn run(&self, port: u16, conf: Option<&str>, args: &[&str]) -> Run {
        if let Some(conf) = conf {
            std::fs::write(self.path("conf/puppet.conf"), conf).expect("puppet.conf");
        }
        let d = |p: &str| self.path(p).display().to_string();
        let out = Command::new("puppet")
            .args(["agent", "-t", "--color", "false"])
            .args(["--confdir", &d("conf"), "--vardir", &d("var")])
            .args(["--ssldir", &d("ssl"), "--logdir", &d("log")])
            .args(["--rundir", &d("run"), "--codedir", &d("code")])
            .args(["--publicdir", &d("public")])
            .args(["--certname", &self.certname])
            .args(["--server", "localhost"])
            .args(["--masterport", &port.to_string()])
            .args(args)
            .env("FACTER_ferry_test_dir", self.path("out"))
            .env_remove("http_proxy")
            .env_remove("https_proxy")
            .output()
            .expect("run puppet agent");
        Run {
            code: out.status.code().unwrap_or(-1),
            output: format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        }
    }
}
