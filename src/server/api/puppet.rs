//! Puppet's agent API, so a stock Puppet agent can use `ferry serve` as
//! its server: `GET /puppet/v3/node/:certname` (the node's environment),
//! `POST /puppet/v3/catalog/:certname` (the agent's form body: `facts`
//! percent-encoded JSON, `facts_format`, `environment`,
//! `transaction_uuid`, ...: always a fresh compile), `GET
//! /puppet/v3/catalog/:certname` (the catalog indirection's cache first), `PUT /puppet/v3/report/:certname` and
//! `PUT /puppet/v3/facts/:certname` (saved through the server's
//! indirections, `server::indirector`, to the termini `routes:` names),
//! `GET /puppet/v3/environments` and `GET /status/v1/simple`. A node is
//! classified by the node terminus (`server::classifier`): its
//! environment is the one classification gives (server-specified), or,
//! for a node its classification leaves free (`agent-specified`, the
//! `plain` terminus), the one it asks for when that exists on the
//! environmentpath, else the server's `default-environment`; the agent
//! switches to it with Puppet's own words. Its catalog is compiled in
//! that environment with its classes and top-scope parameters. Module files for pluginsync and file
//! sources are in `puppet::files`. Errors keep ferry's `{kind, msg,
//! details}` and add Puppet's `message` and `issue_kind`, which the agent
//! prints ("Error 500 on SERVER: ...").

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use crate::catalog::environment::Timeout;
use crate::server::AppState;
use crate::server::ca::MAX_CERTNAME;
use crate::server::classifier::{Classification, NodeError};
use crate::server::environments::{self, EnvironmentError, Loaded};
use crate::server::http::body::RawBody;
use crate::server::http::errors::{ApiError, ErrorBody};
use crate::server::http::limits;
use crate::server::indirector::{Facts, FindOptions, IndirectorError, Report};
use crate::server::node::{self, NodeLookupError};
use crate::server::scrub::Scrub;

/// An error as ferry and the Puppet agent both read it: ferry's `{kind,
/// msg, details}` plus Puppet's `message` and `issue_kind`.
#[derive(Debug)]
pub struct AgentError(pub ApiError);

impl From<ApiError> for AgentError {
    fn from(e: ApiError) -> Self {
        AgentError(e)
    }
}

impl From<crate::store::StoreError> for AgentError {
    fn from(e: crate::store::StoreError) -> Self {
        AgentError(ApiError::from(e))
    }
}

impl From<IndirectorError> for AgentError {
    fn from(e: IndirectorError) -> Self {
        AgentError(ApiError::internal(e))
    }
}

impl IntoResponse for AgentError {
    fn into_response(self) -> Response {
        let e = self.0;
        let issue_kind = match e.status {
            StatusCode::BAD_REQUEST => "BAD_REQUEST",
            StatusCode::NOT_FOUND => "RESOURCE_NOT_FOUND",
            StatusCode::FORBIDDEN => "FORBIDDEN",
            _ => "RUNTIME_ERROR",
        };
        let message = match e.status {
            StatusCode::NOT_FOUND => format!("Not Found: {}", e.msg),
            s if s.is_server_error() => format!("Server Error: {}", e.msg),
            _ => e.msg.clone(),
        };
        let mut body = serde_json::to_value(ErrorBody {
            kind: e.kind,
            msg: e.msg,
            details: e.details,
        })
        .unwrap_or_else(|_| json!({}));
        body["message"] = json!(message);
        body["issue_kind"] = json!(issue_kind);
        (e.status, Json(body)).into_response()
    }
}

/// A certname as Puppet takes it: printable ASCII without `/`, spaces or
/// upper case.
pub fn check_certname(name: &str, field: &str) -> Result<(), ApiError> {
    if crate::server::ca::is_puppet_certname(name) {
        Ok(())
    } else {
        Err(ApiError::bad_field(
            field,
            format!(
                "must be 1 to {MAX_CERTNAME} printable ASCII characters without '/', spaces or upper case"
            ),
        ))
    }
}

