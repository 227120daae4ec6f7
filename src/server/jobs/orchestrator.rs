//! Orchestrator-style jobs over the server's inventory: start a command on
//! a scope of nodes (202 with the job's id and name), list and read jobs,
//! their nodes and events, and stop a running job. Job and node states:
//! new, ready, running, stopping, stopped, finished, failed.

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::Json;
use axum::extract::{Extension, Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use utoipa::ToSchema;

use crate::inventory::{Inventory, Target};
use crate::run::{Action, RunOptions};
use crate::server::AppState;
use crate::server::http::auth::Identity;
use crate::server::http::body::{JsonBody, typed};
use crate::server::http::errors::ApiError;
use crate::server::http::limits;
use crate::server::indirector::{FactsSearch, IndirectorError};
use crate::server::runner::{self, JobSpec};
use crate::server::scrub::Scrub;
use crate::store::{EventKind, EventRecord, JobRecord, JobState, NodeState};

/// Which inventory targets a job runs on: one of `nodes` (target names or
/// aliases), `node_group` (an inventory group) or `query` (PQL over the
/// stored facts with the inventory's own laid over them, or PuppetDB's
/// answer when the facts terminus is `puppetdb`, e.g. `nodes[certname] {
/// facts.os.family = "Debian" }`).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Scope {
    nodes: Option<Vec<String>>,
    node_group: Option<String>,
    #[schema(value_type = Option<String>)]
    query: Option<Value>,
    /// Not supported (400).
    application: Option<Value>,
}

/// A command job over the inventory.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct CommandJob {
    command: String,
    scope: Scope,
    description: Option<String>,
    #[allow(dead_code)]
    environment: Option<String>,
    concurrency: Option<u64>,
}

/// The job to stop.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct StopRequest {
    /// The job's id (name) or URL.
    #[schema(value_type = String)]
    job: Value,
}

/// A job's URL.
pub fn job_url(state: &AppState, id: i64) -> String {
    format!("{}/orchestrator/v1/jobs/{id}", state.base_url())
}

/// A job as the API shows it.
pub fn job_json(state: &AppState, job: &JobRecord) -> Value {
    let url = job_url(state, job.id);
    let duration = job.finished_at.as_ref().and_then(|end| {
        let start = chrono::DateTime::parse_from_rfc3339(&job.created_at).ok()?;
        let end = chrono::DateTime::parse_from_rfc3339(end).ok()?;
        Some((end - start).num_milliseconds() as f64 / 1000.0)
    });
    json!({
        "id": url,
        "name": job.id.to_string(),
        "type": job.kind,
        "state": job.state,
        "command": job.request.get("command"),
        "options": job.request,
        "owner": { "login": job.owner },
        "description": job.description,
        "created_timestamp": job.created_at,
        "finished_timestamp": job.finished_at,
        "duration": duration,
        "node_count": job.node_count,
        "nodes": { "id": format!("{url}/nodes") },
        "events": { "id": format!("{url}/events") },
    })
}

/// The targets a job's scope selects, and what it had to leave out.
pub(super) struct Scoped {
    pub targets: Vec<Target>,
    /// Nodes `scope.query` selected that the inventory does not have
    /// (ferry reaches only inventory targets): skipped.
    pub skipped: Vec<String>,
}

impl Scoped {
    /// The job's description, saying which nodes were skipped.
    pub fn describe(&self, description: String) -> String {
        if self.skipped.is_empty() {
            return description;
        }
        let note = format!(
            "scope.query also selected {} node(s) not in the server's inventory, skipped: {}",
            self.skipped.len(),
            self.skipped.join(", ")
        );
        if description.is_empty() {
            note
        } else {
            format!("{description} ({note})")
        }
    }
}

