//! Puppet's file server for agents: `GET /puppet/v3/file_metadata/:mount/*`,
//! `/puppet/v3/file_metadatas/:mount/*` and `/puppet/v3/file_content/:mount/*`
//! for the mounts pluginsync and file sources use, looked up on the
//! modulepath of the request's `environment` (default
//! `default-environment`; one not on the environmentpath is a 404 with
//! Puppet's "Could not find environment", which the agent reads as
//! "skipping initial pluginsync"):
//!
//! - `plugins`: every module's `lib/`, merged (a path the first module
//!   has wins), as Puppet's plugins mount;
//! - `pluginfacts`: every module's `facts.d/`, merged the same way;
//! - `modules`: `MODULE/files/...` (`puppet:///modules/MODULE/...`).
//!
//! Metadata is Puppet's (`path`, `relative_path`, `links`, `owner`,
//! `group`, `mode`, `checksum {type, value}`, `type`, `destination`);
//! `path` is the file's place in the mount (`/plugins/facter/x.rb`), never
//! a server path. A search recurses as asked (`recurse`, `recurselimit`,
//! `ignore`), the mount's top directory first as `.`; with no module
//! holding the mount's directory it is that directory alone, as Puppet
//! answers. `file_content` for the `tasks` and `scripts` mounts (bolt-
//! server's) stays in `listing`.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path as FsPath, PathBuf};
use std::sync::Arc;

use axum::extract::{Path, RawQuery, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use sha2::Digest;

use crate::lang::modulepath::Modulepath;
use crate::server::AppState;
use crate::server::api::puppet::{AgentError, environment_error, no_nul};
use crate::server::environments;
use crate::server::files::blocking;
use crate::server::http::errors::ApiError;
use crate::task::loader::valid_segment;

/// Most entries one search answers.
const MAX_ENTRIES: usize = 100_000;

/// A file-server mount an agent may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mount {
    Plugins,
    PluginFacts,
    Modules,
}

impl Mount {
    fn parse(name: &str) -> Result<Mount, ApiError> {
        match name {
            "plugins" => Ok(Mount::Plugins),
            "pluginfacts" => Ok(Mount::PluginFacts),
            "modules" => Ok(Mount::Modules),
            _ => Err(ApiError::bad_field(
                "mount",
                "must be plugins, pluginfacts or modules",
            )),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Mount::Plugins => "plugins",
            Mount::PluginFacts => "pluginfacts",
            Mount::Modules => "modules",
        }
    }
}

/// The query parameters the agent sends (repeated `ignore` kept).
#[derive(Debug, Default)]
struct Params {
    environment: Option<String>,
    recurse: bool,
    recurselimit: Option<usize>,
    ignore: Vec<String>,
    follow: bool,
    checksum: Checksum,
}

#[derive(Debug, Default, Clone, Copy)]
enum Checksum {
    #[default]
    Sha256,
    Sha1,
    Sha224,
    Sha384,
    Sha512,
    Mtime,
    Ctime,
}

impl Checksum {
    /// Puppet's names; one ferry does not compute (md5) is sha256.
    fn parse(name: &str) -> Checksum {
        match name {
            "sha1" => Checksum::Sha1,
            "sha224" => Checksum::Sha224,
            "sha384" => Checksum::Sha384,
            "sha512" => Checksum::Sha512,
            "mtime" => Checksum::Mtime,
            "ctime" => Checksum::Ctime,
            _ => Checksum::Sha256,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Checksum::Sha256 => "sha256",
            Checksum::Sha1 => "sha1",
            Checksum::Sha224 => "sha224",
            Checksum::Sha384 => "sha384",
            Checksum::Sha512 => "sha512",
            Checksum::Mtime => "mtime",
            Checksum::Ctime => "ctime",
        }
    }
}

