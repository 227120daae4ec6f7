//! Runs ferry's built-in tasks (the `ferry` module: tasks/facts.sh,
//! tasks/package.sh, tasks/service.sh) for real on this machine, the way the
//! task runner will: parameters as one JSON object on stdin and as `PT_*`
//! environment variables, one JSON object expected on stdout.
//!
//! Every task runs under dash and, when busybox is installed, under
//! `busybox sh` with a PATH holding only busybox applets (an Alpine-like
//! userland). Fixture trees for the facts task live in tests/builtin_tasks/.
//!
//! The package install/uninstall test needs apt and a reachable package
//! registry; it prints a notice and skips itself otherwise. The service
//! lifecycle test needs root and SysV init scripts (no systemd as PID 1).

use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

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

// ------------------------------------------------------------------ facts

#[test]
fn facts_match_this_machine_under_every_shell() {
    let id = os_release("ID").expect("/etc/os-release has an ID");
    let os_name = {
        let mut c = id.chars();
        c.next()
            .unwrap()
            .to_uppercase()
            .chain(c)
            .collect::<String>()
    };
    let version_id = os_release("VERSION_ID").expect("VERSION_ID");
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let mem_total_kb: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next())
        .unwrap()
        .parse()
        .unwrap();
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap();
    let cpus = cpuinfo
        .lines()
        .filter(|l| l.split(':').next().unwrap().trim() == "processor")
        .count() as u64;
    let mut sys_ifaces: Vec<String> = std::fs::read_dir("/sys/class/net")
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    sys_ifaces.sort();
    let node = sh_out("uname -n");

    let mut networks = Vec::new();
    for shell in shells() {
        let run = run_task(&shell, "facts.sh", json!({}), &[]);
        let f = run.ok();
        let who = shell.name;
        assert!(run.elapsed < Duration::from_secs(10), "{who}: slow facts");
        assert_eq!(f["os"]["name"], os_name.as_str(), "{who}");
        if id == "debian" {
            assert_eq!(f["os"]["family"], "Debian", "{who}");
            let dv = std::fs::read_to_string("/etc/debian_version").unwrap();
            assert_eq!(f["os"]["release"]["full"], dv.trim(), "{who}");
        }
        assert_eq!(f["os"]["release"]["major"], version_id.as_str(), "{who}");
        assert_eq!(f["kernel"], sh_out("uname -s").as_str(), "{who}");
        assert_eq!(f["kernelrelease"], sh_out("uname -r").as_str(), "{who}");
        assert_eq!(f["os"]["hardware"], sh_out("uname -m").as_str(), "{who}");
        assert_eq!(f["hardwaremodel"], f["os"]["hardware"], "{who}");
        assert_eq!(f["architecture"], f["os"]["architecture"], "{who}");
        if sh_out("uname -m") == "x86_64" && id == "debian" {
            assert_eq!(f["architecture"], "amd64", "{who}");
        }
        let host = node.split('.').next().unwrap();
        assert_eq!(f["hostname"], host, "{who}");
        assert_eq!(f["networking"]["hostname"], host, "{who}");
        assert!(
            f["fqdn"].as_str().unwrap().starts_with(host),
            "{who}: {}",
            f["fqdn"]
        );
        let lo = &f["networking"]["interfaces"]["lo"];
        assert_eq!(lo["ip"], "127.0.0.1", "{who}");
        assert_eq!(lo["netmask"], "255.0.0.0", "{who}");
        assert_eq!(lo["network"], "127.0.0.0", "{who}");
        assert_eq!(
            lo["bindings"][0],
            json!({"address": "127.0.0.1", "netmask": "255.0.0.0", "network": "127.0.0.0"}),
            "{who}"
        );
        let mut ifaces: Vec<String> = f["networking"]["interfaces"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        ifaces.sort();
        assert_eq!(ifaces, sys_ifaces, "{who}");
        let system = &f["memory"]["system"];
        assert_eq!(system["total_bytes"], mem_total_kb * 1024, "{who}");
        let (total, avail, used) = (
            system["total_bytes"].as_u64().unwrap(),
            system["available_bytes"].as_u64().unwrap(),
            system["used_bytes"].as_u64().unwrap(),
        );
        assert_eq!(total, avail + used, "{who}");
        assert!(system["capacity"].as_str().unwrap().ends_with('%'), "{who}");
        assert_eq!(f["processors"]["count"], cpus, "{who}");
        assert_eq!(
            f["processors"]["models"].as_array().map(|m| m.len() as u64),
            Some(cpus),
            "{who}"
        );
        let uid: u64 = sh_out("id -u").parse().unwrap();
        assert_eq!(f["identity"]["uid"], uid, "{who}");
        assert_eq!(f["identity"]["privileged"], uid == 0, "{who}");
        networks.push((who, f["networking"].clone()));
    }
    // Every shell and userland must see the same network.
    for (who, net) in &networks[1..] {
        assert_eq!(net, &networks[0].1, "{who} vs {}", networks[0].0);
    }
}

