//! The service's configuration and HTTP behaviour without SSH targets:
//! config errors with positions and keys, JSON errors (400 naming the field,
//! 404, 405, 501), `/openapi.json` covering every route, `/metrics`, and over
//! real TLS the request limits (413, slow bodies and headers) and 200
//! concurrent `/check` calls.

#[path = "common/tls.rs"]
mod tls;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::Request;
use ferry::server::http::auth::Peer;
use ferry::server::{AppState, ServerConfig, router};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tls::{Client, Pki, TestServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tower::ServiceExt;

fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("ferry-server-api-")
        .tempdir()
        .expect("temp dir")
}

fn config_error(pki: &Pki, dir: &Path, extra: &str) -> String {
    let path = dir.join("bad.yaml");
    std::fs::write(&path, format!("{}{extra}", pki.config_lines())).expect("write");
    match ServerConfig::load(&path) {
        Ok(_) => panic!("config accepted: {extra}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_configs_name_the_position_or_the_key() {
    let pki = Pki::new();
    let dir = scratch();
    let e = config_error(&pki, dir.path(), "port: 44633\nallow-list: [x]\n");
    assert!(e.contains("bad.yaml:5:"), "{e}");
    assert!(e.contains("allow-list"), "{e}");
    let e = config_error(&pki, dir.path(), "port: [1\n");
    assert!(e.contains("bad.yaml:4:"), "{e}");
    let e = config_error(&pki, dir.path(), "port: 70000\n");
    assert!(e.contains("bad.yaml:4:"), "{e}");
    let e = config_error(&pki, dir.path(), "loglevel: loud\n");
    assert!(e.contains("loglevel:") && e.contains("loud"), "{e}");
    let e = config_error(&pki, dir.path(), "store: mysql://u:hunter2@db/x\n");
    assert!(e.contains("store:") && !e.contains("hunter2"), "{e}");
    let e = config_error(&pki, dir.path(), "request-timeout: 0\n");
    assert!(e.contains("request-timeout:"), "{e}");
    let e = config_error(&pki, dir.path(), "file-cache-ttl: 0\n");
    assert!(e.contains("file-cache-ttl:"), "{e}");
    let e = config_error(&pki, dir.path(), "file-server-uri: http://puppet:8140\n");
    assert!(
        e.contains("file-server-uri:") && e.contains("https://"),
        "{e}"
    );
    let path = dir.path().join("no-tls.yaml");
    std::fs::write(&path, "port: 1234\n").expect("write");
    let e = ServerConfig::load(&path).expect_err("no TLS").to_string();
    assert!(e.contains("ssl-cert: is required"), "{e}");

    let path = dir.path().join("ok.yaml");
    std::fs::write(&path, pki.config_lines()).expect("write");
    let c = ServerConfig::load(&path).expect("defaults");
    assert_eq!((c.host.as_str(), c.port), ("127.0.0.1", 44633));
    assert_eq!(c.request_size_limit, 10 * 1024 * 1024);
    assert_eq!(c.request_timeout, Duration::from_secs(30));
    assert!(c.store.starts_with("sqlite://"), "{}", c.store);
    assert!(c.allowlist.is_none() && c.tokens_file.is_none());
    assert!(c.file_server_uri.is_none());
    assert_eq!(c.file_cache_ttl, Duration::from_secs(86400));
}

#[test]
fn ferry_serve_stops_at_start_on_a_bad_config() {
    let pki = Pki::new();
    let dir = scratch();
    let path = dir.path().join("bad.yaml");
    std::fs::write(&path, format!("{}port: 1\nport: 2\n", pki.config_lines())).expect("write");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["serve", "--config"])
        .arg(&path)
        .output()
        .expect("run ferry");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.yaml:5:1: duplicate mapping key: port"),
        "{err}"
    );
}

#[test]
fn ferry_serve_refuses_inventory_plugins_that_run_code_at_start() {
    let pki = Pki::new();
    let dir = scratch();
    let inventory = dir.path().join("inventory.yaml");
    std::fs::write(
        &inventory,
        "targets:\n  - name: a\n    vars:\n      x:\n        _plugin: task\n        task: mymod::lookup\n",
    )
    .expect("write");
    let path = dir.path().join("server.yaml");
    std::fs::write(
        &path,
        format!(
            "{}cache-dir: {}\ninventory: {}\n",
            pki.config_lines(),
            dir.path().display(),
            inventory.display()
        ),
    )
    .expect("write");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["serve", "--config"])
        .arg(&path)
        .output()
        .expect("run ferry");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "inventory.yaml:5:9: plugin task: ferry serve does not run plugins that run code"
        ),
        "{err}"
    );
}

