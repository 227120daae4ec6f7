//! The Puppet CA's bootstrap endpoints, as Puppet Server's CA serves them
//! to agents (`/puppet-ca/v1`): the CA certificate
//! (`certificate/ca`), the CRL (`certificate_revocation_list/ca`, 304
//! when unchanged since `If-Modified-Since`), submitting a CSR (`PUT
//! certificate_request/:certname`, PEM body of at most
//! [`MAX_CSR_BYTES`]), a pending CSR (`GET certificate_request/:certname`)
//! and a signed certificate (`certificate/:certname`, 404 until signed).
//! They need no client certificate (an agent has none yet: `http::auth`
//! lets them through); what they change is the CSR queue only, and
//! signing is the operator's (`ferry ca sign`, `ca_admin`) unless
//! autosign approves the request. Answers are PEM text; errors are ferry's JSON with
//! Puppet's `message` (`puppet::AgentError`), a refused CSR a 400 naming
//! why. The CA's files are read and written off the async threads.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::server::AppState;
use crate::server::api::puppet::AgentError;
use crate::server::ca::{Ca, CaError, Submitted};
use crate::server::http::body::RawBody;
use crate::server::http::errors::ApiError;

/// Largest CSR body taken (an RSA 16384-bit request is under 6 KiB).
pub const MAX_CSR_BYTES: usize = 64 * 1024;

fn pem(bytes: Vec<u8>) -> Response {
    ([(header::CONTENT_TYPE, "text/plain")], bytes).into_response()
}

/// The CA error as the agent sees it: the request's fault is a 400 or
/// 404 saying why; the CA's own trouble a 500 (the detail is logged).
pub(crate) fn ca_error(e: CaError) -> AgentError {
    AgentError(match e {
        CaError::BadName(_) => ApiError::bad_field("certname", e.to_string()),
        CaError::Csr(_) | CaError::AlreadySigned(_) | CaError::AlreadyRequested(_) => {
            ApiError::new(StatusCode::BAD_REQUEST, "ferry/bad-csr", e.to_string())
        }
        CaError::NoRequest(_) | CaError::NoCertificate(_) => ApiError::not_found(e.to_string()),
        CaError::TooManyRequests(_) => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "ferry/too-many-requests",
            e.to_string(),
        ),
        e => ApiError::internal(e),
    })
}

/// The CA, or a 404 on a server that runs none.
pub(crate) fn ca(state: &AppState) -> Result<Arc<Ca>, AgentError> {
    state.ca.clone().ok_or_else(|| {
        AgentError(ApiError::not_found(
            "this server runs no CA (set `ca` in its config)",
        ))
    })
}

/// Runs CA file work on the blocking pool.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, CaError> + Send + 'static,
) -> Result<T, AgentError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| AgentError(ApiError::internal(e)))?
        .map_err(ca_error)
}

/// The CA certificate (`ca`) or a node's signed certificate, PEM.
#[utoipa::path(get, path = "/puppet-ca/v1/certificate/{certname}",
    params(("certname" = String, Path, description = "`ca` for the CA's own")),
    responses((status = 200, description = "PEM", content_type = "text/plain", body = String)))]
pub async fn certificate(
    State(state): State<Arc<AppState>>,
    Path(certname): Path<String>,
) -> Result<Response, AgentError> {
    let ca = ca(&state)?;
    let found = blocking(move || {
        if certname == "ca" {
            ca.ca_certificate()
        } else {
            ca.certificate(&certname)?
                .ok_or(CaError::NoCertificate(certname))
        }
    })
    .await?;
    Ok(pem(found))
}

/// The CA's CRL, PEM; 304 when it has not changed since
/// `If-Modified-Since`.
#[utoipa::path(get, path = "/puppet-ca/v1/certificate_revocation_list/{name}",
    params(("name" = String, Path, description = "always `ca`")),
    responses((status = 200, description = "PEM", content_type = "text/plain", body = String),
        (status = 304, description = "Not modified since If-Modified-Since")))]
