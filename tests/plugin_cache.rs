//! Bolt's plugin cache (`_cache: {ttl}`, the project's `plugin-cache`):
//! a `task` plugin reference runs its task once across two runs of
//! `ferry inventory show`, and again once its entry is older than its ttl
//! (the entry's `mtime` is set back rather than waiting). The cache file
//! is Bolt's: `.plugin_cache.json` in the project, keyed by the id Bolt
//! computes (checked with Ruby's own Digest and inspect), readable by its
//! owner only. Bad `_cache` values are Bolt's errors, with their position.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn ferry(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(args)
        .current_dir(dir)
        .env_remove("BOLT_PROJECT")
        .env_remove("FERRY_INVENTORY")
        .env_remove("FERRY_MODULEPATH")
        .output()
        .expect("run ferry")
}

/// A project whose `count` task adds a line to `counter` and answers how
/// many lines it holds.
fn project(dir: &Path, project_yaml: &str, inventory: &str) {
    std::fs::write(dir.join("bolt-project.yaml"), project_yaml).unwrap();
    std::fs::create_dir_all(dir.join("tasks")).unwrap();
    std::fs::write(
        dir.join("tasks/count.json"),
        r#"{"parameters": {"counter": {"type": "String[1]"}}, "input_method": "environment"}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("tasks/count.sh"),
        "#!/bin/sh\necho run >> \"$PT_counter\"\nprintf '{\"value\": {\"n\": %s}}\\n' \"$(wc -l < \"$PT_counter\")\"\n",
    )
    .unwrap();
    std::fs::write(dir.join("inventory.yaml"), inventory).unwrap();
}

fn shown_n(dir: &Path) -> Value {
    let out = ferry(
        dir,
        &[
            "inventory",
            "show",
            "--detail",
            "--format",
            "json",
            "-t",
            "node1",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    doc["targets"][0]["vars"]["n"].clone()
}

/// Bolt's id of the inventory's first target's `n` reference, by Ruby.
fn bolt_id(dir: &Path) -> String {
    let out = Command::new("ruby")
        .args([
            "-ryaml",
            "-rdigest/bubblebabble",
            "-e",
            "r = YAML.safe_load(File.read(ARGV[0]))['targets'][0]['vars']['n']
             print Digest::SHA2.bubblebabble(r.reject { |k, _| k == '_cache' }.sort.to_s)[0..20]",
        ])
        .arg(dir.join("inventory.yaml"))
        .output()
        .expect("ruby (installed with puppet)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_task_reference_runs_once_until_its_ttl_passes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let counter = dir.join("counter");
    project(
        dir,
        "name: cachetest\n",
        &format!(
            "targets:\n  - name: node1\n    vars:\n      n:\n        _plugin: task\n        task: cachetest::count\n        parameters: {{counter: '{}', \"why#{{}}\": \"q\\\"x\"}}\n        _cache: {{ttl: 3600}}\n",
            counter.display()
        ),
    );
    // The task takes no such parameter: a first run fails, not cached.
    let out = ferry(dir, &["inventory", "show", "-t", "node1"]);
    assert!(!out.status.success());
    assert!(!dir.join(".plugin_cache.json").exists());
    let inventory = std::fs::read_to_string(dir.join("inventory.yaml")).unwrap();
    std::fs::write(
        dir.join("inventory.yaml"),
        inventory.replace(", \"why#{}\": \"q\\\"x\"", ""),
    )
    .unwrap();

    assert_eq!(shown_n(dir), serde_json::json!({"n": 1}));
    assert_eq!(shown_n(dir), serde_json::json!({"n": 1}), "cached");
    let file = dir.join(".plugin_cache.json");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let mut cache: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let id = bolt_id(dir);
    let entry = cache[&id].clone();
    assert_eq!(entry["result"], serde_json::json!({"n": 1}), "{cache}");
    assert_eq!(entry["ttl"], 3600);
    assert!(
        entry["mtime"].as_str().is_some_and(|t| t.len() == 25),
        "{entry}"
    );

    // An hour later (as far as the entry says), the task runs again.
    cache[&id]["mtime"] = Value::from("2000-01-01 00:00:00 +0000");
    std::fs::write(&file, cache.to_string()).unwrap();
    assert_eq!(shown_n(dir), serde_json::json!({"n": 2}));
    assert_eq!(shown_n(dir), serde_json::json!({"n": 2}), "cached again");
    assert_eq!(
        std::fs::read_to_string(&counter).unwrap().lines().count(),
        2
    );

    // Bolt's --clear-cache: the file goes, the task runs again (and its
    // value is cached anew).
    let out = ferry(dir, &["inventory", "show", "--clear-cache", "-t", "node1"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(shown_n(dir), serde_json::json!({"n": 3}));
}

#[test]
fn the_projects_plugin_cache_is_every_references_default() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let counter = dir.join("counter");
    project(
        dir,
        "name: cachetest\nplugin-cache:\n  ttl: 60\n",
        &format!(
            "targets:\n  - name: node1\n    vars:\n      n:\n        _plugin: task\n        task: cachetest::count\n        parameters: {{counter: '{}'}}\n",
            counter.display()
        ),
    );
    assert_eq!(shown_n(dir), serde_json::json!({"n": 1}));
    assert_eq!(shown_n(dir), serde_json::json!({"n": 1}));
    // `ttl: 0` on the reference: never read from the cache.
    let inventory = std::fs::read_to_string(dir.join("inventory.yaml")).unwrap();
    std::fs::write(
        dir.join("inventory.yaml"),
        format!("{inventory}        _cache: {{ttl: 0}}\n"),
    )
    .unwrap();
    assert_eq!(shown_n(dir), serde_json::json!({"n": 2}));
    assert_eq!(shown_n(dir), serde_json::json!({"n": 3}));
}

#[test]
fn bad_cache_settings_are_bolts_errors_with_their_position() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    for (cache, message) in [
        ("{}", "inventory.yaml:7:17: _cache must set 'ttl' key."),
        (
            "{ttl: -1}",
            "inventory.yaml:7:17: 'ttl' key under '_cache' must be a minimum of 0.",
        ),
        (
            "5",
            "inventory.yaml:7:17: _cache must be a Hash, received 5",
        ),
    ] {
        project(
            dir,
            "name: cachetest\n",
            &format!(
                "targets:\n  - name: node1\n    vars:\n      n:\n        _plugin: task\n        task: cachetest::count\n        _cache: {cache}\n"
            ),
        );
        let out = ferry(dir, &["inventory", "show", "-t", "node1"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains(message), "{cache}: {stderr}");
    }
    std::fs::write(
        dir.join("bolt-project.yaml"),
        "name: cachetest\nplugin-cache: {}\n",
    )
    .unwrap();
    let out = ferry(dir, &["inventory", "show", "-t", "node1"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Value at 'plugin-cache' is missing required keys ttl"),
        "{stderr}"
    );
}
