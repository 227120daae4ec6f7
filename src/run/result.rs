//! What became of an action on each target, and the summary of a whole
//! run. Outcomes are typed: an action that ran and succeeded is
//! [`Outcome::Ok`], one that ran and failed (a non-zero exit, a task's
//! error) is [`Outcome::Failed`], one that could not run at all (no
//! connection, a failed transfer, a task with no implementation for the
//! target) is [`Outcome::Errored`]. Bolt's JSON shape (`{target, action,
//! object, status, value}`) is made only when a result is serialized, at
//! the output and server edges. Partial failure is a value: a run over 50
//! targets of which 3 are down is a [`Summary`] with 3 failed results.

use std::borrow::Cow;
use std::time::Duration;

use serde::ser::{SerializeMap, SerializeStruct};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use crate::transport::TransportError;

/// Bolt's `status` of a result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Success,
    Failure,
}

/// What became of an action on one target.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// It ran and succeeded.
    Ok(Output),
    /// It ran and failed: a command's non-zero exit, a task's own error or
    /// exit status. The output says why.
    Failed(Output),
    /// It could not run: the connection, a transfer, or the task could not
    /// be started on this target.
    Errored(TransportError),
}

/// What an action that ran produced.
#[derive(Clone, Debug)]
pub enum Output {
    /// A command or script: its kept output and exit code.
    Command(CommandOutput),
    /// A task: the value it printed (or its text as `_output`), redacted.
    /// A task's result is JSON by nature (Bolt's task protocol).
    Task(Value),
    /// A catalog applied: Puppet's report of it.
    Apply(Box<crate::apply::Report>),
    /// A file transfer: what was done, and where a download went.
    Transfer {
        message: String,
        path: Option<String>,
    },
}

/// A finished command's kept output.
#[derive(Clone, Debug, Default)]
pub struct CommandOutput {
    pub exit_code: i32,
    pub stdout: String,
    pub stderr: String,
    pub merged_output: String,
    pub truncated: Truncated,
}

/// The bytes each stream's kept text leaves out, for the streams that were
/// cut (Bolt's result keys; fields in the order serde_json sorts them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Truncated {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merged_output: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stdout: Option<u64>,
}

impl Truncated {
    pub fn is_none(&self) -> bool {
        *self == Truncated::default()
    }

    /// Each cut stream and what it lost, in Bolt's key order.
    pub fn streams(&self) -> impl Iterator<Item = (&'static str, u64)> {
        [
            ("merged_output", self.merged_output),
            ("stderr", self.stderr),
            ("stdout", self.stdout),
        ]
        .into_iter()
        .filter_map(|(k, n)| n.map(|n| (k, n)))
    }
}

/// An outcome's error as Bolt names it: its `kind` and `msg`.
#[derive(Debug, PartialEq, Eq)]
pub struct ErrorText<'a> {
    pub kind: &'a str,
    pub msg: Cow<'a, str>,
}

/// The kind of an apply in which resources failed (Bolt's).
pub const APPLY_ERROR: &str = "bolt/resource-failure";

/// The kind of a command's non-zero exit (Bolt's).
pub const COMMAND_ERROR: &str = "puppetlabs.tasks/command-error";

/// The issue code of a command's non-zero exit (Bolt's).
pub const COMMAND_ISSUE: &str = "COMMAND_ERROR";

impl Outcome {
    pub fn status(&self) -> Status {
        match self {
            Outcome::Ok(_) => Status::Success,
            Outcome::Failed(_) | Outcome::Errored(_) => Status::Failure,
        }
    }

    /// What the action produced, when it ran.
    pub fn output(&self) -> Option<&Output> {
        match self {
            Outcome::Ok(o) | Outcome::Failed(o) => Some(o),
            Outcome::Errored(_) => None,
        }
    }

