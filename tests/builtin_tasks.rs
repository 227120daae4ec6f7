//! Runs ferry's built-in tasks (the `ferry` module: tasks/facts.sh,
//! tasks/package.sh, tasks/service.sh, tasks/resources.sh) for real on this machine, the way the
//! task runner will: parameters as one JSON object on stdin and as `PT_*`
//! environment variables, one JSON object expected on stdout.
//!
//! Every task runs under dash and, when busybox is installed, under
//! `busybox sh` with a PATH holding only busybox applets (an Alpine-like
//! userland); the facts task also under dash with each awk installed
//! (mawk, gawk, busybox awk). Fixture trees for the facts task live in
//! tests/builtin_tasks/.
//!
//! The package install/uninstall test needs apt and a reachable package
//! registry; it prints a notice and skips itself otherwise. The dnf one
//! builds its own rpm and serves it from a local repository (Debian's dnf,
//! rpm and createrepo_c, which scripts/test.sh installs). The service
//! lifecycle test needs root and SysV init scripts (no systemd as PID 1).
//!
//! The tests are grouped by task in modules under tests/builtin_tasks/
//! (facts, JSON escaping, package with apt and with dnf, service,
//! resources against Puppet's own resource indirection); this
//! file holds what they share: the shells, running a task, and checking
//! its JSON result.

#[path = "builtin_tasks/facts.rs"]
mod facts;
#[path = "builtin_tasks/json.rs"]
mod json;
#[path = "builtin_tasks/package.rs"]
mod package;
#[path = "builtin_tasks/package_rpm.rs"]
mod package_rpm;
#[path = "builtin_tasks/resources.rs"]
mod resources;
#[path = "builtin_tasks/service.rs"]
mod service;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Held by every test that changes the machine's packages or services, and
/// by the one that lists them all (the resources task against Puppet): a
/// listing taken while another test installs a package or an init script
/// would see it half made.
static SYSTEM: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn system_lock() -> std::sync::MutexGuard<'static, ()> {
    SYSTEM.lock().unwrap_or_else(|e| e.into_inner())
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn task_path(file: &str) -> PathBuf {
    repo().join("tasks").join(file)
}

