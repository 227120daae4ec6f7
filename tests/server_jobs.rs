//! Orchestrator-style jobs end to end against real sshd targets, on both
//! store backends: start a command job over the inventory, follow it as
//! server-sent events (job_finished last), read jobs, nodes and events,
//! failures and errors per node, stopping a job, a restart that keeps
//! everything, and a server killed mid-job (SIGKILL) whose finished result
//! survives and whose job is failed at the next start, with an event saying
//! why. The PostgreSQL test starts a real cluster.

mod common;
#[path = "common/jobs.rs"]
mod jobs;
#[path = "common/pg.rs"]
mod pg;
#[path = "common/tls.rs"]
mod tls;

use std::path::Path;
use std::time::{Duration, Instant};

use common::sshd::NOPW_USER;
use jobs::{Serve, fixture, has, inventory, kinds, start_job, stream, wait_events};
use serde_json::json;
use tls::{Client, Pki, TestServer};

fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("ferry-server-jobs-")
        .tempdir()
        .expect("temp dir")
}

/// `ferry serve` over the fixture's inventory ([`inventory`]) with the
/// module `demo` on its modulepath, holding `files` (paths inside it).
async fn demo_server<P: AsRef<str>, T: AsRef<[u8]>>(
    pki: &Pki,
    dir: &Path,
    files: impl IntoIterator<Item = (P, T)>,
) -> TestServer {
    let sshd = fixture().await;
    let inv = inventory(sshd, dir);
    let demo = dir.join("modules/demo");
    for (path, text) in files {
        let path = demo.join(path.as_ref());
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(path, text).expect("write fixture");
    }
    let extra = format!(
        "inventory: {}\nmodulepath: {}\n",
        inv.display(),
        dir.join("modules").display()
    );
    TestServer::start(pki, dir, &extra).await
}

