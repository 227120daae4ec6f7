//! bolt-server's SSH endpoints. Each call is a job in the store (kind
//! `ssh/<action>`, request redacted) run by the shared executor, and answers
//! when it is done: 200 with Bolt's result `{target, action, object,
//! status, value}` (for `check_node_connections`, `{status, result: [...]}`)
//! — a command that fails on its target is still a 200 with status
//! `failure`, as bolt-server does.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Json;
use axum::extract::{Extension, State};
use serde::Deserialize;
use serde_json::{Value, json};
use utoipa::ToSchema;

use crate::inventory::Target;
use crate::run::{Action, RunOptions, Summary, TargetResult};
use crate::server::AppState;
use crate::server::api::targets::{self, FileUri, SshTarget};
use crate::server::files::blocking;
use crate::server::files::scratch::{self, RequestDir};
use crate::server::http::auth::Identity;
use crate::server::http::body::{JsonBody, typed};
use crate::server::http::errors::ApiError;
use crate::server::http::limits;
use crate::server::runner::{self, JobSpec, Outcome};
use crate::server::scrub::Scrub;

/// `/ssh/run_command`: a command to run on one target.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct CommandRequest {
    command: String,
    target: SshTarget,
}

/// `/ssh/check_node_connections`: the targets to connect to.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct CheckRequest {
    targets: Vec<SshTarget>,
}

/// A script: by `uri` (or inline `content`), checked against `sha256`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct ScriptSpec {
    filename: String,
    uri: FileUri,
    sha256: String,
    /// ferry: the file itself, base64 (instead of `uri`).
    content: Option<String>,
}

/// `/ssh/run_script`: a script and its arguments, for one target.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct ScriptRequest {
    script: ScriptSpec,
    #[serde(default)]
    arguments: Vec<String>,
    target: SshTarget,
}

/// One entry of an upload: a file (by `uri` or inline `content`, checked
/// against `sha256`) or a directory, at `relative_path`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct FileSpec {
    relative_path: String,
    uri: FileUri,
    sha256: String,
    /// `file` or `directory`.
    kind: String,
    /// ferry: the file itself, base64 (instead of `uri`).
    content: Option<String>,
}

/// `/ssh/upload_file`: files for one target's `destination`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct UploadRequest {
    files: Vec<FileSpec>,
    #[allow(dead_code)]
    job_id: i64,
    destination: String,
    target: SshTarget,
}

/// A per-request private directory under the cache dir, removed when dropped.
async fn scratch(state: &AppState) -> Result<RequestDir, ApiError> {
    scratch::request_dir(&state.config.cache_dir).await
}

/// Writes a new file (see [`scratch::write`]) on the blocking pool.
async fn write(path: PathBuf, bytes: Vec<u8>, mode: u32, dir_mode: u32) -> Result<(), ApiError> {
    blocking(move || scratch::write(&path, &bytes, mode, dir_mode)).await
}

/// Runs `action` as a stored job and waits for its summary; server paths
/// (the scratch directory `dir` among them) are scrubbed from its results.
#[allow(clippy::too_many_arguments)]
async fn run(
    state: &Arc<AppState>,
    who: &Identity,
    kind: &str,
    request: &Value,
    targets: Vec<Target>,
    action: Action,
    secrets: &[String],
    dir: &Path,
) -> Result<Summary, ApiError> {
    let spec = JobSpec {
        kind: format!("ssh/{kind}"),
        owner: who.0.clone(),
        description: format!("bolt-server {kind}"),
        request: crate::server::api::tasks::redact_secrets(&targets::redact(request), secrets),
        targets,
        action,
        options: RunOptions {
            concurrency: state.config.concurrency,
            overrides: Default::default(),
        },
        scrub: Scrub::for_server(state).with_scratch(dir),
    };
    run_to_end(state, spec).await
}

