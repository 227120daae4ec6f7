//! Running a plan: parameters checked, then each step in order on its
//! targets through the shared executor, with one connection per target kept
//! for the whole plan. A step that fails on any target ends the plan.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::{Plan, PlanError, StepKind};
use crate::inventory::Inventory;
use crate::run::events::Sink;
use crate::run::{self, Action, Connections, RunOptions, Summary};
use crate::task::{Loader, params};

/// What a plan needs from its surroundings.
pub struct Context<'a> {
    pub inventory: &'a Inventory,
    pub modulepath: Vec<PathBuf>,
    pub options: RunOptions,
    /// A fresh sink for each step's events.
    pub sink: &'a (dyn Fn() -> Arc<dyn Sink> + Sync),
    /// Where `message` steps are printed.
    pub message: &'a (dyn Fn(&str) + Sync),
}

/// How a plan ended.
#[derive(Debug)]
pub struct Outcome {
    pub ok: bool,
    /// Each step's name (or number) and its results.
    pub steps: Vec<(String, Summary)>,
    /// The plan's `return` value, or the error that ended it.
    pub value: Value,
}

fn is_target_spec(ty: &str) -> bool {
    ty.contains("TargetSpec")
}

/// Checks and completes the parameters a plan is given.
pub fn check_params(
    plan: &Plan,
    given: Map<String, Value>,
) -> Result<Map<String, Value>, PlanError> {
    let mut problems = Vec::new();
    for name in given.keys() {
        if !plan.parameters.contains_key(name) {
            problems.push(format!(
                "plan {} has no parameter named '{name}'",
                plan.name
            ));
        }
    }
    let mut out = Map::new();
    for (name, p) in &plan.parameters {
        let value = given
            .get(name)
            .cloned()
            .or_else(|| p.default.clone())
            .unwrap_or(Value::Null);
        let ty = p.ty.as_deref().unwrap_or("Any");
        let ok = if is_target_spec(ty) {
            let optional = ty.starts_with("Optional[");
            match &value {
                Value::String(_) => Ok(()),
                Value::Array(a) if a.iter().all(Value::is_string) => Ok(()),
                Value::Null if optional => Ok(()),
                _ => Err(format!(
                    "expects a TargetSpec (a string or a list of strings), got {value}"
                )),
            }
        } else {
            params::check_type(ty, &value).map_err(|e| e.to_string())
        };
        if let Err(why) = ok {
            problems.push(format!("parameter '{name}' {why}"));
        }
        out.insert(name.clone(), value);
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(PlanError::Param(format!(
            "invalid parameters for plan {}:\n  {}",
            plan.name,
            problems.join("\n  ")
        )))
    }
}

/// Replaces `$name` (a whole string) by that variable's value and
/// `${name}` inside strings by its text.
pub fn resolve(v: &Value, vars: &Map<String, Value>) -> Result<Value, PlanError> {
    Ok(match v {
        Value::String(s) => {
            if let Some(name) = s.strip_prefix('$').filter(|n| {
                !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            }) {
                return vars
                    .get(name)
                    .cloned()
                    .ok_or_else(|| PlanError::Invalid(format!("unknown variable ${name}")));
            }
            let mut out = String::new();
            let mut rest = s.as_str();
            while let Some(start) = rest.find("${") {
                out.push_str(&rest[..start]);
                let after = &rest[start + 2..];
                let end = after
                    .find('}')
                    .ok_or_else(|| PlanError::Invalid(format!("unclosed ${{ in '{s}'")))?;
                let name = &after[..end];
                let value = vars.get(name).ok_or_else(|| {
                    PlanError::Invalid(format!("unknown variable ${name} in '{s}'"))
                })?;
                match value {
                    Value::String(text) => out.push_str(text),
                    other => out.push_str(&other.to_string()),
                }
                rest = &after[end + 1..];
            }
            out.push_str(rest);
            Value::String(out)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| resolve(i, vars))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| Ok((k.clone(), resolve(v, vars)?)))
                .collect::<Result<_, PlanError>>()?,
        ),
        other => other.clone(),
    })
}

fn spec_of(v: &Value) -> Result<String, PlanError> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Array(items) => items
            .iter()
            .map(|i| match i {
                Value::String(s) => Ok(s.clone()),
                // A result item from an earlier step names its target.
                Value::Object(o) => o
                    .get("target")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .ok_or_else(|| PlanError::Invalid(format!("not a target: {i}"))),
                other => Err(PlanError::Invalid(format!("not a target: {other}"))),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(|v| v.join(",")),
        other => Err(PlanError::Invalid(format!(
            "targets must be a string or a list, got {other}"
        ))),
    }
}

