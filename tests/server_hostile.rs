//! `ferry serve` against hostile clients, over real mTLS (and real sshd
//! targets where a run is needed): numbers out of range are a 400 naming
//! the field (a huge `concurrency` used to be accepted and then panic the
//! job); a job whose runner panics, or whose runner is gone when it is
//! stopped, still ends with `job_finished`; HEAD needs the same token
//! action as GET, and a request no action covers needs `*`; server paths
//! (scratch dirs, the server user's known_hosts) never reach results or
//! the store; scratch dirs and the SQLite store are private; an event
//! stream asked to start past `job_finished` ends; a NUL byte is a 400
//! naming the field; colliding upload paths are a 400; and idle
//! connections beyond `max-connections` cannot pile up open files.

mod common;
#[path = "common/jobs.rs"]
mod jobs;
#[path = "common/tls.rs"]
mod tls;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use base64::Engine as _;
use common::sshd::{KeyType, Sshd, client_keys};
use ferry::run::Summary;
use ferry::server::runner;
use ferry::server::scrub::Scrub;
use jobs::{Serve, fixture, inventory, kinds, start_job, stream, stream_from};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tls::{Client, Pki, TestServer, ssh_target};

fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("ferry-server-hostile-")
        .tempdir()
        .expect("temp dir")
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

