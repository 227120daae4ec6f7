//! `GET /openapi.json`: an OpenAPI 3.0 description of every endpoint, its
//! request body, its answers and the token action it needs.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use serde_json::{Map, Value, json};

use crate::server::AppState;

fn target_schema() -> Value {
    let s = |t: &str| json!({ "type": t });
    json!({
        "type": "object",
        "required": ["hostname", "user"],
        "additionalProperties": false,
        "description": "An SSH target. Needs password or private-key-content. Host keys are checked unless host-key-check is false: against known-hosts-content when given, else the server user's known_hosts.",
        "properties": {
            "hostname": s("string"), "user": s("string"), "password": s("string"),
            "private-key-content": s("string"), "port": s("integer"),
            "connect-timeout": s("integer"), "disconnect-timeout": s("integer"),
            "run-as": s("string"), "run-as-command": { "type": "array", "items": s("string") },
            "sudo-password": s("string"), "tmpdir": s("string"), "tty": s("boolean"),
            "host-key-check": s("boolean"), "known-hosts-content": s("string"),
            "interpreters": s("object"), "plugin_hooks": s("object")
        }
    })
}

/// ACE's target: an SSH target plus `remote-transport` and `run-on`.
fn ace_target_schema() -> Value {
    let mut t = target_schema();
    if let Some(props) = t["properties"].as_object_mut() {
        props.insert(
            "remote-transport".into(),
            json!({ "type": "string", "enum": ["ssh"] }),
        );
        props.insert(
            "run-on".into(),
            json!({ "type": "string", "description": "accepted, ignored" }),
        );
    }
    t
}

fn file_ref(extra: Value) -> Value {
    let mut props = json!({
        "uri": { "type": "object", "required": ["path", "params"], "properties": {
            "path": { "type": "string", "description": "/puppet/v3/file_content/{modules|scripts|tasks}/MODULE/FILE, served from the server's modulepath (or fetched from file-server-uri into the file cache)" },
            "params": { "type": "object" } } },
        "sha256": { "type": "string" },
        "content": { "type": "string", "description": "ferry: the file itself, base64 (instead of uri)" }
    });
    if let (Some(p), Some(e)) = (props.as_object_mut(), extra.as_object()) {
        p.extend(e.clone());
    }
    json!({ "type": "object", "properties": props })
}

fn schemas() -> Value {
    json!({
        "Target": target_schema(),
        "Error": { "type": "object", "required": ["kind", "msg", "details"], "properties": {
            "kind": { "type": "string" }, "msg": { "type": "string" }, "details": { "type": "object" } } },
        "Result": { "type": "object", "description": "Bolt's result of one target", "properties": {
            "target": { "type": "string" }, "action": { "type": "string" }, "object": { "type": "string" },
            "status": { "type": "string", "enum": ["success", "failure"] }, "value": { "type": "object" } } },
        "RunCommand": { "type": "object", "required": ["command", "target"], "properties": {
            "command": { "type": "string" }, "target": { "$ref": "#/components/schemas/Target" } } },
        "CheckNodeConnections": { "type": "object", "required": ["targets"], "properties": {
            "targets": { "type": "array", "items": { "$ref": "#/components/schemas/Target" } } } },
        "RunScript": { "type": "object", "required": ["script", "target"], "properties": {
            "script": file_ref(json!({ "filename": { "type": "string" } })),
            "arguments": { "type": "array", "items": { "type": "string" } },
            "target": { "$ref": "#/components/schemas/Target" } } },
        "UploadFile": { "type": "object", "required": ["files", "job_id", "destination", "target"], "properties": {
            "files": { "type": "array", "items": file_ref(json!({
                "relative_path": { "type": "string" }, "kind": { "type": "string", "enum": ["file", "directory"] } })) },
            "job_id": { "type": "integer" }, "destination": { "type": "string" },
            "target": { "$ref": "#/components/schemas/Target" } } },
        "CommandJob": { "type": "object", "required": ["command", "scope"], "properties": {
            "command": { "type": "string" }, "description": { "type": "string" },
            "environment": { "type": "string" }, "concurrency": { "type": "integer" },
            "scope": { "type": "object", "properties": {
                "nodes": { "type": "array", "items": { "type": "string" } },
                "node_group": { "type": "string" } } } } },
        "RunTask": { "type": "object", "required": ["task", "target"], "properties": {
            "task": { "type": "object", "required": ["name", "files"], "properties": {
                "name": { "type": "string" }, "metadata": { "type": "object" },
                "files": { "type": "array", "items": { "type": "object", "properties": {
                    "filename": { "type": "string" }, "sha256": { "type": "string" }, "uri": { "type": "object" } } } } } },
            "parameters": { "type": "object" }, "timeout": { "type": "integer" },
            "target": { "$ref": "#/components/schemas/Target" } } },
        "AceRunTask": { "type": "object", "required": ["task", "target"], "properties": {
            "task": { "type": "object", "required": ["name", "files"], "properties": {
                "name": { "type": "string" }, "metadata": { "type": "object" },
                "files": { "type": "array", "items": { "type": "object", "properties": {
                    "filename": { "type": "string" }, "sha256": { "type": "string" },
                    "size_bytes": { "type": "integer" }, "uri": { "type": "object" } } } } } },
            "parameters": { "type": "object" }, "timeout": { "type": "integer" },
            "target": ace_target_schema() } },
        "TaskJob": { "type": "object", "required": ["task", "scope"], "properties": {
            "task": { "type": "string" }, "params": { "type": "object" }, "noop": { "type": "boolean" },
            "description": { "type": "string" }, "environment": { "type": "string" }, "concurrency": { "type": "integer" },
            "scope": { "type": "object", "properties": {
                "nodes": { "type": "array", "items": { "type": "string" } },
                "node_group": { "type": "string" } } } } },
        "Stop": { "type": "object", "required": ["job"], "properties": { "job": { "type": "string" } } }
    })
}