/// The inventory targets a scope names; every name must be in the
/// inventory. `scope.query` is a search of the facts indirection: PQL
/// over each node's stored facts with the inventory's own facts laid over
/// them (a target with none stored is judged by its inventory facts), or,
/// when the facts terminus is `puppetdb`, PuppetDB's own answer; nodes it
/// selects that the inventory does not have are skipped.
pub(super) async fn scope_targets(
    state: &AppState,
    inventory: &Inventory,
    scope: &Scope,
) -> Result<Scoped, ApiError> {
    if scope.application.is_some() {
        return Err(ApiError::bad_field(
            "scope.application",
            "ferry supports scope.nodes, scope.node_group and scope.query",
        ));
    }
    if let Some(query) = &scope.query {
        if scope.nodes.is_some() || scope.node_group.is_some() {
            return Err(ApiError::bad_field(
                "scope",
                "needs exactly one of nodes, node_group or query",
            ));
        }
        let text = query
            .as_str()
            .ok_or_else(|| ApiError::bad_field("scope.query", "must be a PQL string"))?;
        crate::query::Query::parse(text)
            .map_err(|e| ApiError::bad_field("scope.query", e.to_string()))?;
        let search = FactsSearch {
            query: Value::String(text.to_string()),
            overlay: inventory
                .targets
                .iter()
                .map(|t| (t.name.clone(), t.facts.clone()))
                .collect(),
        };
        let found = state
            .indirector
            .facts
            .search(&search)
            .await
            .map_err(search_error)?;
        let names: BTreeSet<&str> = found.iter().map(|f| f.name.as_str()).collect();
        let matched: Vec<Target> = inventory
            .targets
            .iter()
            .filter(|t| names.contains(t.name.as_str()))
            .cloned()
            .collect();
        let skipped: Vec<String> = names
            .iter()
            .filter(|n| inventory.target(n).is_none())
            .map(|n| n.to_string())
            .collect();
        if !skipped.is_empty() {
            tracing::info!(
                "scope.query selected nodes not in the inventory, skipped: {}",
                skipped.join(", ")
            );
        }
        if matched.is_empty() {
            return Err(ApiError::bad_field(
                "scope.query",
                "matches no target of the server's inventory",
            ));
        }
        check_inventory_options(&matched)?;
        return Ok(Scoped {
            targets: matched,
            skipped,
        });
    }
    let names: Vec<String> = match (&scope.nodes, &scope.node_group) {
        (Some(nodes), None) => {
            if nodes.is_empty() {
                return Err(ApiError::bad_field("scope.nodes", "must not be empty"));
            }
            for (i, n) in nodes.iter().enumerate() {
                let known = inventory.target(n).is_some()
                    || inventory.targets.iter().any(|t| t.aliases.contains(n));
                if !known {
                    return Err(ApiError::bad_field(
                        &format!("scope.nodes[{i}]"),
                        format!("'{n}' is not in the server's inventory"),
                    ));
                }
            }
            nodes.clone()
        }
        (None, Some(group)) => {
            if !inventory.groups.contains_key(group) && group != "all" {
                return Err(ApiError::bad_field(
                    "scope.node_group",
                    format!("'{group}' is not a group of the server's inventory"),
                ));
            }
            vec![group.clone()]
        }
        _ => {
            return Err(ApiError::bad_field(
                "scope",
                "needs exactly one of nodes or node_group",
            ));
        }
    };
    let targets = inventory
        .select(&names.join(","))
        .map_err(|e| ApiError::bad_field("scope", e.to_string()))?;
    if targets.is_empty() {
        return Err(ApiError::bad_field("scope", "selects no targets"));
    }
    check_inventory_options(&targets)?;
    Ok(Scoped {
        targets,
        skipped: Vec::new(),
    })
}

/// The targets' transport options from the server's inventory, checked.
fn check_inventory_options(targets: &[Target]) -> Result<(), ApiError> {
    crate::transport::check_options(targets, &Default::default()).map_err(|e| {
        tracing::error!("inventory options: {e}");
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "ferry/inventory-error",
            "a target in scope has invalid options in the server's inventory (see its log)",
        )
    })
}

/// A facts search that failed, naming `scope.query`.
fn search_error(e: IndirectorError) -> ApiError {
    match e {
        IndirectorError::Query(e) => ApiError::bad_field("scope.query", e.to_string()),
        IndirectorError::PuppetDb(e) => ApiError::new(
            StatusCode::BAD_GATEWAY,
            "ferry/puppetdb-error",
            format!("scope.query: PuppetDB did not answer it: {e}"),
        ),
        e => ApiError::internal(e),
    }
}

/// The server's inventory, which every job scope is taken from.
pub(super) fn job_inventory(state: &AppState) -> Result<&Inventory, ApiError> {
    state.inventory.as_ref().ok_or_else(|| {
        ApiError::bad_field(
            "scope",
            "this server has no inventory (the `inventory` key)",
        )
    })
}

/// How a job runs: its concurrency (the server's unless given) and the
/// seconds each target's work may take, both within their bounds.
pub(super) fn job_options(
    state: &AppState,
    concurrency: Option<u64>,
    timeout: Option<u64>,
) -> Result<RunOptions, ApiError> {
    let concurrency = match concurrency {
        Some(n) => limits::range("concurrency", n, 1, limits::MAX_CONCURRENCY)? as usize,
        None => state.config.concurrency,
    };
    if let Some(t) = timeout {
        limits::range("timeout", t, 1, limits::MAX_TIMEOUT)?;
    }
    Ok(RunOptions {
        concurrency,
        overrides: crate::transport::Overrides {
            command_timeout: timeout.map(std::time::Duration::from_secs),
            ..Default::default()
        },
    })
}