/// Runs a job and waits for its summary: a direct request answers when
/// its job is done.
pub(crate) async fn run_to_end(state: &Arc<AppState>, spec: JobSpec) -> Result<Summary, ApiError> {
    let (_, handle) = runner::launch(state, spec).await?;
    match handle.await {
        Ok(Outcome::Finished(summary)) => Ok(summary),
        Ok(Outcome::Stopped) => Err(ApiError::new(
            axum::http::StatusCode::CONFLICT,
            "ferry/stopped",
            "the job was stopped before it finished",
        )),
        Ok(Outcome::Failed(why)) => Err(ApiError::internal(format!("the job failed: {why}"))),
        Ok(Outcome::Plan { .. }) => Err(ApiError::internal("a direct request ran a plan job")),
        Err(e) => Err(ApiError::internal(e)),
    }
}

/// The one result of a one-target run.
pub(crate) fn only_result(summary: Summary) -> Result<TargetResult, ApiError> {
    summary
        .results
        .into_iter()
        .next()
        .ok_or_else(|| ApiError::internal("a one-target run returned no result"))
}

/// The one result of a one-target run, as Bolt's JSON. `object` replaces
/// the executor's (a path in the server's scratch directory) when given.
fn only(summary: Summary, object: Option<&str>) -> Result<Json<Value>, ApiError> {
    let mut result = only_result(summary)?;
    if let Some(object) = object {
        result.object = object.to_string();
    }
    Ok(Json(
        serde_json::to_value(result).map_err(ApiError::internal)?,
    ))
}

/// Runs a command on one target.
#[utoipa::path(post, path = "/ssh/run_command", request_body = CommandRequest,
    responses((status = 200, description = "Bolt's result {target, action, object, status, value}; a command that fails on its target is still 200, with status failure and value._error", body = Value)))]
pub async fn run_command(
    State(state): State<Arc<AppState>>,
    Extension(who): Extension<Identity>,
    JsonBody(raw): JsonBody<Value>,
) -> Result<Json<Value>, ApiError> {
    let req: CommandRequest = typed(raw.clone())?;
    let dir = scratch(&state).await?;
    let target = req.target.resolve("target", dir.path(), 0).await?;
    let action = Action::Command { line: req.command };
    only(
        run(
            &state,
            &who,
            "run_command",
            &raw,
            vec![target],
            action,
            &[],
            dir.path(),
        )
        .await?,
        None,
    )
}

/// Connects to each target (as the login user) and reports
/// `{status, result}`.
#[utoipa::path(post, path = "/ssh/check_node_connections", request_body = CheckRequest,
    responses((status = 200, description = "{status, result: [Bolt's result per target]}", body = Value)))]
pub async fn check_node_connections(
    State(state): State<Arc<AppState>>,
    Extension(who): Extension<Identity>,
    JsonBody(raw): JsonBody<Value>,
) -> Result<Json<Value>, ApiError> {
    let req: CheckRequest = typed(raw.clone())?;
    let dir = scratch(&state).await?;
    let mut targets = Vec::with_capacity(req.targets.len());
    for (i, t) in req.targets.into_iter().enumerate() {
        let field = format!("targets[{i}]");
        targets.push(t.without_run_as().resolve(&field, dir.path(), i).await?);
    }
    let targets = distinct(targets)?;
    let action = Action::Command {
        line: "true".into(),
    };
    let summary = run(
        &state,
        &who,
        "check_node_connections",
        &raw,
        targets,
        action,
        &[],
        dir.path(),
    )
    .await?;
    let status = if summary.all_ok() {
        "success"
    } else {
        "failure"
    };
    let result: Vec<Value> = summary
        .results
        .iter()
        .map(|r| {
            let value = match r.value().get("_error") {
                Some(e) => json!({ "_error": e }),
                None => json!({}),
            };
            json!({
                "target": r.target,
                "action": "check_node_connections",
                "object": null,
                "status": r.status(),
                "value": value,
            })
        })
        .collect();
    Ok(Json(json!({ "status": status, "result": result })))
}