/// A request string with a NUL byte is a 400 naming `field`.
pub fn no_nul(field: &str, value: &str) -> Result<(), ApiError> {
    if value.contains('\0') {
        Err(ApiError::bad_field(field, "must not contain a NUL byte"))
    } else {
        Ok(())
    }
}

/// An environment the request names (`field`), checked: a bad name is a
/// 400 naming the field.
fn asked_environment(value: Option<&str>, field: &str) -> Result<Option<String>, ApiError> {
    match value {
        None | Some("") => Ok(None),
        Some(name) => {
            no_nul(field, name)?;
            crate::catalog::environment::check_name(name)
                .map_err(|e| ApiError::bad_field(field, e.to_string()))?;
            Ok(Some(name.to_string()))
        }
    }
}

/// An environment error as the agent should see it.
pub fn environment_error(e: EnvironmentError) -> ApiError {
    match e {
        EnvironmentError::Internal(_) => ApiError::internal(e),
        e if e.is_not_found() => ApiError::not_found(e.to_string()),
        EnvironmentError::Env(crate::catalog::environment::EnvironmentError::BadName(_)) => {
            ApiError::bad_field("environment", e.to_string())
        }
        // A broken environment.conf is the server's problem, not the agent's.
        e => ApiError::internal(e),
    }
}

/// A node terminus failure as the agent sees it.
pub fn node_error(e: NodeError) -> ApiError {
    match e {
        NodeError::Conflict(c) => {
            tracing::warn!("{c}");
            let details = c.details();
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "ferry/classification-conflict",
                c.to_string(),
            )
            .with_details(details)
        }
        e @ NodeError::Exec { .. } => ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "ferry/node-not-found",
            e.to_string(),
        ),
    }
}

/// A classification or negotiation failure as the agent sees it.
fn lookup_error(e: NodeLookupError) -> ApiError {
    match e {
        NodeLookupError::Node(e) => node_error(e),
        e @ NodeLookupError::ClassifiedMissing(_) => ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "ferry/environment-not-found",
            e.to_string(),
        ),
        NodeLookupError::Environment(e) => environment_error(e),
        e @ NodeLookupError::Worker => ApiError::internal(e),
    }
}

/// The node's classification (`server::node::classify`).
async fn classify_node(
    state: &Arc<AppState>,
    certname: &str,
    facts: Map<String, Value>,
) -> Result<Classification, ApiError> {
    node::classify(state, certname, facts)
        .await
        .map_err(lookup_error)
}

/// The environment a classified node runs in (`server::node::negotiate`).
async fn negotiate(
    state: &Arc<AppState>,
    classified: &Classification,
    asked: Option<&str>,
) -> Result<Arc<Loaded>, ApiError> {
    node::negotiate(state, classified, asked)
        .await
        .map_err(lookup_error)
}

fn json_response(value: &Value) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

/// Puppet's node object: the node's name, the environment the server
/// gives it, its classes and parameters.
///
/// The node is classified with its facts as the facts indirection finds
/// them (its cache first). `?environment=E`
/// is the agent's own; it keeps it only when its classification leaves it
/// free (`agent-specified`) and E is on the environmentpath, else it gets
/// the classified environment (or `default-environment`).
#[utoipa::path(get, path = "/puppet/v3/node/{certname}",
    params(("certname" = String, Path), ("environment" = Option<String>, Query)),
    responses((status = 200, description = "{name, environment, parameters}", body = Value)))]
