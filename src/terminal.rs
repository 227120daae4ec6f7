//! Asking the person at the terminal: a question on standard error and a
//! line read from standard input, with the terminal's echo off for
//! secrets (a password flag without a value, a sensitive `prompt` in a
//! plan, the `prompt` inventory plugin). Whether there is a terminal to ask
//! is the caller's question ([`is_terminal`]); each says in its own words
//! what to do instead when there is none.

use std::io::{BufRead, IsTerminal, Write};

/// Whether standard input is a terminal someone can answer on.
pub fn is_terminal() -> bool {
    std::io::stdin().is_terminal()
}

/// Writes `question` to standard error and reads one line (without its
/// line end). With `hidden`, what is typed is not echoed, and a line end
/// is written after it so the next output starts on its own line.
pub fn ask(question: &str, hidden: bool) -> std::io::Result<String> {
    let stdin = std::io::stdin();
    let mut err = std::io::stderr();
    write!(err, "{question}")?;
    err.flush()?;
    let echo = hidden.then(|| EchoOff::new(&stdin));
    let mut line = String::new();
    let read = stdin.lock().read_line(&mut line);
    if echo.is_some() {
        drop(echo);
        writeln!(err)?;
    }
    read?;
    Ok(line.trim_end_matches(['\n', '\r']).to_string())
}

/// Turns the terminal's echo off until dropped.
struct EchoOff {
    fd: std::os::fd::RawFd,
    saved: Option<libc::termios>,
}

impl EchoOff {
    fn new(tty: &impl std::os::fd::AsRawFd) -> EchoOff {
        let fd = tty.as_raw_fd();
        // SAFETY: tcgetattr/tcsetattr on an open descriptor with a termios
        // this function owns; failures leave echo as it was.
        let saved = unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(fd, &mut t) != 0 {
                None
            } else {
                let saved = t;
                t.c_lflag &= !libc::ECHO;
                libc::tcsetattr(fd, libc::TCSANOW, &t);
                Some(saved)
            }
        };
        EchoOff { fd, saved }
    }
}

impl Drop for EchoOff {
    fn drop(&mut self) {
        if let Some(saved) = &self.saved {
            // SAFETY: restores the settings read in `new` on the same descriptor.
            unsafe {
                libc::tcsetattr(self.fd, libc::TCSANOW, saved);
            }
        }
    }
}
