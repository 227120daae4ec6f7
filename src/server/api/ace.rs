//! ACE's endpoints: the health check `POST /check` answers `OK` (text) once
//! the server is up and the caller is authenticated; `POST /run_task` runs a
//! task on one target as `/ssh/run_task` does, taking ACE's target keys
//! `remote-transport` and `run-on`; `POST /execute_catalog` compiles the
//! node's catalog from an environment of the server's own code
//! (`server::environments`) with facts gathered on the target, applies it
//! over SSH, stores the Puppet report with the job, and answers ACE's
//! summary `{certname, status, result}`. A target with `remote-transport:
//! network` is a network device ([`NetworkTarget`]): `/run_task` runs a
//! remote task for it on the server (its proxy, `_target` holding the
//! device's settings), `/execute_catalog` converges the catalog's device
//! resources through the device's CLI. Its errors
//! are ACE's too: `{certname, status: "failure", result: {_error}}` with
//! ACE's kinds (`puppetlabs/ace/schema-error` naming the field, ...).

use std::sync::Arc;

use axum::Json;
use axum::extract::{Extension, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use utoipa::ToSchema;

use crate::apply::Report;
use crate::run::{Action, Outcome, Output, RunOptions};
use crate::server::AppState;
use crate::server::api::bolt::{self, TaskObject};
use crate::server::api::targets::{self, SshTarget};
use crate::server::environments::{self, EnvironmentError};
use crate::server::files::scratch;
use crate::server::http::auth::Identity;
use crate::server::http::body::{JsonBody, typed};
use crate::server::http::errors::ApiError;
use crate::server::http::limits;
use crate::server::runner::JobSpec;
use crate::server::scrub::Scrub;

/// ACE's health check: answers `OK`.
#[utoipa::path(post, path = "/check",
    responses((status = 200, description = "OK", content_type = "text/plain", body = String)))]
pub async fn check(State(_state): State<Arc<AppState>>) -> Response {
    ([(header::CONTENT_TYPE, "text/plain")], "OK").into_response()
}

/// ACE's `/run_task` request: bolt-server's task request with ACE's
/// target. (Described here; the handler checks the ACE keys and hands the
/// rest to `/ssh/run_task`.)
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct AceRunTask {
    task: TaskObject,
    #[serde(default)]
    #[schema(value_type = Object)]
    parameters: serde_json::Map<String, Value>,
    target: AceTarget,
    timeout: Option<u64>,
}

/// bolt-server's SSH target plus ACE's keys.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
#[allow(dead_code)]
struct AceTarget {
    #[serde(flatten)]
    ssh: SshTarget,
    /// `ssh` (or absent); `network` takes a [`NetworkTarget`] instead.
    remote_transport: Option<String>,
    /// Accepted and ignored: ferry connects to the target itself.
    run_on: Option<String>,
}

/// ACE: runs a task from the server's modulepath on one target.
///
/// `{target, task, parameters}`: the target is
/// bolt-server's SSH target plus ACE's `remote-transport` (`ssh`, or
/// absent) and `run-on` (accepted and ignored: ferry connects to the target
/// itself), or a network device (`remote-transport: network`), for which a
/// remote task runs on the server (`run-on` only `localhost`); the answer
/// is Bolt's result, as `/ssh/run_task` gives it.
#[utoipa::path(post, path = "/run_task", request_body = AceRunTask,
    responses((status = 200, description = "Bolt's result, as /ssh/run_task", body = Value)))]
pub async fn run_task(
    state: State<Arc<AppState>>,
    who: Extension<Identity>,
    JsonBody(mut raw): JsonBody<Value>,
) -> Result<Json<Value>, ApiError> {
    if is_network(&raw) {
        return run_remote_task(state, who, raw).await;
    }
    ace_target(&mut raw)?;
    crate::server::api::bolt::run_task(state, who, JsonBody(raw)).await
}

/// Whether a request's target is a network device (`remote-transport:
/// network`).
fn is_network(raw: &Value) -> bool {
    raw.pointer("/target/remote-transport")
        .and_then(Value::as_str)
        .is_some_and(|t| t == "network")
}

