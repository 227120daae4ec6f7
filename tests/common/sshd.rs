//! Real OpenSSH servers for integration tests.
//!
//! [`Sshd`] runs Debian's `/usr/sbin/sshd -D -e` on a free loopback port with
//! its own temporary directory: host keys, `sshd_config`, per-user
//! `authorized_keys`, known_hosts files for the client, the pid file and the
//! daemon's log. Client keys of every type (plus a passphrase-protected
//! ed25519 key) are generated once per test process ([`client_keys`]) and
//! authorized for `root`, [`NOPW_USER`] and [`PW_USER`]. Those two local
//! accounts, their password and their sudo rules are created on first use,
//! idempotently and under a lock file shared by test binaries that run in
//! parallel. [`shared`] gives every test of a binary the same daemon with the
//! default configuration; [`Fleet`] serves hundreds of targets from a handful
//! of daemons; [`JumpPair`] puts a jump host and an inner host into a private
//! network namespace for ProxyJump tests.
//!
//! Daemons are spawned from one thread that lives as long as the process, with
//! `PR_SET_PDEATHSIG`, so they die with the test process even if it is killed.
//! An `atexit` hook also kills the process tree of every daemon still running
//! (statics are never dropped) and removes the temporary directories. All of
//! this needs root. Setup failures panic with a message that includes the tail
//! of the daemon's log.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard, Once, OnceLock, PoisonError, TryLockError, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// The OpenSSH daemon the fixture runs.
pub const SSHD_BIN: &str = "/usr/sbin/sshd";
/// The SFTP server configured as the `sftp` subsystem.
pub const SFTP_SERVER: &str = "/usr/lib/openssh/sftp-server";
/// Local user allowed to run anything with sudo without a password.
pub const NOPW_USER: &str = "ferry-nopw";
/// Local user allowed to run anything with sudo after typing [`USER_PASSWORD`].
pub const PW_USER: &str = "ferry-pw";
/// Login (and sudo) password of both [`NOPW_USER`] and [`PW_USER`].
pub const USER_PASSWORD: &str = "ferry-Test-pw-7";
/// Users whose `authorized_keys` hold every client key.
pub const LOGIN_USERS: [&str; 3] = ["root", NOPW_USER, PW_USER];
/// Passphrase of [`ClientKeys::encrypted_path`].
pub const KEY_PASSPHRASE: &str = "ferry test passphrase";
/// Port of the jump host in a [`JumpPair`] (on its veth address).
pub const JUMP_PORT: u16 = 2222;
/// Port of the inner host in a [`JumpPair`] (on the namespace's 127.0.0.1).
pub const INNER_PORT: u16 = 2200;

/// How long a daemon may take to accept connections and send its banner.
const READY_TIMEOUT: Duration = Duration::from_secs(10);
/// How long [`Sshd::stop`] waits after SIGTERM before it uses SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(2);
/// sshd's `MAX_LISTEN_SOCKS`: one daemon listens on at most this many sockets.
const MAX_LISTEN_SOCKS: usize = 16;
/// Fresh ports to try when another process takes the one we picked.
const BIND_ATTEMPTS: usize = 20;
/// Log lines quoted in panic messages.
const LOG_TAIL_LINES: usize = 40;
/// Drop-in file with the test users' sudo rules.
const SUDOERS_PATH: &str = "/etc/sudoers.d/ferry-test";
/// Network namespaces created here are named `<prefix><pid>-<n>`.
const NETNS_PREFIX: &str = "ferry-test-";
/// Temporary directories created here are named `<prefix><kind>-<pid>-<random>`.
const TEMP_DIR_PREFIX: &str = "ferry-fixture-";

/// Type of an SSH key, for host keys and client keys alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyType {
    Ed25519,
    Ecdsa,
    Rsa,
}

impl KeyType {
    /// Every key type, ed25519 first.
    pub const ALL: [KeyType; 3] = [KeyType::Ed25519, KeyType::Ecdsa, KeyType::Rsa];

    /// The name `ssh-keygen -t` takes, also used in file names.
    pub fn name(self) -> &'static str {
        match self {
            KeyType::Ed25519 => "ed25519",
            KeyType::Ecdsa => "ecdsa",
            KeyType::Rsa => "rsa",
        }
    }
}

// ---------------------------------------------------------------------------
// Client keys
// ---------------------------------------------------------------------------

/// Client key pairs shared by every fixture of the test process.
#[derive(Debug)]
pub struct ClientKeys {
    dir: PathBuf,
    public: HashMap<KeyType, String>,
    encrypted_public: String,
}

impl ClientKeys {
    /// Directory holding the keys.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Unencrypted private key of the given type (OpenSSH format).
    pub fn path(&self, kind: KeyType) -> PathBuf {
        self.dir.join(format!("id_{}", kind.name()))
    }

    /// Public key of the given type, as `"<algorithm> <base64>"`.
    pub fn public_key(&self, kind: KeyType) -> &str {
        &self.public[&kind]
    }

    /// Private ed25519 key encrypted with [`KEY_PASSPHRASE`].
    pub fn encrypted_path(&self) -> PathBuf {
        self.dir.join("id_ed25519_encrypted")
    }

    /// Public half of [`ClientKeys::encrypted_path`].
    pub fn encrypted_public_key(&self) -> &str {
        &self.encrypted_public
    }

