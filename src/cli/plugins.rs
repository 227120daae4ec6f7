//! The inventory plugins that run something, which the inventory hands
//! up through [`ferry::inventory::plugin::Env`]: Bolt's `task` (`task`,
//! `parameters`: a task run on localhost; its result's `value` is the
//! value), `prompt` (`message`: asked on the terminal with echo off) and
//! module plugins (a module on the modulepath, or the project, with a
//! `bolt_plugin.json`: its `resolve_reference` hook is a task run on
//! localhost the same way). A module plugin's parameters are, as in Bolt,
//! the task's defaults, under the project's `plugins.<name>` config (only
//! the keys the task declares), under the reference's own keys, with
//! `_boltdir` (the project directory) added.
//!
//! Tasks run through the executor on `localhost` like any task, on the
//! runtime the command already runs on; what they print is not shown (a
//! plugin's value is often a secret).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Map, Value};

use ferry::catalog::Modulepath;
use ferry::inventory::Inventory;
use ferry::inventory::plugin::{CacheSettings, Env, PluginError};
use ferry::run::events::Discard;
use ferry::run::result::Outcome;
use ferry::run::{self, Action, RunOptions};
use ferry::task::{Loader, Task, params};

/// The hooks a module plugin may name in `bolt_plugin.json`.
const KNOWN_HOOKS: &[&str] = &[
    "resolve_reference",
    "validate_resolve_reference",
    "secret_encrypt",
    "secret_decrypt",
    "secret_createkeys",
    "puppet_library",
];

/// Bolt's plugin cache: the project's `.plugin_cache.json`, outside a
/// project `.ferry/plugin_cache.json` in the current directory.
fn cache_file() -> anyhow::Result<PathBuf> {
    Ok(match super::project() {
        Some(p) => p.dir.join(".plugin_cache.json"),
        None => std::env::current_dir()?
            .join(".ferry")
            .join("plugin_cache.json"),
    })
}

/// `--clear-cache`: deletes the plugin cache, if there is one.
pub(super) fn clear_cache() -> anyhow::Result<()> {
    let file = cache_file()?;
    match std::fs::remove_file(&file) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(anyhow::anyhow!(
            "{}: cannot delete the plugin cache: {e}",
            file.display()
        )),
    }
}

/// Runs the plugins the inventory has not built in.
pub struct PluginHost {
    modulepath: Modulepath,
    /// The project's `plugins` config, by plugin name.
    config: BTreeMap<String, Map<String, Value>>,
    /// The project directory (Bolt's `_boltdir`).
    boltdir: PathBuf,
    /// Bolt's plugin cache: the project's `.plugin_cache.json` (outside a
    /// project `.ferry/plugin_cache.json`), and `plugin-cache.ttl`.
    cache: Option<CacheSettings>,
}

impl PluginHost {
    pub fn new(
        modulepath: Modulepath,
        config: BTreeMap<String, Map<String, Value>>,
        boltdir: PathBuf,
    ) -> PluginHost {
        PluginHost {
            modulepath,
            config,
            boltdir,
            cache: None,
        }
    }

    /// The host with Bolt's plugin cache kept in `settings`.
    pub fn with_cache(mut self, settings: CacheSettings) -> PluginHost {
        self.cache = Some(settings);
        self
    }

    /// The host for a command: modules from `modules` (else
    /// FERRY_MODULEPATH or the project's), the project's `plugins` config,
    /// and the project directory (else the current one) as `_boltdir`.
    pub fn for_run(modules: Option<&super::ModuleArgs>) -> anyhow::Result<PluginHost> {
        let from_env;
        let modules = match modules {
            Some(m) => m,
            None => {
                from_env = super::ModuleArgs {
                    modulepath: std::env::var("FERRY_MODULEPATH").ok(),
                };
                &from_env
            }
        };
        let project = super::project();
        let boltdir = match project {
            Some(p) => p.dir.clone(),
            None => std::env::current_dir()?,
        };
        let cache = CacheSettings {
            file: cache_file()?,
            default_ttl: project.and_then(|p| p.plugin_cache),
        };
        Ok(PluginHost::new(
            modules.resolve(),
            project.map(|p| p.plugins.clone()).unwrap_or_default(),
            boltdir,
        )
        .with_cache(cache))
    }

