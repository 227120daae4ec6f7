//! A task's output as a result value, as Bolt reads it: a JSON object on
//! stdout is the value; anything else becomes `{"_output": stdout}`. A
//! non-zero exit without the task's own `_error` becomes Bolt's
//! `puppetlabs.tasks/task-error` (`TASK_ERROR`), its message saying what
//! the task printed; the task's own `_error` gets Bolt's defaults (kind
//! `bolt/error`, empty details), and one that is not an object with a
//! `msg` becomes `bolt/invalid-task-error`. A `_sensitive` value prints as
//! Bolt prints it (`Sensitive [value redacted]`); the values of sensitive
//! parameters are redacted everywhere, pieces of them at the edges of a
//! cut in truncated output too. A stdout over the output limit is never
//! parsed: when it began like a JSON result the task fails with
//! `ferry/output-truncated`; otherwise it is `_output` with `truncated`.

use serde_json::{Map, Value, json};

use crate::inventory::REDACTED;

/// The kind and issue code of a task's failure (Bolt's).
pub const TASK_ERROR: &str = "puppetlabs.tasks/task-error";
pub const TASK_ISSUE: &str = "TASK_ERROR";

/// How Bolt prints a task's `_sensitive` value.
pub const SENSITIVE_SHOWN: &str = "Sensitive [value redacted]";
use crate::run::capture::{Captured, Collected, marker};
use crate::run::result::Status;

/// An error as Bolt writes it in a task result's `_error`.
fn error_value(kind: &str, msg: &str, details: Value) -> Value {
    json!({ "kind": kind, "msg": msg, "details": details })
}

/// Replaces every occurrence of a secret in a string.
pub fn redact_text(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    for s in secrets {
        if !s.is_empty() {
            out = out.replace(s.as_str(), REDACTED);
        }
    }
    out
}

/// Redacts secrets in every string of a JSON value, every number that is
/// a secret (a sensitive Integer or Float parameter), and the whole
/// `_sensitive` value.
pub fn redact(value: &mut Value, secrets: &[String]) {
    match value {
        Value::String(s) => *s = redact_text(s, secrets),
        Value::Number(n) if secrets.iter().any(|s| *s == n.to_string()) => {
            *value = Value::String(REDACTED.into())
        }
        Value::Array(items) => items.iter_mut().for_each(|i| redact(i, secrets)),
        Value::Object(map) => {
            if let Some(v) = map.get_mut("_sensitive") {
                *v = Value::String(SENSITIVE_SHOWN.into());
            }
            map.values_mut().for_each(|v| redact(v, secrets));
        }
        _ => {}
    }
}

/// A stream's kept text, with a piece of a secret cut in two at either
/// side of the marker redacted (whole secrets are [`redact`]'s).
fn kept_text(c: &Captured, secrets: &[String]) -> String {
    let parts = c.parts();
    let Some(cut) = parts.cut else {
        return parts.head;
    };
    let (mut head, mut tail) = (parts.head, cut.tail);
    for s in secrets.iter().filter(|s| !s.is_empty()) {
        let piece = (1..s.len())
            .rev()
            .find(|&k| s.get(..k).is_some_and(|p| head.ends_with(p)));
        if let Some(k) = piece {
            head.truncate(head.len() - k);
            head.push_str(REDACTED);
        }
        let piece = (1..s.len()).find(|&k| s.get(k..).is_some_and(|p| tail.starts_with(p)));
        if let Some(k) = piece {
            tail.replace_range(..s.len() - k, REDACTED);
        }
    }
    format!("{head}{}{tail}", marker(cut.omitted, cut.limit))
}

/// The status and value of a finished run of task `task` from its kept
/// output.
pub fn from_collected(
    task: &str,
    exit_code: i32,
    out: &Collected,
    secrets: &[String],
) -> (Status, Value) {
    let stdout = kept_text(&out.stdout, secrets);
    let stderr = kept_text(&out.stderr, secrets);
    if !out.stdout.is_truncated() {
        return task_result(task, exit_code, &stdout, &stderr, secrets);
    }
    let truncated: Map<String, Value> = [("stdout", &out.stdout), ("stderr", &out.stderr)]
        .into_iter()
        .filter(|(_, c)| c.is_truncated())
        .map(|(k, c)| (k.to_string(), Value::from(c.shown_omitted())))
        .collect();
    let (status, mut value) = if stdout.trim_start().starts_with('{') {
        let mut details = json!({
            "exit_code": exit_code,
            "stdout_bytes": out.stdout.total(),
            "max_output": out.stdout.limit(),
        });
        if !stderr.trim().is_empty() {
            details["stderr"] = Value::String(stderr);
        }
        let msg = format!(
            "The task printed {} bytes, more than the output limit of {} bytes, so its JSON result cannot be read (raise --max-output, or the server's max-output)",
            out.stdout.total(),
            out.stdout.limit()
        );
        let mut value = json!({
            "_output": stdout,
            "_error": error_value("ferry/output-truncated", &msg, details),
        });
        redact(&mut value, secrets);
        (Status::Failure, value)
    } else {
        task_result(task, exit_code, &stdout, &stderr, secrets)
    };
    if let Some(map) = value.as_object_mut() {
        map.insert("truncated".into(), Value::Object(truncated));
    }
    (status, value)
}