    /// The error of an outcome that is not `Ok` (a task's error only when
    /// its `_error` has a text `msg`).
    pub fn error(&self) -> Option<ErrorText<'_>> {
        match self {
            Outcome::Ok(Output::Task(v)) | Outcome::Failed(Output::Task(v)) => {
                let e = v.get("_error")?;
                let msg = e.get("msg")?.as_str()?;
                let kind = e.get("kind").and_then(Value::as_str).unwrap_or("error");
                Some(ErrorText {
                    kind,
                    msg: Cow::Borrowed(msg),
                })
            }
            Outcome::Ok(_) => None,
            Outcome::Failed(Output::Command(c)) => Some(ErrorText {
                kind: COMMAND_ERROR,
                msg: Cow::Owned(command_error_msg(c.exit_code)),
            }),
            Outcome::Failed(Output::Transfer { .. }) => None,
            Outcome::Failed(Output::Apply(r)) => Some(ErrorText {
                kind: APPLY_ERROR,
                msg: Cow::Owned(format!("Resources failed to apply for {}", r.host)),
            }),
            Outcome::Errored(e) => Some(ErrorText {
                kind: e.kind(),
                msg: Cow::Owned(e.to_string()),
            }),
        }
    }

    /// The result value in Bolt's JSON shape.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Rewrites every text the outcome holds (output, messages, errors);
    /// `f` is told whether the text is part of the error.
    pub fn rewrite_texts(&mut self, f: &mut dyn FnMut(&mut String, bool)) {
        match self {
            Outcome::Ok(o) | Outcome::Failed(o) => match o {
                Output::Command(c) => {
                    for s in [&mut c.stdout, &mut c.stderr, &mut c.merged_output] {
                        f(s, false);
                    }
                }
                // A task's error is its top-level `_error`.
                Output::Task(Value::Object(map)) => {
                    for (k, v) in map.iter_mut() {
                        rewrite_value(v, k == "_error", f);
                    }
                }
                Output::Task(v) => rewrite_value(v, false, f),
                // Reports hold the target's own texts; secrets are
                // redacted when the report is made.
                Output::Apply(_) => {}
                Output::Transfer { message, path } => {
                    f(message, false);
                    if let Some(p) = path {
                        f(p, false);
                    }
                }
            },
            Outcome::Errored(e) => match e {
                TransportError::Connect { message: s, .. }
                | TransportError::Command(s)
                | TransportError::NoImplementation(s)
                | TransportError::File(s)
                | TransportError::Config(s) => f(s, true),
                TransportError::Timeout { .. } => {}
            },
        }
    }
}

fn rewrite_value(v: &mut Value, in_error: bool, f: &mut dyn FnMut(&mut String, bool)) {
    match v {
        Value::String(s) => f(s, in_error),
        Value::Array(items) => items.iter_mut().for_each(|i| rewrite_value(i, in_error, f)),
        Value::Object(map) => {
            map.values_mut().for_each(|v| rewrite_value(v, in_error, f));
        }
        _ => {}
    }
}

fn command_error_msg(exit_code: i32) -> String {
    format!("The command failed with exit code {exit_code}")
}

/// An error as Bolt writes it in a result's `_error` (keys in the order
/// serde_json sorts them).
#[derive(Serialize)]
struct ErrorValue<'a, D: Serialize> {
    details: D,
    #[serde(skip_serializing_if = "Option::is_none")]
    issue_code: Option<&'a str>,
    kind: &'a str,
    msg: &'a str,
}

#[derive(Serialize)]
struct ExitDetails {
    exit_code: i32,
}

#[derive(Serialize)]
struct NoDetails {}

/// A command's value: `_error` when it failed, then its output.
#[derive(Serialize)]
struct CommandValue<'a> {
    #[serde(rename = "_error", skip_serializing_if = "Option::is_none")]
    error: Option<ErrorValue<'a, ExitDetails>>,
    exit_code: i32,
    merged_output: &'a str,
    stderr: &'a str,
    stdout: &'a str,
    #[serde(skip_serializing_if = "Truncated::is_none")]
    truncated: Truncated,
}

/// The value of a result, as Bolt writes it.
impl Serialize for Outcome {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Outcome::Ok(o) | Outcome::Failed(o) => match o {
                Output::Command(c) => {
                    let failed = matches!(self, Outcome::Failed(_));
                    let msg = failed.then(|| command_error_msg(c.exit_code));
                    CommandValue {
                        error: msg.as_deref().map(|msg| ErrorValue {
                            details: ExitDetails {
                                exit_code: c.exit_code,
                            },
                            issue_code: Some(COMMAND_ISSUE),
                            kind: COMMAND_ERROR,
                            msg,
                        }),
                        exit_code: c.exit_code,
                        merged_output: &c.merged_output,
                        stderr: &c.stderr,
                        stdout: &c.stdout,
                        truncated: c.truncated,
                    }
                    .serialize(s)
                }
                Output::Task(v) => v.serialize(s),
                Output::Apply(report) => {
                    let mut map = s.serialize_map(None)?;
                    map.serialize_entry("report", report)?;
                    map.serialize_entry("_output", &report.summary_line())?;
                    if matches!(self, Outcome::Failed(_)) {
                        let msg = format!("Resources failed to apply for {}", report.host);
                        map.serialize_entry(
                            "_error",
                            &ErrorValue {
                                details: NoDetails {},
                                issue_code: None,
                                kind: APPLY_ERROR,
                                msg: &msg,
                            },
                        )?;
                    }
                    map.end()
                }
                Output::Transfer { message, path } => {
                    let mut map = s.serialize_map(None)?;
                    map.serialize_entry("_output", message)?;
                    if let Some(p) = path {
                        map.serialize_entry("path", p)?;
                    }
                    map.end()
                }
            },
            Outcome::Errored(e) => {
                let msg = e.to_string();
                let mut map = s.serialize_map(Some(1))?;
                map.serialize_entry(
                    "_error",
                    &ErrorValue {
                        details: NoDetails {},
                        issue_code: e.issue_code(),
                        kind: e.kind(),
                        msg: &msg,
                    },
                )?;
                map.end()
            }
        }
    }
}

