//! The SSH transport, on russh. It owns resolving a target's SSH options
//! together with the user's OpenSSH client config ([`ssh_config`]) into a
//! connection plan, opening one authenticated session per target
//! ([`connect`], [`auth`]) with host keys verified against known_hosts files
//! ([`known_hosts`]), and running commands ([`exec`]) and moving files
//! ([`files`]) over channels of that one session.

pub mod auth;
pub mod connect;
pub mod exec;
pub mod files;
pub mod known_hosts;
pub mod options;
pub mod shell;
pub mod ssh_config;
pub mod tcp;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::{OnceCell, Semaphore};

use self::auth::Auth;
use self::connect::{Endpoint, HostKeys, Plan, Session};
use self::known_hosts::KnownHosts;
use self::options::{HostKeyCheck, SshOptions, expand_home, home};
use super::{
    Command, ConnectIssue, Finished, Identities, OutputFn, Overrides, PosixSettings, Transport,
    TransportError,
};
use crate::inventory::Target;
use crate::inventory::uri::Address;

/// Channels one session runs at once; sshd's MaxSessions defaults to 10.
const CHANNELS_PER_SESSION: usize = 8;

/// The default connect timeout, as Bolt's.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

pub struct Ssh {
    opts: SshOptions,
    settings: PosixSettings,
    session: Option<Session>,
    sftp: OnceCell<Option<russh_sftp::client::SftpSession>>,
    channels: Semaphore,
    /// The long-lived shell for ferry's own scripts, started on first use.
    shell: tokio::sync::Mutex<Option<shell::Shell>>,
    /// Process groups on the target of commands not seen to end.
    running: exec::Running,
}

impl Ssh {
    pub fn new(target: &Target, overrides: &Overrides) -> Result<Ssh, TransportError> {
        let opts = SshOptions::read(target, overrides)?;
        // Running as the login user needs no sudo.
        let run_as = opts
            .run_as
            .clone()
            .filter(|r| Some(&r.user) != opts.user.as_ref());
        // Scripts run as another user, or on a tty, keep a channel each.
        let session_dir = (run_as.is_none() && !opts.tty).then(|| {
            let tmp = opts.tmpdir.as_deref().unwrap_or("/tmp");
            format!(
                "{}/ferry-{}",
                tmp.trim_end_matches('/'),
                super::command::nonce(&target.name)
            )
        });
        Ok(Ssh {
            settings: PosixSettings {
                run_as,
                cache_dir: opts.cache_dir.clone(),
                tmpdir: opts.tmpdir.clone(),
                session_dir,
            },
            opts,
            session: None,
            sftp: OnceCell::new(),
            channels: Semaphore::new(CHANNELS_PER_SESSION),
            shell: tokio::sync::Mutex::new(None),
            running: exec::Running::default(),
        })
    }

    /// Ends what cut-off commands left running on the target: the process
    /// groups recorded in `running` (a tracked command, or the long-lived
    /// shell while a script ran in it).
    async fn stop_cut_off(&self) {
        if let Ok(handle) = self.handle() {
            exec::stop_groups(handle, &self.running.take()).await;
        }
    }

    fn handle(&self) -> Result<&russh::client::Handle<connect::Client>, TransportError> {
        self.session
            .as_ref()
            .map(|s| &s.handle)
            .ok_or_else(|| TransportError::connect(ConnectIssue::Connect, "not connected"))
    }

    /// Runs one of ferry's own scripts in the long-lived shell, starting
    /// it (again, if the last script was cut off) when needed.
    async fn run_in_shell(
        &self,
        handle: &russh::client::Handle<connect::Client>,
        dir: &str,
        command: &Command,
        out: OutputFn<'_>,
    ) -> Result<Finished, TransportError> {
        let script = command
            .render()
            .map_err(|e| TransportError::Command(e.to_string()))?;
        let mut slot = self.shell.lock().await;
        let mut previous = None;
        if let Some(old) = slot.take_if(|s| s.broken()) {
            previous = Some(old.pid());
            old.abandon().await;
        }
        let shell = match slot.as_mut() {
            Some(shell) => shell,
            None => slot.insert(shell::Shell::open(handle, dir, previous).await?),
        };
        shell
            .run(&script, command.stdin().unwrap_or_default(), out)
            .await
    }