fn params(query: Option<&str>) -> Result<Params, ApiError> {
    let mut p = Params::default();
    for (k, v) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        no_nul(&k, &v)?;
        match k.as_ref() {
            "environment" if !v.is_empty() => {
                crate::catalog::environment::check_name(&v)
                    .map_err(|e| ApiError::bad_field("environment", e.to_string()))?;
                p.environment = Some(v.into_owned());
            }
            "recurse" => p.recurse = matches!(v.as_ref(), "true" | "remote" | "inf" | "yes"),
            "recurselimit" if !v.is_empty() && v != "infinite" => {
                p.recurselimit = Some(v.parse().map_err(|_| {
                    ApiError::bad_field("recurselimit", "must be a number or infinite")
                })?);
            }
            "ignore" => p.ignore.extend(v.split_whitespace().map(str::to_string)),
            "links" => p.follow = v == "follow",
            "checksum_type" => p.checksum = Checksum::parse(&v),
            _ => {}
        }
    }
    Ok(p)
}

/// A path inside a mount: no empty, `.` or `..` segment, no backslash.
fn check_path(rel: &str) -> Result<(), ApiError> {
    if !crate::server::http::limits::stays_inside(rel) {
        return Err(ApiError::bad_field(
            "path",
            "must stay inside the mount (no empty, '.' or '..' segments)",
        ));
    }
    no_nul("path", rel)
}

/// The modules on a modulepath, each name once (the first wins).
fn modules(modulepath: &Modulepath) -> Vec<PathBuf> {
    let mut seen = HashSet::new();
    modulepath
        .modules()
        .into_iter()
        .filter(|(name, path)| valid_segment(name) && path.is_dir())
        .filter(|(name, _)| seen.insert(name.clone()))
        .map(|(_, path)| path)
        .collect()
}

/// The directories `rel` is looked up in, and `rel` inside them.
fn roots(
    mount: Mount,
    rel: &str,
    modulepath: &Modulepath,
) -> Result<(Vec<PathBuf>, String), ApiError> {
    match mount {
        Mount::Plugins | Mount::PluginFacts => {
            let sub = if mount == Mount::Plugins {
                "lib"
            } else {
                "facts.d"
            };
            let dirs = modules(modulepath)
                .into_iter()
                .map(|m| m.join(sub))
                .filter(|d| d.is_dir())
                .collect();
            Ok((dirs, rel.to_string()))
        }
        Mount::Modules => {
            let (module, rest) = rel.split_once('/').unwrap_or((rel, ""));
            if !valid_segment(module) {
                return Err(ApiError::bad_field(
                    "path",
                    "does not start with a valid module name",
                ));
            }
            let dir = modulepath
                .candidates(module)
                .find(|d| d.is_dir())
                .map(|d| d.join("files"));
            Ok((dir.into_iter().collect(), rest.to_string()))
        }
    }
}

fn join(root: &FsPath, rel: &str) -> PathBuf {
    if rel.is_empty() {
        root.to_path_buf()
    } else {
        root.join(rel)
    }
}

/// Ruby's `Time#to_s` of a Unix time, as Puppet writes `{ctime}` values.
fn ruby_time(secs: i64) -> String {
    chrono::DateTime::from_timestamp(secs, 0)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S +0000").to_string())
        .unwrap_or_default()
}

fn digest(kind: Checksum, bytes: &[u8]) -> String {
    match kind {
        Checksum::Sha1 => hex::encode(sha1::Sha1::digest(bytes)),
        Checksum::Sha224 => hex::encode(sha2::Sha224::digest(bytes)),
        Checksum::Sha384 => hex::encode(sha2::Sha384::digest(bytes)),
        Checksum::Sha512 => hex::encode(sha2::Sha512::digest(bytes)),
        _ => hex::encode(sha2::Sha256::digest(bytes)),
    }
}

/// One file's metadata, or `None` for a kind Puppet cannot manage.
fn metadata(
    full: &FsPath,
    shown: &str,
    relative: Option<&str>,
    p: &Params,
) -> std::io::Result<Option<Value>> {
    let meta = if p.follow {
        std::fs::metadata(full)?
    } else {
        std::fs::symlink_metadata(full)?
    };
    let ft = meta.file_type();
    let (kind, checksum_type, value, destination) = if ft.is_dir() {
        ("directory", Checksum::Ctime, ruby_time(meta.ctime()), None)
    } else if ft.is_symlink() {
        let target = std::fs::read_link(full)?.display().to_string();
        let sum = match std::fs::read(full) {
            Ok(bytes) => digest(p.checksum, &bytes),
            Err(_) => String::new(),
        };
        ("link", p.checksum, sum, Some(target))
    } else if ft.is_file() {
        let value = match p.checksum {
            Checksum::Mtime => ruby_time(meta.mtime()),
            Checksum::Ctime => ruby_time(meta.ctime()),
            kind => digest(kind, &std::fs::read(full)?),
        };
        ("file", p.checksum, value, None)
    } else {
        return Ok(None);
    };
    Ok(Some(json!({
        "path": shown,
        "relative_path": relative,
        "links": if p.follow { "follow" } else { "manage" },
        "owner": meta.uid(),
        "group": meta.gid(),
        "mode": meta.mode() & 0o7777,
        "checksum": { "type": checksum_type.name(), "value": format!("{{{}}}{value}", checksum_type.name()) },
        "type": kind,
        "destination": destination,
    })))
}

