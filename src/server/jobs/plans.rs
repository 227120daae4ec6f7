//! Plans as orchestrator jobs, as PE's orchestrator runs them:
//! `POST /orchestrator/v1/command/plan_run` `{plan_name, params,
//! environment, description}` starts a YAML or Puppet-language plan found
//! on the environment's modulepath (the environment's `modules/`, then the
//! server's `modulepath`; an environment that is not on the
//! `environmentpath` is a 400 unless it is the default one) and answers
//! 202 `{name, id}`. The plan runs on the server's executor through
//! [`runner::start_with`]: its events (`plan_started`, a `*_start` event
//! per step, the targets' `node_*` events, `out_message`, then
//! `plan_finished` or `plan_failed` with the plan's value or Bolt's error
//! object, and `job_finished` last) are stored and streamed like any job's.
//! `GET /orchestrator/v1/plan_jobs[/{id}[/events]]` show plan jobs in PE's
//! shapes (state `pending`, `running`, `success` or `failure`; the plan's
//! `result`). A YAML plan's parameters are checked before the job starts
//! (400 naming `params`); a Puppet-language plan checks its own as it
//! starts, and a mismatch fails the job with Bolt's error.

use crate::lang::modulepath::Modulepath;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::{Extension, Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use utoipa::ToSchema;

use crate::inventory::Inventory;
use crate::plan::puppet::{FactsSource, FactsUnreadable};
use crate::plan::run::{Context, Reporter};
use crate::plan::{Located, Plan, PlanError};
use crate::query::NodeFacts;
use crate::server::AppState;
use crate::server::environments::{self, EnvironmentError};
use crate::server::http::auth::Identity;
use crate::server::http::body::{JsonBody, typed};
use crate::server::http::errors::ApiError;
use crate::server::http::limits;
use crate::server::indirector::models::Facts;
use crate::server::jobs::orchestrator::job_options;
use crate::server::runner::{self, Done, Recorder};
use crate::server::scrub::Scrub;
use crate::store::{EventKind, EventRecord, JobRecord, JobState};

/// The job kind plan jobs are stored with.
pub const KIND: &str = "plan";

/// A plan job.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct PlanRun {
    /// `module::name` (`module` for `module::init`) on the environment's
    /// modulepath: a `.yaml` or `.pp` plan.
    plan_name: String,
    #[serde(default)]
    #[schema(value_type = Object)]
    params: Map<String, Value>,
    /// Where the plan is loaded from; `production` when absent or empty.
    environment: Option<String>,
    description: Option<String>,
}

/// A plan ready to run: which kind, with what.
enum Ready {
    Yaml(Box<Plan>, Map<String, Value>),
    Puppet(Map<String, Value>),
}

/// The modulepath of the request's environment: its `modules/` first,
/// then the server's. An environment not on the environmentpath is an
/// error when the request named it (anything but the default).
async fn plan_modulepath(
    state: &Arc<AppState>,
    environment: Option<&str>,
) -> Result<Modulepath, ApiError> {
    let named = environment.unwrap_or_default();
    let default = &state.config.default_environment;
    let name = environments::requested(named, false, default)
        .map_err(|e| ApiError::bad_field("environment", e.to_string()))?;
    match environments::find(state, &name).await {
        Ok(env) => Ok(env.env.modulepath.clone().into()),
        Err(e) if e.is_not_found() && (named.is_empty() || named == default) => {
            Ok(state.config.modulepath.clone().into())
        }
        Err(EnvironmentError::Internal(e)) => Err(ApiError::internal(e)),
        Err(e) => Err(ApiError::bad_field("environment", e.to_string())),
    }
}

/// What a stored request shows instead of a Sensitive parameter's value.
const REDACTED: &str = "Sensitive [value redacted]";

/// The parameters plan `name` declares `Sensitive[...]`.
fn sensitive_params(ready: &Ready, name: &str, modulepath: &Modulepath) -> Vec<String> {
    match ready {
        Ready::Yaml(plan, _) => plan
            .parameters
            .iter()
            .filter(|(_, p)| p.ty.as_deref().is_some_and(|t| t.starts_with("Sensitive")))
            .map(|(n, _)| n.clone())
            .collect(),
        // A plan that cannot be read cannot say: none of its values is kept.
        Ready::Puppet(params) => match crate::plan::puppet::show(name, modulepath) {
            Ok(info) => info
                .parameters
                .into_iter()
                .filter(|(_, p)| p.sensitive)
                .map(|(n, _)| n)
                .collect(),
            Err(_) => params.keys().cloned().collect(),
        },
    }
}