async fn command_jobs(pki: &Pki, dir: &Path, store: &str) {
    let sshd = fixture().await;
    let inv = inventory(sshd, dir);
    let modules = dir.join("modules");
    std::fs::create_dir_all(modules.join("demo/tasks")).expect("mkdir");
    std::fs::write(
        modules.join("demo/tasks/greet.sh"),
        "#!/bin/sh\necho \"{\\\"greeting\\\": \\\"hi $PT_name\\\"}\"\n",
    )
    .expect("write task");
    std::fs::write(
        modules.join("demo/tasks/greet.json"),
        r#"{"parameters": {"name": {"type": "String", "sensitive": true}}}"#,
    )
    .expect("write metadata");
    let extra = format!(
        "inventory: {}\nmodulepath: {}\n{store}",
        inv.display(),
        modules.display()
    );
    let server = TestServer::start(pki, dir, &extra).await;
    let backend = if store.contains("postgres") {
        "postgres"
    } else {
        "sqlite"
    };
    assert_eq!(server.state.store.backend(), backend);
    let client = Client::new(pki, Some(&pki.client));
    let addr = server.addr;

    // A job over a group, followed live.
    let job = start_job(
        &client,
        addr,
        "echo hi from $(id -un)",
        json!({"node_group": "web"}),
    )
    .await;
    let events = stream(&client, addr, &job).await;
    let k = kinds(&events);
    assert_eq!(k.last(), Some(&"job_finished"), "{k:?}");
    assert_eq!(
        k.iter().filter(|k| **k == "node_running").count(),
        2,
        "{k:?}"
    );
    assert_eq!(
        k.iter().filter(|k| **k == "node_finished").count(),
        2,
        "{k:?}"
    );
    let ids: Vec<i64> = events
        .iter()
        .map(|(_, v)| v["id"].as_str().and_then(|s| s.parse().ok()).unwrap_or(0))
        .collect();
    assert_eq!(ids, (1..=5).collect::<Vec<_>>());

    let j = client
        .get(addr, &format!("/orchestrator/v1/jobs/{job}"))
        .await
        .json();
    assert_eq!(j["state"], "finished", "{j}");
    assert_eq!(j["node_count"], 2);
    assert_eq!(j["type"], "command");
    assert_eq!(j["owner"]["login"], "client-ok");
    assert!(j["finished_timestamp"].is_string());
    let nodes = client
        .get(addr, &format!("/orchestrator/v1/jobs/{job}/nodes"))
        .await
        .json();
    let items = nodes["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(items.len(), 2);
    for (node, user) in [("web1", "root"), ("web2", NOPW_USER)] {
        let n = items.iter().find(|n| n["name"] == node).expect("node");
        assert_eq!(n["state"], "finished", "{n}");
        assert_eq!(n["result"]["stdout"], format!("hi from {user}\n"), "{n}");
        assert_eq!(n["details"]["status"], "success");
    }
    let tail = client
        .get(addr, &format!("/orchestrator/v1/jobs/{job}/events?start=4"))
        .await
        .json();
    assert_eq!(tail["items"].as_array().map(Vec::len), Some(2), "{tail}");
    assert_eq!(tail["items"][1]["type"], "job_finished");
    assert_eq!(tail["next-events"]["event"], "6");
    // A finished job's stream replays and ends.
    let again = stream(&client, addr, &job).await;
    assert_eq!(kinds(&again), k);

    // A command that fails, and a node that cannot be reached.
    let failed = start_job(&client, addr, "exit 2", json!({"nodes": ["web1"]})).await;
    let k = kinds(&stream(&client, addr, &failed).await).join(",");
    assert_eq!(k, "node_running,node_failed,job_finished");
    // A PQL scope, evaluated over the inventory: only web2 matches.
    let queried = start_job(
        &client,
        addr,
        "true",
        json!({"query": "nodes[certname] { certname ~ \"^web\" and not certname = \"web1\" }"}),
    )
    .await;
    let events = stream(&client, addr, &queried).await;
    assert_eq!(
        kinds(&events).join(","),
        "node_running,node_finished,job_finished"
    );
    assert_eq!(events[0].1["details"]["node"], "web2", "{events:?}");
    let r = client
        .post(
            addr,
            "/orchestrator/v1/command/command",
            &json!({"command": "id", "scope": {"query": "certname = "}}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.json()["msg"]
            .as_str()
            .unwrap_or_default()
            .starts_with("scope.query"),
        "{}",
        r.text()
    );
    let errored = start_job(&client, addr, "true", json!({"node_group": "broken"})).await;
    let events = stream(&client, addr, &errored).await;
    assert_eq!(
        kinds(&events).join(","),
        "node_running,node_errored,job_finished"
    );
    assert_eq!(
        events[1].1["details"]["result"]["_error"]["issue_code"],
        "CONNECT_ERROR"
    );
    let j = client
        .get(addr, &format!("/orchestrator/v1/jobs/{errored}"))
        .await
        .json();
    assert_eq!(j["state"], "failed");

    // Stopping a running job ends its command on the target too.
    let secs = common::procs::unique_seconds();
    let line = format!("sleep {secs}; echo never");
    let long = start_job(&client, addr, &line, json!({"nodes": ["web1"]})).await;
    wait_events(&client, addr, &long, |items| {
        has(items, "node_running", "web1")
    })
    .await;
    let probe = secs.clone();
    let started = tokio::task::spawn_blocking(move || {
        let until = Instant::now() + Duration::from_secs(10);
        while !common::procs::running(&probe) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        common::procs::running(&probe)
    });
    assert!(
        started.await.expect("join"),
        "the job's command never started"
    );
    let started = Instant::now();
    let r = client
        .post(addr, "/orchestrator/v1/command/stop", &json!({"job": long}))
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["job"]["state"], "stopping");
    let events = stream(&client, addr, &long).await;
    assert_eq!(kinds(&events).last(), Some(&"job_finished"));
    assert!(started.elapsed() < Duration::from_secs(10));
    let j = client
        .get(addr, &format!("/orchestrator/v1/jobs/{long}"))
        .await
        .json();
    assert_eq!(j["state"], "stopped");
    let n = client
        .get(addr, &format!("/orchestrator/v1/jobs/{long}/nodes"))
        .await
        .json();
    assert_eq!(n["items"][0]["state"], "stopped");
    let gone = tokio::task::spawn_blocking(move || {
        common::procs::gone_within(&secs, Duration::from_secs(10))
    });
    assert!(
        gone.await.expect("join"),
        "a stopped job's command still runs on its target"
    );

    // A task job; its sensitive parameter never reaches the store.
    let r = client
        .post(
            addr,
            "/orchestrator/v1/command/task",
            &json!({"task": "demo::greet", "params": {"name": "Zaphod-secret"}, "scope": {"nodes": ["web2"]}, "timeout": 60}),
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.text());
    let task_job = r.json()["job"]["name"].as_str().expect("name").to_string();
    let events = stream(&client, addr, &task_job).await;
    assert_eq!(
        kinds(&events).join(","),
        "node_running,node_finished,job_finished"
    );
    let j = client
        .get(addr, &format!("/orchestrator/v1/jobs/{task_job}"))
        .await
        .json();
    assert_eq!(j["type"], "task");
    assert!(!j.to_string().contains("Zaphod-secret"), "{j}");
    let r = client
        .post(
            addr,
            "/orchestrator/v1/command/task",
            &json!({"task": "demo::missing", "scope": {"nodes": ["web2"]}}),
        )
        .await;
    assert_eq!(r.status, 404, "{}", r.text());

    // Scope errors name the field.
    let r = client
        .post(
            addr,
            "/orchestrator/v1/command/command",
            &json!({"command": "id", "scope": {"nodes": ["web1", "nope"]}}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.json()["msg"]
            .as_str()
            .unwrap_or_default()
            .starts_with("scope.nodes[1]")
    );

    let list = client
        .get(addr, "/orchestrator/v1/jobs?limit=2")
        .await
        .json();
    assert_eq!(list["pagination"]["total"], 6);
    assert_eq!(list["items"].as_array().map(Vec::len), Some(2));
    assert_eq!(list["items"][0]["name"], task_job);
    server.stop().await;

    // A restart keeps every job, node result and event.
    let server = TestServer::start(pki, dir, &extra).await;
    let addr = server.addr;
    let list = client.get(addr, "/orchestrator/v1/jobs").await.json();
    assert_eq!(list["pagination"]["total"], 6, "{list}");
    let nodes = client
        .get(addr, &format!("/orchestrator/v1/jobs/{job}/nodes"))
        .await
        .json();
    let web1 = nodes["items"]
        .as_array()
        .and_then(|i| i.iter().find(|n| n["name"] == "web1").cloned());
    assert_eq!(web1.expect("web1")["result"]["stdout"], "hi from root\n");
    let events = client
        .get(addr, &format!("/orchestrator/v1/jobs/{job}/events"))
        .await
        .json();
    assert_eq!(events["items"].as_array().map(Vec::len), Some(5));
    // New jobs continue the numbering.
    let next = start_job(&client, addr, "true", json!({"nodes": ["web2"]})).await;
    assert_eq!(next, "7");
    stream(&client, addr, &next).await;
    server.stop().await;
}

/// The real binary is killed with SIGKILL while web2 still runs; web1's
/// result survives and the next start fails the job with an event.
async fn killed_mid_job(pki: &Pki, dir: &Path, store: &str) {
    let sshd = fixture().await;
    let inv = inventory(sshd, dir);
    let body = format!("inventory: {}\nloglevel: warn\n{store}", inv.display());
    let mut serve = Serve::start(pki, dir, "killed", &body).await;
    let addr = serve.addr;
    let client = Client::new(pki, Some(&pki.client));
    let job = start_job(
        &client,
        addr,
        "if [ \"$(id -un)\" = root ]; then echo fast; else sleep 30; fi",
        json!({"node_group": "web"}),
    )
    .await;
    wait_events(&client, addr, &job, |items| {
        has(items, "node_finished", "web1") && has(items, "node_running", "web2")
    })
    .await;
    serve.kill();

    let server = TestServer::start(pki, &dir.join("second"), &body).await;
    let addr = server.addr;
    let j = client
        .get(addr, &format!("/orchestrator/v1/jobs/{job}"))
        .await
        .json();
    assert_eq!(j["state"], "failed", "{j}");
    let nodes = client
        .get(addr, &format!("/orchestrator/v1/jobs/{job}/nodes"))
        .await
        .json();
    let items = nodes["items"].as_array().cloned().unwrap_or_default();
    let node = |name: &str| {
        items
            .iter()
            .find(|n| n["name"] == name)
            .cloned()
            .expect("node")
    };
    assert_eq!(node("web1")["state"], "finished");
    assert_eq!(node("web1")["result"]["stdout"], "fast\n");
    assert_eq!(node("web2")["state"], "failed");
    let events = client
        .get(addr, &format!("/orchestrator/v1/jobs/{job}/events"))
        .await
        .json();
    let items = events["items"].as_array().cloned().unwrap_or_default();
    let last = items.last().expect("events");
    assert_eq!(last["type"], "job_finished", "{events}");
    assert_eq!(last["details"]["reason"], "server-restart");
    assert!(
        last["message"]
            .as_str()
            .unwrap_or_default()
            .contains("server stopped")
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_command_jobs_stream_stop_and_restart() {
    let pki = Pki::new();
    let dir = scratch();
    command_jobs(&pki, dir.path(), "").await;
    assert!(dir.path().join("ferry.db").is_file());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_server_killed_mid_job() {
    let pki = Pki::new();
    let dir = scratch();
    let db = dir.path().join("jobs.db");
    killed_mid_job(
        &pki,
        dir.path(),
        &format!("store: sqlite://{}\n", db.display()),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_store_same_behaviour() {
    let pg = tokio::task::spawn_blocking(pg::Pg::start)
        .await
        .expect("pg");
    let pki = Pki::new();
    let dir = scratch();
    let url = pg.database("ferry_jobs");
    command_jobs(&pki, dir.path(), &format!("store: \"{url}\"\n")).await;
    let dir = scratch();
    let url = pg.database("ferry_killed");
    killed_mid_job(&pki, dir.path(), &format!("store: \"{url}\"\n")).await;
    drop(pg);
}

/// A query nested far beyond the limit is a 400 on `scope.query`, and the
/// server still answers: it used to overflow a worker's stack and abort the
/// whole process, running jobs with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deeply_nested_query_is_a_400() {
    let pki = Pki::new();
    let dir = scratch();
    let inv = dir.path().join("inventory.yaml");
    std::fs::write(&inv, "targets:\n  - name: web1\n    uri: 127.0.0.1\n").expect("inventory");
    let extra = format!("inventory: {}\n", inv.display());
    let server = TestServer::start(&pki, dir.path(), &extra).await;
    let client = Client::new(&pki, Some(&pki.client));
    for query in ["(".repeat(5_000), "not ".repeat(10_000)] {
        let body = json!({"command": "id", "scope": {"query": query}});
        let r = client
            .post(server.addr, "/orchestrator/v1/command/command", &body)
            .await;
        assert_eq!(r.status, 400, "{}", r.text());
        assert_eq!(r.json()["details"]["field"], "scope.query");
        let msg = r.json()["msg"].as_str().unwrap_or_default().to_string();
        assert!(msg.contains("deeper than 64 levels"), "{msg}");
    }
    let r = client.get(server.addr, "/orchestrator/v1/jobs").await;
    assert_eq!(r.status, 200, "{}", r.text());
    server.stop().await;
}

/// A task that cannot start on a target (no implementation suits it) is
/// `node_errored`, one that ran and failed is `node_failed`: the server
/// decides from the run's typed outcome, not from the result's JSON.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_that_cannot_start_is_errored() {
    let pki = Pki::new();
    let dir = scratch();
    let files = [
        ("tasks/win.ps1", "Write-Output 'hi'\n"),
        (
            "tasks/win.json",
            r#"{"implementations": [{"name": "win.ps1", "requirements": ["powershell"]}]}"#,
        ),
        ("tasks/fails.sh", "#!/bin/sh\necho no >&2\nexit 3\n"),
    ];
    let server = demo_server(&pki, dir.path(), files).await;
    let client = Client::new(&pki, Some(&pki.client));
    for (task, kind, error) in [
        ("demo::win", "node_errored", "bolt/no-implementation"),
        ("demo::fails", "node_failed", "puppetlabs.tasks/task-error"),
    ] {
        let r = client
            .post(
                server.addr,
                "/orchestrator/v1/command/task",
                &json!({"task": task, "scope": {"nodes": ["web1"]}}),
            )
            .await;
        assert_eq!(r.status, 202, "{}", r.text());
        let job = r.json()["job"]["name"].as_str().expect("name").to_string();
        let events = stream(&client, server.addr, &job).await;
        assert_eq!(
            kinds(&events).join(","),
            format!("node_running,{kind},job_finished"),
            "{task}: {events:?}"
        );
        assert_eq!(
            events[1].1["details"]["result"]["_error"]["kind"], error,
            "{task}: {events:?}"
        );
    }
    let msg = "No suitable implementation of demo::win for web1";
    let nodes = jobs::nodes(&client, server.addr, "1").await;
    assert_eq!(nodes[0]["state"], "failed", "{nodes:?}");
    assert!(
        nodes[0]["result"]["_error"]["msg"]
            .as_str()
            .unwrap_or_default()
            .starts_with(msg),
        "{nodes:?}"
    );
    server.stop().await;
}

/// Plans as jobs (`POST /orchestrator/v1/command/plan_run`): a YAML plan
/// and a Puppet-language plan run on the inventory's targets, their plan
/// and step events streamed and stored, their results in
/// `GET /orchestrator/v1/plan_jobs/{id}`; a failing plan ends the job
/// `failure` with Bolt's error; an unknown plan is a 404 naming
/// `plan_name`; bad fields are 400s naming them; `GET /plans` lists both
/// kinds of plan.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_jobs_yaml_and_puppet() {
    let pki = Pki::new();
    let dir = scratch();
    let files = [
        (
            "tasks/greet.sh",
            "#!/bin/sh\necho \"{\\\"greeting\\\": \\\"hi $PT_name\\\"}\"\n",
        ),
        (
            "plans/yplan.yaml",
            "parameters:\n  targets:\n    type: TargetSpec\nsteps:\n  - name: hello\n    command: echo hello from yaml\n    targets: $targets\n  - message: greeted\n  - name: greet\n    task: demo::greet\n    targets: $targets\n    parameters:\n      name: yaml\nreturn: $hello\n",
        ),
        (
            "plans/pplan.pp",
            "plan demo::pplan(TargetSpec $targets, String $who = 'world') {\n  $r = run_command(\"echo hi ${who}\", $targets)\n  out::message(\"said hi to ${who}\")\n  $t = run_task('demo::greet', $targets, { 'name' => $who })\n  $out = { 'count' => $r.count, 'stdout' => $r.first.value['stdout'], 'greeting' => $t.first.value['greeting'] }\n  return $out\n}\n",
        ),
        (
            "plans/slow.yaml",
            "parameters:\n  targets:\n    type: TargetSpec\nsteps:\n  - command: sleep 30\n    targets: $targets\n",
        ),
        (
            "plans/pslow.pp",
            "plan demo::pslow(TargetSpec $targets) {\n  run_command('sleep 30', $targets)\n}\n",
        ),
        (
            "plans/psecret.pp",
            "plan demo::psecret(TargetSpec $targets, Sensitive[String] $secret) {\n  return 'kept'\n}\n",
        ),
        (
            "plans/ysecret.yaml",
            "parameters:\n  targets:\n    type: TargetSpec\n  secret:\n    type: Sensitive[String]\nsteps:\n  - message: nothing\nreturn: kept\n",
        ),
        (
            "plans/broken.pp",
            "plan demo::broken(TargetSpec $targets) {\n  run_command('exit 3', $targets)\n  return 'never'\n}\n",
        ),
    ];
    let server = demo_server(&pki, dir.path(), files).await;
    let client = Client::new(&pki, Some(&pki.client));
    let addr = server.addr;

    let start = |plan: &str, params: serde_json::Value| {
        let body = json!({"plan_name": plan, "params": params, "description": "test"});
        let client = &client;
        async move {
            let r = client
                .post(addr, "/orchestrator/v1/command/plan_run", &body)
                .await;
            assert_eq!(r.status, 202, "{}", r.text());
            let name = r.json()["name"].as_str().expect("name").to_string();
            let url = r.json()["id"].as_str().unwrap_or_default().to_string();
            assert!(
                url.ends_with(&format!("/orchestrator/v1/plan_jobs/{name}")),
                "{url}"
            );
            name
        }
    };

    // A YAML plan: its steps' events, its message, its value.
    let job = start("demo::yplan", json!({"targets": "web"})).await;
    let events = stream(&client, addr, &job).await;
    let k = kinds(&events);
    assert_eq!(k.first(), Some(&"plan_started"), "{k:?}");
    assert_eq!(k[k.len() - 2..], ["plan_finished", "job_finished"], "{k:?}");
    for kind in ["command_start", "task_start", "out_message"] {
        assert_eq!(k.iter().filter(|x| **x == kind).count(), 1, "{kind}: {k:?}");
    }
    assert_eq!(
        k.iter().filter(|x| **x == "node_finished").count(),
        4,
        "{k:?}"
    );
    let r = client
        .get(addr, &format!("/orchestrator/v1/plan_jobs/{job}"))
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let shown = r.json();
    assert_eq!(shown["state"], "success", "{shown}");
    assert_eq!(shown["options"]["plan_name"], "demo::yplan");
    assert_eq!(shown["options"]["environment"], "production");
    assert_eq!(shown["options"]["parameters"]["targets"], "web");
    assert_eq!(shown["options"]["description"], "test");
    let result = shown["result"].as_array().expect("a result set");
    assert_eq!(result.len(), 2, "{shown}");
    assert!(
        result
            .iter()
            .all(|r| r["value"]["stdout"] == "hello from yaml\n"),
        "{shown}"
    );

    // A Puppet-language plan.
    let job = start("demo::pplan", json!({"targets": ["web1"], "who": "api"})).await;
    let events = stream(&client, addr, &job).await;
    let k = kinds(&events);
    assert_eq!(k.first(), Some(&"plan_started"), "{k:?}");
    assert_eq!(
        k[k.len() - 2..],
        ["plan_finished", "job_finished"],
        "{events:?}"
    );
    for kind in ["command_start", "task_start", "out_message"] {
        assert_eq!(k.iter().filter(|x| **x == kind).count(), 1, "{kind}: {k:?}");
    }
    let r = client
        .get(addr, &format!("/orchestrator/v1/plan_jobs/{job}"))
        .await;
    let shown = r.json();
    assert_eq!(shown["state"], "success", "{shown}");
    assert_eq!(
        shown["result"],
        json!({"count": 1, "stdout": "hi api\n", "greeting": "hi api"}),
        "{shown}"
    );
    let r = client
        .get(
            addr,
            &format!("/orchestrator/v1/plan_jobs/{job}/events?start=2"),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let items = r.json()["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(items.len(), events.len() - 1, "{items:?}");
    assert_eq!(
        items.last().map(|e| e["type"].clone()),
        Some(json!("job_finished"))
    );

    // A failing plan: failure, with Bolt's error as its result.
    let job = start("demo::broken", json!({"targets": "web1"})).await;
    let events = stream(&client, addr, &job).await;
    let k = kinds(&events);
    assert_eq!(k[k.len() - 2..], ["plan_failed", "job_finished"], "{k:?}");
    let r = client
        .get(addr, &format!("/orchestrator/v1/plan_jobs/{job}"))
        .await;
    let shown = r.json();
    assert_eq!(shown["state"], "failure", "{shown}");
    assert_eq!(shown["result"]["kind"], "bolt/run-failure", "{shown}");
    let r = client
        .get(addr, &format!("/orchestrator/v1/jobs/{job}"))
        .await;
    assert_eq!(r.json()["state"], "failed");

    // A parameter the plan declares Sensitive is never stored: not in the
    // job's options, not in any file of the server's.
    for (plan, secret) in [
        ("demo::psecret", "hunter2-of-the-pp-plan"),
        ("demo::ysecret", "hunter2-of-the-yaml-plan"),
    ] {
        let job = start(plan, json!({"targets": "web1", "secret": secret})).await;
        let events = stream(&client, addr, &job).await;
        let k = kinds(&events);
        assert_eq!(
            k[k.len() - 2..],
            ["plan_finished", "job_finished"],
            "{events:?}"
        );
        let r = client
            .get(addr, &format!("/orchestrator/v1/plan_jobs/{job}"))
            .await;
        let shown = r.json();
        assert_eq!(
            shown["options"]["parameters"]["secret"], "Sensitive [value redacted]",
            "{shown}"
        );
        assert!(!r.text().contains(secret), "{}", r.text());
        let mut todo = vec![dir.path().to_path_buf()];
        while let Some(d) = todo.pop() {
            for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
                let p = e.path();
                if p.is_dir() {
                    todo.push(p);
                } else if let Ok(bytes) = std::fs::read(&p) {
                    let found = bytes.windows(secret.len()).any(|w| w == secret.as_bytes());
                    assert!(!found, "{secret} is in {}", p.display());
                }
            }
        }
    }

    // A plan job stopped while a step runs: stopped, PE's `failure`.
    let job = start("demo::slow", json!({"targets": "web1"})).await;
    wait_events(&client, addr, &job, |ev| {
        ev.iter().any(|e| e["type"] == "node_running")
    })
    .await;
    let r = client
        .post(addr, "/orchestrator/v1/command/stop", &json!({"job": job}))
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let events = stream(&client, addr, &job).await;
    assert_eq!(kinds(&events).last(), Some(&"job_finished"), "{events:?}");
    let r = client
        .get(addr, &format!("/orchestrator/v1/plan_jobs/{job}"))
        .await;
    assert_eq!(r.json()["state"], "failure", "{}", r.text());
    let r = client
        .get(addr, &format!("/orchestrator/v1/jobs/{job}"))
        .await;
    assert_eq!(r.json()["state"], "stopped", "{}", r.text());

    // A Puppet-language plan stopped mid-step ends at once (what it leaves
    // running: `puppet_plan_jobs_stop_where_they_are`).
    let job = start("demo::pslow", json!({"targets": "web1"})).await;
    wait_events(&client, addr, &job, |ev| {
        ev.iter().any(|e| e["type"] == "node_running")
    })
    .await;
    let asked = Instant::now();
    let r = client
        .post(addr, "/orchestrator/v1/command/stop", &json!({"job": job}))
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let events = stream(&client, addr, &job).await;
    assert_eq!(kinds(&events).last(), Some(&"job_finished"), "{events:?}");
    assert!(
        asked.elapsed() < Duration::from_secs(5),
        "{:?}",
        asked.elapsed()
    );
    let r = client
        .get(addr, &format!("/orchestrator/v1/jobs/{job}"))
        .await;
    assert_eq!(r.json()["state"], "stopped", "{}", r.text());

    // Requests that do not start a job.
    for (body, status, field) in [
        (json!({"plan_name": "demo::nope"}), 404, "plan_name"),
        (json!({"plan_name": 3}), 400, "plan_name"),
        (json!({"plan_name": "Bad Name"}), 400, "plan_name"),
        (
            json!({"plan_name": "demo::yplan", "params": {"targets": 1}}),
            400,
            "params",
        ),
        (
            json!({"plan_name": "demo::yplan", "environment": "qa"}),
            400,
            "environment",
        ),
        (json!({"plan_name": "demo::yplan", "bogus": 1}), 400, ""),
    ] {
        let r = client
            .post(addr, "/orchestrator/v1/command/plan_run", &body)
            .await;
        assert_eq!(r.status, status, "{body}: {}", r.text());
        if !field.is_empty() {
            assert_eq!(r.json()["details"]["field"], field, "{body}: {}", r.text());
            assert!(r.text().contains(field), "{}", r.text());
        }
    }

    // Listings.
    let r = client.get(addr, "/orchestrator/v1/plan_jobs").await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["pagination"]["total"], 7, "{}", r.text());
    let r = client.get(addr, "/orchestrator/v1/plan_jobs/999").await;
    assert_eq!(r.status, 404, "{}", r.text());
    let r = client.get(addr, "/plans").await;
    let names: Vec<String> = r
        .json()
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|p| p["name"].as_str().map(str::to_string))
        .collect();
    assert_eq!(
        names,
        [
            "demo::broken",
            "demo::pplan",
            "demo::psecret",
            "demo::pslow",
            "demo::slow",
            "demo::yplan",
            "demo::ysecret"
        ],
        "{}",
        r.text()
    );
    let r = client.get(addr, "/plans/demo/pplan").await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        r.json()["parameters"]["who"]["default"],
        "'world'",
        "{}",
        r.text()
    );
    use axum::http::Method;
    use ferry::server::http::auth::action_for;
    assert_eq!(
        action_for(&Method::POST, "/orchestrator/v1/command/plan_run"),
        Some("jobs:plan")
    );
    for path in [
        "/orchestrator/v1/plan_jobs",
        "/orchestrator/v1/plan_jobs/3/events",
    ] {
        assert_eq!(action_for(&Method::GET, path), Some("jobs:read"), "{path}");
    }
    assert_eq!(
        action_for(&Method::GET, "/orchestrator/v1/plan_jobsx"),
        None
    );
    server.stop().await;
}

/// Stopping a Puppet-language plan job (`POST /orchestrator/v1/command/stop`)
/// stops the plan where it is: a `run_command` sleeping on the target is
/// ended there, as are `ctrl::sleep`, `wait_until_available` and the
/// blocks of a `parallelize`; no later step runs (the job's
/// `job_finished` comes only once the plan's evaluation has ended, so the
/// checks after it are final), and the plan's end is `ferry/plan-stopped`
/// at the line it stopped on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn puppet_plan_jobs_stop_where_they_are() {
    use common::procs::{gone_within, running, unique_seconds};
    let pki = Pki::new();
    let dir = scratch();
    let plans = [
        (
            "step",
            "  run_command(\"sleep ${first}\", $targets)\n  run_command(\"sleep ${then}\", $targets)\n",
        ),
        (
            "nap",
            "  out::message('napping')\n  ctrl::sleep(600)\n  run_command(\"sleep ${then}\", $targets)\n",
        ),
        (
            "waits",
            "  out::message('waiting')\n  wait_until_available('down', 'wait_time' => 600)\n  run_command(\"sleep ${then}\", $targets)\n",
        ),
        (
            "par",
            "  parallelize([$first, $second]) |$s| { run_command(\"sleep ${s}\", $targets) }\n  run_command(\"sleep ${then}\", $targets)\n",
        ),
    ];
    let files = plans.iter().map(|(name, body)| {
        let text = format!(
            "plan demo::{name}(TargetSpec $targets, String $first = '1', String $second = '1', String $then = '1') {{\n{body}}}\n"
        );
        (format!("plans/{name}.pp"), text)
    });
    let server = demo_server(&pki, dir.path(), files).await;
    let client = Client::new(&pki, Some(&pki.client));
    let addr = server.addr;

    let procs_up = |args: Vec<String>| async move {
        tokio::task::spawn_blocking(move || {
            args.iter()
                .all(|a| common::procs::appears_within(a, Duration::from_secs(20)))
        })
        .await
        .expect("join")
    };
    for (plan, line, wait_for) in [
        ("step", 2, "running"),
        ("nap", 3, "napping"),
        ("waits", 3, "waiting"),
        ("par", 2, "running"),
    ] {
        let (first, second, then) = (unique_seconds(), unique_seconds(), unique_seconds());
        let body = json!({
            "plan_name": format!("demo::{plan}"),
            "params": {"targets": "web1", "first": first, "second": second, "then": then},
        });
        let r = client
            .post(addr, "/orchestrator/v1/command/plan_run", &body)
            .await;
        assert_eq!(r.status, 202, "{}", r.text());
        let job = r.json()["name"].as_str().expect("name").to_string();
        let sleeping = match plan {
            "step" => vec![first.clone()],
            "par" => vec![first.clone(), second.clone()],
            _ => Vec::new(),
        };
        if wait_for == "running" {
            assert!(
                procs_up(sleeping.clone()).await,
                "{plan}: its step never started"
            );
        } else {
            wait_events(&client, addr, &job, |ev| {
                ev.iter().any(|e| e["type"] == "out_message")
            })
            .await;
        }
        let r = client
            .post(addr, "/orchestrator/v1/command/stop", &json!({"job": job}))
            .await;
        assert_eq!(r.status, 200, "{plan}: {}", r.text());
        let events = stream(&client, addr, &job).await;
        let k = kinds(&events);
        assert_eq!(
            k[k.len() - 2..],
            ["plan_failed", "job_finished"],
            "{plan}: {events:?}"
        );
        // The plan's evaluation ended by itself, before the job did.
        assert_eq!(
            events[events.len() - 1].1["details"],
            json!({"state": "stopped"}),
            "{plan}: {events:?}"
        );
        let result = &events[events.len() - 2].1["details"]["result"];
        assert_eq!(result["kind"], "ferry/plan-stopped", "{plan}: {result}");
        assert_eq!(result["details"]["line"], line, "{plan}: {result}");
        let starts = k.iter().filter(|x| **x == "command_start").count();
        assert_eq!(
            starts,
            if plan == "par" {
                2
            } else {
                usize::from(plan == "step")
            },
            "{plan}: {k:?}"
        );
        assert!(!running(&then), "{plan}: a step after the stop ran");
        let r = client
            .get(addr, &format!("/orchestrator/v1/jobs/{job}"))
            .await;
        assert_eq!(r.json()["state"], "stopped", "{plan}: {}", r.text());
        let gone = tokio::task::spawn_blocking(move || {
            sleeping
                .iter()
                .all(|s| gone_within(s, Duration::from_secs(10)))
        });
        assert!(
            gone.await.expect("join"),
            "{plan}: its step still runs on the target"
        );
    }
    server.stop().await;
}

/// Without a PuppetDB, a plan job's `puppetdb_query` and `puppetdb_fact`
/// read the facts the server stored: those agents sent
/// (`PUT /puppet/v3/facts/:certname` with the node's certificate), then
/// the inventory's targets' own; a `.pp` plan and a YAML plan's code both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_jobs_query_the_facts_agents_sent() {
    let pki = Pki::new();
    let dir = scratch();
    let query = r#"inventory[certname]{ facts.os.family = "Debian" order by certname }"#;
    let files = [
        (
            "plans/debian.pp".to_string(),
            format!(
                "plan demo::debian() {{\n  $rows = puppetdb_query('{query}')\n  $facts = puppetdb_fact(['agent1.test', 'nobody.test'])\n  return {{ 'debian' => $rows.map |$r| {{ $r['certname'] }}, 'agent1' => $facts['agent1.test']['os'], 'nobody' => $facts['nobody.test'] }}\n}}\n"
            ),
        ),
        (
            "plans/ydebian.yaml".to_string(),
            format!(
                "steps:\n  - name: rows\n    eval: |\n      puppetdb_query('{query}')\nreturn: $rows\n"
            ),
        ),
    ];
    let server = demo_server(&pki, dir.path(), files).await;
    let addr = server.addr;
    for (node, family) in [
        ("agent1.test", "Debian"),
        ("agent2.test", "RedHat"),
        ("agent3.test", "Debian"),
    ] {
        let agent = Client::new(&pki, Some(&pki.node(node)));
        let body = json!({
            "name": node,
            "values": {"os": {"family": family, "name": "x"}, "hostname": node},
        });
        let r = agent
            .send(
                addr,
                "PUT",
                &format!("/puppet/v3/facts/{node}?environment=production"),
                Some(body.to_string().into_bytes()),
            )
            .await
            .expect("PUT facts");
        assert_eq!(r.status, 200, "{node}: {}", r.text());
    }
    let client = Client::new(&pki, Some(&pki.client));
    for (plan, want) in [
        (
            "demo::debian",
            json!({
                "debian": ["agent1.test", "agent3.test"],
                "agent1": {"family": "Debian", "name": "x"},
                "nobody": {},
            }),
        ),
        (
            "demo::ydebian",
            json!([{"certname": "agent1.test"}, {"certname": "agent3.test"}]),
        ),
    ] {
        let r = client
            .post(
                addr,
                "/orchestrator/v1/command/plan_run",
                &json!({"plan_name": plan}),
            )
            .await;
        assert_eq!(r.status, 202, "{}", r.text());
        let job = r.json()["name"].as_str().expect("name").to_string();
        let events = stream(&client, addr, &job).await;
        let (kind, last) = &events[events.len() - 2];
        assert_eq!(kind, "plan_finished", "{plan}: {events:?}");
        assert_eq!(last["details"]["result"], want, "{plan}");
    }
    server.stop().await;
}
