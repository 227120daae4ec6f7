//! Running a task on one target, in as few round trips as the cache allows.
//!
//! Task files live on the target in a content-addressed cache,
//! `<cache-dir>/<sha256>/<file>` (default `~/.cache/ferry/tasks`). Every run
//! is one command, the [`wrapper`](crate::task::wrapper), which checks the
//! sha256 of each file it is about to run and runs nothing when one is
//! missing or altered; ferry then sends those files and runs the wrapper
//! again. A second run of an unchanged task therefore sends no file bytes.
//!
//! Where the transport keeps a long-lived shell on the target (SSH, see
//! `transport::ssh::shell`), the wrapper runs there and the install dir is
//! one per set of files inside that shell's private directory, kept for
//! the connection: later runs (a plan's steps) check the copies already
//! there and copy again only when a check fails; on a miss ferry writes the
//! install copies along with the cache. Elsewhere, and with `--no-cleanup`,
//! every run gets a fresh install dir, removed afterwards unless asked to
//! keep it. Sensitive parameters, run-as and tty keep a channel of their own.

pub mod output;
pub mod remote;

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::Value;

use super::run_collect;
use crate::inventory::Target;
use crate::run::events::{Discard, Event, Sink};
use crate::run::result::{Outcome, Output, Status};
use crate::task::Prepared;
use crate::task::loader::{TaskFile, sha256_hex};
use crate::task::metadata::InputMethod;
use crate::task::wrapper::{self, CACHE_MISS, Layout, MISS_MARKER, basename};
use crate::transport::command::nonce;
use crate::transport::{Command, Transport, TransportError};

pub const DEFAULT_CACHE: &str = ".cache/ferry/tasks";

fn terr(msg: impl Into<String>) -> TransportError {
    TransportError::Command(msg.into())
}

/// What runs on one target: the implementation's executable, how it takes
/// its parameters, and the other files it needs.
pub struct Chosen<'a> {
    pub exe: &'a TaskFile,
    pub method: InputMethod,
    /// The implementation's own files, then the metadata's shared ones.
    pub files: Vec<&'a TaskFile>,
}

/// The implementation for this target, as Bolt chooses it: the first
/// implementation whose requirements the target's features meet (every
/// target has `shell`) and whose `remote` is the run's (remote on a
/// device's proxy, else not), else the task's only executable when the
/// metadata's `remote` is the run's; when no implementation suits, Bolt's
/// `bolt/no-implementation`.
pub fn choose_executable<'a>(
    prepared: &'a Prepared,
    target: &Target,
) -> Result<Chosen<'a>, TransportError> {
    let task = &prepared.task;
    let meta = &task.metadata;
    let mut features: BTreeSet<String> = target.features.clone();
    features.insert("shell".into());
    let no_implementation = || {
        TransportError::NoImplementation(format!(
            "No suitable implementation of {} for {}",
            task.name, target.name
        ))
    };
    let (name, method, own) = if meta.implementations.is_empty() {
        if meta.remote != prepared.remote {
            return Err(no_implementation());
        }
        if task.executables.len() != 1 {
            let names: Vec<&String> = task.executables.keys().collect();
            return Err(terr(format!(
                "task {} has several files ({names:?}) and no implementations in its metadata",
                task.name
            )));
        }
        let name = task.executables.keys().next().cloned().unwrap_or_default();
        (name, meta.input_method, Vec::new())
    } else {
        let (index, chosen) = meta
            .implementations
            .iter()
            .enumerate()
            .find(|(_, i)| {
                i.remote.unwrap_or(meta.remote) == prepared.remote
                    && i.requirements.iter().all(|r| features.contains(r))
            })
            .ok_or_else(no_implementation)?;
        let own: Vec<&TaskFile> = match prepared.implementation_files.get(index) {
            Some(Ok(files)) => files.iter().collect(),
            Some(Err(e)) => {
                return Err(terr(format!(
                    "task {}: implementation {}: {e}",
                    task.name, chosen.name
                )));
            }
            None => Vec::new(),
        };
        (
            chosen.name.clone(),
            chosen.input_method.or(meta.input_method),
            own,
        )
    };
    let exe = task.executables.get(&name).ok_or_else(|| {
        terr(format!(
            "task {}: implementation {name} is not in the module's tasks folder",
            task.name
        ))
    })?;
    let default = if name.ends_with(".ps1") {
        InputMethod::Powershell
    } else {
        InputMethod::Both
    };
    // Each install path once: an implementation may list its own
    // executable, or a file the metadata shares too.
    let mut files: Vec<&TaskFile> = Vec::new();
    for f in own.into_iter().chain(&prepared.support_files) {
        if f.relative != exe.relative && !files.iter().any(|g| g.relative == f.relative) {
            files.push(f);
        }
    }
    Ok(Chosen {
        exe,
        method: method.unwrap_or(default),
        files,
    })
}

/// Sends the files the wrapper reported missing, and with `install` (a
/// reused install dir, whose folders the wrapper made) every file's install
/// copy too, which the next run checks before it runs anything; returns the
/// bytes sent.
async fn send_missing(
    t: &dyn Transport,
    files: &[&TaskFile],
    report: &str,
    install: Option<&str>,
) -> Result<u64, TransportError> {
    let mut words = report.split_whitespace();
    let cache = words
        .next()
        .ok_or_else(|| terr("the target's cache report is empty"))?
        .to_string();
    let missing: BTreeSet<&str> = words.collect();
    let wanted: Vec<&&TaskFile> = files
        .iter()
        .filter(|f| missing.contains(f.sha256.as_str()))
        .collect();
    // The wrapper made the cache dirs of the files it reported missing.
    let mut sent = 0;
    for f in wanted {
        // Executable in the cache, so the copy the wrapper makes runs as is.
        let dest = format!("{cache}/{}/{}", f.sha256, basename(&f.relative));
        t.write_file(&f.bytes, &dest, 0o755).await?;
        sent += f.bytes.len() as u64;
    }
    if let Some(dir) = install {
        for f in files {
            t.write_file(&f.bytes, &format!("{dir}/{}", f.relative), 0o700)
                .await?;
            sent += f.bytes.len() as u64;
        }
    }
    Ok(sent)
}

