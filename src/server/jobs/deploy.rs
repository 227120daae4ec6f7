//! On-demand Puppet runs, as PE's orchestrator starts them: `POST
//! /orchestrator/v1/command/deploy` makes a job (type `deploy`) over a
//! scope of the server's inventory whose nodes each take the path a real
//! agent served by ferry takes ([`Deploy`], the job's
//! `run::actions::apply::CatalogProvider`): facts gathered over SSH and
//! saved through the facts indirection, classification by the node
//! terminus and environment negotiation (`server::node`: the job's
//! `environment` plays the agent's; a switch or a strict-mode refusal is a
//! `node_message` event in Puppet's words), the catalog from the catalog
//! indirection in the negotiated environment, the apply over SSH, and the
//! report saved through the report indirection ([`Indirected`]). A node's
//! stored result holds its Puppet report, and its `node_finished` or
//! `node_failed` event carries that result. `GET
//! /orchestrator/v1/jobs/{id}/report` gives every node's run in PE's shape
//! `{report: [{node, state, timestamp, events, report}]}`, with the
//! report's resource events named as PuppetDB names them.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Extension, Path, State};
use axum::response::Response;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use utoipa::ToSchema;

use super::orchestrator::{
    Scope, accepted, job_inventory, job_options, load, path_id, scope_targets,
};
use crate::apply::ApplyCatalog;
use crate::inventory::Target;
use crate::run::Action;
use crate::run::actions::apply::{
    CatalogProvider, Notice, Observer, ProvideError, ProvidedCatalog, Provision,
};
use crate::server::AppState;
use crate::server::classifier::NodeError;
use crate::server::environments::{self, EnvironmentError};
use crate::server::http::auth::Identity;
use crate::server::http::body::{JsonBody, typed};
use crate::server::http::errors::ApiError;
use crate::server::indirector::{Facts, FindOptions, Indirector, Report};
use crate::server::node::{self, JobEnvironment, NodeLookupError};
use crate::server::runner::{self, JobSpec};
use crate::server::scrub::Scrub;
use crate::store::{JobRecord, NodeRecord};

/// A Puppet run on a scope of the inventory (PE's deploy command).
/// Puppet's `debug`, `trace` and `evaltrace` (booleans) are accepted and
/// not used.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct DeployJob {
    /// An environment on the server's environmentpath; empty means
    /// `production` (refused when `enforce_environment` is true).
    environment: String,
    scope: Scope,
    /// Change nothing; report what would change.
    #[serde(default)]
    noop: bool,
    /// Enforce changes (the default here: ferry has no agent setting to
    /// override); refused together with `noop`.
    #[serde(default)]
    no_noop: bool,
    concurrency: Option<u64>,
    description: Option<String>,
    /// Default true: an empty `environment` is then refused.
    enforce_environment: Option<bool>,
    /// Seconds each node's apply may run.
    timeout: Option<u64>,
}

/// An environment the request cannot have, naming `environment`.
fn environment_error(e: EnvironmentError) -> ApiError {
    match e {
        EnvironmentError::Internal(_) => ApiError::internal(e),
        _ => ApiError::bad_field("environment", e.to_string()),
    }
}

/// Starts a Puppet run on a scope of the inventory.
///
/// Each node gathers its facts, is classified by the server's node
/// terminus, has its environment negotiated (the request's `environment`
/// plays the agent's: a server-specified one switches the node, or fails
/// it with `enforce_environment`), has its catalog compiled by the catalog
/// indirection in that environment with its classes and parameters, and
/// applies it over SSH; its result holds the Puppet report (`GET
/// .../jobs/{id}/report`), its `node_message` events the switch or why it
/// failed.
#[utoipa::path(post, path = "/orchestrator/v1/command/deploy", request_body = DeployJob,
    responses((status = 202, description = "{job: {id, name}}", body = Value)))]
