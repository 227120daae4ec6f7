//! The resource types ferry applies, one file each, as Puppet 7 defines
//! them: what their parameters mean ([`Kind::parse`], which checks values
//! as Puppet's types do), the part of the program that checks and
//! converges one resource ([`Kind::script`]), what a refresh does, and how
//! the facts the program reports become Puppet's event messages
//! ([`Kind::describe`]). A type ferry cannot apply parses to
//! [`Kind::Unsupported`]: that resource fails with a message naming the
//! type, its dependents are skipped, and the rest is applied.

pub mod exec;
pub mod file;
pub mod mode;
pub mod notify;

use serde_json::Value;

use super::catalog::Resource;

/// Whether ferry applies resources of this type.
pub fn applies(r: &Resource) -> bool {
    matches!(r.type_key().as_str(), "file" | "exec" | "notify")
}

/// A parameter value Puppet would refuse: the catalog is not applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Parameter {param} failed on {resource}: {message}")]
pub struct ParamError {
    pub resource: String,
    pub param: String,
    pub message: String,
}

/// Where `source` parameters are read from (the modulepath and the local
/// file system, given by the caller: this module does no I/O).
pub trait Sources {
    /// The bytes of `uri` (`puppet:///modules/M/P`, an absolute path or a
    /// `file://` URI).
    fn read(&self, uri: &str) -> Result<Vec<u8>, SourceError>;
}

/// Why a source could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    #[error("{0} does not exist")]
    NotFound(String),
    #[error("{0}: ferry reads sources from puppet:///modules/, file:// and absolute paths only")]
    Unsupported(String),
    #[error("{uri}: {message}")]
    Io { uri: String, message: String },
}

/// What a resource does when a resource it subscribes to changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refresh {
    /// Nothing (Puppet's types without a refresh method).
    Nothing,
    /// Runs this script (an exec's command again, a service's restart).
    Script(String),
}

/// The status of an event, as Puppet names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventStatus {
    Success,
    Failure,
    Noop,
}

impl EventStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            EventStatus::Success => "success",
            EventStatus::Failure => "failure",
            EventStatus::Noop => "noop",
        }
    }

    pub fn parse(s: &str) -> Option<EventStatus> {
        match s {
            "success" => Some(EventStatus::Success),
            "failure" => Some(EventStatus::Failure),
            "noop" => Some(EventStatus::Noop),
            _ => None,
        }
    }
}

/// An event in Puppet's words: the values and the message.
#[derive(Debug, Clone, PartialEq)]
pub struct EventText {
    pub previous: Value,
    pub desired: Value,
    pub message: String,
    /// The values are secrets: the report shows neither.
    pub redacted: bool,
}

/// A resource of a type ferry applies, with its parameters read.
#[derive(Debug, Clone)]
pub enum Kind {
    File(Box<file::File>),
    Exec(Box<exec::Exec>),
    Notify(notify::Notify),
    /// A type ferry cannot apply: the resource fails with this message.
    Unsupported(String),
}

impl Kind {
    /// Reads a resource's parameters; `sources` resolves file sources.
    pub fn parse(r: &Resource, sources: &dyn Sources) -> Result<Kind, ParamError> {
        Ok(match r.type_key().as_str() {
            "file" => Kind::File(Box::new(file::File::parse(r, sources)?)),
            "exec" => Kind::Exec(Box::new(exec::Exec::parse(r)?)),
            "notify" => Kind::Notify(notify::Notify::parse(r)),
            other => Kind::Unsupported(format!(
                "ferry cannot apply resources of type '{other}' yet ({} was not applied)",
                r.reference()
            )),
        })
    }

    /// Appends the script that checks and converges the resource as step
    /// `n`, changing nothing with `noop`.
    pub fn script(&self, out: &mut String, n: usize, noop: bool) {
        match self {
            Kind::File(f) => f.script(out, n, noop),
            Kind::Exec(e) => e.script(out, n, noop),
            Kind::Notify(_) => notify::script(out, n, noop),
            Kind::Unsupported(_) => {
                out.push_str(&format!("_fail {n} unsupported\n"));
            }
        }
    }

