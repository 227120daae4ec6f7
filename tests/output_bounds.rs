//! Output is bounded, whatever a target prints: real commands print
//! hundreds of megabytes through the local transport and through a real
//! sshd, and the ferry process's peak resident memory (as GNU time
//! reports it) stays small while the result keeps the head and the tail of each
//! stream and says how much was omitted. A task whose JSON result is cut
//! fails clearly; `--stream` with no newline holds no line; and a job on
//! `ferry serve` stores no more than its `max-output` per stream, with the
//! server's own memory bounded too.

mod common;
#[path = "common/jobs.rs"]
mod jobs;
#[path = "common/tls.rs"]
mod tls;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::ferry::{Scratch, key_line, one_target};
use common::sshd::{self, KeyType, client_keys};
use serde_json::{Value, json};
use tls::{Client, Pki};

/// Peak resident memory a ferry process may reach in these tests. These
/// runs peak near 20 MiB; without the bound they reach several hundred.
const PEAK_LIMIT_KIB: u64 = 100 * 1024;

/// One finished ferry process, its stdout in a file, its peak memory.
struct Measured {
    code: i32,
    stdout: PathBuf,
    stderr: String,
    peak_kib: u64,
    took: Duration,
}

impl Measured {
    fn json(&self) -> Value {
        let text = std::fs::read_to_string(&self.stdout).expect("read stdout");
        serde_json::from_str(&text).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}): {}...\nstderr: {}",
                text.chars().take(2000).collect::<String>(),
                self.stderr
            )
        })
    }

    /// Prints the run's time and peak memory and checks the peak.
    fn assert_peak(&self, what: &str) {
        eprintln!("{what}: {:?}, peak {} KiB", self.took, self.peak_kib);
        assert!(
            self.peak_kib < PEAK_LIMIT_KIB,
            "{what}: peak RSS {} KiB (exit {}, {})",
            self.peak_kib,
            self.code,
            self.stderr
        );
    }

    fn only(&self) -> Value {
        let doc = self.json();
        assert_eq!(doc["items"].as_array().map(Vec::len), Some(1), "{doc}");
        doc["items"][0].clone()
    }
}

/// Runs ferry in the scratch dir (its HOME, no agent) under GNU time,
/// with stdout to a file and at most two minutes, and reads its peak RSS
/// from time's report (the largest of the small `time` and `timeout`
/// processes and ferry, which they started).
fn ferry_measured(s: &Scratch, args: &[&str]) -> Measured {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let (stdout, peak) = (
        s.path().join(format!("stdout-{n}")),
        s.path().join(format!("peak-{n}")),
    );
    let file = std::fs::File::create(&stdout).expect("stdout file");
    let started = Instant::now();
    // `timeout` (a small process too) ends a run that would never finish.
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%M", "-o"])
        .arg(&peak)
        .args(["timeout", "-k", "10", "120"])
        .arg(env!("CARGO_BIN_EXE_ferry"))
        .args(args)
        .current_dir(s.path())
        .env("HOME", s.home())
        .env_remove("SSH_AUTH_SOCK")
        .env_remove("FERRY_INVENTORY")
        .env_remove("FERRY_LOG")
        .stdin(Stdio::null())
        .stdout(file)
        .output()
        .expect("run ferry under /usr/bin/time (package time)");
    let peak_kib = std::fs::read_to_string(&peak)
        .ok()
        .and_then(|t| t.lines().last().and_then(|l| l.trim().parse().ok()))
        .unwrap_or_else(|| panic!("no peak from /usr/bin/time in {}", peak.display()));
    Measured {
        code: out.status.code().unwrap_or(-1),
        stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        peak_kib,
        took: started.elapsed(),
    }
}

/// A shell command printing `HEAD`, `n` bytes of `fill`, `TAIL` on stdout,
/// and the same with `m` bytes of `e` on stderr.
fn spew(n: u64, m: u64) -> String {
    format!(
        "printf HEAD; head -c {n} /dev/zero | tr '\\0' y; printf TAIL; \
         {{ printf EHEAD; head -c {m} /dev/zero | tr '\\0' e; printf ETAIL; }} >&2"
    )
}

