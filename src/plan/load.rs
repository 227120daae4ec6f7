//! Reading YAML plans: `<module>/plans/<name>.yaml` on the modulepath (or a
//! file given by path), with every error naming the file, line and column.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{Param, Plan, PlanError, Step, StepKind};
use crate::yaml::{self, Node, Origin, Value as Y, key_text};

/// Finds plan `mod::name` (or `mod` for `mod::init`) on the modulepath.
pub fn find(name: &str, modulepath: &[PathBuf]) -> Result<PathBuf, PlanError> {
    if name.ends_with(".yaml") || name.contains('/') {
        return Ok(PathBuf::from(name));
    }
    let (module, plan) =
        crate::task::loader::split_name(name).map_err(|e| PlanError::Invalid(e.to_string()))?;
    modulepath
        .iter()
        .map(|d| d.join(&module).join("plans").join(format!("{plan}.yaml")))
        .find(|p| p.is_file())
        .ok_or_else(|| PlanError::NotFound(format!("{module}::{plan}")))
}

struct Ctx {
    file: Arc<PathBuf>,
}

impl Ctx {
    fn err(&self, n: &Node, msg: impl Into<String>) -> PlanError {
        PlanError::Invalid(format!(
            "{}: {}",
            Origin::new(&self.file, n.line, n.column),
            msg.into()
        ))
    }

    fn map<'n>(&self, n: &'n Node, what: &str) -> Result<&'n [(Node, Node)], PlanError> {
        match &n.value {
            Y::Map(e) => Ok(e),
            _ => Err(self.err(n, format!("{what} must be a mapping, found {}", n.kind()))),
        }
    }

    fn string(&self, n: &Node, what: &str) -> Result<String, PlanError> {
        n.as_str()
            .map(str::to_string)
            .ok_or_else(|| self.err(n, format!("{what} must be a string, found {}", n.kind())))
    }
}

/// Reads a plan file. `name` is what the plan is called in output.
pub fn load(path: &Path, name: &str) -> Result<Plan, PlanError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| PlanError::Invalid(format!("{}: {e}", path.display())))?;
    let ctx = Ctx {
        file: Arc::new(path.to_path_buf()),
    };
    let root = yaml::parse(&text).map_err(|e| {
        PlanError::Invalid(format!(
            "{}:{}:{}: {}",
            path.display(),
            e.line,
            e.column,
            e.message
        ))
    })?;
    let mut plan = Plan {
        name: name.to_string(),
        description: None,
        parameters: BTreeMap::new(),
        steps: Vec::new(),
        returns: None,
    };
    let mut has_steps = false;
    for (k, v) in ctx.map(&root, "a plan")? {
        match key_text(k).as_str() {
            "description" => plan.description = Some(ctx.string(v, "description")?),
            "parameters" => {
                if matches!(v.value, Y::Null) {
                    continue;
                }
                for (pk, pv) in ctx.map(v, "parameters")? {
                    plan.parameters.insert(key_text(pk), param(&ctx, pv)?);
                }
            }
            "steps" => {
                has_steps = true;
                let Y::Seq(items) = &v.value else {
                    return Err(ctx.err(v, "steps must be a list"));
                };
                for item in items {
                    plan.steps.push(step(&ctx, item)?);
                }
            }
            "return" => plan.returns = Some(v.to_json()),
            "version" => {}
            other => return Err(ctx.err(k, format!("unknown key '{other}' in a plan (expected description, parameters, steps, return)"))),
        }
    }
    if !has_steps {
        return Err(ctx.err(&root, "a plan needs steps"));
    }
    Ok(plan)
}

fn param(ctx: &Ctx, n: &Node) -> Result<Param, PlanError> {
    let mut p = Param {
        ty: None,
        default: None,
        description: None,
    };
    if matches!(n.value, Y::Null) {
        return Ok(p);
    }
    for (k, v) in ctx.map(n, "a parameter")? {
        match key_text(k).as_str() {
            "type" => p.ty = Some(ctx.string(v, "type")?),
            "default" => p.default = Some(v.to_json()),
            "description" => p.description = Some(ctx.string(v, "description")?),
            other => {
                return Err(ctx.err(
                    k,
                    format!(
                        "unknown key '{other}' in a parameter (expected type, default, description)"
                    ),
                ));
            }
        }
    }
    Ok(p)
}

const KINDS: &[&str] = &["task", "command", "script", "upload", "message"];