pub async fn deploy(
    State(state): State<Arc<AppState>>,
    Extension(who): Extension<Identity>,
    JsonBody(raw): JsonBody<Value>,
) -> Result<Response, ApiError> {
    let mut body = raw.clone();
    environments::take_debug_flags(Some(&mut body), "")?;
    let req: DeployJob = typed(body)?;
    if req.noop && req.no_noop {
        return Err(ApiError::bad_field(
            "no_noop",
            "cannot be true together with noop",
        ));
    }
    let inventory = job_inventory(&state)?;
    let options = job_options(&state, req.concurrency, req.timeout)?;
    let enforce = req.enforce_environment.unwrap_or(true);
    let name =
        environments::requested(&req.environment, enforce, &state.config.default_environment)
            .map_err(environment_error)?;
    // The job's environment must be one the server has.
    environments::find(&state, &name)
        .await
        .map_err(environment_error)?;
    let provider = Arc::new(Deploy {
        state: Arc::clone(&state),
        environment: name.clone(),
        enforce,
    });
    let mut job =
        tokio::task::spawn_blocking(move || environments::provided_job(provider, req.noop))
            .await
            .map_err(ApiError::internal)?
            .map_err(environment_error)?;
    job.observer = Some(Arc::new(Indirected {
        indirector: Arc::clone(&state.indirector),
    }));
    let scoped = scope_targets(&state, inventory, &req.scope).await?;
    let description = scoped.describe(
        req.description
            .unwrap_or_else(|| format!("Puppet run in {name}")),
    );
    let targets = scoped.targets;
    let spec = JobSpec {
        kind: "deploy".into(),
        owner: who.0,
        description,
        request: crate::server::api::targets::redact(&raw),
        scrub: Scrub::for_server(&state).with_targets(&targets),
        targets,
        action: Action::Apply(Arc::new(job)),
        options,
    };
    let (job, _handle) = runner::launch(&state, spec).await?;
    Ok(accepted(&state, &job))
}

/// Each deploy node's catalog, found as a real agent's is: classified by
/// the node terminus, its environment negotiated with the job's, its
/// facts saved through the facts indirection (in the environment it runs
/// in), its catalog from the catalog indirection.
struct Deploy {
    state: Arc<AppState>,
    /// The job's environment (the agent's requested one).
    environment: String,
    /// Fail a node the server puts in another environment rather than
    /// switch it (PE's `enforce_environment`, Puppet's strict mode).
    enforce: bool,
}

impl std::fmt::Debug for Deploy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deploy")
            .field("environment", &self.environment)
            .field("enforce", &self.enforce)
            .finish_non_exhaustive()
    }
}

fn provide_error(kind: &str, message: String) -> ProvideError {
    ProvideError {
        kind: kind.into(),
        message,
    }
}

/// A classification or environment failure as a node's failure.
fn lookup_failure(e: NodeLookupError) -> ProvideError {
    let kind = match &e {
        NodeLookupError::Node(NodeError::Conflict(_)) => "ferry/classification-conflict",
        NodeLookupError::Node(NodeError::Exec { .. }) => "ferry/node-not-found",
        NodeLookupError::ClassifiedMissing(_) => "ferry/environment-not-found",
        NodeLookupError::Environment(_) | NodeLookupError::Worker => "ferry/environment-error",
    };
    provide_error(kind, e.to_string())
}

impl Deploy {
    /// Saves the node's facts through the facts indirection; a save that
    /// fails is logged (the run goes on).
    async fn keep_facts(&self, certname: &str, facts: &Map<String, Value>, environment: &str) {
        let facts = Facts::new(certname, facts.clone(), Some(environment.to_string()));
        if let Err(e) = self.state.indirector.facts.save(&facts).await {
            tracing::warn!("cannot save the facts of {certname}: {e}");
        }
    }

