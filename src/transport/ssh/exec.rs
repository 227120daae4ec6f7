//! Running one command on an open SSH session: a session channel, an exec
//! request, stdin fed by the [`Feeder`] (sudo password first when asked),
//! stdout and stderr passed on as they arrive, and the exit status.
//!
//! sshd starts each command as a session of its own, so the shell it runs
//! leads a process group holding everything the command starts. A tracked
//! run ([`run_tracked`]) has that shell print its pid behind a one-time
//! marker on stderr first (taken out of the output), and keeps it in a
//! [`Running`] set until the command ends; a command cut off midway (a
//! timeout, a stopped job) leaves its pid there, and [`stop_groups`] ends
//! the whole group on the target. Nothing is left running behind ferry.

use russh::ChannelMsg;
use russh::client::Handle;

use super::connect::Client;
use crate::transport::command::{Feeder, StdinWrite};
use crate::transport::{Command, Finished, OutputFn, Stream, TransportError};

fn lost(e: impl std::fmt::Display) -> TransportError {
    TransportError::Command(format!("the connection was lost: {e}"))
}

/// Runs a command to its end (one of ferry's own, short-lived).
pub async fn run(
    handle: &Handle<Client>,
    command: &Command,
    out: OutputFn<'_>,
) -> Result<Finished, TransportError> {
    run_tracked(handle, command, out, None).await
}

/// Runs a command; with `running`, its process group on the target is
/// recorded there until it ends (not for a tty, where sshd hangs the
/// group up itself when the channel closes).
pub async fn run_tracked(
    handle: &Handle<Client>,
    command: &Command,
    out: OutputFn<'_>,
    running: Option<&Running>,
) -> Result<Finished, TransportError> {
    let mut line = command
        .render()
        .map_err(|e| TransportError::Command(e.to_string()))?;
    let mut pid_watch = None;
    if let Some(running) = running.filter(|_| !command.tty) {
        let watch = PidWatch::new(running);
        line = format!("printf '%s%s\\n' '{}' \"$$\" >&2; {line}", watch.mark);
        pid_watch = Some(watch);
    }
    let mut channel = handle.channel_open_session().await.map_err(lost)?;
    if command.tty {
        channel
            .request_pty(false, "xterm", 200, 50, 0, 0, &[])
            .await
            .map_err(lost)?;
    }
    channel.exec(true, line).await.map_err(lost)?;
    let mut feeder = Feeder::new(command);
    let mut code = None;
    let mut signal = None;
    send(&channel, feeder.start()).await?;
    while let Some(msg) = channel.wait().await {
        match msg {
            ChannelMsg::Data { data } if command.tty && command.run_as.is_some() => {
                // With a tty, sudo's prompt comes on the one merged stream.
                let (shown, writes) = feeder
                    .stderr(&data)
                    .map_err(|e| TransportError::Command(e.to_string()))?;
                if !shown.is_empty() {
                    out(Stream::Stdout, &shown);
                }
                send(&channel, writes).await?;
            }
            ChannelMsg::Data { data } => out(Stream::Stdout, &data),
            ChannelMsg::ExtendedData { data, ext: 1 } => {
                let data = match pid_watch.as_mut() {
                    Some(watch) => watch.feed(&data),
                    None => data.to_vec(),
                };
                let (shown, writes) = feeder
                    .stderr(&data)
                    .map_err(|e| TransportError::Command(e.to_string()))?;
                if !shown.is_empty() {
                    out(Stream::Stderr, &shown);
                }
                send(&channel, writes).await?;
            }
            ChannelMsg::ExitStatus { exit_status } => {
                code = Some(i32::try_from(exit_status).unwrap_or(i32::MAX))
            }
            ChannelMsg::ExitSignal { signal_name, .. } => signal = Some(format!("{signal_name:?}")),
            ChannelMsg::Failure => {
                return Err(TransportError::Command(
                    "the target refused to run the command".into(),
                ));
            }
            ChannelMsg::Close => break,
            _ => {}
        }
    }
    let mut rest = pid_watch.as_mut().map(PidWatch::finish).unwrap_or_default();
    rest.extend(feeder.finish());
    if !rest.is_empty() {
        out(Stream::Stderr, &rest);
    }
    match (code, signal) {
        (Some(exit_code), signal) => Ok(Finished { exit_code, signal }),
        (None, Some(signal)) => Ok(Finished {
            exit_code: 128,
            signal: Some(signal),
        }),
        (None, None) => Err(TransportError::Command(
            "the connection was lost before the command finished".into(),
        )),
    }
}

async fn send(
    channel: &russh::Channel<russh::client::Msg>,
    writes: Vec<StdinWrite>,
) -> Result<(), TransportError> {
    for w in writes {
        match w {
            StdinWrite::Bytes(bytes) => channel
                .data_bytes(bytes.expose().clone())
                .await
                .map_err(lost)?,
            StdinWrite::Eof => channel.eof().await.map_err(lost)?,
        }
    }
    Ok(())
}

