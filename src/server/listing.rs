//! What the server offers, as bolt-server lists it: tasks (`/tasks`) on the
//! server's modulepath and the built-in `ferry` module, and YAML plans
//! (`/plans`) on the modulepath, and module files
//! (`/puppet/v3/file_content/...`) as puppetserver serves them.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::AppState;
use super::errors::ApiError;
use crate::task::loader::{BUILTIN_MODULE, builtin_file, split_name, valid_segment};
use crate::task::{Loader, Task, TaskError};

/// `GET /tasks`: `[{name}]`, every public task.
pub async fn list_tasks(State(state): State<Arc<AppState>>) -> Json<Value> {
    let loader = Loader::new(state.config.modulepath.clone());
    let names: Vec<Value> = loader
        .list()
        .iter()
        .map(|t| json!({ "name": shown_name(&t.name) }))
        .collect();
    Json(Value::Array(names))
}

/// `GET /tasks/{module}/{task}`: `{name, metadata, files}`.
pub async fn show_task(
    State(state): State<Arc<AppState>>,
    Path((module, task)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    let name = format!("{module}::{task}");
    split_name(&name).map_err(|e| ApiError::bad_field("name", e.to_string()))?;
    let loader = Loader::new(state.config.modulepath.clone());
    let found = loader.load(&name).map_err(|e| match e {
        TaskError::BadName(_) => ApiError::bad_field("name", e.to_string()),
        TaskError::NotFound(..) => ApiError::new(
            StatusCode::NOT_FOUND,
            "ferry/task-not-found",
            format!("task {name} is not on this server's modulepath"),
        ),
        other => unreadable(&name, other),
    })?;
    let metadata = raw_metadata(&found).map_err(|e| unreadable(&name, e))?;
    let mut listed = found.metadata.files.clone();
    for i in &found.metadata.implementations {
        listed.extend(i.files.iter().cloned());
    }
    let support = loader
        .support_files(&found, &listed)
        .map_err(|e| unreadable(&name, e))?;
    let files: Vec<Value> = found
        .executables
        .values()
        .chain(support.iter())
        .filter_map(|f| {
            let uri = file_uri(&f.relative)?;
            let filename = if f.relative.contains("/tasks/") {
                f.relative
                    .rsplit('/')
                    .next()
                    .unwrap_or_default()
                    .to_string()
            } else {
                f.relative.clone()
            };
            Some(json!({
                "filename": filename,
                "sha256": f.sha256,
                "size_bytes": f.bytes.len(),
                "uri": { "path": uri, "params": { "environment": "production" } },
            }))
        })
        .collect();
    Ok(Json(
        json!({ "name": shown_name(&found.name), "metadata": metadata, "files": files }),
    ))
}

/// How Bolt names a task: `mod` for `mod::init`.
fn shown_name(name: &str) -> &str {
    name.strip_suffix("::init").unwrap_or(name)
}

/// The file_content path for a task file `<module>/<dir>/<rest>`; only
/// `tasks/` and `files/` have a mount.
fn file_uri(relative: &str) -> Option<String> {
    let (module, rest) = relative.split_once('/')?;
    let (dir, rest) = rest.split_once('/')?;
    let mount = match dir {
        "tasks" => "tasks",
        "files" => "modules",
        _ => return None,
    };
    Some(format!("/puppet/v3/file_content/{mount}/{module}/{rest}"))
}

/// The task's metadata JSON as its file has it (`{}` when it has none).
fn raw_metadata(task: &Task) -> Result<Value, TaskError> {
    let text = if let Some(name) = task.source.strip_prefix("<built-in>/") {
        match builtin_file(name) {
            Some(bytes) => String::from_utf8_lossy(bytes).into_owned(),
            None => return Ok(json!({})),
        }
    } else {
        let path = std::path::Path::new(&task.source);
        if !path.is_file() {
            return Ok(json!({}));
        }
        std::fs::read_to_string(path).map_err(|e| TaskError::Io(format!("{}: {e}", task.source)))?
    };
    serde_json::from_str(&text).map_err(|e| TaskError::Metadata {
        path: task.source.clone(),
        message: e.to_string(),
    })
}

fn unreadable(name: &str, e: TaskError) -> ApiError {
    tracing::error!("task {name}: {e}");
    ApiError::new(
        StatusCode::UNPROCESSABLE_ENTITY,
        "ferry/task-error",
        format!("task {name} cannot be read on this server (see its log)"),
    )
}

/// `GET /plans`: `[{name}]`, every YAML plan on the modulepath.
pub async fn list_plans(State(state): State<Arc<AppState>>) -> Json<Value> {
    let mut names = std::collections::BTreeSet::new();
    for dir in &state.config.modulepath {
        let Ok(modules) = std::fs::read_dir(dir) else {
            continue;
        };
        for m in modules.flatten() {
            let module = m.file_name().to_string_lossy().into_owned();
            let Ok(plans) = std::fs::read_dir(m.path().join("plans")) else {
                continue;
            };
            for p in plans.flatten() {
                let file_name = p.file_name().to_string_lossy().into_owned();
                let Some(stem) = file_name.strip_suffix(".yaml") else {
                    continue;
                };
                let name = format!("{module}::{stem}");
                if split_name(&name).is_ok() {
                    names.insert(shown_name(&name).to_string());
                }
            }
        }
    }
    Json(Value::Array(
        names.into_iter().map(|n| json!({ "name": n })).collect(),
    ))
}

/// `GET /plans/{module}/{plan}`: `{name, description, parameters}`.
pub async fn show_plan(
    State(state): State<Arc<AppState>>,
    Path((module, plan)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    let name = format!("{module}::{plan}");
    split_name(&name).map_err(|e| {
        ApiError::bad_field("name", e.to_string().replace("task name", "plan name"))
    })?;
    let not_found = || {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "ferry/plan-not-found",
            format!("plan {name} is not on this server's modulepath"),
        )
    };
    let path = crate::plan::find(&name, &state.config.modulepath).map_err(|_| not_found())?;
    let found = crate::plan::load(&path, shown_name(&name)).map_err(|e| {
        tracing::error!("plan {name}: {e}");
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "ferry/plan-error",
            format!("plan {name} cannot be read on this server (see its log)"),
        )
    })?;
    let mut parameters = serde_json::Map::new();
    for (pname, p) in &found.parameters {
        let mut entry = serde_json::Map::new();
        entry.insert("type".into(), json!(p.ty.as_deref().unwrap_or("Any")));
        if let Some(d) = &p.default {
            entry.insert("default".into(), d.clone());
        }
        if let Some(d) = &p.description {
            entry.insert("description".into(), json!(d));
        }
        parameters.insert(pname.clone(), Value::Object(entry));
    }
    Ok(Json(json!({
        "name": found.name,
        "description": found.description,
        "parameters": parameters,
    })))
}