/// Finds and prepares the plan (file-system work: off the async threads).
fn prepare(
    name: &str,
    params: Map<String, Value>,
    modulepath: &Modulepath,
    scrub: &Scrub,
) -> Result<Ready, ApiError> {
    match crate::plan::locate(name, modulepath) {
        Ok(Located::Yaml(path)) => {
            let plan = crate::plan::load(&path, name).map_err(|e| {
                tracing::error!("plan {name}: {e}");
                ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "bolt/invalid-plan",
                    scrub.text(&format!("plan {name} cannot be read: {e}")),
                )
                .with_details(json!({ "field": "plan_name" }))
            })?;
            let params = crate::plan::run::check_params(&plan, params)
                .map_err(|e| ApiError::bad_field("params", e.to_string()))?;
            Ok(Ready::Yaml(Box::new(plan), params))
        }
        Ok(Located::Puppet(_)) => Ok(Ready::Puppet(params)),
        Err(PlanError::NotFound(_)) => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "bolt/unknown-plan",
            format!("plan_name: there is no plan '{name}' on the environment's modulepath"),
        )
        .with_details(json!({ "field": "plan_name" }))),
        Err(e) => Err(ApiError::bad_field("plan_name", e.to_string())),
    }
}

/// A YAML plan's reporter: its messages become `out_message` events (the
/// steps are recorded from the executor's events).
struct JobReport(Recorder);

impl Reporter for JobReport {
    fn plan_started(&self, _: &str) {}
    fn plan_finished(&self, _: &str, _: Duration) {}
    fn step_started(&self, _: &str, _: &[String]) {}
    fn step_finished(&self, _: &str, _: usize, _: Duration) {}
    fn message(&self, text: &str) {
        self.0
            .record(EventKind::OutMessage, text, json!({ "message": text }));
    }
    fn verbose(&self, _: &str) {}
}

/// The facts the server's store keeps (what agents and deploy runs sent
/// through the `store` facts terminus), read when a plan first queries
/// them from its evaluation thread.
fn stored_facts(state: &Arc<AppState>) -> FactsSource {
    let store = Arc::clone(&state.store);
    let handle = tokio::runtime::Handle::current();
    Arc::new(move || {
        let records = handle
            .block_on(store.all_facts())
            .map_err(|e| FactsUnreadable(e.to_string()))?;
        Ok(records
            .into_iter()
            .filter_map(|r| {
                let facts = Facts::from_json(&r.facts, Some(r.environment))?;
                Some(NodeFacts {
                    certname: r.certname,
                    environment: facts.environment,
                    facts: facts.values,
                })
            })
            .collect())
    })
}

/// A stopped YAML plan's error (a Puppet-language plan says where it
/// stopped itself).
fn stopped_json() -> Value {
    json!({ "kind": "ferry/plan-stopped", "msg": "The plan was stopped", "details": {} })
}

/// Server paths taken out of a plan's value.
fn scrub_value(scrub: &Scrub, value: Value) -> Value {
    let text = value.to_string();
    let clean = scrub.text(&text);
    if clean == text {
        return value;
    }
    serde_json::from_str(&clean).unwrap_or(value)
}

/// Starts a plan job: a plan from the environment's modulepath, run on
/// the server's executor over its inventory.
#[utoipa::path(post, path = "/orchestrator/v1/command/plan_run", request_body = PlanRun,
    responses((status = 202, description = "{name, id}: the plan job's id and URL", body = Value)))]
