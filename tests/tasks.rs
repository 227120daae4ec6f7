//! Running Bolt-format tasks on real sshd targets: every input method,
//! parameter type errors, multi-file tasks with `_installdir`, the file
//! cache (no bytes on a second run; a tampered cached file is detected,
//! sent again and never run), sensitive values kept out of every output,
//! log and leftover file, noop, run-as, and names that try to leave their
//! module. The test modules are in tests/tasks/modules.

mod common;

use std::path::{Path, PathBuf};

use common::ferry::{Run, Scratch, key_line, one_target};
use common::sshd::{self, KeyType, NOPW_USER, Sshd, client_keys};

fn modulepath() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/tasks/modules")
        .display()
        .to_string()
}

/// A scratch dir with an inventory of the shared sshd whose task cache is
/// private to the test.
fn setup(user: &str, extra: &str) -> (Scratch, PathBuf, PathBuf) {
    let s = Scratch::new();
    let cache = s.path().join("cache");
    let cache_line = if user == "root" {
        format!("        cache-dir: {}\n", cache.display())
    } else {
        String::new()
    };
    let extra = format!(
        "{}{cache_line}{extra}",
        key_line(&client_keys().path(KeyType::Ed25519))
    );
    let inv = s.inventory(&one_target(sshd::shared(), "t", user, &extra));
    (s, inv, cache)
}

fn task(s: &Scratch, inv: &Path, name: &str, params: &[&str], more: &[&str]) -> Run {
    let mp = modulepath();
    let mut args = vec!["task", "run", name];
    args.extend(params);
    if !more.contains(&"-t") {
        args.extend(["-t", "t"]);
    }
    args.extend([
        "-i",
        inv.to_str().unwrap(),
        "--modulepath",
        &mp,
        "--format",
        "json",
        "--log-level",
        "info",
    ]);
    args.extend(more);
    s.ferry(&args)
}