/// The modulepath of the request's environment (404 when it is not on the
/// environmentpath, as Puppet's file server answers).
async fn env_modulepath(state: &Arc<AppState>, p: &Params) -> Result<Modulepath, ApiError> {
    let name = p
        .environment
        .clone()
        .unwrap_or_else(|| state.config.default_environment.clone());
    match environments::find(state, &name).await {
        Ok(env) => Ok(Modulepath::new(env.env.modulepath.clone())),
        Err(e) if e.is_not_found() => Err(ApiError::not_found(format!(
            "Could not find environment '{name}'"
        ))),
        Err(e) => Err(environment_error(e)),
    }
}

/// Splits `MOUNT/PATH` (the path may be empty for a search).
fn split(all: &str) -> Result<(Mount, String), ApiError> {
    let (mount, rel) = all.split_once('/').unwrap_or((all, ""));
    let mount = Mount::parse(mount)?;
    let rel = rel.trim_end_matches('/');
    if !rel.is_empty() {
        check_path(rel)?;
    }
    Ok((mount, rel.to_string()))
}

/// One file's metadata, from the first module that has it.
#[utoipa::path(get, path = "/puppet/v3/file_metadata/{mount}/{path}",
    params(("mount" = String, Path, description = "plugins, pluginfacts or modules"),
        ("path" = String, Path), ("environment" = Option<String>, Query)),
    responses((status = 200, description = "Puppet's file metadata", body = Value)))]
pub async fn file_metadata(
    State(state): State<Arc<AppState>>,
    Path(all): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, AgentError> {
    let p = params(query.as_deref())?;
    let (mount, rel) = split(&all)?;
    let modulepath = env_modulepath(&state, &p).await?;
    let found = blocking(move || {
        let (dirs, inside) = roots(mount, &rel, &modulepath)?;
        let shown = format!("/{}/{rel}", mount.name());
        for root in dirs {
            let full = join(&root, &inside);
            if full.symlink_metadata().is_ok() {
                return metadata(&full, shown.trim_end_matches('/'), None, &p)
                    .map_err(ApiError::internal);
            }
        }
        Ok(None)
    })
    .await?;
    match found {
        Some(m) => Ok(json_ok(&m)),
        None => Err(ApiError::not_found(format!("Could not find file_metadata {all}")).into()),
    }
}

/// Metadata of a mount's file and, when asked to recurse, everything
/// under it (merged across modules for `plugins` and `pluginfacts`).
#[utoipa::path(get, path = "/puppet/v3/file_metadatas/{mount}/{path}",
    params(("mount" = String, Path, description = "plugins, pluginfacts or modules"),
        ("path" = String, Path), ("environment" = Option<String>, Query),
        ("recurse" = Option<String>, Query), ("ignore" = Option<String>, Query)),
    responses((status = 200, description = "[file metadata]", body = Value)))]
