//! Transports: how ferry reaches a target. This module owns the one small
//! [`Transport`] trait (connect, run a command with live output, upload
//! files or bytes, download, close), the typed errors every transport reports, and the
//! choice of transport for a target. Only the transport modules do network
//! or process I/O on behalf of a target.

pub mod command;
pub mod local;
pub mod network;
pub mod options;
pub mod shell_fns;
pub mod ssh;

use std::path::Path;
use std::time::Duration;

use async_trait::async_trait;

pub use command::{Command, RunAs};

use crate::inventory::Target;

/// Which stream a chunk of output came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Receives output as it arrives.
pub type OutputFn<'a> = &'a mut (dyn FnMut(Stream, &[u8]) + Send);

/// The three ways a connection fails, with Bolt's issue codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnectIssue {
    /// Unreachable, refused, protocol failure.
    Connect,
    /// No offered credential was accepted.
    Auth,
    /// The host key is unknown, does not match, or is revoked.
    HostKey,
}

impl ConnectIssue {
    pub fn code(self) -> &'static str {
        match self {
            ConnectIssue::Connect => "CONNECT_ERROR",
            ConnectIssue::Auth => "AUTH_ERROR",
            ConnectIssue::HostKey => "HOST_KEY_ERROR",
        }
    }
}

/// What went wrong on one target. Messages never hold secrets.
#[derive(Clone, Debug, thiserror::Error)]
pub enum TransportError {
    #[error("{message}")]
    Connect {
        issue: ConnectIssue,
        message: String,
    },
    #[error("{0}")]
    Command(String),
    /// None of the action's implementations suits the target (Bolt's
    /// `NoImplementationError`); the message names the task and target.
    #[error("{0}")]
    NoImplementation(String),
    #[error("{what} timed out after {}s", .after.as_secs())]
    Timeout { what: &'static str, after: Duration },
    #[error("{0}")]
    File(String),
    /// A bad transport option; the message names where it was set.
    #[error("{0}")]
    Config(String),
}

impl TransportError {
    pub fn connect(issue: ConnectIssue, message: impl Into<String>) -> Self {
        TransportError::Connect {
            issue,
            message: message.into(),
        }
    }

    /// Bolt's error kind for this failure.
    pub fn kind(&self) -> &'static str {
        match self {
            TransportError::Connect { .. } => "ferry/connect-error",
            TransportError::Command(_) => "ferry/command-error",
            TransportError::NoImplementation(_) => "bolt/no-implementation",
            TransportError::Timeout { .. } => "ferry/timeout",
            TransportError::File(_) => "ferry/file-error",
            TransportError::Config(_) => "ferry/config-error",
        }
    }

    /// Bolt's issue code, for connection failures.
    pub fn issue_code(&self) -> Option<&'static str> {
        match self {
            TransportError::Connect { issue, .. } => Some(issue.code()),
            _ => None,
        }
    }
}

/// The result of running a command to its end.
#[derive(Clone, Debug, Default)]
pub struct Finished {
    pub exit_code: i32,
    /// The signal that ended the command, if one did.
    pub signal: Option<String>,
}

/// A connection to one target. Every transport implements this.
#[async_trait]
pub trait Transport: Send + Sync {
    /// Opens the connection; later calls reuse it.
    async fn connect(&mut self) -> Result<(), TransportError>;
    /// Runs a command, passing output to `out` as it arrives.
    async fn run(&self, command: &Command, out: OutputFn<'_>) -> Result<Finished, TransportError>;
    /// Copies a local file or directory (recursively, with modes) to `dest`.
    async fn upload(&self, src: &Path, dest: &str) -> Result<(), TransportError>;
    /// Writes bytes held in memory (task files ferry embeds or caches) to
    /// the remote file `dest`, with `mode`; its directory must exist.
    async fn write_file(&self, bytes: &[u8], dest: &str, mode: u32) -> Result<(), TransportError>;
    /// Copies a remote file or directory into the local path `dest`.
    async fn download(&self, src: &str, dest: &Path) -> Result<(), TransportError>;
    /// Closes the connection.
    async fn close(&mut self);
    /// Settings that shape commands built for this target (run-as, cache
    /// and temporary directories).
    fn posix(&self) -> &PosixSettings;
    /// The device CLI, when the target is a network device (which runs CLI
    /// commands and device actions, not POSIX commands, scripts or tasks).
    fn device(&self) -> Option<&network::Network> {
        None
    }
}

/// Per-target settings the executor and task runner need to build commands.
#[derive(Clone, Debug, Default)]
pub struct PosixSettings {
    /// The user commands run as, when it is not the login user.
    pub run_as: Option<RunAs>,
    /// Where task files are cached (`cache-dir`); relative paths are under
    /// the login user's home directory.
    pub cache_dir: Option<String>,
    /// Where temporary directories are made (`tmpdir`).
    pub tmpdir: Option<String>,
    /// Set when the transport keeps one long-lived shell on the target for
    /// scripts marked [`Command::in_session`]: the private directory that
    /// shell makes, owns and removes when the connection closes.
    pub session_dir: Option<String>,
}

/// Runs a command future, failing with `ferry/timeout` after `limit`.
pub async fn with_timeout<F>(limit: Option<Duration>, fut: F) -> Result<Finished, TransportError>
where
    F: std::future::Future<Output = Result<Finished, TransportError>>,
{
    match limit {
        Some(after) => {
            tokio::time::timeout(after, fut)
                .await
                .map_err(|_| TransportError::Timeout {
                    what: "command",
                    after,
                })?
        }
        None => fut.await,
    }
}

/// Settings that the command line lays over every target's config.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub run_as: Option<String>,
    pub connect_timeout: Option<Duration>,
    /// How long each command may run (a job's or request's `timeout`).
    pub command_timeout: Option<Duration>,
    /// Bytes of each output stream a result keeps (`--max-output`, the
    /// server's `max-output`); `None` is the executor's default.
    pub max_output: Option<usize>,
    /// Which credentials beyond the target's own a connection may try.
    pub identities: Identities,
}

/// Whose credentials a connection may offer besides those its target's
/// config names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Identities {
    /// Only the target's configured key and password. The default, and
    /// what `ferry serve` uses: an API request never logs in with the
    /// server's own identity.
    #[default]
    Configured,
    /// Also the ssh-agent's keys and the default `~/.ssh/id_*` files (or
    /// ssh_config's `IdentityFile`s), as OpenSSH does: the CLI user's own.
    UserDefaults,
}

/// Makes the transport a target asks for, checking its options first.
pub fn for_target(
    target: &Target,
    overrides: &Overrides,
) -> Result<Box<dyn Transport>, TransportError> {
    match target.transport().as_str() {
        "local" => Ok(Box::new(local::Local::new(target, overrides)?)),
        "ssh" => Ok(Box::new(ssh::Ssh::new(target, overrides)?)),
        "network" => Ok(Box::new(network::Network::new(target, overrides)?)),
        other => Err(TransportError::Config(format!(
            "{}: transport '{other}' is not supported (ferry has ssh, local and network)",
            target.name
        ))),
    }
}

/// Checks every target's transport options, so that a bad inventory stops
/// the run before anything connects.
pub fn check_options(targets: &[Target], overrides: &Overrides) -> Result<(), TransportError> {
    for t in targets {
        for_target(t, overrides)?;
    }
    Ok(())
}
