//! One interactive CLI session on a device: a PTY and a shell on a channel
//! of the SSH session, the first prompt awaited (and the device's host name
//! learned from it, so that later prompts are recognised only for that
//! host), privileged mode entered with the enable password when the device
//! starts in user mode, paging turned off; then each command is written,
//! and what the device sends back is read until its prompt returns, a pager
//! prompt answered on the way. What the bytes mean is [`super::cli`]'s
//! business; this module only moves them. The enable password goes to the
//! device only after its own password prompt, and never into a log, an
//! error or an output.

use std::time::Duration;

use russh::ChannelMsg;
use russh::client::{Handle, Msg};

use super::cli::{self, Dialect, Mode, Prompt};
use crate::transport::command::Sensitive;
use crate::transport::ssh::connect::Client;
use crate::transport::{ConnectIssue, TransportError};

/// The PTY's width: wide enough that no device wraps a command's echo or
/// output lines.
const COLUMNS: u32 = 511;
const ROWS: u32 = 50;
/// The most a single command's reply may hold before ferry gives up on it.
const MAX_REPLY: usize = 64 << 20;

/// What one command brought back.
#[derive(Clone, Debug)]
pub struct Answer {
    /// The output, echo and prompt stripped.
    pub output: String,
    /// The device's error lines, when it rejected the command.
    pub error: Option<String>,
    /// The prompt the device returned to.
    pub prompt: Prompt,
}

pub struct Cli {
    channel: russh::Channel<Msg>,
    dialect: Dialect,
    /// The device's name, from its first prompt (unknown with a custom
    /// prompt regex).
    host: Option<String>,
    mode: Mode,
    /// Set once the device has closed the channel.
    closed: bool,
}

fn lost(e: impl std::fmt::Display) -> TransportError {
    TransportError::Command(format!("the connection was lost: {e}"))
}

impl Cli {
    /// Opens the CLI on `handle`: the first prompt, then enable (with
    /// `enable_password`, when the device starts in user mode and one is
    /// set), then paging off. Each step must answer within `timeout`.
    pub async fn open(
        handle: &Handle<Client>,
        dialect: Dialect,
        enable_password: Option<&Sensitive<String>>,
        timeout: Duration,
    ) -> Result<Cli, TransportError> {
        let channel = handle.channel_open_session().await.map_err(lost)?;
        channel
            .request_pty(true, "vt100", COLUMNS, ROWS, 0, 0, &[])
            .await
            .map_err(lost)?;
        channel.request_shell(true).await.map_err(lost)?;
        let mut cli = Cli {
            channel,
            dialect,
            host: None,
            mode: Mode::User,
            closed: false,
        };
        let first = within(
            timeout,
            "waiting for the device's prompt",
            cli.first_prompt(),
        )
        .await?;
        if !cli.dialect.is_custom() {
            cli.host = Some(first.host.clone());
        }
        cli.mode = first.mode;
        if cli.mode == Mode::User
            && let (Some(enable), Some(password)) = (cli.dialect.enable(), enable_password)
        {
            within(timeout, "enable", cli.enable(enable, password)).await?;
        }
        for command in cli.dialect.paging_off() {
            let answer = within(timeout, "turning paging off", cli.exec(command)).await?;
            if let Some(e) = answer.error {
                tracing::debug!("the device did not take '{command}': {e}");
            }
        }
        Ok(cli)
    }

