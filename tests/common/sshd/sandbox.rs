//! Throwaway copies of this machine for tests that change it: a daemon
//! started with [`SshdBuilder::sandboxed`](super::SshdBuilder::sandboxed)
//! runs in its own mount, PID, UTS and IPC namespaces, on an overlayfs whose
//! lower layer is the host's `/` and whose upper and work layers live in the
//! daemon's temporary directory. A test (or a differential harness running
//! Puppet and ferry side by side) may create users, groups, packages and
//! files anywhere in it; the host's files do not change. [`Sandbox`] is the
//! host's view of a running one: its root as `/proc/<init>/root`, commands
//! run inside it with `nsenter`, and the upper layer, which records every
//! change.
//!
//! How it starts: `unshare --mount --pid --uts --ipc --fork --kill-child`
//! runs [`INIT_SCRIPT`] as the new PID namespace's first process. The script
//! mounts the overlay (inside the new mount namespace only, whose mounts are
//! private: nothing is ever mounted in the host's namespace), a fresh
//! `/proc`, the host's `/dev` and `/sys` (recursive binds) with a fresh
//! `/dev/shm`, then `pivot_root`s into the overlay, detaches the old root and
//! execs sshd, which becomes PID 1 of the sandbox (sshd reaps every child, so
//! orphaned daemons do not pile up as zombies). The network namespace is the
//! host's, so the test reaches the daemon on 127.0.0.1. The daemon's keys,
//! `sshd_config` and `authorized_keys` are in its temporary directory under
//! `/tmp`, which the sandbox sees through the lower layer (so its `/tmp` is
//! the host's, copy-on-write like the rest, not a fresh tmpfs); its log is
//! the descriptor the host opened. When sshd (PID 1) exits, the kernel kills
//! everything else in the sandbox and the namespaces and the overlay go with
//! it; `unshare` gets `PR_SET_PDEATHSIG` from the fixture and passes SIGKILL
//! on to PID 1 (`--kill-child`), so a dying test process takes its sandboxes
//! along. Stopping the daemon waits for the sandbox to be gone before the
//! temporary directory (upper layer included) is removed. A restarted daemon
//! gets a new sandbox on the same upper layer: the changes survive, like a
//! rebooted machine's.
//!
//! What is and is not isolated on this machine (root on ext4, no systemd):
//! files written in the sandbox never reach the host, and a file the sandbox
//! has changed (copied up) no longer follows the host's copy. A file the
//! sandbox has *not* changed is read from the host's `/` as it is now, so
//! host changes after start show through (overlayfs has no snapshot, and
//! ext4 cannot make one); the fixture relies on that for `authorized_keys`
//! written after start. `/dev` and `/sys` are the host's (writes to them, to
//! `/proc/sys` or to cgroups change the host), the network is the host's
//! (ports, interfaces, firewall), and there is no init system: services need
//! a provider that works without systemd. The overlay's own upper and work
//! directories, seen from inside through the lower layer, fail with ELOOP.
//! Needs root, like the rest of the fixture, and the `overlay` filesystem.
//! `pivot_root` works here because `/` is a real mount (ext4), not the
//! initramfs, so no `chroot` fallback is needed; overlayfs accepts upper
//! and work directories inside the lower `/` (one ext4 filesystem).

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use super::daemon::Sshd;
use super::process::ProcessId;
use super::util::{create_dir, fail, set_mode};

/// How long a stopped sandbox may take to disappear (processes, mounts).
const TEARDOWN_TIMEOUT: Duration = Duration::from_secs(10);

/// The sandbox's first process: `sh -c INIT_SCRIPT ferry-sandbox-init BOX
/// COMMAND...` mounts the overlay on `BOX/root` (layers `BOX/upper`,
/// `BOX/work`), makes it the root and execs `COMMAND`. Every failure ends
/// it with the message on stderr, which is the daemon's log.
const INIT_SCRIPT: &str = r#"set -eu
box=$1
shift
mount -t overlay ferry-sandbox -o "lowerdir=/,upperdir=$box/upper,workdir=$box/work" "$box/root"
mount -t proc -o nosuid,nodev,noexec proc "$box/root/proc"
mount --rbind /dev "$box/root/dev"
mount -t tmpfs -o nosuid,nodev,mode=1777 shm "$box/root/dev/shm"
mount --rbind /sys "$box/root/sys"
cd "$box/root"
pivot_root . .
umount -l .
cd /
exec "$@"
"#;

/// Creates the overlay's directories in the daemon's temporary directory.
pub(super) fn prepare(dir: &Path) {
    let sandbox = box_dir(dir);
    for sub in ["upper", "work", "root"] {
        create_dir(&sandbox.join(sub));
    }
    // The upper layer's root becomes the sandbox's `/`, and takes its mode.
    set_mode(&sandbox.join("upper"), 0o755);
    set_mode(&sandbox.join("root"), 0o755);
}

/// Wraps a daemon's command line so that it runs as PID 1 of a fresh
/// sandbox whose directories [`prepare`] made in `dir`.
pub(super) fn wrap(dir: &Path, command: Vec<OsString>) -> Vec<OsString> {
    let mut argv: Vec<OsString> = [
        "unshare",
        "--mount",
        "--pid",
        "--uts",
        "--ipc",
        "--fork",
        "--kill-child",
        "--propagation",
        "private",
        "--",
        "/bin/sh",
        "-c",
        INIT_SCRIPT,
        "ferry-sandbox-init",
    ]
    .into_iter()
    .map(OsString::from)
    .collect();
    argv.push(box_dir(dir).into_os_string());
    argv.extend(command);
    argv
}

