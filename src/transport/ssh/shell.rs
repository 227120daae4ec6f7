//! One long-lived `sh` per connection, for ferry's own scripts.
//!
//! Every channel costs the target a fork of its sshd session process and a
//! fresh login shell. For the many small scripts ferry itself writes (the
//! task runner's wrapper, run step after step by a plan) that is most of
//! the target's work, so the SSH transport keeps one `sh` open on a channel
//! of its own and feeds it each script as a subshell whose stdin is a
//! here-document. The end of each script's output is framed by a one-time
//! token on stdout (followed by the exit status) and on stderr; the token
//! is fresh for every script, so no output can forge it.
//!
//! The shell owns a private directory (mode 700, made by the first script
//! that needs it through [`MKDIRS`](crate::transport::shell_fns::MKDIRS), which refuses a directory someone
//! else made) and removes it when it exits, which it does when ferry closes
//! the connection or the connection drops.
//! Only scripts marked [`Command::in_session`](crate::transport::Command)
//! run here (ferry's own, with no secret in their stdin: some shells keep
//! here-documents in temporary files), and only one at a time; a script that is cancelled midway (a
//! timeout) leaves the shell in an unknown state, so it is closed and the
//! next script gets a new one. The functions and variables scripts may use
//! here are named in transport::shell_fns, shared with the task wrapper.

use russh::ChannelMsg;
use russh::client::{Handle, Msg};

use super::connect::Client;
use crate::transport::command::{nonce, quote};
use crate::transport::shell_fns::{SESSION_DIR, checksum_service, definitions};
use crate::transport::{Finished, OutputFn, Stream, TransportError};

fn lost(e: impl std::fmt::Display) -> TransportError {
    TransportError::Command(format!("the connection was lost: {e}"))
}

pub struct Shell {
    channel: russh::Channel<Msg>,
    /// A script was sent and its end not yet seen.
    busy: bool,
    /// Scripts run so far.
    runs: u32,
    /// The shell's process id on the target.
    pid: u32,
}

impl Shell {
    /// Starts the shell, which makes `dir` and removes it when it exits,
    /// and waits until it is ready. `previous` is the pid of a shell this
    /// one replaces (cut off midway, or gone): it is killed and its
    /// directory removed first, as it may still hold the name.
    pub async fn open(
        handle: &Handle<Client>,
        dir: &str,
        previous: Option<u32>,
    ) -> Result<Shell, TransportError> {
        let q = quote(dir).map_err(|e| TransportError::Command(e.to_string()))?;
        let mut channel = handle.channel_open_session().await.map_err(lost)?;
        channel.exec(true, "exec /bin/sh").await.map_err(lost)?;
        let token = format!("ferry{}", nonce("open"));
        let replace = match previous {
            Some(pid) => format!("kill -9 {pid} 2>/dev/null\nrm -rf \"${SESSION_DIR}\"\n"),
            None => String::new(),
        };
        let preamble = format!(
            "{SESSION_DIR}={q}\n{replace}\
             trap 'rm -rf \"${SESSION_DIR}\"' EXIT\ntrap 'exit 129' HUP\ntrap 'exit 143' TERM\n\
             {}printf '%s %s\\n' {token} $$\n",
            definitions()
        );
        channel.data(preamble.as_bytes()).await.map_err(lost)?;
        let mut ready = Framer::new(&token);
        let mut errors = Vec::new();
        while !ready.done() {
            match channel.wait().await {
                Some(ChannelMsg::Data { data }) => ready.feed(&data, &mut |_| {}),
                Some(ChannelMsg::ExtendedData { data, .. }) => {
                    super::exec::keep_head(&mut errors, &data)
                }
                Some(ChannelMsg::Eof | ChannelMsg::Close | ChannelMsg::ExitStatus { .. })
                | None => {
                    return Err(TransportError::Command(format!(
                        "the target's shell did not start: {}",
                        String::from_utf8_lossy(&errors).trim()
                    )));
                }
                Some(_) => {}
            }
        }
        let pid = ready.trailer.trim().parse::<u32>().map_err(|_| {
            TransportError::Command(format!(
                "the target's shell gave a bad pid: {:?}",
                ready.trailer
            ))
        })?;
        Ok(Shell {
            channel,
            busy: false,
            runs: 0,
            pid,
        })
    }

