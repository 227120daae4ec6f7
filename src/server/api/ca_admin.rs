//! The Puppet CA's administration endpoints, Puppet Server's
//! `certificate_status` API: `GET certificate_status/:certname` (what the
//! CA holds for the name: state, fingerprints, alternative names,
//! authorisation extensions, and for a certificate its serial and
//! validity), `GET certificate_statuses/:any` (all of them, `?state=`
//! `requested`, `signed` or `revoked` to filter), `PUT
//! certificate_status/:certname` with `{"desired_state": "signed" |
//! "revoked"}` (sign a pending request, revoke a certificate; ferry's
//! `allow_dns_alt_names: true` allows a request's alternative names, as
//! `ferry ca sign --allow-dns-alt-names`), and `DELETE` (removes the
//! certificate and request, revoking nothing, as Puppet Server does).
//! They change who may connect, so `http::auth` lets only operators
//! through (an allowlisted certificate, or a token with `ca:admin`); a
//! node's certificate gets a 403. Statuses: 200 with JSON, 204 when a
//! change is made, 400 for a bad body or state, 404 for a name the CA
//! knows nothing of, 409 when the change cannot be made (signing without
//! a request, revoking without a certificate, a request whose
//! alternative names are not allowed).

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::Value;

use super::ca::{blocking, ca, ca_error};
use crate::server::AppState;
use crate::server::api::puppet::AgentError;
use crate::server::ca::{CaError, State as CertState, check_certname};
use crate::server::http::body::JsonBody;
use crate::server::http::errors::ApiError;

/// `PUT certificate_status/:certname`'s body.
#[derive(Deserialize)]
pub struct DesiredState {
    /// `signed` or `revoked`.
    desired_state: String,
    /// Sign even though the request asks for subject alternative names
    /// (ferry's; Puppet Server takes this from `ca.conf`).
    #[serde(default)]
    allow_dns_alt_names: bool,
    /// Puppet Server's certificate lifetime: not supported (refused).
    #[serde(default)]
    cert_ttl: Option<Value>,
}

fn conflict(msg: String) -> AgentError {
    AgentError(ApiError::new(StatusCode::CONFLICT, "ferry/conflict", msg))
}

fn no_such(certname: &str) -> AgentError {
    AgentError(ApiError::not_found(format!(
        "Could not find a certificate or certificate request for {}",
        certname.escape_default()
    )))
}

/// A certname from the path, or a 400 naming it.
fn certname_of(name: &str) -> Result<(), AgentError> {
    check_certname(name).map_err(ca_error)
}

/// What the CA holds for `certname`.
#[utoipa::path(get, path = "/puppet-ca/v1/certificate_status/{certname}",
    params(("certname" = String, Path)),
    responses((status = 200, description = "{name, state, fingerprint, fingerprints, dns_alt_names, subject_alt_names, authorization_extensions, serial_number, not_before, not_after}", body = Value),
        (status = 404, description = "Neither a certificate nor a request")))]
pub async fn status(
    State(state): State<Arc<AppState>>,
    Path(certname): Path<String>,
) -> Result<Response, AgentError> {
    certname_of(&certname)?;
    let ca = ca(&state)?;
    let name = certname.clone();
    match blocking(move || ca.status(&name)).await? {
        Some(entry) => Ok(Json(entry.to_json()).into_response()),
        None => Err(no_such(&certname)),
    }
}

/// Every request and certificate, optionally in one state.
#[utoipa::path(get, path = "/puppet-ca/v1/certificate_statuses/{any}",
    params(("any" = String, Path, description = "required and ignored, as Puppet Server's"),
        ("state" = Option<String>, Query, description = "requested, signed or revoked")),
    responses((status = 200, description = "[certificate status]", body = Value)))]
