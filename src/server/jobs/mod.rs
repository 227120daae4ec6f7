//! Orchestrator-style jobs over the server's inventory: `orchestrator`
//! (`/orchestrator/v1/command/*` and the job, node and event listings),
//! `sse` (a job's events as server-sent events), and `pql` (the PQL subset
//! a job's `scope.query` is written in). The jobs themselves run through
//! `server::runner`.

pub mod orchestrator;
pub mod pql;
pub mod sse;