    /// Passphrase of [`ClientKeys::encrypted_path`].
    pub fn passphrase(&self) -> &'static str {
        KEY_PASSPHRASE
    }

    /// `authorized_keys` content listing every client key.
    fn authorized_keys(&self) -> String {
        let mut content = String::new();
        for kind in KeyType::ALL {
            let _ = writeln!(
                content,
                "{} ferry-test-{}",
                self.public_key(kind),
                kind.name()
            );
        }
        let _ = writeln!(content, "{} ferry-test-encrypted", self.encrypted_public);
        content
    }
}

/// The process-wide client keys, generated on first use.
pub fn client_keys() -> &'static ClientKeys {
    static KEYS: OnceLock<ClientKeys> = OnceLock::new();
    KEYS.get_or_init(|| {
        install_exit_hook();
        let dir = temp_dir("keys").keep();
        exit_registry().dirs.push(dir.clone());
        // RSA generation dominates; run ssh-keygen concurrently.
        let (public, encrypted_public) = thread::scope(|scope| {
            let encrypted = scope.spawn(|| {
                generate_key(
                    KeyType::Ed25519,
                    &dir.join("id_ed25519_encrypted"),
                    KEY_PASSPHRASE,
                    "ferry-test-client-encrypted",
                )
            });
            let public: HashMap<KeyType, String> = generate_keys(&KeyType::ALL, |kind| {
                (dir.join(format!("id_{}", kind.name())), "ferry-test-client")
            })
            .into_iter()
            .map(|(kind, _, public)| (kind, public))
            .collect();
            (
                public,
                encrypted.join().expect("ssh-keygen thread panicked"),
            )
        });
        ClientKeys {
            dir,
            public,
            encrypted_public,
        }
    })
}

// ---------------------------------------------------------------------------
// Single daemon
// ---------------------------------------------------------------------------

/// A host key of a daemon: private key file and `"<algorithm> <base64>"`.
#[derive(Clone, Debug)]
struct HostKey {
    kind: KeyType,
    path: PathBuf,
    public: String,
}

/// Configuration of an [`Sshd`]; create it with [`Sshd::builder`].
#[derive(Clone, Debug)]
pub struct SshdBuilder {
    host_key_types: Vec<KeyType>,
    sftp: bool,
    password_auth: bool,
    kbd_interactive_auth: bool,
    use_pam: Option<bool>,
    extra_config: Vec<String>,
    listen: Vec<Ipv4Addr>,
    fixed_port: Option<u16>,
    netns: Option<String>,
    host_keys: Option<Vec<HostKey>>,
}

impl Default for SshdBuilder {
    fn default() -> Self {
        SshdBuilder {
            host_key_types: vec![KeyType::Ed25519],
            sftp: true,
            password_auth: true,
            kbd_interactive_auth: false,
            use_pam: None,
            extra_config: Vec::new(),
            listen: vec![Ipv4Addr::LOCALHOST],
            fixed_port: None,
            netns: None,
            host_keys: None,
        }
    }
}

impl SshdBuilder {
    /// Adds a host key of this type (an ed25519 host key is always present).
    pub fn host_key(mut self, kind: KeyType) -> Self {
        if !self.host_key_types.contains(&kind) {
            self.host_key_types.push(kind);
        }
        self
    }

    /// Gives the daemon ed25519, ecdsa and rsa host keys.
    pub fn all_host_keys(self) -> Self {
        self.host_key(KeyType::Ecdsa).host_key(KeyType::Rsa)
    }

    /// Configures the `sftp` subsystem (default: yes).
    pub fn sftp(mut self, enabled: bool) -> Self {
        self.sftp = enabled;
        self
    }

    /// Sets `PasswordAuthentication` (default: yes).
    pub fn password_auth(mut self, enabled: bool) -> Self {
        self.password_auth = enabled;
        self
    }

    /// Sets `KbdInteractiveAuthentication` (default: no); enabling it also
    /// enables PAM unless [`SshdBuilder::use_pam`] says otherwise, because
    /// sshd's keyboard-interactive password prompts come from PAM.
    pub fn kbd_interactive_auth(mut self, enabled: bool) -> Self {
        self.kbd_interactive_auth = enabled;
        self
    }

    /// Sets `UsePAM` explicitly (default: only with keyboard-interactive).
    pub fn use_pam(mut self, enabled: bool) -> Self {
        self.use_pam = Some(enabled);
        self
    }

    /// Adds a raw `sshd_config` line, e.g. `"MaxSessions 2"`. These lines
    /// come first in the file, so they override the fixture's defaults (sshd
    /// keeps the first value it reads for most keywords).
    pub fn config(mut self, line: impl Into<String>) -> Self {
        self.extra_config.push(line.into());
        self
    }

