//! Running a program the server's config names (an external node
//! classifier, an autosign policy): directly, never through a shell, with
//! its arguments as given, an optional standard input written from a
//! thread of its own (a program that does not read it cannot block the
//! server), its standard output and error read to a bound, and a time
//! limit after which it is killed. Blocking: call it off the async
//! threads.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// What the program did.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Why the program gave no exit status.
#[derive(Debug, thiserror::Error)]
pub enum ProgramError {
    #[error("could not start: {0}")]
    Start(#[source] std::io::Error),
    #[error("did not finish within {0} seconds")]
    TimedOut(u64),
    #[error("could not be waited for: {0}")]
    Wait(#[source] std::io::Error),
}

/// Most bytes of standard error kept.
const MAX_STDERR: u64 = 64 * 1024;

/// Runs `program` with `args`, `stdin` (or nothing) on its standard
/// input, reading at most `max_stdout` bytes of its output, for at most
/// `timeout`.
pub fn run(
    program: &Path,
    args: &[&str],
    stdin: Option<Vec<u8>>,
    max_stdout: u64,
    timeout: Duration,
) -> Result<Finished, ProgramError> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(ProgramError::Start)?;
    if let (Some(mut pipe), Some(bytes)) = (child.stdin.take(), stdin) {
        // A program that exits without reading gets EPIPE here: ignored.
        std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        });
    }
    let read = |pipe: Option<Box<dyn Read + Send>>, limit: u64| {
        std::thread::spawn(move || {
            let mut out = Vec::new();
            if let Some(p) = pipe {
                let _ = p.take(limit).read_to_end(&mut out);
            }
            out
        })
    };
    let stdout = read(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
        max_stdout,
    );
    let stderr = read(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
        MAX_STDERR,
    );
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(ProgramError::TimedOut(timeout.as_secs()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(ProgramError::Wait(e)),
        }
    };
    Ok(Finished {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_arguments_output_and_a_time_limit() {
        let sh = Path::new("/bin/sh");
        let done = run(
            sh,
            &[
                "-c",
                "read line; echo \"$0:$line\"; echo oops >&2; exit 3",
                "arg",
            ],
            Some(b"from stdin\n".to_vec()),
            1024,
            Duration::from_secs(30),
        )
        .expect("ran");
        assert_eq!(done.status.code(), Some(3));
        assert_eq!(String::from_utf8_lossy(&done.stdout), "arg:from stdin\n");
        assert_eq!(String::from_utf8_lossy(&done.stderr), "oops\n");
        let slow = run(
            sh,
            &["-c", "exec sleep 30"],
            None,
            1024,
            Duration::from_millis(200),
        );
        assert!(matches!(slow, Err(ProgramError::TimedOut(_))), "{slow:?}");
        let missing = run(
            Path::new("/nonexistent/program"),
            &[],
            None,
            1,
            Duration::from_secs(1),
        );
        assert!(matches!(missing, Err(ProgramError::Start(_))));
    }
}