pub async fn crl(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Result<Response, AgentError> {
    let ca = ca(&state)?;
    if name != "ca" {
        return Err(AgentError(ApiError::not_found(format!(
            "Could not find certificate_revocation_list {}",
            name.escape_default()
        ))));
    }
    let (bytes, modified) = blocking(move || Ok((ca.crl()?, ca.crl_modified()))).await?;
    let modified = modified.map(chrono::DateTime::<chrono::Utc>::from);
    let since = headers
        .get(header::IF_MODIFIED_SINCE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| chrono::DateTime::parse_from_rfc2822(v).ok());
    if let (Some(m), Some(since)) = (modified, since)
        && m.timestamp() <= since.timestamp()
    {
        return Ok(StatusCode::NOT_MODIFIED.into_response());
    }
    let mut response = pem(bytes);
    if let Some(m) = modified
        && let Ok(v) = m
            .format("%a, %d %b %Y %H:%M:%S GMT")
            .to_string()
            .parse::<header::HeaderValue>()
    {
        response.headers_mut().insert(header::LAST_MODIFIED, v);
    }
    Ok(response)
}

/// Submits a CSR (PEM) for `certname`: kept until `ferry ca sign`, or
/// signed at once when autosign approves it and it asks for no
/// alternative names (one that does waits for the operator). A CSR whose
/// CN is not `certname`, that does not parse or verify, asks for
/// extensions the CA does not sign, or comes for a name that already has
/// a certificate is a 400 saying why.
#[utoipa::path(put, path = "/puppet-ca/v1/certificate_request/{certname}",
    params(("certname" = String, Path)),
    request_body(content = String, content_type = "text/plain"),
    responses((status = 200, description = "Taken (pending or signed)", content_type = "text/plain", body = String)))]
pub async fn submit(
    State(state): State<Arc<AppState>>,
    Path(certname): Path<String>,
    body: Result<RawBody, ApiError>,
) -> Result<Response, AgentError> {
    let RawBody(bytes) = body.map_err(|e| {
        if e.status == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "ferry/request-too-large",
                format!("a certificate request is at most {MAX_CSR_BYTES} bytes"),
            )
        } else {
            e
        }
    })?;
    let ca = ca(&state)?;
    let autosign = state
        .config
        .ca
        .as_ref()
        .map(|c| c.autosign.clone())
        .unwrap_or_default();
    let name = certname.clone();
    let outcome = blocking(move || ca.submit(&name, &bytes, &autosign)).await;
    match &outcome {
        Ok(Submitted::Pending) => {
            tracing::info!(certname = %certname.escape_default(), "certificate request pending: `ferry ca sign` signs it");
        }
        Ok(Submitted::Signed) => {
            tracing::info!(certname = %certname.escape_default(), "certificate request autosigned");
        }
        Ok(Submitted::HeldForAltNames) => {
            tracing::warn!(certname = %certname.escape_default(), "certificate request asks for subject alternative names: not autosigned; `ferry ca sign --allow-dns-alt-names` signs it");
        }
        Err(e) => {
            tracing::info!(certname = %certname.escape_default(), "certificate request refused: {}", e.0.msg);
        }
    }
    outcome?;
    Ok(pem(Vec::new()))
}

/// A pending CSR, PEM.
#[utoipa::path(get, path = "/puppet-ca/v1/certificate_request/{certname}",
    params(("certname" = String, Path)),
    responses((status = 200, description = "PEM", content_type = "text/plain", body = String)))]
pub async fn request(
    State(state): State<Arc<AppState>>,
    Path(certname): Path<String>,
) -> Result<Response, AgentError> {
    let ca = ca(&state)?;
    let found =
        blocking(move || ca.request(&certname)?.ok_or(CaError::NoRequest(certname))).await?;
    Ok(pem(found))
}
