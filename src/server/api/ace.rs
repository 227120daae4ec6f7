//! ACE's endpoints: the health check `POST /check` answers `OK` (text) once
//! the server is up and the caller is authenticated; `POST /run_task` runs a
//! task on one target as `/ssh/run_task` does (ferry's only transport is
//! SSH), taking ACE's target keys `remote-transport` and `run-on`.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Extension, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::server::AppState;
use crate::server::http::auth::Identity;
use crate::server::http::body::JsonBody;
use crate::server::http::errors::ApiError;

/// `POST /check`.
pub async fn check(State(_state): State<Arc<AppState>>) -> Response {
    ([(header::CONTENT_TYPE, "text/plain")], "OK").into_response()
}

/// `POST /run_task` `{target, task, parameters}`: the target is
/// bolt-server's SSH target plus ACE's `remote-transport` (only `ssh`, or
/// absent) and `run-on` (accepted and ignored: ferry connects to the target
/// itself); the answer is Bolt's result, as `/ssh/run_task` gives it.
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
