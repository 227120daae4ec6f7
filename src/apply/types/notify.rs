//! Puppet's `notify` type: its `message` is never in sync, so every run
//! reports it as changed (`defined 'message' as '...'`) and logs it.

use serde_json::Value;

use super::{EventStatus, EventText, display, noop_message};
use crate::apply::catalog::Resource;

#[derive(Debug, Clone)]
pub struct Notify {
    pub message: String,
    pub sensitive: bool,
    /// Log the message with the resource's path instead of as Puppet's.
    pub withpath: bool,
}

impl Notify {
    pub fn parse(r: &Resource) -> Notify {
        let message = match r.param("message").or_else(|| r.param("name")) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => r.title.clone(),
            Some(other) => other.to_string(),
        };
        Notify {
            message,
            sensitive: r.is_sensitive("message"),
            withpath: matches!(r.param("withpath"), Some(Value::Bool(true)))
                || r.param("withpath").and_then(Value::as_str) == Some("true"),
        }
    }

    pub fn describe(&self, status: EventStatus) -> EventText {
        if self.sensitive {
            let message = match status {
                EventStatus::Noop => "current_value [redacted], should be [redacted] (noop)",
                _ => "changed [redacted] to [redacted]",
            };
            return EventText {
                previous: Value::String("[redacted]".into()),
                desired: Value::String("[redacted]".into()),
                message: message.into(),
                redacted: true,
            };
        }
        let message = match status {
            EventStatus::Noop => noop_message("absent", &self.message),
            _ => format!("defined 'message' as {}", display(&self.message)),
        };
        EventText {
            previous: Value::String("absent".into()),
            desired: Value::String(self.message.clone()),
            message,
            redacted: false,
        }
    }
}

/// The program's part: nothing to check on the target.
pub fn script(out: &mut String, n: usize, noop: bool) {
    let status = if noop { "noop" } else { "success" };
    out.push_str(&format!("_ev {n} message {status} absent\n"));
}
