//! A running daemon ([`Sshd`]): its address, keys and files, the known_hosts
//! files handed to clients, OpenSSH client commands against it, and
//! stopping, killing and restarting it. Also the [`shared`] default daemon.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

use tempfile::TempDir;

use super::builder::SshdBuilder;
use super::keys::{KeyType, client_keys, generate_keys};
use super::launch::launch;
use super::process::{exit_registry, terminate_child, unregister_daemon};
use super::sandbox;
use super::util::{fail, fail_with_log, lock, set_mode, tail, write_file};
use super::{KEY_PASSPHRASE, NOPW_USER, PW_USER, USER_PASSWORD};

/// A host key of a daemon: private key file and `"<algorithm> <base64>"`.
#[derive(Clone, Debug)]
pub(super) struct HostKey {
    pub(super) kind: KeyType,
    pub(super) path: PathBuf,
    pub(super) public: String,
}

/// A running OpenSSH daemon with its own keys and configuration.
///
/// Dropping it stops the daemon (and every session it serves) and removes its
/// temporary directory.
#[derive(Debug)]
pub struct Sshd {
    pub(super) spec: SshdBuilder,
    pub(super) host: String,
    pub(super) port: u16,
    pub(super) host_keys: Vec<HostKey>,
    pub(super) known_hosts: PathBuf,
    pub(super) pid: AtomicU32,
    pub(super) child: Mutex<Option<Child>>,
    pub(super) shared: bool,
    pub(super) wrong_known_hosts: OnceLock<PathBuf>,
    pub(super) empty_known_hosts: OnceLock<PathBuf>,
    // Last, so the directory outlives everything that refers to it.
    pub(super) dir: TempDir,
}

/// The daemon with the default configuration, shared by all tests of the
/// binary. It is never dropped; it dies when the test process exits. Do not
/// [`Sshd::kill`], [`Sshd::stop`] or [`Sshd::restart`] it (those panic).
pub fn shared() -> &'static Sshd {
    static SHARED: OnceLock<Sshd> = OnceLock::new();
    SHARED.get_or_init(|| {
        let mut sshd = Sshd::builder().start();
        sshd.shared = true;
        sshd
    })
}

impl Sshd {
    /// A builder with the default configuration: ed25519 host key, SFTP,
    /// public-key and password authentication, no PAM.
    pub fn builder() -> SshdBuilder {
        SshdBuilder::default()
    }