/// How deeply a task's JSON result may nest to be taken as a value; deeper
/// output is kept as `_output` text. serde_json parses at most 128 levels,
/// and a result is stored and read back inside other documents (a job's
/// node, an event), so it needs room to spare.
pub const MAX_RESULT_DEPTH: usize = 64;

/// The nesting depth of a JSON object's values (the object itself is 1).
fn depth(map: &Map<String, Value>) -> usize {
    fn of(v: &Value) -> usize {
        match v {
            Value::Array(items) => 1 + items.iter().map(of).max().unwrap_or(0),
            Value::Object(map) => 1 + map.values().map(of).max().unwrap_or(0),
            _ => 0,
        }
    }
    1 + map.values().map(of).max().unwrap_or(0)
}

/// Bolt's message for a task that exited `exit_code` without its own
/// error.
fn failure_message(exit_code: i32, stdout: &str, stderr: &str) -> String {
    if !stdout.is_empty() {
        format!("The task failed with exit code {exit_code}")
    } else if stderr.is_empty() {
        format!("The task failed with exit code {exit_code} and no output")
    } else {
        format!(
            "The task failed with exit code {exit_code} and no stdout, but stderr contained:\n{stderr}"
        )
    }
}

/// A task's own `_error` with Bolt's defaults: `kind` `bolt/error` and
/// empty `details` when it has none; one that is not an object with a
/// `msg` is replaced by a `bolt/invalid-task-error` holding it.
fn own_error(error: Value, task: &str) -> Value {
    match error {
        Value::Object(mut map) if map.contains_key("msg") => {
            map.entry("kind")
                .or_insert_with(|| Value::String("bolt/error".into()));
            map.entry("details")
                .or_insert_with(|| Value::Object(Map::new()));
            Value::Object(map)
        }
        other => {
            let msg = format!(
                "Invalid error returned from task {task}: {other}. Error must be an object with a msg key."
            );
            error_value(
                "bolt/invalid-task-error",
                &msg,
                json!({ "original_error": other }),
            )
        }
    }
}

/// The status and value of a finished task.
pub fn result(exit_code: i32, stdout: &str, stderr: &str, secrets: &[String]) -> (Status, Value) {
    task_result("", exit_code, stdout, stderr, secrets)
}