#[tokio::test]
async fn unreadable_tls_files_stop_the_server_naming_the_key() {
    let pki = Pki::new();
    let dir = scratch();
    let path = dir.path().join("server.yaml");
    let text = pki.config_lines().replace("server.key", "missing.key")
        + &format!("cache-dir: {}\nport: 0\n", dir.path().display());
    std::fs::write(&path, text).expect("write");
    let config = ServerConfig::load(&path).expect("config");
    let e = ferry::server::Server::bind(config)
        .await
        .err()
        .expect("bind must fail")
        .to_string();
    assert!(e.contains("ssl-key:") && e.contains("missing.key"), "{e}");
}

async fn app(pki: &Pki, dir: &Path) -> axum::Router {
    app_with(pki, dir, "").await
}

async fn app_with(pki: &Pki, dir: &Path, extra: &str) -> axum::Router {
    let path = dir.join("server.yaml");
    std::fs::write(
        &path,
        format!(
            "{}cache-dir: {}\nrequest-size-limit: 4096\n{}",
            pki.config_lines(),
            dir.display(),
            tls::with_operator(extra)
        ),
    )
    .expect("write");
    let state: Arc<AppState> = AppState::new(ServerConfig::load(&path).expect("config"))
        .await
        .expect("state");
    router(state)
}

async fn call(app: &axum::Router, method: &str, path: &str, body: &str) -> (u16, Value) {
    let mut req = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .expect("request");
    req.extensions_mut().insert(Peer::Cert {
        names: vec!["client-ok".into()],
        certname: Some("client-ok".into()),
    });
    let resp = app.clone().oneshot(req).await.expect("infallible");
    let status = resp.status().as_u16();
    let bytes = resp.into_body().collect().await.expect("body").to_bytes();
    let value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    (status, value)
}

fn assert_error(got: &(u16, Value), status: u16, kind: &str, msg_part: &str) {
    assert_eq!(got.0, status, "{}", got.1);
    assert_eq!(got.1["kind"], kind, "{}", got.1);
    let msg = got.1["msg"].as_str().unwrap_or_default();
    assert!(msg.contains(msg_part), "{msg:?} lacks {msg_part:?}");
    assert!(got.1["details"].is_object(), "{}", got.1);
}

