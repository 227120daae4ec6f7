//! The actions the executor can carry out on a target: a command
//! ([`command`]), a script ([`script`]), a file upload or download
//! ([`files`]), a task ([`task`]) and a network device's configuration
//! ([`device`]). Each builds its commands as typed
//! values and turns what happened into the target's outcome. Output is kept
//! within the run's limit (see [`super::capture`]); a result whose output
//! was cut says so in `truncated`. This module holds what they share:
//! running a command with its output reported as events, and the
//! temporary directories scripts and run-as uploads go through. A network
//! device target takes commands (its CLI lines) only.

pub mod apply;
pub mod command;
pub mod device;
pub mod device_catalog;
pub mod files;
pub mod script;
pub mod task;

use std::path::{Path, PathBuf};

use super::capture::{Collected, DEFAULT_MAX_OUTPUT};
use super::events::{Discard, Event, Sink};
use super::result::Outcome;
use crate::inventory::Target;
use crate::transport::{Command, Finished, Transport, TransportError};

#[derive(Clone, Debug)]
pub enum Action {
    Command {
        line: String,
    },
    Script {
        path: PathBuf,
        args: Vec<String>,
    },
    Upload {
        src: PathBuf,
        dest: String,
    },
    Download {
        src: String,
        dest: PathBuf,
    },
    Task(std::sync::Arc<crate::task::Prepared>),
    Apply(std::sync::Arc<apply::ApplyJob>),
    /// Configuring or backing up network devices through their CLI.
    Device(std::sync::Arc<device::DeviceJob>),
    /// A command or script with environment variables set (a plan step's
    /// `env_vars`). The values reach the target on the command's stdin,
    /// never on its command line.
    Env {
        vars: Vec<(String, String)>,
        action: Box<Action>,
    },
}

impl Action {
    pub fn name(&self) -> &'static str {
        match self {
            Action::Command { .. } => "command",
            Action::Script { .. } => "script",
            Action::Upload { .. } => "upload",
            Action::Download { .. } => "download",
            Action::Task(_) => "task",
            Action::Apply(_) => "apply",
            Action::Device(job) => job.name(),
            Action::Env { action, .. } => action.name(),
        }
    }

    /// The action with `proxies` (see [`task::remote::proxies`]) for the
    /// remote tasks it runs on devices.
    pub fn with_proxies(self, proxies: std::collections::BTreeMap<String, Target>) -> Action {
        match self {
            Action::Task(prepared) if !proxies.is_empty() => {
                let mut prepared = std::sync::Arc::unwrap_or_clone(prepared);
                prepared.proxies = proxies;
                Action::Task(std::sync::Arc::new(prepared))
            }
            other => other,
        }
    }

    /// What the action works on, as Bolt's `object` field.
    pub fn object(&self) -> String {
        match self {
            Action::Command { line } => line.clone(),
            Action::Script { path, .. } => path.display().to_string(),
            Action::Upload { src, .. } => src.display().to_string(),
            Action::Download { src, .. } => src.clone(),
            Action::Task(p) => p.task.name.clone(),
            Action::Apply(job) => job.object(),
            Action::Device(job) => job.object(),
            Action::Env { action, .. } => action.object(),
        }
    }

    /// Carries out the action on a connected target, keeping at most
    /// `max_output` bytes of each output stream in the result.
    pub async fn perform(
        &self,
        target: &Target,
        t: &dyn Transport,
        sink: &dyn Sink,
        max_output: usize,
    ) -> Outcome {
        if let Some(dev) = t.device() {
            match self {
                Action::Command { .. } | Action::Device(_) => {}
                Action::Task(prepared) if device::is_facts_task(&prepared.task.name) => {
                    return device::run(target, dev, &device::DeviceJob::Facts)
                        .await
                        .unwrap_or_else(Outcome::Errored);
                }
                Action::Task(prepared) if prepared.task.metadata.runs_remote() => {
                    return task::remote::run(target, dev, prepared, sink, max_output)
                        .await
                        .unwrap_or_else(Outcome::Errored);
                }
                Action::Apply(job) => {
                    return device_catalog::run(target, dev, job, sink)
                        .await
                        .unwrap_or_else(Outcome::Errored);
                }
                other => {
                    let what = match other {
                        Action::Env { .. } => "a step with environment variables".to_string(),
                        Action::Task(_) => {
                            "a task that is not remote (Bolt's `remote: true` metadata runs a task on the device's proxy)".to_string()
                        }
                        other => format!("a {}", other.name()),
                    };
                    return Outcome::Errored(crate::transport::network::unsupported(
                        &target.name,
                        &what,
                    ));
                }
            }
        }
        let done = match self {
            Action::Command { line } => command::run(target, t, line, sink, max_output).await,
            Action::Script { path, args } => {
                script::run(target, t, path, args, sink, max_output).await
            }
            Action::Task(prepared) => task::run(target, t, prepared, sink, max_output).await,
            Action::Apply(job) => apply::run(target, t, job, sink, max_output).await,
            Action::Device(job) => match t.device() {
                Some(dev) => device::run(target, dev, job).await,
                None => Err(TransportError::Config(format!(
                    "{}: {} is for network devices (transport: network)",
                    target.name,
                    job.name()
                ))),
            },
            Action::Upload { src, dest } => files::upload(target, t, src, dest).await,
            Action::Download { src, dest } => files::download(target, t, src, dest).await,
            Action::Env { vars, action } => match action.as_ref() {
                Action::Command { line } => {
                    command::run_env(target, t, line, vars, sink, max_output).await
                }
                Action::Script { path, args } => {
                    script::run_env(target, t, path, args, vars, sink, max_output).await
                }
                other => Err(TransportError::Config(format!(
                    "environment variables are for commands and scripts, not {}",
                    other.name()
                ))),
            },
        };
        done.unwrap_or_else(Outcome::Errored)
    }
}

