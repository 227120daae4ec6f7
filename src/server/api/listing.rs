//! What the server offers, as bolt-server lists it: tasks (`/tasks`) on the
//! server's modulepath and the built-in `ferry` module, YAML and
//! Puppet-language plans (`/plans`) on the modulepath, and module files
//! (`/puppet/v3/file_content/...`) as puppetserver serves them.

use crate::lang::modulepath::Modulepath;
use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, RawQuery, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::server::AppState;
use crate::server::files::blocking;
use crate::server::http::errors::ApiError;
use crate::task::loader::{BUILTIN_MODULE, builtin_file, split_name, valid_segment};
use crate::task::{Loader, TaskError};

/// Tasks on the modulepath and built in (`?environment` is ignored).
#[utoipa::path(get, path = "/tasks",
    responses((status = 200, description = "[{name}]", body = Value)))]
pub async fn list_tasks(State(state): State<Arc<AppState>>) -> Result<Json<Value>, ApiError> {
    let loader = Loader::new(state.config.modulepath.clone());
    blocking(move || {
        let names: Vec<Value> = loader
            .list()
            .iter()
            .map(|t| json!({ "name": shown_name(&t.name) }))
            .collect();
        Ok(Json(Value::Array(names)))
    })
    .await
}

/// One task as bolt-server shows it.
#[utoipa::path(get, path = "/tasks/{module}/{task}",
    params(("module" = String, Path), ("task" = String, Path)),
    responses((status = 200, description = "{name, metadata, files: [{filename, sha256, size_bytes, uri}]}", body = Value)))]
pub async fn show_task(
    State(state): State<Arc<AppState>>,
    Path((module, task)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    let name = format!("{module}::{task}");
    split_name(&name).map_err(|e| ApiError::bad_field("name", e.to_string()))?;
    let loader = Loader::new(state.config.modulepath.clone());
    blocking(move || task_document(&loader, &name)).await
}

/// A task as `GET /tasks/{module}/{task}` shows it (reads its files).
fn task_document(loader: &Loader, name: &str) -> Result<Json<Value>, ApiError> {
    let found = loader.load(name).map_err(|e| match e {
        TaskError::BadName(_) => ApiError::bad_field("name", e.to_string()),
        TaskError::NotFound(..) => ApiError::new(
            StatusCode::NOT_FOUND,
            "ferry/task-not-found",
            format!("task {name} is not on this server's modulepath"),
        ),
        other => unreadable(name, other),
    })?;
    let metadata = Value::Object(found.metadata.raw.clone());
    let mut support = loader
        .shared_files(&found)
        .map_err(|e| unreadable(name, e))?;
    // An implementation whose files cannot be read is one no target can
    // run; the others' files are still the task's.
    for files in loader.implementation_files(&found).into_iter().flatten() {
        for f in files {
            if !support.iter().any(|g| g.relative == f.relative) {
                support.push(f);
            }
        }
    }
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

fn unreadable(name: &str, e: TaskError) -> ApiError {
    tracing::error!("task {name}: {e}");
    ApiError::new(
        StatusCode::UNPROCESSABLE_ENTITY,
        "ferry/task-error",
        format!("task {name} cannot be read on this server (see its log)"),
    )
}

/// Plans on the modulepath, YAML and Puppet-language ones
/// (`?environment` is ignored).
#[utoipa::path(get, path = "/plans",
    responses((status = 200, description = "[{name}]", body = Value)))]
pub async fn list_plans(State(state): State<Arc<AppState>>) -> Result<Json<Value>, ApiError> {
    let modulepath = Modulepath::new(state.config.modulepath.clone());
    blocking(move || {
        let names: Vec<Value> = crate::plan::load::list(&modulepath)
            .into_keys()
            .map(|n| json!({ "name": shown_name(&n) }))
            .collect();
        Ok(Json(Value::Array(names)))
    })
    .await
}

/// A Puppet-language plan's name and parameters (`type`, and `default`
/// as Puppet writes the value when it is a constant).
fn puppet_plan(name: &str, modulepath: &Modulepath) -> Result<Value, ApiError> {
    let info = crate::plan::puppet::show(name, modulepath).map_err(|e| {
        tracing::error!("plan {name}: {e}");
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "ferry/plan-error",
            format!("plan {name} cannot be read on this server (see its log)"),
        )
    })?;
    let mut parameters = serde_json::Map::new();
    for (pname, p) in &info.parameters {
        let mut entry = serde_json::Map::new();
        entry.insert("type".into(), json!(p.ty));
        if let Some(d) = &p.default_value {
            entry.insert("default".into(), json!(d));
        }
        parameters.insert(pname.clone(), Value::Object(entry));
    }
    Ok(json!({ "name": info.name, "description": null, "parameters": parameters }))
}

/// One plan: its description and parameters.
#[utoipa::path(get, path = "/plans/{module}/{plan}",
    params(("module" = String, Path), ("plan" = String, Path)),
    responses((status = 200, description = "{name, description, parameters: {NAME: {type, default?, description?}}}", body = Value)))]