/// ACE's target for a network device (`remote-transport: network`): the
/// keys ACE passes a device transport (`host`, `user`, `password`,
/// `port`) and ferry's network options. The server is the device's proxy:
/// `run-on` may only name it (`localhost`).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct NetworkTarget {
    /// `network`.
    remote_transport: String,
    /// The device's address.
    host: String,
    /// Accepted: ACE names its target by it when `host` is missing.
    #[allow(dead_code)]
    name: Option<String>,
    user: Option<String>,
    password: Option<String>,
    port: Option<u16>,
    /// frr, ios, eos, junos or generic (the default).
    platform: Option<String>,
    enable_password: Option<String>,
    private_key_content: Option<String>,
    /// The device's host key lines; without them `host-key-check` must be false.
    known_hosts_content: Option<String>,
    host_key_check: Option<bool>,
    connect_timeout: Option<u64>,
    command_timeout: Option<u64>,
    /// Only `localhost`: the server runs remote tasks itself.
    run_on: Option<String>,
}

impl NetworkTarget {
    /// A ferry target with `transport: network`; `scratch` is the
    /// request's directory for the known_hosts copy.
    fn to_target(&self, scratch: &std::path::Path) -> Result<crate::inventory::Target, ApiError> {
        let host = self.host.trim();
        if host.is_empty() || host.contains(['/', '@', ' ']) {
            return Err(ApiError::bad_field(
                "target.host",
                "must be a host name or address",
            ));
        }
        if self.remote_transport != "network" {
            return Err(ApiError::bad_field(
                "target.remote-transport",
                "must be network",
            ));
        }
        if self.run_on.as_deref().is_some_and(|r| r != "localhost") {
            return Err(ApiError::bad_field(
                "target.run-on",
                "the server is the device's proxy: run-on may only be localhost",
            ));
        }
        let mut target = crate::inventory::Inventory::empty().ad_hoc(host);
        let c = &mut target.config;
        c.set("transport", json!("network"));
        c.set("network.load-config", json!(false));
        let strings = [
            ("user", &self.user),
            ("password", &self.password),
            ("platform", &self.platform),
            ("enable-password", &self.enable_password),
        ];
        for (key, value) in strings {
            if let Some(v) = value {
                c.set(&format!("network.{key}"), json!(v));
            }
        }
        if let Some(k) = &self.private_key_content {
            c.set("network.private-key", json!({ "key-data": k }));
        }
        if let Some(p) = self.port {
            limits::range("target.port", p.into(), 1, 65535)?;
            c.set("network.port", json!(p));
        }
        if let Some(t) = self.connect_timeout {
            limits::range("target.connect-timeout", t, 1, limits::MAX_CONNECT_TIMEOUT)?;
            c.set("network.connect-timeout", json!(t));
        }
        if let Some(t) = self.command_timeout {
            limits::range("target.command-timeout", t, 1, limits::MAX_TIMEOUT)?;
            c.set("network.command-timeout", json!(t));
        }
        match (self.host_key_check, &self.known_hosts_content) {
            (Some(false), _) => c.set("network.host-key-check", json!(false)),
            (_, Some(content)) => {
                let path = scratch.join("known_hosts.0");
                crate::server::files::scratch::write_private(&path, content.as_bytes())?;
                c.set("network.host-key-check", json!(true));
                c.set(
                    "network.known-hosts-file",
                    json!(path.display().to_string()),
                );
            }
            (_, None) => c.set("network.host-key-check", json!(true)),
        }
        crate::transport::for_target(&target, &Default::default()).map_err(|e| {
            // Option errors name the option, never its value.
            ApiError::bad_field("target", format!("the target's options are not valid: {e}"))
        })?;
        Ok(target)
    }

    /// The secrets in the target, for the stored request and results.
    fn secrets(&self) -> Vec<String> {
        [
            &self.password,
            &self.enable_password,
            &self.private_key_content,
        ]
        .into_iter()
        .flatten()
        .filter(|s| !s.is_empty())
        .cloned()
        .collect()
    }
}

/// A task object as ACE passes it (bolt-server's).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AceTask {
    name: String,
    #[allow(dead_code)]
    metadata: Option<Value>,
    #[serde(default)]
    files: Vec<Value>,
}

/// ACE's `/run_task` for a network device.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RemoteTaskRequest {
    task: AceTask,
    #[serde(default)]
    parameters: Map<String, Value>,
    target: NetworkTarget,
    timeout: Option<u64>,
}