fn marker(omitted: u64, limit: u64) -> String {
    format!("\n[ferry: {omitted} bytes of output omitted; at most {limit} bytes are kept]\n")
}

/// The result keeps exactly the first and last halves of each stream,
/// with the marker between them, and `truncated` counts what was dropped.
fn assert_cut(value: &Value, n: u64, m: u64, limit: u64) {
    let half = (limit / 2) as usize;
    let out_total = n + 8;
    let err_total = m + 10;
    let stdout = value["stdout"].as_str().expect("stdout");
    let want = format!(
        "HEAD{}{}{}TAIL",
        "y".repeat(half - 4),
        marker(out_total - limit, limit),
        "y".repeat(half - 4)
    );
    assert!(
        stdout == want,
        "stdout is not head+marker+tail: {} bytes",
        stdout.len()
    );
    let stderr = value["stderr"].as_str().expect("stderr");
    assert!(stderr.starts_with("EHEAD") && stderr.ends_with("ETAIL"));
    assert!(stderr.contains(&marker(err_total - limit, limit)));
    assert_eq!(
        stderr.len(),
        limit as usize + marker(err_total - limit, limit).len()
    );
    let merged = value["merged_output"].as_str().expect("merged_output");
    assert!(merged.len() <= limit as usize + 100, "{}", merged.len());
    assert!(
        merged.starts_with("HEAD"),
        "merged starts with the first output"
    );
    assert_eq!(
        value["truncated"],
        json!({
            "stdout": out_total - limit,
            "stderr": err_total - limit,
            "merged_output": out_total + err_total - limit,
        })
    );
}

fn localhost(s: &Scratch) -> PathBuf {
    s.inventory("targets:\n  - name: localhost\n    config:\n      transport: local\n")
}

fn ssh_inventory(s: &Scratch) -> PathBuf {
    s.inventory(&one_target(
        sshd::shared(),
        "t",
        "root",
        &key_line(&client_keys().path(KeyType::Ed25519)),
    ))
}

#[test]
fn local_command_printing_300_mb_keeps_head_and_tail_in_bounded_memory() {
    let s = Scratch::new();
    let inv = localhost(&s);
    let (n, m) = (300_000_000, 20_000_000);
    let cmd = spew(n, m);
    let run = ferry_measured(
        &s,
        &[
            "command",
            "run",
            &cmd,
            "-t",
            "localhost",
            "-i",
            inv.to_str().unwrap(),
            "--format",
            "json",
            "--max-output",
            "64K",
        ],
    );
    run.assert_peak("local, 320 MB");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let item = run.only();
    assert_eq!(item["status"], "success");
    assert_cut(&item["value"], n, m, 65536);
}

#[test]
fn ssh_command_printing_100_mb_keeps_head_and_tail_in_bounded_memory() {
    let s = Scratch::new();
    let inv = ssh_inventory(&s);
    let (n, m) = (100_000_000, 10_000_000);
    let cmd = spew(n, m);
    let run = ferry_measured(
        &s,
        &[
            "command",
            "run",
            &cmd,
            "-t",
            "t",
            "-i",
            inv.to_str().unwrap(),
            "--format",
            "json",
            "--max-output",
            "100000",
        ],
    );
    run.assert_peak("ssh, 110 MB");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let item = run.only();
    assert_eq!(item["status"], "success", "{item}");
    assert_cut(&item["value"], n, m, 100_000);
}