/// A module-relative file (`mymod/script.sh` → `<modulepath>/mymod/files/script.sh`),
/// or a path relative to the plan file.
fn module_file(rel: &str, modulepath: &[PathBuf], plan_dir: &Path) -> Result<PathBuf, PlanError> {
    let direct = plan_dir.join(rel);
    if Path::new(rel).is_absolute() || direct.exists() {
        return Ok(if Path::new(rel).is_absolute() {
            PathBuf::from(rel)
        } else {
            direct
        });
    }
    let (module, rest) = rel
        .split_once('/')
        .ok_or_else(|| PlanError::Invalid(format!("file '{rel}' not found")))?;
    if rest.split('/').any(|s| s == "..") {
        return Err(PlanError::Invalid(format!(
            "file '{rel}' must stay inside its module"
        )));
    }
    modulepath
        .iter()
        .map(|d| d.join(module).join("files").join(rest))
        .find(|p| p.exists())
        .ok_or_else(|| PlanError::Invalid(format!("file '{rel}' not found in any module's files/")))
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Runs a plan whose parameters were checked with [`check_params`].
pub async fn run(
    plan: &Plan,
    plan_dir: &Path,
    params: Map<String, Value>,
    ctx: &Context<'_>,
) -> Outcome {
    let conns = Arc::new(Connections::default());
    let outcome = steps(plan, plan_dir, params, ctx, &conns).await;
    conns.close_all().await;
    outcome
}

async fn steps(
    plan: &Plan,
    plan_dir: &Path,
    params: Map<String, Value>,
    ctx: &Context<'_>,
    conns: &Arc<Connections>,
) -> Outcome {
    let mut vars = params;
    let mut done = Vec::new();
    let fail = |done, msg: String| Outcome {
        ok: false,
        steps: done,
        value: json!({"_error": {"kind": "ferry/plan-failed", "msg": msg, "details": {}}}),
    };
    let loader = Loader::new(ctx.modulepath.clone());
    for (i, step) in plan.steps.iter().enumerate() {
        let label = step
            .name
            .clone()
            .unwrap_or_else(|| format!("step {}", i + 1));
        let action = match step_action(&step.kind, &vars, &loader, &ctx.modulepath, plan_dir) {
            Ok(Some(a)) => a,
            Ok(None) => {
                if let StepKind::Message { message } = &step.kind {
                    match resolve(message, &vars) {
                        Ok(m) => (ctx.message)(&text(&m)),
                        Err(e) => return fail(done, format!("{}: {e}", step.origin)),
                    }
                }
                continue;
            }
            Err(e) => return fail(done, format!("{}: {e}", step.origin)),
        };
        let targets = match step
            .targets
            .as_ref()
            .map(|t| resolve(t, &vars).and_then(|v| spec_of(&v)))
        {
            Some(Ok(spec)) => match ctx.inventory.select(&spec) {
                Ok(t) => t,
                Err(e) => return fail(done, format!("{}: {e}", step.origin)),
            },
            Some(Err(e)) => return fail(done, format!("{}: {e}", step.origin)),
            None => Vec::new(),
        };
        if let Err(e) = crate::transport::check_options(&targets, &ctx.options.overrides) {
            return fail(done, e.to_string());
        }
        let summary = run::run_on(
            targets,
            action,
            &ctx.options,
            (ctx.sink)(),
            Some(Arc::clone(conns)),
        )
        .await;
        let failed = summary.failed().count();
        if let Some(name) = &step.name {
            vars.insert(
                name.clone(),
                serde_json::to_value(&summary.results).unwrap_or(Value::Null),
            );
        }
        done.push((label.clone(), summary));
        if failed > 0 {
            return fail(done, format!("{label} failed on {failed} target(s)"));
        }
    }
    let value = match plan.returns.as_ref().map(|r| resolve(r, &vars)) {
        Some(Ok(v)) => v,
        Some(Err(e)) => return fail(done, format!("return: {e}")),
        None => Value::Null,
    };
    Outcome {
        ok: true,
        steps: done,
        value,
    }
}

fn step_action(
    kind: &StepKind,
    vars: &Map<String, Value>,
    loader: &Loader,
    modulepath: &[PathBuf],
    plan_dir: &Path,
) -> Result<Option<Action>, PlanError> {
    Ok(Some(match kind {
        StepKind::Message { .. } => return Ok(None),
        StepKind::Command { command } => Action::Command {
            line: text(&resolve(command, vars)?),
        },
        StepKind::Task { name, parameters } => {
            let task = loader
                .load(name)
                .map_err(|e| PlanError::Invalid(e.to_string()))?;
            let given = match resolve(parameters, vars)? {
                Value::Object(m) => m,
                Value::Null => Map::new(),
                other => {
                    return Err(PlanError::Invalid(format!(
                        "task parameters must be a mapping, got {other}"
                    )));
                }
            };
            let prepared = params::prepare(task, given, false, loader)
                .map_err(|e| PlanError::Invalid(e.to_string()))?;
            Action::Task(Arc::new(prepared))
        }
        StepKind::Script { script, arguments } => {
            let path = module_file(&text(&resolve(script, vars)?), modulepath, plan_dir)?;
            let args = match resolve(arguments, vars)? {
                Value::Array(a) => a.iter().map(text).collect(),
                Value::Null => Vec::new(),
                other => vec![text(&other)],
            };
            Action::Script { path, args }
        }
        StepKind::Upload {
            source,
            destination,
        } => Action::Upload {
            src: module_file(&text(&resolve(source, vars)?), modulepath, plan_dir)?,
            dest: text(&resolve(destination, vars)?),
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_and_interpolation() {
        let vars: Map<String, Value> =
            serde_json::from_value(json!({"a": "x", "n": 3, "list": [1, 2]})).unwrap();
        assert_eq!(resolve(&json!("$a"), &vars).unwrap(), json!("x"));
        assert_eq!(resolve(&json!("$list"), &vars).unwrap(), json!([1, 2]));
        assert_eq!(
            resolve(&json!("n=${n}, a=${a}!"), &vars).unwrap(),
            json!("n=3, a=x!")
        );
        assert_eq!(
            resolve(&json!({"k": ["$a"]}), &vars).unwrap(),
            json!({"k": ["x"]})
        );
        assert!(resolve(&json!("$nope"), &vars).is_err());
        assert!(resolve(&json!("${a"), &vars).is_err());
        // A dollar that is not a reference stays.
        assert_eq!(
            resolve(&json!("costs $5.00"), &vars).unwrap(),
            json!("costs $5.00")
        );
    }
}
