//! Bolt's plan data types as values: `Target`, `Result`, `ApplyResult`,
//! `ResultSet`, `Error` and `Future`, their methods (`ok`, `ok_set`,
//! `first`, `value`, `message`, `to_data`, `[]`...) and the JSON a plan's
//! return value prints as (Bolt's `to_data`). Data only: nothing here
//! connects or runs anything; the plan runner (`plan::puppet`) makes these
//! values from what its functions did.
//!
//! A `Target` is a name and a shared [`TargetInfo`]: every value naming
//! the same target sees the same vars, facts and features, so
//! `set_var($t, ...)` shows in `$t.vars` as it does in Bolt, where a
//! target is a handle into the inventory.

use std::sync::{Arc, RwLock};

use serde_json::{Map, Value as J};

use crate::lang::values::error::ValueError;
use crate::lang::values::types::PType;
use crate::lang::values::value::{Value, hash_get_str};

/// What is known about a target, shared by every `Target` value naming it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TargetInfo {
    pub uri: Option<String>,
    pub host: Option<String>,
    pub port: Option<i64>,
    pub user: Option<String>,
    pub transport: String,
    /// The target's transport config with secrets redacted.
    pub config: Vec<(Value, Value)>,
    pub vars: Vec<(Value, Value)>,
    pub facts: Vec<(Value, Value)>,
    pub features: Vec<String>,
    pub aliases: Vec<String>,
    pub groups: Vec<String>,
}

/// A handle on one target of the plan's inventory.
#[derive(Debug, Clone)]
pub struct Target {
    pub name: String,
    pub info: Arc<RwLock<TargetInfo>>,
}

impl Target {
    /// A copy of the current info (an empty one if a writer panicked).
    pub fn snapshot(&self) -> TargetInfo {
        self.info.read().map(|i| i.clone()).unwrap_or_default()
    }

    /// Changes the shared info.
    pub fn update(&self, f: impl FnOnce(&mut TargetInfo)) {
        if let Ok(mut i) = self.info.write() {
            f(&mut i);
        }
    }
}

/// Which of Bolt's result types a [`PlanResult`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultKind {
    Result,
    ApplyResult,
    /// `run_container`'s: no target; its object is the image.
    ContainerResult,
}

/// One target's result of a plan function (`Result`, or `ApplyResult`
/// whose value holds `report`).
#[derive(Debug, Clone)]
pub struct PlanResult {
    pub kind: ResultKind,
    pub target: Target,
    pub action: String,
    pub object: Option<String>,
    /// The result's value hash, `_error` and `_output` included.
    pub value: Vec<(Value, Value)>,
}

impl PlanResult {
    pub fn ok(&self) -> bool {
        hash_get_str(&self.value, "_error").is_none_or(Value::is_undef)
    }

    pub fn error(&self) -> Option<ErrorValue> {
        match hash_get_str(&self.value, "_error") {
            Some(Value::Hash(h)) => Some(ErrorValue::from_hash(h)),
            _ => None,
        }
    }

    /// Bolt's `to_data`: `{target, action, object, status, value}`
    /// (a ContainerResult's: `{object, status, value}`).
    pub fn to_data(&self) -> J {
        let mut m = Map::new();
        if self.kind != ResultKind::ContainerResult {
            m.insert("target".into(), J::String(self.target.name.clone()));
            m.insert("action".into(), J::String(self.action.clone()));
        }
        m.insert(
            "object".into(),
            self.object.clone().map_or(J::Null, J::String),
        );
        m.insert(
            "status".into(),
            J::String(if self.ok() { "success" } else { "failure" }.into()),
        );
        m.insert("value".into(), to_json(&Value::Hash(self.value.clone())));
        J::Object(m)
    }
}

/// Puppet's `Error` data type: what `fail_plan` raises, `catch_errors`
/// returns and a failed result's `error` is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ErrorValue {
    pub msg: String,
    pub kind: Option<String>,
    pub details: Vec<(Value, Value)>,
    pub issue_code: Option<String>,
}