/// Targets named by hostname, as Bolt does; when two share a hostname they
/// are told apart by port (`host:port`), and true duplicates are refused.
fn distinct(mut targets: Vec<Target>) -> Result<Vec<Target>, ApiError> {
    let count = |ts: &[Target], name: &str| ts.iter().filter(|t| t.name == name).count();
    let shared: Vec<bool> = targets
        .iter()
        .map(|t| count(&targets, &t.name) > 1)
        .collect();
    for (t, shared) in targets.iter_mut().zip(shared) {
        if shared {
            let port = t
                .config
                .get("ssh.port")
                .map(|p| p.value.to_string())
                .unwrap_or_else(|| "22".into());
            t.name = format!("{}:{port}", t.name);
        }
    }
    for (i, t) in targets.iter().enumerate() {
        if targets[..i].iter().any(|o| o.name == t.name) {
            return Err(ApiError::bad_field(
                &format!("targets[{i}]"),
                "is the same host and port as an earlier target",
            ));
        }
    }
    Ok(targets)
}

/// A file name for a script: its last path component, checked.
fn script_name(filename: &str) -> Result<String, ApiError> {
    let name = std::path::Path::new(filename)
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| !n.starts_with('.'))
        .ok_or_else(|| ApiError::bad_field("script.filename", "must be a file name"))?;
    Ok(name.to_string())
}

/// Uploads and runs a script on one target.
#[utoipa::path(post, path = "/ssh/run_script", request_body = ScriptRequest,
    responses((status = 200, description = "Bolt's result", body = Value)))]
pub async fn run_script(
    State(state): State<Arc<AppState>>,
    Extension(who): Extension<Identity>,
    JsonBody(raw): JsonBody<Value>,
) -> Result<Json<Value>, ApiError> {
    let req: ScriptRequest = typed(raw.clone())?;
    let dir = scratch(&state).await?;
    let target = req.target.resolve("target", dir.path(), 0).await?;
    let bytes = targets::contents(
        &state,
        "script",
        &req.script.uri,
        req.script.content.as_deref(),
        &req.script.sha256,
    )
    .await?;
    let name = script_name(&req.script.filename)?;
    let path = dir.path().join(&name);
    write(path.clone(), bytes, 0o700, scratch::DIR_MODE).await?;
    let action = Action::Script {
        path,
        args: req.arguments,
    };
    only(
        run(
            &state,
            &who,
            "run_script",
            &raw,
            vec![target],
            action,
            &[],
            dir.path(),
        )
        .await?,
        Some(&name),
    )
}

/// A relative path inside the upload, checked not to leave it.
fn relative(field: &str, p: &str) -> Result<PathBuf, ApiError> {
    let path = PathBuf::from(p.trim_end_matches('/'));
    let ok = !p.is_empty()
        && path.components().next().is_some()
        && path
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
    if !ok {
        return Err(ApiError::bad_field(
            field,
            "must be a relative path inside the upload",
        ));
    }
    Ok(path)
}

/// Every entry's relative path, checked: inside the upload, not the same
/// as another's, and not below a file.
fn upload_paths(files: &[FileSpec]) -> Result<Vec<PathBuf>, ApiError> {
    let mut paths: Vec<PathBuf> = Vec::with_capacity(files.len());
    for (i, f) in files.iter().enumerate() {
        let field = format!("files[{i}].relative_path");
        let rel = relative(&field, &f.relative_path)?;
        for (j, (other, spec)) in paths.iter().zip(files).enumerate() {
            let clash = if *other == rel {
                Some("is the same path as")
            } else if rel.starts_with(other) && spec.kind != "directory" {
                Some("is below the file")
            } else if other.starts_with(&rel) && f.kind != "directory" {
                Some("is a file, but holds")
            } else {
                None
            };
            if let Some(how) = clash {
                return Err(ApiError::bad_field(
                    &field,
                    format!("{how} files[{j}].relative_path"),
                ));
            }
        }
        paths.push(rel);
    }
    Ok(paths)
}