/// Asserts a 400 whose `details.field` is `field`.
fn assert_bad(r: &tls::Resp, field: &str) {
    assert_eq!(r.status, 400, "{field}: {}", r.text());
    let body = r.json();
    assert_eq!(body["kind"], "ferry/bad-request", "{body}");
    assert_eq!(body["details"]["field"], field, "{body}");
    assert!(
        body["msg"].as_str().unwrap_or_default().starts_with(field),
        "{body}"
    );
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o777
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn numbers_out_of_range_are_a_400_naming_the_field() {
    let sshd = fixture().await;
    let pki = Pki::new();
    let dir = scratch();
    let inv = inventory(sshd, dir.path());
    let server =
        TestServer::start(&pki, dir.path(), &format!("inventory: {}\n", inv.display())).await;
    let (client, addr) = (Client::new(&pki, Some(&pki.client)), server.addr);
    let command = |extra: Value| {
        let mut body = json!({"command": "true", "scope": {"nodes": ["web1"]}});
        if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
            b.extend(e.clone());
        }
        body
    };
    // 2^61 used to be a 202 whose job panicked in tokio's semaphore and
    // stayed `running` for ever.
    for bad in [json!(1u64 << 61), json!(0), json!(10_001), json!(u64::MAX)] {
        let r = client
            .post(
                addr,
                "/orchestrator/v1/command/command",
                &command(json!({"concurrency": bad})),
            )
            .await;
        assert_bad(&r, "concurrency");
    }
    let r = client
        .post(
            addr,
            "/orchestrator/v1/command/command",
            &command(json!({"concurrency": 10_000})),
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.text());
    let job = r.json()["job"]["name"].as_str().expect("name").to_string();
    assert_eq!(
        kinds(&stream(&client, addr, &job).await).last(),
        Some(&"job_finished")
    );
    for bad in [json!(0), json!(7 * 24 * 3600 + 1)] {
        let r = client
            .post(
                addr,
                "/orchestrator/v1/command/task",
                &json!({"task": "ferry::facts", "scope": {"nodes": ["web1"]}, "timeout": bad}),
            )
            .await;
        assert_bad(&r, "timeout");
    }
    for (query, field) in [
        ("/orchestrator/v1/jobs?limit=0", "limit"),
        ("/orchestrator/v1/jobs?limit=1001", "limit"),
        ("/orchestrator/v1/jobs?offset=-1", "offset"),
        ("/orchestrator/v1/jobs?offset=9007199254740992", "offset"),
        ("/orchestrator/v1/jobs/1/events?start=-1", "start"),
        (
            "/orchestrator/v1/jobs/1/events?start=99999999999999999999",
            "start",
        ),
        ("/orchestrator/v1/jobs/1/events/stream?start=-5", "start"),
    ] {
        assert_bad(&client.get(addr, query).await, field);
    }
    let mut t = target(sshd);
    t["port"] = json!(0);
    let r = client
        .post(
            addr,
            "/ssh/run_command",
            &json!({"command": "true", "target": t}),
        )
        .await;
    assert_bad(&r, "target.port");
    let mut t = target(sshd);
    t["connect-timeout"] = json!(0);
    let r = client
        .post(
            addr,
            "/ssh/run_command",
            &json!({"command": "true", "target": t}),
        )
        .await;
    assert_bad(&r, "target.connect-timeout");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_whose_runner_panics_or_is_gone_still_ends() {
    let pki = Pki::new();
    let dir = scratch();
    let server = TestServer::start(&pki, dir.path(), "").await;
    let (client, addr) = (Client::new(&pki, Some(&pki.client)), server.addr);
    let store = &server.state.store;

    // Work that panics inside the job's runner.
    let record = store
        .create_job("command", "test", "", &json!({}), &["n1".to_string()])
        .await
        .expect("job");
    let handle = runner::start(&server.state, record.id, Scrub::default(), |_sink| async {
        if std::hint::black_box(true) {
            panic!("the work broke");
        }
        Summary::default()
    });
    let outcome = tokio::time::timeout(Duration::from_secs(20), handle)
        .await
        .expect("the supervisor ended")
        .expect("the supervisor did not panic");
    assert!(matches!(outcome, runner::Outcome::Failed(_)), "{outcome:?}");
    let id = record.id.to_string();
    let events = stream(&client, addr, &id).await;
    assert_eq!(kinds(&events), ["job_finished"]);
    assert_eq!(events[0].1["details"]["reason"], "runner-failed");
    let j = client
        .get(addr, &format!("/orchestrator/v1/jobs/{id}"))
        .await
        .json();
    assert_eq!(j["state"], "failed", "{j}");
    let n = jobs::nodes(&client, addr, &id).await;
    assert_eq!(n[0]["state"], "failed", "{n:?}");

    // A job left running with no runner (as a dead runner leaves it): stop
    // ends it instead of leaving it `stopping`.
    let orphan = store
        .create_job("command", "test", "", &json!({}), &["n1".to_string()])
        .await
        .expect("job");
    store
        .set_job_state(orphan.id, ferry::store::JobState::Running)
        .await
        .expect("state");
    let r = client
        .post(
            addr,
            "/orchestrator/v1/command/stop",
            &json!({"job": orphan.id}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["job"]["state"], "stopped", "{}", r.text());
    let events = stream(&client, addr, &orphan.id.to_string()).await;
    assert_eq!(kinds(&events), ["job_finished"]);
    assert_eq!(events[0].1["details"]["reason"], "runner-gone");
    // Stopping it again changes nothing.
    let r = client
        .post(
            addr,
            "/orchestrator/v1/command/stop",
            &json!({"job": orphan.id}),
        )
        .await;
    assert_eq!(r.json()["job"]["state"], "stopped", "{}", r.text());
    let all = client
        .get(addr, &format!("/orchestrator/v1/jobs/{}/events", orphan.id))
        .await
        .json();
    assert_eq!(all["items"].as_array().map(Vec::len), Some(1), "{all}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn head_needs_the_same_action_as_get() {
    let pki = Pki::new();
    let dir = scratch();
    let hash = |t: &str| hex::encode(Sha256::digest(t.as_bytes()));
    let tokens = dir.path().join("tokens.yaml");
    std::fs::write(
        &tokens,
        format!(
            "tokens:\n  - name: runner\n    sha256: {}\n    actions: [ssh:run_command]\n  - name: reader\n    sha256: {}\n    actions: [jobs:read, catalog:read]\n  - name: admin\n    sha256: {}\n    actions: ['*']\n",
            hash("runner-token"),
            hash("reader-token"),
            hash("admin-token"),
        ),
    )
    .expect("tokens");
    let server = TestServer::start(
        &pki,
        dir.path(),
        &format!("tokens-file: {}\n", tokens.display()),
    )
    .await;
    let addr = server.addr;
    let anon = Client::new(&pki, None);
    let runner = anon.clone().with_bearer("runner-token");
    let reader = anon.clone().with_bearer("reader-token");
    let admin = anon.clone().with_bearer("admin-token");
    let paths = [
        "/orchestrator/v1/jobs",
        "/tasks",
        "/tasks/ferry/facts",
        "/puppet/v3/file_content/tasks/ferry/facts.sh",
        "/metrics",
    ];
    for path in paths {
        for method in ["GET", "HEAD"] {
            let r = runner
                .send(addr, method, path, None)
                .await
                .expect("request");
            assert_eq!(r.status, 403, "{method} {path} with a run_command token");
        }
    }
    for path in &paths[..4] {
        let r = reader
            .send(addr, "HEAD", path, None)
            .await
            .expect("request");
        assert_ne!(r.status, 403, "HEAD {path} with a reader token");
        assert!(r.body.is_empty(), "HEAD has no body");
    }
    // Methods no action covers need `*`: refused, not let through.
    for (method, path) in [
        ("PUT", "/orchestrator/v1/jobs"),
        ("DELETE", "/orchestrator/v1/jobs/1"),
        ("OPTIONS", "/ssh/run_command"),
        ("GET", "/ssh/run_command"),
        ("GET", "/no/such/endpoint"),
    ] {
        let r = runner
            .send(addr, method, path, None)
            .await
            .expect("request");
        assert_eq!(r.status, 403, "{method} {path}: {}", r.text());
        let r = reader
            .send(addr, method, path, None)
            .await
            .expect("request");
        assert_eq!(r.status, 403, "{method} {path}: {}", r.text());
    }
    let r = admin
        .send(addr, "PUT", "/orchestrator/v1/jobs", None)
        .await
        .expect("request");
    assert_eq!(r.status, 405);
    let r = admin
        .send(addr, "HEAD", "/orchestrator/v1/jobs", None)
        .await
        .expect("request");
    assert_eq!(r.status, 200);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_paths_never_reach_results_or_the_store() {
    let sshd = fixture().await;
    let pki = Pki::new();
    let dir = scratch();
    // The inventory's known_hosts file holds the wrong key.
    let wrong_file = sshd.wrong_known_hosts_path();
    let inv = jobs::inventory_of(
        dir.path(),
        wrong_file,
        sshd.host(),
        &jobs::target_line("web1", "root", sshd.host(), sshd.port()),
    );
    let server =
        TestServer::start(&pki, dir.path(), &format!("inventory: {}\n", inv.display())).await;
    let (client, addr) = (Client::new(&pki, Some(&pki.client)), server.addr);
    let cache = dir.path().display().to_string();
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let wrong_dir = wrong_file.parent().expect("dir").display().to_string();
    let leaks = |text: &str| {
        text.contains(&cache)
            || text.contains("/requests/")
            || text.contains("known_hosts.0")
            || text.contains(&format!("{home}/.ssh"))
            || text.contains(&format!("{wrong_dir}/"))
    };

    // A job over the inventory: its known_hosts file is named, not shown.
    let job = start_job(&client, addr, "true", json!({"nodes": ["web1"]})).await;
    stream(&client, addr, &job).await;
    let n = jobs::nodes(&client, addr, &job).await;
    let msg = n[0]["result"]["_error"]["msg"].as_str().unwrap_or_default();
    assert_eq!(
        n[0]["result"]["_error"]["issue_code"], "HOST_KEY_ERROR",
        "{n:?}"
    );
    assert!(!leaks(msg), "{msg}");
    let name = wrong_file.file_name().expect("name").to_string_lossy();
    assert!(msg.contains(name.as_ref()), "{msg}");

    // A wrong host key: the message names the request's known hosts.
    let mut wrong = target(sshd);
    wrong["known-hosts-content"] =
        json!(std::fs::read_to_string(sshd.wrong_known_hosts_path()).expect("wrong"));
    let r = client
        .post(
            addr,
            "/ssh/run_command",
            &json!({"command": "true", "target": wrong}),
        )
        .await
        .json();
    assert_eq!(r["value"]["_error"]["issue_code"], "HOST_KEY_ERROR", "{r}");
    let msg = r["value"]["_error"]["msg"].as_str().unwrap_or_default();
    assert!(!leaks(msg), "{msg}");
    assert!(msg.contains("known-hosts-content"), "{msg}");

    // No known hosts in the request: the server's own are used, unnamed.
    let mut unknown = target(sshd);
    unknown
        .as_object_mut()
        .map(|m| m.remove("known-hosts-content"));
    let r = client
        .post(
            addr,
            "/ssh/run_command",
            &json!({"command": "true", "target": unknown}),
        )
        .await
        .json();
    assert_eq!(r["value"]["_error"]["issue_code"], "HOST_KEY_ERROR", "{r}");
    let msg = r["value"]["_error"]["msg"].as_str().unwrap_or_default();
    assert!(!leaks(msg), "{msg}");

    // An upload and a script: their stored results name no scratch path.
    let remote = format!("/tmp/ferry-hostile-upload-{}", std::process::id());
    let enc = |d: &[u8]| base64::engine::general_purpose::STANDARD.encode(d);
    let sha = |d: &[u8]| hex::encode(Sha256::digest(d));
    let file = |p: &str, d: &[u8]| json!({"relative_path": p, "kind": "file", "sha256": sha(d), "content": enc(d), "uri": {"path": "", "params": {}}});
    for (n, files) in [
        json!([file("one.txt", b"1\n")]),
        json!([file("a.txt", b"a\n"), file("sub/b.txt", b"b\n")]),
    ]
    .into_iter()
    .enumerate()
    {
        let r = client
            .post(
                addr,
                "/ssh/upload_file",
                &json!({"target": target(sshd), "job_id": 1, "destination": format!("{remote}-{n}"), "files": files}),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.json()["status"], "success", "{}", r.text());
        assert!(!leaks(&r.text()), "{}", r.text());
    }
    let script = b"#!/bin/sh\necho scripted\n";
    let r = client
        .post(
            addr,
            "/ssh/run_script",
            &json!({"target": target(sshd), "script": {"filename": "s.sh", "sha256": sha(script), "content": enc(script), "uri": {"path": "", "params": {}}}}),
        )
        .await;
    assert_eq!(r.json()["value"]["stdout"], "scripted\n", "{}", r.text());
    client
        .post(
            addr,
            "/ssh/run_command",
            &json!({"command": format!("rm -rf {remote}-0 {remote}-1"), "target": target(sshd)}),
        )
        .await;

    let list = client.get(addr, "/orchestrator/v1/jobs").await.json();
    let ids: Vec<String> = list["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|j| j["name"].as_str().map(str::to_string))
        .collect();
    assert_eq!(ids.len(), 7, "{list}");
    for id in ids {
        for part in ["nodes", "events"] {
            let r = client
                .get(addr, &format!("/orchestrator/v1/jobs/{id}/{part}"))
                .await;
            assert!(!leaks(&r.text()), "job {id} {part}: {}", r.text());
        }
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scratch_dirs_and_the_store_are_private() {
    let sshd = fixture().await;
    let pki = Pki::new();
    let dir = scratch();
    let server = TestServer::start(&pki, dir.path(), "").await;
    let (client, addr) = (Client::new(&pki, Some(&pki.client)), server.addr);
    let running = {
        let client = client.clone();
        let body = json!({"command": "sleep 3", "target": target(sshd)});
        tokio::spawn(async move { client.post(addr, "/ssh/run_command", &body).await })
    };
    // While the request runs, its scratch dir holds the known_hosts copy.
    let requests = dir.path().join("requests");
    let deadline = Instant::now() + Duration::from_secs(10);
    let kh = loop {
        let found = std::fs::read_dir(&requests).ok().and_then(|entries| {
            entries
                .flatten()
                .map(|e| e.path().join("known_hosts.0"))
                .find(|p| p.is_file())
        });
        if let Some(kh) = found {
            break kh;
        }
        assert!(Instant::now() < deadline, "no scratch dir appeared");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(mode(&requests), 0o700, "requests/");
    assert_eq!(mode(kh.parent().expect("req dir")), 0o700, "req-* dir");
    assert_eq!(mode(&kh), 0o600, "known_hosts copy");
    let r = running.await.expect("request");
    assert_eq!(r.json()["status"], "success", "{}", r.text());
    for name in ["ferry.db", "ferry.db-wal", "ferry.db-shm"] {
        let p = dir.path().join(name);
        assert!(p.exists(), "{name}");
        assert_eq!(mode(&p), 0o600, "{name}");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_starts_past_the_end_ends() {
    let sshd = fixture().await;
    let pki = Pki::new();
    let dir = scratch();
    let inv = inventory(sshd, dir.path());
    let server =
        TestServer::start(&pki, dir.path(), &format!("inventory: {}\n", inv.display())).await;
    let (client, addr) = (Client::new(&pki, Some(&pki.client)), server.addr);
    let job = start_job(&client, addr, "true", json!({"nodes": ["web1"]})).await;
    let all = stream(&client, addr, &job).await;
    assert_eq!(
        kinds(&all),
        ["node_running", "node_finished", "job_finished"]
    );
    // From job_finished: just it; past it: nothing, and the stream ends.
    let last = stream_from(&client, addr, &job, "?start=3").await;
    assert_eq!(kinds(&last), ["job_finished"]);
    for start in ["?start=4", "?start=1000"] {
        let none = stream_from(&client, addr, &job, start).await;
        assert!(none.is_empty(), "{none:?}");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nul_bytes_and_colliding_uploads_are_a_400() {
    let sshd = fixture().await;
    let pki = Pki::new();
    let dir = scratch();
    let inv = inventory(sshd, dir.path());
    let server =
        TestServer::start(&pki, dir.path(), &format!("inventory: {}\n", inv.display())).await;
    let (client, addr) = (Client::new(&pki, Some(&pki.client)), server.addr);
    let r = client
        .post(
            addr,
            "/ssh/run_command",
            &json!({"command": "echo a\u{0}b", "target": target(sshd)}),
        )
        .await;
    assert_bad(&r, "command");
    let mut t = target(sshd);
    t["user"] = json!("ro\u{0}ot");
    let r = client
        .post(
            addr,
            "/ssh/run_command",
            &json!({"command": "id", "target": t}),
        )
        .await;
    assert_bad(&r, "target.user");
    let r = client
        .post(
            addr,
            "/orchestrator/v1/command/command",
            &json!({"command": "echo \u{0}", "scope": {"nodes": ["web1"]}}),
        )
        .await;
    assert_bad(&r, "command");
    let r = client
        .post(
            addr,
            "/ssh/run_script",
            &json!({"target": target(sshd), "arguments": ["ok", "x\u{0}y"], "script": {"filename": "s.sh", "sha256": "", "uri": {"path": "", "params": {}}}}),
        )
        .await;
    assert_bad(&r, "arguments[1]");

    let remote = format!("/tmp/ferry-hostile-tree-{}", std::process::id());
    let enc = |d: &[u8]| base64::engine::general_purpose::STANDARD.encode(d);
    let sha = |d: &[u8]| hex::encode(Sha256::digest(d));
    let entry = |p: &str, kind: &str| json!({"relative_path": p, "kind": kind, "sha256": sha(b"x"), "content": enc(b"x"), "uri": {"path": "", "params": {}}});
    for (files, field) in [
        (
            json!([entry("a", "file"), entry("a/b", "file")]),
            "files[1].relative_path",
        ),
        (
            json!([entry("a/b", "file"), entry("a", "file")]),
            "files[1].relative_path",
        ),
        (
            json!([entry("a", "file"), entry("a/b", "directory")]),
            "files[1].relative_path",
        ),
        (
            json!([entry("d", "directory"), entry("d/", "directory")]),
            "files[1].relative_path",
        ),
        (
            json!([entry("x.txt", "file"), entry("x.txt", "file")]),
            "files[1].relative_path",
        ),
        (json!([entry("/", "file")]), "files[0].relative_path"),
        (json!([entry("/etc/x", "file")]), "files[0].relative_path"),
        (
            json!([entry("a/../../b", "file")]),
            "files[0].relative_path",
        ),
        (json!([entry("a\u{0}b", "file")]), "files[0].relative_path"),
    ] {
        let r = client
            .post(
                addr,
                "/ssh/upload_file",
                &json!({"target": target(sshd), "job_id": 1, "destination": "/tmp/never", "files": files}),
            )
            .await;
        assert_bad(&r, field);
    }
    // A directory and the files in it are no collision.
    let r = client
        .post(
            addr,
            "/ssh/upload_file",
            &json!({"target": target(sshd), "job_id": 1, "destination": remote,
                "files": [entry("d", "directory"), entry("d/a", "file"), entry("d/e", "directory"), entry("d/e/f", "file")]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["status"], "success", "{}", r.text());
    let r = client
        .post(
            addr,
            "/ssh/run_command",
            &json!({"command": format!("cat {remote}/d/e/f; rm -rf {remote}"), "target": target(sshd)}),
        )
        .await;
    assert_eq!(r.json()["value"]["stdout"], "x", "{}", r.text());
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_beyond_the_cap_do_not_pile_up() {
    let pki = Pki::new();
    let dir = scratch();
    let cap = 20;
    let serve = Serve::start(
        &pki,
        dir.path(),
        "capped",
        &format!("max-connections: {cap}\nloglevel: warn\n"),
    )
    .await;
    let client = Client::new(&pki, Some(&pki.client));
    // Let the connection of the start-up check close.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = serve.open_files();
    let mut idle = Vec::new();
    for _ in 0..cap * 3 {
        idle.push(
            tokio::net::TcpStream::connect(serve.addr)
                .await
                .expect("connect"),
        );
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let during = serve.open_files();
    assert!(
        during <= before + cap + 2,
        "{during} open files with {} idle connections (cap {cap}, {before} before)",
        idle.len()
    );
    // A real client still gets in: the oldest idle connection makes room.
    let r = tokio::time::timeout(
        Duration::from_secs(10),
        client.send(serve.addr, "GET", "/orchestrator/v1/jobs", None),
    )
    .await
    .expect("answered in time")
    .expect("request");
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(serve.open_files() <= before + cap + 2);
    drop(idle);
}