#[tokio::test]
async fn json_errors_name_the_field() {
    let pki = Pki::new();
    let dir = scratch();
    let app = app(&pki, dir.path()).await;
    let bad = call(&app, "POST", "/ssh/run_command", "{\"command\": ").await;
    assert_error(&bad, 400, "ferry/bad-request", "not valid JSON");
    let missing = call(&app, "POST", "/ssh/run_command", "{\"command\": \"id\"}").await;
    assert_error(&missing, 400, "ferry/bad-request", "target");
    let typed = call(
        &app,
        "POST",
        "/ssh/run_command",
        &json!({"command": "id", "target": {"hostname": "h", "user": "u", "password": "p", "port": "x"}}).to_string(),
    )
    .await;
    assert_error(&typed, 400, "ferry/bad-request", "target.port");
    assert_eq!(typed.1["details"]["field"], "target.port");
    let unknown = call(
        &app,
        "POST",
        "/ssh/run_command",
        &json!({"command": "id", "target": {"hostname": "h", "user": "u", "password": "p", "colour": 1}}).to_string(),
    )
    .await;
    assert_error(&unknown, 400, "ferry/bad-request", "colour");
    let secret = call(
        &app,
        "POST",
        "/ssh/run_command",
        &json!({"command": "id", "target": {"hostname": "h", "user": "u", "password": 123456789}})
            .to_string(),
    )
    .await;
    assert_error(&secret, 400, "ferry/bad-request", "target.password");
    assert!(!secret.1.to_string().contains("123456789"), "{}", secret.1);
    let no_credential = call(
        &app,
        "POST",
        "/ssh/run_command",
        &json!({"command": "id", "target": {"hostname": "h", "user": "u"}}).to_string(),
    )
    .await;
    assert_error(
        &no_credential,
        400,
        "ferry/bad-request",
        "private-key-content",
    );
    let scope = call(
        &app,
        "POST",
        "/orchestrator/v1/command/command",
        &json!({"command": "id", "scope": {"nodes": ["a"]}}).to_string(),
    )
    .await;
    assert_error(&scope, 400, "ferry/bad-request", "inventory");
    let big = call(&app, "POST", "/ssh/run_command", &"x".repeat(5000)).await;
    assert_error(&big, 413, "ferry/request-too-large", "4096");

    assert_error(
        &call(&app, "GET", "/nope", "").await,
        404,
        "boltserver/not-found",
        "Could not find route /nope",
    );
    assert_error(
        &call(&app, "GET", "/orchestrator/v1/jobs/999", "").await,
        404,
        "ferry/not-found",
        "999",
    );
    assert_error(
        &call(&app, "GET", "/orchestrator/v1/jobs/x/events?start=1", "").await,
        404,
        "ferry/not-found",
        "",
    );
    assert_error(
        &call(&app, "GET", "/orchestrator/v1/jobs?limit=ten", "").await,
        400,
        "ferry/bad-request",
        "limit",
    );
    assert_error(
        &call(&app, "GET", "/ssh/run_command", "").await,
        405,
        "ferry/method-not-allowed",
        "",
    );
    assert_error(
        &call(&app, "POST", "/ssh/run_task", "{}").await,
        400,
        "ferry/bad-request",
        "task",
    );
    let unknown_task = json!({"task": {"name": "nosuch::task", "files": []},
        "target": {"hostname": "h", "user": "u", "password": "p", "host-key-check": false}});
    assert_error(
        &call(&app, "POST", "/ssh/run_task", &unknown_task.to_string()).await,
        404,
        "ferry/task-not-found",
        "nosuch::task",
    );
    assert_error(
        &call(
            &app,
            "POST",
            "/orchestrator/v1/command/task",
            "{\"task\": \"x::y\"}",
        )
        .await,
        400,
        "ferry/bad-request",
        "scope",
    );
    assert_error(
        &call(
            &app,
            "POST",
            "/orchestrator/v1/command/stop",
            "{\"job\": \"42\"}",
        )
        .await,
        404,
        "ferry/not-found",
        "42",
    );

    // Without a peer extension or token nothing gets in.
    let req = Request::builder()
        .method("POST")
        .uri("/check")
        .body(Body::empty())
        .expect("request");
    let resp = app.clone().oneshot(req).await.expect("infallible");
    assert_eq!(resp.status().as_u16(), 401);
}

