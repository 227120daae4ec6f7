//! The sandboxed sshd fixture (`Sshd::builder().sandboxed()`): a daemon in a
//! throwaway copy of this machine's root. Changes made over SSH (users,
//! files under /etc, the hostname, deletions) stay in the sandbox and are
//! readable from the host through `Sshd::sandbox()`; two sandboxes do not
//! see each other; stopping one ends every process in it and removes its
//! layers; a restart keeps what was changed; a killed test process takes
//! its sandbox along; ferry's own binary reaches it like any target.

mod common;

use std::fs;
use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use common::ferry::{Scratch, key_line, one_target};
use common::procs::{appears_within, running, unique_seconds};
use common::sshd::{KeyType, Sshd, client_keys};

/// Runs `command` over SSH as `user`; its stdout. Panics if it fails.
fn ssh(sshd: &Sshd, user: &str, command: &str) -> String {
    let output = sshd
        .openssh_command(user)
        .arg(command)
        .output()
        .expect("run ssh");
    assert!(
        output.status.success(),
        "ssh {user} `{command}` failed ({}): {}\n--- sshd log ---\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr),
        sshd.log_tail(20)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn host_has_user(user: &str) -> bool {
    fs::read_to_string("/etc/passwd")
        .expect("host /etc/passwd")
        .lines()
        .any(|line| line.starts_with(&format!("{user}:")))
}

fn has_user(passwd: &str, user: &str) -> bool {
    passwd
        .lines()
        .any(|line| line.starts_with(&format!("{user}:")))
}

/// Whether process `pid` has ended (gone, or a zombie nobody reaped yet).
fn ended(pid: u32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
    })
}

#[test]
fn changes_made_over_ssh_stay_in_the_sandbox() {
    const USER: &str = "ferry-sbx";
    const MARKER: &str = "/etc/ferry-sandbox-marker";
    assert!(!host_has_user(USER), "the host already has {USER}");
    assert!(!Path::new(MARKER).exists(), "the host already has {MARKER}");
    let host_name = fs::read_to_string("/proc/sys/kernel/hostname").unwrap();

    let sshd = Sshd::builder().sandboxed().start();
    let sandbox = sshd.sandbox();
    let uid = ssh(
        &sshd,
        "root",
        &format!(
            "useradd --create-home --shell /bin/sh --password '*' {USER} && echo sandboxed > {MARKER} \
             && hostname ferry-sandbox && id -u {USER}"
        ),
    );
    assert!(uid.trim().parse::<u32>().is_ok(), "uid {uid:?}");

    // The host is unchanged.
    assert!(
        !host_has_user(USER),
        "useradd in the sandbox reached the host"
    );
    assert!(!Path::new(MARKER).exists(), "{MARKER} reached the host");
    assert!(!Path::new("/home").join(USER).exists());
    assert_eq!(
        fs::read_to_string("/proc/sys/kernel/hostname").unwrap(),
        host_name
    );

    // The sandbox, read from the host and from inside, has the changes.
    assert!(has_user(
        &sandbox.read_to_string("/etc/passwd").unwrap(),
        USER
    ));
    assert_eq!(sandbox.read_to_string(MARKER).unwrap(), "sandboxed\n");
    assert!(sandbox.exists(format!("/home/{USER}")));
    assert!(sandbox.upper_dir().join("etc/passwd").is_file());
    assert!(
        sandbox
            .sh(&format!("getent passwd {USER}"))
            .starts_with(USER)
    );
    assert_eq!(sandbox.sh("hostname").trim(), "ferry-sandbox");
    // sshd is PID 1 of its own PID namespace, on the overlay.
    assert_eq!(sandbox.sh("cat /proc/1/comm").trim(), "sshd");
    assert_eq!(sandbox.sh("findmnt -no FSTYPE /").trim(), "overlay");
    assert_eq!(ssh(&sshd, "root", "cat /proc/1/comm").trim(), "sshd");

    // The daemon serves the sandbox's accounts: the new user (password `*`,
    // so not locked) can log in.
    sshd.authorize_key(USER, client_keys().public_key(KeyType::Ed25519));
    assert_eq!(ssh(&sshd, USER, "id -un").trim(), USER);
}