impl ErrorValue {
    pub fn new(msg: impl Into<String>, kind: &str) -> ErrorValue {
        ErrorValue {
            msg: msg.into(),
            kind: Some(kind.to_string()),
            ..ErrorValue::default()
        }
    }

    /// From an `_error` hash (`msg`, `kind`, `details`, `issue_code`).
    pub fn from_hash(h: &[(Value, Value)]) -> ErrorValue {
        let text = |k: &str| match hash_get_str(h, k) {
            Some(Value::Str(s)) => Some(s.clone()),
            _ => None,
        };
        ErrorValue {
            msg: text("msg").unwrap_or_default(),
            kind: text("kind"),
            details: match hash_get_str(h, "details") {
                Some(Value::Hash(d)) => d.clone(),
                _ => Vec::new(),
            },
            issue_code: text("issue_code"),
        }
    }

    /// Bolt's error hash: `kind`, `msg`, `details`, and `issue_code` when set.
    pub fn to_data(&self) -> J {
        let mut m = Map::new();
        m.insert("kind".into(), self.kind.clone().map_or(J::Null, J::String));
        m.insert("msg".into(), J::String(self.msg.clone()));
        m.insert(
            "details".into(),
            to_json(&Value::Hash(self.details.clone())),
        );
        if let Some(code) = &self.issue_code {
            m.insert("issue_code".into(), J::String(code.clone()));
        }
        J::Object(m)
    }

    /// The error as a Puppet hash (for `_error` inside a result value).
    pub fn to_hash(&self) -> Value {
        let mut h = vec![(Value::str("msg"), Value::str(self.msg.clone()))];
        if let Some(k) = &self.kind {
            h.push((Value::str("kind"), Value::str(k.clone())));
        }
        h.push((Value::str("details"), Value::Hash(self.details.clone())));
        if let Some(c) = &self.issue_code {
            h.push((Value::str("issue_code"), Value::str(c.clone())));
        }
        Value::Hash(h)
    }
}

/// A `background()` block's handle: its name and how it ends, once it
/// has (the block runs on a thread of its own).
#[derive(Debug, Clone)]
pub struct Future {
    pub id: u64,
    pub name: String,
    pub outcome: Arc<FutureSlot>,
}

/// Where a background block leaves how it ended; `wait` blocks on it.
#[derive(Debug, Default)]
pub struct FutureSlot {
    done: std::sync::Mutex<Option<Result<Value, ErrorValue>>>,
    finished: std::sync::Condvar,
}

impl FutureSlot {
    /// A slot that already holds how its block ended.
    pub fn finished(outcome: Result<Value, ErrorValue>) -> FutureSlot {
        let slot = FutureSlot::default();
        slot.set(outcome);
        slot
    }

    pub fn set(&self, outcome: Result<Value, ErrorValue>) {
        if let Ok(mut d) = self.done.lock() {
            *d = Some(outcome);
        }
        self.finished.notify_all();
    }

    /// How the block ended, if it has.
    pub fn peek(&self) -> Option<Result<Value, ErrorValue>> {
        self.done.lock().ok().and_then(|d| d.clone())
    }

    /// How the block ended, waiting for it at most `timeout` (for ever
    /// without one); `None` when the time ran out.
    pub fn wait(&self, timeout: Option<std::time::Duration>) -> Option<Result<Value, ErrorValue>> {
        let deadline = timeout.map(|t| std::time::Instant::now() + t);
        let mut d = self.done.lock().ok()?;
        loop {
            if let Some(o) = d.as_ref() {
                return Some(o.clone());
            }
            d = match deadline {
                None => self.finished.wait(d).ok()?,
                Some(end) => {
                    let left = end.checked_duration_since(std::time::Instant::now())?;
                    self.finished.wait_timeout(d, left).ok()?.0
                }
            };
        }
    }
}

/// A plan object value.
#[derive(Debug, Clone)]
pub enum PlanObject {
    Target(Target),
    Result(PlanResult),
    ResultSet(Vec<PlanResult>),
    Error(ErrorValue),
    Future(Future),
}

