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

use super::AppState;
use super::auth::Identity;
use super::body::{JsonBody, typed};
use super::errors::ApiError;
use super::limits;
use super::runner::{self, JobSpec, Outcome};
use super::scratch;
use super::scrub::Scrub;
use super::targets::{self, FileUri, SshTarget};
use crate::inventory::Target;
use crate::run::{Action, RunOptions, Summary};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CommandRequest {
    command: String,
    target: SshTarget,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckRequest {
    targets: Vec<SshTarget>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptSpec {
    filename: String,
    uri: FileUri,
    sha256: String,
    content: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptRequest {
    script: ScriptSpec,
    #[serde(default)]
    arguments: Vec<String>,
    target: SshTarget,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSpec {
    relative_path: String,
    uri: FileUri,
    sha256: String,
    kind: String,
    content: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UploadRequest {
    files: Vec<FileSpec>,
    #[allow(dead_code)]
    job_id: i64,
    destination: String,
    target: SshTarget,
}

/// A per-request private directory under the cache dir, removed when dropped.
fn scratch(state: &AppState) -> Result<tempfile::TempDir, ApiError> {
    scratch::request_dir(&state.config.cache_dir)
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
        request: super::tasks::redact_secrets(&targets::redact(request), secrets),
        targets,
        action,
        options: RunOptions {
            concurrency: state.config.concurrency,
            overrides: Default::default(),
        },
        scrub: Scrub::for_server(state).with_scratch(dir),
    };
    let (_, handle) = runner::launch(state, spec).await?;
    match handle.await {
        Ok(Outcome::Finished(summary)) => Ok(summary),
        Ok(Outcome::Stopped) => Err(ApiError::new(
            axum::http::StatusCode::CONFLICT,
            "ferry/stopped",
            "the job was stopped before it finished",
        )),
        Ok(Outcome::Failed(why)) => Err(ApiError::internal(format!("the job failed: {why}"))),
        Err(e) => Err(ApiError::internal(e)),
    }
}

/// The one result of a one-target run, as Bolt's JSON. `object` replaces
/// the executor's (a path in the server's scratch directory) when given.
fn only(summary: Summary, object: Option<&str>) -> Result<Json<Value>, ApiError> {
    let mut result = summary
        .results
        .into_iter()
        .next()
        .ok_or_else(|| ApiError::internal("a one-target run returned no result"))?;
    if let Some(object) = object {
        result.object = object.to_string();
    }
    Ok(Json(
        serde_json::to_value(result).map_err(ApiError::internal)?,
    ))
}

/// `POST /ssh/run_command`.
pub async fn run_command(
    State(state): State<Arc<AppState>>,
    Extension(who): Extension<Identity>,
    JsonBody(raw): JsonBody<Value>,
) -> Result<Json<Value>, ApiError> {
    let req: CommandRequest = typed(raw.clone())?;
    let dir = scratch(&state)?;
    let target = req.target.to_target("target", dir.path(), 0)?;
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

/// `POST /ssh/check_node_connections`: connects to each target (as the
/// login user) and reports `{status, result}`.
pub async fn check_node_connections(
    State(state): State<Arc<AppState>>,
    Extension(who): Extension<Identity>,
    JsonBody(raw): JsonBody<Value>,
) -> Result<Json<Value>, ApiError> {
    let req: CheckRequest = typed(raw.clone())?;
    let dir = scratch(&state)?;
    let targets = req
        .targets
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            t.without_run_as()
                .to_target(&format!("targets[{i}]"), dir.path(), i)
        })
        .collect::<Result<Vec<_>, _>>()?;
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

/// `POST /ssh/run_script`.
pub async fn run_script(
    State(state): State<Arc<AppState>>,
    Extension(who): Extension<Identity>,
    JsonBody(raw): JsonBody<Value>,
) -> Result<Json<Value>, ApiError> {
    let req: ScriptRequest = typed(raw.clone())?;
    let dir = scratch(&state)?;
    let target = req.target.to_target("target", dir.path(), 0)?;
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
    scratch::write(&path, &bytes, 0o700, scratch::DIR_MODE)?;
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

/// `POST /ssh/upload_file`: one file goes to `destination`; several (or
/// directories) are laid out by `relative_path` under it.
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
    let dir = scratch(&state)?;
    let target = req.target.to_target("target", dir.path(), 0)?;
    // The upload tree keeps the modes it gives the remote files; it is
    // private below the scratch directory.
    let root = dir.path().join("upload");
    scratch::dir_all(&root, 0o755).map_err(ApiError::internal)?;
    for (i, (f, rel)) in req.files.iter().zip(&paths).enumerate() {
        let field = format!("files[{i}]");
        if f.kind == "directory" {
            scratch::dir_all(&root.join(rel), 0o755).map_err(ApiError::internal)?;
        } else {
            let bytes =
                targets::contents(&state, &field, &f.uri, f.content.as_deref(), &f.sha256).await?;
            scratch::write(&root.join(rel), &bytes, 0o644, 0o755)?;
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
    let dest = req.destination.clone();
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskObject {
    name: String,
    metadata: Option<Value>,
    files: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskRequest {
    task: TaskObject,
    #[serde(default)]
    parameters: serde_json::Map<String, Value>,
    target: SshTarget,
    /// Accepted and range-checked; not used yet.
    timeout: Option<u64>,
}

/// `POST /ssh/run_task`: the task is taken from the server's modulepath
/// by name; the files the request lists must match it by sha256. A task
/// the modulepath lacks is, with `file-server-uri`, laid out from the
/// request's metadata and files fetched by their `uri` (through the file
/// cache, checked by sha256) and loaded from there.
pub async fn run_task(
    State(state): State<Arc<AppState>>,
    Extension(who): Extension<Identity>,
    JsonBody(raw): JsonBody<Value>,
) -> Result<Json<Value>, ApiError> {
    let req: TaskRequest = typed(raw.clone())?;
    if let Some(t) = req.timeout {
        limits::range("timeout", t, 1, limits::MAX_TIMEOUT)?;
    }
    let dir = scratch(&state)?;
    let target = req.target.to_target("target", dir.path(), 0)?;
    let prepared = match super::tasks::prepare(
        &state.config.modulepath,
        "task.name",
        &req.task.name,
        "parameters",
        req.parameters.clone(),
        false,
    ) {
        Err(e) if e.kind == "ferry/task-not-found" && state.file_server.is_some() => {
            let root = dir.path().join("modules");
            lay_out_task(&state, &req.task, &root).await?;
            super::tasks::prepare(
                &[root],
                "task.name",
                &req.task.name,
                "parameters",
                req.parameters,
                false,
            )?
        }
        other => other?,
    };
    super::tasks::check_files(&prepared, &req.task.files)?;
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
        scratch::write(&path, &bytes, mode, 0o755)?;
        written.push(path);
    }
    if let Some(meta) = task.metadata.as_ref().filter(|m| m.is_object()) {
        let path = root.join(module).join("tasks").join(format!("{name}.json"));
        if !written.contains(&path) {
            scratch::write(&path, meta.to_string().as_bytes(), 0o644, 0o755)?;
        }
    }
    Ok(())
}
