//! The rows of the store as Rust values, and their JSON in the
//! orchestrator-style API.

use std::str::FromStr;

use serde_json::{Value, json};
use sqlx::Row;
use sqlx::any::AnyRow;

use super::states::{EventKind, JobState, NodeState};

pub(super) const JOB_COLUMNS: &str =
    "id, kind, state, owner, description, request, created_at, finished_at, node_count";

/// The current time as RFC 3339 UTC with milliseconds.
pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn json_text(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// A state or kind column, an error when it holds an unknown value.
fn text_column<T>(row: &AnyRow, column: &str) -> Result<T, sqlx::Error>
where
    T: FromStr<Err = super::UnknownValue>,
{
    row.try_get::<String, _>(column)?
        .parse()
        .map_err(|e| sqlx::Error::Decode(Box::new(e)))
}

/// One job.
#[derive(Clone, Debug)]
pub struct JobRecord {
    pub id: i64,
    /// `command`, `task`, or the bolt-server action (`ssh/run_command`).
    pub kind: String,
    pub state: JobState,
    /// Who asked for it: a certificate name or `token:<name>`.
    pub owner: String,
    pub description: String,
    /// The request, secrets redacted.
    pub request: Value,
    pub created_at: String,
    pub finished_at: Option<String>,
    pub node_count: i64,
}

impl JobRecord {
    pub(super) fn from_row(row: &AnyRow) -> Result<JobRecord, sqlx::Error> {
        Ok(JobRecord {
            id: row.try_get("id")?,
            kind: row.try_get("kind")?,
            state: text_column(row, "state")?,
            owner: row.try_get("owner")?,
            description: row.try_get("description")?,
            request: json_text(&row.try_get::<String, _>("request")?),
            created_at: row.try_get("created_at")?,
            finished_at: row.try_get("finished_at")?,
            node_count: row.try_get("node_count")?,
        })
    }

    /// Whether the job has reached a final state.
    pub fn is_done(&self) -> bool {
        self.state.is_final()
    }
}

/// One target of a job.
#[derive(Clone, Debug)]
pub struct NodeRecord {
    pub name: String,
    pub state: NodeState,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    /// The target's result in Bolt's shape, once it finished.
    pub result: Option<Value>,
}

impl NodeRecord {
    pub(super) fn from_row(row: &AnyRow) -> Result<NodeRecord, sqlx::Error> {
        Ok(NodeRecord {
            name: row.try_get("name")?,
            state: text_column(row, "state")?,
            started_at: row.try_get("started_at")?,
            finished_at: row.try_get("finished_at")?,
            result: row
                .try_get::<Option<String>, _>("result")?
                .map(|t| json_text(&t)),
        })
    }

    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "state": self.state,
            "start_timestamp": self.started_at,
            "finish_timestamp": self.finished_at,
            "result": self.result.as_ref().and_then(|r| r.get("value")).cloned(),
            "details": self.result,
        })
    }
}

/// One event of a job. Ids count from 1 within the job.
#[derive(Clone, Debug)]
pub struct EventRecord {
    pub id: i64,
    pub kind: EventKind,
    pub node: Option<String>,
    pub at: String,
    pub message: String,
    pub details: Value,
}

impl EventRecord {
    pub fn new(
        id: i64,
        kind: EventKind,
        node: Option<&str>,
        message: &str,
        details: Value,
    ) -> Self {
        EventRecord {
            id,
            kind,
            node: node.map(str::to_string),
            at: now(),
            message: message.into(),
            details,
        }
    }

    pub(super) fn from_row(row: &AnyRow) -> Result<EventRecord, sqlx::Error> {
        Ok(EventRecord {
            id: row.try_get("id")?,
            kind: text_column(row, "kind")?,
            node: row.try_get("node")?,
            at: row.try_get("at")?,
            message: row.try_get("message")?,
            details: json_text(&row.try_get::<String, _>("details")?),
        })
    }

    pub fn to_json(&self) -> Value {
        let mut details = self.details.clone();
        if let (Some(node), Some(map)) = (&self.node, details.as_object_mut()) {
            map.insert("node".into(), Value::String(node.clone()));
        }
        json!({
            "id": self.id.to_string(),
            "type": self.kind,
            "timestamp": self.at,
            "details": details,
            "message": self.message,
        })
    }
}