/// Without `ip` (busybox userland minus its `ip` applet) the task falls back
/// to ifconfig; the addresses must come out the same.
#[test]
fn facts_ifconfig_fallback_matches_ip() {
    if !have("busybox") {
        eprintln!("NOTICE: busybox is not installed; skipping the ifconfig fallback test");
        return;
    }
    let dash = &shells()[0];
    let with_ip = run_task(dash, "facts.sh", json!({}), &[]).ok();
    let no_ip = busybox_shell(&["ip"], false);
    let without_ip = run_task(&no_ip, "facts.sh", json!({}), &[]).ok();
    assert_eq!(without_ip["networking"], with_ip["networking"]);
}

#[test]
fn facts_fixtures_map_os_release_meminfo_cpuinfo() {
    let dir = repo().join("tests/builtin_tasks/facts");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("expected.json").exists())
        .collect();
    cases.sort();
    assert!(cases.len() >= 5, "fixtures missing in {}", dir.display());
    for shell in shells() {
        for case in &cases {
            let expected: Value =
                serde_json::from_str(&std::fs::read_to_string(case.join("expected.json")).unwrap())
                    .unwrap();
            let root = case.display().to_string();
            let got = run_task(
                &shell,
                "facts.sh",
                json!({}),
                &[("FERRY_FACTS_ROOT", &root)],
            )
            .ok();
            let label = format!(
                "{} {}",
                shell.name,
                case.file_name().unwrap().to_string_lossy()
            );
            assert_subset(&expected, &got, &label);
        }
    }
}

#[test]
fn facts_missing_sources_are_omitted_not_fatal() {
    let empty = tempfile::tempdir().unwrap();
    for shell in shells() {
        let root = empty.path().display().to_string();
        let f = run_task(
            &shell,
            "facts.sh",
            json!({}),
            &[("FERRY_FACTS_ROOT", &root)],
        )
        .ok();
        let who = shell.name;
        assert!(f.get("memory").is_none(), "{who}: {f}");
        assert!(f["processors"].get("count").is_none(), "{who}: {f}");
        for absent in ["name", "family", "release", "distro"] {
            assert!(f["os"].get(absent).is_none(), "{who}: os.{absent}: {f}");
        }
        // Facts from commands are still there.
        assert_eq!(f["kernel"], sh_out("uname -s").as_str());
    }
}

// ---------------------------------------------------------- JSON escaping

const HELPERS_BEGIN: &str = "# --- ferry json helpers: begin";
const HELPERS_END: &str = "# --- ferry json helpers: end ---\n";

fn helpers_of(file: &str) -> String {
    let text = std::fs::read_to_string(task_path(file)).unwrap();
    let start = text.find(HELPERS_BEGIN).expect("helpers begin marker");
    let end = text.find(HELPERS_END).expect("helpers end marker") + HELPERS_END.len();
    text[start..end].to_string()
}

#[test]
fn json_helpers_are_identical_in_every_task() {
    let facts = helpers_of("facts.sh");
    assert_eq!(
        helpers_of("package.sh"),
        facts,
        "package.sh helpers drifted"
    );
    assert_eq!(
        helpers_of("service.sh"),
        facts,
        "service.sh helpers drifted"
    );
}

/// Runs `json_str "$1"` from the tasks' helper block under `shell`.
fn json_str(shell: &Shell, arg: &OsStr) -> String {
    let script = format!("{}\njson_str \"$1\"", helpers_of("facts.sh"));
    let mut cmd = Command::new(&shell.argv[0]);
    cmd.args(&shell.argv[1..])
        .arg("-c")
        .arg(script)
        .arg("sh")
        .arg(arg);
    if let Some(path) = &shell.path {
        cmd.env("PATH", path);
    }
    // The escaping must not depend on the caller's locale.
    cmd.env("LC_ALL", "C.UTF-8");
    let run = run_with_stdin(cmd, "");
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.stdout
}