/// A remote task (metadata `remote: true`) for a network device, run on
/// the server itself with the device's settings in `_target`.
async fn run_remote_task(
    State(state): State<Arc<AppState>>,
    Extension(who): Extension<Identity>,
    raw: Value,
) -> Result<Json<Value>, ApiError> {
    let req: RemoteTaskRequest = typed(raw.clone())?;
    let timeout = req
        .timeout
        .map(|t| limits::range("timeout", t, 1, limits::MAX_TIMEOUT))
        .transpose()?;
    let dir = scratch::request_dir(&state.config.cache_dir).await?;
    let target = req.target.to_target(dir.path())?;
    let prepared = crate::server::api::tasks::prepare_off_thread(
        &state.config.modulepath,
        "task.name",
        &req.task.name,
        "parameters",
        req.parameters,
        false,
    )
    .await?;
    if !prepared.task.metadata.runs_remote()
        && !crate::run::actions::device::is_facts_task(&prepared.task.name)
    {
        return Err(ApiError::bad_field(
            "task.name",
            format!(
                "task {} is not a remote task: a network device runs tasks whose metadata has remote: true",
                req.task.name
            ),
        ));
    }
    crate::server::api::tasks::check_files(&prepared, &req.task.files)?;
    let mut secrets = prepared.secrets.clone();
    secrets.extend(req.target.secrets());
    let spec = JobSpec {
        kind: "ace/run_task".into(),
        owner: who.0,
        description: format!("ACE run_task: {} on {}", req.task.name, target.name),
        request: crate::server::api::tasks::redact_secrets(&targets::redact(&raw), &secrets),
        targets: vec![target],
        action: Action::Task(Arc::new(prepared)),
        options: RunOptions {
            concurrency: 1,
            overrides: crate::transport::Overrides {
                command_timeout: timeout.map(std::time::Duration::from_secs),
                ..Default::default()
            },
        },
        scrub: Scrub::for_server(&state).with_scratch(dir.path()),
    };
    let summary = bolt::run_to_end(&state, spec).await?;
    let result = bolt::only_result(summary)?;
    Ok(Json(
        serde_json::to_value(result).map_err(ApiError::internal)?,
    ))
}

/// Checks and takes ACE's keys out of a request's `target`, leaving
/// bolt-server's SSH target: `remote-transport` must be `ssh` (or absent),
/// `run-on` is accepted and ignored.
fn ace_target(raw: &mut Value) -> Result<(), ApiError> {
    let Some(target) = raw.get_mut("target").and_then(Value::as_object_mut) else {
        return Ok(());
    };
    match target.remove("remote-transport") {
        None => {}
        Some(Value::String(t)) if t == "ssh" => {}
        Some(Value::String(_)) => {
            return Err(ApiError::bad_field(
                "target.remote-transport",
                "ferry reaches targets over ssh, and network devices (network)",
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
        None | Some(Value::String(_)) => Ok(()),
        Some(_) => Err(ApiError::bad_field("target.run-on", "must be a string")),
    }
}

/// ACE's compiler request object: which node, which environment, how.
/// Puppet's `debug`, `trace` and `evaltrace` (booleans) are accepted and
/// not used.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct Compiler {
    /// The node's certname: its catalog is compiled for this name and its
    /// report names it.
    certname: String,
    /// An environment on the server's environmentpath; empty means
    /// `production` (refused when `enforce_environment` is true).
    environment: String,
    enforce_environment: bool,
    /// Echoed in the answer (the stored report has ferry's own).
    transaction_uuid: Option<String>,
    /// The orchestrator job this run belongs to; echoed in the answer.
    job_id: Option<String>,
    /// Change nothing; report what would change.
    #[serde(default)]
    noop: bool,
}

/// ACE's `/execute_catalog` request (its `target` once ACE's keys are
/// checked and taken out: see [`AceTarget`]).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct ExecuteCatalog {
    #[schema(value_type = AceTarget)]
    target: SshTarget,
    compiler: Compiler,
    /// Seconds the apply may run on the target.
    timeout: Option<u64>,
}

/// ACE's `/execute_catalog` for a network device (`remote-transport:
/// network`): the catalog's device resources are converged through the
/// device's CLI.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct ExecuteDeviceCatalog {
    target: NetworkTarget,
    compiler: Compiler,
    timeout: Option<u64>,
}