/// `GET /puppet/v3/file_content/{mount}/{module}/{path...}`: a module's file,
/// as puppetserver serves it: mount `tasks` from the module's `tasks/`
/// (the built-in `ferry` module's from the binary), `modules` from
/// `files/`, `scripts` from `scripts/` (the same mapping `uri.path` values
/// in `/ssh/*` requests get).
pub async fn file_content(
    State(state): State<Arc<AppState>>,
    Path((mount, module, path)): Path<(String, String, String)>,
) -> Result<Response, ApiError> {
    let dir = match mount.as_str() {
        "tasks" => "tasks",
        "modules" => "files",
        "scripts" => "scripts",
        _ => {
            return Err(ApiError::bad_field(
                "mount",
                "must be tasks, modules or scripts",
            ));
        }
    };
    if !valid_segment(&module) {
        return Err(ApiError::bad_field("module", "is not a valid module name"));
    }
    let escapes = path
        .split('/')
        .any(|seg| seg.is_empty() || seg == "." || seg == ".." || seg.contains('\\'));
    if escapes {
        return Err(ApiError::bad_field(
            "path",
            "must stay inside the module (no empty, '.' or '..' segments)",
        ));
    }
    if path.contains('\0') {
        return Err(ApiError::bad_field("path", "must not contain a NUL byte"));
    }
    let octets = |bytes: Vec<u8>| {
        ([(header::CONTENT_TYPE, "application/octet-stream")], bytes).into_response()
    };
    for root in &state.config.modulepath {
        let candidate = root.join(&module).join(dir).join(&path);
        if candidate.is_file() {
            state.metrics.file_served();
            return std::fs::read(&candidate)
                .map(octets)
                .map_err(ApiError::internal);
        }
    }
    if mount == "tasks"
        && module == BUILTIN_MODULE
        && let Some(bytes) = builtin_file(&path)
    {
        return Ok(octets(bytes.to_vec()));
    }
    Err(ApiError::not_found(format!(
        "no file {mount}/{module}/{path} on this server's modulepath"
    )))
}