pub async fn node(
    State(state): State<Arc<AppState>>,
    Path(certname): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Response, AgentError> {
    check_certname(&certname, "certname")?;
    let asked = asked_environment(query.get("environment").map(String::as_str), "environment")?;
    let facts = stored_facts(&state, &certname).await?;
    let classified = classify_node(&state, &certname, facts).await?;
    let env = negotiate(&state, &classified, asked.as_deref()).await?;
    let mut parameters = classified.parameters.clone();
    parameters.insert("clientcert".into(), json!(certname));
    Ok(json_response(&json!({
        "name": certname,
        "environment": env.env.name,
        "classes": classified.classes,
        "parameters": parameters,
    })))
}

/// The agent's form body, decoded once.
fn form_fields(bytes: &[u8]) -> HashMap<String, String> {
    form_urlencoded::parse(bytes).into_owned().collect()
}

/// The facts of a catalog request: `facts` is percent-encoded JSON
/// (encoded twice by the agent: once more than the form itself), `{name,
/// values, ...}`; `values` are the facts.
fn request_facts(
    fields: &HashMap<String, String>,
) -> Result<(Value, Map<String, Value>), ApiError> {
    match fields.get("facts_format").map(String::as_str) {
        None | Some("application/json" | "json" | "pson" | "text/pson") => {}
        Some(_) => {
            return Err(ApiError::bad_field(
                "facts_format",
                "must be application/json (or pson)",
            ));
        }
    }
    let Some(raw) = fields.get("facts") else {
        return Err(ApiError::bad_field("facts", "is required"));
    };
    let doc: Value = match serde_json::from_str(raw) {
        Ok(v) => v,
        Err(_) => {
            let decoded = percent_encoding::percent_decode_str(raw)
                .decode_utf8()
                .map_err(|_| ApiError::bad_field("facts", "is not UTF-8 once decoded"))?;
            serde_json::from_str(&decoded).map_err(|e| {
                ApiError::bad_field(
                    "facts",
                    format!(
                        "is not JSON (line {}, column {}): {e}",
                        e.line(),
                        e.column()
                    ),
                )
            })?
        }
    };
    limits::no_nul(&doc)
        .map_err(|_| ApiError::bad_field("facts", "must not contain a NUL byte"))?;
    let values = match doc.get("values") {
        Some(Value::Object(values)) => values.clone(),
        _ => return Err(ApiError::bad_field("facts.values", "must be an object")),
    };
    Ok((doc, values))
}

/// Compiles the node's catalog in its environment.
///
/// The agent's form body: `facts_format`, `facts` (its facts, JSON),
/// `environment`, `transaction_uuid`, `job_uuid`, `static_catalog`,
/// `checksum_type`. The node is classified with these facts; the catalog
/// is compiled in the environment it is given (as `GET
/// /puppet/v3/node`) with its classes and parameters, its facts, `$trusted`
/// (`authenticated: remote`, the certname) and the environment's
/// `config_version` as its version, by the catalog indirection (a fresh
/// compile, kept in its cache when it has one); the facts are saved
/// through the facts indirection.
#[utoipa::path(post, path = "/puppet/v3/catalog/{certname}",
    params(("certname" = String, Path), ("environment" = Option<String>, Query)),
    request_body(content = String, content_type = "application/x-www-form-urlencoded"),
    responses((status = 200, description = "Puppet's catalog JSON", body = Value)))]
pub async fn catalog(
    State(state): State<Arc<AppState>>,
    Path(certname): Path<String>,
    Query(query): Query<HashMap<String, String>>,
    body: Result<RawBody, ApiError>,
) -> Result<Response, AgentError> {
    let RawBody(bytes) = body?;
    check_certname(&certname, "certname")?;
    let fields = form_fields(&bytes);
    let asked = match query.get("environment") {
        Some(e) => asked_environment(Some(e), "environment")?,
        None => asked_environment(fields.get("environment").map(String::as_str), "environment")?,
    };
    if let Some(uuid) = fields.get("transaction_uuid") {
        no_nul("transaction_uuid", uuid)?;
    }
    let given = request_facts(&fields)?;
    let options = FindOptions { ignore_cache: true };
    find_catalog(&state, &certname, asked, Some(given), options).await
}

