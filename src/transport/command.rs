//! Commands as typed values. A [`Command`] is built from parts — a shell
//! line the user wrote, or a program and its arguments — and rendered to the
//! one string a remote shell receives, with every argument quoted by
//! construction. Bytes for the command's stdin (task parameters, the sudo
//! password) never become part of that string, and [`Command::display`]
//! shows what ran without them.

use std::fmt;
use std::time::Duration;

/// A value that must never be printed: Debug and Display show a marker.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Sensitive<T>(T);

impl<T> Sensitive<T> {
    pub fn new(value: T) -> Self {
        Sensitive(value)
    }
    /// The secret itself, for the one place that sends it.
    pub fn expose(&self) -> &T {
        &self.0
    }
}

impl<T> fmt::Debug for Sensitive<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(crate::inventory::REDACTED)
    }
}

/// What to run.
#[derive(Clone, Debug)]
enum Program {
    /// A command line written by the user, run by a POSIX shell.
    Shell(String),
    /// A program and its arguments; each is quoted when rendered.
    Argv(Vec<String>),
}

/// Running as another user, through sudo or a configured command.
#[derive(Clone, Debug)]
pub struct RunAs {
    pub user: String,
    pub password: Option<Sensitive<String>>,
    /// The elevation command; the user and the command are appended.
    /// Empty means sudo with a prompt ferry recognizes.
    pub command: Vec<String>,
}

/// The prompt ferry asks sudo to print, so it knows when to send the password.
pub const SUDO_PROMPT: &str = "[ferry-sudo] password needed:";

#[derive(Clone, Debug)]
pub struct Command {
    program: Program,
    stdin: Option<Sensitive<Vec<u8>>>,
    pub run_as: Option<RunAs>,
    /// Run as the login user even when the target has a run-as user.
    pub login_only: bool,
    /// The command elevates itself (it runs `run_as`'s sudo inside); it is
    /// not wrapped, but its password prompt and ready marker are handled.
    pub inline_run_as: bool,
    pub tty: bool,
    pub timeout: Option<Duration>,
    /// A POSIX `sh` script of ferry's own that may run in the target's
    /// long-lived shell (see [`super::PosixSettings::session_dir`]) instead
    /// of on a channel of its own. Only ever set on scripts ferry writes,
    /// whose stdin holds no secret: there stdin is a here-document, which
    /// some shells keep in a temporary file.
    pub in_session: bool,
}

/// A string that cannot be quoted for a shell (it holds a NUL byte).
#[derive(Debug, thiserror::Error)]
#[error("an argument holds a NUL byte and cannot be passed to a command")]
pub struct QuoteError;

impl Command {
    /// A shell command line, as the user wrote it.
    pub fn shell(line: impl Into<String>) -> Command {
        Command::from_program(Program::Shell(line.into()))
    }

    /// A program with arguments, each quoted on its own.
    pub fn argv<I, S>(args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Command::from_program(Program::Argv(args.into_iter().map(Into::into).collect()))
    }

    fn from_program(program: Program) -> Command {
        Command {
            program,
            stdin: None,
            run_as: None,
            login_only: false,
            inline_run_as: false,
            tty: false,
            timeout: None,
            in_session: false,
        }
    }

    /// Lets the transport run this script in the target's long-lived shell.
    pub fn in_session(mut self) -> Command {
        self.in_session = true;
        self
    }

    /// Bytes fed to the command's stdin; they are never logged.
    pub fn with_stdin(mut self, bytes: Vec<u8>) -> Command {
        self.stdin = Some(Sensitive::new(bytes));
        self
    }

    pub fn with_run_as(mut self, run_as: Option<RunAs>) -> Command {
        self.run_as = run_as;
        self
    }

    /// A command that runs `run_as`'s elevation itself (see [`Command::elevation`]).
    pub fn with_inline_run_as(mut self, run_as: Option<RunAs>) -> Command {
        self.login_only = run_as.is_none();
        self.inline_run_as = run_as.is_some();
        self.run_as = run_as;
        self
    }

    /// Runs as the login user, whatever run-as the target has.
    pub fn as_login_user(mut self) -> Command {
        self.run_as = None;
        self.login_only = true;
        self
    }

    /// The line the user wrote, for a shell command (`None` for argv).
    pub fn shell_line(&self) -> Option<&str> {
        match &self.program {
            Program::Shell(line) => Some(line),
            Program::Argv(_) => None,
        }
    }

    pub fn stdin(&self) -> Option<&[u8]> {
        self.stdin.as_ref().map(|s| s.expose().as_slice())
    }

    /// The command without elevation, as one shell string.
    fn inner(&self) -> Result<String, QuoteError> {
        match &self.program {
            Program::Shell(line) => Ok(line.clone()),
            Program::Argv(args) => join(args),
        }
    }