/// Runs a plain command (no elevation) with `stdin` streamed to it, for
/// file transfers; returns the exit code and stderr.
pub async fn run_with_stdin<R>(
    handle: &Handle<Client>,
    line: &str,
    stdin: R,
) -> Result<(i32, Vec<u8>), TransportError>
where
    R: tokio::io::AsyncRead + Unpin,
{
    let mut channel = handle.channel_open_session().await.map_err(lost)?;
    channel.exec(true, line).await.map_err(lost)?;
    channel.data(stdin).await.map_err(lost)?;
    channel.eof().await.map_err(lost)?;
    let mut code = None;
    let mut stderr = Vec::new();
    while let Some(msg) = channel.wait().await {
        match msg {
            ChannelMsg::ExtendedData { data, .. } => keep_head(&mut stderr, &data),
            ChannelMsg::ExitStatus { exit_status } => {
                code = Some(i32::try_from(exit_status).unwrap_or(i32::MAX))
            }
            ChannelMsg::Close => break,
            _ => {}
        }
    }
    code.map(|c| (c, stderr)).ok_or_else(|| {
        TransportError::Command("the connection was lost before the transfer finished".into())
    })
}

/// How much of an error message ferry keeps from what its own commands
/// (file transfers, the long-lived shell's start) print on stderr.
pub const ERROR_TEXT_MAX: usize = 4096;

/// Appends `data` to `buf` up to [`ERROR_TEXT_MAX`] bytes: a hostile
/// target printing without end cannot grow it.
pub fn keep_head(buf: &mut Vec<u8>, data: &[u8]) {
    let room = ERROR_TEXT_MAX.saturating_sub(buf.len());
    buf.extend_from_slice(&data[..data.len().min(room)]);
}

/// Process groups on one target whose commands started and were not seen
/// to end.
#[derive(Debug, Default)]
pub struct Running(std::sync::Mutex<Vec<u32>>);

impl Running {
    pub fn add(&self, pid: u32) {
        if let Ok(mut pids) = self.0.lock() {
            pids.push(pid);
        }
    }

    fn remove(&self, pid: u32) {
        if let Ok(mut pids) = self.0.lock() {
            pids.retain(|p| *p != pid);
        }
    }

    /// Takes every recorded group (the caller stops them).
    pub fn take(&self) -> Vec<u32> {
        self.0
            .lock()
            .map(|mut pids| std::mem::take(&mut *pids))
            .unwrap_or_default()
    }
}

/// Ends the process groups `pids` on the target: SIGTERM now, and SIGKILL
/// two seconds later for any process that ignores it. Best effort, bounded
/// in time: a target that has gone away is not waited for.
pub async fn stop_groups(handle: &Handle<Client>, pids: &[u32]) {
    if pids.is_empty() {
        return;
    }
    let groups: Vec<String> = pids.iter().map(|p| format!("-{p}")).collect();
    let groups = groups.join(" ");
    let line = format!(
        "kill -TERM -- {groups} 2>/dev/null; (sleep 2; kill -KILL -- {groups}) >/dev/null 2>&1 </dev/null &"
    );
    let command = Command::shell(line);
    let mut ignore = |_: Stream, _: &[u8]| {};
    let stop = run(handle, &command, &mut ignore);
    if tokio::time::timeout(std::time::Duration::from_secs(10), stop)
        .await
        .is_err()
    {
        tracing::debug!("stopping cut-off commands timed out");
    }
}

/// Takes the pid line a tracked command's shell prints first on stderr out
/// of the stream and records the pid in [`Running`] until [`finish`]
/// (reached only when the command ended; a cut-off run never gets there).
///
/// [`finish`]: PidWatch::finish
struct PidWatch<'a> {
    running: &'a Running,
    mark: String,
    pending: Vec<u8>,
    pid: Option<u32>,
    done: bool,
}

/// How much stderr may come before the pid line (a login shell's own
/// messages) before ferry stops looking for it.
const PID_LINE_WITHIN: usize = 64 * 1024;

impl<'a> PidWatch<'a> {
    fn new(running: &'a Running) -> Self {
        PidWatch {
            running,
            mark: format!("ferry-pid-{}:", super::super::command::nonce("pid")),
            pending: Vec::new(),
            pid: None,
            done: false,
        }
    }

    /// The stderr to show for `chunk`.
    fn feed(&mut self, chunk: &[u8]) -> Vec<u8> {
        if self.done {
            return chunk.to_vec();
        }
        self.pending.extend_from_slice(chunk);
        let mark = self.mark.as_bytes();
        let found = self
            .pending
            .windows(mark.len())
            .position(|w| w == mark)
            .and_then(|at| {
                let digits = at + mark.len();
                let nl = self.pending[digits..].iter().position(|b| *b == b'\n')?;
                Some((at, digits, digits + nl))
            });
        match found {
            Some((at, digits, nl)) => {
                let pid = std::str::from_utf8(&self.pending[digits..nl])
                    .ok()
                    .and_then(|t| t.trim().parse::<u32>().ok())
                    .filter(|p| *p > 1);
                if let Some(pid) = pid {
                    self.running.add(pid);
                    self.pid = Some(pid);
                }
                self.done = true;
                let mut shown = self.pending[..at].to_vec();
                shown.extend_from_slice(&self.pending[nl + 1..]);
                self.pending.clear();
                shown
            }
            None if self.pending.len() > PID_LINE_WITHIN => {
                self.done = true;
                std::mem::take(&mut self.pending)
            }
            None => Vec::new(),
        }
    }

    /// What is held back when the stream ends; the command has ended, so
    /// its group is no longer recorded as running.
    fn finish(&mut self) -> Vec<u8> {
        self.done = true;
        if let Some(pid) = self.pid.take() {
            self.running.remove(pid);
        }
        std::mem::take(&mut self.pending)
    }
}
