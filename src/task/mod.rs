//! Tasks: Bolt's unit of reusable work. This module owns finding tasks on
//! the modulepath and in the built-in `ferry` module ([`loader`]), reading
//! their metadata ([`metadata`]), checking parameters against the Puppet
//! types the metadata declares ([`params`]), and writing the script each
//! run is ([`wrapper`]). Running a task on a target is an action of the
//! executor (`run::actions::task`); this module knows nothing of
//! the executor.

pub mod loader;
pub mod metadata;
pub mod params;
pub mod wrapper;

pub use loader::{Loader, Task, TaskFile};
pub use params::Prepared;

/// Why a task could not be found, read or given its parameters.
#[derive(Clone, Debug, thiserror::Error)]
pub enum TaskError {
    #[error(
        "invalid task name '{0}': names are lowercase letters, digits and '_', starting with a letter (module::task)"
    )]
    BadName(String),
    #[error("task {0} not found (modulepath: {1})")]
    NotFound(String, String),
    #[error("{path}: {message}")]
    Metadata { path: String, message: String },
    #[error("{0}")]
    Params(String),
    #[error("{0}")]
    Io(String),
}
