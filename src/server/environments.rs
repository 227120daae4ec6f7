//! Where the Puppet code the server compiles comes from, as a Puppet
//! server finds it: directory environments on the `environmentpath`, each
//! with its `environment.conf` applied (`catalog::environment`), kept in
//! [`Environments`] for their `environment_timeout` (environment.conf's,
//! else the server's `environment-timeout`; 0 reads the environment again
//! for every compile). A kept environment keeps its code too: its
//! compiles read files through a snapshot ([`Snapshot`]) taken as they are
//! first read, so a change on disk is seen once the timeout has passed,
//! as in Puppet; environments share nothing but the parser's cache of
//! file texts (keyed by path and whole text). An empty environment name
//! is the server's `default-environment` unless the request enforces its
//! environment (ACE's and the orchestrator's rule). From an environment
//! this module also makes the apply job ACE's `/execute_catalog` runs
//! (facts gathered by the built-in `ferry::facts` task, a catalog compiled
//! per node, applied over SSH), and the orchestrator's deploy jobs' (the
//! same facts, each catalog from the job's provider).
//! Puppet's debugging switches (`debug`, `trace`, `evaltrace`) are
//! accepted and checked, not used.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::apply::ApplyOptions;
use crate::catalog::Modulepath;
use crate::catalog::environment::{self as env_conf, Timeout};
use crate::catalog::{CompileOptions, ManifestSource};
use crate::lang::loader::{FsLoader, Loader};
use crate::run::actions::apply::{ApplyJob, CatalogProvider, CatalogSource};
use crate::server::AppState;
use crate::server::http::errors::ApiError;

pub use crate::catalog::environment::{DEFAULT_ENVIRONMENT, Environment};

/// Why a request's environment cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum EnvironmentError {
    #[error("must name an environment when enforce_environment is true")]
    Required,
    /// A bad name, an environment not on the environmentpath, or a bad
    /// environment.conf.
    #[error(transparent)]
    Env(#[from] env_conf::EnvironmentError),
    /// The apply could not be prepared: the built-in facts task, or the
    /// thread preparing it (a server fault).
    #[error("cannot prepare the apply: {0}")]
    Internal(String),
}

impl EnvironmentError {
    /// The environment is not on the environmentpath.
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            EnvironmentError::Env(env_conf::EnvironmentError::NotFound(_))
        )
    }
}

/// The environment a request asks for: its name checked as Puppet checks
/// it; an empty one is `default` unless `enforce` is set.
pub fn requested(name: &str, enforce: bool, default: &str) -> Result<String, EnvironmentError> {
    if name.is_empty() {
        return if enforce {
            Err(EnvironmentError::Required)
        } else {
            Ok(default.to_string())
        };
    }
    env_conf::check_name(name)?;
    Ok(name.to_string())
}

/// Why `config_version` gave no version.
#[derive(Debug, Clone, thiserror::Error)]
#[error("Execution of config_version command `{command}` failed: {message}")]
pub struct ConfigVersionError {
    pub command: String,
    pub message: String,
}

/// An environment as the server keeps it.
pub struct Loaded {
    pub env: Environment,
    /// What its compiles read files through.
    pub loader: Arc<dyn Loader + Send + Sync>,
    loaded_at: Instant,
    ttl: Option<Duration>,
    version: OnceLock<Result<Option<String>, ConfigVersionError>>,
}

impl Loaded {
    /// The output of the environment's `config_version` command (run once
    /// per loaded environment, as Puppet runs it once per environment
    /// instance), or `None` without one (file-system work).
    pub fn config_version(&self) -> Result<Option<String>, ConfigVersionError> {
        self.version
            .get_or_init(|| match &self.env.config_version {
                None => Ok(None),
                Some(command) => run_config_version(command, &self.env.dir).map(Some),
            })
            .clone()
    }

    fn fresh(&self) -> bool {
        self.ttl.is_none_or(|ttl| self.loaded_at.elapsed() < ttl)
    }
}

/// How long `config_version` may run.
const CONFIG_VERSION_TIMEOUT: Duration = Duration::from_secs(60);

