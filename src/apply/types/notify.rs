//! Puppet's `notify` type: its `message` is never in sync, so every run
//! reports it as changed (`defined 'message' as '...'`) and logs it.

use serde_json::Value;

use super::{EventStatus, EventText, noop_message};
use crate::apply::catalog::Resource;

#[derive(Debug, Clone)]
pub struct Notify {
    pub message: String,
    pub sensitive: bool,
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
        }
    }

    pub fn describe(&self, status: EventStatus) -> EventText {
        let shown = if self.sensitive {
            "[redacted]"
        } else {
            &self.message
        };
        let message = match status {
            EventStatus::Noop => noop_message("absent", shown),
            _ => format!("defined 'message' as '{shown}'"),
        };
        EventText {
            previous: Value::String("absent".into()),
            desired: Value::String(shown.into()),
            message,
            redacted: self.sensitive,
        }
    }
}

/// The program's part: nothing to check on the target.
pub fn script(out: &mut String, n: usize, noop: bool) {
    let status = if noop { "noop" } else { "success" };
    out.push_str(&format!("_ev {n} message {status} absent\n"));
}
