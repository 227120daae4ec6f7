//! Plans: several steps run one after the other, each on a set of targets,
//! with connections kept open from step to step. This module owns Bolt's
//! YAML plan format — reading and checking it with positions ([`load`]),
//! the values steps compute and the expressions that refer to them
//! ([`expr`]), and running it ([`run`]): parameters checked against their
//! Puppet types, steps that run a command, a script, a task, another plan,
//! an upload or a download, print a message or compute a value, and
//! ferry's own `parallel:` group. A failed step is Bolt's
//! `bolt/run-failure` error ([`Failure`]).
//!
//! Plans in the Puppet language (`plans/*.pp`) are found ([`locate`]) and
//! run by [`puppet`], which also evaluates the code embedded in YAML plans
//! beyond [`expr`]'s reference shapes (`eval` steps, operators, function
//! and plan-function calls, lambdas).

pub mod expr;
pub mod load;
pub mod puppet;
pub mod run;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Map, Value, json};

pub use expr::{Expr, Val};
pub use load::{Located, find, load, locate};

use crate::run::TargetResult;
use crate::yaml::Origin;

/// Why a plan could not be read, or could not start.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The plan file breaks Bolt's rules (`bolt/invalid-plan`); `at` is
    /// where, when the file is known.
    #[error("{}{msg}", at.as_ref().map(|a| format!("{a}: ")).unwrap_or_default())]
    Invalid { at: Option<Origin>, msg: String },
    /// No plan by that name on the modulepath (`bolt/unknown-plan`).
    #[error(
        "Could not find a plan named '{0}' (looked for <module>/plans/<name>.yaml on the modulepath). For a list of available plans, run 'ferry plan show'."
    )]
    NotFound(String),
    /// The parameters given do not fit the plan's (`bolt/pal-error`).
    #[error("{0}")]
    Param(String),
}

impl PlanError {
    pub(crate) fn at(at: &Origin, msg: impl Into<String>) -> PlanError {
        PlanError::Invalid {
            at: Some(at.clone()),
            msg: msg.into(),
        }
    }

    /// Bolt's error kind for this error.
    pub fn kind(&self) -> &'static str {
        match self {
            PlanError::Invalid { .. } => "bolt/invalid-plan",
            PlanError::NotFound(_) => "bolt/unknown-plan",
            PlanError::Param(_) => "bolt/pal-error",
        }
    }

    /// The error as Bolt writes it in JSON: `{kind, msg, details}`, the
    /// position in `details` (`file`, `line`, `column`).
    pub fn to_failure(&self) -> Failure {
        let (msg, details) = match self {
            PlanError::Invalid { at: Some(at), msg } => (msg.clone(), origin_details(at)),
            other => (other.to_string(), Map::new()),
        };
        Failure {
            kind: self.kind().to_string(),
            msg,
            details,
            result_set: None,
        }
    }
}

/// `{file, line, column}` for an error's details.
pub(crate) fn origin_details(at: &Origin) -> Map<String, Value> {
    let mut d = Map::new();
    d.insert("file".into(), json!(at.file.display().to_string()));
    if at.line > 0 {
        d.insert("line".into(), json!(at.line));
        d.insert("column".into(), json!(at.column));
    }
    d
}

/// An error that ended a plan, as Bolt's `Error` value: a failed step
/// (`bolt/run-failure`, with the step's results), or anything else that
/// stopped the plan while it ran.
#[derive(Clone, Debug)]
pub struct Failure {
    pub kind: String,
    pub msg: String,
    pub details: Map<String, Value>,
    /// The failing step's results, for a run failure: they are in
    /// `details.result_set` in JSON, and what the human output prints.
    pub result_set: Option<Arc<Vec<TargetResult>>>,
}

impl Failure {
    /// A step that failed on some of its targets: Bolt's
    /// "run_command 'exit 3' failed on 1 target".
    pub fn run_failure(action: &str, object: &str, results: Arc<Vec<TargetResult>>) -> Failure {
        let failed = results.iter().filter(|r| !r.ok()).count();
        let plural = if failed == 1 { "" } else { "s" };
        let mut details = Map::new();
        details.insert("action".into(), json!(action));
        details.insert("object".into(), json!(object));
        Failure {
            kind: "bolt/run-failure".into(),
            msg: format!("{action} '{object}' failed on {failed} target{plural}"),
            details,
            result_set: Some(results),
        }
    }

    /// Any other error, with where in the plan it happened.
    pub fn new(kind: &str, msg: impl Into<String>, at: Option<&Origin>) -> Failure {
        Failure {
            kind: kind.into(),
            msg: msg.into(),
            details: at.map(origin_details).unwrap_or_default(),
            result_set: None,
        }
    }

    /// `{kind, msg, details}`, Bolt's JSON for an error.
    pub fn to_json(&self) -> Value {
        let mut details = self.details.clone();
        if let Some(results) = &self.result_set {
            details.insert(
                "result_set".into(),
                serde_json::to_value(results.as_ref()).unwrap_or(Value::Null),
            );
        }
        json!({"kind": self.kind, "msg": self.msg, "details": details})
    }
}