fn sent_bytes(run: &Run) -> u64 {
    run.stderr
        .lines()
        .find_map(|l| l.split("sent ").nth(1)?.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no byte count in the log:\n{}", run.stderr))
}

#[test]
fn input_methods_environment_stdin_and_both() {
    let (s, inv, _) = setup("root", "");
    let run = task(
        &s,
        &inv,
        "demo::env_only",
        &["message=hello world", "count=3"],
        &[],
    );
    let v = &run.only()["value"];
    assert_eq!(v["message"], "hello world", "{run:?}");
    assert_eq!(v["count"], "3");
    assert_eq!(
        v["stdin_bytes"], 0,
        "environment-only tasks get nothing on stdin"
    );

    let run = task(
        &s,
        &inv,
        "demo::stdin_only",
        &["message=it's \"quoted\" $HOME"],
        &[],
    );
    let v = &run.only()["value"];
    assert_eq!(v["stdin"]["message"], "it's \"quoted\" $HOME", "{run:?}");
    assert_eq!(
        v["stdin"]["list"],
        serde_json::json!([1, 2]),
        "defaults are applied"
    );
    assert_eq!(v["stdin"]["_task"], "demo::stdin_only");
    assert_eq!(v["env_message"], "unset");

    let run = task(
        &s,
        &inv,
        "demo::both",
        &["message=$(touch /tmp/ferry-pwned)", "list=[4,5]"],
        &[],
    );
    let v = &run.only()["value"];
    assert_eq!(
        v["stdin"]["message"], "$(touch /tmp/ferry-pwned)",
        "{run:?}"
    );
    assert_eq!(v["env_message"], "$(touch /tmp/ferry-pwned)");
    assert_eq!(v["env_list"], serde_json::json!([4, 5]));
    assert!(
        !Path::new("/tmp/ferry-pwned").exists(),
        "a parameter value was run by a shell"
    );

    // `demo` alone is demo::init.
    let run = task(&s, &inv, "demo", &[], &[]);
    assert_eq!(run.only()["value"]["init"], true, "{run:?}");
}

#[test]
fn parameters_are_checked_before_anything_connects() {
    let s = Scratch::new();
    // An unreachable target: a type error must be reported without trying it.
    let inv = s.inventory("targets: ['127.0.0.1:1']\n");
    let run = task(
        &s,
        &inv,
        "demo::env_only",
        &["count=many", "bogus=1"],
        &["-t", "all"],
    );
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("parameter 'count' expects"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("parameter 'message' expects a String"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("has no parameter named 'bogus'"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("127.0.0.1"),
        "nothing connected: {}",
        run.stderr
    );
    let run = task(
        &s,
        &inv,
        "demo::env_only",
        &["--params", "{\"message\": 5"],
        &[],
    );
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("--params: line 1"), "{}", run.stderr);
}

#[test]
fn names_cannot_leave_their_module() {
    let s = Scratch::new();
    let inv = s.inventory("targets: [localhost]\n");
    for name in [
        "demo::../../etc/passwd",
        "demo::tasks/both",
        "Demo::both",
        "demo::both.sh",
        "../demo",
    ] {
        let run = task(&s, &inv, name, &[], &["-t", "localhost"]);
        assert_eq!(run.code, 1, "{name}: {run:?}");
        assert!(
            run.stderr.contains("invalid task name"),
            "{name}: {}",
            run.stderr
        );
    }
}

#[test]
fn multi_file_tasks_get_an_install_dir_that_is_removed() {
    let (s, inv, _) = setup("root", "");
    let run = task(&s, &inv, "demo::multi", &["name=ferry"], &[]);
    let v = &run.only()["value"];
    assert_eq!(v["greeting"], "hello, ferry", "{run:?}");
    assert_eq!(v["extra"], "extra file");
    assert_eq!(
        v["blob"], " b i n 0 a r y 377 n ",
        "binary files arrive intact"
    );
    let dir = v["installdir"].as_str().unwrap().to_string();
    assert!(!Path::new(&dir).exists(), "{dir} should be removed");
    let run = task(&s, &inv, "demo::multi", &["name=kept"], &["--no-cleanup"]);
    let dir = run.only()["value"]["installdir"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        Path::new(&dir).join("demo/files/lib/helper.sh").exists(),
        "--no-cleanup keeps {dir}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_cache_sends_nothing_twice_and_never_runs_tampered_files() {
    let (s, inv, cache) = setup("root", "");
    let first = task(&s, &inv, "demo::marker", &[], &["--no-cleanup"]);
    assert_eq!(first.only()["value"]["ran"], "original", "{first:?}");
    assert!(sent_bytes(&first) > 0);
    let second = task(&s, &inv, "demo::marker", &[], &[]);
    assert_eq!(second.only()["value"]["ran"], "original");
    assert_eq!(sent_bytes(&second), 0, "a cache hit sends no file bytes");

    // Tamper with the cached copy: it must be detected, replaced, and never run.
    let cached = walk_files(&cache)
        .into_iter()
        .find(|p| p.ends_with("marker.sh"))
        .expect("cached marker.sh");
    let pwned = s.path().join("tampered-ran");
    std::fs::write(
        &cached,
        format!(
            "#!/bin/sh\ntouch {}\necho '{{\"ran\": \"tampered\"}}'\n",
            pwned.display()
        ),
    )
    .unwrap();
    let third = task(&s, &inv, "demo::marker", &[], &[]);
    assert_eq!(third.only()["value"]["ran"], "original", "{third:?}");
    assert!(sent_bytes(&third) > 0, "the altered file is sent again");
    assert!(!pwned.exists(), "tampered content was executed");
    assert!(
        std::fs::read_to_string(&cached)
            .unwrap()
            .contains("original")
    );
}

fn walk_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk_files(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn sensitive_values_appear_nowhere() {
    const SENTINEL: &str = "sentinel-7f3a9c-secret";
    let (s, inv, cache) = setup("root", "");
    let token = format!("token={SENTINEL}");
    for format in ["json", "human"] {
        let mp = modulepath();
        let run = s.ferry(&[
            "task",
            "run",
            "demo::secret",
            &token,
            "-t",
            "t",
            "-i",
            inv.to_str().unwrap(),
            "--modulepath",
            &mp,
            "--format",
            format,
            "--log-level",
            "trace",
        ]);
        assert_eq!(run.code, 0, "{run:?}");
        assert!(
            !run.all_text().contains(SENTINEL),
            "the secret leaked with --format {format}:\n{}",
            run.all_text()
        );
        assert!(run.stdout.contains("[redacted]"));
    }
    // Nothing left on the target holds it: not the cache, not an install dir.
    for f in walk_files(&cache).into_iter().chain(
        walk_files(Path::new("/tmp"))
            .into_iter()
            .filter(|p| p.to_string_lossy().contains("ferry-task-")),
    ) {
        let text = std::fs::read(&f).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&text).contains(SENTINEL),
            "{} holds the secret",
            f.display()
        );
    }
    // A type error on a sensitive parameter does not echo it either.
    let run = task(&s, &inv, "demo::secret", &["token=short"], &[]);
    assert_eq!(run.code, 1);
    assert!(!run.stderr.contains("short"), "{}", run.stderr);
}

#[test]
fn noop_only_for_tasks_that_support_it() {
    let (s, inv, _) = setup("root", "");
    let run = task(&s, &inv, "demo::noop", &[], &["--noop"]);
    assert_eq!(run.only()["value"]["noop"], true, "{run:?}");
    let run = task(&s, &inv, "demo::noop", &[], &[]);
    assert_eq!(run.only()["value"]["noop"], false);
    let run = task(&s, &inv, "demo::marker", &[], &["--noop"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("does not support noop"),
        "{}",
        run.stderr
    );
}

#[test]
fn failures_and_plain_output() {
    let (s, inv, _) = setup("root", "");
    let run = task(&s, &inv, "demo::fails", &[], &[]);
    assert_eq!(run.code, 2);
    let v = &run.only()["value"];
    assert_eq!(v["_output"], "not json\n");
    assert_eq!(v["_error"]["kind"], "puppetlabs.tasks/task-error");
    assert_eq!(v["_error"]["issue_code"], "TASK_ERROR");
    assert_eq!(v["_error"]["msg"], "The task failed with exit code 4");
    assert_eq!(v["_error"]["details"]["exit_code"], 4);
}

/// In the target's long-lived shell a `#!/bin/sh` task that never looks
/// at `$0` or `$$` is read into the wrapper's subshell rather than exec'd:
/// it must see none of the wrapper's variables or functions, get its
/// parameters and stdin, and end with its own exit status. One that looks
/// at `$0` is exec'd and sees its own path there.
#[test]
fn tasks_read_into_the_shell_see_what_an_execd_task_sees() {
    let (s, inv, _) = setup("root", "");
    let run = task(&s, &inv, "demo::world", &["x=it's"], &[]);
    assert_eq!(run.code, 0, "{run:?}");
    let v = &run.only()["value"];
    assert_eq!(v["leak"], "", "{v}");
    assert_eq!(v["x"], "it's", "{v}");
    assert_eq!(v["stdin"]["x"], "it's", "{v}");
    assert_eq!(v["stdin"]["_task"], "demo::world", "{v}");

    let run = task(&s, &inv, "demo::world", &["x=y", "code=3"], &[]);
    assert_eq!(run.code, 2, "{run:?}");
    let v = &run.only()["value"];
    assert_eq!(v["_error"]["details"]["exit_code"], 3, "{v}");

    let run = task(&s, &inv, "demo::world0", &["x=z"], &[]);
    assert_eq!(run.code, 0, "{run:?}");
    let v = &run.only()["value"];
    let zero = v["zero"].as_str().unwrap_or_default();
    assert!(zero.ends_with("/demo/tasks/world0.sh"), "{v}");
    assert_eq!(v["x"], "z", "{v}");
}

#[test]
fn tasks_run_as_another_user_through_sudo() {
    let (s, inv, _) = setup(NOPW_USER, "        run-as: root\n");
    let run = task(
        &s,
        &inv,
        "demo::both",
        &["message=elevated", "list=[1]"],
        &[],
    );
    let v = &run.only()["value"];
    assert_eq!(v["user"], "root", "{run:?}");
    assert_eq!(v["stdin"]["message"], "elevated");
    assert_eq!(v["env_message"], "elevated");
}

#[test]
fn task_show_lists_and_describes() {
    let s = Scratch::new();
    let mp = modulepath();
    let run = s.ferry(&["task", "show", "--modulepath", &mp]);
    assert!(run.stdout.contains("demo::stdin_only"), "{run:?}");
    assert!(
        run.stdout.contains("ferry::facts"),
        "built-in tasks are listed: {}",
        run.stdout
    );
    let run = s.ferry(&[
        "task",
        "show",
        "demo::stdin_only",
        "--modulepath",
        &mp,
        "--format",
        "json",
    ]);
    // Bolt's shape: the metadata as written, the files, the module's dir.
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let list = &doc["metadata"]["parameters"]["list"];
    assert!(
        list["type"] == "Array[Integer]" && list["default"] == serde_json::json!([1, 2]),
        "{doc}"
    );
    assert_eq!(doc["files"][0]["name"], "stdin_only.sh", "{doc}");
    assert!(
        doc["module_dir"]
            .as_str()
            .is_some_and(|d| d.ends_with("tests/tasks/modules/demo")),
        "{doc}"
    );
}

#[test]
fn builtin_facts_task_runs_over_ssh() {
    let (s, inv, _) = setup("root", "");
    let run = task(&s, &inv, "ferry::facts", &[], &[]);
    let v = &run.only()["value"];
    assert!(v["os"]["family"].is_string(), "{run:?}");
    assert!(v["networking"]["interfaces"]["lo"].is_object(), "{v}");
}

#[test]
fn task_files_reach_a_host_without_sftp() {
    let sshd = Sshd::builder().sftp(false).start();
    let s = Scratch::new();
    // With --no-cleanup the task runs outside the long-lived shell, and its
    // files go through ferry's file transport (here `cat` over exec).
    let (inv, _, cache) = s.private_target(&sshd);
    let first = task(&s, &inv, "demo::marker", &[], &["--no-cleanup"]);
    assert_eq!(first.only()["value"]["ran"], "original", "{first:?}");
    assert!(sent_bytes(&first) > 0);
    let cached = walk_files(&cache);
    assert_eq!(cached.len(), 1, "{cached:?}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&cached[0]).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o755, "cached task files are executable");
    let second = task(&s, &inv, "demo::marker", &[], &[]);
    assert_eq!(sent_bytes(&second), 0, "{second:?}");
}