    /// The node's catalog, with the notices its events show.
    async fn find(
        &self,
        certname: &str,
        facts: Map<String, Value>,
        device: bool,
        notices: &mut Vec<Notice>,
    ) -> Result<ProvidedCatalog, ProvideError> {
        let classified = match node::classify(&self.state, certname, facts.clone()).await {
            Ok(c) => c,
            Err(e) => {
                self.keep_facts(certname, &facts, &self.environment).await;
                let failure = lookup_failure(e);
                notices.push(Notice {
                    level: "err",
                    code: "ferry/classification-failed",
                    message: failure.message.clone(),
                });
                return Err(failure);
            }
        };
        let negotiated = node::for_job(
            &classified.environment,
            &self.environment,
            &self.state.config.default_environment,
            self.enforce,
        );
        if let Some(message) = negotiated.message() {
            let (level, code) = match negotiated {
                JobEnvironment::Refuse { .. } => ("err", "ferry/environment-refused"),
                _ => ("notice", "ferry/environment-switch"),
            };
            notices.push(Notice {
                level,
                code,
                message,
            });
        }
        let name = match negotiated {
            JobEnvironment::Keep(name) | JobEnvironment::Switch { to: name, .. } => name,
            JobEnvironment::Refuse { asked, server } => {
                self.keep_facts(certname, &facts, &asked).await;
                return Err(provide_error(
                    "ferry/environment-mismatch",
                    format!(
                        "the server specifies environment '{server}' for {certname}, not the job's '{asked}', and the job enforces its environment (enforce_environment)"
                    ),
                ));
            }
        };
        self.keep_facts(certname, &facts, &name).await;
        let loaded = node::classified_environment(&self.state, &name)
            .await
            .map_err(lookup_failure)?;
        let request = node::catalog_request(certname, facts, &loaded, &classified, device);
        let found = self
            .state
            .indirector
            .catalog
            .find(&request, FindOptions { ignore_cache: true })
            .await;
        let json = match found {
            Ok(Some(c)) => c.json,
            Ok(None) => {
                return Err(provide_error(
                    "ferry/apply-compile",
                    format!("no catalog for {certname}"),
                ));
            }
            Err(e) => return Err(provide_error("ferry/apply-compile", e.to_string())),
        };
        let catalog = ApplyCatalog::from_json(&json, certname)
            .map_err(|e| provide_error("ferry/apply-catalog", e.to_string()))?;
        Ok(ProvidedCatalog {
            catalog,
            modulepath: loaded.env.modulepath.clone().into(),
        })
    }
}

#[async_trait::async_trait]
impl CatalogProvider for Deploy {
    fn describe(&self) -> String {
        format!("Puppet run in {}", self.environment)
    }

    async fn catalog(&self, target: &Target, facts: Map<String, Value>, device: bool) -> Provision {
        let mut notices = Vec::new();
        let catalog = self.find(&target.name, facts, device, &mut notices).await;
        Provision { notices, catalog }
    }
}

/// Saves each node's report through the report indirection (its facts are
/// saved by [`Deploy`]); a save that fails is logged (the run goes on).
struct Indirected {
    indirector: Arc<Indirector>,
}

impl std::fmt::Debug for Indirected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Indirected").finish_non_exhaustive()
    }
}

#[async_trait::async_trait]
impl Observer for Indirected {
    async fn facts(&self, _: &str, _: &serde_json::Map<String, Value>) {}

    async fn report(&self, target: &str, report: &crate::apply::report::Report) {
        let saved = match serde_json::to_value(report) {
            Ok(doc) => match Report::from_json(target, doc) {
                Ok(r) => self
                    .indirector
                    .report
                    .save(&r)
                    .await
                    .map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            },
            Err(e) => Err(e.to_string()),
        };
        if let Err(e) = saved {
            tracing::warn!("cannot save the report of {target}: {e}");
        }
    }
}