    /// Waits for one of the session's channels (sshd's MaxSessions).
    async fn channel_permit(&self) -> Result<tokio::sync::SemaphorePermit<'_>, TransportError> {
        self.channels
            .acquire()
            .await
            .map_err(|e| TransportError::Command(format!("the connection is closing: {e}")))
    }

    async fn sftp(&self) -> Result<Option<&russh_sftp::client::SftpSession>, TransportError> {
        let handle = self.handle()?;
        let s = self.sftp.get_or_try_init(|| files::sftp(handle)).await?;
        Ok(s.as_ref())
    }
}

#[async_trait]
impl Transport for Ssh {
    async fn connect(&mut self) -> Result<(), TransportError> {
        if self.session.is_none() {
            let plan = plan(&self.opts)?;
            self.session = Some(connect::open(&plan).await?);
        }
        Ok(())
    }

    async fn run(&self, command: &Command, out: OutputFn<'_>) -> Result<Finished, TransportError> {
        let mut command = command.clone();
        if command.run_as.is_none() && !command.login_only {
            command.run_as = self.opts.run_as.clone();
        }
        // Running as the login user needs no sudo.
        if command
            .run_as
            .as_ref()
            .map(|r| Some(&r.user) == self.opts.user.as_ref())
            == Some(true)
        {
            command.run_as = None;
        }
        command.tty |= self.opts.tty;
        let timeout = command.timeout.or(self.opts.command_timeout);
        let handle = self.handle()?;
        if let Some(dir) = self
            .settings
            .session_dir
            .as_deref()
            .filter(|_| command.in_session && command.run_as.is_none() && !command.tty)
        {
            let fut = self.run_in_shell(handle, dir, &command, out);
            let result = super::with_timeout(timeout, fut).await;
            if let Err(TransportError::Timeout { .. }) = &result {
                // The script still runs in the shell: end the shell's whole
                // group; the next script starts a new shell.
                if let Some(shell) = self.shell.lock().await.as_ref() {
                    self.running.add(shell.pid());
                }
                self.stop_cut_off().await;
            }
            return result;
        }
        let _permit = self.channel_permit().await?;
        let fut = exec::run_tracked(handle, &command, out, Some(&self.running));
        let result = super::with_timeout(timeout, fut).await;
        if let Err(TransportError::Timeout { .. }) = &result {
            self.stop_cut_off().await;
        }
        result
    }

    async fn upload(&self, src: &Path, dest: &str) -> Result<(), TransportError> {
        let _permit = self.channel_permit().await?;
        match self.sftp().await? {
            Some(sftp) => files::upload_sftp(sftp, src, dest).await,
            None => files::upload_exec(self.handle()?, src, dest).await,
        }
    }

    async fn write_file(&self, bytes: &[u8], dest: &str, mode: u32) -> Result<(), TransportError> {
        let _permit = self.channel_permit().await?;
        match self.sftp().await? {
            Some(sftp) => files::write_sftp(sftp, bytes, dest, mode).await,
            None => files::write_exec(self.handle()?, bytes, dest, mode).await,
        }
    }

    async fn download(&self, src: &str, dest: &Path) -> Result<(), TransportError> {
        let _permit = self.channel_permit().await?;
        let name = Path::new(src.trim_end_matches('/'))
            .file_name()
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("download"));
        let dest = dest.join(name);
        match self.sftp().await? {
            Some(sftp) => files::download_sftp(sftp, src, &dest).await,
            None => files::download_exec(self.handle()?, src, &dest).await,
        }
    }

    fn posix(&self) -> &PosixSettings {
        &self.settings
    }

    async fn close(&mut self) {
        self.stop_cut_off().await;
        if let Some(shell) = self.shell.get_mut().take() {
            shell.close().await;
        }
        if let Some(sftp) = self.sftp.take().flatten() {
            let _ = sftp.close().await;
        }
        if let Some(session) = self.session.take() {
            let _ = session
                .handle
                .disconnect(russh::Disconnect::ByApplication, "", "en")
                .await;
        }
    }
}

/// A transport dropped without `close` (its job was stopped midway) still
/// ends what it left running on the target: the commands it was running
/// and the long-lived shell if a script was in it, from a task of their own
/// that then closes the connection.
impl Drop for Ssh {
    fn drop(&mut self) {
        let mut pids = self.running.take();
        if let Some(shell) = self.shell.get_mut().as_ref().filter(|s| s.is_busy()) {
            pids.push(shell.pid());
        }
        let (Some(session), false) = (self.session.take(), pids.is_empty()) else {
            return;
        };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                exec::stop_groups(&session.handle, &pids).await;
                let _ = session
                    .handle
                    .disconnect(russh::Disconnect::ByApplication, "", "en")
                    .await;
            });
        }
    }
}

