//! bolt-server's request pieces: the SSH target object (turned into a ferry
//! [`Target`] with Bolt's option names), and file references (script and
//! upload contents), which ferry takes inline (`content`, base64) or from
//! its `modulepath` for `/puppet/v3/file_content/...` paths, always checked
//! against the request's `sha256`. Secrets stay in memory only; the stored
//! copy of a request is [`redact`]ed.

use std::path::{Component, Path, PathBuf};

use base64::Engine as _;
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use axum::http::StatusCode;

use crate::inventory::{Inventory, Target};
use crate::lang::modulepath::Modulepath;
use crate::server::AppState;
use crate::server::files::blocking;
use crate::server::files::cache::CacheError;
use crate::server::http::errors::ApiError;
use crate::server::http::limits;

/// bolt-server's SSH target object, plus ferry's `known-hosts-content`.
/// Needs exactly one of `password` and `private-key-content`, as
/// bolt-server's schema has it (`oneOf`). Host keys are checked unless
/// `host-key-check` is false: against `known-hosts-content` when given,
/// else the server user's known_hosts.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SshTarget {
    pub hostname: String,
    pub user: String,
    password: Option<String>,
    private_key_content: Option<String>,
    port: Option<u16>,
    connect_timeout: Option<u64>,
    /// Accepted (bolt-server sends it) and range-checked; not used.
    disconnect_timeout: Option<u64>,
    run_as_command: Option<Vec<String>>,
    run_as: Option<String>,
    tmpdir: Option<String>,
    tty: Option<bool>,
    host_key_check: Option<bool>,
    sudo_password: Option<String>,
    #[allow(dead_code)]
    interpreters: Option<Value>,
    #[allow(dead_code)]
    plugin_hooks: Option<Value>,
    known_hosts_content: Option<String>,
}

impl SshTarget {
    /// A ferry target; `field` is where it sits in the request (for errors),
    /// `scratch` a per-request directory for the known_hosts file.
    pub fn to_target(&self, field: &str, scratch: &Path, index: usize) -> Result<Target, ApiError> {
        let host = self.hostname.trim();
        if host.is_empty() || host.contains(['/', '@', ' ']) {
            return Err(ApiError::bad_field(
                &format!("{field}.hostname"),
                "must be a host name or address",
            ));
        }
        if self.user.is_empty() {
            return Err(ApiError::bad_field(
                &format!("{field}.user"),
                "must not be empty",
            ));
        }
        match (&self.password, &self.private_key_content) {
            (None, None) => {
                return Err(ApiError::bad_field(
                    field,
                    "needs password or private-key-content",
                ));
            }
            (Some(_), Some(_)) => {
                return Err(ApiError::bad_field(
                    &format!("{field}.private-key-content"),
                    "give exactly one of password and private-key-content, not both",
                ));
            }
            _ => {}
        }
        let mut target = Inventory::empty().ad_hoc(host);
        let c = &mut target.config;
        c.set("transport", json!("ssh"));
        c.set("ssh.user", json!(self.user));
        c.set("ssh.load-config", json!(false));
        if let Some(p) = &self.password {
            c.set("ssh.password", json!(p));
        }
        if let Some(k) = &self.private_key_content {
            c.set("ssh.private-key", json!({ "key-data": k }));
        }
        if let Some(p) = self.port {
            limits::range(&format!("{field}.port"), p.into(), 1, 65535)?;
            c.set("ssh.port", json!(p));
        }
        if let Some(t) = self.connect_timeout {
            limits::range(
                &format!("{field}.connect-timeout"),
                t,
                1,
                limits::MAX_CONNECT_TIMEOUT,
            )?;
            c.set("ssh.connect-timeout", json!(t));
        }
        if let Some(t) = self.disconnect_timeout {
            limits::range(
                &format!("{field}.disconnect-timeout"),
                t,
                0,
                limits::MAX_CONNECT_TIMEOUT,
            )?;
        }
        if let Some(v) = &self.run_as_command {
            c.set("ssh.run-as-command", json!(v));
        }
        if let Some(v) = &self.run_as {
            c.set("ssh.run-as", json!(v));
        }
        if let Some(v) = &self.tmpdir {
            c.set("ssh.tmpdir", json!(v));
        }
        if let Some(v) = self.tty {
            c.set("ssh.tty", json!(v));
        }
        if let Some(v) = &self.sudo_password {
            c.set("ssh.sudo-password", json!(v));
        }
        match (self.host_key_check, &self.known_hosts_content) {
            (Some(false), _) => c.set("ssh.host-key-check", json!(false)),
            (_, Some(content)) => {
                let path = scratch.join(format!("known_hosts.{index}"));
                crate::server::files::scratch::write_private(&path, content.as_bytes())?;
                c.set("ssh.host-key-check", json!(true));
                c.set("ssh.known-hosts-file", json!(path.display().to_string()));
            }
            (_, None) => c.set("ssh.host-key-check", json!(true)),
        }
        crate::transport::for_target(&target, &Default::default())
            .map_err(|_| ApiError::bad_field(field, "the target's options are not valid"))?;
        Ok(target)
    }

