//! bolt-server's `/ssh/*` endpoints end to end over HTTPS against real
//! OpenSSH servers: commands (success, and failure as a 200 with status
//! failure), host keys (known-hosts-content, a wrong one, and
//! host-key-check: false), scripts (inline and from the modulepath, with
//! sha256 checks), uploads, connection checks, and no secret in the store.

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
async fn run_command_success_failure_and_host_keys() {
    let sshd = fixture().await;
    let pki = Pki::new();
    let dir = scratch();
    let server = TestServer::start(&pki, dir.path(), "").await;
    let client = Client::new(&pki, Some(&pki.client));

    let ok = client
        .post(
            server.addr,
            "/ssh/run_command",
            &json!({"command": "echo out; echo err >&2", "target": target(sshd)}),
        )
        .await;
    assert_eq!(ok.status, 200, "{}", ok.text());
    let r = ok.json();
    assert_eq!(r["target"], sshd.host());
    assert_eq!(r["action"], "command");
    assert_eq!(r["object"], "echo out; echo err >&2");
    assert_eq!(r["status"], "success");
    assert_eq!(r["value"]["stdout"], "out\n");
    assert_eq!(r["value"]["stderr"], "err\n");
    assert_eq!(r["value"]["exit_code"], 0);

    // A command that fails on its target is still a 200.
    let failed = client
        .post(
            server.addr,
            "/ssh/run_command",
            &json!({"command": "exit 3", "target": target(sshd)}),
        )
        .await;
    assert_eq!(failed.status, 200);
    let r = failed.json();
    assert_eq!(r["status"], "failure");
    assert_eq!(r["value"]["exit_code"], 3);
    assert_eq!(r["value"]["_error"]["kind"], "ferry/command-error");

    // A wrong known host key fails the target; host-key-check: false skips the check.
    let mut wrong = target(sshd);
    wrong["known-hosts-content"] =
        json!(std::fs::read_to_string(sshd.wrong_known_hosts_path()).expect("wrong"));
    let r = client
        .post(
            server.addr,
            "/ssh/run_command",
            &json!({"command": "true", "target": wrong}),
        )
        .await
        .json();
    assert_eq!(r["status"], "failure", "{r}");
    assert_eq!(r["value"]["_error"]["issue_code"], "HOST_KEY_ERROR", "{r}");
    let mut unchecked = target(sshd);
    unchecked
        .as_object_mut()
        .map(|m| m.remove("known-hosts-content"));
    unchecked["host-key-check"] = json!(false);
    let r = client
        .post(
            server.addr,
            "/ssh/run_command",
            &json!({"command": "whoami", "target": unchecked}),
        )
        .await
        .json();
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(r["value"]["stdout"], "root\n");

    // Passwords and sudo: run-as with the fixture's password user.
    let pw = json!({
        "hostname": sshd.host(), "port": sshd.port(), "user": sshd::PW_USER,
        "password": sshd::USER_PASSWORD, "run-as": "root", "sudo-password": sshd::USER_PASSWORD,
        "known-hosts-content": std::fs::read_to_string(sshd.known_hosts_path()).expect("kh"),
    });
    let r = client
        .post(
            server.addr,
            "/ssh/run_command",
            &json!({"command": "id -un", "target": pw}),
        )
        .await
        .json();
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(r["value"]["stdout"], "root\n");

    // Every call is a job in the store, with the secrets redacted.
    let jobs = client
        .get(server.addr, "/orchestrator/v1/jobs")
        .await
        .json();
    assert_eq!(jobs["pagination"]["total"], 5, "{jobs}");
    let all = jobs.to_string();
    assert!(all.contains("ssh/run_command"));
    assert!(
        !all.contains(sshd::USER_PASSWORD),
        "a password reached the store"
    );
    assert!(!all.contains("PRIVATE KEY"), "a key reached the store");
    let db = std::fs::read(dir.path().join("ferry.db")).expect("db");
    let db = String::from_utf8_lossy(&db);
    assert!(!db.contains(sshd::USER_PASSWORD) && !db.contains("PRIVATE KEY"));
    server.stop().await;
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
