//! A task's output as a result value, as Bolt reads it: a JSON object on
//! stdout is the value; anything else becomes `{"_output": stdout}`. A
//! non-zero exit without the task's own `_error` becomes a
//! `ferry/task-error`. `_sensitive` values and the values of sensitive
//! parameters are redacted everywhere.

use serde_json::{Value, json};

use crate::executor::result::{Status, error_value};
use crate::inventory::REDACTED;

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

/// Redacts secrets in every string of a JSON value, and the whole
/// `_sensitive` value.
pub fn redact(value: &mut Value, secrets: &[String]) {
    match value {
        Value::String(s) => *s = redact_text(s, secrets),
        Value::Array(items) => items.iter_mut().for_each(|i| redact(i, secrets)),
        Value::Object(map) => {
            if let Some(v) = map.get_mut("_sensitive") {
                *v = Value::String(REDACTED.into());
            }
            map.values_mut().for_each(|v| redact(v, secrets));
        }
        _ => {}
    }
}

/// The status and value of a finished task.
pub fn result(exit_code: i32, stdout: &str, stderr: &str, secrets: &[String]) -> (Status, Value) {
    let mut value = match serde_json::from_str::<Value>(stdout.trim()) {
        Ok(Value::Object(map)) => Value::Object(map),
        _ => json!({ "_output": stdout }),
    };
    let has_error = value.get("_error").is_some();
    if let Some(map) = value
        .as_object_mut()
        .filter(|_| exit_code != 0 && !has_error)
    {
        let mut details = json!({ "exit_code": exit_code });
        if !stderr.trim().is_empty() {
            details["stderr"] = Value::String(stderr.to_string());
        }
        map.insert(
            "_error".into(),
            error_value(
                "ferry/task-error",
                &format!("The task failed with exit code {exit_code}"),
                None,
                details,
            ),
        );
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
        assert_eq!(v["_error"]["kind"], "ferry/task-error");
        assert_eq!(v["_error"]["details"]["exit_code"], 3);
        let own = r#"{"_error": {"kind": "mine/bad", "msg": "no"}}"#;
        let (s, v) = result(1, own, "", &[]);
        assert_eq!(s, Status::Failure);
        assert_eq!(v["_error"]["kind"], "mine/bad");
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
            json!({"echo": "pw is [redacted]", "_sensitive": "[redacted]"})
        );
    }
}
