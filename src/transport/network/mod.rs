//! The network device transport (`transport: network`): a router's or
//! switch's CLI, reached over SSH. The SSH session is the SSH transport's
//! own ([`crate::transport::ssh::plan`] and [`crate::transport::ssh::connect`]:
//! the same options, authentication and host key checks, jump hosts
//! included); on it, one interactive CLI session ([`session`]) per device,
//! opened when the target connects and reused by every step, reopened only
//! after a command timed out (the device's state then being unknown). What
//! a platform's prompts, paging, privilege and errors look like is
//! [`cli`]'s, as pure functions over text, from the tables of
//! [`platform`]; [`options`] reads `network:`.
//!
//! A device runs CLI commands only: a command action's lines are sent one
//! by one, each line's output is the result's stdout, and the first line
//! the device rejects ends the command with the device's reply on stderr
//! and exit code 1. Scripts, tasks and file transfers need a POSIX shell and fail
//! with a clear error; a remote task (Bolt's `remote: true`) runs on the
//! device's proxy instead (`run-on`, [`options`]), with the device's
//! settings in its `_target` parameter.

pub mod cli;
pub mod config;
pub mod facts;
pub mod options;
pub mod platform;
pub mod resources;
pub mod session;

use std::path::Path;

use async_trait::async_trait;

use self::cli::Dialect;
use self::options::NetworkOptions;
use self::session::{Answer, Cli};
use super::ssh::{self, connect};
use super::{
    Command, Finished, OutputFn, Overrides, PosixSettings, Stream, Transport, TransportError,
};
use crate::inventory::Target;

pub struct Network {
    name: String,
    opts: NetworkOptions,
    settings: PosixSettings,
    /// The SSH session, opened by the first command: a remote task, which
    /// runs on the device's proxy, never reaches the device from here.
    session: tokio::sync::OnceCell<connect::Session>,
    cli: tokio::sync::Mutex<Option<Cli>>,
}

/// A device's CLI as the device actions drive it: one line at a time, each
/// answered by the device's reply and the prompt it returned to.
/// [`Network`] is the real one; a replay of a documented session is
/// another (tests/network_pure.rs).
#[async_trait]
pub trait DeviceCli: Send + Sync {
    /// Runs one CLI line.
    async fn exec(&self, line: &str) -> Result<Answer, TransportError>;
    /// The device's CLI dialect (its platform's commands and prompts).
    fn cli_dialect(&self) -> Dialect;
}

#[async_trait]
impl DeviceCli for Network {
    async fn exec(&self, line: &str) -> Result<Answer, TransportError> {
        Network::exec(self, line).await
    }

    fn cli_dialect(&self) -> Dialect {
        self.dialect()
    }
}

/// What a device target cannot do, as the error a step gets.
pub fn unsupported(target: &str, what: &str) -> TransportError {
    TransportError::Config(format!(
        "{target}: {what} is not available on a network device (transport: network): \
         it runs CLI commands (ferry command run) and device actions only"
    ))
}

impl Network {
    pub fn new(target: &Target, overrides: &Overrides) -> Result<Network, TransportError> {
        Ok(Network {
            name: target.name.clone(),
            opts: NetworkOptions::read(target, overrides)?,
            settings: PosixSettings::default(),
            session: tokio::sync::OnceCell::new(),
            cli: tokio::sync::Mutex::new(None),
        })
    }

    fn dialect(&self) -> Dialect {
        Dialect::new(self.opts.platform, self.opts.prompt.clone())
    }

    async fn open_cli(&self) -> Result<Cli, TransportError> {
        let session = self
            .session
            .get_or_try_init(|| async {
                let plan = ssh::plan(&self.opts.ssh)?;
                connect::open(&plan).await
            })
            .await?;
        Cli::open(
            &session.handle,
            self.dialect(),
            self.opts.enable_password.as_ref(),
            self.opts.command_timeout,
        )
        .await
    }

    /// Runs one CLI line on the device's session, within the command
    /// timeout. A line that times out leaves the session behind: the next
    /// line opens a new one.
    pub async fn exec(&self, line: &str) -> Result<Answer, TransportError> {
        let mut slot = self.cli.lock().await;
        let cli = match slot.as_mut() {
            Some(cli) => cli,
            None => slot.insert(self.open_cli().await?),
        };
        let result = session::within(self.opts.command_timeout, "command", cli.exec(line)).await;
        if result.is_err()
            && let Some(cli) = slot.take()
        {
            cli.close().await;
        }
        result.map(|mut answer| {
            answer.output = self.redact(answer.output);
            answer.error = answer.error.map(|e| self.redact(e));
            answer
        })
    }

    /// The device's options, as read from its `network:` settings.
    pub fn options(&self) -> &NetworkOptions {
        &self.opts
    }

    /// The device's CLI dialect (its platform's commands and prompts).
    pub fn cli_dialect(&self) -> Dialect {
        self.dialect()
    }

    /// `text` with the target's secrets replaced, should a device ever
    /// print one back.
    fn redact(&self, text: String) -> String {
        let secrets = [
            self.opts.enable_password.as_ref(),
            self.opts.ssh.password.as_ref(),
        ];
        let mut text = text;
        for s in secrets.into_iter().flatten() {
            if !s.expose().is_empty() && text.contains(s.expose().as_str()) {
                text = text.replace(s.expose().as_str(), crate::inventory::REDACTED);
            }
        }
        text
    }
}

#[async_trait]
impl Transport for Network {
    /// Checks the connection's options; the device is reached by the first
    /// command that needs it.
    async fn connect(&mut self) -> Result<(), TransportError> {
        ssh::plan(&self.opts.ssh)?;
        Ok(())
    }

    async fn run(&self, command: &Command, out: OutputFn<'_>) -> Result<Finished, TransportError> {
        let text = match command.shell_line() {
            Some(text)
                if command.stdin().is_none() && command.run_as.is_none() && !command.in_session =>
            {
                text
            }
            _ => return Err(unsupported(&self.name, "a POSIX command")),
        };
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let answer = self.exec(line.trim_end()).await?;
            // A rejected line's whole reply (IOS puts a caret line above
            // its message) is the error output.
            let stream = match answer.error {
                Some(_) => Stream::Stderr,
                None => Stream::Stdout,
            };
            if !answer.output.is_empty() {
                out(stream, format!("{}\n", answer.output).as_bytes());
            }
            if answer.error.is_some() {
                return Ok(Finished {
                    exit_code: 1,
                    signal: None,
                });
            }
        }
        Ok(Finished::default())
    }

    async fn upload(&self, _src: &Path, _dest: &str) -> Result<(), TransportError> {
        Err(unsupported(&self.name, "a file upload"))
    }

    async fn write_file(
        &self,
        _bytes: &[u8],
        _dest: &str,
        _mode: u32,
    ) -> Result<(), TransportError> {
        Err(unsupported(&self.name, "writing a file"))
    }

    async fn download(&self, _src: &str, _dest: &Path) -> Result<(), TransportError> {
        Err(unsupported(&self.name, "a file download"))
    }

    async fn close(&mut self) {
        if let Some(cli) = self.cli.get_mut().take() {
            cli.close().await;
        }
        if let Some(session) = self.session.take() {
            let _ = session
                .handle
                .disconnect(russh::Disconnect::ByApplication, "", "en")
                .await;
        }
    }

    fn posix(&self) -> &PosixSettings {
        &self.settings
    }

    fn device(&self) -> Option<&Network> {
        Some(self)
    }
}