/// The plan data types, as type names in a plan (`TargetSpec`,
/// `Boltlib::TargetSpec`, `ResultSet`...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanType {
    Target,
    Result,
    ApplyResult,
    ContainerResult,
    ResultSet,
    Error,
    Future,
    /// `Variant[String[1], Target, Array[TargetSpec]]`.
    TargetSpec,
    /// What a plan may return (Bolt's `Boltlib::PlanResult`).
    PlanResult,
}

impl PlanType {
    pub fn from_name(name: &str) -> Option<PlanType> {
        Some(match name {
            "Target" => PlanType::Target,
            "Result" => PlanType::Result,
            "ApplyResult" => PlanType::ApplyResult,
            "ContainerResult" => PlanType::ContainerResult,
            "ResultSet" => PlanType::ResultSet,
            "Error" => PlanType::Error,
            "Future" => PlanType::Future,
            "TargetSpec" | "Boltlib::TargetSpec" => PlanType::TargetSpec,
            "Boltlib::PlanResult" | "PlanResult" => PlanType::PlanResult,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            PlanType::Target => "Target",
            PlanType::Result => "Result",
            PlanType::ApplyResult => "ApplyResult",
            PlanType::ContainerResult => "ContainerResult",
            PlanType::ResultSet => "ResultSet",
            PlanType::Error => "Error",
            PlanType::Future => "Future",
            PlanType::TargetSpec => "TargetSpec",
            PlanType::PlanResult => "Boltlib::PlanResult",
        }
    }

    /// Is `v` an instance of this type?
    pub fn is_instance(self, v: &Value) -> bool {
        let obj = as_object(v);
        match self {
            PlanType::Target => matches!(obj, Some(PlanObject::Target(_))),
            PlanType::Result => {
                matches!(obj, Some(PlanObject::Result(r)) if r.kind == ResultKind::Result)
            }
            PlanType::ApplyResult => {
                matches!(obj, Some(PlanObject::Result(r)) if r.kind == ResultKind::ApplyResult)
            }
            PlanType::ContainerResult => {
                matches!(obj, Some(PlanObject::Result(r)) if r.kind == ResultKind::ContainerResult)
            }
            PlanType::ResultSet => matches!(obj, Some(PlanObject::ResultSet(_))),
            PlanType::Error => matches!(obj, Some(PlanObject::Error(_))),
            PlanType::Future => matches!(obj, Some(PlanObject::Future(_))),
            PlanType::TargetSpec => match v {
                Value::Str(s) => !s.is_empty(),
                Value::Array(items) => items.iter().all(|i| self.is_instance(i)),
                _ => matches!(obj, Some(PlanObject::Target(_))),
            },
            PlanType::PlanResult => match v {
                Value::Undef | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_) => {
                    true
                }
                Value::Array(items) => items.iter().all(|i| self.is_instance(i)),
                Value::Hash(h) => h
                    .iter()
                    .all(|(k, x)| matches!(k, Value::Str(_)) && self.is_instance(x)),
                _ => matches!(
                    obj,
                    Some(
                        PlanObject::Error(_)
                            | PlanObject::Result(_)
                            | PlanObject::ResultSet(_)
                            | PlanObject::Target(_)
                    )
                ),
            },
        }
    }
}

/// The plan object inside `v`, if it is one.
pub fn as_object(v: &Value) -> Option<&PlanObject> {
    match v {
        Value::Rich(r) => match &**r {
            crate::lang::values::rich::Rich::Plan(o) => Some(o),
            _ => None,
        },
        _ => None,
    }
}

/// Wraps a plan object as a value.
pub fn value(o: PlanObject) -> Value {
    Value::Rich(Box::new(crate::lang::values::rich::Rich::Plan(o)))
}