#[tokio::test]
async fn openapi_describes_every_route_and_metrics_count_requests() {
    let pki = Pki::new();
    let dir = scratch();
    let app = app(&pki, dir.path()).await;
    let (status, doc) = call(&app, "GET", "/openapi.json", "").await;
    assert_eq!(status, 200);
    assert_eq!(doc["openapi"], "3.1.0");
    for (method, path) in ferry::server::ROUTES {
        let op = &doc["paths"][*path][method.to_lowercase()];
        assert!(op.is_object(), "{method} {path} missing from openapi.json");
        assert!(op["x-ferry-action"].is_string());
    }
    assert_eq!(call(&app, "POST", "/check", "").await.0, 200);
    let (status, text) = call(&app, "GET", "/metrics", "").await;
    assert_eq!(status, 200);
    let text = text.as_str().unwrap_or_default().to_string();
    for needle in [
        "# TYPE ferry_http_requests_total counter",
        "ferry_http_requests_total{endpoint=\"check\",code=\"200\"} 1",
        "ferry_http_request_duration_seconds_bucket{endpoint=\"check\",le=\"+Inf\"} 1",
        "ferry_jobs_started_total 0",
        "# TYPE ferry_target_duration_seconds histogram",
    ] {
        assert!(text.contains(needle), "{needle} not in:\n{text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_over_tls_and_two_hundred_concurrent_checks() {
    let pki = Pki::new();
    let dir = scratch();
    let server = TestServer::start(
        &pki,
        dir.path(),
        "request-size-limit: 2048\nrequest-timeout: 1\n",
    )
    .await;
    let client = Client::new(&pki, Some(&pki.client));

    let big = json!({"command": "x".repeat(4096), "target": {}});
    let resp = client.post(server.addr, "/ssh/run_command", &big).await;
    assert_eq!(resp.status, 413, "{}", resp.text());
    assert_eq!(resp.json()["kind"], "ferry/request-too-large");

    // A body that never arrives: 408 after request-timeout.
    let mut raw = client.raw(server.addr).await.expect("connect");
    raw.write_all(b"POST /ssh/run_command HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"com")
        .await
        .expect("write");
    let started = Instant::now();
    let mut buf = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(5), raw.read(&mut buf))
        .await
        .expect("answered in time")
        .expect("read");
    let head = String::from_utf8_lossy(&buf[..n]).to_string();
    assert!(head.starts_with("HTTP/1.1 408"), "{head}");
    assert!(head.contains("ferry/request-timeout"), "{head}");
    assert!(started.elapsed() >= Duration::from_millis(900));

    // Headers that never end: the connection is closed.
    let mut raw = client.raw(server.addr).await.expect("connect");
    raw.write_all(b"GET /metrics HTTP/1.1\r\nHost: loc")
        .await
        .expect("write");
    let closed = tokio::time::timeout(Duration::from_secs(5), raw.read(&mut buf)).await;
    assert!(closed.is_ok(), "slow headers kept the connection open");

    let started = Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..200 {
        let client = client.clone();
        let addr = server.addr;
        set.spawn(async move { client.send(addr, "POST", "/check", None).await });
    }
    let mut ok = 0;
    while let Some(done) = set.join_next().await {
        let resp = done.expect("task").expect("request");
        assert_eq!(resp.status, 200);
        ok += 1;
    }
    assert_eq!(ok, 200);
    assert!(started.elapsed() < Duration::from_secs(20));
    server.stop().await;
}

fn modulepath_line() -> String {
    format!(
        "modulepath: {}/tests/tasks/modules\n",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn sha(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

#[tokio::test]
async fn tasks_are_listed_and_shown_like_bolt_server() {
    let pki = Pki::new();
    let dir = scratch();
    let app = app_with(&pki, dir.path(), &modulepath_line()).await;
    let (status, list) = call(&app, "GET", "/tasks?environment=production", "").await;
    assert_eq!(status, 200, "{list}");
    let names: Vec<&str> = list
        .as_array()
        .expect("a list")
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect();
    for want in ["demo", "demo::both", "demo::secret", "ferry::facts"] {
        assert!(names.contains(&want), "{want} not in {names:?}");
    }
    assert!(list[0].as_object().expect("object").len() == 1, "{list}");

    let (status, task) = call(&app, "GET", "/tasks/demo/both?environment=x", "").await;
    assert_eq!(status, 200, "{task}");
    assert_eq!(task["name"], "demo::both");
    let meta_path = format!(
        "{}/tests/tasks/modules/demo/tasks/both.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(&meta_path).expect("read")).expect("json");
    assert_eq!(task["metadata"], meta);
    let script = std::fs::read(meta_path.replace(".json", ".sh")).expect("read");
    let files = task["files"].as_array().expect("files");
    let f = files
        .iter()
        .find(|f| f["filename"] == "both.sh")
        .expect("both.sh listed");
    assert_eq!(f["sha256"], sha(&script));
    assert_eq!(f["size_bytes"], script.len());
    assert_eq!(
        f["uri"],
        json!({"path": "/puppet/v3/file_content/tasks/demo/both.sh", "params": {"environment": "production"}})
    );

    let (status, init) = call(&app, "GET", "/tasks/demo/init", "").await;
    assert_eq!(status, 200, "{init}");
    assert_eq!(init["name"], "demo");
    assert_eq!(init["metadata"], json!({}));

    let (status, builtin) = call(&app, "GET", "/tasks/ferry/facts", "").await;
    assert_eq!(status, 200, "{builtin}");
    assert_eq!(builtin["name"], "ferry::facts");
    assert!(builtin["metadata"].is_object() && builtin["metadata"] != json!({}));
    let f = &builtin["files"][0];
    assert_eq!(f["filename"], "facts.sh");
    assert_eq!(
        f["uri"]["path"],
        "/puppet/v3/file_content/tasks/ferry/facts.sh"
    );
    let bytes =
        std::fs::read(format!("{}/tasks/facts.sh", env!("CARGO_MANIFEST_DIR"))).expect("read");
    assert_eq!(f["sha256"], sha(&bytes));

    assert_error(
        &call(&app, "GET", "/tasks/demo/nosuch", "").await,
        404,
        "ferry/task-not-found",
        "demo::nosuch",
    );
    assert_error(
        &call(&app, "GET", "/tasks/Demo/x", "").await,
        400,
        "ferry/bad-request",
        "invalid task name",
    );
    assert_error(
        &call(&app, "GET", "/tasks/demo/both.sh", "").await,
        400,
        "ferry/bad-request",
        "invalid task name",
    );
}

#[tokio::test]
async fn plans_are_listed_and_shown() {
    let pki = Pki::new();
    let dir = scratch();
    let app = app_with(&pki, dir.path(), &modulepath_line()).await;
    let (status, list) = call(&app, "GET", "/plans?environment=production", "").await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(
        list,
        json!([
            {"name": "demo::broken"},
            {"name": "demo::deploy"},
            {"name": "demo::fails"},
            {"name": "demo::tamper"}
        ])
    );
    let (status, plan) = call(&app, "GET", "/plans/demo/deploy?environment=x", "").await;
    assert_eq!(status, 200, "{plan}");
    assert_eq!(
        plan,
        json!({
            "name": "demo::deploy",
            "description": "Three steps on the same targets, one connection each",
            "parameters": {
                "targets": {"type": "TargetSpec"},
                "message": {"type": "String[1]", "default": "from the plan"},
                "marker": {"type": "String"}
            }
        })
    );
    assert_error(
        &call(&app, "GET", "/plans/demo/nosuch", "").await,
        404,
        "ferry/plan-not-found",
        "demo::nosuch",
    );
    assert_error(
        &call(&app, "GET", "/plans/demo/Bad", "").await,
        400,
        "ferry/bad-request",
        "invalid plan name",
    );
    let broken = call(&app, "GET", "/plans/demo/broken", "").await;
    assert_error(&broken, 422, "ferry/plan-error", "demo::broken");
    assert!(
        !broken.1.to_string().contains("tests/tasks"),
        "{}",
        broken.1
    );
    // With no modulepath there is nothing to list.
    let other = scratch();
    let bare = self::app(&pki, other.path()).await;
    assert_eq!(call(&bare, "GET", "/plans", "").await.1, json!([]));
}

async fn get_raw(app: &axum::Router, path: &str, peer: bool) -> (u16, String, Vec<u8>) {
    let mut req = Request::builder()
        .method("GET")
        .uri(path)
        .body(Body::empty())
        .expect("request");
    if peer {
        req.extensions_mut().insert(Peer::Cert {
            names: vec!["client-ok".into()],
            certname: Some("client-ok".into()),
        });
    }
    let resp = app.clone().oneshot(req).await.expect("infallible");
    let status = resp.status().as_u16();
    let ctype = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let bytes = resp.into_body().collect().await.expect("body").to_bytes();
    (status, ctype, bytes.to_vec())
}

#[tokio::test]
async fn module_files_are_served_and_stay_inside_their_module() {
    let pki = Pki::new();
    let dir = scratch();
    let app = app_with(&pki, dir.path(), &modulepath_line()).await;
    let root = format!("{}/tests/tasks/modules/demo", env!("CARGO_MANIFEST_DIR"));
    let (status, ctype, body) = get_raw(
        &app,
        "/puppet/v3/file_content/tasks/demo/both.sh?environment=production",
        true,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(ctype, "application/octet-stream");
    assert_eq!(
        body,
        std::fs::read(format!("{root}/tasks/both.sh")).expect("read")
    );
    let (status, _, body) = get_raw(
        &app,
        "/puppet/v3/file_content/modules/demo/lib/helper.sh",
        true,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        std::fs::read(format!("{root}/files/lib/helper.sh")).expect("read")
    );
    let (status, ctype, body) =
        get_raw(&app, "/puppet/v3/file_content/tasks/ferry/facts.sh", true).await;
    assert_eq!((status, ctype.as_str()), (200, "application/octet-stream"));
    let builtin = std::fs::read(format!("{}/tasks/facts.sh", env!("CARGO_MANIFEST_DIR")));
    assert_eq!(body, builtin.expect("read"));

    // Every file a task lists is served with the sha256 it lists.
    let (_, task) = call(&app, "GET", "/tasks/ferry/facts", "").await;
    for f in task["files"].as_array().expect("files") {
        let (status, _, body) = get_raw(&app, f["uri"]["path"].as_str().expect("path"), true).await;
        assert_eq!(status, 200, "{f}");
        assert_eq!(f["sha256"], sha(&body));
    }

    for missing in [
        "/puppet/v3/file_content/tasks/demo/nosuch.sh",
        "/puppet/v3/file_content/modules/demo/both.sh",
        "/puppet/v3/file_content/scripts/demo/both.sh",
        "/puppet/v3/file_content/tasks/nomodule/x.sh",
    ] {
        assert_error(
            &call(&app, "GET", missing, "").await,
            404,
            "ferry/not-found",
            "",
        );
    }
    for escape in [
        "/puppet/v3/file_content/tasks/demo/../../demo/tasks/both.sh",
        "/puppet/v3/file_content/modules/demo/lib/../../tasks/both.sh",
        "/puppet/v3/file_content/modules/demo/%2e%2e/tasks/both.sh",
        "/puppet/v3/file_content/modules/demo//etc/passwd",
        "/puppet/v3/file_content/modules/demo/lib//helper.sh",
        "/puppet/v3/file_content/modules/demo/lib/./helper.sh",
        "/puppet/v3/file_content/modules/demo/lib/",
        "/puppet/v3/file_content/tasks/..%2Fdemo/tasks/both.sh",
        "/puppet/v3/file_content/other/demo/x",
    ] {
        assert_error(
            &call(&app, "GET", escape, "").await,
            400,
            "ferry/bad-request",
            "",
        );
    }
    // No peer, no token: refused like every endpoint.
    let (status, _, _) = get_raw(&app, "/puppet/v3/file_content/tasks/demo/both.sh", false).await;
    assert_eq!(status, 401);
    let (status, _, _) = get_raw(&app, "/tasks", false).await;
    assert_eq!(status, 401);
    use axum::http::Method;
    use ferry::server::http::auth::action_for;
    for path in [
        "/tasks",
        "/tasks/demo/both",
        "/plans",
        "/plans/demo/deploy",
        "/puppet/v3/file_content/tasks/demo/both.sh",
    ] {
        assert_eq!(
            action_for(&Method::GET, path),
            Some("catalog:read"),
            "{path}"
        );
    }
    assert_eq!(action_for(&Method::GET, "/tasksx"), None);
    assert_eq!(action_for(&Method::POST, "/run_task"), Some("ace:run_task"));
}

#[tokio::test]
async fn ace_run_task_checks_its_request() {
    let pki = Pki::new();
    let dir = scratch();
    let app = app_with(&pki, dir.path(), &modulepath_line()).await;
    let target = json!({"hostname": "h", "user": "u", "password": "p", "host-key-check": false,
        "remote-transport": "panos", "run-on": "proxy"});
    let body = json!({"task": {"name": "demo::both", "files": []}, "target": target});
    assert_error(
        &call(&app, "POST", "/run_task", &body.to_string()).await,
        400,
        "ferry/bad-request",
        "target.remote-transport",
    );
    let mut unknown = body.clone();
    unknown["target"]["remote-transport"] = json!("ssh");
    unknown["task"]["name"] = json!("demo::nosuch");
    assert_error(
        &call(&app, "POST", "/run_task", &unknown.to_string()).await,
        404,
        "ferry/task-not-found",
        "demo::nosuch",
    );
    let mut colour = unknown.clone();
    colour["target"]["colour"] = json!("red");
    assert_error(
        &call(&app, "POST", "/run_task", &colour.to_string()).await,
        400,
        "ferry/bad-request",
        "colour",
    );
    assert_error(
        &call(&app, "POST", "/run_task", "{}").await,
        400,
        "ferry/bad-request",
        "task",
    );
}
