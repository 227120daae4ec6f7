//! Orchestrator-style jobs over the server's inventory: `orchestrator`
//! (`/orchestrator/v1/command/*` and the job, node and event listings),
//! `deploy` (on-demand Puppet runs and a job's per-node reports),
//! `plans` (YAML and Puppet-language plans as plan jobs),
//! and `sse` (a job's events as server-sent events); a job's
//! `scope.query` is PQL, read and evaluated by `crate::query`. The jobs
//! themselves run through `server::runner`.

pub mod deploy;
pub mod orchestrator;
pub mod plans;
pub mod sse;