#[test]
fn orphans_in_the_sandbox_are_reaped_by_its_pid_1() {
    let sshd = Sshd::builder().sandboxed().start();
    let sandbox = sshd.sandbox();
    // The subshell exits at once; its sleep becomes PID 1's child.
    let states = sandbox.sh("(sleep 0.2 &); sleep 1; ps -eo stat=,ppid=,args=");
    assert!(
        !states
            .lines()
            .any(|line| line.trim_start().starts_with('Z')),
        "zombies in the sandbox:\n{states}"
    );
}

#[test]
fn a_file_the_sandbox_changed_no_longer_follows_the_host() {
    let scratch = tempfile::tempdir().unwrap();
    let changed = scratch.path().join("changed");
    let deleted = scratch.path().join("deleted");
    fs::write(&changed, "host 1\n").unwrap();
    fs::write(&deleted, "host\n").unwrap();

    let sshd = Sshd::builder().sandboxed().start();
    let sandbox = sshd.sandbox();
    let seen = ssh(
        &sshd,
        "root",
        &format!(
            "cat {c}; echo sandbox > {c}; rm {d}",
            c = changed.display(),
            d = deleted.display()
        ),
    );
    assert_eq!(seen, "host 1\n");
    fs::write(&changed, "host 2\n").unwrap();

    assert_eq!(fs::read_to_string(&changed).unwrap(), "host 2\n");
    assert_eq!(sandbox.read_to_string(&changed).unwrap(), "sandbox\n");
    assert_eq!(
        ssh(&sshd, "root", &format!("cat {}", changed.display())),
        "sandbox\n"
    );
    assert_eq!(fs::read_to_string(&deleted).unwrap(), "host\n");
    assert!(!sandbox.exists(&deleted));
    // The deletion is recorded in the upper layer as a whiteout.
    let whiteout = sandbox.upper_dir().join(deleted.strip_prefix("/").unwrap());
    let kind = fs::symlink_metadata(&whiteout).unwrap().file_type();
    assert!(kind.is_char_device(), "{} is {kind:?}", whiteout.display());
}

#[test]
fn two_sandboxes_at_once_are_independent() {
    let (a, b) = thread::scope(|scope| {
        let a = scope.spawn(|| Sshd::builder().sandboxed().start());
        let b = scope.spawn(|| Sshd::builder().sandboxed().start());
        (a.join().unwrap(), b.join().unwrap())
    });
    assert_ne!(a.sandbox().init_pid(), b.sandbox().init_pid());
    thread::scope(|scope| {
        for (sshd, name) in [(&a, "a"), (&b, "b")] {
            scope.spawn(move || {
                ssh(
                    sshd,
                    "root",
                    &format!("echo {name} > /etc/ferry-sandbox-id && useradd ferry-sbx-{name}"),
                )
            });
        }
    });
    for (sshd, own, other) in [(&a, "a", "b"), (&b, "b", "a")] {
        let sandbox = sshd.sandbox();
        assert_eq!(
            sandbox.read_to_string("/etc/ferry-sandbox-id").unwrap(),
            format!("{own}\n")
        );
        let passwd = sandbox.read_to_string("/etc/passwd").unwrap();
        assert!(has_user(&passwd, &format!("ferry-sbx-{own}")));
        assert!(!has_user(&passwd, &format!("ferry-sbx-{other}")));
        assert_eq!(
            ssh(sshd, "root", "cat /etc/ferry-sandbox-id"),
            format!("{own}\n")
        );
    }
    assert!(!Path::new("/etc/ferry-sandbox-id").exists());
    assert!(!host_has_user("ferry-sbx-a") && !host_has_user("ferry-sbx-b"));
}

#[test]
fn dropping_the_daemon_ends_the_sandbox_and_removes_its_layers() {
    let sshd = Sshd::builder().sandboxed().start();
    // A detached process (its own session, reparented to the sandbox's
    // PID 1), which an ordinary daemon's stop would not reach.
    let seconds = unique_seconds();
    ssh(
        &sshd,
        "root",
        &format!("setsid sleep {seconds} </dev/null >/dev/null 2>&1 & echo started"),
    );
    assert!(
        appears_within(&seconds, Duration::from_secs(10)),
        "the detached sleep did not start"
    );
    let sandbox = sshd.sandbox();
    let (dir, upper, init, addr) = (
        sshd.dir().to_owned(),
        sandbox.upper_dir(),
        sandbox.init_pid(),
        sshd.addr(),
    );
    assert!(upper.is_dir());

    drop(sshd);
    assert!(ended(init), "the sandbox's PID 1 survived");
    assert!(!running(&seconds), "a process in the sandbox survived");
    assert!(!dir.exists(), "{} left behind", dir.display());
    assert!(TcpStream::connect(addr).is_err(), "port still open");
    let mounts = fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounts.contains(&*dir.to_string_lossy()), "{mounts}");
}