/// Runs `command` (one program, no shell, as Puppet runs it) in the
/// environment's directory; its standard output, trimmed, is the version.
pub fn run_config_version(command: &str, dir: &Path) -> Result<String, ConfigVersionError> {
    let fail = |message: String| ConfigVersionError {
        command: command.to_string(),
        message,
    };
    let mut child = std::process::Command::new(command)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| fail(e.to_string()))?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() > CONFIG_VERSION_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(fail(format!(
                    "did not finish within {} seconds",
                    CONFIG_VERSION_TIMEOUT.as_secs()
                )));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(fail(e.to_string())),
        }
    }
    let out = child.wait_with_output().map_err(|e| fail(e.to_string()))?;
    if !out.status.success() {
        return Err(fail(format!("it exited with {}", out.status)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The server's environments, each kept for its timeout.
pub struct Environments {
    path: Vec<PathBuf>,
    base: Vec<PathBuf>,
    default_timeout: Timeout,
    kept: Mutex<HashMap<String, Arc<Loaded>>>,
}

impl Environments {
    pub fn new(path: Vec<PathBuf>, base: Vec<PathBuf>, default_timeout: Timeout) -> Environments {
        Environments {
            path,
            base,
            default_timeout,
            kept: Mutex::new(HashMap::new()),
        }
    }

    /// The environment `name`: the kept one while its timeout lasts, else
    /// read again (file-system work: call it off the async threads).
    pub fn get(&self, name: &str) -> Result<Arc<Loaded>, EnvironmentError> {
        env_conf::check_name(name)?;
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(found) = kept.get(name).filter(|l| l.fresh()) {
            return Ok(Arc::clone(found));
        }
        kept.remove(name);
        drop(kept);
        let env = env_conf::load(&FsLoader, &self.path, name, &self.base)?;
        for w in &env.warnings {
            tracing::warn!("{w}");
        }
        let ttl = match env.timeout.unwrap_or(self.default_timeout) {
            Timeout::Seconds(0) => Some(Duration::ZERO),
            Timeout::Seconds(n) => Some(Duration::from_secs(n)),
            Timeout::Unlimited => None,
        };
        let keep = ttl != Some(Duration::ZERO);
        let loader: Arc<dyn Loader + Send + Sync> = if keep {
            Arc::new(Snapshot::default())
        } else {
            Arc::new(FsLoader)
        };
        let loaded = Arc::new(Loaded {
            env,
            loader,
            loaded_at: Instant::now(),
            ttl,
            version: OnceLock::new(),
        });
        if keep {
            self.kept
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(name.to_string(), Arc::clone(&loaded));
        }
        Ok(loaded)
    }

    /// Whether `name` is an environment on the environmentpath.
    pub fn exists(&self, name: &str) -> bool {
        env_conf::check_name(name).is_ok() && self.path.iter().any(|r| r.join(name).is_dir())
    }

    /// The names of every environment on the environmentpath, sorted
    /// (directories with valid names; the first entry that has one wins).
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .path
            .iter()
            .filter_map(|root| std::fs::read_dir(root).ok())
            .flatten()
            .filter_map(Result::ok)
            .filter(|e| e.path().is_dir())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| env_conf::check_name(n).is_ok())
            .collect();
        names.sort();
        names.dedup();
        names
    }
}

/// A failed read, kept as its kind and message (io::Error is not Clone).
type Kept<T> = Result<T, (io::ErrorKind, String)>;

/// The file system as first seen: every read, test and listing is kept,
/// so a kept environment's compiles see its code as it was when they
/// first read it.
#[derive(Default)]
pub struct Snapshot {
    reads: Mutex<HashMap<PathBuf, Kept<String>>>,
    files: Mutex<HashMap<PathBuf, bool>>,
    dirs: Mutex<HashMap<PathBuf, bool>>,
    lists: Mutex<HashMap<PathBuf, Kept<Vec<PathBuf>>>>,
}

fn kept<T: Clone>(map: &Mutex<HashMap<PathBuf, T>>, path: &Path, read: impl FnOnce() -> T) -> T {
    if let Some(v) = map.lock().unwrap_or_else(PoisonError::into_inner).get(path) {
        return v.clone();
    }
    let v = read();
    map.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(path.to_path_buf())
        .or_insert(v)
        .clone()
}

fn revive<T>(r: Kept<T>) -> io::Result<T> {
    r.map_err(|(kind, msg)| io::Error::new(kind, msg))
}

impl Loader for Snapshot {
    fn read(&self, path: &Path) -> io::Result<String> {
        revive(kept(&self.reads, path, || {
            FsLoader.read(path).map_err(|e| (e.kind(), e.to_string()))
        }))
    }
    fn is_file(&self, path: &Path) -> bool {
        kept(&self.files, path, || FsLoader.is_file(path))
    }
    fn is_dir(&self, path: &Path) -> bool {
        kept(&self.dirs, path, || FsLoader.is_dir(path))
    }
    fn list(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
        revive(kept(&self.lists, path, || {
            FsLoader.list(path).map_err(|e| (e.kind(), e.to_string()))
        }))
    }
}

/// The environment's main manifest, else no code at all, as Puppet
/// compiles an environment without one.
fn manifest(env: &Environment) -> ManifestSource {
    if env.manifest.exists() {
        ManifestSource::File(env.manifest.clone())
    } else {
        ManifestSource::Code(String::new())
    }
}

/// The compile request and options for `env` (its modulepath whole, its
/// name, its hiera layer), for a node and its facts.
pub fn compile_request(
    env: &Environment,
    node: &str,
    facts: serde_json::Map<String, Value>,
) -> (crate::catalog::CompileRequest, CompileOptions) {
    (
        crate::catalog::CompileRequest {
            manifest: manifest(env),
            modulepath: env.modulepath.clone().into(),
            facts,
            node: node.to_string(),
            environment: Some(env.dir.clone()),
        },
        CompileOptions {
            environment_name: Some(env.name.clone()),
            modulepath_complete: true,
            ..CompileOptions::default()
        },
    )
}

/// The apply each node of a request runs: facts from the built-in facts
/// task, a catalog compiled from `env` for the node's name (its
/// certname), applied with `noop` (file-system work: call it off the
/// async threads).
pub fn apply_job(env: &Environment, noop: bool) -> Result<ApplyJob, EnvironmentError> {
    let facts_task = facts_task()?;
    Ok(ApplyJob {
        source: CatalogSource::Compile {
            manifest: manifest(env),
            modulepath: env.modulepath.clone().into(),
            environment: Some(env.dir.clone()),
            options: CompileOptions {
                environment_name: Some(env.name.clone()),
                modulepath_complete: true,
                ..CompileOptions::default()
            },
            facts_task,
        },
        options: apply_options(noop),
        modulepath: env.modulepath.clone().into(),
        prepared: Default::default(),
        observer: None,
    })
}

/// The built-in facts task, prepared.
fn facts_task() -> Result<Arc<crate::task::Prepared>, EnvironmentError> {
    let loader = crate::task::Loader::new(Vec::new());
    let task = loader
        .load("ferry::facts")
        .map_err(|e| EnvironmentError::Internal(e.to_string()))?;
    crate::task::params::prepare(task, serde_json::Map::new(), false, &loader)
        .map(Arc::new)
        .map_err(|e| EnvironmentError::Internal(e.to_string()))
}

fn apply_options(noop: bool) -> ApplyOptions {
    ApplyOptions {
        noop,
        tags: Vec::new(),
        ..Default::default()
    }
}

/// The apply each node of a deploy job runs: facts from the built-in facts
/// task, its catalog from `provider` (which gives each catalog's
/// modulepath too), applied with `noop` (file-system work: call it off
/// the async threads).
pub fn provided_job(
    provider: Arc<dyn CatalogProvider>,
    noop: bool,
) -> Result<ApplyJob, EnvironmentError> {
    Ok(ApplyJob {
        source: CatalogSource::Provided {
            provider,
            facts_task: facts_task()?,
        },
        options: apply_options(noop),
        modulepath: Modulepath::default(),
        prepared: Default::default(),
        observer: None,
    })
}

/// Puppet's debugging switches a run request may carry: ferry's apply
/// has no such output, so they are only checked.
pub const DEBUG_FLAGS: [&str; 3] = ["debug", "trace", "evaltrace"];

/// Takes [`DEBUG_FLAGS`] out of a request's `object` (which may be
/// absent); each must be a boolean, else a 400 naming `{prefix}{flag}`.
pub fn take_debug_flags(object: Option<&mut Value>, prefix: &str) -> Result<(), ApiError> {
    let Some(map) = object.and_then(Value::as_object_mut) else {
        return Ok(());
    };
    for flag in DEBUG_FLAGS {
        match map.remove(flag) {
            None | Some(Value::Bool(_)) => {}
            Some(_) => {
                return Err(ApiError::bad_field(
                    &format!("{prefix}{flag}"),
                    "must be true or false",
                ));
            }
        }
    }
    Ok(())
}

/// The environment `name` from the server's [`Environments`] and its
/// [`apply_job`], on the blocking pool.
pub async fn prepare(
    state: &Arc<AppState>,
    name: &str,
    noop: bool,
) -> Result<ApplyJob, EnvironmentError> {
    let loaded = find(state, name).await?;
    tokio::task::spawn_blocking(move || apply_job(&loaded.env, noop))
        .await
        .map_err(|e| EnvironmentError::Internal(e.to_string()))?
}

/// The environment `name` from the server's [`Environments`], on the
/// blocking pool.
pub async fn find(state: &Arc<AppState>, name: &str) -> Result<Arc<Loaded>, EnvironmentError> {
    let state = Arc::clone(state);
    let name = name.to_string();
    tokio::task::spawn_blocking(move || state.environments.get(&name))
        .await
        .map_err(|e| EnvironmentError::Internal(e.to_string()))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_puppets_rules() {
        assert_eq!(
            requested("", false, "production").ok().as_deref(),
            Some("production")
        );
        assert_eq!(requested("", false, "qa").ok().as_deref(), Some("qa"));
        assert!(matches!(
            requested("", true, "production"),
            Err(EnvironmentError::Required)
        ));
        assert_eq!(
            requested("dev_2", true, "production").ok().as_deref(),
            Some("dev_2")
        );
        for bad in ["Dev", "a-b", "../etc", "a/b", "x y", ".."] {
            assert!(
                matches!(
                    requested(bad, false, "production"),
                    Err(EnvironmentError::Env(env_conf::EnvironmentError::BadName(
                        _
                    )))
                ),
                "{bad}"
            );
        }
    }

    fn write(path: &Path, text: &str) {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("mkdir");
        }
        std::fs::write(path, text).expect("write");
    }

    #[test]
    fn environments_are_found_in_path_order_with_their_modules_first() {
        let a = tempfile::tempdir().expect("dir");
        let b = tempfile::tempdir().expect("dir");
        std::fs::create_dir_all(b.path().join("production/modules")).expect("mkdir");
        std::fs::create_dir_all(a.path().join("dev")).expect("mkdir");
        let server = PathBuf::from("/srv/modules");
        let envs = Environments::new(
            vec![a.path().to_path_buf(), b.path().to_path_buf()],
            vec![server.clone()],
            Timeout::Seconds(0),
        );
        let env = envs.get("production").expect("found");
        assert_eq!(env.env.dir, b.path().join("production"));
        assert!(envs.get("qa").is_err_and(|e| e.is_not_found()));
        assert_eq!(
            env.env.modulepath,
            vec![b.path().join("production/modules"), server.clone()]
        );
        let dev = envs.get("dev").expect("found");
        assert!(matches!(manifest(&dev.env), ManifestSource::Code(c) if c.is_empty()));
        assert_eq!(envs.names(), vec!["dev", "production"]);
    }

    #[test]
    fn a_kept_environment_sees_its_code_as_first_read_until_its_timeout() {
        let root = tempfile::tempdir().expect("dir");
        let site = root.path().join("production/manifests/site.pp");
        write(&site, "notify { 'one': }\n");
        let fresh = Environments::new(vec![root.path().to_path_buf()], vec![], Timeout::Seconds(0));
        let kept = Environments::new(vec![root.path().to_path_buf()], vec![], Timeout::Unlimited);
        let read = |envs: &Environments| {
            let l = envs.get("production").expect("env");
            l.loader.read(&site).expect("read")
        };
        assert_eq!(read(&fresh), "notify { 'one': }\n");
        assert_eq!(read(&kept), "notify { 'one': }\n");
        write(&site, "notify { 'two': }\n");
        assert_eq!(read(&fresh), "notify { 'two': }\n", "timeout 0 re-reads");
        assert_eq!(read(&kept), "notify { 'one': }\n", "unlimited keeps");
        // environment.conf's own timeout wins over the server's.
        write(
            &root.path().join("production/environment.conf"),
            "environment_timeout = 0\n",
        );
        let conf = Environments::new(vec![root.path().to_path_buf()], vec![], Timeout::Unlimited);
        assert_eq!(read(&conf), "notify { 'two': }\n");
        write(&site, "notify { 'three': }\n");
        assert_eq!(read(&conf), "notify { 'three': }\n");
    }

    #[test]
    fn config_version_is_the_commands_output() {
        let root = tempfile::tempdir().expect("dir");
        let script = root.path().join("production/bin/version");
        write(&script, "#!/bin/sh\necho '  v42 '\n");
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
        write(
            &root.path().join("production/environment.conf"),
            "config_version = bin/version\n",
        );
        let envs = Environments::new(vec![root.path().to_path_buf()], vec![], Timeout::Seconds(0));
        let l = envs.get("production").expect("env");
        assert_eq!(l.config_version().expect("ran").as_deref(), Some("v42"));
        write(
            &root.path().join("production/environment.conf"),
            "config_version = bin/missing\n",
        );
        let l = envs.get("production").expect("env");
        let e = l.config_version().expect_err("missing").to_string();
        assert!(
            e.starts_with("Execution of config_version command `"),
            "{e}"
        );
    }
}