    /// The `task` plugin.
    fn task(&self, given: &Map<String, Value>) -> Result<Value, PluginError> {
        let invalid = |message: String| PluginError::Invalid {
            plugin: "task".into(),
            message,
        };
        let name = match given.get("task") {
            Some(Value::String(s)) => s.as_str(),
            Some(_) => return Err(invalid("'task' must be a task name".into())),
            None => return Err(invalid("the task plugin needs 'task' (a task name)".into())),
        };
        for key in given.keys() {
            if key != "task" && key != "parameters" {
                return Err(invalid(format!(
                    "unknown key '{key}' (expected task, parameters)"
                )));
            }
        }
        let parameters = match given.get("parameters") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(_) => return Err(invalid("'parameters' must be a hash".into())),
        };
        let loader = Loader::new(self.modulepath.clone());
        let task = loader.load(name).map_err(|e| invalid(e.to_string()))?;
        let result = self.run(task, parameters, &loader, "task", false)?;
        match result.get("value") {
            Some(v) => Ok(v.clone()),
            None => Err(PluginError::Failed {
                plugin: "task".into(),
                message: format!(
                    "the result of task {name} has no 'value' key ({})",
                    keys_of(&result)
                ),
            }),
        }
    }

    /// A module plugin's `hook` (`resolve_reference`, `secret_encrypt`,
    /// ...) run with `given`, when module `name` is a plugin.
    pub fn module_hook(
        &self,
        name: &str,
        hook: &str,
        given: &Map<String, Value>,
    ) -> Option<Result<Value, PluginError>> {
        let dir = self
            .modulepath
            .candidates(name)
            .find(|d| d.join("bolt_plugin.json").is_file())?;
        let invalid = |message: String| PluginError::Invalid {
            plugin: name.to_string(),
            message,
        };
        Some((|| {
            let file = dir.join("bolt_plugin.json");
            let text = std::fs::read_to_string(&file)
                .map_err(|e| invalid(format!("cannot read {}: {e}", file.display())))?;
            let data: Value = serde_json::from_str(&text)
                .map_err(|e| invalid(format!("{}: {e}", file.display())))?;
            let Value::Object(data) = data else {
                return Err(invalid(format!("{}: must hold an object", file.display())));
            };
            if data.contains_key("config") {
                return Err(invalid(format!(
                    "{}: found unsupported key 'config'. Config for a plugin is inferred from task parameters, with config values passed as parameters.",
                    file.display()
                )));
            }
            let hooks = match data.get("hooks") {
                None => Map::new(),
                Some(Value::Object(h)) => h.clone(),
                Some(_) => {
                    return Err(invalid(format!(
                        "{}: 'hooks' must be a hash",
                        file.display()
                    )));
                }
            };
            let loader = Loader::new(self.modulepath.clone());
            // Every hook's task: named in `hooks`, else `<name>::<hook>`.
            let mut tasks: BTreeMap<&str, Task> = BTreeMap::new();
            for hook in KNOWN_HOOKS {
                match hooks.get(*hook) {
                    Some(spec) => {
                        let Some(task) = spec.get("task").and_then(Value::as_str) else {
                            return Err(invalid(format!(
                                "{}: hook {hook} must be {{\"task\": NAME}}",
                                file.display()
                            )));
                        };
                        let loaded = loader.load(task).map_err(|e| {
                            invalid(format!(
                                "hook {hook} names task '{task}', which cannot be loaded: {e}"
                            ))
                        })?;
                        tasks.insert(hook, loaded);
                    }
                    None => {
                        if let Ok(loaded) = loader.load(&format!("{name}::{hook}")) {
                            tasks.insert(hook, loaded);
                        }
                    }
                }
            }
            let Some(task) = tasks.get(hook).cloned() else {
                return Err(invalid(format!("this plugin has no {hook} hook")));
            };
            // The project's config: each key must be a parameter of one of
            // the plugin's tasks.
            let config = self.config.get(name).cloned().unwrap_or_default();
            for key in config.keys() {
                let known = tasks.values().any(|t| {
                    t.metadata
                        .parameters
                        .as_ref()
                        .is_some_and(|p| p.contains_key(key))
                });
                if !known {
                    return Err(invalid(format!(
                        "the project's config for plugin {name} has key '{key}', which none of its tasks takes"
                    )));
                }
            }
            let mut params: Map<String, Value> = match &task.metadata.parameters {
                Some(declared) => config
                    .into_iter()
                    .filter(|(k, _)| declared.contains_key(k))
                    .collect(),
                None => config,
            };
            params.extend(given.clone());
            let result = self.run(task, params, &loader, name, true)?;
            match result.get("value") {
                Some(v) => Ok(v.clone()),
                None => Err(PluginError::Failed {
                    plugin: name.to_string(),
                    message: format!("the result did not include a value ({})", keys_of(&result)),
                }),
            }
        })())
    }

    /// Runs `task` on localhost and gives its result value, or the task's
    /// error as the plugin's.
    fn run(
        &self,
        task: Task,
        given: Map<String, Value>,
        loader: &Loader,
        plugin: &str,
        boltdir: bool,
    ) -> Result<Value, PluginError> {
        let mut prepared =
            params::prepare(task, given, false, loader).map_err(|e| PluginError::Invalid {
                plugin: plugin.to_string(),
                message: e.to_string(),
            })?;
        if boltdir {
            prepared.params.insert(
                "_boltdir".into(),
                Value::String(self.boltdir.display().to_string()),
            );
        }
        let failed = |message: String| PluginError::Failed {
            plugin: plugin.to_string(),
            message,
        };
        let targets = Inventory::empty()
            .select("localhost")
            .map_err(|e| failed(e.to_string()))?;
        let options = RunOptions::default();
        let run = run::run(
            targets,
            Action::Task(Arc::new(prepared)),
            &options,
            Arc::new(Discard),
        );
        let summary = match tokio::runtime::Handle::try_current() {
            Ok(handle) => tokio::task::block_in_place(|| handle.block_on(run)),
            Err(_) => tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| failed(format!("cannot start a runtime: {e}")))?
                .block_on(run),
        };
        let Some(result) = summary.results.first() else {
            return Err(failed("the task did not run".into()));
        };
        match (&result.outcome, result.outcome.error()) {
            (Outcome::Ok(_), _) => Ok(result.value()),
            (_, Some(e)) => Err(failed(e.msg.into_owned())),
            (_, None) => Err(failed("the task failed".into())),
        }
    }
}