/// Uploads files to one target.
///
/// One file goes to `destination`; several (or directories) are laid out
/// by `relative_path` under it.
#[utoipa::path(post, path = "/ssh/upload_file", request_body = UploadRequest,
    responses((status = 200, description = "Bolt's result", body = Value)))]
pub async fn upload_file(
    State(state): State<Arc<AppState>>,
    Extension(who): Extension<Identity>,
    JsonBody(raw): JsonBody<Value>,
) -> Result<Json<Value>, ApiError> {
    let req: UploadRequest = typed(raw.clone())?;
    if req.files.is_empty() {
        return Err(ApiError::bad_field("files", "must not be empty"));
    }
    for (i, f) in req.files.iter().enumerate() {
        if f.kind != "file" && f.kind != "directory" {
            return Err(ApiError::bad_field(
                &format!("files[{i}].kind"),
                "must be file or directory",
            ));
        }
    }
    let paths = upload_paths(&req.files)?;
    if req.destination.is_empty() {
        return Err(ApiError::bad_field("destination", "must not be empty"));
    }
    let dir = scratch(&state).await?;
    let target = req.target.resolve("target", dir.path(), 0).await?;
    // The upload tree keeps the modes it gives the remote files; it is
    // private below the scratch directory.
    let root = dir.path().join("upload");
    let dirs: Vec<PathBuf> = std::iter::once(root.clone())
        .chain(
            req.files
                .iter()
                .zip(&paths)
                .filter(|(f, _)| f.kind == "directory")
                .map(|(_, rel)| root.join(rel)),
        )
        .collect();
    blocking(move || {
        dirs.iter()
            .try_for_each(|d| scratch::dir_all(d, 0o755))
            .map_err(ApiError::internal)
    })
    .await?;
    for (i, (f, rel)) in req.files.iter().zip(&paths).enumerate() {
        if f.kind != "directory" {
            let field = format!("files[{i}]");
            let bytes =
                targets::contents(&state, &field, &f.uri, f.content.as_deref(), &f.sha256).await?;
            write(root.join(rel), bytes, 0o644, 0o755).await?;
        }
    }
    let src = match (req.files.as_slice(), paths.as_slice()) {
        ([one], [rel]) if one.kind == "file" => root.join(rel),
        _ => root,
    };
    let object = match req.files.as_slice() {
        [one] => one.relative_path.clone(),
        many => format!("{} files", many.len()),
    };
    let dest = format!("{}:{}", target.host(), req.destination);
    let action = Action::Upload {
        src,
        dest: req.destination,
    };
    let summary = run(
        &state,
        &who,
        "upload_file",
        &raw,
        vec![target],
        action,
        &[],
        dir.path(),
    )
    .await?;
    let mut response = only(summary, Some(&object))?;
    if let Some(value) = response.0.get_mut("value")
        && value.get("_output").is_some()
    {
        value["_output"] = json!(format!("Uploaded '{object}' to '{dest}'"));
    }
    Ok(response)
}

/// A task as bolt-server names it; `GET /tasks/{module}/{task}` gives one.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TaskObject {
    name: String,
    metadata: Option<Value>,
    /// `{filename, uri, sha256, size_bytes}`: each must be one of the
    /// task's files on this server (by sha256).
    files: Vec<Value>,
}

/// `/ssh/run_task`: a task and its parameters, for one target.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TaskRequest {
    task: TaskObject,
    #[serde(default)]
    #[schema(value_type = Object)]
    parameters: serde_json::Map<String, Value>,
    target: SshTarget,
    /// Accepted and range-checked; not used yet.
    timeout: Option<u64>,
}

/// Runs a task from the server's modulepath on one target.
///
/// The task is taken from the server's modulepath
/// by name; the files the request lists must match it by sha256. A task
/// the modulepath lacks is, with `file-server-uri`, laid out from the
/// request's metadata and files fetched by their `uri` (through the file
/// cache, checked by sha256) and loaded from there.
#[utoipa::path(post, path = "/ssh/run_task", request_body = TaskRequest,
    responses((status = 200, description = "Bolt's result", body = Value)))]
