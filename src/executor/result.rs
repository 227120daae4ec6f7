//! The result of one action on one target, in Bolt's JSON shape, and the
//! summary of a whole run. Partial failure is a value: a run over 50 targets
//! of which 3 are down is a [`Summary`] with 3 failed results.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::transport::TransportError;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Success,
    Failure,
}

/// One item of Bolt's result list.
#[derive(Clone, Debug, Serialize)]
pub struct TargetResult {
    pub target: String,
    pub action: String,
    pub object: String,
    pub status: Status,
    pub value: Value,
}

impl TargetResult {
    pub fn ok(&self) -> bool {
        self.status == Status::Success
    }

    /// The `_error` of a failed result.
    pub fn error(&self) -> Option<&Value> {
        self.value.get("_error")
    }
}

/// An error as Bolt writes it in a result's `_error`.
pub fn error_value(kind: &str, msg: &str, issue_code: Option<&str>, details: Value) -> Value {
    let mut e = json!({ "kind": kind, "msg": msg, "details": details });
    if let (Some(code), Some(map)) = (issue_code, e.as_object_mut()) {
        map.insert("issue_code".into(), Value::String(code.into()));
    }
    e
}

impl From<&TransportError> for Value {
    fn from(e: &TransportError) -> Value {
        json!({ "_error": error_value(e.kind(), &e.to_string(), e.issue_code(), json!({})) })
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
        json!({
            "items": self.results,
            "target_count": self.results.len(),
            "elapsed_time": self.elapsed.as_secs(),
        })
    }
}