    /// Generates the keys, writes the configuration, starts the daemon and
    /// waits until it sends its SSH banner. Panics on failure.
    pub fn start(self) -> Sshd {
        ensure_environment();
        let keys = client_keys();
        let dir = temp_dir("sshd");
        // sshd reads authorized_keys with the privileges of the target user.
        set_mode(dir.path(), 0o755);
        exit_registry().dirs.push(dir.path().to_owned());

        let host_keys = self.host_keys.clone().unwrap_or_else(|| {
            generate_keys(&self.host_key_types, |kind| {
                (
                    dir.path().join(format!("ssh_host_{}_key", kind.name())),
                    "ferry-test-host",
                )
            })
            .into_iter()
            .map(|(kind, path, public)| HostKey { kind, path, public })
            .collect()
        });

        let authorized = dir.path().join("authorized_keys");
        create_dir(&authorized);
        set_mode(&authorized, 0o755);
        for user in LOGIN_USERS {
            write_file(&authorized.join(user), &keys.authorized_keys(), 0o644);
        }

        let mut failures = Vec::new();
        let (port, child) = loop {
            let port = self.fixed_port.unwrap_or_else(|| free_port(&self.listen));
            let config = sshd_config(&self, dir.path(), &host_keys, port);
            write_file(&dir.path().join("sshd_config"), &config, 0o644);
            match launch(&self, dir.path(), port) {
                Ok(child) => break (port, child),
                Err(e) if e.port_taken && self.fixed_port.is_none() => {
                    failures.push(e.message);
                    if failures.len() >= BIND_ATTEMPTS {
                        fail_with_log(
                            &format!("no free port after {BIND_ATTEMPTS} attempts: {failures:?}"),
                            dir.path(),
                        );
                    }
                }
                Err(e) => fail_with_log(&e.message, dir.path()),
            }
        };

        let known_hosts = dir.path().join("known_hosts");
        let mut lines = String::new();
        for addr in &self.listen {
            lines += &known_hosts_lines(&addr.to_string(), port, &host_keys);
        }
        write_file(&known_hosts, &lines, 0o644);

        let sshd = Sshd {
            host: self.listen[0].to_string(),
            port,
            host_keys,
            known_hosts,
            pid: AtomicU32::new(child.id()),
            child: Mutex::new(Some(child)),
            shared: false,
            wrong_known_hosts: OnceLock::new(),
            empty_known_hosts: OnceLock::new(),
            spec: self,
            dir,
        };
        exit_registry().daemons.push(sshd.pid());
        sshd
    }
}

/// A running OpenSSH daemon with its own keys and configuration.
///
/// Dropping it stops the daemon (and every session it serves) and removes its
/// temporary directory.
#[derive(Debug)]
pub struct Sshd {
    spec: SshdBuilder,
    host: String,
    port: u16,
    host_keys: Vec<HostKey>,
    known_hosts: PathBuf,
    pid: AtomicU32,
    child: Mutex<Option<Child>>,
    shared: bool,
    wrong_known_hosts: OnceLock<PathBuf>,
    empty_known_hosts: OnceLock<PathBuf>,
    // Last, so the directory outlives everything that refers to it.
    dir: TempDir,
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