pub async fn run_task(
    State(state): State<Arc<AppState>>,
    Extension(who): Extension<Identity>,
    JsonBody(raw): JsonBody<Value>,
) -> Result<Json<Value>, ApiError> {
    let req: TaskRequest = typed(raw.clone())?;
    if let Some(t) = req.timeout {
        limits::range("timeout", t, 1, limits::MAX_TIMEOUT)?;
    }
    let dir = scratch(&state).await?;
    let target = req.target.resolve("target", dir.path(), 0).await?;
    let prepared = match crate::server::api::tasks::prepare_off_thread(
        &state.config.modulepath,
        "task.name",
        &req.task.name,
        "parameters",
        req.parameters.clone(),
        false,
    )
    .await
    {
        Err(e) if e.kind == "ferry/task-not-found" && state.file_server.is_some() => {
            let root = dir.path().join("modules");
            lay_out_task(&state, &req.task, &root).await?;
            crate::server::api::tasks::prepare_off_thread(
                &[root],
                "task.name",
                &req.task.name,
                "parameters",
                req.parameters,
                false,
            )
            .await?
        }
        other => other?,
    };
    crate::server::api::tasks::check_files(&prepared, &req.task.files)?;
    let secrets = prepared.secrets.clone();
    let action = Action::Task(Arc::new(prepared));
    only(
        run(
            &state,
            &who,
            "run_task",
            &raw,
            vec![target],
            action,
            &secrets,
            dir.path(),
        )
        .await?,
        None,
    )
}

/// Lays out a task the modulepath lacks under `root` as a modulepath would
/// hold it: its metadata as `<module>/tasks/<task>.json`, each file fetched
/// by `uri` (checked by sha256) at the place its uri path names.
async fn lay_out_task(state: &AppState, task: &TaskObject, root: &Path) -> Result<(), ApiError> {
    let (module, name) = match task.name.split_once("::") {
        Some((m, t)) => (m, t),
        None => (task.name.as_str(), "init"),
    };
    let plain = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    };
    if !plain(module) || !plain(name) {
        return Err(ApiError::bad_field("task.name", "is not a valid task name"));
    }
    let mut written: Vec<PathBuf> = Vec::new();
    for (i, f) in task.files.iter().enumerate() {
        let field = format!("task.files[{i}]");
        let uri: FileUri = f
            .get("uri")
            .cloned()
            .ok_or_else(|| ApiError::bad_field(&format!("{field}.uri"), "is required"))
            .and_then(|u| {
                serde_json::from_value(u)
                    .map_err(|e| ApiError::bad_field(&format!("{field}.uri"), e.to_string()))
            })?;
        let sha = f
            .get("sha256")
            .and_then(Value::as_str)
            .ok_or_else(|| ApiError::bad_field(&format!("{field}.sha256"), "is required"))?;
        let (dir, file_module, file) =
            targets::split_uri_path(&format!("{field}.uri.path"), &uri.path)?;
        let path = root.join(file_module).join(dir).join(file);
        if let Some(j) = written.iter().position(|p| *p == path) {
            return Err(ApiError::bad_field(
                &format!("{field}.uri.path"),
                format!("names the same file as task.files[{j}]"),
            ));
        }
        let bytes = targets::fetched(state, &field, &uri, sha).await?;
        let mode = if dir == "tasks" { 0o755 } else { 0o644 };
        written.push(path.clone());
        write(path, bytes, mode, 0o755).await?;
    }
    if let Some(meta) = task.metadata.as_ref().filter(|m| m.is_object()) {
        let path = root.join(module).join("tasks").join(format!("{name}.json"));
        if !written.contains(&path) {
            write(path, meta.to_string().into_bytes(), 0o644, 0o755).await?;
        }
    }
    Ok(())
}
