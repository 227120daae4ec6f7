//! Bolt's `get_resources(targets, resources)`: the current state of
//! resources on each target, as Puppet's resource indirection describes
//! them (`{"resources": [{type, title, tags, exported, kind,
//! parameters}]}` per target). Bolt runs Puppet on the target for it;
//! ferry runs its built-in `ferry::resources` task (POSIX sh: the same
//! `getent`, package manager, init system and `stat` queries its apply
//! makes), so no agent is needed. Each entry is a type (every instance:
//! user, group, package, service) or an instance (`File[/etc/hosts]`);
//! other types are refused before anything runs, naming the ones ferry
//! describes.

use super::functions::{prepare_task, raise, want_args};
use super::library::PlanLibrary;
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::values::plan::ErrorValue;
use crate::lang::values::types::PType;
use crate::lang::values::value::Value;

/// The built-in task that gathers the state.
const TASK: &str = "ferry::resources";

/// The types the task describes.
const TYPES: &[&str] = &["user", "group", "package", "service", "file"];

fn bad(c: &Call<'_>, msg: String) -> crate::lang::eval::control::Unwind {
    raise(c, ErrorValue::new(msg, "bolt/get-resources"))
}

/// A word of Ruby's `\w` (ASCII letters, digits, underscore).
fn word(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

/// One entry as the task takes it (`Type` or `Type[title]`), checked as
/// Bolt checks it and against the types ferry describes.
fn entry(c: &Call<'_>, v: &Value) -> EvalResult<String> {
    let text = match v {
        Value::Str(s) => s.clone(),
        Value::Type(PType::Resource(Some(t), None)) => t.clone(),
        Value::Type(PType::Resource(Some(t), Some(title))) => format!("{t}[{title}]"),
        other => {
            return Err(bad(
                c,
                format!(
                    "'get_resources' parameter 'resources' expects a resource type or instance name, got {}",
                    other.type_name()
                ),
            ));
        }
    };
    let (ty, title) = match text.split_once('[') {
        Some((ty, rest)) => match rest.strip_suffix(']') {
            Some(title) => (ty, Some(title)),
            None => (ty, Some("")),
        },
        None => (text.as_str(), None),
    };
    let title_ok = title.is_none_or(|t| !t.is_empty() && !t.contains([']', '\n', '\r']));
    if !word(ty) || !title_ok {
        return Err(bad(
            c,
            format!("{text} is not a valid resource type or type instance name"),
        ));
    }
    let key = ty.to_ascii_lowercase();
    if !TYPES.contains(&key.as_str()) {
        return Err(bad(
            c,
            format!(
                "ferry cannot describe resources of type {ty}: it describes {}",
                TYPES.join(", ")
            ),
        ));
    }
    if key == "file" && title.is_none() {
        return Err(bad(
            c,
            "Listing all file instances is not supported. Please specify a file or directory, e.g. File[/etc]".into(),
        ));
    }
    Ok(text)
}

pub(super) fn get_resources(
    lib: &PlanLibrary,
    _: &mut Evaluator<'_>,
    c: Call<'_>,
) -> EvalResult<Value> {
    want_args(&c, 2, 2)?;
    let targets = lib.targets_of(&c, &c.arg(0))?;
    let list = match c.arg(1) {
        Value::Array(a) => a,
        one => vec![one],
    };
    let entries = list
        .iter()
        .map(|v| entry(&c, v).map(Value::Str))
        .collect::<EvalResult<Vec<_>>>()?;
    let params = vec![(Value::str("resources"), Value::Array(entries))];
    let action = prepare_task(lib, TASK, &params, false)?;
    let report = lib.reporter().filter(|_| !targets.is_empty());
    let names: Vec<String> = targets.iter().map(|t| t.name.clone()).collect();
    if let Some(r) = &report {
        r.step_started("gather resources", &names);
    }
    let started = std::time::Instant::now();
    let results = lib.execute_set(targets, action, None, true)?;
    if let Some(r) = &report {
        let failures = results.iter().filter(|x| !x.ok()).count();
        r.step_finished("gather resources", failures, started.elapsed());
    }
    // Bolt raises the task's run failure, whatever the plan catches.
    let as_task = Call {
        written: "run_task",
        name: "run_task",
        args: Vec::new(),
        lambda: None,
        scope: c.scope,
        loc: c.loc,
    };
    lib.check(&as_task, TASK, results, false)
}