    /// [`SshTarget::to_target`] on the blocking pool (it may write the
    /// known_hosts copy).
    pub async fn resolve(
        self,
        field: &str,
        scratch: &Path,
        index: usize,
    ) -> Result<Target, ApiError> {
        let (field, scratch) = (field.to_string(), scratch.to_path_buf());
        blocking(move || self.to_target(&field, &scratch, index)).await
    }

    /// The same target without run-as, for connection checks.
    pub fn without_run_as(mut self) -> SshTarget {
        self.run_as = None;
        self.sudo_password = None;
        self
    }
}

/// Where a file's contents come from: bolt-server's `uri` (served here from
/// the modulepath) or ferry's inline `content`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FileUri {
    /// `/puppet/v3/file_content/{modules|scripts|tasks}/MODULE/FILE`, served
    /// from the server's modulepath (or fetched from `file-server-uri` into
    /// the file cache).
    pub path: String,
    #[serde(default)]
    #[schema(value_type = Object)]
    pub params: serde_json::Map<String, Value>,
}

/// The bytes of a referenced file, checked against its sha256: inline
/// `content`, else the file on the modulepath, else (with
/// `file-server-uri`) fetched into the file cache.
pub async fn contents(
    state: &AppState,
    field: &str,
    uri: &FileUri,
    content: Option<&str>,
    sha256: &str,
) -> Result<Vec<u8>, ApiError> {
    let bytes = match content {
        Some(b64) => base64::engine::general_purpose::STANDARD
            .decode(b64.trim())
            .map_err(|_| ApiError::bad_field(&format!("{field}.content"), "is not base64"))?,
        None => {
            let path_field = format!("{field}.uri.path");
            let found = {
                let (uri_path, modulepath) = (uri.path.clone(), state.config.modulepath.clone());
                blocking(move || from_modulepath(&path_field, &uri_path, &modulepath)).await
            };
            match found {
                Err(e) if e.kind == "ferry/not-found" && state.file_server.is_some() => {
                    return fetched(state, field, uri, sha256).await;
                }
                other => other?,
            }
        }
    };
    let digest = hex::encode(Sha256::digest(&bytes));
    if !digest.eq_ignore_ascii_case(sha256.trim()) {
        return Err(ApiError::bad_field(
            &format!("{field}.sha256"),
            "does not match the file's contents",
        ));
    }
    Ok(bytes)
}

/// A file from `file-server-uri`, through the cache (which checks its sha256).
pub async fn fetched(
    state: &AppState,
    field: &str,
    uri: &FileUri,
    sha256: &str,
) -> Result<Vec<u8>, ApiError> {
    let Some(server) = &state.file_server else {
        return Err(ApiError::not_found(format!(
            "{field}.uri.path: no such file on this server's modulepath"
        )));
    };
    let path_field = format!("{field}.uri.path");
    let (_, _, file) = split_uri_path(&path_field, &uri.path)?;
    let filename = file.rsplit('/').next().unwrap_or(file);
    let result = state
        .files
        .get(sha256.trim(), filename, || {
            server.get(&uri.path, &uri.params)
        })
        .await;
    result.map_err(|e| match e {
        CacheError::BadName(msg) => {
            let which = if msg.starts_with("sha256") {
                "sha256"
            } else {
                "uri.path"
            };
            ApiError::bad_field(&format!("{field}.{which}"), msg)
        }
        CacheError::Mismatch => ApiError::new(
            StatusCode::BAD_REQUEST,
            "ferry/file-error",
            format!("{field}.sha256: does not match the file the file server has"),
        )
        .with_details(json!({ "field": format!("{field}.sha256") })),
        CacheError::Fetch(msg) => {
            tracing::warn!("{field}: fetching {}: {msg}", uri.path);
            ApiError::new(
                StatusCode::BAD_GATEWAY,
                "ferry/file-error",
                format!(
                    "{field}: cannot fetch {} from the file server: {msg}",
                    uri.path
                ),
            )
        }
        CacheError::Io(e) => {
            tracing::error!("{field}: file cache: {e}");
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "ferry/file-error",
                format!("{field}: the file cache failed; see the server's log"),
            )
        }
    })
}