#[test]
fn the_default_limit_is_one_mebibyte_per_stream() {
    let s = Scratch::new();
    let inv = localhost(&s);
    let (n, m) = (5 << 20, 3 << 20);
    let cmd = spew(n, m);
    let run = ferry_measured(
        &s,
        &[
            "command",
            "run",
            &cmd,
            "-t",
            "localhost",
            "-i",
            inv.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_cut(&run.only()["value"], n, m, 1 << 20);
    // Output within the limit is kept whole, with no `truncated`.
    let run = ferry_measured(
        &s,
        &[
            "command",
            "run",
            "head -c 1048576 /dev/zero | tr '\\0' y",
            "-t",
            "localhost",
            "-i",
            inv.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    let value = run.only()["value"].clone();
    assert_eq!(value["stdout"].as_str().map(str::len), Some(1 << 20));
    assert!(value.get("truncated").is_none(), "{}", value["truncated"]);
}

#[test]
fn bad_limits_are_refused_before_anything_runs() {
    let s = Scratch::new();
    let inv = localhost(&s);
    for (given, says) in [
        ("10", "out of range"),
        ("2G", "out of range"),
        ("1.5M", "not a size"),
        ("lots", "not a size"),
    ] {
        let run = s.ferry(&[
            "command",
            "run",
            "touch ran",
            "-t",
            "localhost",
            "-i",
            inv.to_str().unwrap(),
            "--max-output",
            given,
        ]);
        assert_eq!(run.code, 1, "{given}: {}", run.all_text());
        assert!(
            run.stderr.contains("--max-output") && run.stderr.contains(says),
            "{given}: {}",
            run.stderr
        );
    }
    assert!(!s.path().join("ran").exists());
    // The server's `max-output` is checked the same way, naming the key.
    let config = |value: &str| {
        ferry::server::ServerConfig::parse(
            &format!("ssl-cert: c\nssl-key: k\nssl-ca-cert: ca\nmax-output: {value}\n"),
            Path::new("/etc/ferry/server.yaml"),
        )
    };
    assert_eq!(config("65536").expect("valid").max_output, 65536);
    let e = config("100").expect_err("too small").to_string();
    assert!(
        e.contains("server.yaml: max-output:") && e.contains("out of range"),
        "{e}"
    );
}

/// A module whose task prints a JSON object of `size` bytes.
fn big_json_task(s: &Scratch) -> String {
    let dir = s.path().join("modules/bigout/tasks");
    std::fs::create_dir_all(&dir).expect("module dir");
    std::fs::write(
        dir.join("json.sh"),
        "#!/bin/sh\nprintf '{\"list\": \"'\nhead -c \"$PT_size\" /dev/zero | tr '\\0' x\nprintf '\"}\\n'\n",
    )
    .expect("task");
    std::fs::write(
        dir.join("json.json"),
        r#"{"parameters": {"size": {"type": "Integer"}}}"#,
    )
    .expect("metadata");
    s.path().join("modules").display().to_string()
}

#[test]
fn a_task_whose_json_result_is_cut_fails_clearly() {
    let s = Scratch::new();
    let modules = big_json_task(&s);
    let inv = ssh_inventory(&s);
    let task = |size: &str| {
        ferry_measured(
            &s,
            &[
                "task",
                "run",
                "bigout::json",
                &format!("size={size}"),
                "-t",
                "t",
                "-i",
                inv.to_str().unwrap(),
                "--modulepath",
                &modules,
                "--format",
                "json",
                "--max-output",
                "64K",
            ],
        )
    };
    // Within the limit: the JSON is the result.
    let run = task("60000");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let item = run.only();
    assert_eq!(
        item["value"]["list"].as_str().map(str::len),
        Some(60000),
        "{item}"
    );
    // 50 MB: a clear failure that keeps the head and tail as `_output`.
    let run = task("50000000");
    run.assert_peak("task, 50 MB");
    assert_eq!(run.code, 2, "{}", run.stderr);
    let item = run.only();
    let value = &item["value"];
    assert_eq!(item["status"], "failure");
    assert_eq!(value["_error"]["kind"], "ferry/output-truncated", "{value}");
    let total = 50_000_000 + 13;
    assert_eq!(value["_error"]["details"]["stdout_bytes"], total);
    assert_eq!(value["truncated"]["stdout"], total - 65536);
    let output = value["_output"].as_str().unwrap_or_default();
    assert!(output.starts_with("{\"list\": \"xxx") && output.ends_with("xxx\"}\n"));
    assert!(output.contains(&marker(total - 65536, 65536)));
}

#[test]
fn streaming_a_target_that_never_prints_a_newline_holds_no_line() {
    let s = Scratch::new();
    let inv = localhost(&s);
    let n: u64 = 200_000_000;
    let cmd = format!("head -c {n} /dev/zero | tr '\\0' y");
    let run = ferry_measured(
        &s,
        &[
            "command",
            "run",
            &cmd,
            "-t",
            "localhost",
            "-i",
            inv.to_str().unwrap(),
            "--stream",
            "--max-output",
            "64K",
        ],
    );
    run.assert_peak("stream, 200 MB without a newline");
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Every byte was printed live, in prefixed pieces.
    let printed = std::fs::metadata(&run.stdout).expect("stdout").len();
    assert!(printed > n, "printed {printed} bytes");
    let mut head = vec![0u8; 256];
    let mut f = std::fs::File::open(&run.stdout).expect("open");
    std::io::Read::read_exact(&mut f, &mut head).expect("read");
    let head = String::from_utf8_lossy(&head);
    assert!(head.contains("[localhost] yyyy"), "{head}");
}

/// The peak resident memory of a running process, in KiB.
fn vm_hwm(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM")
}

/// Everything the SQLite store holds on disk (the database and its WAL).
fn store_bytes(dir: &Path) -> u64 {
    ["ferry.db", "ferry.db-wal", "ferry.db-shm"]
        .iter()
        .filter_map(|f| std::fs::metadata(dir.join(f)).ok())
        .map(|m| m.len())
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_job_printing_64_mib_stores_no_more_than_max_output() {
    let sshd = tokio::task::spawn_blocking(sshd::shared)
        .await
        .expect("sshd");
    let pki = Pki::new();
    let dir = tempfile::Builder::new()
        .prefix("ferry-output-bounds-")
        .tempdir()
        .expect("temp dir");
    let dir = dir.path();
    let inv = dir.join("inventory.yaml");
    std::fs::write(
        &inv,
        format!(
            "config:\n  ssh:\n    private-key: {}\n    known-hosts-file: {}\n    load-config: false\ntargets:\n  - name: web1\n    uri: ssh://root@{}:{}\n",
            client_keys().path(KeyType::Ed25519).display(),
            sshd.known_hosts_path().display(),
            sshd.host(),
            sshd.port()
        ),
    )
    .expect("inventory");
    let limit: u64 = 65536;
    let body = format!(
        "inventory: {}\nloglevel: warn\nmax-output: {limit}\n",
        inv.display()
    );
    let server = jobs::Serve::start(&pki, dir, "server", &body).await;
    let addr = server.addr;
    let client = Client::new(&pki, Some(&pki.client));
    let before = store_bytes(dir);
    let (n, m) = (64 << 20, 1 << 20);
    let r = client
        .post(
            addr,
            "/orchestrator/v1/command/command",
            &json!({"command": spew(n, m), "scope": {"nodes": ["web1"]}}),
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.text());
    let job = r.json()["job"]["name"].as_str().expect("job").to_string();
    let deadline = Instant::now() + Duration::from_secs(120);
    let node = loop {
        let nodes = client
            .get(addr, &format!("/orchestrator/v1/jobs/{job}/nodes"))
            .await
            .json();
        let node = nodes["items"][0].clone();
        if node["state"] == "finished" || node["state"] == "failed" {
            break node;
        }
        assert!(Instant::now() < deadline, "the job did not finish: {nodes}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let peak = vm_hwm(server.pid());
    let grown = store_bytes(dir).saturating_sub(before);
    eprintln!("server: peak {peak} KiB, store grew {grown} bytes");
    // The result is in the store twice (the node's and its event's), each
    // with stdout, stderr and merged output: at most 6 times the limit.
    assert!(grown < 6 * limit + (256 << 10), "store grew {grown} bytes");
    assert!(peak < PEAK_LIMIT_KIB, "server peak RSS {peak} KiB");
    assert_eq!(node["state"], "finished", "{}", node["result"]["_error"]);
    assert_cut(&node["result"], n, m, limit);
    let events = client
        .get(addr, &format!("/orchestrator/v1/jobs/{job}/events"))
        .await
        .json();
    let finished = events["items"]
        .as_array()
        .and_then(|items| items.iter().find(|e| e["type"] == "node_finished"))
        .cloned()
        .expect("node_finished event");
    assert_cut(&finished["details"]["result"], n, m, limit);
}