/// The resource events of a stored Puppet report, as PuppetDB names their
/// fields, in the order the run made them; a resource skipped without
/// events gets one `skipped` event, as PuppetDB records it.
fn resource_events(report: &Value) -> Vec<Value> {
    let Some(statuses) = report.get("resource_statuses").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut events = Vec::new();
    for status in statuses.values() {
        let event = |e: &Value| {
            json!({
                "resource_type": status.get("resource_type"),
                "resource_title": status.get("title"),
                "containment_path": status.get("containment_path"),
                "file": status.get("file"),
                "line": status.get("line"),
                "property": e.get("property"),
                "name": e.get("name"),
                "old_value": e.get("previous_value"),
                "new_value": e.get("desired_value"),
                "message": e.get("message"),
                "status": e.get("status"),
                "timestamp": e.get("time").or_else(|| status.get("time")),
                "corrective_change": e.get("corrective_change"),
            })
        };
        let own = status
            .get("events")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        if own.is_empty() && status.get("skipped") == Some(&Value::Bool(true)) {
            events.push(event(&json!({ "status": "skipped" })));
        }
        events.extend(own.iter().map(event));
    }
    events.sort_by(|a, b| {
        let at = |v: &Value| v["timestamp"].as_str().unwrap_or_default().to_string();
        at(a).cmp(&at(b))
    });
    events
}

/// One node's entry in a job's report.
fn node_report(job: &JobRecord, node: &NodeRecord) -> Value {
    let value = node.result.as_ref().and_then(|r| r.get("value"));
    let report = value.and_then(|v| v.get("report")).cloned();
    let timestamp = node
        .finished_at
        .as_ref()
        .or(node.started_at.as_ref())
        .unwrap_or(&job.created_at);
    json!({
        "node": node.name,
        "state": node.state,
        "timestamp": timestamp,
        "events": report.as_ref().map(resource_events).unwrap_or_default(),
        "report": report,
        "error": value.and_then(|v| v.get("_error")),
    })
}

/// Each node's Puppet run in a job: PE's job report.
///
/// `{report: [{node, state, timestamp, events, report, error}]}`:
/// `events` are the resource events of the node's Puppet report (PuppetDB's
/// field names: resource_type, resource_title, property, old_value,
/// new_value, message, status, timestamp, ...), `report` the Puppet report
/// itself (null until the node has one), `error` why a node has none.
#[utoipa::path(get, path = "/orchestrator/v1/jobs/{id}/report", params(("id" = i64, Path, description = "The job's id (its name)")),
    responses((status = 200, description = "{report: [{node, state, timestamp, events, report, error}]}", body = Value)))]
pub async fn report(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let id = path_id(&id)?;
    let job = load(&state, id).await?;
    let nodes = state.store.nodes(id).await?;
    let items: Vec<Value> = nodes.iter().map(|n| node_report(&job, n)).collect();
    Ok(Json(json!({ "report": items })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_events_are_named_as_puppetdb_names_them() {
        let report = json!({"resource_statuses": {
            "File[/b]": {"resource_type": "File", "title": "/b", "time": "2024-01-01T00:00:02Z",
                "skipped": true, "events": []},
            "File[/a]": {"resource_type": "File", "title": "/a", "file": "site.pp", "line": 3,
                "containment_path": ["Stage[main]", "Main", "File[/a]"], "skipped": false,
                "events": [{"property": "ensure", "previous_value": "absent",
                    "desired_value": "file", "message": "defined content as '{sha256}ab'",
                    "status": "success", "time": "2024-01-01T00:00:01Z", "name": "file_created",
                    "corrective_change": false}]},
            "Notify[x]": {"resource_type": "Notify", "title": "x", "skipped": false, "events": []},
        }});
        let events = resource_events(&report);
        assert_eq!(events.len(), 2, "{events:?}");
        assert_eq!(events[0]["resource_title"], "/a");
        assert_eq!(events[0]["old_value"], "absent");
        assert_eq!(events[0]["new_value"], "file");
        assert_eq!(events[0]["line"], 3);
        assert_eq!(events[1]["resource_title"], "/b");
        assert_eq!(events[1]["status"], "skipped");
        assert_eq!(events[1]["timestamp"], "2024-01-01T00:00:02Z");
        assert!(resource_events(&json!(null)).is_empty());
    }
}