pub async fn show_plan(
    State(state): State<Arc<AppState>>,
    Path((module, plan)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    let name = format!("{module}::{plan}");
    split_name(&name).map_err(|e| {
        ApiError::bad_field("name", e.to_string().replace("task name", "plan name"))
    })?;
    let modulepath = Modulepath::new(state.config.modulepath.clone());
    let mp = modulepath.clone();
    let pp_name = name.clone();
    let puppet = blocking(move || {
        Ok(crate::plan::puppet::find(shown_name(&pp_name), &mp)
            .is_some()
            .then(|| puppet_plan(shown_name(&pp_name), &mp)))
    })
    .await?;
    if let Some(found) = puppet {
        return Ok(Json(found?));
    }
    let found = blocking(move || {
        let path = crate::plan::find(&name, &modulepath).map_err(|_| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "ferry/plan-not-found",
                format!("plan {name} is not on this server's modulepath"),
            )
        })?;
        crate::plan::load(&path, shown_name(&name)).map_err(|e| {
            tracing::error!("plan {name}: {e}");
            ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "ferry/plan-error",
                format!("plan {name} cannot be read on this server (see its log)"),
            )
        })
    })
    .await?;
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

/// A module file's bytes, as puppetserver serves them.
///
/// `GET /puppet/v3/file_content/{mount}/{module}/{path...}`: a module's file,
/// as puppetserver serves it: mount `tasks` from the module's `tasks/`
/// (the built-in `ferry` module's from the binary), `modules` from
/// `files/`, `scripts` from `scripts/` (the same mapping `uri.path` values
/// in `/ssh/*` requests get). `modules` is looked up on the modulepath of
/// `?environment` (default `default-environment`) when it is on the
/// environmentpath, else on the server's; `plugins` and `pluginfacts`
/// (`{mount}/{path}`, every module's `lib/` and `facts.d/`) are Puppet's
/// pluginsync mounts.
#[utoipa::path(get, path = "/puppet/v3/file_content/{mount}/{module}/{path}",
    params(("mount" = String, Path, description = "tasks (MODULE/tasks/, built-in ferry tasks too), modules (MODULE/files/), scripts (MODULE/scripts/), plugins (every module's lib/, no MODULE) or pluginfacts (facts.d/)"),
        ("module" = String, Path),
        ("path" = String, Path, description = "may have several segments, but must stay inside the module")),
    responses((status = 200, description = "The file's bytes", content_type = "application/octet-stream", body = Vec<u8>)))]
pub async fn file_content(
    State(state): State<Arc<AppState>>,
    Path((mount, all)): Path<(String, String)>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let dir = match mount.as_str() {
        "tasks" => "tasks",
        "modules" => "files",
        "scripts" => "scripts",
        "plugins" | "pluginfacts" => {
            return crate::server::api::fileserver::mount_content(
                &state,
                &mount,
                &all,
                query.as_deref(),
            )
            .await;
        }
        _ => {
            return Err(ApiError::bad_field(
                "mount",
                "must be tasks, modules, scripts, plugins or pluginfacts",
            ));
        }
    };
    let Some((module, path)) = all.split_once('/') else {
        return Err(ApiError::bad_field(
            "path",
            "must name a file inside the module",
        ));
    };
    let (module, path) = (module.to_string(), path.to_string());
    if !valid_segment(&module) {
        return Err(ApiError::bad_field("module", "is not a valid module name"));
    }
    if !crate::server::http::limits::stays_inside(&path) {
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
    let found = {
        let modulepath = if mount == "modules" {
            modules_modulepath(&state, query.as_deref()).await
        } else {
            state.config.modulepath.clone()
        };
        let (module, path) = (module.clone(), path.clone());
        blocking(move || {
            let Some(file) = Modulepath::new(modulepath)
                .candidates(&module)
                .map(|root| root.join(dir).join(&path))
                .find(|candidate| candidate.is_file())
            else {
                return Ok(None);
            };
            std::fs::read(file).map(Some).map_err(ApiError::internal)
        })
        .await?
    };
    if let Some(bytes) = found {
        state.metrics.file_served();
        return Ok(octets(bytes));
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

/// Where the `modules` mount looks: the modulepath of the request's
/// environment (`?environment`, default `default-environment`) when it is
/// on the environmentpath, else the server's `modulepath` (bolt-server's
/// callers ask for `production` whether or not the server has one).
async fn modules_modulepath(state: &Arc<AppState>, query: Option<&str>) -> Vec<std::path::PathBuf> {
    let name = form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .find(|(k, v)| k == "environment" && !v.is_empty())
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| state.config.default_environment.clone());
    match crate::server::environments::find(state, &name).await {
        Ok(env) => env.env.modulepath.clone(),
        Err(_) => state.config.modulepath.clone(),
    }
}
