//! YAML plans on a real sshd: steps in order with parameters, references
//! between steps and a return value, one connection per target for the
//! whole plan, a failing step that ends the plan, and plan files with
//! errors reported by file, line and column.

mod common;

use std::path::Path;

use common::ferry::{Run, Scratch, key_line, one_target};
use common::sshd::{KeyType, Sshd, client_keys};

/// `ferry plan run NAME ARGS.. -i INV --modulepath <the test modules>`.
fn plan_run(s: &Scratch, inv: &Path, name: &str, args: &[&str]) -> Run {
    let mp = modulepath();
    let mut all = vec!["plan", "run", name];
    all.extend(args);
    all.extend(["-i", inv.to_str().unwrap(), "--modulepath", &mp]);
    s.ferry(&all)
}

fn modulepath() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/tasks/modules")
        .display()
        .to_string()
}

#[test]
fn a_plan_runs_its_steps_on_one_connection_per_target() {
    let sshd = Sshd::builder().start();
    let s = Scratch::new();
    let inv = s.inventory(&one_target(
        &sshd,
        "t",
        "root",
        &key_line(&client_keys().path(KeyType::Ed25519)),
    ));
    let marker = s.path().join("marker");
    let marker_arg = format!("marker={}", marker.display());
    let run = plan_run(
        &s,
        &inv,
        "demo::deploy",
        &[
            "message=hello plan",
            &marker_arg,
            "-t",
            "t",
            "--format",
            "json",
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let doc = run.json();
    assert_eq!(doc["status"], "success", "{doc}");
    assert_eq!(
        doc["steps"]["written"]["items"][0]["value"]["stdin"]["message"],
        "hello plan"
    );
    assert_eq!(doc["value"][0]["value"]["stdout"], "present\n", "{doc}");
    assert!(marker.exists());
    let logins = sshd.log().matches("Accepted publickey for root").count();
    assert_eq!(
        logins,
        1,
        "one connection for three steps:\n{}",
        sshd.log_tail(30)
    );

    // Human output shows the message step.
    let run = plan_run(&s, &inv, "demo::deploy", &[&marker_arg, "-t", "t"]);
    assert!(run.stdout.contains("deploying from the plan"), "{run:?}");
    assert!(
        run.stdout.contains("Finished: plan demo::deploy"),
        "{run:?}"
    );
}

#[test]
fn a_failing_step_ends_the_plan() {
    let sshd = common::sshd::shared();
    let s = Scratch::new();
    let inv = s.inventory(&one_target(
        sshd,
        "t",
        "root",
        &key_line(&client_keys().path(KeyType::Ed25519)),
    ));
    let marker = s.path().join("should-not-exist");
    let marker_arg = format!("marker={}", marker.display());
    let run = plan_run(
        &s,
        &inv,
        "demo::fails",
        &[&marker_arg, "-t", "t", "--format", "json"],
    );
    assert_eq!(run.code, 2, "{run:?}");
    let doc = run.json();
    assert_eq!(doc["status"], "failure");
    assert!(
        doc["value"]["_error"]["msg"]
            .as_str()
            .unwrap()
            .contains("step 1 failed on 1 target"),
        "{doc}"
    );
    assert!(!marker.exists(), "the step after a failure ran");
}

#[test]
fn plan_errors_name_file_line_and_column() {
    let s = Scratch::new();
    let inv = s.inventory("targets: [localhost]\n");
    let run = plan_run(&s, &inv, "demo::broken", &["-t", "localhost"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("demo/plans/broken.yaml:5:5: a step can only be one of"),
        "{}",
        run.stderr
    );
    let run = plan_run(&s, &inv, "demo::deploy", &["-t", "localhost", "message="]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("parameter 'marker' expects a String"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("parameter 'message' expects a String[1]"),
        "{}",
        run.stderr
    );
    let run = plan_run(&s, &inv, "demo::nope", &[]);
    assert!(
        run.stderr.contains("plan demo::nope not found"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_copy_altered_between_steps_is_replaced_and_never_run() {
    let sshd = Sshd::builder().start();
    let s = Scratch::new();
    let (inv, tmp, _) = s.private_target(&sshd);
    let pwned = s.path().join("pwned");
    let copies = format!("copies={}/ferry-*/*/demo/tasks/marker.sh", tmp.display());
    let pwned_arg = format!("pwned={}", pwned.display());
    let run = plan_run(
        &s,
        &inv,
        "demo::tamper",
        &[
            &copies,
            &pwned_arg,
            "-t",
            "t",
            "--format",
            "json",
            "--log-level",
            "info",
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let doc = run.json();
    let altered = doc["steps"]["altered"]["items"][0]["value"]["stdout"]
        .as_str()
        .unwrap_or_default();
    assert!(
        altered.contains("/demo/tasks/marker.sh"),
        "the step found the shell's copy to alter: {doc}"
    );
    assert_eq!(doc["value"][0]["value"]["ran"], "original", "{doc}");
    assert!(!pwned.exists(), "the altered copy was run");
    // The second run took the file from the target's cache: no bytes sent.
    let sent: Vec<&str> = run.stderr.lines().filter(|l| l.contains("sent ")).collect();
    assert_eq!(sent.len(), 2, "{}", run.stderr);
    assert!(sent[1].contains("sent 0 bytes"), "{}", run.stderr);
    // The shell's directory went with the connection.
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        0,
        "{tmp:?} is empty"
    );
}