#[test]
fn a_restarted_daemon_keeps_what_the_sandbox_changed() {
    let sshd = Sshd::builder().sandboxed().start();
    ssh(&sshd, "root", "echo kept > /etc/ferry-sandbox-reboot");
    let first = sshd.sandbox().init_pid();

    sshd.kill();
    assert!(!sshd.is_running());
    assert!(ended(first));
    sshd.restart();
    assert_ne!(sshd.sandbox().init_pid(), first);
    assert_eq!(
        ssh(&sshd, "root", "cat /etc/ferry-sandbox-reboot"),
        "kept\n"
    );
    assert!(!Path::new("/etc/ferry-sandbox-reboot").exists());
}

#[test]
fn ferry_converges_users_in_the_sandbox_not_on_the_host() {
    const USER: &str = "ferry-sbx-ferry";
    let sshd = Sshd::builder().sandboxed().start();
    let s = Scratch::new();
    let inv = s.inventory(&one_target(
        &sshd,
        "t",
        "root",
        &key_line(&client_keys().path(KeyType::Ed25519)),
    ));
    let command = format!("useradd {USER} && getent passwd {USER}");
    let run = s.ferry(&[
        "command",
        "run",
        &command,
        "-t",
        "t",
        "-i",
        inv.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains(USER), "{run:?}");
    assert!(!host_has_user(USER));
    assert!(has_user(
        &sshd.sandbox().read_to_string("/etc/passwd").unwrap(),
        USER
    ));
}

/// Set in the environment of the child test process that
/// [`a_killed_test_process_takes_its_sandbox_along`] kills.
const HOLD_ENV: &str = "FERRY_TEST_SANDBOX_HOLD";

#[test]
fn a_killed_test_process_takes_its_sandbox_along() {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "hold_a_sandbox", "--ignored", "--nocapture"])
        .env(HOLD_ENV, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    while !line.starts_with("holding ") {
        line.clear();
        assert_ne!(stdout.read_line(&mut line).unwrap(), 0, "no sandbox held");
    }
    let fields: Vec<&str> = line.split_whitespace().collect();
    let (init, port, dir) = (
        fields[1].parse::<u32>().unwrap(),
        fields[2].parse::<u16>().unwrap(),
        Path::new(fields[3]).to_owned(),
    );
    assert!(!ended(init));
    child.kill().unwrap();
    child.wait().unwrap();

    let deadline = Instant::now() + Duration::from_secs(10);
    while !ended(init) {
        assert!(Instant::now() < deadline, "the sandbox outlived its test");
        thread::sleep(Duration::from_millis(20));
    }
    assert!(TcpStream::connect(("127.0.0.1", port)).is_err());
    // A killed process cleans nothing up: the next test process would
    // remove its directories (the sandbox's among them); do it now.
    assert!(dir.is_dir());
    let mark = format!("-{}-", child.id());
    for entry in fs::read_dir(std::env::temp_dir()).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("ferry-fixture-") && name.contains(&mark) {
            fs::remove_dir_all(entry.path()).unwrap();
        }
    }
    assert!(!dir.exists());
}

/// Helper of [`a_killed_test_process_takes_its_sandbox_along`]: holds a
/// sandbox until killed (does nothing unless run by that test).
#[test]
#[ignore = "run by a_killed_test_process_takes_its_sandbox_along"]
fn hold_a_sandbox() {
    if std::env::var_os(HOLD_ENV).is_none() {
        return;
    }
    let sshd = Sshd::builder().sandboxed().start();
    println!(
        "holding {} {} {}",
        sshd.sandbox().init_pid(),
        sshd.port(),
        sshd.dir().display()
    );
    loop {
        thread::sleep(Duration::from_secs(60));
    }
}