fn step(ctx: &Ctx, n: &Node) -> Result<Step, PlanError> {
    let entries = ctx.map(n, "a step")?;
    let get = |key: &str| {
        entries
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    };
    let json = |key: &str| {
        get(key)
            .map(Node::to_json)
            .unwrap_or(serde_json::Value::Null)
    };
    let kinds: Vec<&str> = KINDS.iter().copied().filter(|k| get(k).is_some()).collect();
    let kind = match kinds.as_slice() {
        ["task"] => StepKind::Task {
            name: ctx.string(get("task").unwrap_or(n), "task")?,
            parameters: get("parameters")
                .map(Node::to_json)
                .unwrap_or(serde_json::json!({})),
        },
        ["command"] => StepKind::Command {
            command: json("command"),
        },
        ["script"] => StepKind::Script {
            script: json("script"),
            arguments: get("arguments")
                .map(Node::to_json)
                .unwrap_or(serde_json::json!([])),
        },
        ["upload"] => StepKind::Upload {
            source: json("upload"),
            destination: get("destination")
                .map(Node::to_json)
                .ok_or_else(|| ctx.err(n, "an upload step needs a destination"))?,
        },
        ["message"] => StepKind::Message {
            message: json("message"),
        },
        [] => return Err(ctx.err(n, format!("a step needs one of: {}", KINDS.join(", ")))),
        _ => {
            return Err(ctx.err(
                n,
                format!(
                    "a step can only be one of {}; this one has {}",
                    KINDS.join(", "),
                    kinds.join(" and ")
                ),
            ));
        }
    };
    let allowed = [
        "name",
        "description",
        "targets",
        "parameters",
        "arguments",
        "destination",
        "catch_errors",
    ];
    for (k, _) in entries {
        let key = key_text(k);
        if !KINDS.contains(&key.as_str()) && !allowed.contains(&key.as_str()) {
            return Err(ctx.err(k, format!("unknown key '{key}' in a step")));
        }
    }
    if !matches!(kind, StepKind::Message { .. }) && get("targets").is_none() {
        return Err(ctx.err(n, "this step needs targets"));
    }
    Ok(Step {
        name: get("name").map(|v| ctx.string(v, "name")).transpose()?,
        description: get("description")
            .map(|v| ctx.string(v, "description"))
            .transpose()?,
        targets: get("targets").map(Node::to_json),
        origin: Origin::new(&ctx.file, n.line, n.column).to_string(),
        kind,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::run::{check_params, resolve};

    /// Runs `f` on a thread with the stack of a tokio worker (2 MiB).
    fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(f)
            .unwrap()
            .join()
            .unwrap()
    }

    fn load_text(text: String) -> Result<Plan, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plan.yaml");
        std::fs::write(&path, text).unwrap();
        let shown = path.display().to_string();
        on_small_stack(move || load(&path, "t::plan").map_err(|e| e.to_string()))
            .map_err(|e| e.replace(&shown, "plan.yaml"))
    }

    #[test]
    fn deep_plans_are_errors_with_a_position() {
        let n = 100_000;
        let step = "steps:\n  - task: t::x\n    targets: all\n    parameters:\n";
        for (text, at) in [
            (
                format!("{step}      p: {}\n", "[".repeat(n)),
                "plan.yaml:5:",
            ),
            (
                format!("{step}      p: {}\n", "{a: ".repeat(n)),
                "plan.yaml:5:",
            ),
            (
                format!(
                    "parameters:\n  p:\n    default:\n      {}1\n{step}",
                    "- ".repeat(n)
                ),
                "plan.yaml:4:",
            ),
        ] {
            let err = load_text(text).unwrap_err();
            assert!(
                err.starts_with(at)
                    && err.ends_with("lists and mappings nest deeper than 64 levels"),
                "{err}"
            );
        }
        let mut laughs =
            String::from("steps:\n  - message: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        for (prev, c) in ('a'..='i').zip('b'..='j') {
            laughs.push_str(&format!("  - message: &{c} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
        }
        let err = load_text(laughs).unwrap_err();
        assert!(err.contains("more than 250000 values"), "{err}");
    }

    #[test]
    fn deep_types_and_references_stay_bounded() {
        let ty = format!("{}String{}", "Array[".repeat(10_000), "]".repeat(10_000));
        let text = format!("parameters:\n  p:\n    type: \"{ty}\"\nsteps:\n  - message: $p\n");
        let plan = load_text(text).unwrap();
        let err = on_small_stack(move || {
            let given = serde_json::Map::from_iter([("p".to_string(), serde_json::json!("x"))]);
            check_params(&plan, given)
                .map(|_| ())
                .map_err(|e| e.to_string())
        })
        .unwrap_err();
        assert!(
            err.contains("invalid type") && err.contains("too deep"),
            "{err:.300}"
        );
        // A step as deep as a plan may be, referring to a value as deep as
        // a step's JSON result may be: resolved on a small stack.
        let d = 60;
        let text = format!(
            "steps:\n  - message: {}$deep{}\n",
            "[".repeat(d),
            "]".repeat(d)
        );
        let plan = load_text(text).unwrap();
        let value: serde_json::Value =
            serde_json::from_str(&format!("{}1{}", "[".repeat(120), "]".repeat(120))).unwrap();
        let resolved = on_small_stack(move || {
            let StepKind::Message { message } = &plan.steps[0].kind else {
                panic!("not a message step")
            };
            let vars = serde_json::Map::from_iter([("deep".to_string(), value)]);
            resolve(message, &vars).map(|v| v.to_string().len())
        });
        assert_eq!(resolved.unwrap(), 2 * (d + 120) + 1);
    }
}
