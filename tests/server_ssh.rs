//! bolt-server's `/ssh/*` endpoints end to end over HTTPS against real
//! OpenSSH servers, where a test builds files or bodies of its own: scripts
//! (inline and from the modulepath, with sha256 checks), uploads, connection
//! checks, tasks (bolt-server's and ACE's). Commands, host keys and the
//! store's redaction are a case file, `tests/cases/api/`, run by
//! `tests/cases.rs`.

mod common;
#[path = "common/tls.rs"]
mod tls;

use base64::Engine as _;
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

fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("ferry-server-ssh-")
        .tempdir()
        .expect("temp dir")
}

fn sha(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_script_inline_and_from_the_modulepath() {
    let sshd = fixture().await;
    let pki = Pki::new();
    let dir = scratch();
    let modules = dir.path().join("modules");
    let script = b"#!/bin/sh\necho \"args: $*\"\n";
    std::fs::create_dir_all(modules.join("demo/scripts")).expect("mkdir");
    std::fs::write(modules.join("demo/scripts/hello.sh"), script).expect("write");
    let server = TestServer::start(
        &pki,
        dir.path(),
        &format!("modulepath: {}\n", modules.display()),
    )
    .await;
    let client = Client::new(&pki, Some(&pki.client));

    let from_modulepath = json!({
        "target": target(sshd),
        "script": {"filename": "hello.sh", "sha256": sha(script),
            "uri": {"path": "/puppet/v3/file_content/scripts/demo/hello.sh", "params": {"environment": "production"}}},
        "arguments": ["one", "two words"],
    });
    let r = client
        .post(server.addr, "/ssh/run_script", &from_modulepath)
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let r = r.json();
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(r["action"], "script");
    assert_eq!(r["object"], "hello.sh");
    assert_eq!(r["value"]["stdout"], "args: one two words\n");

    let inline_body = b"#!/bin/sh\nexit 4\n";
    let inline = json!({
        "target": target(sshd),
        "script": {"filename": "fail.sh", "sha256": sha(inline_body),
            "content": base64::engine::general_purpose::STANDARD.encode(inline_body),
            "uri": {"path": "", "params": {}}},
    });
    let r = client
        .post(server.addr, "/ssh/run_script", &inline)
        .await
        .json();
    assert_eq!(r["status"], "failure");
    assert_eq!(r["value"]["exit_code"], 4);

    let mut mismatch = from_modulepath.clone();
    mismatch["script"]["sha256"] = json!(sha(b"something else"));
    let r = client.post(server.addr, "/ssh/run_script", &mismatch).await;
    assert_eq!(r.status, 400);
    assert!(
        r.json()["msg"]
            .as_str()
            .unwrap_or_default()
            .contains("script.sha256")
    );

    let mut escape = from_modulepath.clone();
    escape["script"]["uri"]["path"] =
        json!("/puppet/v3/file_content/scripts/demo/../../../etc/passwd");
    let r = client.post(server.addr, "/ssh/run_script", &escape).await;
    assert_eq!(r.status, 400, "{}", r.text());

    let mut missing = from_modulepath;
    missing["script"]["uri"]["path"] = json!("/puppet/v3/file_content/scripts/demo/nope.sh");
    let r = client.post(server.addr, "/ssh/run_script", &missing).await;
    assert_eq!(r.status, 404, "{}", r.text());
    assert!(
        !r.text().contains(&modules.display().to_string()),
        "server path leaked"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upload_file_and_check_node_connections() {
    let sshd = fixture().await;
    let pki = Pki::new();
    let dir = scratch();
    let server = TestServer::start(&pki, dir.path(), "").await;
    let client = Client::new(&pki, Some(&pki.client));
    let remote = format!("/tmp/ferry-server-upload-{}", std::process::id());

    let a = b"alpha\n";
    let b = b"beta\n";
    let enc = |d: &[u8]| base64::engine::general_purpose::STANDARD.encode(d);
    let upload = json!({
        "target": target(sshd), "job_id": 1, "destination": remote,
        "files": [
            {"relative_path": "sub", "kind": "directory", "sha256": "", "uri": {"path": "", "params": {}}},
            {"relative_path": "a.txt", "kind": "file", "sha256": sha(a), "content": enc(a), "uri": {"path": "", "params": {}}},
            {"relative_path": "sub/b.txt", "kind": "file", "sha256": sha(b), "content": enc(b), "uri": {"path": "", "params": {}}},
        ],
    });
    let r = client.post(server.addr, "/ssh/upload_file", &upload).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let r = r.json();
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(r["action"], "upload");
    assert!(
        !r.to_string().contains(".cache"),
        "scratch path leaked: {r}"
    );
    let cat = client
        .post(
            server.addr,
            "/ssh/run_command",
            &json!({"command": format!("cat {remote}/a.txt {remote}/sub/b.txt; rm -rf {remote}"), "target": target(sshd)}),
        )
        .await
        .json();
    assert_eq!(cat["value"]["stdout"], "alpha\nbeta\n", "{cat}");

    let escape = json!({
        "target": target(sshd), "job_id": 2, "destination": remote,
        "files": [{"relative_path": "../x", "kind": "file", "sha256": sha(a), "content": enc(a), "uri": {"path": "", "params": {}}}],
    });
    let r = client.post(server.addr, "/ssh/upload_file", &escape).await;
    assert_eq!(r.status, 400);
    assert!(
        r.json()["msg"]
            .as_str()
            .unwrap_or_default()
            .contains("files[0].relative_path")
    );

    let mut closed = target(sshd);
    closed["port"] = json!(1);
    closed["connect-timeout"] = json!(3);
    let r = client
        .post(
            server.addr,
            "/ssh/check_node_connections",
            &json!({"targets": [target(sshd), closed]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let r = r.json();
    assert_eq!(r["status"], "failure", "{r}");
    let results = r["result"].as_array().cloned().unwrap_or_default();
    assert_eq!(results.len(), 2);
    let ok = results.iter().filter(|x| x["status"] == "success").count();
    assert_eq!(ok, 1, "{r}");
    let bad = results
        .iter()
        .find(|x| x["status"] == "failure")
        .expect("failure");
    assert_eq!(
        bad["value"]["_error"]["issue_code"], "CONNECT_ERROR",
        "{bad}"
    );

    let r = client
        .post(
            server.addr,
            "/ssh/check_node_connections",
            &json!({"targets": [target(sshd)]}),
        )
        .await
        .json();
    assert_eq!(r["status"], "success", "{r}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_task_from_the_modulepath_with_sha256_checks() {
    let sshd = fixture().await;
    let pki = Pki::new();
    let dir = scratch();
    let modules = dir.path().join("modules");
    std::fs::create_dir_all(modules.join("demo/tasks")).expect("mkdir");
    let script = b"#!/bin/sh\nprintf '{\"said\": \"%s\"}' \"$PT_message\"\n";
    std::fs::write(modules.join("demo/tasks/say.sh"), script).expect("write");
    std::fs::write(
        modules.join("demo/tasks/say.json"),
        r#"{"parameters": {"message": {"type": "String"}, "secret": {"type": "Optional[String]", "sensitive": true}}, "input_method": "environment"}"#,
    )
    .expect("write");
    let server = TestServer::start(
        &pki,
        dir.path(),
        &format!("modulepath: [{}]\n", modules.display()),
    )
    .await;
    let client = Client::new(&pki, Some(&pki.client));
    let task = json!({"name": "demo::say", "metadata": {}, "files": [{
        "filename": "say.sh", "sha256": sha(script),
        "uri": {"path": "/puppet/v3/file_content/tasks/demo/say.sh", "params": {"environment": "production"}}}]});
    let body = json!({"task": task, "parameters": {"message": "hello", "secret": "s3cr3t-value"}, "target": target(sshd)});
    let r = client.post(server.addr, "/ssh/run_task", &body).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let r = r.json();
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(r["action"], "task");
    assert_eq!(r["object"], "demo::say");
    assert_eq!(r["value"]["said"], "hello", "{r}");
    let jobs = client
        .get(server.addr, "/orchestrator/v1/jobs")
        .await
        .text();
    assert!(
        jobs.contains("ssh/run_task") && !jobs.contains("s3cr3t-value"),
        "{jobs}"
    );

    let mut wrong = body.clone();
    wrong["task"]["files"][0]["sha256"] = json!(sha(b"other"));
    let r = client.post(server.addr, "/ssh/run_task", &wrong).await;
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(r.text().contains("task.files[0].sha256"));
    let mut bad_param = body.clone();
    bad_param["parameters"] = json!({"message": 5});
    let r = client.post(server.addr, "/ssh/run_task", &bad_param).await;
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(
        r.json()["msg"]
            .as_str()
            .unwrap_or_default()
            .starts_with("parameters")
    );
    let mut unknown = body;
    unknown["task"]["name"] = json!("demo::nope");
    let r = client.post(server.addr, "/ssh/run_task", &unknown).await;
    assert_eq!(r.status, 404, "{}", r.text());
    assert_eq!(r.json()["kind"], "ferry/task-not-found");
    assert!(!r.text().contains(&modules.display().to_string()));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ace_run_task_takes_the_task_object_the_server_lists() {
    let sshd = fixture().await;
    let pki = Pki::new();
    let dir = scratch();
    let modules = dir.path().join("modules");
    std::fs::create_dir_all(modules.join("demo/tasks")).expect("mkdir");
    let script = b"#!/bin/sh\nprintf '{\"said\": \"%s\"}' \"$PT_message\"\n";
    std::fs::write(modules.join("demo/tasks/say.sh"), script).expect("write");
    std::fs::write(
        modules.join("demo/tasks/say.json"),
        r#"{"parameters": {"message": {"type": "String"}}, "input_method": "environment"}"#,
    )
    .expect("write");
    let server = TestServer::start(
        &pki,
        dir.path(),
        &format!("modulepath: [{}]\n", modules.display()),
    )
    .await;
    let client = Client::new(&pki, Some(&pki.client));
    // The task object exactly as GET /tasks/... gives it, as ACE's callers send it.
    let task = client.get(server.addr, "/tasks/demo/say").await;
    assert_eq!(task.status, 200, "{}", task.text());
    let task = task.json();
    assert_eq!(task["files"][0]["sha256"], sha(script));
    let file = client
        .get(
            server.addr,
            task["files"][0]["uri"]["path"].as_str().expect("uri"),
        )
        .await;
    assert_eq!(file.status, 200);
    assert_eq!(file.text().as_bytes(), script);

    let mut target = target(sshd);
    target["remote-transport"] = json!("ssh");
    target["run-on"] = json!("proxy.example");
    let body = json!({"target": target, "task": task, "parameters": {"message": "hi ace"}});
    let r = client.post(server.addr, "/run_task", &body).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let r = r.json();
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(r["object"], "demo::say");
    assert_eq!(r["value"]["said"], "hi ace", "{r}");

    let mut other = body.clone();
    other["target"]["remote-transport"] = json!("panos");
    let r = client.post(server.addr, "/run_task", &other).await;
    assert_eq!(r.status, 400, "{}", r.text());
    assert_eq!(r.json()["details"]["field"], "target.remote-transport");
    let mut wrong = body;
    wrong["task"]["files"][0]["sha256"] = json!(sha(b"other"));
    let r = client.post(server.addr, "/run_task", &wrong).await;
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(r.text().contains("task.files[0].sha256"));
    server.stop().await;
}
