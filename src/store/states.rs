//! The states of jobs and nodes and the kinds of job events, as enums.
//! They become strings only at the edges: the SQL columns (read back with
//! an error when the database holds a value this server does not know)
//! and the API's JSON.

use std::fmt;
use std::str::FromStr;

use serde::{Serialize, Serializer};

/// A value read from the store that names no known state or kind.
#[derive(Debug, thiserror::Error)]
#[error("unknown {what} '{value}' in the store")]
pub struct UnknownValue {
    pub what: &'static str,
    pub value: String,
}

/// Declares a string-backed enum: its text, parsing (an [`UnknownValue`]
/// error for anything else), Display and Serialize as that text.
macro_rules! text_enum {
    ($(#[$doc:meta])* $name:ident, $what:literal, { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $($variant),+
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }

        impl FromStr for $name {
            type Err = UnknownValue;

            fn from_str(s: &str) -> Result<Self, UnknownValue> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err(UnknownValue { what: $what, value: s.to_string() }),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
    };
}

text_enum!(
    /// Where a job is in its life. `stopped`, `finished` and `failed` are
    /// final: a job that reached one keeps it.
    JobState, "job state", {
        New => "new",
        Ready => "ready",
        Running => "running",
        Stopping => "stopping",
        Stopped => "stopped",
        Finished => "finished",
        Failed => "failed",
    }
);

text_enum!(
    /// Where one target of a job is.
    NodeState, "node state", {
        New => "new",
        Ready => "ready",
        Running => "running",
        Stopped => "stopped",
        Finished => "finished",
        Failed => "failed",
    }
);

text_enum!(
    /// What a job event reports.
    EventKind, "event kind", {
        NodeRunning => "node_running",
        NodeFinished => "node_finished",
        NodeFailed => "node_failed",
        NodeErrored => "node_errored",
        ResourceEvent => "resource_event",
        NodeMessage => "node_message",
        JobFinished => "job_finished",
        PlanStarted => "plan_started",
        TaskStart => "task_start",
        CommandStart => "command_start",
        ScriptStart => "script_start",
        UploadStart => "upload_start",
        DownloadStart => "download_start",
        ApplyStart => "apply_start",
        OutMessage => "out_message",
        PlanFinished => "plan_finished",
        PlanFailed => "plan_failed",
    }
);

impl JobState {
    /// Whether the job has ended (a final state).
    pub fn is_final(self) -> bool {
        matches!(
            self,
            JobState::Stopped | JobState::Finished | JobState::Failed
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_round_trip_and_unknown_ones_are_errors() {
        for s in JobState::ALL {
            assert_eq!(s.as_str().parse::<JobState>().ok(), Some(*s));
        }
        for s in NodeState::ALL {
            assert_eq!(s.as_str().parse::<NodeState>().ok(), Some(*s));
        }
        for k in EventKind::ALL {
            assert_eq!(k.as_str().parse::<EventKind>().ok(), Some(*k));
        }
        let e = "paused".parse::<JobState>().err().map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some("unknown job state 'paused' in the store")
        );
        assert_eq!(
            serde_json::to_value(EventKind::NodeErrored).ok(),
            Some(serde_json::json!("node_errored"))
        );
    }
}