    /// What the resource does when refreshed.
    pub fn refresh(&self, n: usize) -> Refresh {
        match self {
            Kind::Exec(e) => e.refresh(n),
            _ => Refresh::Nothing,
        }
    }

    /// Puppet's message and values for an event the program reported:
    /// `property` changed from `previous` (as the target reported it),
    /// with `detail` for a failure.
    pub fn describe(
        &self,
        property: &str,
        status: EventStatus,
        previous: &str,
        detail: &str,
    ) -> EventText {
        match self {
            Kind::File(f) => f.describe(property, status, previous, detail),
            Kind::Exec(e) => e.describe(property, status, previous, detail),
            Kind::Notify(n) => n.describe(status),
            Kind::Unsupported(_) => EventText {
                previous: Value::String(previous.into()),
                desired: Value::Null,
                message: detail.into(),
                redacted: false,
            },
        }
    }

    /// The message for a resource failure the program reported with
    /// `_fail` (not an event): Puppet logs these as "Could not evaluate".
    pub fn failure(&self, code: &str) -> String {
        match self {
            Kind::Unsupported(m) => m.clone(),
            Kind::File(f) => f.failure(code),
            Kind::Exec(e) => e.failure(code),
            Kind::Notify(_) => code.to_string(),
        }
    }

    /// The provider Puppet would name in the report.
    pub fn provider(&self) -> Option<&'static str> {
        match self {
            Kind::File(_) => Some("posix"),
            Kind::Exec(e) => Some(e.provider()),
            Kind::Notify(_) | Kind::Unsupported(_) => None,
        }
    }
}

/// Puppet's message for a change that was not made because of noop.
pub fn noop_message(previous: &str, desired: &str) -> String {
    format!(
        "current_value {}, should be {} (noop)",
        display(previous),
        display(desired)
    )
}

/// A string as Puppet's messages show values: single-quoted (`'` as
/// `\'`), or double-quoted with escapes when it holds a control character.
pub fn display(s: &str) -> String {
    if s.chars().any(|c| (c as u32) < 0x20) {
        let mut out = String::from("\"");
        for c in s.chars() {
            match c {
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                '"' => out.push_str("\\\""),
                '$' => out.push_str("\\$"),
                '\\' => out.push_str("\\\\"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\x{:02X}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    } else {
        format!("'{}'", s.replace('\'', "\\'"))
    }
}

/// A parameter as a string (numbers are taken as their text).
pub fn text_param(r: &Resource, name: &str) -> Result<Option<String>, ParamError> {
    match r.param(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => {
            if s.contains('\0') {
                return Err(param_error(r, name, "the value holds a NUL byte"));
            }
            Ok(Some(s.clone()))
        }
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(Value::Bool(b)) => Ok(Some(b.to_string())),
        Some(other) => Err(param_error(
            r,
            name,
            &format!("expected a string, got {other}"),
        )),
    }
}

/// A parameter that may be one string or a list of them.
pub fn list_param(r: &Resource, name: &str) -> Result<Vec<String>, ParamError> {
    match r.param(name) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                Value::String(s) if !s.contains('\0') => Ok(s.clone()),
                Value::Number(n) => Ok(n.to_string()),
                other => Err(param_error(
                    r,
                    name,
                    &format!("expected strings, got {other}"),
                )),
            })
            .collect(),
        Some(_) => Ok(text_param(r, name)?.into_iter().collect()),
    }
}

/// A Puppet boolean parameter (`true`, `false`, and the strings Puppet's
/// boolean parameters take: yes/no, "true"/"false").
pub fn bool_param(r: &Resource, name: &str, default: bool) -> Result<bool, ParamError> {
    match r.param(name) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(Value::String(s)) => match s.as_str() {
            "true" | "yes" => Ok(true),
            "false" | "no" => Ok(false),
            _ => Err(param_error(
                r,
                name,
                &format!("Invalid value \"{s}\". Valid values are true, false, yes, no."),
            )),
        },
        Some(other) => Err(param_error(
            r,
            name,
            &format!("Invalid value {other}. Valid values are true, false, yes, no."),
        )),
    }
}

pub fn param_error(r: &Resource, param: &str, message: &str) -> ParamError {
    ParamError {
        resource: r.reference(),
        param: param.into(),
        message: message.into(),
    }
}