/// The sandbox's PID 1 (the daemon) while `launcher` (the `unshare` process
/// the fixture spawned) runs.
pub(super) fn init_of(launcher: u32) -> Option<ProcessId> {
    ProcessId::first_child_of(launcher)
}

/// Waits until the sandbox whose PID 1 was `init` is gone: once PID 1 has
/// exited, the kernel has already ended every other process of its PID
/// namespace, and the last of them took the mount namespace and the overlay
/// with it. Panics after [`TEARDOWN_TIMEOUT`].
pub(super) fn wait_gone(init: ProcessId) {
    let deadline = Instant::now() + TEARDOWN_TIMEOUT;
    while init.is_alive() {
        if Instant::now() >= deadline {
            fail(format!(
                "sandbox init {} still running {} s after its daemon was stopped",
                init.pid,
                TEARDOWN_TIMEOUT.as_secs()
            ));
        }
        thread::sleep(Duration::from_millis(10));
    }
}

fn box_dir(dir: &Path) -> PathBuf {
    dir.join("sandbox")
}

/// The host's view of a sandboxed daemon's throwaway root; get it with
/// [`Sshd::sandbox`]. Valid while the daemon runs (methods panic otherwise).
#[derive(Clone, Copy, Debug)]
pub struct Sandbox<'a> {
    sshd: &'a Sshd,
}

impl Sshd {
    /// Whether this daemon runs in a throwaway root (see
    /// [`SshdBuilder::sandboxed`](super::SshdBuilder::sandboxed)).
    pub fn is_sandboxed(&self) -> bool {
        self.spec.sandbox
    }

    /// The throwaway root this daemon runs in. Panics if it was not started
    /// with [`SshdBuilder::sandboxed`](super::SshdBuilder::sandboxed).
    pub fn sandbox(&self) -> Sandbox<'_> {
        assert!(
            self.spec.sandbox,
            "sshd fixture: this daemon is not sandboxed; start it with \
             Sshd::builder().sandboxed().start()"
        );
        Sandbox { sshd: self }
    }
}

impl Sandbox<'_> {
    /// Host pid of the sandbox's PID 1, the listening sshd.
    pub fn init_pid(&self) -> u32 {
        init_of(self.sshd.pid())
            .filter(ProcessId::is_alive)
            .unwrap_or_else(|| fail("the sandbox is not running (daemon stopped?)".into()))
            .pid
    }

    /// The sandbox's `/` as a host path (`/proc/<init>/root`). Absolute
    /// symbolic links met below it resolve against the *host's* root: to
    /// follow links as the sandbox does, use [`Sandbox::command`].
    pub fn root(&self) -> PathBuf {
        PathBuf::from(format!("/proc/{}/root", self.init_pid()))
    }

    /// Host path of `path` (absolute, as seen inside the sandbox). Panics on
    /// paths with `..` components, which could leave the sandbox's root.
    pub fn path(&self, path: impl AsRef<Path>) -> PathBuf {
        let path = path.as_ref();
        let mut host = self.root();
        for component in path.components() {
            match component {
                Component::RootDir | Component::CurDir => {}
                Component::Normal(name) => host.push(name),
                Component::ParentDir | Component::Prefix(_) => fail(format!(
                    "sandbox path {} must not contain `..`",
                    path.display()
                )),
            }
        }
        host
    }

    /// Reads a file of the sandbox from the host.
    pub fn read_to_string(&self, path: impl AsRef<Path>) -> io::Result<String> {
        fs::read_to_string(self.path(path))
    }

    /// Whether `path` exists in the sandbox (without following a final link).
    pub fn exists(&self, path: impl AsRef<Path>) -> bool {
        fs::symlink_metadata(self.path(path)).is_ok()
    }

    /// A command that runs `program` inside the sandbox (its mounts, PIDs,
    /// hostname; working directory `/`) as root, with the test's
    /// environment and stdin closed. Add arguments with `.arg(...)`.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new("nsenter");
        cmd.arg("--target")
            .arg(self.init_pid().to_string())
            .args(["--mount", "--uts", "--ipc", "--pid", "--root", "--wd"])
            .arg("--")
            .arg(program)
            .stdin(Stdio::null());
        cmd
    }

    /// Runs `script` with `sh -c` inside the sandbox; its stdout. Panics with
    /// the exit status and stderr if it fails.
    pub fn sh(&self, script: &str) -> String {
        let output = self
            .command("/bin/sh")
            .arg("-c")
            .arg(script)
            .output()
            .unwrap_or_else(|e| fail(format!("cannot run nsenter: {e}")));
        if !output.status.success() {
            fail(format!(
                "in the sandbox, `{script}` failed ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// The overlay's upper layer on the host: every file the sandbox created
    /// or changed, at its path relative to `/`; deleted files appear as
    /// character devices 0:0 (overlayfs whiteouts). It survives restarts and
    /// is removed with the daemon.
    pub fn upper_dir(&self) -> PathBuf {
        box_dir(self.sshd.dir()).join("upper")
    }
}
