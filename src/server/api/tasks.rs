//! Tasks for the service: found on the server's `modulepath` with the task
//! module's loader, parameters checked by it, run as `Action::Task` by the
//! shared executor. Used by bolt-server's `/ssh/run_task` (the request's
//! task files must match the server's copy by sha256, the server's
//! modulepath standing in for puppetserver) and the orchestrator's task
//! jobs. Sensitive parameter values are redacted from stored requests.

use axum::http::StatusCode;
use serde_json::{Map, Value};

use crate::server::files::blocking;
use crate::server::http::errors::ApiError;
use crate::task::{Loader, Prepared, TaskError, params};

/// Loads task `name` and checks `given` parameters; `field` names the task
/// in errors, `params_field` the parameters.
pub fn prepare(
    modulepath: &[std::path::PathBuf],
    field: &str,
    name: &str,
    params_field: &str,
    given: Map<String, Value>,
    noop: bool,
) -> Result<Prepared, ApiError> {
    let loader = Loader::new(modulepath.to_vec());
    let task = loader.load(name).map_err(|e| task_error(field, name, e))?;
    params::prepare(task, given, noop, &loader).map_err(|e| task_error(params_field, name, e))
}

/// [`prepare`] on the blocking pool (it reads the task's files).
pub async fn prepare_off_thread(
    modulepath: &[std::path::PathBuf],
    field: &str,
    name: &str,
    params_field: &str,
    given: Map<String, Value>,
    noop: bool,
) -> Result<Prepared, ApiError> {
    let modulepath = modulepath.to_vec();
    let (field, name, params_field) = (
        field.to_string(),
        name.to_string(),
        params_field.to_string(),
    );
    blocking(move || prepare(&modulepath, &field, &name, &params_field, given, noop)).await
}

fn task_error(field: &str, name: &str, e: TaskError) -> ApiError {
    match e {
        TaskError::BadName(_) => ApiError::bad_field(field, e.to_string()),
        TaskError::NotFound(..) => ApiError::new(
            StatusCode::NOT_FOUND,
            "ferry/task-not-found",
            format!("{field}: task {name} is not on this server's modulepath"),
        ),
        TaskError::Params(msg) => ApiError::bad_field(field, msg),
        TaskError::Metadata { .. } | TaskError::Io(_) => {
            tracing::error!("task {name}: {e}");
            ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "ferry/task-error",
                format!("task {name} cannot be read on this server (see its log)"),
            )
        }
    }
}

/// Checks that every file a bolt-server task object lists (by sha256) is
/// one the server's copy of the task has.
pub fn check_files(prepared: &Prepared, files: &[Value]) -> Result<(), ApiError> {
    let known: Vec<&str> = prepared.known_files().map(|f| f.sha256.as_str()).collect();
    for (i, f) in files.iter().enumerate() {
        let Some(sha) = f.get("sha256").and_then(Value::as_str) else {
            return Err(ApiError::bad_field(
                &format!("task.files[{i}].sha256"),
                "is required",
            ));
        };
        if !known.iter().any(|k| k.eq_ignore_ascii_case(sha)) {
            return Err(ApiError::bad_field(
                &format!("task.files[{i}].sha256"),
                "does not match the task on this server's modulepath",
            ));
        }
    }
    Ok(())
}

/// `value` with every secret replaced, as task output is redacted
/// (strings holding one, and numbers that are one).
pub fn redact_secrets(value: &Value, secrets: &[String]) -> Value {
    let mut value = value.clone();
    crate::run::actions::task::output::redact(&mut value, secrets);
    value
}
