//! The resources task (tasks/resources.sh, behind get_resources) against
//! Puppet 7's own resource indirection on this machine: the same documents
//! for every user, group, package and service and for files of each kind
//! (password hashes aside, which ferry leaves out), under every shell; and
//! its refusals.

use std::process::Command;

use serde_json::{Value, json};

use crate::{have, repo, run_task, shells, shells_with_system_tools};

/// What Puppet says about `resources`, password hashes removed.
fn puppet(resources: &[String]) -> Value {
    let script = repo().join("tests/builtin_tasks/resources/puppet_resources.rb");
    let out = Command::new("ruby")
        .arg(script)
        .args(resources)
        .output()
        .expect("run ruby");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut v: Value = serde_json::from_slice(&out.stdout).expect("puppet's JSON");
    for r in v["resources"].as_array_mut().into_iter().flatten() {
        if let Some(p) = r["parameters"].as_object_mut() {
            p.remove("password");
        }
    }
    v
}

/// Resources by `Type[title]`, to compare and to show differences by name.
fn by_name(v: &Value) -> std::collections::BTreeMap<String, Value> {
    v["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let key = format!(
                "{}[{}]",
                r["type"].as_str().unwrap_or(""),
                r["title"].as_str().unwrap_or("")
            );
            (key, r.clone())
        })
        .collect()
}

fn same(ours: &Value, theirs: &Value, shell: &str) {
    let (a, b) = (by_name(ours), by_name(theirs));
    let only_ours: Vec<_> = a.keys().filter(|k| !b.contains_key(*k)).collect();
    let only_theirs: Vec<_> = b.keys().filter(|k| !a.contains_key(*k)).collect();
    assert!(
        only_ours.is_empty() && only_theirs.is_empty(),
        "{shell}: only ferry: {only_ours:?}; only Puppet: {only_theirs:?}"
    );
    for (k, r) in &a {
        assert_eq!(r, &b[k], "{shell}: {k} differs from Puppet's");
    }
}

#[test]
fn resources_are_described_as_puppet_describes_them() {
    if !have("ruby") || !have("puppet") {
        eprintln!("NOTICE: Puppet is not installed; skipping");
        return;
    }
    let _lock = crate::system_lock();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("f"), "hello\n").unwrap();
    std::os::unix::fs::symlink("f", d.join("l")).unwrap();
    std::fs::create_dir(d.join("sub")).unwrap();
    let mut wanted: Vec<String> = ["User", "Group", "Package", "Service"]
        .map(String::from)
        .to_vec();
    for f in ["f", "l", "sub", "gone"] {
        wanted.push(format!("File[{}]", d.join(f).display()));
    }
    wanted.extend(
        [
            "User[root]",
            "User[no-such-user-ferry]",
            "Group[no-such-group-ferry]",
            "Package[no-such-package-ferry]",
            "Service[no-such-service-ferry]",
        ]
        .map(String::from),
    );
    let theirs = puppet(&wanted);
    for shell in shells_with_system_tools() {
        let ours = run_task(&shell, "resources.sh", json!({ "resources": wanted }), &[]).ok();
        same(&ours, &theirs, shell.name);
    }
}

#[test]
fn resources_refused() {
    for shell in shells() {
        let r = run_task(&shell, "resources.sh", json!({"resources": ["File"]}), &[]);
        let e = r.error("ferry/resources-unsupported");
        assert!(
            e["msg"].as_str().unwrap().contains("Listing all file"),
            "{e}"
        );
        let r = run_task(
            &shell,
            "resources.sh",
            json!({"resources": ["Host[x]"]}),
            &[],
        );
        let e = r.error("ferry/resources-unsupported");
        assert_eq!(e["details"]["resource"], "Host[x]", "{e}");
        let r = run_task(&shell, "resources.sh", json!({"resources": "User"}), &[]);
        r.error("ferry/invalid-parameter");
    }
}