/// known_hosts files are read once per process and shared by every target.
fn known_hosts(files: &[PathBuf]) -> Result<Arc<KnownHosts>, TransportError> {
    static CACHE: OnceLock<Mutex<HashMap<Vec<PathBuf>, Arc<KnownHosts>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut cache = cache
        .lock()
        .map_err(|_| TransportError::Config("known_hosts cache poisoned".into()))?;
    if let Some(k) = cache.get(files) {
        return Ok(Arc::clone(k));
    }
    let loaded = Arc::new(
        KnownHosts::load(files)
            .map_err(|e| TransportError::connect(ConnectIssue::HostKey, e.to_string()))?,
    );
    cache.insert(files.to_vec(), Arc::clone(&loaded));
    Ok(loaded)
}

fn host_config(opts: &SshOptions, host: &str) -> Result<ssh_config::HostConfig, TransportError> {
    if !opts.load_config {
        return Ok(ssh_config::HostConfig::default());
    }
    ssh_config::resolve(&home().join(".ssh/config"), host)
        .map_err(|e| TransportError::Config(e.to_string()))
}

fn login_user() -> String {
    std::env::var("USER").unwrap_or_else(|_| "root".into())
}

/// Resolves options and ssh_config into the hops to connect through.
pub fn plan(opts: &SshOptions) -> Result<Plan, TransportError> {
    let cfg = host_config(opts, &opts.host)?;
    let target = Endpoint {
        host: cfg.hostname.clone().unwrap_or_else(|| opts.host.clone()),
        port: opts.port.or(cfg.port).unwrap_or(22),
        user: opts
            .user
            .clone()
            .or(cfg.user.clone())
            .unwrap_or_else(login_user),
    };
    let check = opts
        .host_key_check
        .unwrap_or(match cfg.strict_host_key_checking {
            Some(ssh_config::StrictHostKeyChecking::No) => HostKeyCheck::Off,
            Some(ssh_config::StrictHostKeyChecking::AcceptNew) => HostKeyCheck::AcceptNew,
            _ => HostKeyCheck::Strict,
        });
    let files: Vec<PathBuf> = match &opts.known_hosts_file {
        Some(f) => vec![f.clone()],
        None if !cfg.user_known_hosts_files.is_empty() => cfg.user_known_hosts_files.clone(),
        None => vec![
            home().join(".ssh/known_hosts"),
            home().join(".ssh/known_hosts2"),
            PathBuf::from("/etc/ssh/ssh_known_hosts"),
        ],
    };
    let learn_file = files
        .first()
        .cloned()
        .unwrap_or_else(|| home().join(".ssh/known_hosts"));
    let user_defaults = opts.identities == Identities::UserDefaults;
    let identity_files = if !user_defaults {
        Vec::new()
    } else if cfg.identity_files.is_empty() {
        ["id_ed25519", "id_ecdsa", "id_rsa"]
            .iter()
            .map(|n| home().join(".ssh").join(n))
            .collect()
    } else {
        cfg.identity_files.clone()
    };
    let chain = opts
        .proxyjump
        .clone()
        .unwrap_or_else(|| cfg.proxy_jump.clone());
    let mut jumps = Vec::new();
    for hop in chain {
        let a = Address::parse(&hop)
            .map_err(|e| TransportError::Config(format!("{}: proxyjump {e}", opts.host)))?;
        let hop_cfg = host_config(opts, &a.host)?;
        jumps.push(Endpoint {
            host: hop_cfg.hostname.clone().unwrap_or(a.host),
            port: a.port.or(hop_cfg.port).unwrap_or(22),
            user: a
                .user
                .or(hop_cfg.user)
                .unwrap_or_else(|| target.user.clone()),
        });
    }
    let key = opts.private_key.clone().map(|k| match k {
        options::KeySource::Path(p) => options::KeySource::Path(expand_home(&p.to_string_lossy())),
        other => other,
    });
    Ok(Plan {
        jumps,
        auth: Auth {
            password: opts.password.clone(),
            key,
            passphrase: opts.key_passphrase.clone(),
            identity_files,
            use_agent: user_defaults,
        },
        host_keys: HostKeys {
            check,
            known: if check == HostKeyCheck::Off {
                Arc::new(KnownHosts::default())
            } else {
                known_hosts(&files)?
            },
            learn_file,
        },
        timeout: opts
            .connect_timeout
            .or(cfg.connect_timeout)
            .unwrap_or(DEFAULT_CONNECT_TIMEOUT),
        target,
    })
}
