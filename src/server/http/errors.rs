//! Every error the API returns: JSON `{kind, msg, details}` with the right
//! status. Messages are written for the client; internal detail (paths,
//! database messages) goes to the log only, and secrets go nowhere.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// An error response.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub kind: &'static str,
    pub msg: String,
    pub details: Value,
}

impl ApiError {
    pub fn new(status: StatusCode, kind: &'static str, msg: impl Into<String>) -> Self {
        ApiError {
            status,
            kind,
            msg: msg.into(),
            details: json!({}),
        }
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = details;
        self
    }

    /// A request that does not fit the schema; `field` is a dotted path.
    pub fn bad_field(field: &str, msg: impl Into<String>) -> Self {
        let msg = msg.into();
        let text = if field.is_empty() || field == "." {
            msg
        } else {
            format!("{field}: {msg}")
        };
        ApiError::new(StatusCode::BAD_REQUEST, "ferry/bad-request", text)
            .with_details(json!({ "field": field }))
    }

    pub fn not_found(msg: impl Into<String>) -> Self {
        ApiError::new(StatusCode::NOT_FOUND, "ferry/not-found", msg)
    }

    pub fn unauthenticated(msg: impl Into<String>) -> Self {
        ApiError::new(StatusCode::UNAUTHORIZED, "ferry/unauthenticated", msg)
    }

    pub fn forbidden(msg: impl Into<String>) -> Self {
        ApiError::new(StatusCode::FORBIDDEN, "ferry/forbidden", msg)
    }

    pub fn not_implemented(msg: impl Into<String>) -> Self {
        ApiError::new(StatusCode::NOT_IMPLEMENTED, "ferry/not-implemented", msg)
    }

    /// An unexpected failure: `detail` is logged, the client sees a generic message.
    pub fn internal(detail: impl std::fmt::Display) -> Self {
        tracing::error!("internal error: {detail}");
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "ferry/server-error",
            "the server could not complete the request; see its log",
        )
    }
}

impl From<crate::store::StoreError> for ApiError {
    fn from(e: crate::store::StoreError) -> Self {
        ApiError::internal(e)
    }
}

/// The body of every error answer.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// What went wrong, for programs: `ferry/...` or Bolt's kinds.
    #[schema(value_type = String)]
    pub kind: &'static str,
    /// What went wrong, for people. Never a secret or a server path.
    pub msg: String,
    /// More about it: `field` names the part of the request at fault.
    #[schema(value_type = Object)]
    pub details: Value,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            kind: self.kind,
            msg: self.msg,
            details: self.details,
        };
        (self.status, Json(body)).into_response()
    }
}

/// The answer to a known route with the wrong method.
pub async fn wrong_method() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "ferry/method-not-allowed",
        "this endpoint does not take that method (see /openapi.json)",
    )
}
