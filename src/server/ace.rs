//! ACE's health check: `POST /check` answers `OK` (text) once the server
//! is up and the caller is authenticated.

use std::sync::Arc;

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};

use super::AppState;

/// `POST /check`.
pub async fn check(State(_state): State<Arc<AppState>>) -> Response {
    ([(header::CONTENT_TYPE, "text/plain")], "OK").into_response()
}