    /// The shell's process id on the target.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Whether a script was sent and its end not yet seen.
    pub fn is_busy(&self) -> bool {
        self.busy
    }

    /// Drops a shell that is being replaced, without waiting for it.
    pub async fn abandon(self) {
        let _ = self.channel.close().await;
    }

    /// Whether the shell cannot take another script: one was cut off
    /// midway, or the shell has ended. Output that arrived while no script
    /// ran (from a background process of an earlier one) is dropped here.
    pub fn broken(&mut self) -> bool {
        use futures_util::FutureExt;
        if self.busy {
            return true;
        }
        while let Some(msg) = self.channel.wait().now_or_never() {
            match msg {
                Some(ChannelMsg::Data { .. } | ChannelMsg::ExtendedData { .. }) => {}
                Some(ChannelMsg::Eof | ChannelMsg::Close | ChannelMsg::ExitStatus { .. })
                | None => return true,
                Some(_) => {}
            }
        }
        false
    }

    /// Runs `script` in a subshell with `stdin` as its standard input.
    pub async fn run(
        &mut self,
        script: &str,
        stdin: &[u8],
        out: OutputFn<'_>,
    ) -> Result<Finished, TransportError> {
        let token = format!("ferry{}", nonce("shell"));
        if stdin.contains(&0) || stdin.split(|b| *b == b'\n').any(|l| l == token.as_bytes()) {
            return Err(TransportError::Command(
                "this input cannot be passed through the target's shell".into(),
            ));
        }
        self.runs += 1;
        let service = if self.runs == 2 {
            checksum_service()
        } else {
            String::new()
        };
        let mut text = format!("{service}(\n{script}\n) 8>&- 9<&- <<'{token}'\n").into_bytes();
        text.extend_from_slice(stdin);
        if !stdin.is_empty() && !stdin.ends_with(b"\n") {
            text.push(b'\n');
        }
        text.extend_from_slice(
            format!("{token}\nprintf '%s:%d\\n' {token} $?\nprintf '%s\\n' {token} >&2\n")
                .as_bytes(),
        );
        self.busy = true;
        self.channel.data(&text[..]).await.map_err(lost)?;
        let mut stdout = Framer::new(&token);
        let mut stderr = Framer::new(&token);
        while !(stdout.done() && stderr.done()) {
            match self.channel.wait().await {
                Some(ChannelMsg::Data { data }) => {
                    stdout.feed(&data, &mut |b| out(Stream::Stdout, b))
                }
                Some(ChannelMsg::ExtendedData { data, ext: 1 }) => {
                    stderr.feed(&data, &mut |b| out(Stream::Stderr, b))
                }
                Some(ChannelMsg::ExitStatus { exit_status }) => {
                    return Err(TransportError::Command(format!(
                        "the target's shell ended before the script finished (exit status {exit_status})"
                    )));
                }
                Some(ChannelMsg::Eof | ChannelMsg::Close) | None => {
                    return Err(TransportError::Command(
                        "the target's shell ended before the script finished".into(),
                    ));
                }
                Some(_) => {}
            }
        }
        self.busy = false;
        let status = stdout.trailer.strip_prefix(':').unwrap_or_default();
        let exit_code = status.trim().parse::<i32>().map_err(|_| {
            TransportError::Command(format!("the target's shell gave a bad status: {status:?}"))
        })?;
        Ok(Finished {
            exit_code,
            signal: None,
        })
    }