/// One item of Bolt's result list.
#[derive(Clone, Debug)]
pub struct TargetResult {
    pub target: String,
    pub action: String,
    pub object: String,
    pub outcome: Outcome,
}

impl TargetResult {
    pub fn ok(&self) -> bool {
        matches!(self.outcome, Outcome::Ok(_))
    }

    pub fn status(&self) -> Status {
        self.outcome.status()
    }

    /// The result's value in Bolt's JSON shape.
    pub fn value(&self) -> Value {
        self.outcome.to_value()
    }
}

/// `{target, action, object, status, value}`, Bolt's result item.
impl Serialize for TargetResult {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut item = s.serialize_struct("TargetResult", 5)?;
        item.serialize_field("target", &self.target)?;
        item.serialize_field("action", &self.action)?;
        item.serialize_field("object", &self.object)?;
        item.serialize_field("status", &self.status())?;
        item.serialize_field("value", &self.outcome)?;
        item.end()
    }
}

/// Every result of a run, in the order the targets finished.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub results: Vec<TargetResult>,
    pub elapsed: Duration,
}

impl Summary {
    pub fn failed(&self) -> impl Iterator<Item = &TargetResult> {
        self.results.iter().filter(|r| !r.ok())
    }

    pub fn succeeded(&self) -> impl Iterator<Item = &TargetResult> {
        self.results.iter().filter(|r| r.ok())
    }

    pub fn all_ok(&self) -> bool {
        self.results.iter().all(TargetResult::ok)
    }

    /// The whole run in Bolt's JSON format.
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "items": self.results,
            "target_count": self.results.len(),
            "elapsed_time": self.elapsed.as_secs(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn command(exit_code: i32) -> CommandOutput {
        CommandOutput {
            exit_code,
            stdout: "out".into(),
            stderr: "err".into(),
            merged_output: "outerr".into(),
            truncated: Truncated::default(),
        }
    }

    #[test]
    fn command_values_keep_bolts_shape() {
        let ok = Outcome::Ok(Output::Command(command(0)));
        let text = serde_json::to_string(&ok).unwrap_or_default();
        assert_eq!(
            text,
            r#"{"exit_code":0,"merged_output":"outerr","stderr":"err","stdout":"out"}"#
        );
        let mut cut = command(3);
        cut.truncated.stdout = Some(5);
        let failed = Outcome::Failed(Output::Command(cut));
        assert_eq!(
            failed.to_value(),
            json!({
                "_error": {"details": {"exit_code": 3}, "kind": "puppetlabs.tasks/command-error",
                           "issue_code": "COMMAND_ERROR", "msg": "The command failed with exit code 3"},
                "exit_code": 3, "merged_output": "outerr", "stderr": "err", "stdout": "out",
                "truncated": {"stdout": 5},
            })
        );
        // The text form sorts keys as serde_json's map does.
        let text = serde_json::to_string(&failed).unwrap_or_default();
        assert_eq!(
            serde_json::to_string(&failed.to_value()).unwrap_or_default(),
            text
        );
    }

    #[test]
    fn texts_are_rewritten_knowing_which_belong_to_the_error() {
        let mut task = Outcome::Failed(Output::Task(json!({
            "out": "a", "list": ["a"], "nested": {"_error": "a"}, "_error": {"msg": "a"},
        })));
        let mut upper = |s: &mut String, in_error: bool| {
            if in_error {
                *s = s.to_uppercase();
            }
        };
        task.rewrite_texts(&mut upper);
        assert_eq!(
            task.to_value(),
            json!({"out": "a", "list": ["a"], "nested": {"_error": "a"}, "_error": {"msg": "A"}})
        );
        let mut errored = Outcome::Errored(TransportError::File("a".into()));
        errored.rewrite_texts(&mut upper);
        assert_eq!(errored.to_value()["_error"]["msg"], "A");
        let mut command = Outcome::Failed(Output::Command(command(1)));
        command.rewrite_texts(&mut |s, _| s.push('!'));
        assert_eq!(command.to_value()["stdout"], "out!");
    }

    #[test]
    fn errors_name_their_kind_and_issue() {
        let e = Outcome::Errored(TransportError::connect(
            crate::transport::ConnectIssue::Auth,
            "no",
        ));
        assert_eq!(
            e.to_value(),
            json!({"_error": {"kind": "ferry/connect-error", "msg": "no", "details": {},
                              "issue_code": "AUTH_ERROR"}})
        );
        assert_eq!(e.error().map(|e| e.kind), Some("ferry/connect-error"));
        let t = Outcome::Ok(Output::Transfer {
            message: "Uploaded".into(),
            path: None,
        });
        assert_eq!(t.to_value(), json!({"_output": "Uploaded"}));
        assert_eq!(t.error(), None);
    }
}
