//! Reading a JSON request body: within `request-timeout`, at most
//! `request-size-limit` bytes (413 beyond), then parsed into the endpoint's
//! typed request. A parse or schema error is a 400 that names the field, as
//! is a NUL byte in any string of the body.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::server::AppState;
use crate::server::http::errors::ApiError;

/// A request body parsed as `T`.
pub struct JsonBody<T>(pub T);

/// Words that mark a field whose value must not be echoed in an error.
const SECRET_WORDS: [&str; 5] = ["password", "private-key", "passphrase", "token", "secret"];

impl<T: DeserializeOwned> FromRequest<Arc<AppState>> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &Arc<AppState>) -> Result<Self, ApiError> {
        let bytes = limited_bytes(req, state).await?;
        parse(&bytes).map(JsonBody)
    }
}

/// A request body as bytes (for the Puppet agent's form and JSON bodies),
/// with the same size and time limits as [`JsonBody`].
pub struct RawBody(pub Bytes);

impl FromRequest<Arc<AppState>> for RawBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &Arc<AppState>) -> Result<Self, ApiError> {
        limited_bytes(req, state).await.map(RawBody)
    }
}

/// The body, within `request-timeout` and `request-size-limit`.
async fn limited_bytes(req: Request, state: &Arc<AppState>) -> Result<Bytes, ApiError> {
    let timeout = state.config.request_timeout;
    let bytes = match tokio::time::timeout(timeout, Bytes::from_request(req, state)).await {
        Err(_) => {
            return Err(ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                "ferry/request-timeout",
                format!(
                    "the request body did not arrive within {}s",
                    timeout.as_secs()
                ),
            ));
        }
        Ok(Err(rejection)) => {
            return Err(if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "ferry/request-too-large",
                    format!(
                        "the request body is larger than {} bytes",
                        state.config.request_size_limit
                    ),
                )
            } else {
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "ferry/bad-request",
                    "the request body could not be read",
                )
            });
        }
        Ok(Ok(bytes)) => bytes,
    };
    Ok(bytes)
}

/// Parses JSON into `T`, naming the field of the first problem.
pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        ApiError::bad_field(
            "",
            format!(
                "the body is not valid JSON (line {}, column {})",
                e.line(),
                e.column()
            ),
        )
        .with_details(json!({ "field": "", "line": e.line(), "column": e.column() }))
    })?;
    crate::server::http::limits::no_nul(&value)?;
    typed(value)
}

/// Converts parsed JSON into `T`, naming the field of the first problem.
pub fn typed<T: DeserializeOwned>(value: Value) -> Result<T, ApiError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let field = e.path().to_string();
        let field = if field == "." { String::new() } else { field };
        let secret = SECRET_WORDS.iter().any(|w| field.contains(w));
        let msg = if secret {
            "invalid value (not shown: the field holds a secret)".to_string()
        } else {
            strip_position(&e.into_inner().to_string())
        };
        ApiError::bad_field(&field, msg)
    })
}

/// serde_json's messages end with " at line L column C"; the details carry that.
fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}
