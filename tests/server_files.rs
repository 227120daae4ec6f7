//! `file-server-uri`: a server (A) without a task on its modulepath fetches
//! the task's files by `uri` from another ferry server (B) standing in for
//! puppetserver, presenting its own certificate, and keeps them in its file
//! cache by sha256: used when they still match, fetched again when not,
//! refused (and not kept) when the sha256 is wrong, downloaded once for
//! concurrent requests.

mod common;
#[path = "common/tls.rs"]
mod tls;

use common::sshd::{self, KeyType, Sshd, client_keys};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tls::{Client, Pki, TestServer, ssh_target};

async fn fixture() -> &'static Sshd {
    tokio::task::spawn_blocking(sshd::shared)
        .await
        .expect("sshd fixture")
}

fn target(sshd: &Sshd) -> Value {
    ssh_target(
        sshd.host(),
        sshd.port(),
        "root",
        &client_keys().path(KeyType::Ed25519),
        sshd.known_hosts_path(),
    )
}

fn sha(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Server B serves `modules` (standing in for puppetserver); server A, in
/// `dir_a`, fetches from B with its own certificate, `ferry-peer`, which
/// B's allowlist names (a certificate only a node's may not read task
/// files). Returns (A, B).
async fn servers(
    pki: &Pki,
    dir_a: &std::path::Path,
    dir_b: &std::path::Path,
    modules: &std::path::Path,
) -> (TestServer, TestServer) {
    let b = TestServer::start(
        pki,
        dir_b,
        &format!(
            "modulepath: [{}]\nallowlist: [client-ok, ferry-peer]\n",
            modules.display()
        ),
    )
    .await;
    let a = TestServer::start_with_tls(
        &pki.peer_config_lines(),
        dir_a,
        &format!("file-server-uri: https://127.0.0.1:{}\n", b.addr.port()),
    )
    .await;
    (a, b)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_fetched_from_the_file_server_are_cached_by_sha256() {
    let sshd = fixture().await;
    let pki = Pki::new();
    let dir_b = tempfile::tempdir().expect("dir");
    let dir_a = tempfile::tempdir().expect("dir");
    let modules = dir_b.path().join("modules");
    std::fs::create_dir_all(modules.join("demo/tasks")).expect("mkdir");
    let script = b"#!/bin/sh\nprintf '{\"said\": \"%s\"}' \"$PT_message\"\n";
    std::fs::write(modules.join("demo/tasks/say.sh"), script).expect("write");
    std::fs::write(
        modules.join("demo/tasks/say.json"),
        r#"{"parameters": {"message": {"type": "String"}}, "input_method": "environment"}"#,
    )
    .expect("write");
    let (a, b) = servers(&pki, dir_a.path(), dir_b.path(), &modules).await;
    let client = Client::new(&pki, Some(&pki.client));

    // The task object as B lists it, sent to A, which does not have it.
    let task = client.get(b.addr, "/tasks/demo/say").await;
    assert_eq!(task.status, 200, "{}", task.text());
    let task = task.json();
    assert_eq!(task["files"][0]["sha256"], sha(script));
    assert_eq!(b.state.metrics.files_served(), 0);
    let body = json!({"target": target(sshd), "task": task, "parameters": {"message": "via B"}});
    let r = client.post(a.addr, "/run_task", &body).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let r = r.json();
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(r["value"]["said"], "via B", "{r}");
    let cached = dir_a.path().join("tasks").join(sha(script)).join("say.sh");
    assert_eq!(std::fs::read(&cached).expect("cached"), script);
    assert_eq!(b.state.metrics.files_served(), 1);

    // Cached and still matching: not fetched again.
    let r = client.post(a.addr, "/ssh/run_task", &body).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["value"]["said"], "via B");
    assert_eq!(b.state.metrics.files_served(), 1);

    // Tampered with: fetched again, and the tampered copy never runs.
    std::fs::write(&cached, b"#!/bin/sh\nprintf '{\"said\": \"tampered\"}'\n").expect("tamper");
    let r = client.post(a.addr, "/run_task", &body).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let r = r.json();
    assert_eq!(r["value"]["said"], "via B", "{r}");
    assert_eq!(std::fs::read(&cached).expect("cached"), script);
    assert_eq!(b.state.metrics.files_served(), 2);

    // A wrong sha256: an error, and nothing kept under it.
    let wrong_sha = sha(b"something else");
    let mut wrong = body.clone();
    wrong["task"]["files"][0]["sha256"] = json!(wrong_sha);
    let r = client.post(a.addr, "/run_task", &wrong).await;
    assert_eq!(r.status, 400, "{}", r.text());
    let e = r.json();
    assert_eq!(e["kind"], "ferry/file-error", "{e}");
    assert!(
        e["msg"]
            .as_str()
            .unwrap_or_default()
            .contains("task.files[0].sha256")
    );
    assert!(
        !r.text().contains(&dir_a.path().display().to_string()),
        "{}",
        r.text()
    );
    assert!(!dir_a.path().join("tasks").join(&wrong_sha).exists());
    assert_eq!(b.state.metrics.files_served(), 3);

    // Two requests at once for a file A does not have: B serves it once.
    std::fs::remove_dir_all(dir_a.path().join("tasks").join(sha(script))).expect("rm");
    let (one, two) = tokio::join!(
        client.post(a.addr, "/run_task", &body),
        client.post(a.addr, "/ssh/run_task", &body)
    );
    for r in [one, two] {
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.json()["value"]["said"], "via B");
    }
    assert_eq!(b.state.metrics.files_served(), 4);
    let metrics = client.get(b.addr, "/metrics").await.text();
    assert!(metrics.contains("ferry_files_served_total 4"), "{metrics}");

    // Scripts named by uri come the same way.
    let r = client
        .post(
            a.addr,
            "/ssh/run_script",
            &json!({"target": target(sshd), "arguments": [], "script": {
                "filename": "say.sh", "sha256": sha(script),
                "uri": {"path": "/puppet/v3/file_content/tasks/demo/say.sh", "params": {"environment": "production"}}}}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(b.state.metrics.files_served(), 4);

    a.stop().await;
    b.stop().await;
}

/// A file server's answer is held in memory until its sha256 is checked, so
/// one larger than `files::client::MAX_FILE_BYTES` is refused, not read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_larger_than_the_bound_is_refused() {
    let sshd = fixture().await;
    let pki = Pki::new();
    let dir_b = tempfile::tempdir().expect("dir");
    let dir_a = tempfile::tempdir().expect("dir");
    let tasks = dir_b.path().join("modules/demo/tasks");
    std::fs::create_dir_all(&tasks).expect("mkdir");
    // Sparse: takes no disk space.
    let big = std::fs::File::create(tasks.join("big.sh")).expect("create");
    big.set_len(ferry::server::files::client::MAX_FILE_BYTES as u64 + 1)
        .expect("set_len");
    drop(big);
    let (a, b) = servers(
        &pki,
        dir_a.path(),
        dir_b.path(),
        &dir_b.path().join("modules"),
    )
    .await;
    let client = Client::new(&pki, Some(&pki.client));
    let body = json!({"target": target(sshd), "arguments": [], "script": {
        "filename": "big.sh", "sha256": sha(b"whatever"),
        "uri": {"path": "/puppet/v3/file_content/tasks/demo/big.sh", "params": {"environment": "production"}}}});
    let r = client.post(a.addr, "/ssh/run_script", &body).await;
    // A fault of the file server: 502, as for any failed fetch.
    assert_eq!(r.status, 502, "{}", r.text());
    let e = r.json();
    assert_eq!(e["kind"], "ferry/file-error", "{e}");
    assert!(
        e["msg"]
            .as_str()
            .unwrap_or_default()
            .contains("larger than 256 MiB"),
        "{e}"
    );
    assert!(!dir_a.path().join("tasks").join(sha(b"whatever")).exists());
    a.stop().await;
    b.stop().await;
}
