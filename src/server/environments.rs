//! Where the Puppet code the server applies comes from, as a Puppet server
//! finds it: an environment is a directory `<dir>/<name>` on the
//! `environmentpath` (the first entry that has one), whose `manifests/`
//! holds the main manifest (every `.pp` file in it, in order), whose
//! `modules/` comes before the server's `modulepath`, and whose
//! `hiera.yaml` and `data/` give hiera data. An empty environment name is
//! `production` unless the request enforces its environment (ACE's and the
//! orchestrator's rule). From an environment this module makes the apply
//! job ACE's `/execute_catalog` and the orchestrator's deploy jobs run:
//! facts gathered by the built-in `ferry::facts` task, a catalog compiled
//! per node, applied over SSH. `environment.conf` is not read. Puppet's
//! debugging switches (`debug`, `trace`, `evaltrace`) are accepted and
//! checked, not used.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::apply::ApplyOptions;
use crate::catalog::{CompileOptions, ManifestSource};
use crate::run::actions::apply::{ApplyJob, CatalogSource};
use crate::server::AppState;
use crate::server::http::errors::ApiError;

/// The environment an empty name stands for.
pub const DEFAULT_ENVIRONMENT: &str = "production";

/// Why a request's environment cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum EnvironmentError {
    #[error("must name an environment when enforce_environment is true")]
    Required,
    #[error("'{0}' is not a valid environment name (lower-case letters, digits and underscores)")]
    BadName(String),
    #[error("there is no environment '{0}' on this server's environmentpath")]
    NotFound(String),
    /// The apply could not be prepared: the built-in facts task, or the
    /// thread preparing it (a server fault).
    #[error("cannot prepare the apply: {0}")]
    Internal(String),
}

/// A directory environment found on the environmentpath.
#[derive(Debug, Clone)]
pub struct Environment {
    pub name: String,
    pub dir: PathBuf,
}

/// The environment a request asks for: its name checked as Puppet checks
/// it; an empty one is [`DEFAULT_ENVIRONMENT`] unless `enforce` is set.
pub fn requested(name: &str, enforce: bool) -> Result<String, EnvironmentError> {
    if name.is_empty() {
        return if enforce {
            Err(EnvironmentError::Required)
        } else {
            Ok(DEFAULT_ENVIRONMENT.to_string())
        };
    }
    let valid = name.len() <= 255
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if valid {
        Ok(name.to_string())
    } else {
        Err(EnvironmentError::BadName(name.to_string()))
    }
}

/// The first `<dir>/<name>` on `environmentpath` that is a directory
/// (file-system work: call it off the async threads).
pub fn find(environmentpath: &[PathBuf], name: &str) -> Result<Environment, EnvironmentError> {
    environmentpath
        .iter()
        .map(|root| root.join(name))
        .find(|dir| dir.is_dir())
        .map(|dir| Environment {
            name: name.to_string(),
            dir,
        })
        .ok_or_else(|| EnvironmentError::NotFound(name.to_string()))
}

/// The environment's modules first, then the server's, as Puppet orders
/// an environment's modulepath.
pub fn modulepath(env: &Environment, server: &[PathBuf]) -> Vec<PathBuf> {
    let own = env.dir.join("modules");
    let mut path = Vec::with_capacity(server.len() + 1);
    if own.is_dir() {
        path.push(own);
    }
    for p in server {
        if !path.contains(p) {
            path.push(p.clone());
        }
    }
    path
}

/// The environment's main manifest: its `manifests` directory (or file),
/// else no code at all, as Puppet compiles an environment without one.
fn manifest(dir: &Path) -> ManifestSource {
    let main = dir.join("manifests");
    if main.exists() {
        ManifestSource::File(main)
    } else {
        ManifestSource::Code(String::new())
    }
}

/// The apply each node of a request runs: facts from the built-in facts
/// task, a catalog compiled from `env` for the node's name (its
/// certname), applied with `noop` (file-system work: call it off the
/// async threads).
pub fn apply_job(
    env: &Environment,
    server_modulepath: &[PathBuf],
    noop: bool,
) -> Result<ApplyJob, EnvironmentError> {
    let loader = crate::task::Loader::new(Vec::new());
    let task = loader
        .load("ferry::facts")
        .map_err(|e| EnvironmentError::Internal(e.to_string()))?;
    let facts_task = crate::task::params::prepare(task, serde_json::Map::new(), false, &loader)
        .map_err(|e| EnvironmentError::Internal(e.to_string()))?;
    let modulepath = modulepath(env, server_modulepath);
    Ok(ApplyJob {
        source: CatalogSource::Compile {
            manifest: manifest(&env.dir),
            modulepath: modulepath.clone().into(),
            environment: Some(env.dir.clone()),
            options: CompileOptions {
                environment_name: Some(env.name.clone()),
                ..CompileOptions::default()
            },
            facts_task: Arc::new(facts_task),
        },
        options: ApplyOptions {
            noop,
            tags: Vec::new(),
            ..Default::default()
        },
        modulepath: modulepath.into(),
        prepared: Default::default(),
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

/// [`find`] the environment `name` on the server's environmentpath and
/// make its [`apply_job`], on the blocking pool.
pub async fn prepare(
    state: &AppState,
    name: &str,
    noop: bool,
) -> Result<ApplyJob, EnvironmentError> {
    let (path, modules) = (
        state.config.environmentpath.clone(),
        state.config.modulepath.clone(),
    );
    let name = name.to_string();
    tokio::task::spawn_blocking(move || {
        find(&path, &name).and_then(|env| apply_job(&env, &modules, noop))
    })
    .await
    .map_err(|e| EnvironmentError::Internal(e.to_string()))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_puppets_rules() {
        assert_eq!(requested("", false).ok().as_deref(), Some("production"));
        assert!(matches!(
            requested("", true),
            Err(EnvironmentError::Required)
        ));
        assert_eq!(requested("dev_2", true).ok().as_deref(), Some("dev_2"));
        for bad in ["Dev", "a-b", "../etc", "a/b", "x y"] {
            assert!(
                matches!(requested(bad, false), Err(EnvironmentError::BadName(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn environments_are_found_in_path_order_with_their_modules_first() {
        let a = tempfile::tempdir().expect("dir");
        let b = tempfile::tempdir().expect("dir");
        std::fs::create_dir_all(b.path().join("production/modules")).expect("mkdir");
        std::fs::create_dir_all(a.path().join("dev")).expect("mkdir");
        let path = [a.path().to_path_buf(), b.path().to_path_buf()];
        let env = find(&path, "production").expect("found");
        assert_eq!(env.dir, b.path().join("production"));
        assert!(matches!(
            find(&path, "qa"),
            Err(EnvironmentError::NotFound(_))
        ));
        let server = PathBuf::from("/srv/modules");
        assert_eq!(
            modulepath(&env, std::slice::from_ref(&server)),
            vec![b.path().join("production/modules"), server.clone()]
        );
        let dev = find(&path, "dev").expect("found");
        assert_eq!(
            modulepath(&dev, std::slice::from_ref(&server)),
            vec![server]
        );
        assert!(matches!(manifest(&dev.dir), ManifestSource::Code(c) if c.is_empty()));
    }
}
