//! Actions on network devices, through their CLI session
//! ([`crate::transport::network::DeviceCli`], the real one being
//! [`crate::transport::network::Network`]): `configure` brings the running
//! configuration to a desired hierarchical text (only the lines it lacks,
//! each under its parents, in configuration mode; on a platform with a
//! candidate configuration (Junos) committed, and thrown away when a line or
//! the commit is refused; then read back from operational mode and checked;
//! `write memory` on `save` where a commit does not already save it; with
//! `noop`, only the diff), `backup`
//! writes the running configuration to `DIR/<target>.conf`, and `facts`
//! reads the device's platform, host name, version and interfaces. A line the
//! device rejects fails that target with the device's message, after the
//! session has left configuration mode. The diff itself is the pure
//! [`crate::transport::network::config`].

use std::path::PathBuf;

use serde_json::json;

use super::super::result::{Outcome, Output};
use crate::inventory::Target;
use crate::transport::TransportError;
use crate::transport::network::DeviceCli;
use crate::transport::network::cli::Mode;
use crate::transport::network::config::{self, Change, Step};
use crate::transport::network::facts;

/// What to do on each device.
#[derive(Clone, Debug)]
pub enum DeviceJob {
    Configure {
        /// The desired configuration text.
        desired: String,
        /// Where it came from (a file name, or `--lines`), for `object`.
        source: String,
        noop: bool,
        save: bool,
    },
    Backup {
        dir: PathBuf,
    },
    /// The device's platform, host name, version and interfaces.
    Facts,
}

/// The kind of a device's refusal (a rejected line, a check that failed).
pub const DEVICE_ERROR: &str = "ferry/device-error";

impl DeviceJob {
    pub fn name(&self) -> &'static str {
        match self {
            DeviceJob::Configure { .. } => "configure",
            DeviceJob::Backup { .. } => "backup",
            DeviceJob::Facts => "facts",
        }
    }

    pub fn object(&self) -> String {
        match self {
            DeviceJob::Configure { source, .. } => source.clone(),
            DeviceJob::Backup { dir } => dir.display().to_string(),
            DeviceJob::Facts => "facts".to_string(),
        }
    }
}

/// Whether a task is the facts task (ferry's built-in `ferry::facts`, or
/// `facts` as plans and Bolt users call it): on a device it gives the
/// device's facts, read through its CLI, instead of running anything.
pub fn is_facts_task(name: &str) -> bool {
    matches!(name, "ferry::facts" | "facts")
}

/// Carries out `job` on the device `dev` (the target `target`).
pub async fn run(
    target: &Target,
    dev: &dyn DeviceCli,
    job: &DeviceJob,
) -> Result<Outcome, TransportError> {
    match job {
        DeviceJob::Configure {
            desired,
            noop,
            save,
            ..
        } => configure(dev, desired, *noop, *save).await,
        DeviceJob::Backup { dir } => backup(target, dev, dir).await,
        DeviceJob::Facts => device_facts(dev).await,
    }
}

/// A failed outcome with the device's message.
fn refused(msg: String, details: serde_json::Value) -> Outcome {
    Outcome::Failed(Output::Task(json!({
        "_error": {"kind": DEVICE_ERROR, "msg": msg, "details": details}
    })))
}

/// The device's running configuration, as text.
pub(super) async fn running(
    dev: &dyn DeviceCli,
) -> Result<Result<String, Outcome>, TransportError> {
    let command = dev.cli_dialect().show_running();
    let answer = dev.exec(command).await?;
    Ok(match answer.error {
        Some(e) => Err(refused(
            format!("'{command}' failed: {e}"),
            json!({"command": command}),
        )),
        None => Ok(answer.output),
    })
}

/// Brings the device's running configuration (on a candidate platform,
/// its committed one) to `desired`: the diff, the push (and commit), then
/// the configuration read back from operational mode and checked.
pub async fn configure(
    dev: &dyn DeviceCli,
    desired: &str,
    noop: bool,
    save: bool,
) -> Result<Outcome, TransportError> {
    let wanted = config::parse(desired);
    let before = match running(dev).await? {
        Ok(text) => text,
        Err(refusal) => return Ok(refusal),
    };
    let change = config::diff(&config::parse(&before), &wanted);
    let diff = change.to_string();
    if change.is_empty() || noop {
        let said = match change.added() {
            0 => "in sync: nothing to push".to_string(),
            n => format!("would push {n} line(s):\n{diff}"),
        };
        return Ok(Outcome::Ok(Output::Task(json!({
            "changed": false,
            "noop": noop,
            "diff": diff,
            "lines": change.added(),
            "_output": said,
        }))));
    }
    if let Some(refusal) = push(dev, &change).await? {
        return Ok(refusal);
    }
    let after = match running(dev).await? {
        Ok(text) => text,
        Err(refusal) => return Ok(refusal),
    };
    let left = config::diff(&config::parse(&after), &wanted);
    if !left.is_empty() {
        return Ok(refused(
            format!("the device's running configuration still lacks:\n{left}"),
            json!({"diff": diff, "missing": left.to_string()}),
        ));
    }
    // Where a commit makes a change take effect, it also makes it the
    // configuration the device starts with: there is nothing more to save.
    if save && let Some(command) = dev.cli_dialect().save() {
        let answer = dev.exec(command).await?;
        if let Some(e) = answer.error {
            return Ok(refused(
                format!("'{command}' failed: {e}"),
                json!({"command": command, "diff": diff}),
            ));
        }
    }
    let done = match (dev.cli_dialect().commit().is_some(), save) {
        (true, true) => " and committed (which saves it)",
        (true, false) => " and committed",
        (false, true) => " and saved",
        (false, false) => "",
    };
    let said = format!("pushed {} line(s){done}:\n{diff}", change.added());
    Ok(Outcome::Ok(Output::Task(json!({
        "changed": true,
        "noop": false,
        "diff": diff,
        "lines": change.added(),
        "saved": save,
        "_output": said,
    }))))
}