    /// Ends the shell (it removes its directory) and waits briefly for it.
    pub async fn close(mut self) {
        let _ = self.channel.eof().await;
        let wait = async {
            while let Some(msg) = self.channel.wait().await {
                if matches!(msg, ChannelMsg::ExitStatus { .. } | ChannelMsg::Close) {
                    break;
                }
            }
        };
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), wait).await;
        let _ = self.channel.close().await;
    }
}

/// The longest trailer kept.
const TRAILER_MAX: usize = 64;

/// Splits one stream at the token: what comes before it is the script's
/// output, passed on as it arrives; what follows it up to the newline is
/// the trailer (`:<status>` on stdout, nothing on stderr).
struct Framer<'a> {
    token: &'a [u8],
    held: Vec<u8>,
    found: bool,
    trailer: String,
    ended: bool,
}

impl<'a> Framer<'a> {
    fn new(token: &'a str) -> Self {
        Framer {
            token: token.as_bytes(),
            held: Vec::new(),
            found: false,
            trailer: String::new(),
            ended: false,
        }
    }

    fn done(&self) -> bool {
        self.ended
    }

    fn feed(&mut self, data: &[u8], emit: &mut dyn FnMut(&[u8])) {
        if self.ended {
            // Output after the end (a background process): not this script's.
            return;
        }
        if self.found {
            self.take_trailer(data);
            return;
        }
        self.held.extend_from_slice(data);
        if let Some(at) = find(&self.held, self.token) {
            if at > 0 {
                emit(&self.held[..at]);
            }
            self.found = true;
            let rest = self.held.split_off(at + self.token.len());
            self.held.clear();
            self.take_trailer(&rest);
            return;
        }
        // Keep back what could be the start of the token.
        let keep = (self.token.len() - 1).min(self.held.len());
        let cut = self.held.len() - keep;
        if cut > 0 {
            emit(&self.held[..cut]);
            self.held.drain(..cut);
        }
    }

    /// Takes the trailer up to its newline; a status or pid is short, so
    /// anything past [`TRAILER_MAX`] bytes is dropped (and then fails to
    /// parse) rather than kept.
    fn take_trailer(&mut self, data: &[u8]) {
        let end = data.iter().position(|b| *b == b'\n');
        let part = &data[..end.unwrap_or(data.len())];
        let room = TRAILER_MAX.saturating_sub(self.trailer.len());
        self.trailer
            .push_str(&String::from_utf8_lossy(&part[..part.len().min(room)]));
        self.ended = end.is_some();
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::Framer;

    fn frame(chunks: &[&str]) -> (String, String, bool) {
        let mut f = Framer::new("TOK");
        let mut out = Vec::new();
        for c in chunks {
            f.feed(c.as_bytes(), &mut |b| out.extend_from_slice(b));
        }
        (String::from_utf8(out).unwrap(), f.trailer.clone(), f.done())
    }

    #[test]
    fn output_before_the_token_passes_and_the_trailer_is_kept() {
        assert_eq!(
            frame(&["hello\nTOK:0\n"]),
            ("hello\n".into(), ":0".into(), true)
        );
        assert_eq!(
            frame(&["no newline", "TOK:3\n"]),
            ("no newline".into(), ":3".into(), true)
        );
    }

    #[test]
    fn a_token_split_across_chunks_is_found() {
        assert_eq!(
            frame(&["abcT", "O", "K:1", "2\n"]),
            ("abc".into(), ":12".into(), true)
        );
        assert_eq!(frame(&["TO", "x TOK\n"]), ("TOx ".into(), "".into(), true));
    }

    #[test]
    fn nothing_ends_until_the_newline_after_the_token() {
        assert_eq!(frame(&["out TOK:0"]), ("out ".into(), ":0".into(), false));
        assert_eq!(
            frame(&["TOK:0\nlate output"]),
            ("".into(), ":0".into(), true)
        );
    }
}