/// (method, path, summary, token action, request schema, success status).
type Endpoint = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    Option<&'static str>,
    &'static str,
);

const ENDPOINTS: &[Endpoint] = &[
    (
        "post",
        "/check",
        "ACE health check; answers OK",
        "check",
        None,
        "200",
    ),
    (
        "post",
        "/run_task",
        "ACE: run a task from the server's modulepath on one target (target may add remote-transport: ssh and run-on); Bolt's result, as /ssh/run_task",
        "ace:run_task",
        Some("AceRunTask"),
        "200",
    ),
    (
        "get",
        "/metrics",
        "Prometheus metrics",
        "metrics",
        None,
        "200",
    ),
    (
        "get",
        "/openapi.json",
        "This description",
        "openapi",
        None,
        "200",
    ),
    (
        "get",
        "/tasks",
        "Tasks on the modulepath and built in; [{name}] (?environment is ignored)",
        "catalog:read",
        None,
        "200",
    ),
    (
        "get",
        "/tasks/{module}/{task}",
        "One task as bolt-server shows it: {name, metadata, files: [{filename, sha256, size_bytes, uri}]}",
        "catalog:read",
        None,
        "200",
    ),
    (
        "get",
        "/plans",
        "YAML plans on the modulepath; [{name}] (?environment is ignored)",
        "catalog:read",
        None,
        "200",
    ),
    (
        "get",
        "/plans/{module}/{plan}",
        "One plan: {name, description, parameters: {NAME: {type, default?, description?}}}",
        "catalog:read",
        None,
        "200",
    ),
    (
        "get",
        "/puppet/v3/file_content/{mount}/{module}/{path}",
        "A module file's bytes (application/octet-stream): mount tasks (MODULE/tasks/, built-in ferry tasks too), modules (MODULE/files/) or scripts (MODULE/scripts/); path may have several segments but must stay inside the module",
        "catalog:read",
        None,
        "200",
    ),
    (
        "post",
        "/ssh/check_node_connections",
        "Connect to each target; {status, result}",
        "ssh:check_node_connections",
        Some("CheckNodeConnections"),
        "200",
    ),
    (
        "post",
        "/ssh/run_command",
        "Run a command on one target; Bolt's result",
        "ssh:run_command",
        Some("RunCommand"),
        "200",
    ),
    (
        "post",
        "/ssh/run_script",
        "Upload and run a script on one target; Bolt's result",
        "ssh:run_script",
        Some("RunScript"),
        "200",
    ),
    (
        "post",
        "/ssh/upload_file",
        "Upload files to one target; Bolt's result",
        "ssh:upload_file",
        Some("UploadFile"),
        "200",
    ),
    (
        "post",
        "/ssh/run_task",
        "Run a task from the server's modulepath on one target (the request's task files must match it by sha256); Bolt's result",
        "ssh:run_task",
        Some("RunTask"),
        "200",
    ),
    (
        "post",
        "/orchestrator/v1/command/command",
        "Start a command job over the inventory; {job: {id, name}}",
        "jobs:command",
        Some("CommandJob"),
        "202",
    ),
    (
        "post",
        "/orchestrator/v1/command/task",
        "Start a task job over the inventory; {job: {id, name}}",
        "jobs:task",
        Some("TaskJob"),
        "202",
    ),
    (
        "post",
        "/orchestrator/v1/command/stop",
        "Stop a running job",
        "jobs:stop",
        Some("Stop"),
        "200",
    ),
    (
        "get",
        "/orchestrator/v1/jobs",
        "Jobs, newest first (?limit, ?offset)",
        "jobs:read",
        None,
        "200",
    ),
    (
        "get",
        "/orchestrator/v1/jobs/{id}",
        "One job",
        "jobs:read",
        None,
        "200",
    ),
    (
        "get",
        "/orchestrator/v1/jobs/{id}/nodes",
        "A job's nodes with their states and results",
        "jobs:read",
        None,
        "200",
    ),
    (
        "get",
        "/orchestrator/v1/jobs/{id}/events",
        "A job's events from ?start=N",
        "jobs:read",
        None,
        "200",
    ),
    (
        "get",
        "/orchestrator/v1/jobs/{id}/events/stream",
        "A job's events as server-sent events, ending after job_finished",
        "jobs:read",
        None,
        "200",
    ),
];

