//! How `ferry apply` reaches a target, on sandboxed real sshd targets (a
//! throwaway copy of this machine each, so `/tmp`, `/root` and sudo rules
//! are the test's own): large file contents go through the target's
//! content cache and are checked there before use (a damaged entry is sent
//! again, never used); a second apply to the same target while one runs is
//! refused and a stale lock is taken over; a connection that drops during
//! the apply fails the target with a clear error; and an apply as a run-as
//! user (sudo) converges files as that user.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::ferry::{Run, Scratch, key_line, one_target};
use common::sshd::{KeyType, NOPW_USER, Sshd, client_keys};
use serde_json::Value;

/// Where the content cache is for root on the target.
const ROOT_CACHE: &str = "/root/.cache/ferry/tasks";

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

fn inventory(s: &Scratch, sshd: &Sshd, user: &str, extra: &str) -> std::path::PathBuf {
    s.inventory(&one_target(
        sshd,
        "node1",
        user,
        &format!("{}{extra}", key_line(&client_keys().path(KeyType::Ed25519))),
    ))
}

fn apply(s: &Scratch, inv: &Path, code: &str) -> Run {
    apply_to(s, inv, code, "node1", &[])
}

/// `ferry apply -e CODE -t TARGETS` with `extra` arguments.
fn apply_to(s: &Scratch, inv: &Path, code: &str, targets: &str, extra: &[&str]) -> Run {
    let modules = s.path().join("modules");
    let mut args = vec![
        "apply",
        "-e",
        code,
        "-t",
        targets,
        "-i",
        inv.to_str().unwrap(),
        "--modulepath",
        modules.to_str().unwrap(),
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    s.ferry(&args)
}

/// Puts `bytes` in module `delivery` of the scratch modulepath; the
/// source that names it.
fn module_file(s: &Scratch, name: &str, bytes: &[u8]) -> String {
    let dir = s.path().join("modules/delivery/files");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), bytes).unwrap();
    format!("puppet:///modules/delivery/{name}")
}

fn report(run: &Run) -> Value {
    run.item("node1")["value"]["report"].clone()
}

/// How many SFTP sessions the daemon has started so far.
fn sftp_sessions(sshd: &Sshd) -> usize {
    sessions(sshd, "Starting session: subsystem 'sftp'")
}

/// How many command sessions (one per round trip, the facts task's
/// long-lived shell being one) the daemon has started so far.
fn commands(sshd: &Sshd) -> usize {
    sessions(sshd, "Starting session: command ")
}

fn sessions(sshd: &Sshd, what: &str) -> usize {
    sshd.log().lines().filter(|l| l.contains(what)).count()
}