/// Enters configuration mode, sends the change's lines, commits them where
/// the platform keeps a candidate configuration (Junos: nothing takes
/// effect before `commit`, which checks the whole candidate first and
/// activates nothing when the check fails), and leaves again. A line the
/// device rejects, or a commit it refuses, is the refusal returned; on a
/// candidate platform the uncommitted lines are then discarded (`rollback
/// 0`) before leaving, so nothing half-made stays behind and leaving asks
/// no question.
pub(super) async fn push(
    dev: &dyn DeviceCli,
    change: &Change,
) -> Result<Option<Outcome>, TransportError> {
    let dialect = dev.cli_dialect();
    let enter = dev.exec(dialect.configure()).await?;
    if enter.error.is_some() || enter.prompt.mode != Mode::Config {
        return Ok(Some(refused(
            format!(
                "the device did not enter configuration mode: {}",
                enter.error.unwrap_or(enter.output)
            ),
            json!({"command": dialect.configure()}),
        )));
    }
    let mut refusal = None;
    let mut context = enter.prompt.context;
    for line in change.commands() {
        let answer = dev.exec(&line.text).await?;
        if let Some(e) = answer.error {
            refusal = Some(refused(
                format!("the device rejected '{}': {e}", line.text),
                json!({"line": line.text, "diff": change.to_string()}),
            ));
            break;
        }
        // A line that opens a block and leaves the prompt where it was was
        // not taken, whatever the device printed (FRR's "BGP is already
        // running" has no `%`).
        if line.step == Step::Enter && dialect.shows_context() && answer.prompt.context == context {
            let said = match answer.output.trim() {
                "" => "the prompt did not change".to_string(),
                out => out.to_string(),
            };
            refusal = Some(refused(
                format!("the device did not enter '{}': {said}", line.text),
                json!({"line": line.text, "diff": change.to_string()}),
            ));
            break;
        }
        context = answer.prompt.context;
    }
    if refusal.is_none()
        && let Some(commit) = dialect.commit()
    {
        let answer = dev.exec(commit).await?;
        if let Some(e) = answer.error {
            // Junos explains a failed check above its error line.
            let why = match answer.output.trim() {
                "" => e,
                all => all.to_string(),
            };
            refusal = Some(refused(
                format!("the device refused to commit the change:\n{why}"),
                json!({"command": commit, "diff": change.to_string()}),
            ));
        }
    }
    if refusal.is_some()
        && let Some(discard) = dialect.discard()
    {
        dev.exec(discard).await?;
    }
    let end = dev.exec(dialect.end()).await?;
    if refusal.is_none() && (end.error.is_some() || end.prompt.mode == Mode::Config) {
        refusal = Some(refused(
            "the device did not leave configuration mode".to_string(),
            json!({"command": dialect.end()}),
        ));
    }
    Ok(refusal)
}

/// The outputs of the platform's fact commands, read into facts.
async fn device_facts(dev: &dyn DeviceCli) -> Result<Outcome, TransportError> {
    let platform = dev.cli_dialect().platform;
    let mut outputs = Vec::new();
    for command in facts::commands(platform) {
        let answer = dev.exec(command).await?;
        if let Some(e) = answer.error {
            return Ok(refused(
                format!("'{command}' failed: {e}"),
                json!({"command": command}),
            ));
        }
        outputs.push(answer.output);
    }
    let value = serde_json::to_value(facts::parse(platform, &outputs))
        .map_err(|e| TransportError::Command(format!("cannot represent the facts: {e}")))?;
    Ok(Outcome::Ok(Output::Task(value)))
}

/// The running configuration without the banner `show running-config`
/// prints before it.
fn without_banner(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let skip = lines
        .iter()
        .take_while(|l| {
            let t = l.trim();
            t.is_empty()
                || t.starts_with("Building configuration")
                || t.starts_with("Current configuration")
        })
        .count();
    let mut out = lines[skip..].join("\n");
    out.push('\n');
    out
}

async fn backup(
    target: &Target,
    dev: &dyn DeviceCli,
    dir: &std::path::Path,
) -> Result<Outcome, TransportError> {
    let name = &target.name;
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\0']) {
        return Err(TransportError::File(format!(
            "{name}: the target's name cannot be a file name in {}",
            dir.display()
        )));
    }
    let text = match running(dev).await? {
        Ok(text) => without_banner(&text),
        Err(refusal) => return Ok(refusal),
    };
    let path = dir.join(format!("{name}.conf"));
    tokio::fs::write(&path, text.as_bytes())
        .await
        .map_err(|e| TransportError::File(format!("cannot write {}: {e}", path.display())))?;
    Ok(Outcome::Ok(Output::Transfer {
        message: format!(
            "Saved the running configuration of {name} to {}",
            path.display()
        ),
        path: Some(path.display().to_string()),
    }))
}