pub async fn plan_run(
    State(state): State<Arc<AppState>>,
    Extension(who): Extension<Identity>,
    JsonBody(raw): JsonBody<Value>,
) -> Result<Response, ApiError> {
    let req: PlanRun = typed(raw.clone())?;
    let name = req.plan_name.trim_start_matches("::").to_string();
    if name.is_empty() {
        return Err(ApiError::bad_field("plan_name", "must name a plan"));
    }
    let modulepath = plan_modulepath(&state, req.environment.as_deref()).await?;
    let scrub = Scrub::for_server(&state);
    let inventory_path = state.config.inventory.clone();
    let (ready, inventory, secret) = {
        let (name, mp, params, scrub) =
            (name.clone(), modulepath.clone(), req.params, scrub.clone());
        crate::server::files::blocking(move || {
            let ready = prepare(&name, params, &mp, &scrub)?;
            let secret = sensitive_params(&ready, &name, &mp);
            let inventory = match &inventory_path {
                Some(p) => crate::server::inventory::load(p).map_err(ApiError::internal)?,
                None => Inventory::empty(),
            };
            Ok((ready, inventory, secret))
        })
        .await?
    };
    let options = job_options(&state, None, None)?;
    let environment = req
        .environment
        .filter(|e| !e.is_empty())
        .unwrap_or_else(|| state.config.default_environment.clone());
    let mut request = crate::server::api::targets::redact(&raw);
    if let Some(map) = request.as_object_mut() {
        map.insert("environment".into(), json!(environment));
        // A parameter the plan declares Sensitive is never stored.
        if let Some(Value::Object(params)) = map.get_mut("params") {
            for name in &secret {
                if let Some(v) = params.get_mut(name) {
                    *v = json!(REDACTED);
                }
            }
        }
    }
    let job = state
        .store
        .create_job(
            KIND,
            &who.0,
            &req.description.unwrap_or_default(),
            &request,
            &[],
        )
        .await?;
    let downloads = state
        .config
        .cache_dir
        .join("plan-downloads")
        .join(job.id.to_string());
    let stored_facts = stored_facts(&state);
    let work = move |rec: Recorder| async move {
        rec.record(
            EventKind::PlanStarted,
            &format!("Started plan {name}"),
            json!({ "plan_name": name, "environment": environment }),
        );
        let (ok, value) = match ready {
            Ready::Yaml(plan, params) => {
                let sink_rec = rec.clone();
                let sink = move || sink_rec.sink(true);
                let report = JobReport(rec.clone());
                let ctx = Context {
                    inventory: &inventory,
                    modulepath,
                    options,
                    sink: &sink,
                    report: &report,
                    downloads,
                    stored_facts: Some(stored_facts),
                };
                match rec
                    .stop()
                    .or(crate::plan::run::run(&plan, params, &ctx))
                    .await
                {
                    Some(Ok(v)) => (true, v.to_json()),
                    Some(Err(f)) => (false, f.to_json()),
                    None => (false, stopped_json()),
                }
            }
            Ready::Puppet(params) => {
                // The evaluation thread may outlive a stopped job: it
                // records only while the job's work lives.
                let (sink_rec, msg_rec) = (rec.weak(), rec.weak());
                let ctx = crate::plan::puppet::Context {
                    inventory,
                    modulepath,
                    options,
                    sink: Arc::new(move || sink_rec.sink(true)),
                    message: Arc::new(move |m: &str| {
                        msg_rec.record(EventKind::OutMessage, m, json!({ "message": m }));
                    }),
                    downloads,
                    stop: rec.stop().clone(),
                    stored_facts: Some(stored_facts),
                };
                let outcome = crate::plan::puppet::run(&name, params, ctx).await;
                (outcome.ok, outcome.value)
            }
        };
        let value = scrub_value(&scrub, value);
        if ok {
            rec.record(
                EventKind::PlanFinished,
                &format!("Finished plan {name}"),
                json!({ "plan_name": name, "result": value }),
            );
        } else {
            let msg = value["msg"]
                .as_str()
                .unwrap_or("the plan failed")
                .to_string();
            rec.record(
                EventKind::PlanFailed,
                &format!("Plan {name} failed: {msg}"),
                json!({ "plan_name": name, "result": value }),
            );
        }
        Done::Plan { ok }
    };
    runner::start_with(&state, job.id, Scrub::for_server(&state), work);
    let body = json!({ "name": job.id.to_string(), "id": plan_job_url(&state, job.id) });
    Ok((StatusCode::ACCEPTED, Json(body)).into_response())
}

/// A plan job's URL.
fn plan_job_url(state: &AppState, id: i64) -> String {
    format!("{}/orchestrator/v1/plan_jobs/{id}", state.base_url())
}