#[test]
fn json_escaping_handles_nasty_strings() {
    let long: String = "ab\"\\\u{1}é".repeat(500);
    let valid: Vec<String> = vec![
        String::new(),
        "plain".into(),
        "with space (parens) @ 1.2".into(),
        "\"quoted\"".into(),
        "back\\slash \\\\ \\n not a newline".into(),
        "line1\nline2\n\n".into(),
        "\ttab\rcr".into(),
        "\u{1}\u{2}\u{8}\u{b}\u{c}\u{1b}[31m\u{1f}\u{7f}".into(),
        "UTF-8: héllo wörld ✓ 日本語 😀 \u{10ffff}".into(),
        "'single' `back` $HOME $(id) ; | & < > * ? [ ] { } ~ # !".into(),
        "%s %d %% \\u0041".into(),
        long,
    ];
    let exact: &[(&str, &str)] = &[
        ("a\"b", r#""a\"b""#),
        ("a\\b", r#""a\\b""#),
        ("\n\t\r", r#""\n\t\r""#),
        ("\u{1}\u{1f}\u{7f}", r#""\u0001\u001f\u007f""#),
        ("é✓😀", "\"é✓😀\""),
    ];
    // Invalid UTF-8: every byte of a broken sequence becomes U+FFFD.
    let invalid: &[(&[u8], &str)] = &[
        (b"\xff\xfe", "\u{fffd}\u{fffd}"),
        (b"a\xc3", "a\u{fffd}"),
        (b"\xe2\x9c x", "\u{fffd}\u{fffd} x"),
        (b"\xc0\xaf", "\u{fffd}\u{fffd}"),
        (b"\xe0\x80\x80", "\u{fffd}\u{fffd}\u{fffd}"),
        (b"\xed\xa0\x80", "\u{fffd}\u{fffd}\u{fffd}"),
        (b"\xf4\x90\x80\x80", "\u{fffd}\u{fffd}\u{fffd}\u{fffd}"),
        (b"ok \xf0\x9f\x98\x80 \x80", "ok \u{1f600} \u{fffd}"),
    ];
    for shell in shells() {
        for s in &valid {
            let out = json_str(&shell, OsStr::new(s));
            let back: String = serde_json::from_str(&out)
                .unwrap_or_else(|e| panic!("{}: {out:?} is not a JSON string: {e}", shell.name));
            assert_eq!(&back, s, "{}", shell.name);
            assert!(
                !out.bytes().any(|b| b < 0x20),
                "raw control byte in {out:?}"
            );
        }
        for (s, want) in exact {
            assert_eq!(json_str(&shell, OsStr::new(s)), *want, "{}", shell.name);
        }
        for (bytes, want) in invalid {
            let out = json_str(&shell, OsStr::from_bytes(bytes));
            let back: String = serde_json::from_str(&out)
                .unwrap_or_else(|e| panic!("{}: {out:?} ({bytes:?}) is not JSON: {e}", shell.name));
            assert_eq!(&back, want, "{}: {bytes:?}", shell.name);
        }
    }
}

// ---------------------------------------------------------------- package

/// apt holds a lock: package tests run one at a time.
static APT: Mutex<()> = Mutex::new(());

fn dpkg_version(pkg: &str) -> Option<String> {
    let out = Command::new("dpkg-query")
        .args(["-W", "-f=${db:Status-Abbrev}|${Version}", pkg])
        .output()
        .ok()?;
    let s = String::from_utf8(out.stdout).ok()?;
    s.starts_with("ii")
        .then(|| s.split('|').nth(1).unwrap().to_string())
}

fn apt_machine() -> bool {
    if !have("apt-get") || !have("dpkg-query") {
        eprintln!("NOTICE: no apt on this machine; skipping package task tests");
        return false;
    }
    true
}

#[test]
fn package_status_installed_and_absent() {
    if !apt_machine() {
        return;
    }
    let _lock = APT.lock().unwrap_or_else(|e| e.into_inner());
    let dpkg = dpkg_version("dpkg").expect("dpkg is installed");
    for shell in shells_with_system_tools() {
        let r = run_task(
            &shell,
            "package.sh",
            json!({"action": "status", "name": "dpkg"}),
            &[],
        );
        assert_eq!(
            r.ok(),
            json!({"status": "installed", "version": dpkg, "changed": false, "provider": "apt"}),
            "{}",
            shell.name
        );
        assert!(r.elapsed < Duration::from_secs(5));
        let r = run_task(
            &shell,
            "package.sh",
            json!({"action": "status", "name": "ferry-no-such-package"}),
            &[],
        );
        assert_eq!(
            r.ok(),
            json!({"status": "absent", "changed": false, "provider": "apt"}),
            "{}",
            shell.name
        );
        // Uninstalling something absent is a no-op.
        let r = run_task(
            &shell,
            "package.sh",
            json!({"action": "uninstall", "name": "ferry-no-such-package"}),
            &[],
        );
        assert_eq!(r.ok()["changed"], false);
    }
}

#[test]
fn package_noop_install_reports_without_installing() {
    if !apt_machine() {
        return;
    }
    let _lock = APT.lock().unwrap_or_else(|e| e.into_inner());
    let pkg = "cowsay";
    if dpkg_version(pkg).is_some() {
        eprintln!("NOTICE: {pkg} is installed already; skipping the noop install test");
        return;
    }
    let r = run_task(
        &shell_dash(),
        "package.sh",
        json!({"action": "install", "name": pkg, "_noop": true}),
        &[],
    );
    let v = r.ok();
    assert_eq!(v["changed"], true, "{v}");
    assert_eq!(v["noop"], true, "{v}");
    assert_eq!(v["would"], "install", "{v}");
    assert_eq!(v["status"], "absent", "{v}");
    assert_eq!(dpkg_version(pkg), None, "noop installed {pkg}");
    // noop on something already in the wanted state changes nothing.
    let v = run_task(
        &shell_dash(),
        "package.sh",
        json!({"action": "install", "name": "dpkg", "_noop": true}),
        &[],
    )
    .ok();
    assert_eq!(v["changed"], false, "{v}");
    // A noop uninstall of an installed package leaves it installed.
    let v = run_task(
        &shell_dash(),
        "package.sh",
        json!({"action": "uninstall", "name": "dpkg", "_noop": true}),
        &[],
    )
    .ok();
    assert_eq!(v["changed"], true, "{v}");
    assert_eq!(v["would"], "uninstall", "{v}");
    assert!(dpkg_version("dpkg").is_some());
}

fn shell_dash() -> Shell {
    Shell {
        name: "dash",
        argv: vec!["dash".into()],
        path: None,
        _dir: None,
    }
}

#[test]
fn package_refuses_invalid_names_and_versions() {
    let marker = std::env::temp_dir().join(format!("ferry-pwned-{}", std::process::id()));
    let inject = format!("x;touch {}", marker.display());
    let bad_names = [
        "x; rm -rf /",
        "-rf",
        "--purge",
        "$(id)",
        "a b",
        "foo`id`",
        "pkg/../../etc",
        "",
        inject.as_str(),
    ];
    for shell in shells_with_system_tools() {
        for name in bad_names {
            for action in ["install", "status"] {
                let r = run_task(
                    &shell,
                    "package.sh",
                    json!({"action": action, "name": name}),
                    &[],
                );
                let err = r.error("ferry/invalid-parameter");
                assert_eq!(err["details"]["parameter"], "name");
                if !name.is_empty() {
                    assert_eq!(err["details"]["value"], name);
                }
            }
        }
        let r = run_task(
            &shell,
            "package.sh",
            json!({"action": "install", "name": "sl", "version": "1.0;reboot"}),
            &[],
        );
        assert_eq!(
            r.error("ferry/invalid-parameter")["details"]["parameter"],
            "version"
        );
        let r = run_task(
            &shell,
            "package.sh",
            json!({"action": "purge", "name": "sl"}),
            &[],
        );
        assert_eq!(
            r.error("ferry/invalid-parameter")["details"]["parameter"],
            "action"
        );
    }
    assert!(!marker.exists(), "a package name was executed");
}

/// Installs and removes a tiny real package. Needs the Debian registry:
/// skipped (with a notice) when apt cannot download from it.
#[test]
fn package_install_and_uninstall_for_real() {
    if !apt_machine() {
        return;
    }
    let _lock = APT.lock().unwrap_or_else(|e| e.into_inner());
    let pkg = "sl";
    let dash = shell_dash();
    if dpkg_version(pkg).is_some() {
        let v = run_task(
            &dash,
            "package.sh",
            json!({"action": "uninstall", "name": pkg}),
            &[],
        )
        .ok();
        assert_eq!(v["status"], "uninstalled", "{v}");
    }
    let probe = Command::new("timeout")
        .args([
            "60",
            "apt-get",
            "install",
            "-y",
            "-q",
            "--download-only",
            pkg,
        ])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .output()
        .unwrap();
    if !probe.status.success() {
        eprintln!(
            "NOTICE: apt-get cannot fetch {pkg} from the registry; skipping the real install test:\n{}",
            String::from_utf8_lossy(&probe.stdout)
        );
        return;
    }
    let start = Instant::now();
    let v = run_task(
        &dash,
        "package.sh",
        json!({"action": "install", "name": pkg}),
        &[],
    )
    .ok();
    let installed = dpkg_version(pkg).expect("sl installed");
    assert_eq!(
        v,
        json!({"status": "installed", "version": installed, "changed": true, "provider": "apt"})
    );
    // Idempotent.
    let v = run_task(
        &dash,
        "package.sh",
        json!({"action": "install", "name": pkg}),
        &[],
    )
    .ok();
    assert_eq!(v["changed"], false, "{v}");
    let v = run_task(
        &dash,
        "package.sh",
        json!({"action": "install", "name": pkg, "version": installed}),
        &[],
    )
    .ok();
    assert_eq!(v["changed"], false, "{v}");
    let v = run_task(
        &dash,
        "package.sh",
        json!({"action": "uninstall", "name": pkg}),
        &[],
    )
    .ok();
    assert_eq!(
        v,
        json!({"status": "uninstalled", "old_version": installed, "changed": true, "provider": "apt"})
    );
    assert_eq!(dpkg_version(pkg), None);
    // A version the registry does not have fails cleanly.
    let r = run_task(
        &dash,
        "package.sh",
        json!({"action": "install", "name": pkg, "version": "999.0-ferry"}),
        &[],
    );
    let err = r.error("ferry/package-install-failed");
    assert_ne!(err["details"]["exit_code"], 0);
    assert!(
        err["details"]["output"]
            .as_str()
            .unwrap()
            .contains("999.0-ferry")
    );
    assert_eq!(dpkg_version(pkg), None);
    eprintln!("real install/uninstall took {:?}", start.elapsed());
}

// ---------------------------------------------------------------- service

fn sysv_machine() -> bool {
    if Path::new("/run/systemd/system").exists() {
        eprintln!("NOTICE: systemd is running; skipping SysV service tests");
        return false;
    }
    Path::new("/etc/init.d").is_dir()
}

fn sysv_enabled(name: &str) -> bool {
    (2..=5).any(|lvl| {
        std::fs::read_dir(format!("/etc/rc{lvl}.d"))
            .map(|d| {
                d.flatten().any(|e| {
                    let f = e.file_name().to_string_lossy().into_owned();
                    f.starts_with('S') && f.get(3..) == Some(name)
                })
            })
            .unwrap_or(false)
    })
}

fn init_status(name: &str) -> &'static str {
    let code = Command::new(format!("/etc/init.d/{name}"))
        .arg("status")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap()
        .code();
    match code {
        Some(0) => "running",
        Some(1 | 2) => "failed",
        Some(3) => "stopped",
        _ => "unknown",
    }
}

#[test]
fn service_status_of_ssh_and_noop_start() {
    if !sysv_machine() || !Path::new("/etc/init.d/ssh").exists() {
        eprintln!("NOTICE: no SysV /etc/init.d/ssh; skipping");
        return;
    }
    let expected_status = init_status("ssh");
    let expected_enabled = if sysv_enabled("ssh") { "true" } else { "false" };
    for shell in shells_with_system_tools() {
        let v = run_task(
            &shell,
            "service.sh",
            json!({"action": "status", "name": "ssh"}),
            &[],
        )
        .ok();
        assert_eq!(
            v,
            json!({"status": expected_status, "enabled": expected_enabled,
                   "changed": false, "manager": "sysv"}),
            "{}",
            shell.name
        );
        if expected_status == "stopped" {
            let v = run_task(
                &shell,
                "service.sh",
                json!({"action": "start", "name": "ssh", "_noop": true}),
                &[],
            )
            .ok();
            assert_eq!(v["changed"], true, "{v}");
            assert_eq!(v["noop"], true, "{v}");
            assert_eq!(v["would"], "start", "{v}");
            assert_eq!(v["status"], "stopped", "{v}");
            assert_eq!(init_status("ssh"), "stopped", "noop start started ssh");
        }
    }
}

#[test]
fn service_refuses_invalid_names_and_unknown_services() {
    for shell in shells_with_system_tools() {
        for name in ["x; rm -rf /", "../../bin/sh", "-h", "a b", "$(id)", ""] {
            let r = run_task(
                &shell,
                "service.sh",
                json!({"action": "status", "name": name}),
                &[],
            );
            let err = r.error("ferry/invalid-parameter");
            if !name.is_empty() {
                assert_eq!(err["details"]["value"], name);
            }
        }
        let r = run_task(
            &shell,
            "service.sh",
            json!({"action": "reload", "name": "ssh"}),
            &[],
        );
        assert_eq!(
            r.error("ferry/invalid-parameter")["details"]["parameter"],
            "action"
        );
        if sysv_machine() {
            let r = run_task(
                &shell,
                "service.sh",
                json!({"action": "status", "name": "ferry-no-such-service"}),
                &[],
            );
            r.error("ferry/service-not-found");
        }
    }
}

/// Removes the test init script, its rc links and its daemon.
struct InitScript(String);

impl Drop for InitScript {
    fn drop(&mut self) {
        let script = format!("/etc/init.d/{}", self.0);
        let _ = Command::new(&script).arg("stop").status();
        if have("update-rc.d") {
            let _ = Command::new("update-rc.d")
                .args(["-f", &self.0, "remove"])
                .output();
        }
        let _ = std::fs::remove_file(script);
    }
}

/// A full SysV lifecycle on a throwaway init script that runs `sleep`.
#[test]
fn service_sysv_lifecycle() {
    let root = sh_out("id -u") == "0";
    if !root || !sysv_machine() || !have("update-rc.d") {
        eprintln!("NOTICE: needs root, SysV init and update-rc.d; skipping");
        return;
    }
    let name = format!("ferry-test-{}", std::process::id());
    let template =
        std::fs::read_to_string(repo().join("tests/builtin_tasks/service/initscript.sh")).unwrap();
    let path = format!("/etc/init.d/{name}");
    std::fs::write(&path, template.replace("@NAME@", &name)).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let _guard = InitScript(name.clone());
    let pid = || std::fs::read_to_string(format!("/run/{name}.pid")).ok();

    for shell in shells_with_system_tools() {
        let svc = |action: &str, noop: bool| {
            let mut params = Map::new();
            params.insert("action".into(), json!(action));
            params.insert("name".into(), json!(name));
            if noop {
                params.insert("_noop".into(), json!(true));
            }
            let v = run_task(&shell, "service.sh", Value::Object(params), &[]).ok();
            (
                v["status"].as_str().unwrap().to_string(),
                v["enabled"].as_str().unwrap().to_string(),
                v["changed"].as_bool().unwrap(),
            )
        };
        let s = |a: &str, b: &str, c: bool| (a.to_string(), b.to_string(), c);
        let who = shell.name;
        assert_eq!(svc("status", false), s("stopped", "false", false), "{who}");
        assert_eq!(svc("start", true), s("stopped", "false", true), "{who}");
        assert_eq!(init_status(&name), "stopped", "{who}: noop start acted");
        assert_eq!(svc("start", false), s("running", "false", true), "{who}");
        assert_eq!(init_status(&name), "running", "{who}");
        assert_eq!(svc("start", false), s("running", "false", false), "{who}");
        let before = pid();
        assert_eq!(svc("restart", false), s("running", "false", true), "{who}");
        assert_ne!(pid(), before, "{who}: restart did not restart");
        assert_eq!(svc("enable", true), s("running", "false", true), "{who}");
        assert!(!sysv_enabled(&name), "{who}: noop enable acted");
        assert_eq!(svc("enable", false), s("running", "true", true), "{who}");
        assert!(sysv_enabled(&name), "{who}");
        assert_eq!(svc("enable", false), s("running", "true", false), "{who}");
        assert_eq!(svc("disable", false), s("running", "false", true), "{who}");
        assert!(!sysv_enabled(&name), "{who}");
        assert_eq!(svc("stop", true), s("running", "false", true), "{who}");
        assert_eq!(init_status(&name), "running", "{who}: noop stop acted");
        assert_eq!(svc("stop", false), s("stopped", "false", true), "{who}");
        assert_eq!(init_status(&name), "stopped", "{who}");
        assert_eq!(svc("stop", false), s("stopped", "false", false), "{who}");
    }
}