/// Either target an `/execute_catalog` takes.
enum AnyTarget {
    Ssh(SshTarget),
    Device(NetworkTarget),
}

/// An `/execute_catalog` request, for either target.
struct ExecuteAny {
    target: AnyTarget,
    compiler: Compiler,
    timeout: Option<u64>,
}

/// An error as ACE answers it: `{certname, status: "failure", result:
/// {_error: {kind, msg, details}}}`.
#[derive(Debug)]
pub struct AceError {
    status: StatusCode,
    certname: Option<String>,
    kind: &'static str,
    msg: String,
    details: Value,
}

impl AceError {
    fn new(status: StatusCode, kind: &'static str, msg: impl Into<String>, details: Value) -> Self {
        AceError {
            status,
            certname: None,
            kind,
            msg: msg.into(),
            details,
        }
    }

    fn for_node(mut self, certname: &str) -> Self {
        self.certname = Some(certname.to_string());
        self
    }

    /// An environment the request cannot have, naming `compiler.environment`.
    fn environment(e: EnvironmentError) -> Self {
        match e {
            EnvironmentError::Internal(_) => ApiError::internal(e).into(),
            _ => AceError::new(
                StatusCode::BAD_REQUEST,
                "puppetlabs/ace/execute_catalog",
                format!("compiler.environment: {e}"),
                json!({ "field": "compiler.environment" }),
            ),
        }
    }
}

/// ferry's errors in ACE's words: a body that is not JSON or does not
/// arrive is `request_exception`, one that breaks the schema (or a bound)
/// `schema-error` (`details.field` names the field), anything else
/// `processing_exception`.
impl From<ApiError> for AceError {
    fn from(e: ApiError) -> Self {
        let kind = match e.status {
            StatusCode::BAD_REQUEST if e.details.get("line").is_some() => {
                "puppetlabs/ace/request_exception"
            }
            StatusCode::BAD_REQUEST => "puppetlabs/ace/schema-error",
            StatusCode::PAYLOAD_TOO_LARGE | StatusCode::REQUEST_TIMEOUT => {
                "puppetlabs/ace/request_exception"
            }
            _ => "puppetlabs/ace/processing_exception",
        };
        AceError::new(e.status, kind, e.msg, e.details)
    }
}

impl IntoResponse for AceError {
    fn into_response(self) -> Response {
        let mut body = json!({
            "status": "failure",
            "result": { "_error": { "kind": self.kind, "msg": self.msg, "details": self.details } },
        });
        if let Some(c) = self.certname {
            body["certname"] = json!(c);
        }
        (self.status, Json(body)).into_response()
    }
}

/// ACE's `metrics`: the report's `resources` metric as `{name: value}`.
fn resource_metrics(report: &Report) -> Map<String, Value> {
    report
        .metrics
        .0
        .iter()
        .filter(|m| m.name == "resources")
        .flat_map(|m| m.values.iter())
        .map(|(name, _, value)| (name.clone(), value.clone()))
        .collect()
}

/// ACE: compiles the node's catalog from the server's code and applies it.
///
/// `{target, compiler: {certname, environment, enforce_environment,
/// transaction_uuid, job_id, noop, debug, trace, evaltrace}, timeout}`.
/// Facts are gathered on the target by the built-in facts task; the
/// catalog is compiled from `<environmentpath>/<environment>` for
/// `certname` (trusted facts as ACE makes them) and applied over SSH. The
/// run is stored as a job (`ace/execute_catalog`) whose node result holds
/// the Puppet report. The answer is ACE's `{certname, status, result:
/// {time, transaction_uuid, environment, job_id, metrics}}` (`status` is
/// the report's: changed, unchanged or failed; a run that failed before
/// applying is `failed` with `result._error`); a target that cannot be
/// reached is a 500 `puppetlabs/ace/processing_exception`.
#[utoipa::path(post, path = "/execute_catalog", request_body = ExecuteCatalog,
    responses((status = 200, description = "{certname, status, result: {time, transaction_uuid, environment, job_id, metrics}}", body = Value),
        (status = 500, description = "{certname, status: failure, result: {_error}}: the target could not be reached", body = Value)))]