    /// Pid of the listening sshd process (the latest one after a restart).
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
            terminate_child(&mut old, false);
            unregister_daemon(old.id());
        }
        let new = launch(&self.spec, self.dir(), self.port)
            .unwrap_or_else(|e| fail_with_log(&format!("restart: {}", e.message), self.dir()));
        self.pid.store(new.id(), Ordering::SeqCst);
        exit_registry().daemons.push(new.id());
        *child = Some(new);
    }

    fn terminate(&self, kill: bool) {
        if let Some(mut child) = lock(&self.child).take() {
            terminate_child(&mut child, kill);
            unregister_daemon(child.id());
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

/// Writes the configuration file content for a daemon.
fn sshd_config(spec: &SshdBuilder, dir: &Path, host_keys: &[HostKey], port: u16) -> String {
    let yes_no = |enabled: bool| if enabled { "yes" } else { "no" };
    let use_pam = spec.use_pam.unwrap_or(spec.kbd_interactive_auth);
    let mut c = String::from("# Generated by ferry's sshd test fixture (tests/common/sshd.rs).\n");
    for line in &spec.extra_config {
        let _ = writeln!(c, "{line}");
    }
    let _ = writeln!(c, "Port {port}");
    for addr in &spec.listen {
        let _ = writeln!(c, "ListenAddress {addr}");
    }
    c += "AddressFamily inet\n";
    for key in host_keys {
        let _ = writeln!(c, "HostKey {}", key.path.display());
    }
    let _ = writeln!(c, "PidFile {}", dir.join("sshd.pid").display());
    let _ = writeln!(
        c,
        "AuthorizedKeysFile {}/%u",
        dir.join("authorized_keys").display()
    );
    c += "StrictModes no\n";
    let _ = writeln!(c, "UsePAM {}", yes_no(use_pam));
    c += "LogLevel VERBOSE\n";
    c += "PermitRootLogin yes\n";
    c += "PubkeyAuthentication yes\n";
    let _ = writeln!(c, "PasswordAuthentication {}", yes_no(spec.password_auth));
    let _ = writeln!(
        c,
        "KbdInteractiveAuthentication {}",
        yes_no(spec.kbd_interactive_auth)
    );
    c += "PermitEmptyPasswords no\n";
    // Fleets and parallel tests open many connections at once; the default
    // (10:30:100) would randomly drop unauthenticated ones.
    c += "MaxStartups 1024\n";
    if sshd_version() >= (9, 8) {
        // Failed logins by one test must not lock other tests out of 127.0.0.1.
        c += "PerSourcePenalties no\n";
    }
    c += "PrintMotd no\n";
    c += "PrintLastLog no\n";
    c += "X11Forwarding no\n";
    c += "UseDNS no\n";
    if spec.sftp {
        let _ = writeln!(c, "Subsystem sftp {SFTP_SERVER}");
    }
    c
}

/// The installed sshd's (major, minor) version, or (0, 0) if unknown.
fn sshd_version() -> (u32, u32) {
    static VERSION: OnceLock<(u32, u32)> = OnceLock::new();
    *VERSION.get_or_init(|| {
        let output = Command::new(SSHD_BIN)
            .arg("-V")
            .stdin(Stdio::null())
            .output();
        let text = output
            .map(|o| {
                String::from_utf8_lossy(&o.stderr).into_owned()
                    + &String::from_utf8_lossy(&o.stdout)
            })
            .unwrap_or_default();
        let version = text
            .split("OpenSSH_")
            .nth(1)
            .and_then(|rest| {
                rest.split(|c: char| !(c.is_ascii_digit() || c == '.'))
                    .next()
            })
            .unwrap_or("");
        let mut parts = version.split('.').map(|p| p.parse().unwrap_or(0));
        (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
    })
}

/// Why a launch failed; `port_taken` failures are retried on another port.
struct LaunchError {
    port_taken: bool,
    message: String,
}

/// Spawns the daemon with the configuration already in `dir` and waits until
/// it is ready: its log reports listening on every address, and the first
/// address answers with an SSH banner. On failure the daemon is killed and
/// reaped.
fn launch(spec: &SshdBuilder, dir: &Path, port: u16) -> Result<Child, LaunchError> {
    let log_path = dir.join("sshd.log");
    let log = File::create(&log_path).map_err(|e| LaunchError {
        port_taken: false,
        message: format!("cannot create {}: {e}", log_path.display()),
    })?;
    let log_clone = log.try_clone().map_err(|e| LaunchError {
        port_taken: false,
        message: format!("cannot duplicate the log file handle: {e}"),
    })?;
    let config = dir.join("sshd_config");
    let mut cmd = match &spec.netns {
        Some(ns) => {
            let mut cmd = Command::new("ip");
            cmd.args(["netns", "exec", ns, SSHD_BIN]);
            cmd
        }
        None => Command::new(SSHD_BIN),
    };
    cmd.arg("-D")
        .arg("-e")
        .arg("-f")
        .arg(&config)
        .stdin(Stdio::null())
        .stdout(log_clone)
        .stderr(log);
    let mut child = spawn_daemon(cmd).map_err(|e| LaunchError {
        port_taken: false,
        message: format!("cannot spawn {SSHD_BIN}: {e}"),
    })?;
    match wait_ready(&mut child, spec, &log_path, port) {
        Ok(()) => Ok(child),
        Err(e) => {
            terminate_child(&mut child, true);
            Err(e)
        }
    }
}

fn wait_ready(
    child: &mut Child,
    spec: &SshdBuilder,
    log_path: &Path,
    port: u16,
) -> Result<(), LaunchError> {
    let deadline = Instant::now() + READY_TIMEOUT;
    let listening: Vec<String> = spec
        .listen
        .iter()
        .map(|addr| format!("Server listening on {addr} port {port}."))
        .collect();
    let mut last_problem = String::from("no \"Server listening\" line in the log yet");
    loop {
        let log = fs::read_to_string(log_path).unwrap_or_default();
        let port_taken = log.contains("Address already in use");
        match child.try_wait() {
            Ok(Some(status)) => {
                return Err(LaunchError {
                    port_taken,
                    message: format!("sshd exited ({status}) before it was ready"),
                });
            }
            Ok(None) => {}
            Err(e) => {
                return Err(LaunchError {
                    port_taken: false,
                    message: format!("cannot check the sshd process: {e}"),
                });
            }
        }
        if port_taken {
            return Err(LaunchError {
                port_taken,
                message: format!("port {port} already in use"),
            });
        }
        // The log lines prove that *our* daemon bound and listens on every
        // address (sshd logs them after listen()); the banner proves that its
        // accept loop serves connections (all sockets share that loop).
        if listening.iter().all(|line| log.contains(line)) {
            let first = SocketAddr::new(spec.listen[0].into(), port);
            match probe_banner(spec.netns.as_deref(), first) {
                Ok(()) => return Ok(()),
                Err(e) => last_problem = e,
            }
        }
        if Instant::now() >= deadline {
            return Err(LaunchError {
                port_taken: false,
                message: format!(
                    "sshd not ready after {} s ({last_problem})",
                    READY_TIMEOUT.as_secs()
                ),
            });
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// Connects to `addr` (inside network namespace `netns`, if given) and checks
/// that the server greets with `SSH-2.0-`.
fn probe_banner(netns: Option<&str>, addr: SocketAddr) -> Result<(), String> {
    let Some(netns) = netns else {
        return read_banner(addr);
    };
    let netns = netns.to_owned();
    // setns() moves only the calling thread, so probe from a throwaway thread.
    thread::spawn(move || {
        enter_netns(&netns)?;
        read_banner(addr)
    })
    .join()
    .unwrap_or_else(|_| Err("banner probe thread panicked".into()))
}

fn read_banner(addr: SocketAddr) -> Result<(), String> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(1))
        .map_err(|e| format!("connect to {addr}: {e}"))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(2)))
        .map_err(|e| format!("set_read_timeout: {e}"))?;
    let mut banner = Vec::new();
    let mut byte = [0u8; 1];
    while banner.len() < 255 && !banner.ends_with(b"\n") {
        match stream.read(&mut byte) {
            Ok(0) => break,
            Ok(_) => banner.push(byte[0]),
            Err(e) => return Err(format!("read banner from {addr}: {e}")),
        }
    }
    // Identify ourselves so that sshd logs a plain disconnect, not a protocol error.
    let _ = stream.write_all(b"SSH-2.0-ferry-fixture-probe\r\n");
    if banner.starts_with(b"SSH-2.0-") {
        Ok(())
    } else {
        Err(format!(
            "unexpected banner from {addr}: {:?}",
            String::from_utf8_lossy(&banner)
        ))
    }
}

/// Picks a port that is free on every address in `listen` (bind to port 0,
/// read the port, release it). The caller retries if someone takes it first.
fn free_port(listen: &[Ipv4Addr]) -> u16 {
    for _ in 0..100 {
        let first = TcpListener::bind((listen[0], 0))
            .unwrap_or_else(|e| fail(format!("cannot bind {}:0: {e}", listen[0])));
        let port = first
            .local_addr()
            .unwrap_or_else(|e| fail(format!("local_addr: {e}")))
            .port();
        let others: io::Result<Vec<TcpListener>> = listen[1..]
            .iter()
            .map(|&addr| TcpListener::bind((addr, port)))
            .collect();
        if others.is_ok() {
            return port;
        }
    }
    fail(format!("no port is free on all of {listen:?}"))
}

fn known_hosts_lines(host: &str, port: u16, keys: &[HostKey]) -> String {
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

// ---------------------------------------------------------------------------
// Fleet
// ---------------------------------------------------------------------------

/// Many SSH targets served by a few daemons: each daemon listens on up to 16
/// loopback addresses (127.100.x.y, sshd's MAX_LISTEN_SOCKS limit) on one
/// port, and all of them share one ed25519 host key.
#[derive(Debug)]
pub struct Fleet {
    sshds: Vec<Sshd>,
    targets: Vec<(String, u16)>,
    known_hosts: PathBuf,
    host_public_key: String,
    // Last: the daemons read the host key from here.
    dir: TempDir,
}

impl Fleet {
    /// Starts `n` targets (1..=64000). Panics on failure.
    pub fn start(n: usize) -> Fleet {
        assert!(
            (1..=64_000).contains(&n),
            "sshd fixture: Fleet::start({n}): n must be in 1..=64000"
        );
        ensure_environment();
        let dir = temp_dir("fleet");
        set_mode(dir.path(), 0o755);
        let key_path = dir.path().join("ssh_host_ed25519_key");
        let host_public_key = generate_key(KeyType::Ed25519, &key_path, "", "ferry-test-fleet");
        let host_key = HostKey {
            kind: KeyType::Ed25519,
            path: key_path,
            public: host_public_key.clone(),
        };
        let addrs: Vec<Ipv4Addr> = (0..n)
            .map(|i| Ipv4Addr::new(127, 100, (i / 250) as u8, (i % 250 + 1) as u8))
            .collect();
        let sshds: Vec<Sshd> = thread::scope(|scope| {
            let starting: Vec<_> = addrs
                .chunks(MAX_LISTEN_SOCKS)
                .map(|chunk| {
                    let builder = SshdBuilder {
                        listen: chunk.to_vec(),
                        host_keys: Some(vec![host_key.clone()]),
                        ..SshdBuilder::default()
                    };
                    scope.spawn(move || builder.start())
                })
                .collect();
            starting
                .into_iter()
                .map(|daemon| {
                    daemon
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect()
        });
        let targets: Vec<(String, u16)> = sshds
            .iter()
            .flat_map(|sshd| {
                sshd.listen_addrs()
                    .iter()
                    .map(move |addr| (addr.to_string(), sshd.port()))
            })
            .collect();
        let known_hosts = dir.path().join("known_hosts");
        let lines: String = targets
            .iter()
            .map(|(host, port)| known_hosts_lines(host, *port, std::slice::from_ref(&host_key)))
            .collect();
        write_file(&known_hosts, &lines, 0o644);
        Fleet {
            sshds,
            targets,
            known_hosts,
            host_public_key,
            dir,
        }
    }

    /// Every target as (address, port), in a stable order.
    pub fn targets(&self) -> &[(String, u16)] {
        &self.targets
    }

    /// Number of targets.
    pub fn len(&self) -> usize {
        self.targets.len()
    }

    /// Always false: a fleet has at least one target.
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    /// known_hosts file covering every target.
    pub fn known_hosts_path(&self) -> &Path {
        &self.known_hosts
    }

    /// The host public key all targets share, as `"ssh-ed25519 <base64>"`.
    pub fn host_public_key(&self) -> &str {
        &self.host_public_key
    }

    /// The daemons serving the targets (16 targets each).
    pub fn sshds(&self) -> &[Sshd] {
        &self.sshds
    }
}

// ---------------------------------------------------------------------------
// Jump host in a network namespace
// ---------------------------------------------------------------------------

/// A jump host and an inner host in a private network namespace.
///
/// The namespace is joined to the root namespace by a veth pair on a /30 from
/// 10.251.0.0/16. The jump daemon listens on the namespace side of the veth
/// ([`JUMP_PORT`]); the inner daemon listens only on the namespace's own
/// 127.0.0.1 ([`INNER_PORT`]), so it is reachable through the jump host and
/// not from the test process. Dropping it stops both daemons and deletes the
/// namespace and the veth pair.
#[derive(Debug)]
pub struct JumpPair {
    jump: Sshd,
    inner: Sshd,
    known_hosts: PathBuf,
    // Last: the namespace must outlive the daemons running in it.
    netns: Netns,
}

impl JumpPair {
    /// Creates the namespace and starts both daemons. Panics on failure,
    /// notably if the sandbox does not allow network namespaces.
    pub fn start() -> JumpPair {
        ensure_environment();
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let pid = std::process::id();
        let netns = with_lock("netns", || {
            remove_stale_netns();
            let (host_addr, ns_addr) = free_subnet();
            Netns::create(
                format!("{NETNS_PREFIX}{pid}-{n}"),
                format!("fjh{pid}x{n}"),
                format!("fjn{pid}x{n}"),
                host_addr,
                ns_addr,
            )
        });
        let in_netns = |listen: Ipv4Addr, port: u16| SshdBuilder {
            listen: vec![listen],
            fixed_port: Some(port),
            netns: Some(netns.name.clone()),
            ..SshdBuilder::default()
        };
        let jump = in_netns(netns.ns_addr, JUMP_PORT).start();
        let inner = in_netns(Ipv4Addr::LOCALHOST, INNER_PORT).start();
        let known_hosts = jump.dir().join("known_hosts_jump_pair");
        write_file(
            &known_hosts,
            &(jump.known_hosts_lines() + &inner.known_hosts_lines()),
            0o644,
        );
        JumpPair {
            jump,
            inner,
            known_hosts,
            netns,
        }
    }

    /// The jump host as reachable from the test process: (veth address, port).
    pub fn jump(&self) -> (&str, u16) {
        (self.jump.host(), self.jump.port())
    }

    /// The inner host as seen from the jump host: ("127.0.0.1", port).
    pub fn inner(&self) -> (&str, u16) {
        (self.inner.host(), self.inner.port())
    }

    /// The jump daemon.
    pub fn jump_sshd(&self) -> &Sshd {
        &self.jump
    }

    /// The inner daemon.
    pub fn inner_sshd(&self) -> &Sshd {
        &self.inner
    }

    /// known_hosts file with both hosts' keys (the inner one as `[127.0.0.1]:port`).
    pub fn known_hosts_path(&self) -> &Path {
        &self.known_hosts
    }

    /// Name of the network namespace.
    pub fn netns(&self) -> &str {
        &self.netns.name
    }

    /// Root-namespace end of the veth pair: (interface name, address).
    pub fn host_side(&self) -> (&str, Ipv4Addr) {
        (&self.netns.veth_host, self.netns.host_addr)
    }
}

/// A network namespace plus veth pair, deleted on drop.
#[derive(Debug)]
struct Netns {
    name: String,
    veth_host: String,
    host_addr: Ipv4Addr,
    ns_addr: Ipv4Addr,
}

impl Netns {
    fn create(
        name: String,
        veth_host: String,
        veth_ns: String,
        host_addr: Ipv4Addr,
        ns_addr: Ipv4Addr,
    ) -> Netns {
        if let Err(e) = run(Command::new("ip").args(["netns", "add", &name])) {
            fail(format!(
                "cannot create a network namespace (is `ip netns` permitted in this sandbox?): {e}"
            ));
        }
        exit_registry().netns.push(name.clone());
        // From here on, dropping `netns` (also while panicking) cleans up.
        let netns = Netns {
            name,
            veth_host,
            host_addr,
            ns_addr,
        };
        let (ns, vh, vn) = (&netns.name, &netns.veth_host, veth_ns.as_str());
        let host_cidr = format!("{host_addr}/30");
        let ns_cidr = format!("{ns_addr}/30");
        let steps: [&[&str]; 6] = [
            &[
                "link", "add", vh, "type", "veth", "peer", "name", vn, "netns", ns,
            ],
            &["addr", "add", &host_cidr, "dev", vh],
            &["link", "set", vh, "up"],
            &["-n", ns, "addr", "add", &ns_cidr, "dev", vn],
            &["-n", ns, "link", "set", vn, "up"],
            &["-n", ns, "link", "set", "lo", "up"],
        ];
        for args in steps {
            if let Err(e) = run(Command::new("ip").args(args)) {
                fail(format!("network namespace setup failed: {e}"));
            }
        }
        netns
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        delete_netns(&self.name);
        // Deleting the namespace destroys the veth pair; make sure anyway.
        if Path::new("/sys/class/net").join(&self.veth_host).exists() {
            let _ = run(Command::new("ip").args(["link", "del", &self.veth_host]));
        }
        exit_registry().netns.retain(|n| *n != self.name);
    }
}

/// Kills whatever still runs in the namespace and deletes it.
fn delete_netns(name: &str) {
    if let Ok(pids) = run(Command::new("ip").args(["netns", "pids", name])) {
        for pid in pids
            .split_whitespace()
            .filter_map(|p| p.parse::<i32>().ok())
        {
            // SAFETY: kill(2) has no memory-safety preconditions.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
    let _ = run(Command::new("ip").args(["netns", "del", name]));
}

/// Deletes namespaces left behind by test processes that no longer exist.
fn remove_stale_netns() {
    let Ok(list) = run(Command::new("ip").args(["netns", "list"])) else {
        return;
    };
    for name in list
        .lines()
        .filter_map(|line| line.split_whitespace().next())
    {
        let Some(owner) = name
            .strip_prefix(NETNS_PREFIX)
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{owner}")).exists() {
            delete_netns(name);
        }
    }
}

/// The first 10.251.x.y/30 whose host address is unused: (host side, namespace side).
/// Must be called under the "netns" lock, until the address is assigned.
fn free_subnet() -> (Ipv4Addr, Ipv4Addr) {
    let used = run(Command::new("ip").args(["-4", "-o", "addr", "show"]))
        .unwrap_or_else(|e| fail(format!("cannot list addresses: {e}")));
    for k in 0..16_384u32 {
        let base = u32::from(Ipv4Addr::new(10, 251, 0, 0)) + 4 * k;
        let host = Ipv4Addr::from(base + 1);
        if !used.contains(&format!("inet {host}/")) {
            return (host, Ipv4Addr::from(base + 2));
        }
    }
    fail("no free /30 left in 10.251.0.0/16".into())
}

fn enter_netns(name: &str) -> Result<(), String> {
    let path = format!("/run/netns/{name}");
    let file = File::open(&path).map_err(|e| format!("open {path}: {e}"))?;
    // SAFETY: setns(2) on a namespace file descriptor we own; it only affects
    // the calling thread's network namespace.
    if unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(format!("setns({path}): {}", io::Error::last_os_error()));
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Machine setup: users, sudo, privilege separation directory
// ---------------------------------------------------------------------------

/// One-time, idempotent preparation of the machine for this process.
fn ensure_environment() {
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
fn with_lock<R>(name: &str, f: impl FnOnce() -> R) -> R {
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

// ---------------------------------------------------------------------------
// Processes: spawning, killing trees, cleanup at exit
// ---------------------------------------------------------------------------

type SpawnRequest = (Command, mpsc::Sender<io::Result<Child>>);

/// Spawns a daemon from a thread that lives as long as the process, with
/// PR_SET_PDEATHSIG set to SIGKILL: the kernel sends that signal when the
/// spawning *thread* exits, so spawning from short-lived test threads would
/// kill shared daemons too early.
fn spawn_daemon(mut cmd: Command) -> io::Result<Child> {
    static KEEPER: OnceLock<mpsc::Sender<SpawnRequest>> = OnceLock::new();
    let keeper = KEEPER.get_or_init(|| {
        let (requests, incoming) = mpsc::channel::<SpawnRequest>();
        thread::Builder::new()
            .name("ferry-sshd-keeper".into())
            .spawn(move || {
                for (mut cmd, reply) in incoming {
                    let _ = reply.send(cmd.spawn());
                }
            })
            .unwrap_or_else(|e| fail(format!("cannot start the keeper thread: {e}")));
        requests
    });
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the hook runs between fork and exec and only makes
    // async-signal-safe system calls; it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(io::Error::last_os_error());
            }
            // The parent may have died before prctl() took effect.
            if libc::getppid() != parent {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
    let (reply, response) = mpsc::channel();
    keeper
        .send((cmd, reply))
        .map_err(|_| io::Error::other("keeper thread is gone"))?;
    response
        .recv()
        .map_err(|_| io::Error::other("keeper thread is gone"))?
}

/// Ends a daemon we spawned and reaps it. `kill`: SIGKILL the whole tree at
/// once. Otherwise SIGTERM the tree, then SIGKILL what is left after
/// [`STOP_GRACE`].
fn terminate_child(child: &mut Child, kill: bool) {
    // Until it is reaped, the pid cannot be reused, so signalling it is safe.
    if !matches!(child.try_wait(), Ok(None)) {
        return;
    }
    let root = child.id();
    if kill {
        signal_tree(root, libc::SIGKILL);
    } else {
        let tree = signal_tree(root, libc::SIGTERM);
        let deadline = Instant::now() + STOP_GRACE;
        while Instant::now() < deadline && tree.iter().any(ProcessId::is_alive) {
            thread::sleep(Duration::from_millis(10));
        }
        for process in tree.iter().filter(|p| p.is_alive()) {
            process.signal(libc::SIGKILL);
        }
    }
    let _ = child.wait();
}

/// A process identified by pid and start time, so a recycled pid is not
/// mistaken for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct ProcessId {
    pid: u32,
    start: u64,
}

impl ProcessId {
    fn is_alive(&self) -> bool {
        read_stat(self.pid).is_some_and(|(_, start, state)| start == self.start && state != 'Z')
    }

    fn signal(&self, signal: i32) {
        if read_stat(self.pid).is_some_and(|(_, start, _)| start == self.start) {
            // SAFETY: kill(2) has no memory-safety preconditions.
            unsafe { libc::kill(self.pid as i32, signal) };
        }
    }
}

/// (parent pid, start time, state) of a process, from /proc/<pid>/stat.
fn read_stat(pid: u32) -> Option<(u32, u64, char)> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid ... starttime(22nd field)"; comm may contain spaces.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    let ppid = fields.get(1)?.parse().ok()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((ppid, start, state))
}

/// `root` and all its descendants.
fn process_tree(root: u32) -> Vec<ProcessId> {
    let mut children: HashMap<u32, Vec<ProcessId>> = HashMap::new();
    let mut root_id = None;
    if let Ok(entries) = fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
                continue;
            };
            let Some((ppid, start, _)) = read_stat(pid) else {
                continue;
            };
            let id = ProcessId { pid, start };
            if pid == root {
                root_id = Some(id);
            }
            children.entry(ppid).or_default().push(id);
        }
    }
    let mut tree: Vec<ProcessId> = root_id.into_iter().collect();
    let mut next = 0;
    while next < tree.len() {
        if let Some(kids) = children.get(&tree[next].pid) {
            tree.extend(kids);
        }
        next += 1;
    }
    tree
}

/// Sends `signal` to `root` and all its descendants. They are SIGSTOPped
/// first, so none can fork or be reparented (escaping the tree) in between;
/// they are SIGCONTinued afterwards so that they can act on the signal.
fn signal_tree(root: u32, signal: i32) -> Vec<ProcessId> {
    let mut frozen: Vec<ProcessId> = Vec::new();
    let mut seen: HashSet<ProcessId> = HashSet::new();
    loop {
        let fresh: Vec<ProcessId> = process_tree(root)
            .into_iter()
            .filter(|p| seen.insert(*p))
            .collect();
        if fresh.is_empty() {
            break;
        }
        for process in &fresh {
            process.signal(libc::SIGSTOP);
        }
        frozen.extend(fresh);
    }
    for process in &frozen {
        process.signal(signal);
        if signal != libc::SIGKILL {
            process.signal(libc::SIGCONT);
        }
    }
    frozen
}

/// What the exit hook cleans up: daemon pids (not yet reaped), temp dirs and
/// network namespaces.
struct ExitRegistry {
    daemons: Vec<u32>,
    dirs: Vec<PathBuf>,
    netns: Vec<String>,
}

static EXIT_REGISTRY: Mutex<ExitRegistry> = Mutex::new(ExitRegistry {
    daemons: Vec::new(),
    dirs: Vec::new(),
    netns: Vec::new(),
});

fn exit_registry() -> MutexGuard<'static, ExitRegistry> {
    lock(&EXIT_REGISTRY)
}

fn unregister_daemon(pid: u32) {
    exit_registry().daemons.retain(|&p| p != pid);
}

/// Registers (once) an `atexit` hook that cleans up what statics leave behind.
fn install_exit_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        extern "C" fn cleanup_at_exit() {
            let _ = std::panic::catch_unwind(|| {
                let registry = match EXIT_REGISTRY.try_lock() {
                    Ok(registry) => registry,
                    Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
                    Err(TryLockError::WouldBlock) => return,
                };
                for &pid in &registry.daemons {
                    signal_tree(pid, libc::SIGKILL);
                }
                for name in &registry.netns {
                    delete_netns(name);
                }
                for dir in &registry.dirs {
                    let _ = fs::remove_dir_all(dir);
                }
            });
        }
        // SAFETY: registering a function that never unwinds (catch_unwind).
        let rc = unsafe { libc::atexit(cleanup_at_exit) };
        assert_eq!(rc, 0, "sshd fixture: atexit() failed");
    });
}

