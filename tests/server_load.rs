//! The real `ferry serve` under load and faults, on loopback, bounded in
//! count and time: 500 concurrent requests all answered while slow
//! clients (headers sent byte by byte, or no TLS at all) hold connections
//! and are closed after `request-timeout`; 300 event streams whose clients
//! never read neither grow the server's memory past a bound nor block
//! other requests; the server killed (SIGKILL) mid-job under requests and
//! restarted on the same store loses nothing it stored and fails the job
//! it was running; a target killed mid-command fails its node and the job
//! finishes.

mod common;
#[path = "common/jobs.rs"]
mod jobs;
#[path = "common/tls.rs"]
mod tls;

use std::time::{Duration, Instant};

use common::sshd::Sshd;
use jobs::{
    Serve, fixture, has, inventory, inventory_of, kinds, start_job, stream, target_line,
    wait_events,
};
use serde_json::{Value, json};
use tls::{Client, Pki};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("ferry-server-load-")
        .tempdir()
        .expect("temp dir")
}

/// Growth of the server's resident memory allowed while 300 event
/// streams are stalled (docs/SERVER.md, "Bounds").
const STALLED_STREAMS_RSS_KIB: u64 = 64 * 1024;

/// One request's time, which must stay short while others misbehave.
async fn timed_get(client: &Client, serve: &Serve, path: &str) -> Duration {
    let started = Instant::now();
    let r = tokio::time::timeout(
        Duration::from_secs(10),
        client.send(serve.addr, "GET", path, None),
    )
    .await
    .expect("answered within 10 s")
    .expect("request");
    assert_eq!(r.status, 200, "{}", r.text());
    started.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_and_slow_clients() {
    let pki = Pki::new();
    let dir = scratch();
    let timeout = 3;
    let serve = Serve::start(
        &pki,
        dir.path(),
        "load",
        &format!("request-timeout: {timeout}\nloglevel: warn\n"),
    )
    .await;
    let client = Client::new(&pki, Some(&pki.client));

    // Slow clients: 50 that send a request's headers a byte at a time and
    // never finish them, 50 that connect and never start TLS. Each reports
    // when the server closed its connection.
    let mut slow = tokio::task::JoinSet::new();
    for i in 0..100 {
        let (client, addr) = (client.clone(), serve.addr);
        slow.spawn(async move {
            let started = Instant::now();
            if i % 2 == 0 {
                let mut tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
                let mut buf = [0u8; 64];
                let _ = tcp.read(&mut buf).await;
                return started.elapsed();
            }
            let tls = client.raw(addr).await.expect("TLS");
            let (mut rd, mut wr) = tokio::io::split(tls);
            let trickle = async {
                for b in b"GET /orchestrator/v1/jobs HTTP/1.1\r\nHost: localhost\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" {
                    if wr.write_all(&[*b]).await.is_err() {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                std::future::pending::<()>().await;
            };
            let mut buf = [0u8; 256];
            tokio::select! {
                _ = rd.read(&mut buf) => {}
                () = trickle => {}
            }
            started.elapsed()
        });
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let quick = timed_get(&client, &serve, "/orchestrator/v1/jobs").await;
    assert!(
        quick < Duration::from_secs(3),
        "slow clients held up a request: {quick:?}"
    );

    // 500 requests at once, all answered.
    let started = Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for i in 0..500 {
        let (client, addr) = (client.clone(), serve.addr);
        let path = if i % 2 == 0 {
            "/orchestrator/v1/jobs"
        } else {
            "/openapi.json"
        };
        set.spawn(async move { client.send(addr, "GET", path, None).await });
    }
    let mut ok = 0;
    while let Some(done) = set.join_next().await {
        let resp = done.expect("task").expect("request");
        assert_eq!(resp.status, 200);
        ok += 1;
    }
    assert_eq!(ok, 500);
    assert!(
        started.elapsed() < Duration::from_secs(120),
        "{:?}",
        started.elapsed()
    );

    // The slow clients were closed once request-timeout passed.
    while let Some(done) = slow.join_next().await {
        let held = done.expect("slow client");
        assert!(
            held < Duration::from_secs(timeout + 5),
            "a slow client kept its connection {held:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_event_streams_stay_bounded() {
    let sshd = fixture().await;
    let pki = Pki::new();
    let dir = scratch();
    let inv = inventory(sshd, dir.path());
    let serve = Serve::start(
        &pki,
        dir.path(),
        "streams",
        &format!("inventory: {}\nloglevel: warn\n", inv.display()),
    )
    .await;
    let (client, addr) = (Client::new(&pki, Some(&pki.client)), serve.addr);
    // Warm up: a job end to end, so the memory measured next is steady.
    let warm = start_job(&client, addr, "true", json!({"node_group": "web"})).await;
    stream(&client, addr, &warm).await;
    let before = serve.rss_kib();

    // A job whose web1 prints 64 KiB at once and web2 runs on: 300
    // clients ask for its stream and never read a byte.
    let job = start_job(
        &client,
        addr,
        "if [ \"$(id -un)\" = root ]; then head -c 65536 /dev/zero | tr '\\0' x; else sleep 20; fi",
        json!({"node_group": "web"}),
    )
    .await;
    let mut stalled = Vec::new();
    for _ in 0..300 {
        let mut tls = client.raw(addr).await.expect("TLS");
        tls.write_all(
            format!(
                "GET /orchestrator/v1/jobs/{job}/events/stream HTTP/1.1\r\nHost: localhost\r\n\r\n"
            )
            .as_bytes(),
        )
        .await
        .expect("request");
        stalled.push(tls);
    }
    wait_events(&client, addr, &job, |items| {
        has(items, "node_finished", "web1")
    })
    .await;
    // More events flow past them: quick jobs, each with its own stream.
    for _ in 0..10 {
        let quick = start_job(&client, addr, "true", json!({"nodes": ["web1"]})).await;
        assert_eq!(
            kinds(&stream(&client, addr, &quick).await).last(),
            Some(&"job_finished")
        );
    }
    let took = timed_get(&client, &serve, "/orchestrator/v1/jobs").await;
    assert!(
        took < Duration::from_secs(3),
        "stalled streams held up a request: {took:?}"
    );
    let after = serve.rss_kib();
    eprintln!("server memory: {before} KiB before, {after} KiB with 300 stalled streams");
    assert!(
        after.saturating_sub(before) < STALLED_STREAMS_RSS_KIB,
        "300 stalled streams grew the server from {before} KiB to {after} KiB"
    );
    drop(stalled);
    let r = client
        .post(addr, "/orchestrator/v1/command/stop", &json!({"job": job}))
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
}

/// Everything the API shows of a job that has ended, without its URLs
/// (which name the server's port).
async fn snapshot(client: &Client, addr: std::net::SocketAddr, job: &str) -> Value {
    let mut j = client
        .get(addr, &format!("/orchestrator/v1/jobs/{job}"))
        .await
        .json();
    for key in ["id", "nodes", "events"] {
        j.as_object_mut().map(|m| m.remove(key));
    }
    let nodes = jobs::nodes(client, addr, job).await;
    let events = client
        .get(addr, &format!("/orchestrator/v1/jobs/{job}/events"))
        .await
        .json()["items"]
        .clone();
    json!({ "job": j, "nodes": nodes, "events": events })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_under_load_and_restarted_loses_nothing_stored() {
    let sshd = fixture().await;
    let pki = Pki::new();
    let dir = scratch();
    let inv = inventory(sshd, dir.path());
    let body = format!("inventory: {}\nloglevel: warn\n", inv.display());
    let mut serve = Serve::start(&pki, dir.path(), "first", &body).await;
    let (client, addr) = (Client::new(&pki, Some(&pki.client)), serve.addr);
    let mut done = Vec::new();
    for command in ["echo one", "exit 3", "echo three"] {
        let job = start_job(&client, addr, command, json!({"node_group": "web"})).await;
        stream(&client, addr, &job).await;
        done.push((job.clone(), snapshot(&client, addr, &job).await));
    }
    let running = start_job(
        &client,
        addr,
        "if [ \"$(id -un)\" = root ]; then echo fast; else sleep 30; fi",
        json!({"node_group": "web"}),
    )
    .await;
    wait_events(&client, addr, &running, |items| {
        has(items, "node_finished", "web1") && has(items, "node_running", "web2")
    })
    .await;
    // Requests in flight when the server dies.
    let mut load = tokio::task::JoinSet::new();
    for _ in 0..100 {
        let client = client.clone();
        load.spawn(async move {
            client
                .send(addr, "GET", "/orchestrator/v1/jobs", None)
                .await
        });
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    serve.kill();
    while load.join_next().await.is_some() {}

    let serve = Serve::start(&pki, dir.path(), "second", &body).await;
    let addr = serve.addr;
    for (job, before) in &done {
        assert_eq!(
            &snapshot(&client, addr, job).await,
            before,
            "job {job} changed"
        );
    }
    let j = client
        .get(addr, &format!("/orchestrator/v1/jobs/{running}"))
        .await
        .json();
    assert_eq!(j["state"], "failed", "{j}");
    let nodes = jobs::nodes(&client, addr, &running).await;
    let web1 = nodes.iter().find(|n| n["name"] == "web1").expect("web1");
    assert_eq!(web1["result"]["stdout"], "fast\n", "{web1}");
    let events = stream(&client, addr, &running).await;
    let (last, details) = events.last().expect("events");
    assert_eq!(last, "job_finished");
    assert_eq!(details["details"]["reason"], "server-restart");
    // And it goes on: ids continue after the stored ones.
    let next = start_job(&client, addr, "true", json!({"nodes": ["web1"]})).await;
    assert_eq!(next, "5");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_killed_mid_command_fails_its_node_and_the_job_ends() {
    let victim = tokio::task::spawn_blocking(|| Sshd::builder().start())
        .await
        .expect("sshd");
    let pki = Pki::new();
    let dir = scratch();
    let inv = inventory_of(
        dir.path(),
        victim.known_hosts_path(),
        victim.host(),
        &target_line("victim", "root", victim.host(), victim.port()),
    );
    let serve = Serve::start(
        &pki,
        dir.path(),
        "victim",
        &format!("inventory: {}\nloglevel: warn\n", inv.display()),
    )
    .await;
    let (client, addr) = (Client::new(&pki, Some(&pki.client)), serve.addr);
    let job = start_job(
        &client,
        addr,
        "echo started; sleep 60",
        json!({"nodes": ["victim"]}),
    )
    .await;
    wait_events(&client, addr, &job, |items| {
        has(items, "node_running", "victim")
    })
    .await;
    // Give the command time to start on the target, then kill the target.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let killed = Instant::now();
    tokio::task::spawn_blocking(move || {
        victim.kill();
        victim
    })
    .await
    .expect("kill");
    let events = stream(&client, addr, &job).await;
    assert!(
        killed.elapsed() < Duration::from_secs(30),
        "{:?}",
        killed.elapsed()
    );
    let k = kinds(&events);
    assert_eq!(k.last(), Some(&"job_finished"), "{k:?}");
    assert!(
        k.contains(&"node_failed") || k.contains(&"node_errored"),
        "{k:?}"
    );
    let j = client
        .get(addr, &format!("/orchestrator/v1/jobs/{job}"))
        .await
        .json();
    assert_eq!(j["state"], "failed", "{j}");
    let nodes = jobs::nodes(&client, addr, &job).await;
    assert_eq!(nodes[0]["state"], "failed", "{nodes:?}");
}