pub async fn file_metadatas(
    State(state): State<Arc<AppState>>,
    Path(all): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, AgentError> {
    let p = params(query.as_deref())?;
    let (mount, rel) = split(&all)?;
    let modulepath = env_modulepath(&state, &p).await?;
    let found = blocking(move || search(mount, &rel, &modulepath, &p)).await?;
    match found {
        Some(list) => Ok(json_ok(&Value::Array(list))),
        None => Err(ApiError::not_found(format!("Could not find file_metadatas {all}")).into()),
    }
}

fn search(
    mount: Mount,
    rel: &str,
    modulepath: &Modulepath,
    p: &Params,
) -> Result<Option<Vec<Value>>, ApiError> {
    let (dirs, inside) = roots(mount, rel, modulepath)?;
    let shown = format!("/{}/{rel}", mount.name());
    let shown = shown.trim_end_matches('/');
    let bases: Vec<PathBuf> = dirs
        .iter()
        .map(|d| join(d, &inside))
        .filter(|b| b.symlink_metadata().is_ok())
        .collect();
    if bases.is_empty() {
        if rel.is_empty() && mount != Mount::Modules {
            // No module has the mount's directory: Puppet answers with the
            // modulepath's directory alone, not recursed.
            return Ok(Some(vec![json!({
                "path": shown, "relative_path": ".", "links": "manage",
                "owner": 0, "group": 0, "mode": 0o755,
                "checksum": { "type": "ctime", "value": format!("{{ctime}}{}", ruby_time(chrono::Utc::now().timestamp())) },
                "type": "directory", "destination": null,
            })]));
        }
        return Ok(None);
    }
    let ignored = |name: &str| {
        p.ignore
            .iter()
            .any(|pat| wildmatch::WildMatch::new(pat).matches(name))
    };
    let mut seen: HashSet<String> = HashSet::new();
    let mut out = Vec::new();
    let top = bases
        .first()
        .map(PathBuf::as_path)
        .unwrap_or(FsPath::new("/"));
    if let Some(m) = metadata(top, shown, Some("."), p).map_err(ApiError::internal)? {
        out.push(m);
    }
    seen.insert(".".into());
    if !p.recurse {
        return Ok(Some(out));
    }
    for base in &bases {
        // Breadth first, as Puppet's fileset walks.
        let mut queue: std::collections::VecDeque<(PathBuf, String, usize)> =
            std::collections::VecDeque::from([(base.clone(), String::new(), 0)]);
        while let Some((dir, prefix, depth)) = queue.pop_front() {
            if p.recurselimit.is_some_and(|limit| depth >= limit) {
                continue;
            }
            let is_dir = if p.follow {
                dir.is_dir()
            } else {
                dir.symlink_metadata().is_ok_and(|m| m.is_dir())
            };
            if !is_dir {
                continue;
            }
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut names: Vec<String> = entries
                .filter_map(Result::ok)
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| !ignored(n))
                .collect();
            names.sort();
            for name in names {
                let relative = if prefix.is_empty() {
                    name.clone()
                } else {
                    format!("{prefix}/{name}")
                };
                let full = dir.join(&name);
                if seen.insert(relative.clone()) {
                    if out.len() >= MAX_ENTRIES {
                        return Err(ApiError::bad_field(
                            "recurse",
                            format!("more than {MAX_ENTRIES} files would be listed"),
                        ));
                    }
                    let file_shown = format!("{shown}/{relative}");
                    if let Some(m) = metadata(&full, &file_shown, Some(&relative), p)
                        .map_err(ApiError::internal)?
                    {
                        out.push(m);
                    }
                }
                queue.push_back((full, relative, depth + 1));
            }
        }
    }
    Ok(Some(out))
}

fn json_ok(v: &Value) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], v.to_string()).into_response()
}

/// A `plugins`, `pluginfacts` or `modules` file's bytes, from the
/// request's environment (`file_content` of the other mounts is
/// `listing`'s).
pub async fn mount_content(
    state: &Arc<AppState>,
    mount: &str,
    rel: &str,
    query: Option<&str>,
) -> Result<Response, ApiError> {
    let mount = Mount::parse(mount)?;
    check_path(rel)?;
    let p = params(query)?;
    let modulepath = env_modulepath(state, &p).await?;
    let rel_owned = rel.to_string();
    let found = blocking(move || {
        let (dirs, inside) = roots(mount, &rel_owned, &modulepath)?;
        if inside.is_empty() {
            return Ok(None);
        }
        for root in dirs {
            let full = root.join(&inside);
            if full.is_file() {
                return std::fs::read(full).map(Some).map_err(ApiError::internal);
            }
        }
        Ok(None)
    })
    .await?;
    match found {
        Some(bytes) => {
            state.metrics.file_served();
            Ok(([(header::CONTENT_TYPE, "application/octet-stream")], bytes).into_response())
        }
        None => Err(ApiError::not_found(format!(
            "Could not find file_content {}/{rel}",
            mount.name()
        ))),
    }
}