impl PluginHost {
    /// The pkcs7 plugin's settings: `keysize`, `private_key`, `public_key`
    /// from the project's `plugins.pkcs7` under those `given`, the key
    /// paths relative to the project (Bolt's `_boltdir`).
    pub fn pkcs7_keys(&self, given: &Map<String, Value>) -> Result<Pkcs7Keys, PluginError> {
        let invalid = |message: String| PluginError::Invalid {
            plugin: "pkcs7".into(),
            message,
        };
        let mut settings = self.config.get("pkcs7").cloned().unwrap_or_default();
        settings.extend(given.clone());
        let mut keys = Pkcs7Keys {
            keysize: ferry::secret::DEFAULT_KEY_SIZE,
            private_key: self.boltdir.join("keys/private_key.pkcs7.pem"),
            public_key: self.boltdir.join("keys/public_key.pkcs7.pem"),
        };
        for (key, value) in &settings {
            match (key.as_str(), value) {
                ("keysize", Value::Number(n)) => {
                    keys.keysize = n
                        .as_u64()
                        .and_then(|n| usize::try_from(n).ok())
                        .ok_or_else(|| {
                            invalid(format!("keysize must be a whole number, not {n}"))
                        })?;
                }
                ("private_key", Value::String(p)) => keys.private_key = self.boltdir.join(p),
                ("public_key", Value::String(p)) => keys.public_key = self.boltdir.join(p),
                ("encrypted_value" | "plaintext_value" | "force", _) => {}
                ("keysize" | "private_key" | "public_key", other) => {
                    return Err(invalid(format!(
                        "{key} must be {}, not {}",
                        if key == "keysize" {
                            "a number"
                        } else {
                            "a path"
                        },
                        kind(other)
                    )));
                }
                (other, _) => {
                    return Err(invalid(format!(
                        "unknown key '{other}' (expected encrypted_value, private_key, public_key, keysize)"
                    )));
                }
            }
        }
        Ok(keys)
    }