    /// Where the session stands.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn dialect(&self) -> &Dialect {
        &self.dialect
    }

    /// Reads until the screen's last line is a prompt (any host). A login
    /// that lands in a Unix shell (Junos's root) gets the platform's
    /// command that starts the CLI, once.
    async fn first_prompt(&mut self) -> Result<Prompt, TransportError> {
        let mut raw = Vec::new();
        let mut started = false;
        loop {
            self.receive(&mut raw).await?;
            let screen = cli::screen_text(&raw);
            let last = cli::last_line(&screen);
            if let Some(p) = self.dialect.prompt(last, None) {
                return Ok(p);
            }
            if !started
                && self.dialect.is_shell_prompt(last)
                && let Some(start) = self.dialect.profile().shell_to_cli
            {
                self.send(start).await?;
                started = true;
                raw.clear();
            }
        }
    }

    /// `enable`, the password after the device's password prompt, and the
    /// privileged prompt after it; anything else is an authentication error.
    async fn enable(
        &mut self,
        enable: &str,
        password: &Sensitive<String>,
    ) -> Result<(), TransportError> {
        self.send(enable).await?;
        let mut raw = Vec::new();
        let mut sent = false;
        loop {
            self.receive(&mut raw).await?;
            let screen = cli::screen_text(&raw);
            let last = cli::last_line(&screen);
            if !sent && self.dialect.is_password_prompt(last) {
                self.send(password.expose()).await?;
                sent = true;
                raw.clear();
                continue;
            }
            if let Some(p) = self.dialect.prompt(last, self.host.as_deref()) {
                self.mode = p.mode;
                if p.mode == Mode::User {
                    return Err(TransportError::connect(
                        ConnectIssue::Auth,
                        "the device refused the enable password",
                    ));
                }
                return Ok(());
            }
            if sent && self.dialect.is_password_prompt(last) {
                return Err(TransportError::connect(
                    ConnectIssue::Auth,
                    "the device refused the enable password",
                ));
            }
        }
    }

    /// Runs one command line and reads its reply.
    pub async fn exec(&mut self, line: &str) -> Result<Answer, TransportError> {
        let entered = self.mode;
        self.send(line).await?;
        let mut raw = Vec::new();
        loop {
            self.receive(&mut raw).await?;
            // Only the unfinished last line can be a prompt: look at it
            // alone before making sense of the whole reply.
            let tail_start = raw.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
            let tail = cli::screen_text(&raw[tail_start..]);
            let tail = cli::last_line(&tail);
            if self.dialect.is_pager(tail) {
                raw.truncate(tail_start);
                self.channel.data_bytes(&b" "[..]).await.map_err(lost)?;
                continue;
            }
            if self.dialect.prompt(tail, self.host.as_deref()).is_none() {
                continue;
            }
            if let Some(reply) = cli::reply(&self.dialect, line, &raw, self.host.as_deref()) {
                self.mode = reply.prompt.mode;
                let error = self.dialect.error(&reply.output, entered);
                return Ok(Answer {
                    output: reply.output,
                    error,
                    prompt: reply.prompt,
                });
            }
        }
    }

    async fn send(&self, line: &str) -> Result<(), TransportError> {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        self.channel.data_bytes(bytes).await.map_err(lost)
    }

    /// Waits for the next bytes from the device and appends them to `raw`.
    async fn receive(&mut self, raw: &mut Vec<u8>) -> Result<(), TransportError> {
        loop {
            if self.closed {
                return Err(TransportError::Command(
                    "the device closed the CLI session".into(),
                ));
            }
            match self.channel.wait().await {
                Some(ChannelMsg::Data { data }) | Some(ChannelMsg::ExtendedData { data, .. }) => {
                    if raw.len() + data.len() > MAX_REPLY {
                        return Err(TransportError::Command(format!(
                            "the device sent more than {} MiB for one command",
                            MAX_REPLY >> 20
                        )));
                    }
                    raw.extend_from_slice(&data);
                    return Ok(());
                }
                Some(ChannelMsg::Failure) => {
                    return Err(TransportError::Command(
                        "the device refused a terminal or a shell".into(),
                    ));
                }
                Some(ChannelMsg::Eof | ChannelMsg::Close) | None => self.closed = true,
                Some(ChannelMsg::ExitStatus { .. } | ChannelMsg::ExitSignal { .. }) => {
                    self.closed = true
                }
                Some(_) => {}
            }
        }
    }

    /// Leaves the CLI: closes the channel.
    pub async fn close(self) {
        let _ = self.channel.eof().await;
        let _ = self.channel.close().await;
    }
}

/// `fut` within `limit`, or a timeout naming `what`.
pub async fn within<T>(
    limit: Duration,
    what: &'static str,
    fut: impl std::future::Future<Output = Result<T, TransportError>>,
) -> Result<T, TransportError> {
    tokio::time::timeout(limit, fut)
        .await
        .map_err(|_| TransportError::Timeout { what, after: limit })?
}
