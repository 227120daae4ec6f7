//! One-time preparation of the machine: root and tool checks, the privilege
//! separation directory, the test users with their password and sudo rules,
//! and the lock file that serialises this across parallel test binaries.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Once;

use super::process::install_exit_hook;
use super::util::{create_dir, fail, remove_stale_temp_dirs, run, set_mode, write_file};
use super::{NOPW_USER, PW_USER, SSHD_BIN, USER_PASSWORD};

/// Drop-in file with the test users' sudo rules.
const SUDOERS_PATH: &str = "/etc/sudoers.d/ferry-test";

/// One-time, idempotent preparation of the machine for this process.
pub(super) fn ensure_environment() {
    static ENVIRONMENT: Once = Once::new();
    ENVIRONMENT.call_once(|| {
        install_exit_hook();
        // SAFETY: geteuid(2) cannot fail and has no preconditions.
        let euid = unsafe { libc::geteuid() };
        assert!(
            euid == 0,
            "sshd fixture: integration tests must run as root (they create users, \
             sudo rules and network namespaces); see scripts/test.sh"
        );
        for tool in [SSHD_BIN, "/usr/bin/ssh-keygen", "/usr/sbin/visudo"] {
            assert!(
                Path::new(tool).exists(),
                "sshd fixture: {tool} is missing; scripts/test.sh installs what the tests need"
            );
        }
        // sshd refuses to start without its privilege separation directory.
        create_dir(Path::new("/run/sshd"));
        set_mode(Path::new("/run/sshd"), 0o755);
        remove_stale_temp_dirs();
        with_lock("users", ensure_test_users);
    });
}

fn ensure_test_users() {
    for user in [NOPW_USER, PW_USER] {
        if run(Command::new("getent").args(["passwd", user])).is_err() {
            let mut cmd = Command::new("useradd");
            cmd.args(["--create-home", "--shell", "/bin/bash"]);
            if run(Command::new("getent").args(["group", user])).is_ok() {
                cmd.args(["--gid", user]);
            }
            if let Err(e) = run(cmd.arg(user)) {
                // Exit status 9: created concurrently by someone else; fine.
                if run(Command::new("getent").args(["passwd", user])).is_err() {
                    fail(format!("cannot create user {user}: {e}"));
                }
            }
        }
        ensure_home(user);
    }
    let mut chpasswd = Command::new("chpasswd")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| fail(format!("cannot run chpasswd: {e}")));
    let input = format!("{NOPW_USER}:{USER_PASSWORD}\n{PW_USER}:{USER_PASSWORD}\n");
    chpasswd
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(input.as_bytes())
        .unwrap_or_else(|e| fail(format!("cannot write to chpasswd: {e}")));
    let output = chpasswd
        .wait_with_output()
        .unwrap_or_else(|e| fail(format!("chpasswd: {e}")));
    if !output.status.success() {
        fail(format!(
            "chpasswd failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    install_sudoers();
}

/// Creates `user`'s home directory if useradd did not (e.g. a pre-existing user).
fn ensure_home(user: &str) {
    let entry = run(Command::new("getent").args(["passwd", user]))
        .unwrap_or_else(|e| fail(format!("getent passwd {user}: {e}")));
    let fields: Vec<&str> = entry.trim().split(':').collect();
    let (Some(uid), Some(gid), Some(home)) = (
        fields.get(2).and_then(|f| f.parse().ok()),
        fields.get(3).and_then(|f| f.parse().ok()),
        fields.get(5),
    ) else {
        fail(format!("unexpected passwd entry for {user}: {entry:?}"));
    };
    let home = Path::new(home);
    if !home.is_dir() {
        create_dir(home);
        std::os::unix::fs::chown(home, Some(uid), Some(gid))
            .unwrap_or_else(|e| fail(format!("chown {}: {e}", home.display())));
        set_mode(home, 0o755);
    }
}

/// Installs the test users' sudo rules, validated with `visudo -cf` first.
fn install_sudoers() {
    let content = format!(
        "# Managed by ferry's integration-test fixture (tests/common/sshd.rs).\n\
         # No lecture and no cached credentials: every sudo asks for the password.\n\
         Defaults:{PW_USER} lecture=never, timestamp_timeout=0\n\
         {NOPW_USER} ALL=(ALL:ALL) NOPASSWD: ALL\n\
         {PW_USER} ALL=(ALL:ALL) ALL\n"
    );
    if fs::read_to_string(SUDOERS_PATH).is_ok_and(|current| current == content) {
        return;
    }
    let dir = Path::new(SUDOERS_PATH).parent().expect("sudoers.d");
    if !dir.is_dir() {
        fail(format!(
            "{} does not exist: is sudo installed? (scripts/test.sh installs it)",
            dir.display()
        ));
    }
    // sudo ignores files whose names contain a dot, so the temp file is inert.
    let staging = dir.join(".ferry-test.tmp");
    write_file(&staging, &content, 0o440);
    if let Err(e) = run(Command::new("visudo").arg("-cf").arg(&staging)) {
        let _ = fs::remove_file(&staging);
        fail(format!("generated sudoers rules are invalid: {e}"));
    }
    fs::rename(&staging, SUDOERS_PATH)
        .unwrap_or_else(|e| fail(format!("cannot install {SUDOERS_PATH}: {e}")));
}

/// Runs `f` while holding an exclusive lock shared with other test processes.
pub(super) fn with_lock<R>(name: &str, f: impl FnOnce() -> R) -> R {
    let dir = if Path::new("/run/lock").is_dir() {
        Path::new("/run/lock")
    } else {
        Path::new("/tmp")
    };
    let path = dir.join(format!("ferry-test-{name}.lock"));
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| fail(format!("cannot open lock file {}: {e}", path.display())));
    // SAFETY: flock(2) on a file descriptor we own.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
        fail(format!(
            "cannot lock {}: {}",
            path.display(),
            io::Error::last_os_error()
        ));
    }
    let result = f();
    drop(file); // closing the descriptor releases the lock
    result
}
