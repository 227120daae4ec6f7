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
//! that needs it through `ferry_mkdirs`, which refuses a directory someone
//! else made) and removes it when it exits, which it does when ferry closes
//! the connection or the connection drops.
//! Only scripts marked [`Command::in_session`](crate::transport::Command)
//! run here (ferry's own, with no secret in their stdin: some shells keep
//! here-documents in temporary files), and only one at a time; a script that is cancelled midway (a
//! timeout) leaves the shell in an unknown state, so it is closed and the
//! next script gets a new one.

use russh::ChannelMsg;
use russh::client::{Handle, Msg};

use super::connect::Client;
use crate::transport::command::{nonce, quote};
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

/// Defined when the shell starts: `ferry_sha256_check SHA PATH [SHA PATH
/// ...]` succeeds when every file has its sha256. It asks the checksum
/// service below while that runs, and starts `sha256sum` otherwise.
const CHECK_FUNCTION: &str = "ferry_sha256_check() {
if [ -n \"${FERRY_SHA256_PID-}\" ] && kill -0 \"$FERRY_SHA256_PID\" 2>/dev/null; then
_n=$(($# / 2)); _ok=0
printf '%s  %s\\n' \"$@\" >\"$FERRY_SESSION_DIR/.sum-in\" || return 1
while [ \"$_n\" -gt 0 ]; do
IFS= read -r _r || return 1
case $_r in *': OK') ;; *) _ok=1 ;; esac
_n=$((_n - 1))
done <\"$FERRY_SESSION_DIR/.sum-out\"
return $_ok
fi
printf '%s  %s\\n' \"$@\" | sha256sum -c >/dev/null 2>&1
}
";

/// Defined when the shell starts: `ferry_mkdirs DIR...` makes the shell's
/// private directory, unless an earlier script made it, and the given
/// dirs, all mode 700, in one `mkdir` (no `-p`: parents first), then
/// succeeds only if the private directory is a directory of the user's own
/// and not a link. Errors for dirs that exist already are silent: callers
/// check what they need.
const MKDIRS_FUNCTION: &str = "ferry_mkdirs() {
mkdir -m 700 \"$FERRY_SESSION_DIR\" \"$@\" 2>/dev/null
[ -d \"$FERRY_SESSION_DIR\" ] && [ ! -h \"$FERRY_SESSION_DIR\" ] && [ -O \"$FERRY_SESSION_DIR\" ]
}
";

/// Started before the shell's second script, so that one-off runs do not
/// pay for it: the checksum service behind `ferry_sha256_check`. One
/// `sha256sum -c` stays running, line-buffered, between two FIFOs in the
/// private directory: `<sha256>  <path>` lines go in, `<path>: OK` (or
/// `FAILED`) lines come out, and no process starts per check. The shell
/// itself holds both FIFOs open (fds 8 and 9), so the service lives exactly
/// as long as the shell; scripts run with those fds closed and the function
/// opens the FIFOs by name, so nothing a script leaves running can keep the
/// service alive. Line buffering is coreutils' `stdbuf`; where its library
/// is at a known path the shell sets what `stdbuf` would (`_STDBUF_O`,
/// `LD_PRELOAD`) and saves starting it. Where neither is there, or the
/// private directory does not exist yet, the service is not started.
const CHECKSUM_SERVICE: &str = "_b=
for _p in /usr/libexec/coreutils/libstdbuf.so /usr/lib/coreutils/libstdbuf.so /usr/lib64/coreutils/libstdbuf.so; do
[ -f \"$_p\" ] && _b=$_p && break
done
if { [ -n \"$_b\" ] || command -v stdbuf >/dev/null 2>&1; } && command -v sha256sum >/dev/null 2>&1 \\
&& mkfifo -m 600 \"$FERRY_SESSION_DIR/.sum-in\" \"$FERRY_SESSION_DIR/.sum-out\" 2>/dev/null; then
if [ -n \"$_b\" ]; then
_STDBUF_O=L LD_PRELOAD=\"${LD_PRELOAD:+$LD_PRELOAD:}$_b\" sha256sum -c <\"$FERRY_SESSION_DIR/.sum-in\" >\"$FERRY_SESSION_DIR/.sum-out\" 2>/dev/null &
else
stdbuf -oL sha256sum -c <\"$FERRY_SESSION_DIR/.sum-in\" >\"$FERRY_SESSION_DIR/.sum-out\" 2>/dev/null &
fi
FERRY_SHA256_PID=$!
exec 8>\"$FERRY_SESSION_DIR/.sum-in\" 9<\"$FERRY_SESSION_DIR/.sum-out\"
fi
";

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
            Some(pid) => format!("kill -9 {pid} 2>/dev/null\nrm -rf \"$FERRY_SESSION_DIR\"\n"),
            None => String::new(),
        };
        let preamble = format!(
            "FERRY_SESSION_DIR={q}\n{replace}\
             trap 'rm -rf \"$FERRY_SESSION_DIR\"' EXIT\ntrap 'exit 129' HUP\ntrap 'exit 143' TERM\n\
             {MKDIRS_FUNCTION}{CHECK_FUNCTION}printf '%s %s\\n' {token} $$\n"
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
        let service = if self.runs == 2 { CHECKSUM_SERVICE } else { "" };
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