// ---------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs a command to completion with stdin closed: its stdout, or a
/// description of the failure including its stderr.
fn run(cmd: &mut Command) -> Result<String, String> {
    let output = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(format!(
            "{cmd:?} failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

/// Generates unencrypted key pairs of several types concurrently; `place`
/// gives each one's private key path and comment.
fn generate_keys(
    kinds: &[KeyType],
    place: impl Fn(KeyType) -> (PathBuf, &'static str) + Sync,
) -> Vec<(KeyType, PathBuf, String)> {
    thread::scope(|scope| {
        let jobs: Vec<_> = kinds
            .iter()
            .map(|&kind| {
                let place = &place;
                scope.spawn(move || {
                    let (path, comment) = place(kind);
                    let public = generate_key(kind, &path, "", comment);
                    (kind, path, public)
                })
            })
            .collect();
        jobs.into_iter()
            .map(|job| job.join().expect("ssh-keygen thread panicked"))
            .collect()
    })
}

/// Generates a key pair with ssh-keygen; returns `"<algorithm> <base64>"`.
fn generate_key(kind: KeyType, path: &Path, passphrase: &str, comment: &str) -> String {
    if let Err(e) = run(Command::new("ssh-keygen")
        .args([
            "-q",
            "-t",
            kind.name(),
            "-N",
            passphrase,
            "-C",
            comment,
            "-f",
        ])
        .arg(path))
    {
        fail(e);
    }
    let public_path = PathBuf::from(format!("{}.pub", path.display()));
    let public = fs::read_to_string(&public_path)
        .unwrap_or_else(|e| fail(format!("cannot read {}: {e}", public_path.display())));
    public
        .split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
}

/// A new temporary directory named after `kind` and this process.
fn temp_dir(kind: &str) -> TempDir {
    tempfile::Builder::new()
        .prefix(&format!("{TEMP_DIR_PREFIX}{kind}-{}-", std::process::id()))
        .tempdir()
        .unwrap_or_else(|e| fail(format!("cannot create a temp dir: {e}")))
}

/// Removes temporary directories of test processes that died without
/// cleaning up (killed by a signal, so no drop and no exit hook ran).
fn remove_stale_temp_dirs() {
    let Ok(entries) = fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(owner) = name
            .to_str()
            .and_then(|name| name.strip_prefix(TEMP_DIR_PREFIX))
            .and_then(|rest| rest.split('-').nth(1))
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{owner}")).exists() {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

fn write_file(path: &Path, content: &str, mode: u32) {
    fs::write(path, content)
        .unwrap_or_else(|e| fail(format!("cannot write {}: {e}", path.display())));
    set_mode(path, mode);
}

fn create_dir(path: &Path) {
    fs::create_dir_all(path)
        .unwrap_or_else(|e| fail(format!("cannot create {}: {e}", path.display())));
}

fn set_mode(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
        .unwrap_or_else(|e| fail(format!("cannot chmod {}: {e}", path.display())));
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

fn fail(message: String) -> ! {
    panic!("sshd fixture: {message}")
}

fn fail_with_log(message: &str, dir: &Path) -> ! {
    let log_path = dir.join("sshd.log");
    let log = fs::read_to_string(&log_path).unwrap_or_default();
    panic!(
        "sshd fixture: {message}\n--- last {LOG_TAIL_LINES} lines of {} ---\n{}\n--- end of sshd log ---",
        log_path.display(),
        tail(&log, LOG_TAIL_LINES)
    )
}
