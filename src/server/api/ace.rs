//! ACE's endpoints: the health check `POST /check` answers `OK` (text) once
//! the server is up and the caller is authenticated; `POST /run_task` runs a
//! task on one target as `/ssh/run_task` does (ferry's only transport is
//! SSH), taking ACE's target keys `remote-transport` and `run-on`.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Extension, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::server::AppState;
use crate::server::api::bolt::TaskObject;
use crate::server::api::targets::SshTarget;
use crate::server::http::auth::Identity;
use crate::server::http::body::JsonBody;
use crate::server::http::errors::ApiError;

/// ACE's health check: answers `OK`.
#[utoipa::path(post, path = "/check",
    responses((status = 200, description = "OK", content_type = "text/plain", body = String)))]
pub async fn check(State(_state): State<Arc<AppState>>) -> Response {
    ([(header::CONTENT_TYPE, "text/plain")], "OK").into_response()
}

/// ACE's `/run_task` request: bolt-server's task request with ACE's
/// target. (Described here; the handler checks the ACE keys and hands the
/// rest to `/ssh/run_task`.)
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct AceRunTask {
    task: TaskObject,
    #[serde(default)]
    #[schema(value_type = Object)]
    parameters: serde_json::Map<String, Value>,
    target: AceTarget,
    timeout: Option<u64>,
}

/// bolt-server's SSH target plus ACE's keys.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
#[allow(dead_code)]
struct AceTarget {
    #[serde(flatten)]
    ssh: SshTarget,
    /// Only `ssh` (ferry has no device transports).
    remote_transport: Option<String>,
    /// Accepted and ignored: ferry connects to the target itself.
    run_on: Option<String>,
}

/// ACE: runs a task from the server's modulepath on one target.
///
/// `{target, task, parameters}`: the target is
/// bolt-server's SSH target plus ACE's `remote-transport` (only `ssh`, or
/// absent) and `run-on` (accepted and ignored: ferry connects to the target
/// itself); the answer is Bolt's result, as `/ssh/run_task` gives it.
#[utoipa::path(post, path = "/run_task", request_body = AceRunTask,
    responses((status = 200, description = "Bolt's result, as /ssh/run_task", body = Value)))]
pub async fn run_task(
    state: State<Arc<AppState>>,
    who: Extension<Identity>,
    JsonBody(mut raw): JsonBody<Value>,
) -> Result<Json<Value>, ApiError> {
    if let Some(target) = raw.get_mut("target").and_then(Value::as_object_mut) {
        match target.remove("remote-transport") {
            None => {}
            Some(Value::String(t)) if t == "ssh" => {}
            Some(Value::String(_)) => {
                return Err(ApiError::bad_field(
                    "target.remote-transport",
                    "ferry runs tasks over ssh only",
                ));
            }
            Some(_) => {
                return Err(ApiError::bad_field(
                    "target.remote-transport",
                    "must be a string",
                ));
            }
        }
        match target.remove("run-on") {
            None | Some(Value::String(_)) => {}
            Some(_) => {
                return Err(ApiError::bad_field("target.run-on", "must be a string"));
            }
        }
    }
    crate::server::api::bolt::run_task(state, who, JsonBody(raw)).await
}