/// The node's catalog from the catalog indirection, its cache first.
///
/// Puppet's read path (`GET`, Puppet 7's server API): facts may come as
/// the query parameters `facts_format` and `facts` (as in the `POST`
/// body), else they are the node's as the facts indirection finds them.
/// The node is classified and its environment negotiated as for `POST`;
/// with `routes: catalog: {cache: store, ttl: N}` a cached catalog of
/// that environment younger than its `ttl` is returned without a
/// compile, else the catalog is compiled and cached again.
#[utoipa::path(get, path = "/puppet/v3/catalog/{certname}",
    params(("certname" = String, Path), ("environment" = Option<String>, Query),
        ("facts_format" = Option<String>, Query), ("facts" = Option<String>, Query)),
    responses((status = 200, description = "Puppet's catalog JSON", body = Value)))]
pub async fn cached_catalog(
    State(state): State<Arc<AppState>>,
    Path(certname): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Response, AgentError> {
    check_certname(&certname, "certname")?;
    let asked = asked_environment(query.get("environment").map(String::as_str), "environment")?;
    let given = match query.contains_key("facts") {
        true => Some(request_facts(&query)?),
        false => None,
    };
    find_catalog(&state, &certname, asked, given, FindOptions::default()).await
}

/// The node's facts as the facts indirection finds them (its cache
/// first); none when it has none.
async fn stored_facts(
    state: &Arc<AppState>,
    certname: &str,
) -> Result<Map<String, Value>, IndirectorError> {
    Ok(state
        .indirector
        .facts
        .find(&certname.to_string(), FindOptions::default())
        .await?
        .map(|f| f.values)
        .unwrap_or_default())
}

/// Finds the node's catalog through the catalog indirection: classified
/// with the `given` facts (then saved through the facts indirection),
/// else with those the facts indirection has; in the negotiated
/// environment.
async fn find_catalog(
    state: &Arc<AppState>,
    certname: &str,
    asked: Option<String>,
    given: Option<(Value, Map<String, Value>)>,
    options: FindOptions,
) -> Result<Response, AgentError> {
    let facts = match &given {
        Some((_, values)) => values.clone(),
        None => stored_facts(state, certname).await?,
    };
    let classified = classify_node(state, certname, facts.clone()).await?;
    let loaded = negotiate(state, &classified, asked.as_deref()).await?;
    if let Some((facts_doc, _)) = &given {
        let mut kept = Facts::from_json(facts_doc, Some(loaded.env.name.clone()))
            .ok_or_else(|| ApiError::bad_field("facts.values", "must be an object"))?;
        kept.name = certname.to_string();
        state.indirector.facts.save(&kept).await?;
    }
    let request = node::catalog_request(certname, facts, &loaded, &classified, false);
    let found = state.indirector.catalog.find(&request, options).await;
    let scrub = Scrub::for_server(state);
    let catalog = match found {
        Ok(Some(c)) => c.json,
        Ok(None) => {
            return Err(ApiError::not_found(format!("no catalog for {certname}")).into());
        }
        Err(e @ (IndirectorError::Compile(_) | IndirectorError::ConfigVersion(_))) => {
            tracing::error!("{certname}: {e}");
            return Err(ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "ferry/compile-error",
                scrub.text(&e.to_string()),
            )
            .into());
        }
        Err(e) => return Err(e.into()),
    };
    Ok((
        [(header::CONTENT_TYPE, "application/json")],
        catalog.to_string(),
    )
        .into_response())
}

/// Keeps the node's report of a run.
///
/// The body is Puppet's report (JSON, any report format); its `host`
/// must be the certname. It is saved through the report indirection (in
/// the store by default, one per transaction).
#[utoipa::path(put, path = "/puppet/v3/report/{certname}",
    params(("certname" = String, Path)),
    request_body(content = Value, content_type = "application/json"),
    responses((status = 200, description = "[] (no report processors run)", body = Value)))]
