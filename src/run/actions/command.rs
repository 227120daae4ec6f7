//! A command line run through the target's shell. Its kept output and exit
//! code are the result; a non-zero exit is a failure (Bolt's
//! `puppetlabs.tasks/command-error`, issue code `COMMAND_ERROR`).

use super::run_collect;
use crate::inventory::Target;
use crate::run::capture::Collected;
use crate::run::events::Sink;
use crate::run::result::{Outcome, Output};
use crate::transport::command::quote;
use crate::transport::{Command, Transport, TransportError};

/// Runs `line` with `sh -c` on a connected target.
pub async fn run(
    target: &Target,
    t: &dyn Transport,
    line: &str,
    sink: &dyn Sink,
    max_output: usize,
) -> Result<Outcome, TransportError> {
    let command = Command::shell(line.to_string());
    let (done, out) = run_collect(target, t, &command, sink, max_output).await?;
    Ok(finished(done.exit_code, out))
}

/// Runs `line` with the environment variables `vars` set: they come on
/// the command's stdin as `export` lines the shell evaluates before the
/// line, so no value is ever on a command line.
pub async fn run_env(
    target: &Target,
    t: &dyn Transport,
    line: &str,
    vars: &[(String, String)],
    sink: &dyn Sink,
    max_output: usize,
) -> Result<Outcome, TransportError> {
    let command = with_env(line, vars)?;
    let (done, out) = run_collect(target, t, &command, sink, max_output).await?;
    Ok(finished(done.exit_code, out))
}

/// `line` run after the shell has read `vars` from stdin.
pub fn with_env(line: &str, vars: &[(String, String)]) -> Result<Command, TransportError> {
    let mut exports = String::new();
    for (name, value) in vars {
        let mut chars = name.chars();
        let valid = chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(TransportError::Config(format!(
                "'{name}' is not a valid environment variable name"
            )));
        }
        let quoted = quote(value).map_err(|e| TransportError::Config(format!("{name}: {e}")))?;
        exports.push_str(&format!("export {name}={quoted}\n"));
    }
    Ok(
        Command::shell(format!("eval \"$(cat)\" || exit 125\n{line}"))
            .with_stdin(exports.into_bytes()),
    )
}

/// The outcome of a command that ran to its end: non-zero exit is a
/// failure. When output was cut, `truncated` gives the bytes each stream
/// lost.
pub fn finished(exit_code: i32, out: Collected) -> Outcome {
    let output = Output::Command(out.into_output(exit_code));
    if exit_code == 0 {
        Outcome::Ok(output)
    } else {
        Outcome::Failed(output)
    }
}
