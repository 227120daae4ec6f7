//! Configuring and starting one daemon: [`SshdBuilder`], the generated
//! `sshd_config`, and picking a port (retrying when another process takes
//! it) before handing the running daemon over as an [`Sshd`].

use std::fmt::Write as _;
use std::net::Ipv4Addr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicU32;
use std::sync::{Mutex, OnceLock};

use super::daemon::{HostKey, Sshd, known_hosts_lines};
use super::keys::{KeyType, client_keys, generate_keys};
use super::launch::{free_port, launch};
use super::machine::ensure_environment;
use super::process::exit_registry;
use super::sandbox;
use super::util::{create_dir, fail_with_log, set_mode, temp_dir, write_file};
use super::{LOGIN_USERS, SFTP_SERVER, SSHD_BIN};

/// Fresh ports to try when another process takes the one we picked.
const BIND_ATTEMPTS: usize = 20;

/// Configuration of an [`Sshd`]; create it with [`Sshd::builder`].
#[derive(Clone, Debug)]
pub struct SshdBuilder {
    pub(super) host_key_types: Vec<KeyType>,
    pub(super) sftp: bool,
    /// The `sftp` subsystem's command, when not OpenSSH's sftp-server.
    pub(super) sftp_server: Option<String>,
    pub(super) password_auth: bool,
    pub(super) kbd_interactive_auth: bool,
    pub(super) use_pam: Option<bool>,
    pub(super) extra_config: Vec<String>,
    pub(super) listen: Vec<Ipv4Addr>,
    pub(super) fixed_port: Option<u16>,
    pub(super) netns: Option<String>,
    pub(super) host_keys: Option<Vec<HostKey>>,
    pub(super) sandbox: bool,
}

impl Default for SshdBuilder {
    fn default() -> Self {
        SshdBuilder {
            host_key_types: vec![KeyType::Ed25519],
            sftp: true,
            sftp_server: None,
            password_auth: true,
            kbd_interactive_auth: false,
            use_pam: None,
            extra_config: Vec::new(),
            listen: vec![Ipv4Addr::LOCALHOST],
            fixed_port: None,
            netns: None,
            host_keys: None,
            sandbox: false,
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

    /// Runs `command` as the `sftp` subsystem instead of OpenSSH's
    /// sftp-server (a hostile server, in tests of what ferry accepts).
    pub fn sftp_server(mut self, command: &str) -> Self {
        self.sftp = true;
        self.sftp_server = Some(command.to_string());
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

    /// Runs the daemon as PID 1 of a throwaway copy of this machine's root
    /// (an overlay on `/`, in its own mount, PID, UTS and IPC namespaces;
    /// see `sandbox.rs`), still reachable on 127.0.0.1. Logins can change
    /// anything there without changing the host; [`Sshd::sandbox`] reads
    /// its files and runs commands in it from the host.
    pub fn sandboxed(mut self) -> Self {
        self.sandbox = true;
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
        if self.sandbox {
            sandbox::prepare(dir.path());
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
    // bash sources ~/.bashrc for commands sshd starts (Debian builds it so)
    // unless SHLVL says it is already nested. The machine's own dotfiles
    // (root's may run `pyenv rehash`, which takes a lock that a daemon
    // killed mid-login leaves behind) must not decide how long a test's
    // logins take.
    c += "SetEnv SHLVL=1\n";
    c += "PrintMotd no\n";
    c += "PrintLastLog no\n";
    c += "X11Forwarding no\n";
    c += "UseDNS no\n";
    if spec.sftp {
        let server = spec.sftp_server.as_deref().unwrap_or(SFTP_SERVER);
        let _ = writeln!(c, "Subsystem sftp {server}");
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
