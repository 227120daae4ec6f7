//! Running one command on an open SSH session: a session channel, an exec
//! request, stdin fed by the [`Feeder`] (sudo password first when asked),
//! stdout and stderr passed on as they arrive, and the exit status.

use russh::ChannelMsg;
use russh::client::Handle;

use super::connect::Client;
use crate::transport::command::{Feeder, StdinWrite};
use crate::transport::{Command, Finished, OutputFn, Stream, TransportError};

fn lost(e: impl std::fmt::Display) -> TransportError {
    TransportError::Command(format!("the connection was lost: {e}"))
}

pub async fn run(
    handle: &Handle<Client>,
    command: &Command,
    out: OutputFn<'_>,
) -> Result<Finished, TransportError> {
    let line = command
        .render()
        .map_err(|e| TransportError::Command(e.to_string()))?;
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
    let rest = feeder.finish();
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
            ChannelMsg::ExtendedData { data, .. } => stderr.extend_from_slice(&data),
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