    /// The exact string handed to the target's shell.
    pub fn render(&self) -> Result<String, QuoteError> {
        let inner = self.inner()?;
        let Some(run_as) = self.run_as.as_ref().filter(|_| !self.inline_run_as) else {
            return Ok(inner);
        };
        let mut words = elevation(run_as);
        let announced = format!("printf '%s\\n' '{RUN_AS_READY}' >&2; {inner}");
        words.extend(["sh".to_string(), "-c".to_string(), announced]);
        join(&words)
    }

    /// What ran, for output and logs: no stdin bytes, no passwords.
    pub fn display(&self) -> String {
        self.inner()
            .unwrap_or_else(|_| "<unprintable command>".into())
    }
}

/// A name no one can guess in advance: for one-time tokens and private
/// directories on a target.
pub fn nonce(salt: &str) -> String {
    use sha2::{Digest, Sha256};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let digest = Sha256::digest(format!("{t}:{n}:{}:{salt}", std::process::id()).as_bytes());
    hex::encode(&digest[..12])
}

/// The words that run a command as `run_as.user`: sudo with the prompt
/// ferry recognizes, or the configured run-as-command, then the user.
pub fn elevation(run_as: &RunAs) -> Vec<String> {
    let mut words: Vec<String> = if run_as.command.is_empty() {
        ["sudo", "-S", "-H", "-p", SUDO_PROMPT, "-u"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    } else {
        run_as.command.clone()
    };
    words.push(run_as.user.clone());
    words
}

/// Joins words into one shell line, quoting each as needed.
pub fn join(words: &[String]) -> Result<String, QuoteError> {
    shlex::try_join(words.iter().map(String::as_str)).map_err(|_| QuoteError)
}

/// Quotes one word for a POSIX shell.
pub fn quote(word: &str) -> Result<String, QuoteError> {
    shlex::try_quote(word)
        .map(|q| q.into_owned())
        .map_err(|_| QuoteError)
}

/// Printed by the elevated shell once sudo has let it in; stdin for the
/// command is sent only after it, so it can never reach sudo's prompt.
pub const RUN_AS_READY: &str = "[ferry-run-as] ready";

/// Watches an elevated command's stderr: removes sudo's prompt and ferry's
/// ready marker from the output and says when to send the password and when
/// the command itself has started.
#[derive(Default)]
pub struct SudoWatch {
    pending: Vec<u8>,
    prompts: usize,
    ready: bool,
}

/// What the watcher asks the transport to do.
#[derive(Debug, PartialEq, Eq)]
pub enum SudoStep {
    /// Write the password and a newline to stdin.
    SendPassword,
    /// sudo asked again: the password was wrong or missing.
    Refused,
    /// The command runs now; its stdin may be sent.
    Ready,
}

impl SudoWatch {
    /// Feeds a stderr chunk; returns what may be shown and the steps to take.
    pub fn feed(&mut self, chunk: &[u8]) -> (Vec<u8>, Vec<SudoStep>) {
        if self.ready {
            return (chunk.to_vec(), Vec::new());
        }
        self.pending.extend_from_slice(chunk);
        let mut shown = Vec::new();
        let mut steps = Vec::new();
        let prompt = SUDO_PROMPT.as_bytes();
        let ready = RUN_AS_READY.as_bytes();
        loop {
            let p = find(&self.pending, prompt);
            let r = find(&self.pending, ready);
            let (at, len, step) = match (p, r) {
                (Some(p), Some(r)) if r < p => (r, ready.len(), SudoStep::Ready),
                (Some(p), _) => {
                    self.prompts += 1;
                    let step = if self.prompts == 1 {
                        SudoStep::SendPassword
                    } else {
                        SudoStep::Refused
                    };
                    (p, prompt.len(), step)
                }
                (None, Some(r)) => (r, ready.len(), SudoStep::Ready),
                (None, None) => break,
            };
            shown.extend(self.pending.drain(..at));
            self.pending.drain(..len);
            if step == SudoStep::Ready {
                self.ready = true;
                // The marker line's newline belongs to the marker.
                if self.pending.first() == Some(&b'\n') {
                    self.pending.remove(0);
                }
                shown.append(&mut self.pending);
                steps.push(step);
                return (shown, steps);
            }
            steps.push(step);
        }
        // Hold back a tail that could be the start of a marker.
        let keep = [prompt, ready]
            .iter()
            .flat_map(|m| {
                (1..m.len())
                    .rev()
                    .find(|&n| self.pending.ends_with(&m[..n]))
            })
            .max()
            .unwrap_or(0);
        let cut = self.pending.len() - keep;
        shown.extend(self.pending.drain(..cut));
        (shown, steps)
    }

    /// What is left when the stream ends.
    pub fn finish(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.pending)
    }
}

/// A write the transport must make to the command's stdin.
#[derive(Debug, PartialEq, Eq)]
pub enum StdinWrite {
    Bytes(Sensitive<Vec<u8>>),
    Eof,
}