/// Runs a command, reporting output as events as it arrives and keeping
/// at most `limit` bytes of each stream.
pub async fn run_collect(
    target: &Target,
    t: &dyn Transport,
    command: &Command,
    sink: &dyn Sink,
    limit: usize,
) -> Result<(Finished, Collected), TransportError> {
    let mut out = Collected::new(limit);
    let done = t
        .run(command, &mut |stream, data| {
            sink.event(&Event::Output {
                target: &target.name,
                stream,
                data,
            });
            out.push(stream, data);
        })
        .await?;
    Ok((done, out))
}

/// Runs one of ferry's own helper commands (mktemp, chmod, cp, rm), its
/// output reported nowhere.
async fn run_quiet(
    target: &Target,
    t: &dyn Transport,
    command: &Command,
) -> Result<(Finished, Collected), TransportError> {
    run_collect(target, t, command, &Discard, DEFAULT_MAX_OUTPUT).await
}

/// Makes a temporary directory on the target as the login user (under
/// its `tmpdir`, default `/tmp`).
async fn make_tempdir(target: &Target, t: &dyn Transport) -> Result<String, TransportError> {
    let template = match &t.posix().tmpdir {
        Some(dir) => format!("{}/ferry.XXXXXXXX", dir.trim_end_matches('/')),
        None => "/tmp/ferry.XXXXXXXX".to_string(),
    };
    let mktemp = Command::argv(["mktemp", "-d", &template]).as_login_user();
    let (done, out) = run_quiet(target, t, &mktemp).await?;
    let dir = out.stdout.text().trim().to_string();
    if done.exit_code != 0 || dir.is_empty() || out.stdout.is_truncated() {
        return Err(TransportError::File(format!(
            "cannot make a temporary directory: {}",
            out.stderr.text().trim()
        )));
    }
    Ok(dir)
}

async fn remove_tempdir(target: &Target, t: &dyn Transport, dir: &str) {
    let rm = Command::argv(["rm", "-rf", dir]).as_login_user();
    let _ = run_quiet(target, t, &rm).await;
}

/// Copies the local `path` into a fresh temporary directory on the target
/// (as the login user, `chmod -R mode` after), hands its remote path to
/// `then`, and removes the directory whatever `then` did. `default_name`
/// names a path that has no file name.
async fn staged<T>(
    target: &Target,
    t: &dyn Transport,
    path: &Path,
    default_name: &str,
    mode: &str,
    then: impl AsyncFnOnce(&str) -> Result<T, TransportError>,
) -> Result<T, TransportError> {
    let dir = make_tempdir(target, t).await?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| default_name.into());
    let remote = format!("{dir}/{name}");
    let result = async {
        t.upload(path, &remote).await?;
        let open = Command::argv(["chmod", "-R", mode, &dir]).as_login_user();
        run_quiet(target, t, &open).await?;
        then(&remote).await
    }
    .await;
    remove_tempdir(target, t, &dir).await;
    result
}
