//! The package task (tasks/package.sh) against apt/dpkg: status, no-op
//! runs, refusing invalid input, and a real install and uninstall.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::{Shell, have, run_task, shells_with_system_tools};

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
    let _lock = crate::system_lock();
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
    let _lock = crate::system_lock();
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
    let _lock = crate::system_lock();
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