pub async fn report(
    State(state): State<Arc<AppState>>,
    Path(certname): Path<String>,
    body: Result<RawBody, ApiError>,
) -> Result<Response, AgentError> {
    let RawBody(bytes) = body?;
    check_certname(&certname, "certname")?;
    let doc: Value = crate::server::http::body::parse(&bytes)?;
    let report =
        Report::from_json(&certname, doc).map_err(|e| ApiError::bad_field(e.field, e.message))?;
    state.indirector.report.save(&report).await?;
    Ok(json_response(&json!([])))
}

/// Keeps the node's facts (as `puppet facts upload` sends them).
///
/// The body is `{name, values, timestamp?, expiration?}`; `name` must be
/// the certname. They are saved through the facts indirection.
#[utoipa::path(put, path = "/puppet/v3/facts/{certname}",
    params(("certname" = String, Path), ("environment" = Option<String>, Query)),
    request_body(content = Value, content_type = "application/json"),
    responses((status = 200, description = "Kept", body = Value)))]
pub async fn facts(
    State(state): State<Arc<AppState>>,
    Path(certname): Path<String>,
    Query(query): Query<HashMap<String, String>>,
    body: Result<RawBody, ApiError>,
) -> Result<Response, AgentError> {
    let RawBody(bytes) = body?;
    check_certname(&certname, "certname")?;
    let asked = asked_environment(query.get("environment").map(String::as_str), "environment")?;
    let doc: Value = crate::server::http::body::parse(&bytes)?;
    if !matches!(doc.get("values"), Some(Value::Object(_))) {
        return Err(ApiError::bad_field("values", "must be an object").into());
    }
    match doc.get("name") {
        Some(Value::String(n)) if *n == certname => {}
        _ => {
            return Err(ApiError::bad_field("name", format!("must be '{certname}'")).into());
        }
    }
    let environment = asked.unwrap_or_else(|| state.config.default_environment.clone());
    let facts = Facts::from_json(&doc, Some(environment))
        .ok_or_else(|| ApiError::bad_field("values", "must be an object"))?;
    state.indirector.facts.save(&facts).await?;
    Ok(json_response(&json!(null)))
}

/// Every environment on the environmentpath with its settings, as
/// Puppet lists them (server paths shown by their neutral names).
#[utoipa::path(get, path = "/puppet/v3/environments",
    responses((status = 200, description = "{search_paths, environments: {NAME: {settings}}}", body = Value)))]
pub async fn list_environments(State(state): State<Arc<AppState>>) -> Result<Response, AgentError> {
    let scrub = Scrub::for_server(&state);
    let names = {
        let state = Arc::clone(&state);
        crate::server::files::blocking(move || Ok(state.environments.names())).await?
    };
    let mut envs = Map::new();
    for name in names {
        let Ok(loaded) = environments::find(&state, &name).await else {
            continue;
        };
        let env = &loaded.env;
        let timeout = match env.timeout.unwrap_or(state.config.environment_timeout) {
            Timeout::Seconds(n) => json!(n),
            Timeout::Unlimited => json!("unlimited"),
        };
        envs.insert(
            name,
            json!({ "settings": {
                "modulepath": env.modulepath.iter().map(|p| scrub.text(&p.display().to_string())).collect::<Vec<_>>(),
                "manifest": scrub.text(&env.manifest.display().to_string()),
                "environment_timeout": timeout,
                "config_version": env.config_version.as_deref().map(|c| scrub.text(c)).unwrap_or_default(),
            }}),
        );
    }
    let search_paths: Vec<String> = state
        .config
        .environmentpath
        .iter()
        .map(|p| scrub.text(&p.display().to_string()))
        .collect();
    Ok(json_response(
        &json!({ "search_paths": search_paths, "environments": envs }),
    ))
}

/// Puppet Server's simple status: `running`.
#[utoipa::path(get, path = "/status/v1/simple",
    responses((status = 200, description = "running", content_type = "text/plain", body = String)))]
pub async fn status() -> Response {
    ([(header::CONTENT_TYPE, "text/plain")], "running").into_response()
}