/// `/puppet/v3/file_content/<mount>/<module>/<rest>` split and checked:
/// the module directory (`files`, `scripts`, `tasks`), module, file.
pub fn split_uri_path<'a>(
    field: &str,
    path: &'a str,
) -> Result<(&'static str, &'a str, &'a str), ApiError> {
    let rest = path
        .strip_prefix("/puppet/v3/file_content/")
        .ok_or_else(|| {
            ApiError::bad_field(
                field,
                "must start with /puppet/v3/file_content/ (or send `content`)",
            )
        })?;
    let mut parts = rest.splitn(3, '/');
    let (mount, module, file) = match (parts.next(), parts.next(), parts.next()) {
        (Some(m), Some(module), Some(file)) if !module.is_empty() && !file.is_empty() => {
            (m, module, file)
        }
        _ => {
            return Err(ApiError::bad_field(
                field,
                "must name a mount, a module and a file",
            ));
        }
    };
    let dir = match mount {
        "modules" => "files",
        "scripts" => "scripts",
        "tasks" => "tasks",
        _ => {
            return Err(ApiError::bad_field(
                field,
                "mount must be modules, scripts or tasks",
            ));
        }
    };
    if module.contains(['.', '\\', '/'])
        || Path::new(file)
            .components()
            .any(|c| !matches!(c, Component::Normal(_)))
        || file.contains(['\\', '?', '#'])
    {
        return Err(ApiError::bad_field(field, "must not leave the module"));
    }
    Ok((dir, module, file))
}

/// `/puppet/v3/file_content/<mount>/<module>/<rest>` from the modulepath:
/// mounts `modules` (the module's `files/`), `scripts`, `tasks`.
fn from_modulepath(field: &str, path: &str, modulepath: &[PathBuf]) -> Result<Vec<u8>, ApiError> {
    let (dir, module, file) = split_uri_path(field, path)?;
    let relative = Path::new(file);
    for root in Modulepath::new(modulepath.to_vec()).candidates(module) {
        let candidate = root.join(dir).join(relative);
        if candidate.is_file() {
            return std::fs::read(&candidate).map_err(ApiError::internal);
        }
    }
    Err(ApiError::not_found(format!(
        "{field}: no such file on this server's modulepath"
    )))
}

/// A request's JSON for the store: secrets replaced, inline contents dropped.
pub fn redact(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let hidden = [
                        "password",
                        "private-key-content",
                        "passphrase",
                        "token",
                        "secret",
                    ]
                    .iter()
                    .any(|w| k.contains(w));
                    let v = if hidden {
                        json!(crate::inventory::REDACTED)
                    } else if k == "content" {
                        json!("[omitted]")
                    } else {
                        redact(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(redact).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_requests_hold_no_secrets() {
        let request = json!({
            "command": "id",
            "target": {"hostname": "h", "password": "p1", "sudo-password": "p2",
                "private-key-content": "KEY", "known-hosts-content": "kh"},
            "targets": [{"password": "p3"}],
            "script": {"content": "Ym9keQ=="},
        });
        let stored = redact(&request).to_string();
        for secret in ["p1", "p2", "p3", "KEY", "Ym9keQ=="] {
            assert!(!stored.contains(secret), "{secret} in {stored}");
        }
        assert!(stored.contains("\"known-hosts-content\":\"kh\""));
    }

    #[test]
    fn modulepath_paths_stay_inside_modules() {
        let dir = tempfile::tempdir().expect("dir");
        let root = dir.path().to_path_buf();
        std::fs::create_dir_all(root.join("m/files")).expect("mkdir");
        std::fs::write(root.join("m/files/a.txt"), "A").expect("write");
        let mp = [root];
        let get = |p: &str| from_modulepath("f", p, &mp);
        assert_eq!(
            get("/puppet/v3/file_content/modules/m/a.txt").ok(),
            Some(b"A".to_vec())
        );
        for bad in [
            "/puppet/v3/file_content/modules/m/../m/files/a.txt",
            "/puppet/v3/file_content/modules/../etc/passwd",
            "/puppet/v3/file_content/modules/m//etc/passwd",
            "/puppet/v3/file_content/other/m/a.txt",
            "/etc/passwd",
        ] {
            assert!(get(bad).is_err(), "{bad} was served");
        }
    }
}