pub(super) fn accepted(state: &AppState, job: &JobRecord) -> Response {
    let body = json!({ "job": { "id": job_url(state, job.id), "name": job.id.to_string() } });
    (StatusCode::ACCEPTED, Json(body)).into_response()
}

/// Starts a command job over the inventory.
#[utoipa::path(post, path = "/orchestrator/v1/command/command", request_body = CommandJob,
    responses((status = 202, description = "{job: {id, name}}", body = Value)))]
pub async fn command(
    State(state): State<Arc<AppState>>,
    Extension(who): Extension<Identity>,
    JsonBody(raw): JsonBody<Value>,
) -> Result<Response, ApiError> {
    let req: CommandJob = typed(raw.clone())?;
    let inventory = job_inventory(&state)?;
    let options = job_options(&state, req.concurrency, None)?;
    let scoped = scope_targets(&state, inventory, &req.scope).await?;
    let description = scoped.describe(req.description.unwrap_or_default());
    let targets = scoped.targets;
    let spec = JobSpec {
        kind: "command".into(),
        owner: who.0,
        description,
        request: crate::server::api::targets::redact(&raw),
        scrub: Scrub::for_server(&state).with_targets(&targets),
        targets,
        action: Action::Command { line: req.command },
        options,
    };
    let (job, _handle) = runner::launch(&state, spec).await?;
    Ok(accepted(&state, &job))
}

/// A task job over the inventory.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct TaskJob {
    /// `module::name` on the server's modulepath.
    task: String,
    #[serde(default)]
    #[schema(value_type = Object)]
    params: serde_json::Map<String, Value>,
    scope: Scope,
    description: Option<String>,
    #[allow(dead_code)]
    environment: Option<String>,
    #[serde(default)]
    noop: bool,
    concurrency: Option<u64>,
    /// Seconds each target's task may run.
    timeout: Option<u64>,
}

/// Starts a task job: a task from the server's modulepath on a scope of
/// the inventory.
#[utoipa::path(post, path = "/orchestrator/v1/command/task", request_body = TaskJob,
    responses((status = 202, description = "{job: {id, name}}", body = Value)))]
pub async fn task(
    State(state): State<Arc<AppState>>,
    Extension(who): Extension<Identity>,
    JsonBody(raw): JsonBody<Value>,
) -> Result<Response, ApiError> {
    let req: TaskJob = typed(raw.clone())?;
    let inventory = job_inventory(&state)?;
    let options = job_options(&state, req.concurrency, req.timeout)?;
    let prepared = crate::server::api::tasks::prepare_off_thread(
        &state.config.modulepath,
        "task",
        &req.task,
        "params",
        req.params,
        req.noop,
    )
    .await?;
    let scoped = scope_targets(&state, inventory, &req.scope).await?;
    let description = scoped.describe(req.description.unwrap_or_default());
    let targets = scoped.targets;
    let request = crate::server::api::tasks::redact_secrets(
        &crate::server::api::targets::redact(&raw),
        &prepared.secrets,
    );
    let spec = JobSpec {
        kind: "task".into(),
        owner: who.0,
        description,
        request,
        scrub: Scrub::for_server(&state).with_targets(&targets),
        targets,
        action: Action::Task(Arc::new(prepared)),
        options,
    };
    let (job, _handle) = runner::launch(&state, spec).await?;
    Ok(accepted(&state, &job))
}

fn job_id(field: &str, text: &str) -> Result<i64, ApiError> {
    let last = text
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(text);
    last.parse()
        .map_err(|_| ApiError::bad_field(field, "must be a job id or job URL"))
}

pub(super) async fn load(state: &AppState, id: i64) -> Result<JobRecord, ApiError> {
    state
        .store
        .job(id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no job {id}")))
}

/// Stops a running job.
#[utoipa::path(post, path = "/orchestrator/v1/command/stop", request_body = StopRequest,
    responses((status = 200, description = "{job: {id, name, state}}", body = Value)))]