/// Runs a prepared task on a connected target, keeping at most
/// `max_output` bytes of each output stream.
pub async fn run(
    target: &Target,
    t: &dyn Transport,
    prepared: &Arc<Prepared>,
    sink: &dyn Sink,
    max_output: usize,
) -> Result<Outcome, TransportError> {
    let Chosen {
        exe,
        method,
        files: extra,
    } = choose_executable(prepared, target)?;
    let has_extra = !extra.is_empty();
    let mut files: Vec<&TaskFile> = vec![exe];
    files.extend(extra);
    let settings = t.posix();
    let cache = settings
        .cache_dir
        .clone()
        .unwrap_or_else(|| DEFAULT_CACHE.to_string());
    let tmp = settings
        .tmpdir
        .clone()
        .unwrap_or_else(|| "/tmp".to_string());
    // In the target's long-lived shell (when the transport keeps one and
    // nothing asks to keep install dirs), each set of files gets one dir
    // for the whole connection; otherwise every run gets its own. Sensitive
    // parameters keep a channel of their own: in the shell they would pass
    // through a here-document, which some shells (bash before 5.1, /bin/sh
    // on RHEL 8) write to a temporary file.
    let session = settings
        .session_dir
        .as_deref()
        .filter(|_| prepared.cleanup && settings.run_as.is_none() && prepared.secrets.is_empty());
    let installdir = match session {
        Some(dir) => {
            let set: String = files
                .iter()
                .map(|f| format!("{} {}\n", f.sha256, f.relative))
                .collect();
            format!("{dir}/{}", &sha256_hex(set.as_bytes())[..16])
        }
        None => format!(
            "{}/ferry-task-{}",
            tmp.trim_end_matches('/'),
            nonce(&target.name)
        ),
    };
    let token = nonce(&target.name);
    let mut params = prepared.params.clone();
    params.insert("_task".into(), Value::String(prepared.task.name.clone()));
    if prepared.noop {
        params.insert("_noop".into(), Value::Bool(true));
    }
    if has_extra {
        params.insert("_installdir".into(), Value::String(installdir.clone()));
    }
    let layout = Layout {
        files: &files,
        exe,
        method,
        cache: &cache,
        installdir: &installdir,
        reuse: session.is_some(),
        cleanup: prepared.cleanup,
        run_as: settings.run_as.as_ref(),
        params: &params,
        token: &token,
        deliver: None,
    };
    let command_for = |layout: &Layout<'_>| -> Result<Command, TransportError> {
        let wrapper = wrapper::build(layout)?;
        let command = Command::shell(wrapper.script)
            .with_stdin(wrapper.stdin)
            .with_inline_run_as(settings.run_as.clone());
        Ok(match session {
            Some(_) => command.in_session(),
            None => command,
        })
    };
    let mut command = command_for(&layout)?;
    // Files the long-lived shell can write itself go in the retry's text:
    // no SFTP channel, no process per file.
    let through_shell = session.is_some() && wrapper::deliverable(&files);
    let mut sent = 0u64;
    for attempt in 0..2 {
        let (done, out) = run_collect(
            target,
            t,
            &command,
            if attempt == 0 {
                &Discard as &dyn Sink
            } else {
                sink
            },
            max_output,
        )
        .await?;
        let stdout = out.stdout.text();
        let report = stdout.lines().find_map(|l| l.strip_prefix(MISS_MARKER));
        if let Some(report) = report.filter(|_| done.exit_code == CACHE_MISS) {
            if attempt == 1 {
                return Err(TransportError::File(format!(
                    "task files still fail their sha256 check on the target after sending them:{report}"
                )));
            }
            if through_shell {
                let missing: BTreeSet<String> = report
                    .split_whitespace()
                    .skip(1)
                    .map(String::from)
                    .collect();
                command = command_for(&Layout {
                    deliver: Some(&missing),
                    ..layout
                })?;
                sent += files
                    .iter()
                    .map(|f| f.bytes.len() as u64 * (1 + u64::from(missing.contains(&f.sha256))))
                    .sum::<u64>();
            } else {
                sent +=
                    send_missing(t, &files, report, session.map(|_| installdir.as_str())).await?;
            }
            continue;
        }
        if attempt == 0 {
            // Output went to the discard sink while the cache was unknown;
            // pass on what was kept of it now.
            for (stream, kept) in [
                (crate::transport::Stream::Stdout, &stdout),
                (crate::transport::Stream::Stderr, &out.stderr.text()),
            ] {
                if !kept.is_empty() {
                    sink.event(&Event::Output {
                        target: &target.name,
                        stream,
                        data: kept.as_bytes(),
                    });
                }
            }
        }
        tracing::info!(target_name = %target.name, "task {}: sent {sent} bytes of task files", prepared.task.name);
        let (status, value) =
            output::from_collected(&prepared.task.name, done.exit_code, &out, &prepared.secrets);
        return Ok(match status {
            Status::Success => Outcome::Ok(Output::Task(value)),
            Status::Failure => Outcome::Failed(Output::Task(value)),
        });
    }
    Err(terr("the task did not run"))
}