    /// Address the daemon listens on (the first one, for multi-address daemons).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// Port the daemon listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `host():port()` as a socket address.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::new(self.host.parse().expect("listen address"), self.port)
    }

    /// Every address the daemon listens on (all with [`Sshd::port`]).
    pub fn listen_addrs(&self) -> &[Ipv4Addr] {
        &self.spec.listen
    }

    /// Pid of the process the fixture spawned (the latest one after a
    /// restart): the listening sshd, or for a sandboxed daemon the `unshare`
    /// whose child is the sandbox's PID 1 (see [`Sandbox::init_pid`]).
    ///
    /// [`Sandbox::init_pid`]: super::sandbox::Sandbox::init_pid
    pub fn pid(&self) -> u32 {
        self.pid.load(Ordering::SeqCst)
    }

    /// Whether the daemon process is still running.
    pub fn is_running(&self) -> bool {
        let mut child = lock(&self.child);
        child
            .as_mut()
            .is_some_and(|child| matches!(child.try_wait(), Ok(None)))
    }

    /// The daemon's temporary directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The generated `sshd_config`.
    pub fn config_path(&self) -> PathBuf {
        self.dir.path().join("sshd_config")
    }

    /// The daemon's log (its stderr, LogLevel VERBOSE).
    pub fn log_path(&self) -> PathBuf {
        self.dir.path().join("sshd.log")
    }

    /// The whole log so far.
    pub fn log(&self) -> String {
        fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    /// The last `lines` lines of the log.
    pub fn log_tail(&self, lines: usize) -> String {
        tail(&self.log(), lines)
    }

    /// known_hosts file with every host key for every listen address,
    /// as `[host]:port <algorithm> <base64>` lines.
    pub fn known_hosts_path(&self) -> &Path {
        &self.known_hosts
    }

    /// The ed25519 host public key, as `"ssh-ed25519 <base64>"`.
    pub fn host_public_key(&self) -> &str {
        self.host_public_key_of(KeyType::Ed25519)
            .expect("every fixture daemon has an ed25519 host key")
    }

    /// The host public key of the given type, if the daemon has one.
    pub fn host_public_key_of(&self, kind: KeyType) -> Option<&str> {
        self.host_keys
            .iter()
            .find(|key| key.kind == kind)
            .map(|key| key.public.as_str())
    }

    /// The known_hosts lines for [`Sshd::host`] (one per host key).
    pub fn known_hosts_lines(&self) -> String {
        known_hosts_lines(&self.host, self.port, &self.host_keys)
    }

    /// known_hosts file listing, for this host and port, a different key of
    /// each type the daemon has: a client that checks host keys must refuse it.
    pub fn wrong_known_hosts_path(&self) -> &Path {
        self.wrong_known_hosts.get_or_init(|| {
            let kinds: Vec<KeyType> = self.host_keys.iter().map(|key| key.kind).collect();
            let wrong_keys: Vec<HostKey> = generate_keys(&kinds, |kind| {
                (
                    self.dir().join(format!("wrong_host_{}_key", kind.name())),
                    "ferry-test-wrong-host",
                )
            })
            .into_iter()
            .map(|(kind, path, public)| HostKey { kind, path, public })
            .collect();
            let path = self.dir().join("known_hosts_wrong");
            write_file(
                &path,
                &known_hosts_lines(&self.host, self.port, &wrong_keys),
                0o644,
            );
            path
        })
    }

    /// An empty known_hosts file.
    pub fn empty_known_hosts_path(&self) -> &Path {
        self.empty_known_hosts.get_or_init(|| {
            let path = self.dir().join("known_hosts_empty");
            write_file(&path, "", 0o644);
            path
        })
    }

    /// Unencrypted client key of the given type, authorized for [`LOGIN_USERS`].
    pub fn key_path(&self, kind: KeyType) -> PathBuf {
        client_keys().path(kind)
    }

    /// Client ed25519 key encrypted with [`Sshd::key_passphrase`], authorized
    /// for [`LOGIN_USERS`].
    pub fn encrypted_key_path(&self) -> PathBuf {
        client_keys().encrypted_path()
    }

    /// Passphrase of [`Sshd::encrypted_key_path`].
    pub fn key_passphrase(&self) -> &'static str {
        KEY_PASSPHRASE
    }

    /// Login password of `user`, if the fixture knows it (not for root).
    pub fn password(&self, user: &str) -> Option<&'static str> {
        [NOPW_USER, PW_USER]
            .contains(&user)
            .then_some(USER_PASSWORD)
    }

    /// Appends a public key line to `user`'s authorized_keys on this daemon.
    pub fn authorize_key(&self, user: &str, public_key: &str) {
        let path = self.dir().join("authorized_keys").join(user);
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .unwrap_or_else(|e| fail(format!("cannot open {}: {e}", path.display())));
        writeln!(file, "{}", public_key.trim())
            .unwrap_or_else(|e| fail(format!("cannot write {}: {e}", path.display())));
        set_mode(&path, 0o644);
    }

    /// An OpenSSH client command for `user@host -p port` with the ed25519
    /// client key, this daemon's known_hosts, strict host key checking and
    /// BatchMode; append the remote command with `.arg(...)`.
    pub fn openssh_command(&self, user: &str) -> Command {
        openssh_command(
            &self.host,
            self.port,
            user,
            &self.key_path(KeyType::Ed25519),
            &self.known_hosts,
        )
    }

    /// SIGKILLs the daemon and every process below it (all sessions drop at
    /// once, like a crashed or unplugged target) and reaps it.
    pub fn kill(&self) {
        self.refuse_if_shared("kill");
        self.terminate(true);
    }

    /// Stops the daemon: SIGTERM to it and its sessions, SIGKILL to whatever
    /// is left after two seconds. Idempotent.
    pub fn stop(&self) {
        self.refuse_if_shared("stop");
        self.terminate(false);
    }

    /// Stops the daemon if it runs, then starts it again with the same port,
    /// keys and configuration (a target that comes back).
    pub fn restart(&self) {
        self.refuse_if_shared("restart");
        let mut child = lock(&self.child);
        if let Some(mut old) = child.take() {
            self.end(&mut old, false);
        }
        let new = launch(&self.spec, self.dir(), self.port)
            .unwrap_or_else(|e| fail_with_log(&format!("restart: {}", e.message), self.dir()));
        self.pid.store(new.id(), Ordering::SeqCst);
        exit_registry().daemons.push(new.id());
        *child = Some(new);
    }

    fn terminate(&self, kill: bool) {
        if let Some(mut child) = lock(&self.child).take() {
            self.end(&mut child, kill);
        }
    }

    /// Ends the process we spawned and, for a sandboxed daemon, waits until
    /// its sandbox is gone (so that its layers can be reused or removed).
    fn end(&self, child: &mut Child, kill: bool) {
        let sandbox_init = self
            .spec
            .sandbox
            .then(|| sandbox::init_of(child.id()))
            .flatten();
        terminate_child(child, kill);
        unregister_daemon(child.id());
        if let Some(init) = sandbox_init {
            sandbox::wait_gone(init);
        }
    }

    fn refuse_if_shared(&self, what: &str) {
        assert!(
            !self.shared,
            "sshd fixture: {what}() on the shared daemon would break other tests; \
             start your own with Sshd::builder().start()"
        );
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        self.terminate(false);
        let dir = self.dir.path().to_owned();
        exit_registry().dirs.retain(|d| *d != dir);
    }
}

pub(super) fn known_hosts_lines(host: &str, port: u16, keys: &[HostKey]) -> String {
    let name = if port == 22 {
        host.to_owned()
    } else {
        format!("[{host}]:{port}")
    };
    keys.iter()
        .map(|key| format!("{name} {}\n", key.public))
        .collect()
}

/// An OpenSSH client command that ignores the user's and the system's ssh
/// configuration; append the remote command with `.arg(...)`.
pub fn openssh_command(
    host: &str,
    port: u16,
    user: &str,
    key: &Path,
    known_hosts: &Path,
) -> Command {
    let mut cmd = Command::new("ssh");
    cmd.arg("-F")
        .arg("/dev/null")
        .args(["-o", "BatchMode=yes"])
        .args(["-o", "StrictHostKeyChecking=yes"])
        .args(["-o", "IdentitiesOnly=yes"])
        .args(["-o", "ConnectTimeout=10"])
        .args(["-o", "GlobalKnownHostsFile=/dev/null"])
        .arg("-o")
        .arg(format!("UserKnownHostsFile={}", known_hosts.display()))
        .arg("-i")
        .arg(key)
        .arg("-p")
        .arg(port.to_string())
        .arg(format!("{user}@{host}"))
        .stdin(Stdio::null());
    cmd
}