/// The status and value of a finished run of task `task`.
pub fn task_result(
    task: &str,
    exit_code: i32,
    stdout: &str,
    stderr: &str,
    secrets: &[String],
) -> (Status, Value) {
    let mut value = match serde_json::from_str::<Value>(stdout.trim()) {
        Ok(Value::Object(map)) if depth(&map) <= MAX_RESULT_DEPTH => Value::Object(map),
        _ => json!({ "_output": stdout }),
    };
    let mut has_error = false;
    if let Some(map) = value.as_object_mut() {
        if let Some(e) = map.remove("_error") {
            map.insert("_error".into(), own_error(e, task));
            has_error = true;
        } else if exit_code != 0 {
            let mut e = error_value(
                TASK_ERROR,
                &failure_message(exit_code, stdout, stderr),
                json!({ "exit_code": exit_code }),
            );
            e["issue_code"] = Value::String(TASK_ISSUE.into());
            map.insert("_error".into(), e);
        }
    }
    redact(&mut value, secrets);
    let status = if exit_code == 0 && !has_error {
        Status::Success
    } else {
        Status::Failure
    };
    (status, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_objects_become_the_value() {
        let (s, v) = result(0, "{\"a\": 1}\n", "", &[]);
        assert_eq!((s, v), (Status::Success, json!({"a": 1})));
        let (s, v) = result(0, "plain text\n", "", &[]);
        assert_eq!(
            (s, v),
            (Status::Success, json!({"_output": "plain text\n"}))
        );
    }

    #[test]
    fn failures_keep_or_get_an_error() {
        let (s, v) = result(3, "", "boom", &[]);
        assert_eq!(s, Status::Failure);
        assert_eq!(
            v["_error"],
            json!({"kind": "puppetlabs.tasks/task-error", "issue_code": "TASK_ERROR",
                   "msg": "The task failed with exit code 3 and no stdout, but stderr contained:\nboom",
                   "details": {"exit_code": 3}})
        );
        let (_, v) = result(1, "", "", &[]);
        assert_eq!(
            v["_error"]["msg"],
            "The task failed with exit code 1 and no output"
        );
        let (_, v) = result(1, "some\n", "err", &[]);
        assert_eq!(v["_error"]["msg"], "The task failed with exit code 1");
        let own = r#"{"_error": {"kind": "mine/bad", "msg": "no"}}"#;
        let (s, v) = result(1, own, "", &[]);
        assert_eq!(s, Status::Failure);
        assert_eq!(
            v["_error"],
            json!({"kind": "mine/bad", "msg": "no", "details": {}})
        );
        // Bolt's defaults for a task's own error, even with exit code 0.
        let (s, v) = task_result("m::t", 0, r#"{"_error": {"msg": "no"}}"#, "", &[]);
        assert_eq!(s, Status::Failure);
        assert_eq!(
            v["_error"],
            json!({"kind": "bolt/error", "msg": "no", "details": {}})
        );
        let (_, v) = task_result("m::t", 0, r#"{"_error": "just text"}"#, "", &[]);
        assert_eq!(v["_error"]["kind"], "bolt/invalid-task-error");
        assert_eq!(v["_error"]["details"]["original_error"], "just text");
        assert_eq!(
            v["_error"]["msg"],
            "Invalid error returned from task m::t: \"just text\". Error must be an object with a msg key."
        );
    }

    fn collected(limit: usize, stdout: &str, stderr: &str) -> Collected {
        let mut out = Collected::new(limit);
        out.push(crate::transport::Stream::Stdout, stdout.as_bytes());
        out.push(crate::transport::Stream::Stderr, stderr.as_bytes());
        out
    }

    #[test]
    fn a_cut_json_result_is_a_clear_failure() {
        let doc = format!("{{\"list\": \"{}\"}}", "x".repeat(1000));
        let (s, v) = from_collected("m::t", 0, &collected(100, &doc, ""), &[]);
        assert_eq!(s, Status::Failure);
        assert_eq!(v["_error"]["kind"], "ferry/output-truncated");
        assert_eq!(v["_error"]["details"]["stdout_bytes"], doc.len());
        assert_eq!(v["truncated"]["stdout"], doc.len() - 100);
        let text = v["_output"].as_str().unwrap_or_default();
        assert!(
            text.starts_with("{\"list\"") && text.ends_with("xx\"}"),
            "{text}"
        );
        assert!(text.contains("bytes of output omitted"), "{text}");
        // Within the limit it is the value as before.
        let (s, v) = from_collected("m::t", 0, &collected(2000, &doc, ""), &[]);
        assert_eq!(s, Status::Success);
        assert_eq!(v["list"].as_str().map(str::len), Some(1000));
    }

    #[test]
    fn cut_plain_output_keeps_the_exit_status() {
        let text = "line\n".repeat(100);
        let (s, v) = from_collected("m::t", 0, &collected(50, &text, ""), &[]);
        assert_eq!(s, Status::Success);
        assert_eq!(v["truncated"]["stdout"], 450);
        assert!(v.get("_error").is_none());
        let (s, v) = from_collected("m::t", 4, &collected(50, &text, &text), &[]);
        assert_eq!(s, Status::Failure);
        assert_eq!(v["_error"]["kind"], "puppetlabs.tasks/task-error");
        assert_eq!(v["truncated"], json!({"stdout": 450, "stderr": 450}));
    }

    #[test]
    fn secrets_cut_in_two_are_redacted() {
        let secrets = vec!["hunter2".to_string()];
        // The head ends with "hun", the tail starts with "ter2".
        let text = format!("aaaaahun{}ter2bbbb", "z".repeat(40));
        let v = from_collected("m::t", 0, &collected(16, &text, ""), &secrets).1;
        let shown = v["_output"].as_str().unwrap_or_default();
        assert!(!shown.contains("hun") && !shown.contains("ter2"), "{shown}");
        assert!(shown.starts_with("aaaaa[redacted]"), "{shown}");
        assert!(shown.ends_with("[redacted]bbbb"), "{shown}");
    }

    #[test]
    fn secrets_are_redacted() {
        let secrets = vec!["hunter2".to_string()];
        let (_, v) = result(
            0,
            r#"{"echo": "pw is hunter2", "_sensitive": {"k": "v"}}"#,
            "",
            &secrets,
        );
        assert_eq!(
            v,
            json!({"echo": "pw is [redacted]", "_sensitive": "Sensitive [value redacted]"})
        );
    }

    #[test]
    fn results_nested_too_deeply_stay_text() {
        let deep = |n: usize| format!("{{\"a\": {}1{}}}", "[".repeat(n), "]".repeat(n));
        let (_, v) = result(0, &deep(MAX_RESULT_DEPTH - 1), "", &[]);
        assert!(v.get("a").is_some(), "{v}");
        let (_, v) = result(0, &deep(MAX_RESULT_DEPTH), "", &[]);
        assert_eq!(v["_output"], deep(MAX_RESULT_DEPTH), "{v}");
    }

    #[test]
    fn sensitive_numbers_are_redacted() {
        let secrets = vec!["4242".to_string(), "2.5".to_string()];
        let mut v = json!({"pin": 4242, "rate": 2.5, "list": [4242, 7], "other": 42});
        redact(&mut v, &secrets);
        assert_eq!(
            v,
            json!({"pin": "[redacted]", "rate": "[redacted]", "list": ["[redacted]", 7], "other": 42})
        );
    }
}
