//! The package task (tasks/package.sh) against dnf and rpm, as on a
//! RHEL-family host: Debian's own `dnf`, `rpm` and `createrepo_c`, a
//! package built here with `rpmbuild`, served from a local repository.
//! apt is kept out of the task's PATH, so the task picks dnf.

use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::{Shell, have, run_task};

const PKG: &str = "ferry-dummy";
const REPO_FILE: &str = "/etc/yum.repos.d/ferry-test.repo";

fn rpm_version(pkg: &str) -> Option<String> {
    let out = Command::new("rpm")
        .args(["-q", "--qf", "%{VERSION}-%{RELEASE}", pkg])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn run(argv: &[&str]) {
    let out = Command::new(argv[0]).args(&argv[1..]).output().unwrap();
    assert!(
        out.status.success(),
        "{argv:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Builds `ferry-dummy-<version>-1.noarch.rpm` into `repo`.
fn build_rpm(top: &Path, repo: &Path, version: &str) {
    let spec = top.join(format!("{PKG}-{version}.spec"));
    std::fs::write(
        &spec,
        format!(
            "Name: {PKG}\nVersion: {version}\nRelease: 1\nSummary: ferry test package\n\
             License: MIT\nBuildArch: noarch\n%description\nferry test package\n\
             %install\nmkdir -p %{{buildroot}}/usr/share/{PKG}\n\
             echo {version} > %{{buildroot}}/usr/share/{PKG}/version\n\
             %files\n/usr/share/{PKG}/version\n"
        ),
    )
    .unwrap();
    let topdir = format!("_topdir {}", top.join("build").display());
    run(&[
        "rpmbuild",
        "-bb",
        "--define",
        &topdir,
        spec.to_str().unwrap(),
    ]);
    let rpm = top
        .join("build/RPMS/noarch")
        .join(format!("{PKG}-{version}-1.noarch.rpm"));
    std::fs::copy(rpm, repo.join(format!("{PKG}-{version}-1.noarch.rpm"))).unwrap();
    run(&["createrepo_c", "-q", "--update", repo.to_str().unwrap()]);
}

fn remove_package() {
    let _ = Command::new("rpm").args(["-e", PKG]).output();
}

/// The repository definition dnf reads, with the test package absent;
/// both removed again on drop.
struct RepoFile;

impl RepoFile {
    fn new(repo: &Path) -> RepoFile {
        remove_package();
        std::fs::create_dir_all("/etc/yum.repos.d").unwrap();
        std::fs::write(
            REPO_FILE,
            format!(
                "[ferry-test]\nname=ferry test\nbaseurl=file://{}\ngpgcheck=0\nenabled=1\n\
                 metadata_expire=0\n",
                repo.display()
            ),
        )
        .unwrap();
        RepoFile
    }
}

impl Drop for RepoFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(REPO_FILE);
        remove_package();
    }
}

/// dash with a PATH of links to everything on this machine's PATH but
/// apt-get, as on a host whose package manager is dnf.
fn shell_without_apt() -> Shell {
    let dir = tempfile::tempdir().unwrap();
    let path = std::env::var("PATH").unwrap_or_default();
    for bin in path.split(':').filter(|d| !d.is_empty()) {
        let Ok(entries) = std::fs::read_dir(bin) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let link = dir.path().join(&name);
            if name != "apt-get" && !link.exists() {
                let _ = std::os::unix::fs::symlink(e.path(), link);
            }
        }
    }
    Shell {
        name: "dash (no apt)",
        argv: vec!["dash".into()],
        path: Some(dir.path().display().to_string()),
        _dir: Some(dir),
    }
}

#[test]
fn package_lifecycle_with_dnf() {
    if !(have("dnf") && have("rpmbuild") && have("createrepo_c")) {
        eprintln!("NOTICE: dnf, rpmbuild or createrepo_c missing; skipping the dnf package test");
        return;
    }
    let _lock = crate::system_lock();
    let top = tempfile::tempdir().unwrap();
    let repo = top.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    build_rpm(top.path(), &repo, "1.0");
    let _repo_file = RepoFile::new(&repo);
    let dash = shell_without_apt();
    let task = |params: serde_json::Value| run_task(&dash, "package.sh", params, &[]).ok();

    let v = task(json!({"action": "status", "name": PKG}));
    assert_eq!(
        v,
        json!({"status": "absent", "changed": false, "provider": "dnf"})
    );
    let v = task(json!({"action": "install", "name": PKG, "_noop": true}));
    assert_eq!(v["would"], "install", "{v}");
    assert_eq!(rpm_version(PKG), None, "a noop install installed");

    let v = task(json!({"action": "install", "name": PKG}));
    assert_eq!(
        v,
        json!({"status": "installed", "version": "1.0-1", "changed": true, "provider": "dnf"})
    );
    assert_eq!(rpm_version(PKG).as_deref(), Some("1.0-1"));
    let v = task(json!({"action": "install", "name": PKG, "version": "1.0"}));
    assert_eq!(v["changed"], false, "install is idempotent: {v}");

    // A newer version in the repository: upgrade takes it, once. dnf tells
    // repository metadata apart by its timestamp, in whole seconds: publish
    // it a second later, as any real repository update would be.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    build_rpm(top.path(), &repo, "2.0");
    let v = task(json!({"action": "upgrade", "name": PKG}));
    assert_eq!(
        v,
        json!({"status": "installed", "version": "2.0-1", "old_version": "1.0-1",
               "changed": true, "provider": "dnf"})
    );
    let v = task(json!({"action": "upgrade", "name": PKG}));
    assert_eq!(v["changed"], false, "{v}");

    let v = task(json!({"action": "uninstall", "name": PKG}));
    assert_eq!(
        v,
        json!({"status": "uninstalled", "old_version": "2.0-1", "changed": true, "provider": "dnf"})
    );
    assert_eq!(rpm_version(PKG), None);

    // A version the repository lacks fails with dnf's own words.
    let r = run_task(
        &dash,
        "package.sh",
        json!({"action": "install", "name": PKG, "version": "9.9"}),
        &[],
    );
    let err = r.error("ferry/package-install-failed");
    assert_eq!(err["details"]["provider"], "dnf", "{err}");
    assert_eq!(rpm_version(PKG), None);
}
