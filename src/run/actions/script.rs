//! A local script run on the target: copied into a fresh temporary
//! directory, made readable by a run-as user, run with its arguments, and
//! removed again. Its result is a command's.

use std::path::Path;

use super::{command, make_tempdir, remove_tempdir, run_collect, run_quiet};
use crate::inventory::Target;
use crate::run::events::Sink;
use crate::run::result::Outcome;
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
    let dir = make_tempdir(target, t).await?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "script".into());
    let remote = format!("{dir}/{name}");
    let result = async {
        t.upload(path, &remote).await?;
        // A run-as user other than the login user must be able to read it too.
        let chmod = Command::argv(["chmod", "-R", "a+rx", &dir]).as_login_user();
        run_quiet(target, t, &chmod).await?;
        let mut argv = vec![remote.clone()];
        argv.extend(args.iter().cloned());
        let (done, out) = run_collect(target, t, &Command::argv(argv), sink, max_output).await?;
        Ok(command::finished(done.exit_code, out))
    }
    .await;
    remove_tempdir(target, t, &dir).await;
    result
}