/// A declared plan parameter.
#[derive(Clone, Debug)]
pub struct Param {
    pub ty: Option<String>,
    pub default: Option<Value>,
    pub description: Option<String>,
}

/// What a step does. Every value is an [`Expr`], computed when the step
/// runs.
#[derive(Clone, Debug)]
pub enum StepKind {
    Command {
        command: Expr,
        env_vars: Option<Expr>,
    },
    Script {
        script: Expr,
        arguments: Option<Expr>,
        env_vars: Option<Expr>,
    },
    Task {
        task: Expr,
        parameters: Option<Expr>,
        noop: Option<Expr>,
    },
    Upload {
        upload: Expr,
        destination: Expr,
    },
    Download {
        download: Expr,
        destination: Expr,
    },
    Plan {
        plan: Expr,
        parameters: Option<Expr>,
    },
    Message {
        message: Expr,
    },
    Verbose {
        verbose: Expr,
    },
    Eval {
        eval: Expr,
    },
    /// Resources applied to the targets, as an `apply` block declares them.
    Resources {
        resources: Expr,
        noop: Option<Expr>,
    },
    /// ferry's own: steps run at the same time, each on its targets.
    Parallel {
        steps: Vec<Step>,
    },
}

impl StepKind {
    /// The step's key, as Bolt names step kinds.
    pub fn key(&self) -> &'static str {
        match self {
            StepKind::Command { .. } => "command",
            StepKind::Script { .. } => "script",
            StepKind::Task { .. } => "task",
            StepKind::Upload { .. } => "upload",
            StepKind::Download { .. } => "download",
            StepKind::Plan { .. } => "plan",
            StepKind::Message { .. } => "message",
            StepKind::Verbose { .. } => "verbose",
            StepKind::Eval { .. } => "eval",
            StepKind::Resources { .. } => "resources",
            StepKind::Parallel { .. } => "parallel",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Step {
    /// The variable the step's result is kept in.
    pub name: Option<String>,
    pub description: Option<Expr>,
    pub kind: StepKind,
    /// The step's `targets`.
    pub targets: Option<Expr>,
    pub catch_errors: Option<Expr>,
    pub run_as: Option<Expr>,
    /// Where the step is written, for messages.
    pub origin: Origin,
}

impl Step {
    /// Every value the step computes (not those of a parallel group's steps).
    pub fn exprs(&self) -> Vec<&Expr> {
        let mut exprs: Vec<&Expr> = [
            &self.description,
            &self.targets,
            &self.catch_errors,
            &self.run_as,
        ]
        .into_iter()
        .flatten()
        .collect();
        match &self.kind {
            StepKind::Command { command, env_vars } => {
                exprs.push(command);
                exprs.extend(env_vars);
            }
            StepKind::Script {
                script,
                arguments,
                env_vars,
            } => {
                exprs.push(script);
                exprs.extend(arguments);
                exprs.extend(env_vars);
            }
            StepKind::Task {
                task,
                parameters,
                noop,
            } => {
                exprs.push(task);
                exprs.extend(parameters);
                exprs.extend(noop);
            }
            StepKind::Upload {
                upload: a,
                destination: b,
            }
            | StepKind::Download {
                download: a,
                destination: b,
            } => exprs.extend([a, b]),
            StepKind::Plan { plan, parameters } => {
                exprs.push(plan);
                exprs.extend(parameters);
            }
            StepKind::Message { message: e }
            | StepKind::Verbose { verbose: e }
            | StepKind::Eval { eval: e } => exprs.push(e),
            StepKind::Resources { resources, noop } => {
                exprs.push(resources);
                exprs.extend(noop);
            }
            StepKind::Parallel { .. } => {}
        }
        exprs
    }
}

#[derive(Clone, Debug)]
pub struct Plan {
    pub name: String,
    pub description: Option<String>,
    pub private: bool,
    pub parameters: BTreeMap<String, Param>,
    pub steps: Vec<Step>,
    pub returns: Option<Expr>,
    /// The plan file.
    pub file: PathBuf,
}

impl Plan {
    /// The plan's directory (files named relative to the plan are found there).
    pub fn dir(&self) -> PathBuf {
        self.file
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default()
    }

    /// `ferry plan show NAME --format json`, in `bolt plan show`'s shape.
    pub fn info(&self, module_dir: &str) -> Value {
        let parameters: Map<String, Value> = self
            .parameters
            .iter()
            .map(|(name, p)| {
                let ty = p.ty.clone().unwrap_or_else(|| "Any".into());
                let mut entry = Map::new();
                entry.insert("type".into(), json!(ty));
                entry.insert("sensitive".into(), json!(ty.starts_with("Sensitive")));
                if let Some(d) = p.default.as_ref().filter(|d| !d.is_null()) {
                    entry.insert("default_value".into(), d.clone());
                }
                if let Some(d) = &p.description {
                    entry.insert("description".into(), json!(d));
                }
                (name.clone(), Value::Object(entry))
            })
            .collect();
        json!({
            "name": self.name,
            "description": self.description,
            "parameters": parameters,
            "private": self.private,
            "docstring": self.description,
            "summary": null,
            "module_dir": module_dir,
        })
    }
}