/// Why an elevated command could not start.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum ElevationError {
    #[error("sudo asked for a password for {0}, and no sudo-password is set")]
    NoPassword(String),
    #[error("sudo did not accept the sudo-password for {0}")]
    Refused(String),
}

/// Feeds a command's stdin: the sudo password when asked, the command's own
/// bytes once it runs (at once when there is no elevation), then EOF.
pub struct Feeder<'a> {
    command: &'a Command,
    watch: Option<SudoWatch>,
}

impl<'a> Feeder<'a> {
    pub fn new(command: &'a Command) -> Self {
        Feeder {
            command,
            watch: command.run_as.as_ref().map(|_| SudoWatch::default()),
        }
    }

    fn payload(&self) -> Vec<StdinWrite> {
        let mut writes = Vec::new();
        if let Some(bytes) = self.command.stdin() {
            writes.push(StdinWrite::Bytes(Sensitive::new(bytes.to_vec())));
        }
        writes.push(StdinWrite::Eof);
        writes
    }

    /// Writes to make as soon as the command is started.
    pub fn start(&self) -> Vec<StdinWrite> {
        if self.watch.is_some() {
            Vec::new()
        } else {
            self.payload()
        }
    }

    /// Handles a chunk of stderr: returns what to show and what to write.
    pub fn stderr(&mut self, chunk: &[u8]) -> Result<(Vec<u8>, Vec<StdinWrite>), ElevationError> {
        let Some(watch) = self.watch.as_mut() else {
            return Ok((chunk.to_vec(), Vec::new()));
        };
        let (shown, steps) = watch.feed(chunk);
        let mut writes = Vec::new();
        let run_as = self.command.run_as.as_ref();
        let user = run_as.map(|r| r.user.clone()).unwrap_or_default();
        for step in steps {
            match step {
                SudoStep::SendPassword => match run_as.and_then(|r| r.password.as_ref()) {
                    Some(pw) => {
                        let mut line = pw.expose().as_bytes().to_vec();
                        line.push(b'\n');
                        writes.push(StdinWrite::Bytes(Sensitive::new(line)));
                    }
                    None => return Err(ElevationError::NoPassword(user)),
                },
                SudoStep::Refused => return Err(ElevationError::Refused(user)),
                SudoStep::Ready => writes.extend(self.payload()),
            }
        }
        Ok((shown, writes))
    }

    /// Output held back at the end of the stream.
    pub fn finish(&mut self) -> Vec<u8> {
        self.watch
            .as_mut()
            .map(SudoWatch::finish)
            .unwrap_or_default()
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv_is_quoted_word_by_word() {
        let c = Command::argv(["echo", "a b", "it's", "$HOME"]);
        assert_eq!(c.render().unwrap(), r#"echo 'a b' "it's" '$HOME'"#);
    }

    #[test]
    fn run_as_wraps_in_sudo_without_the_password() {
        let c = Command::shell("id -un").with_run_as(Some(RunAs {
            user: "bob".into(),
            password: Some(Sensitive::new("hunter2".into())),
            command: vec![],
        }));
        let line = c.render().unwrap();
        assert!(line.starts_with("sudo -S -H -p"), "{line}");
        assert!(line.contains("-u bob sh -c"), "{line}");
        assert!(line.ends_with("; id -un\""), "{line}");
        assert!(!line.contains("hunter2"));
        assert!(!format!("{c:?}").contains("hunter2"));
    }

    #[test]
    fn nul_bytes_are_refused() {
        assert!(Command::argv(["echo", "a\0b"]).render().is_err());
    }

    #[test]
    fn sudo_prompt_is_found_across_chunks_and_hidden() {
        let mut w = SudoWatch::default();
        let (a, s1) = w.feed(b"warn\n[ferry-sudo] pass");
        assert!(s1.is_empty());
        let (b, s2) = w.feed(b"word needed:more");
        assert_eq!(s2, vec![SudoStep::SendPassword]);
        let (c, s3) = w.feed(b"\n[ferry-run-as] ready\nout");
        assert_eq!(s3, vec![SudoStep::Ready]);
        let mut shown = [a, b, c].concat();
        shown.extend(w.finish());
        assert_eq!(String::from_utf8(shown).unwrap(), "warn\nmore\nout");
        // After the marker, output passes through untouched.
        let (d, s4) = w.feed(SUDO_PROMPT.as_bytes());
        assert!(s4.is_empty());
        assert_eq!(d, SUDO_PROMPT.as_bytes());
    }

    #[test]
    fn a_second_prompt_means_refused() {
        let mut w = SudoWatch::default();
        let (_, steps) =
            w.feed(format!("{SUDO_PROMPT}Sorry, try again.\n{SUDO_PROMPT}").as_bytes());
        assert_eq!(steps, vec![SudoStep::SendPassword, SudoStep::Refused]);
    }
}
