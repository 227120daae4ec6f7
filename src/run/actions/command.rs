//! A command line run through the target's shell. Its kept output and exit
//! code are the result; a non-zero exit is a failure (Bolt's
//! `puppetlabs.tasks/command-error`, issue code `COMMAND_ERROR`).

use super::run_collect;
use crate::inventory::Target;
use crate::run::capture::Collected;
use crate::run::events::Sink;
use crate::run::result::{Outcome, Output};
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