/// PE's plan job states.
fn pe_state(state: JobState) -> &'static str {
    match state {
        JobState::New | JobState::Ready => "pending",
        JobState::Running | JobState::Stopping => "running",
        JobState::Finished => "success",
        JobState::Failed | JobState::Stopped => "failure",
    }
}

/// The plan's value (or error) from its `plan_finished` or `plan_failed`
/// event; null while it runs.
async fn result(state: &AppState, id: i64) -> Result<Value, ApiError> {
    let events = state.store.events(id, 1).await?;
    Ok(events
        .iter()
        .rev()
        .find(|e| matches!(e.kind, EventKind::PlanFinished | EventKind::PlanFailed))
        .map(|e| e.details["result"].clone())
        .unwrap_or(Value::Null))
}

/// A plan job as PE shows it.
async fn plan_job_json(state: &AppState, job: &JobRecord) -> Result<Value, ApiError> {
    let url = plan_job_url(state, job.id);
    let result = result(state, job.id).await?;
    Ok(json!({
        "id": url,
        "name": job.id.to_string(),
        "state": pe_state(job.state),
        "options": {
            "description": job.description,
            "plan_name": job.request.get("plan_name"),
            "parameters": job.request.get("params").cloned().unwrap_or_else(|| json!({})),
            "environment": job.request.get("environment"),
        },
        "result": result,
        "owner": { "login": job.owner },
        "created_timestamp": job.created_at,
        "finished_timestamp": job.finished_at,
        "events": { "id": format!("{url}/events") },
    }))
}

/// A plan job by the id in the path: 404 for anything else.
async fn load(state: &AppState, id: &str) -> Result<JobRecord, ApiError> {
    let id: i64 = id
        .parse()
        .map_err(|_| ApiError::not_found(format!("no plan job '{id}'")))?;
    match state.store.job(id).await? {
        Some(job) if job.kind == KIND => Ok(job),
        _ => Err(ApiError::not_found(format!("no plan job {id}"))),
    }
}

/// Plan jobs, newest first.
#[utoipa::path(get, path = "/orchestrator/v1/plan_jobs",
    params(("limit" = Option<i64>, Query, description = "1 to 1000, default 100"),
        ("offset" = Option<i64>, Query, description = "0 to 2^53 - 1")),
    responses((status = 200, description = "{items, pagination: {limit, offset, total}}", body = Value)))]
pub async fn list(
    State(state): State<Arc<AppState>>,
    RawQuery(query): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let (limit, offset) = limits::page(&query)?;
    let (jobs, total) = state.store.jobs(Some(KIND), limit, offset).await?;
    let mut items = Vec::with_capacity(jobs.len());
    for j in &jobs {
        items.push(plan_job_json(&state, j).await?);
    }
    Ok(Json(json!({
        "items": items,
        "pagination": { "limit": limit, "offset": offset, "total": total },
    })))
}

/// One plan job.
#[utoipa::path(get, path = "/orchestrator/v1/plan_jobs/{id}", params(("id" = i64, Path, description = "The plan job's id (its name)")),
    responses((status = 200, description = "The plan job", body = Value)))]
pub async fn show(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let job = load(&state, &id).await?;
    Ok(Json(plan_job_json(&state, &job).await?))
}

/// A plan job's events from `start`.
#[utoipa::path(get, path = "/orchestrator/v1/plan_jobs/{id}/events",
    params(("id" = i64, Path, description = "The plan job's id (its name)"), ("start" = Option<i64>, Query, description = "The first event's id")),
    responses((status = 200, description = "{items: [{id, type, timestamp, details, message}], next-events: {id, event}}", body = Value)))]
pub async fn events(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let job = load(&state, &id).await?;
    let from = limits::query_number(&query, "start", 0, limits::MAX_POSITION)?
        .unwrap_or(1)
        .max(1);
    let events = state.store.events(job.id, from).await?;
    let next = events.last().map(|e| e.id + 1).unwrap_or(from);
    let items: Vec<Value> = events.iter().map(EventRecord::to_json).collect();
    Ok(Json(json!({
        "items": items,
        "next-events": {
            "id": format!("{}/events?start={next}", plan_job_url(&state, job.id)),
            "event": next.to_string(),
        },
    })))
}