fn have(cmd: &str) -> bool {
    Command::new("sh")
        .args(["-c", "command -v \"$1\" >/dev/null", "sh", cmd])
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// A shell to run the tasks with.
struct Shell {
    name: &'static str,
    argv: Vec<String>,
    /// PATH for the task; `None` keeps the test's own.
    path: Option<String>,
    _dir: Option<tempfile::TempDir>,
}

/// A directory of symlinks to busybox, one per applet, minus `omit`.
fn busybox_bin(omit: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let list = Command::new("busybox").arg("--list").output().unwrap();
    let busybox = which("busybox");
    for applet in String::from_utf8(list.stdout).unwrap().lines() {
        if !omit.contains(&applet) {
            std::os::unix::fs::symlink(&busybox, dir.path().join(applet)).unwrap();
        }
    }
    dir
}

fn which(cmd: &str) -> PathBuf {
    let out = Command::new("sh")
        .args(["-c", "command -v \"$1\"", "sh", cmd])
        .output()
        .unwrap();
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// `busybox sh` with PATH holding only busybox applets (minus `omit`), then
/// the system PATH when `system_path` (for tasks that drive apt or init
/// scripts, which busybox does not provide).
fn busybox_shell(omit: &[&str], system_path: bool) -> Shell {
    let dir = busybox_bin(omit);
    let mut path = dir.path().display().to_string();
    if system_path {
        path = format!("{path}:{}", std::env::var("PATH").unwrap_or_default());
    }
    Shell {
        name: "busybox",
        argv: vec![which("busybox").display().to_string(), "sh".into()],
        path: Some(path),
        _dir: Some(dir),
    }
}

/// dash (Debian's /bin/sh) and, when installed, busybox sh with a
/// busybox-only userland.
fn shells() -> Vec<Shell> {
    shells_for(false)
}

/// Like [`shells`], the busybox userland backed by the system PATH.
fn shells_with_system_tools() -> Vec<Shell> {
    shells_for(true)
}

fn shells_for(system_path: bool) -> Vec<Shell> {
    assert!(have("dash"), "dash is required (Debian's /bin/sh)");
    let mut shells = vec![Shell {
        name: "dash",
        argv: vec!["dash".into()],
        path: None,
        _dir: None,
    }];
    if have("busybox") {
        shells.push(busybox_shell(&[], system_path));
    } else {
        eprintln!("NOTICE: busybox is not installed; tasks are tested under dash only");
    }
    shells
}

/// [`shells`] plus dash with each other awk this machine has first on PATH
/// (mawk, gawk, busybox awk): the facts task is one awk program, and a
/// target may have any of them as its awk.
fn shells_and_awks() -> Vec<Shell> {
    let mut all = shells();
    let system = std::env::var("PATH").unwrap_or_default();
    for (name, bin) in [
        ("dash+mawk", "mawk"),
        ("dash+gawk", "gawk"),
        ("dash+busybox-awk", "busybox"),
    ] {
        if !have(bin) {
            eprintln!("NOTICE: {bin} is not installed; the facts task is not tested with it");
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(which(bin), dir.path().join("awk")).unwrap();
        all.push(Shell {
            name,
            argv: vec!["dash".into()],
            path: Some(format!("{}:{system}", dir.path().display())),
            _dir: Some(dir),
        });
    }
    all
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

impl Run {
    /// The single JSON object the task printed.
    fn value(&self) -> Value {
        let v: Value = serde_json::from_str(self.stdout.trim()).unwrap_or_else(|e| {
            panic!(
                "task output is not one JSON value ({e}):\nstdout: {}\nstderr: {}",
                self.stdout, self.stderr
            )
        });
        assert!(v.is_object(), "task result is not an object: {v}");
        v
    }

    fn ok(&self) -> Value {
        assert_eq!(
            self.code, 0,
            "task failed\nstdout: {}\nstderr: {}",
            self.stdout, self.stderr
        );
        let v = self.value();
        assert!(v.get("_error").is_none(), "unexpected _error: {v}");
        v
    }

    /// Asserts a Bolt-style `_error` with the given kind and a non-zero exit.
    fn error(&self, kind: &str) -> Value {
        assert_ne!(self.code, 0, "task should have failed: {}", self.stdout);
        let v = self.value();
        let err = v
            .get("_error")
            .unwrap_or_else(|| panic!("no _error in {v}"));
        assert_eq!(err["kind"], kind, "{v}");
        assert!(err["msg"].as_str().is_some_and(|m| !m.is_empty()), "{v}");
        assert!(err["details"].is_object(), "{v}");
        err.clone()
    }
}

/// Runs `tasks/<file>` as the runner will: `params` (plus the `_task`
/// metaparameter) as JSON on stdin and as PT_* variables, strings raw and
/// everything else JSON-encoded.
fn run_task(shell: &Shell, file: &str, params: Value, env: &[(&str, &str)]) -> Run {
    let mut params = params.as_object().cloned().unwrap_or_default();
    let task = format!("ferry::{}", file.trim_end_matches(".sh"));
    params.insert("_task".into(), Value::String(task));
    let mut cmd = Command::new(&shell.argv[0]);
    cmd.args(&shell.argv[1..]).arg(task_path(file));
    for (k, v) in &params {
        let val = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        cmd.env(format!("PT_{k}"), val);
    }
    if let Some(path) = &shell.path {
        cmd.env("PATH", path);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    run_with_stdin(cmd, &Value::Object(params).to_string())
}

fn run_with_stdin(mut cmd: Command, stdin: &str) -> Run {
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn task");
    // The tasks read the environment; a closed pipe is fine.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).expect("task output is not UTF-8"),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        elapsed: start.elapsed(),
    }
}

fn sh_out(script: &str) -> String {
    let out = Command::new("sh").args(["-c", script]).output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn os_release(key: &str) -> Option<String> {
    let text = std::fs::read_to_string("/etc/os-release").ok()?;
    text.lines().find_map(|l| {
        l.strip_prefix(&format!("{key}="))
            .map(|v| v.trim_matches('"').to_string())
    })
}

/// Asserts every key of `expected` is in `actual` with an equal value,
/// recursing into objects; a `null` expectation means "must be absent".
fn assert_subset(expected: &Value, actual: &Value, path: &str) {
    let (Value::Object(e), Value::Object(a)) = (expected, actual) else {
        assert_eq!(expected, actual, "at {path}");
        return;
    };
    for (k, v) in e {
        let p = format!("{path}.{k}");
        match (v, a.get(k)) {
            (Value::Null, None) => {}
            (Value::Null, Some(got)) => panic!("{p} should be absent, got {got}"),
            (_, None) => panic!("{p} is missing (expected {v}); object: {actual}"),
            (Value::Object(_), Some(got)) => assert_subset(v, got, &p),
            (_, Some(got)) => assert_eq!(v, got, "at {p}"),
        }
    }
}