pub async fn execute_catalog(
    State(state): State<Arc<AppState>>,
    Extension(who): Extension<Identity>,
    body: Result<JsonBody<Value>, ApiError>,
) -> Result<Response, AceError> {
    let JsonBody(raw) = body?;
    let mut body = raw.clone();
    let network = is_network(&raw);
    if !network {
        ace_target(&mut body)?;
    }
    environments::take_debug_flags(body.get_mut("compiler"), "compiler.")?;
    let req = if network {
        let req: ExecuteDeviceCatalog = typed(body)?;
        ExecuteAny {
            target: AnyTarget::Device(req.target),
            compiler: req.compiler,
            timeout: req.timeout,
        }
    } else {
        let req: ExecuteCatalog = typed(body)?;
        ExecuteAny {
            target: AnyTarget::Ssh(req.target),
            compiler: req.compiler,
            timeout: req.timeout,
        }
    };
    let certname = req.compiler.certname.clone();
    crate::server::api::puppet::check_certname(&certname, "compiler.certname")?;
    let node = |e: ApiError| AceError::from(e).for_node(&certname);
    let timeout = req
        .timeout
        .map(|t| limits::range("timeout", t, 1, limits::MAX_TIMEOUT))
        .transpose()
        .map_err(node)?;
    let environment = environments::requested(
        &req.compiler.environment,
        req.compiler.enforce_environment,
        &state.config.default_environment,
    )
    .map_err(|e| AceError::environment(e).for_node(&certname))?;
    let mut job = environments::prepare(&state, &environment, req.compiler.noop)
        .await
        .map_err(|e| AceError::environment(e).for_node(&certname))?;
    // The report carries the caller's transaction and job, as an agent's does.
    job.options.transaction_uuid = req.compiler.transaction_uuid.clone();
    job.options.job_id = req.compiler.job_id.clone();
    let dir = scratch::request_dir(&state.config.cache_dir)
        .await
        .map_err(node)?;
    let mut target = match req.target {
        AnyTarget::Ssh(t) => t.resolve("target", dir.path(), 0).await,
        AnyTarget::Device(t) => t.to_target(dir.path()),
    }
    .map_err(node)?;
    target.name = certname.clone();
    let spec = JobSpec {
        kind: "ace/execute_catalog".into(),
        owner: who.0,
        description: format!("ACE execute_catalog: {certname} in {environment}"),
        request: targets::redact(&raw),
        targets: vec![target],
        action: Action::Apply(Arc::new(job)),
        options: RunOptions {
            concurrency: 1,
            overrides: crate::transport::Overrides {
                command_timeout: timeout.map(std::time::Duration::from_secs),
                ..Default::default()
            },
        },
        scrub: Scrub::for_server(&state).with_scratch(dir.path()),
    };
    let summary = bolt::run_to_end(&state, spec).await.map_err(node)?;
    let result = bolt::only_result(summary).map_err(node)?;
    let compiler = &req.compiler;
    let answer = match &result.outcome {
        Outcome::Ok(Output::Apply(report)) | Outcome::Failed(Output::Apply(report)) => json!({
            "certname": certname,
            "status": report.status,
            "result": {
                "time": report.time,
                "transaction_uuid": compiler.transaction_uuid.as_deref().unwrap_or(&report.transaction_uuid),
                "environment": report.environment,
                "job_id": compiler.job_id,
                "metrics": resource_metrics(report),
            },
        }),
        Outcome::Ok(_) | Outcome::Failed(_) => json!({
            "certname": certname,
            "status": "failed",
            "result": {
                "time": crate::store::now(),
                "transaction_uuid": compiler.transaction_uuid,
                "environment": environment,
                "job_id": compiler.job_id,
                "metrics": {},
                "_error": result.value().get("_error"),
            },
        }),
        Outcome::Errored(_) => {
            let error = result.value().get("_error").cloned().unwrap_or(Value::Null);
            let msg = error
                .get("msg")
                .and_then(Value::as_str)
                .unwrap_or("the target could not be reached")
                .to_string();
            return Err(AceError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "puppetlabs/ace/processing_exception",
                msg,
                json!({ "cause": error }),
            )
            .for_node(&certname));
        }
    };
    Ok(Json(answer).into_response())
}
