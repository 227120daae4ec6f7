//! The service task (tasks/service.sh) against SysV init scripts: status
//! and no-op runs, refusing invalid input, and a full lifecycle on a
//! throwaway init script from tests/builtin_tasks/service/.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Map, Value, json};

use crate::{have, repo, run_task, sh_out, shells_with_system_tools};

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
    let _lock = crate::system_lock();
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