impl PlanObject {
    pub fn type_name(&self) -> &'static str {
        match self {
            PlanObject::Target(_) => "Target",
            PlanObject::Result(r) if r.kind == ResultKind::ApplyResult => "ApplyResult",
            PlanObject::Result(r) if r.kind == ResultKind::ContainerResult => "ContainerResult",
            PlanObject::Result(_) => "Result",
            PlanObject::ResultSet(_) => "ResultSet",
            PlanObject::Error(_) => "Error",
            PlanObject::Future(_) => "Future",
        }
    }

    pub fn plan_type(&self) -> PType {
        let t = match self {
            PlanObject::Target(_) => PlanType::Target,
            PlanObject::Result(r) if r.kind == ResultKind::ApplyResult => PlanType::ApplyResult,
            PlanObject::Result(r) if r.kind == ResultKind::ContainerResult => {
                PlanType::ContainerResult
            }
            PlanObject::Result(_) => PlanType::Result,
            PlanObject::ResultSet(_) => PlanType::ResultSet,
            PlanObject::Error(_) => PlanType::Error,
            PlanObject::Future(_) => PlanType::Future,
        };
        PType::Plan(t)
    }

    /// The JSON Bolt prints for the object in a plan's result.
    pub fn to_data(&self) -> J {
        match self {
            PlanObject::Target(t) => J::String(t.name.clone()),
            PlanObject::Result(r) => r.to_data(),
            PlanObject::ResultSet(rs) => J::Array(rs.iter().map(PlanResult::to_data).collect()),
            PlanObject::Error(e) => e.to_data(),
            PlanObject::Future(f) => J::String(format!("Future '{}'", f.name)),
        }
    }

    /// The string form (interpolation, `String(x)`): a target's name,
    /// the JSON of the others, as Bolt's `to_s`.
    pub fn to_s(&self) -> String {
        match self {
            PlanObject::Target(t) => t.name.clone(),
            PlanObject::Error(e) => e.msg.clone(),
            other => other.to_data().to_string(),
        }
    }

    /// Equality (`==`): targets by name, the others by their data.
    pub fn equal(&self, other: &PlanObject) -> bool {
        match (self, other) {
            (PlanObject::Target(a), PlanObject::Target(b)) => a.name == b.name,
            (PlanObject::Future(a), PlanObject::Future(b)) => a.id == b.id,
            (a, b) => a.type_name() == b.type_name() && a.to_data() == b.to_data(),
        }
    }

    /// The elements iterating the object yields: a result set's results.
    pub fn elements(&self) -> Option<Vec<Value>> {
        match self {
            PlanObject::ResultSet(rs) => Some(
                rs.iter()
                    .map(|r| value(PlanObject::Result(r.clone())))
                    .collect(),
            ),
            _ => None,
        }
    }

    /// `obj[args]`: a result's value key, a result set's element or slice.
    pub fn access(&self, args: &[Value]) -> Result<Value, ValueError> {
        match (self, args) {
            (PlanObject::Result(r), [Value::Str(k)]) => {
                Ok(hash_get_str(&r.value, k).cloned().unwrap_or(Value::Undef))
            }
            (PlanObject::ResultSet(rs), [Value::Int(i)]) => Ok(index(rs.len(), *i)
                .and_then(|i| rs.get(i))
                .map_or(Value::Undef, |r| value(PlanObject::Result(r.clone())))),
            (PlanObject::ResultSet(rs), [Value::Int(from), Value::Int(to)]) => {
                let (Some(a), Some(b)) = (index(rs.len(), *from), index(rs.len(), *to)) else {
                    return Ok(Value::Undef);
                };
                Ok(Value::Array(
                    rs.get(a..=b)
                        .unwrap_or(&[])
                        .iter()
                        .map(|r| value(PlanObject::Result(r.clone())))
                        .collect(),
                ))
            }
            (o, _) => Err(ValueError(format!(
                "'[]' expects {} for a {}, got {}",
                match o {
                    PlanObject::Result(_) => "one String key",
                    PlanObject::ResultSet(_) => "one or two Integer indexes",
                    _ => "no arguments",
                },
                o.type_name(),
                args.iter()
                    .map(Value::type_name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// Calls method `name` (other than `filter_set`, which needs a
    /// block); `None` when the type has no such method, so that the call
    /// falls back to a function of that name.
    pub fn method(&self, name: &str, args: &[Value]) -> Option<Result<Value, ValueError>> {
        let no_args = |v: Value| {
            if args.is_empty() {
                Ok(v)
            } else {
                Err(ValueError(format!(
                    "'{name}' expects no arguments, got {}",
                    args.len()
                )))
            }
        };
        let s = |x: &Option<String>| x.clone().map_or(Value::Undef, Value::Str);
        Some(match self {
            PlanObject::Target(t) => {
                let i = t.snapshot();
                match name {
                    "name" | "safe_name" => no_args(Value::str(t.name.clone())),
                    "uri" => no_args(s(&i.uri)),
                    "host" => no_args(s(&i.host)),
                    "port" => no_args(i.port.map_or(Value::Undef, Value::Int)),
                    "user" => no_args(s(&i.user)),
                    "transport" => no_args(Value::str(i.transport.clone())),
                    "protocol" => no_args(Value::str(i.transport.clone())),
                    "vars" => no_args(Value::Hash(i.vars)),
                    "facts" => no_args(Value::Hash(i.facts)),
                    "features" => no_args(Value::Array(
                        i.features.into_iter().map(Value::Str).collect(),
                    )),
                    "config" => no_args(Value::Hash(vec![
                        (Value::str("transport"), Value::str(i.transport.clone())),
                        (
                            Value::str(i.transport.clone()),
                            Value::Hash(i.config.clone()),
                        ),
                    ])),
                    "transport_config" | "options" => no_args(Value::Hash(i.config)),
                    "target_alias" => no_args(match i.aliases.len() {
                        0 => Value::Undef,
                        1 => Value::Str(i.aliases.into_iter().next().unwrap_or_default()),
                        _ => Value::Array(i.aliases.into_iter().map(Value::Str).collect()),
                    }),
                    "password" => no_args(Value::Undef),
                    _ => return None,
                }
            }
            PlanObject::Result(r) => match name {
                "ok" | "ok?" | "success?" => no_args(Value::Bool(r.ok())),
                "status" => no_args(Value::str(if r.ok() { "success" } else { "failure" })),
                "value" => no_args(Value::Hash(r.value.clone())),
                "target" => no_args(value(PlanObject::Target(r.target.clone()))),
                "action" => no_args(Value::str(r.action.clone())),
                "object" => no_args(s(&r.object)),
                "message" => no_args(
                    hash_get_str(&r.value, "_output")
                        .cloned()
                        .unwrap_or(Value::Undef),
                ),
                "error" => no_args(
                    r.error()
                        .map_or(Value::Undef, |e| value(PlanObject::Error(e))),
                ),
                "sensitive" => no_args(
                    hash_get_str(&r.value, "_sensitive")
                        .cloned()
                        .unwrap_or(Value::Undef),
                ),
                "stdout" | "stderr" if r.kind == ResultKind::ContainerResult => no_args(
                    hash_get_str(&r.value, name)
                        .cloned()
                        .unwrap_or(Value::Undef),
                ),
                "report" if r.kind == ResultKind::ApplyResult => no_args(
                    hash_get_str(&r.value, "report")
                        .cloned()
                        .unwrap_or(Value::Hash(Vec::new())),
                ),
                "to_data" => no_args(Value::from_json(&r.to_data())),
                "[]" => self.access(args),
                _ => return None,
            },
            PlanObject::ResultSet(rs) => {
                let set = |v: Vec<PlanResult>| value(PlanObject::ResultSet(v));
                match name {
                    "ok" | "ok?" => no_args(Value::Bool(rs.iter().all(PlanResult::ok))),
                    "count" | "length" | "size" => {
                        no_args(Value::Int(i64::try_from(rs.len()).unwrap_or(i64::MAX)))
                    }
                    "empty" | "empty?" => no_args(Value::Bool(rs.is_empty())),
                    "ok_set" => no_args(set(rs.iter().filter(|r| r.ok()).cloned().collect())),
                    "error_set" => no_args(set(rs.iter().filter(|r| !r.ok()).cloned().collect())),
                    "first" => no_args(
                        rs.first()
                            .map_or(Value::Undef, |r| value(PlanObject::Result(r.clone()))),
                    ),
                    "targets" => no_args(Value::Array(
                        rs.iter()
                            .map(|r| value(PlanObject::Target(r.target.clone())))
                            .collect(),
                    )),
                    "names" => no_args(Value::Array(
                        rs.iter()
                            .map(|r| Value::str(r.target.name.clone()))
                            .collect(),
                    )),
                    "results" => no_args(self.elements().map_or(Value::Undef, Value::Array)),
                    "find" => match args {
                        [Value::Str(n)] => Ok(rs
                            .iter()
                            .find(|r| &r.target.name == n)
                            .map_or(Value::Undef, |r| value(PlanObject::Result(r.clone())))),
                        _ => Err(ValueError(
                            "'find' expects one String argument (a target name)".into(),
                        )),
                    },
                    "to_data" | "to_a" => no_args(Value::from_json(&self.to_data())),
                    "[]" => self.access(args),
                    _ => return None,
                }
            }
            PlanObject::Error(e) => match name {
                "message" | "msg" => no_args(Value::str(e.msg.clone())),
                "kind" => no_args(s(&e.kind)),
                "issue_code" => no_args(s(&e.issue_code)),
                "details" => no_args(Value::Hash(e.details.clone())),
                "to_data" => no_args(Value::from_json(&e.to_data())),
                _ => return None,
            },
            PlanObject::Future(f) => match name {
                "state" => no_args(Value::str(match f.outcome.peek() {
                    None => "running",
                    Some(Ok(_)) => "done",
                    Some(Err(_)) => "error",
                })),
                _ => return None,
            },
        })
    }
}

/// An index from the front (or, negative, from the back) of `len` items.
fn index(len: usize, i: i64) -> Option<usize> {
    let len = i64::try_from(len).ok()?;
    let i = if i < 0 { len + i } else { i };
    (0..len).contains(&i).then(|| usize::try_from(i).ok())?
}

/// The JSON of a plan's value as Bolt prints it: plan objects as their
/// `to_data`, `Sensitive` redacted, undef as null.
pub fn to_json(v: &Value) -> J {
    match v {
        Value::Undef => J::Null,
        Value::Array(items) | Value::Iterator(items) => {
            J::Array(items.iter().map(to_json).collect())
        }
        Value::Hash(h) => J::Object(h.iter().map(|(k, x)| (k.to_s(), to_json(x))).collect()),
        Value::Sensitive(_) => J::String("Sensitive [value redacted]".into()),
        Value::Rich(r) => match &**r {
            crate::lang::values::rich::Rich::Plan(o) => o.to_data(),
            other => J::String(other.to_string()),
        },
        other => other.to_json().unwrap_or(J::Null),
    }
}

/// The text `out::message` and the logging functions print for a value:
/// strings as they are, plan objects as Bolt's `to_s`, the rest in
/// Puppet's string form.
pub fn display(v: &Value) -> String {
    match as_object(v) {
        Some(o) => o.to_s(),
        None => v.to_s(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(name: &str) -> Target {
        Target {
            name: name.into(),
            info: Arc::new(RwLock::new(TargetInfo {
                host: Some(format!("{name}.example")),
                transport: "ssh".into(),
                ..TargetInfo::default()
            })),
        }
    }

    fn result(name: &str, ok: bool) -> PlanResult {
        let mut value = vec![(Value::str("stdout"), Value::str(format!("hi {name}")))];
        if !ok {
            value.push((
                Value::str("_error"),
                ErrorValue::new("The command failed", "bolt/command-error").to_hash(),
            ));
        }
        PlanResult {
            kind: ResultKind::Result,
            target: target(name),
            action: "command".into(),
            object: Some("echo".into()),
            value,
        }
    }

    fn call(o: &PlanObject, name: &str, args: &[Value]) -> Value {
        match o.method(name, args) {
            Some(Ok(v)) => v,
            other => panic!("{name}: {other:?}"),
        }
    }

    #[test]
    fn result_set_methods_follow_bolt() {
        let rs = PlanObject::ResultSet(vec![result("a", true), result("b", false)]);
        assert_eq!(call(&rs, "ok", &[]), Value::Bool(false));
        assert_eq!(call(&rs, "count", &[]), Value::Int(2));
        assert_eq!(call(&rs, "empty", &[]), Value::Bool(false));
        assert_eq!(
            call(&rs, "names", &[]),
            Value::Array(vec![Value::str("a"), Value::str("b")])
        );
        let errors = call(&rs, "error_set", &[]);
        let errors = as_object(&errors).cloned().expect("a result set");
        assert_eq!(
            call(&errors, "names", &[]),
            Value::Array(vec![Value::str("b")])
        );
        let ok = as_object(&call(&rs, "ok_set", &[]))
            .cloned()
            .expect("a set");
        assert_eq!(call(&ok, "ok", &[]), Value::Bool(true));
        let first = call(&rs, "first", &[]);
        let first = as_object(&first).cloned().expect("a result");
        assert_eq!(
            call(&first, "[]", &[Value::str("stdout")]),
            Value::str("hi a")
        );
        assert!(matches!(
            as_object(&call(&rs, "find", &[Value::str("b")])),
            Some(PlanObject::Result(r)) if !r.ok()
        ));
        assert_eq!(call(&rs, "find", &[Value::str("zz")]), Value::Undef);
        assert!(as_object(&rs.access(&[Value::Int(-1)]).unwrap_or(Value::Undef)).is_some());
        assert_eq!(rs.access(&[Value::Int(5)]).ok(), Some(Value::Undef));
        assert!(
            matches!(rs.access(&[Value::Int(0), Value::Int(1)]), Ok(Value::Array(a)) if a.len() == 2)
        );
        assert!(rs.method("nope", &[]).is_none());
        assert!(matches!(rs.method("count", &[Value::Int(1)]), Some(Err(_))));
    }

    #[test]
    fn results_and_errors() {
        let bad = PlanObject::Result(result("b", false));
        assert_eq!(call(&bad, "status", &[]), Value::str("failure"));
        let e = call(&bad, "error", &[]);
        let e = as_object(&e).cloned().expect("an error");
        assert_eq!(call(&e, "kind", &[]), Value::str("bolt/command-error"));
        assert_eq!(call(&e, "message", &[]), Value::str("The command failed"));
        assert_eq!(call(&e, "details", &[]), Value::Hash(Vec::new()));
        let good = PlanObject::Result(result("a", true));
        assert_eq!(call(&good, "error", &[]), Value::Undef);
        assert_eq!(
            good.to_data(),
            serde_json::json!({"target": "a", "action": "command", "object": "echo",
                               "status": "success", "value": {"stdout": "hi a"}})
        );
        let t = call(&good, "target", &[]);
        assert_eq!(t.to_s(), "a");
    }

    #[test]
    fn targets_share_their_info() {
        let t = target("web");
        let copy = PlanObject::Target(t.clone());
        t.update(|i| i.vars.push((Value::str("role"), Value::str("db"))));
        assert_eq!(
            call(&copy, "vars", &[]),
            Value::Hash(vec![(Value::str("role"), Value::str("db"))])
        );
        assert_eq!(call(&copy, "host", &[]), Value::str("web.example"));
        assert_eq!(call(&copy, "port", &[]), Value::Undef);
        assert!(
            PlanType::TargetSpec
                .is_instance(&Value::Array(vec![Value::str("a"), value(copy.clone())]))
        );
        assert!(!PlanType::TargetSpec.is_instance(&Value::str("")));
        assert!(PlanType::Target.is_instance(&value(copy)));
    }
}
