//! Plans: several steps run one after the other, each on a set of targets,
//! with connections kept open from step to step. This module owns Bolt's
//! YAML plan format — reading it with positions ([`load`]), and running it
//! ([`run`]): parameters checked against their Puppet types, `$name`
//! references to parameters and earlier steps' results, `${name}` inside
//! strings, and steps that run a task, a command, a script, an upload or
//! print a message. Plans in the Puppet language are not supported yet.

pub mod load;
pub mod puppet;
pub mod run;

use std::collections::BTreeMap;

use serde_json::Value;

pub use load::{find, load};

/// Why a plan could not be read or run. File errors carry file:line:col.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("{0}")]
    Invalid(String),
    #[error("plan {0} not found (looked for <module>/plans/<name>.yaml on the modulepath)")]
    NotFound(String),
    #[error("{0}")]
    Param(String),
}

/// A declared plan parameter.
#[derive(Clone, Debug)]
pub struct Param {
    pub ty: Option<String>,
    pub default: Option<Value>,
    pub description: Option<String>,
}

/// What a step does.
#[derive(Clone, Debug)]
pub enum StepKind {
    Task { name: String, parameters: Value },
    Command { command: Value },
    Script { script: Value, arguments: Value },
    Upload { source: Value, destination: Value },
    Message { message: Value },
}

#[derive(Clone, Debug)]
pub struct Step {
    pub name: Option<String>,
    pub description: Option<String>,
    pub kind: StepKind,
    /// The step's `targets`: a reference or a target specification.
    pub targets: Option<Value>,
    /// Where the step is written, for messages.
    pub origin: String,
}

#[derive(Clone, Debug)]
pub struct Plan {
    pub name: String,
    pub description: Option<String>,
    pub parameters: BTreeMap<String, Param>,
    pub steps: Vec<Step>,
    pub returns: Option<Value>,
}
