//! A local script run on the target: copied into a fresh temporary
//! directory, made readable by a run-as user, run with its arguments, and
//! removed again. Its result is a command's.

use std::path::Path;

use super::{command, run_collect, staged};
use crate::inventory::Target;
use crate::run::events::Sink;
use crate::run::result::Outcome;
use crate::transport::command::quote;
use crate::transport::{Command, Transport, TransportError};

/// Runs the script at `path` with `args` on a connected target.
pub async fn run(
    target: &Target,
    t: &dyn Transport,
    path: &Path,
    args: &[String],
    sink: &dyn Sink,
    max_output: usize,
) -> Result<Outcome, TransportError> {
    run_env(target, t, path, args, &[], sink, max_output).await
}

/// Runs the script with the environment variables `vars` set (see
/// [`command::with_env`]).
pub async fn run_env(
    target: &Target,
    t: &dyn Transport,
    path: &Path,
    args: &[String],
    vars: &[(String, String)],
    sink: &dyn Sink,
    max_output: usize,
) -> Result<Outcome, TransportError> {
    // A run-as user other than the login user must be able to read it too.
    staged(target, t, path, "script", "a+rx", async |remote| {
        let mut argv = vec![remote.to_string()];
        argv.extend(args.iter().cloned());
        let command = if vars.is_empty() {
            Command::argv(argv)
        } else {
            let words = argv
                .iter()
                .map(|w| quote(w))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| TransportError::Config(e.to_string()))?;
            command::with_env(&words.join(" "), vars)?
        };
        let (done, out) = run_collect(target, t, &command, sink, max_output).await?;
        Ok(command::finished(done.exit_code, out))
    })
    .await
}