pub async fn stop(
    State(state): State<Arc<AppState>>,
    JsonBody(raw): JsonBody<Value>,
) -> Result<Json<Value>, ApiError> {
    let req: StopRequest = typed(raw)?;
    let id = match &req.job {
        Value::String(s) => job_id("job", s)?,
        Value::Number(n) => n
            .as_i64()
            .ok_or_else(|| ApiError::bad_field("job", "must be a job id"))?,
        _ => return Err(ApiError::bad_field("job", "must be a job id or job URL")),
    };
    let job = load(&state, id).await?;
    if job.is_done() {
        return Ok(stopped(&state, id, job.state));
    }
    // The runner takes the stop while it lives; when it is gone (it died,
    // or a server before this one left the job), the job is ended here.
    let alive = |state: &AppState| state.stops().get(&id).is_some_and(|tx| !tx.is_closed());
    if alive(&state) {
        state.store.set_job_state(id, JobState::Stopping).await?;
        let heard = state
            .stops()
            .get(&id)
            .is_some_and(|tx| tx.send(true).is_ok());
        if heard {
            return Ok(stopped(&state, id, JobState::Stopping));
        }
    }
    let next = state.store.next_event_id(id).await?;
    let event = EventRecord::new(
        next,
        EventKind::JobFinished,
        None,
        "The job was stopped (its runner was no longer running)",
        json!({ "state": "stopped", "reason": "runner-gone" }),
    );
    runner::end(&state, id, JobState::Stopped, NodeState::Stopped, event).await;
    let now = load(&state, id).await?;
    Ok(stopped(&state, id, now.state))
}

fn stopped(state: &AppState, id: i64, job_state: JobState) -> Json<Value> {
    Json(json!({
        "job": { "id": job_url(state, id), "name": id.to_string(), "state": job_state }
    }))
}

/// Jobs, newest first.
#[utoipa::path(get, path = "/orchestrator/v1/jobs",
    params(("limit" = Option<i64>, Query, description = "1 to 1000, default 100"),
        ("offset" = Option<i64>, Query, description = "0 to 2^53 - 1")),
    responses((status = 200, description = "{items, pagination: {limit, offset, total}}", body = Value)))]
pub async fn list(
    State(state): State<Arc<AppState>>,
    RawQuery(query): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let (limit, offset) = limits::page(&query)?;
    let (jobs, total) = state.store.jobs(None, limit, offset).await?;
    let items: Vec<Value> = jobs.iter().map(|j| job_json(&state, j)).collect();
    Ok(Json(json!({
        "items": items,
        "pagination": { "limit": limit, "offset": offset, "total": total },
    })))
}

pub(super) fn path_id(id: &str) -> Result<i64, ApiError> {
    id.parse()
        .map_err(|_| ApiError::not_found(format!("no job '{id}'")))
}

/// One job.
#[utoipa::path(get, path = "/orchestrator/v1/jobs/{id}", params(("id" = i64, Path, description = "The job's id (its name)")),
    responses((status = 200, description = "The job", body = Value)))]
pub async fn show(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let job = load(&state, path_id(&id)?).await?;
    Ok(Json(job_json(&state, &job)))
}

/// A job's nodes with their states and results.
#[utoipa::path(get, path = "/orchestrator/v1/jobs/{id}/nodes", params(("id" = i64, Path, description = "The job's id (its name)")),
    responses((status = 200, description = "{items: [{name, state, start_timestamp, finish_timestamp, result, details}]}", body = Value)))]
pub async fn nodes(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let id = path_id(&id)?;
    load(&state, id).await?;
    let nodes = state.store.nodes(id).await?;
    let items: Vec<Value> = nodes.iter().map(|n| n.to_json()).collect();
    Ok(Json(json!({ "items": items })))
}

/// A job's events from `start`.
#[utoipa::path(get, path = "/orchestrator/v1/jobs/{id}/events",
    params(("id" = i64, Path, description = "The job's id (its name)"), ("start" = Option<i64>, Query, description = "The first event's id (0 and 1 both mean the first)")),
    responses((status = 200, description = "{items: [{id, type, timestamp, details, message}], next-events: {id, event}}", body = Value)))]
pub async fn events(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let id = path_id(&id)?;
    load(&state, id).await?;
    let from = limits::query_number(&query, "start", 0, limits::MAX_POSITION)?
        .unwrap_or(1)
        .max(1);
    let events = state.store.events(id, from).await?;
    let next = events.last().map(|e| e.id + 1).unwrap_or(from);
    let items: Vec<Value> = events.iter().map(|e| e.to_json()).collect();
    Ok(Json(json!({
        "items": items,
        "next-events": { "id": format!("{}/events?start={next}", job_url(&state, id)), "event": next.to_string() },
    })))
}