/// The whole document.
pub fn document() -> Value {
    let mut paths = Map::new();
    let error = json!({ "description": "Error", "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } } });
    for (method, path, summary, action, body, ok) in ENDPOINTS {
        let mut op = json!({
            "summary": summary,
            "x-ferry-action": action,
            "responses": {
                *ok: { "description": "Success" },
                "400": error, "401": error, "403": error, "404": error, "413": error
            }
        });
        if let (Some(schema), Some(map)) = (body, op.as_object_mut()) {
            map.insert("requestBody".into(), json!({ "required": true, "content": {
                "application/json": { "schema": { "$ref": format!("#/components/schemas/{schema}") } } } }));
        }
        if path.contains("{id}")
            && let Some(map) = op.as_object_mut()
        {
            map.insert("parameters".into(), json!([{ "name": "id", "in": "path", "required": true, "schema": { "type": "integer" } }]));
        }
        let named: Vec<Value> = path
            .split('/')
            .filter_map(|seg| seg.strip_prefix('{')?.strip_suffix('}'))
            .filter(|name| *name != "id")
            .map(|name| json!({ "name": name.trim_start_matches('*'), "in": "path", "required": true, "schema": { "type": "string" } }))
            .collect();
        if !named.is_empty()
            && let Some(map) = op.as_object_mut()
        {
            map.insert("parameters".into(), Value::Array(named));
        }
        let entry = paths.entry(path.to_string()).or_insert_with(|| json!({}));
        if let Some(m) = entry.as_object_mut() {
            m.insert(method.to_string(), op);
        }
    }
    json!({
        "openapi": "3.0.3",
        "info": { "title": "ferry executor API", "version": env!("CARGO_PKG_VERSION"),
            "description": "bolt-server and ACE compatible endpoints plus orchestrator-style jobs. Authenticate with a client certificate from the server's CA or `Authorization: Bearer <token>`." },
        "paths": paths,
        "components": {
            "schemas": schemas(),
            "securitySchemes": { "bearer": { "type": "http", "scheme": "bearer" }, "mutualTLS": { "type": "mutualTLS" } }
        },
        "security": [{ "mutualTLS": [] }, { "bearer": [] }]
    })
}

/// `GET /openapi.json`.
pub async fn openapi(State(_state): State<Arc<AppState>>) -> Json<Value> {
    Json(document())
}
