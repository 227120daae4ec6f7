//! Helpers for tests of the service's jobs: an inventory on the sshd
//! fixture, starting a command job, following its event stream, polling
//! its events, and the real `ferry serve` binary as a child process (for
//! SIGKILL, its open files and its memory). Include after `mod common;`
//! and the `tls` module with `#[path = "common/jobs.rs"] mod jobs;`.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::sshd::{self, KeyType, NOPW_USER, Sshd, client_keys};
use crate::tls::{Client, Pki, read_sse};

/// The shared sshd fixture.
pub async fn fixture() -> &'static Sshd {
    tokio::task::spawn_blocking(sshd::shared)
        .await
        .expect("sshd fixture")
}

/// One inventory target line for [`inventory_of`].
pub fn target_line(name: &str, user: &str, host: &str, port: u16) -> String {
    format!("      - name: {name}\n        uri: ssh://{user}@{host}:{port}\n")
}

/// An inventory whose group `web` holds `targets` (from [`target_line`]),
/// and group `broken` a target on a closed port, with the client key and
/// `known_hosts` file.
pub fn inventory_of(dir: &Path, known_hosts: &Path, host: &str, targets: &str) -> PathBuf {
    let key = client_keys().path(KeyType::Ed25519);
    let text = format!(
        "config:\n  ssh:\n    private-key: {}\n    known-hosts-file: {}\n    load-config: false\n    connect-timeout: 3\ngroups:\n  - name: web\n    targets:\n{targets}  - name: broken\n    targets:\n{}",
        key.display(),
        known_hosts.display(),
        target_line("down", "root", host, 1),
    );
    let path = dir.join("inventory.yaml");
    std::fs::write(&path, text).expect("write inventory");
    path
}

/// web1 (root) and web2 (the no-password sudo user) on the fixture, in
/// group `web`; `down` on a closed port in group `broken`.
pub fn inventory(sshd: &Sshd, dir: &Path) -> PathBuf {
    let targets = format!(
        "{}{}",
        target_line("web1", "root", sshd.host(), sshd.port()),
        target_line("web2", NOPW_USER, sshd.host(), sshd.port()),
    );
    inventory_of(dir, sshd.known_hosts_path(), sshd.host(), &targets)
}

/// Starts a command job; returns its name (id).
pub async fn start_job(client: &Client, addr: SocketAddr, command: &str, scope: Value) -> String {
    let r = client
        .post(
            addr,
            "/orchestrator/v1/command/command",
            &json!({"command": command, "scope": scope, "description": "test"}),
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.text());
    let job = r.json();
    let name = job["job"]["name"].as_str().expect("name").to_string();
    assert!(
        job["job"]["id"]
            .as_str()
            .unwrap_or_default()
            .ends_with(&format!("/orchestrator/v1/jobs/{name}"))
    );
    name
}

/// A job's event stream from `start` (`?start=N`, or "" for all), read
/// until it ends; it must end within 60 s.
pub async fn stream_from(
    client: &Client,
    addr: SocketAddr,
    job: &str,
    start: &str,
) -> Vec<(String, Value)> {
    let resp = client
        .open(
            addr,
            "GET",
            &format!("/orchestrator/v1/jobs/{job}/events/stream{start}"),
            None,
        )
        .await
        .expect("stream");
    assert_eq!(resp.status().as_u16(), 200);
    tokio::time::timeout(Duration::from_secs(60), read_sse(resp))
        .await
        .expect("stream ended in time")
}

/// A job's whole event stream.
pub async fn stream(client: &Client, addr: SocketAddr, job: &str) -> Vec<(String, Value)> {
    stream_from(client, addr, job, "").await
}

pub fn kinds(events: &[(String, Value)]) -> Vec<&str> {
    events.iter().map(|(k, _)| k.as_str()).collect()
}

/// Polls a job's events until `pred` holds for them (30 s at most).
pub async fn wait_events(
    client: &Client,
    addr: SocketAddr,
    job: &str,
    pred: impl Fn(&[Value]) -> bool,
) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let r = client
            .get(addr, &format!("/orchestrator/v1/jobs/{job}/events"))
            .await
            .json();
        let items = r["items"].as_array().cloned().unwrap_or_default();
        if pred(&items) {
            return;
        }
        assert!(Instant::now() < deadline, "events never matched: {r}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Whether `items` hold an event of `kind` for `node`.
pub fn has(items: &[Value], kind: &str, node: &str) -> bool {
    items
        .iter()
        .any(|e| e["type"] == kind && e["details"]["node"] == node)
}

/// A job's nodes by name.
pub async fn nodes(client: &Client, addr: SocketAddr, job: &str) -> Vec<Value> {
    let r = client
        .get(addr, &format!("/orchestrator/v1/jobs/{job}/nodes"))
        .await
        .json();
    r["items"].as_array().cloned().unwrap_or_default()
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
}

/// The real `ferry serve` as a child process on a free loopback port,
/// its cache in `dir`; killed (SIGKILL) when dropped.
pub struct Serve {
    child: Child,
    pub addr: SocketAddr,
}

impl Serve {
    /// Writes `<dir>/<name>.yaml` (TLS lines, host, port, cache-dir, then
    /// `body`), starts the binary and waits until it answers `/check`.
    pub async fn start(pki: &Pki, dir: &Path, name: &str, body: &str) -> Serve {
        Serve::start_with_env(pki, dir, name, body, &[]).await
    }

    /// As [`Serve::start`], with these environment variables set for the
    /// server (and `SSH_AUTH_SOCK` removed unless given).
    pub async fn start_with_env(
        pki: &Pki,
        dir: &Path,
        name: &str,
        body: &str,
        env: &[(&str, &Path)],
    ) -> Serve {
        let port = free_port();
        let config = dir.join(format!("{name}.yaml"));
        std::fs::write(
            &config,
            format!(
                "{}host: 127.0.0.1\nport: {port}\ncache-dir: {}\n{}",
                pki.config_lines(),
                dir.display(),
                crate::tls::with_operator(body)
            ),
        )
        .expect("write config");
        let mut command = Command::new(env!("CARGO_BIN_EXE_ferry"));
        command
            .args(["serve", "--config"])
            .arg(&config)
            .env_remove("SSH_AUTH_SOCK")
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for (k, v) in env {
            command.env(k, v);
        }
        let child = command.spawn().expect("spawn ferry serve");
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().expect("addr");
        let serve = Serve { child, addr };
        let client = Client::new(pki, Some(&pki.client));
        let deadline = Instant::now() + Duration::from_secs(20);
        while client.send(addr, "POST", "/check", None).await.is_err() {
            assert!(Instant::now() < deadline, "ferry serve did not come up");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        serve
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL, and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// How many files the server has open.
    pub fn open_files(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.pid()))
            .map(|d| d.count())
            .unwrap_or(0)
    }

    /// The server's resident memory, in KiB.
    pub fn rss_kib(&self) -> u64 {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.pid())).expect("proc status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS")
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        self.kill();
    }
}