pub async fn statuses(
    State(state): State<Arc<AppState>>,
    Path(_any): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Response, AgentError> {
    let wanted = match query.get("state") {
        None => None,
        Some(s) => Some(CertState::parse(s).ok_or_else(|| {
            AgentError(ApiError::bad_field(
                "state",
                format!(
                    "'{}' is not a certificate state (requested, signed or revoked)",
                    s.escape_default()
                ),
            ))
        })?),
    };
    let ca = ca(&state)?;
    let entries = blocking(move || ca.list(wanted != Some(CertState::Requested))).await?;
    let list: Vec<Value> = entries
        .iter()
        .filter(|e| wanted.is_none_or(|w| e.state == w))
        .map(|e| e.to_json())
        .collect();
    Ok(Json(Value::Array(list)).into_response())
}

/// Signs `certname`'s request or revokes its certificate.
#[utoipa::path(put, path = "/puppet-ca/v1/certificate_status/{certname}",
    params(("certname" = String, Path)),
    request_body(content = Value, description = "{\"desired_state\": \"signed\" | \"revoked\", \"allow_dns_alt_names\": bool}"),
    responses((status = 204, description = "Done"),
        (status = 404, description = "Neither a certificate nor a request"),
        (status = 409, description = "Cannot be done: why")))]
pub async fn change(
    State(state): State<Arc<AppState>>,
    Path(certname): Path<String>,
    body: Result<JsonBody<DesiredState>, ApiError>,
) -> Result<Response, AgentError> {
    certname_of(&certname)?;
    let JsonBody(desired) = body?;
    if desired.cert_ttl.is_some() {
        return Err(AgentError(ApiError::bad_field(
            "cert_ttl",
            "is not supported: certificates are signed for the CA's lifetime (5 years)",
        )));
    }
    let sign = match desired.desired_state.as_str() {
        "signed" => true,
        "revoked" => false,
        other => {
            return Err(AgentError(ApiError::bad_field(
                "desired_state",
                format!(
                    "State {} invalid; Must specify desired state of 'signed' or 'revoked' for host {certname}.",
                    other.escape_default()
                ),
            )));
        }
    };
    let ca = ca(&state)?;
    let (looking, name) = (Arc::clone(&ca), certname.clone());
    let known = blocking(move || {
        Ok(looking.certificate(&name)?.is_some() || looking.request(&name)?.is_some())
    })
    .await?;
    if !known {
        return Err(no_such(&certname));
    }
    let name = certname.clone();
    let allow = desired.allow_dns_alt_names;
    let done = blocking(move || {
        if sign {
            ca.sign(&name, allow).map(|_| ())
        } else {
            match ca.revoke(&name) {
                Err(CaError::AlreadyRevoked(_)) => Ok(()),
                other => other,
            }
        }
    })
    .await;
    let shown = certname.escape_default();
    match done {
        Ok(()) => {
            tracing::info!(certname = %shown, "certificate {}", if sign { "signed" } else { "revoked" });
            Ok(StatusCode::NO_CONTENT.into_response())
        }
        Err(e) => Err(match (sign, e.0.status) {
            (true, StatusCode::NOT_FOUND) => conflict(format!(
                "Cannot sign certificate for host {shown} without a certificate request"
            )),
            (false, StatusCode::NOT_FOUND) => conflict(format!(
                "Cannot revoke certificate for host {shown} without a signed certificate"
            )),
            (_, StatusCode::BAD_REQUEST) => conflict(e.0.msg),
            _ => e,
        }),
    }
}

/// Removes `certname`'s certificate and request (revoking nothing).
#[utoipa::path(delete, path = "/puppet-ca/v1/certificate_status/{certname}",
    params(("certname" = String, Path)),
    responses((status = 204, description = "Removed"),
        (status = 404, description = "Neither a certificate nor a request")))]
pub async fn delete(
    State(state): State<Arc<AppState>>,
    Path(certname): Path<String>,
) -> Result<Response, AgentError> {
    certname_of(&certname)?;
    let ca = ca(&state)?;
    let name = certname.clone();
    if blocking(move || ca.delete(&name)).await? {
        tracing::info!(certname = %certname.escape_default(), "certificate and request removed");
        Ok(StatusCode::NO_CONTENT.into_response())
    } else {
        Err(no_such(&certname))
    }
}