/// Waits until `path` exists in the target's sandbox.
fn wait_for(sshd: &Sshd, path: &str) {
    let until = Instant::now() + Duration::from_secs(30);
    while !sshd.sandbox().exists(path) {
        assert!(Instant::now() < until, "{path} never appeared");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn large_contents_come_from_the_checked_cache_and_a_damaged_entry_is_sent_again() {
    let sshd = Sshd::builder().sandboxed().start();
    let s = Scratch::new();
    let inv = inventory(&s, &sshd, "root", "");
    let big: String = (0..2000)
        .map(|i| format!("line {i} of the big file\n"))
        .collect();
    assert!(big.len() > ferry::apply::INLINE_MAX);
    let source = module_file(&s, "big.txt", big.as_bytes());
    let sha = sha256_hex(big.as_bytes());
    let code = format!("file {{ '/tmp/ferry-big': source => '{source}', mode => '0640' }}");
    let cached = format!("{ROOT_CACHE}/{sha}/content");

    // First apply: the content is not on the target; it is sent to the
    // cache, then used from there.
    let first = apply(&s, &inv, &code);
    assert_eq!(first.code, 0, "{}", first.all_text());
    assert_eq!(report(&first)["status"], "changed");
    assert_eq!(
        sshd.sandbox().read_to_string("/tmp/ferry-big").unwrap(),
        big
    );
    assert_eq!(sshd.sandbox().read_to_string(&cached).unwrap(), big);
    let mode = sshd.sandbox().sh(&format!("stat -c %a {cached}"));
    assert_eq!(mode.trim(), "600");

    // Converged: nothing is sent, and the apply is one round trip (the
    // facts task is the other).
    let sent = sftp_sessions(&sshd);
    assert!(sent >= 1, "the content did not go by SFTP");
    let before = commands(&sshd);
    let second = apply(&s, &inv, &code);
    assert_eq!(second.code, 0, "{}", second.all_text());
    assert_eq!(report(&second)["status"], "unchanged");
    assert_eq!(sftp_sessions(&sshd), sent, "a converged apply sent content");
    assert_eq!(commands(&sshd) - before, 2, "{}", sshd.log());

    // The path changes; the cache file is the same, so nothing is sent.
    sshd.sandbox().sh("echo old > /tmp/ferry-big");
    let third = apply(&s, &inv, &code);
    assert_eq!(report(&third)["status"], "changed", "{}", third.all_text());
    assert_eq!(
        sshd.sandbox().read_to_string("/tmp/ferry-big").unwrap(),
        big
    );
    assert_eq!(
        sftp_sessions(&sshd),
        sent,
        "an intact cached content was sent again"
    );

    // A damaged cache entry is never used: it is sent again.
    sshd.sandbox().sh(&format!(
        "echo tampered > {cached}; echo old > /tmp/ferry-big"
    ));
    let fourth = apply(&s, &inv, &code);
    assert_eq!(fourth.code, 0, "{}", fourth.all_text());
    assert_eq!(report(&fourth)["status"], "changed");
    assert_eq!(
        sshd.sandbox().read_to_string("/tmp/ferry-big").unwrap(),
        big
    );
    assert_eq!(sshd.sandbox().read_to_string(&cached).unwrap(), big);
    assert!(
        sftp_sessions(&sshd) > sent,
        "the damaged entry was not replaced"
    );

    // Nothing of the run is left in /tmp: no temporary file, no lock.
    let left = sshd
        .sandbox()
        .sh("ls -a /tmp | grep -e ferrytmp -e ferry-apply-0.lock || true");
    assert_eq!(left.trim(), "", "left behind in /tmp");
}

#[test]
fn a_second_apply_while_one_runs_is_refused_and_a_stale_lock_is_taken_over() {
    let sshd = Sshd::builder().sandboxed().start();
    let s = Scratch::new();
    let inv = inventory(&s, &sshd, "root", "");
    let slow = "exec { 'hold': command => '/bin/sleep 4' }";
    let first = std::thread::scope(|scope| {
        let first = scope.spawn(|| apply(&s, &inv, slow));
        wait_for(&sshd, "/tmp/ferry-apply-0.lock/pid");
        let second = apply(&s, &inv, "notify { 'second': }");
        assert_eq!(second.code, 2, "{}", second.all_text());
        let text = second.all_text();
        assert!(
            text.contains("another apply is running on this target"),
            "{text}"
        );
        first.join().unwrap()
    });
    assert_eq!(first.code, 0, "{}", first.all_text());
    assert_eq!(report(&first)["status"], "changed");
    assert!(!sshd.sandbox().exists("/tmp/ferry-apply-0.lock"));

    // A lock whose process is gone is stale: the next apply takes it.
    sshd.sandbox()
        .sh("mkdir /tmp/ferry-apply-0.lock && echo 999999 > /tmp/ferry-apply-0.lock/pid");
    let after = apply(&s, &inv, "notify { 'after': }");
    assert_eq!(after.code, 0, "{}", after.all_text());
    assert!(!sshd.sandbox().exists("/tmp/ferry-apply-0.lock"));
}

#[test]
fn a_connection_that_drops_during_the_apply_fails_the_target() {
    let sshd = Sshd::builder().sandboxed().start();
    let s = Scratch::new();
    let inv = inventory(&s, &sshd, "root", "");
    let code =
        "exec { 'hold': command => '/bin/sleep 3' } -> file { '/tmp/ferry-after': content => 'x' }";
    let run = std::thread::scope(|scope| {
        let run = scope.spawn(|| apply(&s, &inv, code));
        wait_for(&sshd, "/tmp/ferry-apply-0.lock/pid");
        // Every connection's processes, not the listener.
        sshd.sandbox().sh("pkill -KILL -f '^sshd: root' || true");
        run.join().unwrap()
    });
    assert_eq!(run.code, 2, "{}", run.all_text());
    let text = run.all_text();
    assert!(text.contains("The apply did not finish"), "{text}");
    assert_ne!(report(&run)["status"], "changed", "{text}");
    assert_eq!(report(&run)["status"], "failed", "{text}");
}

#[test]
fn an_apply_as_a_run_as_user_converges_as_that_user() {
    let sshd = Sshd::builder().sandboxed().start();
    let s = Scratch::new();
    let inv = inventory(&s, &sshd, NOPW_USER, "        run-as: root\n");
    let big = "y".repeat(ferry::apply::INLINE_MAX + 1);
    let source = module_file(&s, "big.txt", big.as_bytes());
    let code = format!(
        "file {{ '/root/ferry-run-as': content => \"made as root\\n\", mode => '0600' }}\n\
         file {{ '/root/ferry-run-as-big': source => '{source}' }}"
    );
    let run = apply(&s, &inv, &code);
    assert_eq!(run.code, 0, "{}", run.all_text());
    assert_eq!(report(&run)["status"], "changed");
    let owner = sshd
        .sandbox()
        .sh("stat -c '%U %a' /root/ferry-run-as /root/ferry-run-as-big");
    assert_eq!(owner, "root 600\nroot 644\n");
    assert_eq!(
        sshd.sandbox()
            .read_to_string("/root/ferry-run-as-big")
            .unwrap(),
        big
    );
    // The same apply as the login user alone cannot write there.
    let inv = inventory(&s, &sshd, NOPW_USER, "");
    let denied = apply(&s, &inv, "file { '/root/ferry-denied': content => 'x' }");
    assert_eq!(denied.code, 2, "{}", denied.all_text());
    assert_eq!(report(&denied)["status"], "failed");
    assert!(!sshd.sandbox().exists("/root/ferry-denied"));
}

#[test]
fn sources_that_are_paths_are_read_on_the_target_as_an_agent_reads_them() {
    let sshd = Sshd::builder().sandboxed().start();
    let s = Scratch::new();
    let inv = inventory(&s, &sshd, "root", "");
    sshd.sandbox()
        .sh("printf 'only on the target\\n' > /tmp/ferry-src.txt");
    let fallback = module_file(&s, "fallback.txt", b"from the module\n");
    let code = format!(
        "file {{ '/tmp/ferry-copy': source => '/tmp/ferry-src.txt' }}\n\
         file {{ '/tmp/ferry-uri': source => 'file:///tmp/ferry-src.txt' }}\n\
         file {{ '/tmp/ferry-fallback': source => ['/tmp/ferry-missing.txt', '{fallback}'] }}\n\
         file {{ '/tmp/ferry-none': source => '/tmp/ferry-missing.txt' }}"
    );
    let run = apply(&s, &inv, &code);
    let r = report(&run);
    assert_eq!(r["status"], "failed", "{}", run.all_text());
    let read = |p: &str| sshd.sandbox().read_to_string(p).unwrap_or_default();
    assert_eq!(read("/tmp/ferry-copy"), "only on the target\n");
    assert_eq!(read("/tmp/ferry-uri"), "only on the target\n");
    assert_eq!(read("/tmp/ferry-fallback"), "from the module\n");
    let none = &r["resource_statuses"]["File[/tmp/ferry-none]"];
    assert_eq!(none["failed"], true, "{none}");
    assert_eq!(
        none["events"][0]["message"],
        "Could not retrieve information from environment production source(s) file:///tmp/ferry-missing.txt",
        "{none}"
    );
    let sha = sha256_hex(b"only on the target\n");
    let copy = &r["resource_statuses"]["File[/tmp/ferry-copy]"]["events"][0];
    assert_eq!(
        copy["message"],
        format!("defined content as '{{sha256}}{sha}'"),
        "{copy}"
    );
    // The source changes on the target: the copy follows.
    sshd.sandbox().sh("echo changed > /tmp/ferry-src.txt");
    let again = apply(&s, &inv, &code);
    let event = &report(&again)["resource_statuses"]["File[/tmp/ferry-copy]"]["events"][0];
    assert_eq!(event["property"], "content", "{event}");
    assert_eq!(read("/tmp/ferry-copy"), "changed\n");
}

#[test]
fn targets_get_their_own_catalog_and_identity_when_one_program_serves_several() {
    let sshd = Sshd::builder().sandboxed().start();
    let s = Scratch::new();
    let key = key_line(&client_keys().path(KeyType::Ed25519));
    let mut text = String::from("targets:\n");
    for name in ["node1", "node2", "node3"] {
        let one = one_target(&sshd, name, "root", &key);
        text.push_str(&one["targets:\n".len()..]);
    }
    let inv = s.inventory(&text);
    // node1 and node3 compile the same catalog; node2 another. One after
    // the other on the same host: each must apply its own content.
    let code = "file { '/tmp/ferry-shared': content => $trusted['certname'] ? { 'node2' => \"two\\n\", default => \"one\\n\" } }";
    let run = apply_to(&s, &inv, code, "all", &["--concurrency", "1"]);
    assert_eq!(run.code, 0, "{}", run.all_text());
    // In the order they ran, each target finds what the one before left.
    let mut reports: Vec<(String, Value)> = ["node1", "node2", "node3"]
        .iter()
        .map(|n| (n.to_string(), run.item(n)["value"]["report"].clone()))
        .collect();
    reports.sort_by(|a, b| a.1["time"].as_str().cmp(&b.1["time"].as_str()));
    let mut before: Option<&str> = None;
    for (name, r) in &reports {
        let own = if name == "node2" { "two" } else { "one" };
        assert_eq!(r["host"], name.as_str(), "{r}");
        let events = &r["resource_statuses"]["File[/tmp/ferry-shared]"]["events"];
        let message = events[0]["message"].as_str().unwrap_or_default();
        match before {
            None => assert!(message.starts_with("defined content as"), "{name}: {r}"),
            Some(b) if b == own => assert_eq!(r["status"], "unchanged", "{name}: {r}"),
            Some(b) => assert_eq!(
                message,
                format!(
                    "content changed '{{sha256}}{}' to '{{sha256}}{}'",
                    sha256_hex(format!("{b}\n").as_bytes()),
                    sha256_hex(format!("{own}\n").as_bytes())
                ),
                "{name}: {r}"
            ),
        }
        before = Some(own);
    }
    let uuid = |n: &str| run.item(n)["value"]["report"]["catalog_uuid"].clone();
    assert_ne!(
        uuid("node1"),
        uuid("node3"),
        "each target keeps its own catalog_uuid"
    );
    assert_eq!(
        sshd.sandbox().read_to_string("/tmp/ferry-shared").unwrap(),
        format!("{}\n", before.unwrap_or_default())
    );
}

#[test]
fn a_lock_another_user_made_in_the_shared_tmp_is_never_trusted() {
    let sshd = Sshd::builder().sandboxed().start();
    let s = Scratch::new();
    let uid = sshd.sandbox().sh(&format!("id -u {NOPW_USER}"));
    let uid = uid.trim();
    // Someone else (here root) made the lock named for the login user,
    // holding a live process's id: the user's apply is refused, clearly.
    sshd.sandbox().sh(&format!(
        "mkdir /tmp/ferry-apply-{uid}.lock && echo 1 > /tmp/ferry-apply-{uid}.lock/pid"
    ));
    let inv = inventory(&s, &sshd, NOPW_USER, "");
    let refused = apply(&s, &inv, "file { '/tmp/ferry-lock-user': content => 'x' }");
    assert_eq!(refused.code, 2, "{}", refused.all_text());
    let text = refused.all_text();
    assert!(
        text.contains(&format!(
            "the apply lock /tmp/ferry-apply-{uid}.lock belongs to user id 0, not to the user the apply runs as (user id {uid})"
        )),
        "{text}"
    );
    assert!(!sshd.sandbox().exists("/tmp/ferry-lock-user"));
    // A local user made root's lock: root removes it and applies.
    sshd.sandbox().sh(&format!(
        "su -s /bin/sh -c 'mkdir /tmp/ferry-apply-0.lock && echo 1 > /tmp/ferry-apply-0.lock/pid' {NOPW_USER}"
    ));
    let inv = inventory(&s, &sshd, "root", "");
    let taken = apply(&s, &inv, "file { '/tmp/ferry-lock-root': content => 'x' }");
    assert_eq!(taken.code, 0, "{}", taken.all_text());
    assert!(sshd.sandbox().exists("/tmp/ferry-lock-root"));
    assert!(!sshd.sandbox().exists("/tmp/ferry-apply-0.lock"));
}