    /// The pkcs7 plugin as a reference: `encrypted_value` decrypted.
    fn pkcs7_decrypt(&self, given: &Map<String, Value>) -> Result<Value, PluginError> {
        let keys = self.pkcs7_keys(given)?;
        let value = match given.get("encrypted_value") {
            Some(Value::String(s)) => s,
            _ => {
                return Err(PluginError::Invalid {
                    plugin: "pkcs7".into(),
                    message: "the pkcs7 plugin needs 'encrypted_value' (ENC[PKCS7,...])".into(),
                });
            }
        };
        keys.decrypt(value).map(Value::String)
    }
}

/// Where the pkcs7 plugin's key pair is, and the size of a new one.
pub struct Pkcs7Keys {
    pub keysize: usize,
    pub private_key: PathBuf,
    pub public_key: PathBuf,
}

impl Pkcs7Keys {
    fn read(path: &std::path::Path, which: &str) -> Result<String, PluginError> {
        std::fs::read_to_string(path).map_err(|e| PluginError::Failed {
            plugin: "pkcs7".into(),
            message: format!("cannot read the {which} {}: {e}", path.display()),
        })
    }

    pub fn decrypt(&self, value: &str) -> Result<String, PluginError> {
        let private = Self::read(&self.private_key, "private key")?;
        let public = Self::read(&self.public_key, "public key")?;
        ferry::secret::decrypt(&private, &public, value).map_err(|e| PluginError::Failed {
            plugin: "pkcs7".into(),
            message: e.to_string(),
        })
    }

    pub fn encrypt(&self, plaintext: &str) -> Result<String, PluginError> {
        let public = Self::read(&self.public_key, "public key")?;
        ferry::secret::encrypt(&public, plaintext).map_err(|e| PluginError::Failed {
            plugin: "pkcs7".into(),
            message: e.to_string(),
        })
    }
}

/// The `prompt` plugin: `message`, asked on the terminal with echo off.
fn prompt(given: &Map<String, Value>) -> Result<Value, PluginError> {
    let invalid = |message: String| PluginError::Invalid {
        plugin: "prompt".into(),
        message,
    };
    let message = match given.get("message") {
        Some(Value::String(s)) => s.clone(),
        _ => {
            return Err(invalid(
                "the prompt plugin needs 'message' (a string)".into(),
            ));
        }
    };
    if let Some(key) = given.keys().find(|k| *k != "message") {
        return Err(invalid(format!("unknown key '{key}' (expected message)")));
    }
    if !ferry::terminal::is_terminal() {
        return Err(PluginError::Failed {
            plugin: "prompt".into(),
            message: format!(
                "cannot ask '{message}': standard input is not a terminal (the env_var plugin takes a value from the environment instead)"
            ),
        });
    }
    ferry::terminal::ask(&format!("{message}: "), true)
        .map(Value::String)
        .map_err(|e| PluginError::Failed {
            plugin: "prompt".into(),
            message: format!("reading from the terminal: {e}"),
        })
}

/// `its keys: a, b` of a result object, never its values (they may be
/// secrets).
fn keys_of(v: &Value) -> String {
    match v {
        Value::Object(m) if m.is_empty() => "it is an empty object".into(),
        Value::Object(m) => format!(
            "its keys: {}",
            m.keys().map(String::as_str).collect::<Vec<_>>().join(", ")
        ),
        other => format!("it is not an object but {}", kind(other)),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl Env for PluginHost {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }

    fn plugin(
        &self,
        name: &str,
        params: &Map<String, Value>,
    ) -> Option<Result<Value, PluginError>> {
        match name {
            "task" => Some(self.task(params)),
            "prompt" => Some(prompt(params)),
            "pkcs7" => Some(self.pkcs7_decrypt(params)),
            _ => self.module_hook(name, "resolve_reference", params),
        }
    }

    fn plugin_cache(&self) -> Option<CacheSettings> {
        self.cache.clone()
    }

    fn plugin_names(&self) -> Vec<String> {
        let mut names = vec![
            "task".to_string(),
            "prompt".to_string(),
            "pkcs7".to_string(),
        ];
        for (name, dir) in self.modulepath.modules() {
            if dir.join("bolt_plugin.json").is_file() && !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }
}
