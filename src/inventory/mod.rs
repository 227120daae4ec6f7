//! The inventory: Bolt's inventory v2 YAML, read into resolved targets.
//!
//! This module owns everything between the inventory file and a list of
//! [`Target`]s with their merged config, facts, vars and features: reading the
//! YAML with positions ([`crate::yaml`], kept per node with its file in
//! [`node`]), resolving `_plugin` references ([`plugin`]), converting the
//! document into groups and target definitions ([`parse`]), merging
//! definitions the way Bolt does ([`resolve`]), laying the command line's
//! connection settings under them ([`Inventory::set_command_line`]), and
//! choosing targets from a `-t` specification ([`select`], with Bolt's globs
//! in [`glob`]). It does no network I/O; the files it reads are the inventory
//! and those its `yaml` plugin references name.

pub mod cache;
pub mod glob;
pub mod node;
pub mod parse;
pub mod plugin;
pub mod resolve;
pub mod select;
pub mod uri;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use crate::yaml::Origin;
pub use select::SelectError;

/// Why an inventory could not be read. Display gives `file:line:col: message`.
#[derive(Debug, thiserror::Error)]
pub enum InventoryError {
    #[error("{path}: cannot read the inventory")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{origin}: {message}")]
    Invalid { origin: Origin, message: String },
}

impl InventoryError {
    pub fn at(origin: Origin, message: impl Into<String>) -> Self {
        InventoryError::Invalid {
            origin,
            message: message.into(),
        }
    }
}

/// One config value with where it was set. Keys are dotted: `transport`,
/// `ssh.user`, `ssh.port`.
#[derive(Clone, Debug)]
pub struct Setting {
    pub value: serde_json::Value,
    pub origin: Origin,
}

/// A target's merged config: one [`Setting`] per dotted key.
#[derive(Clone, Debug, Default)]
pub struct Config {
    settings: BTreeMap<String, Setting>,
}

impl Config {
    pub fn get(&self, key: &str) -> Option<&Setting> {
        self.settings.get(key)
    }

    /// Lays a setting of lower precedence under the config: a key not set
    /// yet takes it; a mapping set already takes the keys it lacks, at
    /// every depth (Bolt deep-merges config). Anything else set already wins.
    pub fn set_default(&mut self, key: String, setting: Setting) {
        match self.settings.get_mut(&key) {
            None => {
                self.settings.insert(key, setting);
            }
            Some(have) => deep_merge_under(&mut have.value, &setting.value),
        }
    }

    /// Sets a key, replacing any earlier value (command-line overrides).
    pub fn set(&mut self, key: &str, value: serde_json::Value) {
        self.settings.insert(
            key.to_string(),
            Setting {
                value,
                origin: Origin::command_line(),
            },
        );
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &Setting)> {
        self.settings.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Settings of one section (`ssh`), keys without the section prefix.
    pub fn section<'a>(&'a self, name: &'a str) -> impl Iterator<Item = (&'a str, &'a Setting)> {
        self.settings.iter().filter_map(move |(k, v)| {
            k.strip_prefix(name)
                .and_then(|rest| rest.strip_prefix('.'))
                .map(|rest| (rest, v))
        })
    }

    /// One section's settings as a JSON object, secrets replaced by a marker.
    pub fn redacted_section(&self, name: &str) -> serde_json::Value {
        serde_json::Value::Object(
            self.section(name)
                .map(|(k, s)| (k.to_string(), redacted(k, &s.value)))
                .collect(),
        )
    }

    /// The config as nested JSON with secret values replaced by a marker.
    pub fn redacted_json(&self) -> serde_json::Value {
        let mut root = serde_json::Map::new();
        for (key, setting) in &self.settings {
            let value = redacted(key, &setting.value);
            match key.split_once('.') {
                Some((section, rest)) => {
                    let entry = root
                        .entry(section.to_string())
                        .or_insert_with(|| serde_json::Value::Object(Default::default()));
                    if let serde_json::Value::Object(map) = entry {
                        map.insert(rest.to_string(), value);
                    }
                }
                None => {
                    root.insert(key.clone(), value);
                }
            }
        }
        serde_json::Value::Object(root)
    }
}

/// `value` set under `key`, with secrets replaced by the marker: the whole
/// value when the key names a secret, else every nested value whose key
/// does (`private-key: {key-data: ...}`).
fn redacted(key: &str, value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    if is_secret_key(key) {
        return Value::String(REDACTED.into());
    }
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), redacted(k, v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| redacted(key, v)).collect()),
        other => other.clone(),
    }
}

/// Merges `low` under `high`: where both are mappings, keys `high` lacks
/// come from `low`, recursively; otherwise `high` stays as it is.
pub fn deep_merge_under(high: &mut serde_json::Value, low: &serde_json::Value) {
    use serde_json::Value;
    if let (Value::Object(h), Value::Object(l)) = (high, low) {
        deep_merge_map_under(h, l);
    }
}

/// [`deep_merge_under`] for two mappings.
pub fn deep_merge_map_under(
    high: &mut serde_json::Map<String, serde_json::Value>,
    low: &serde_json::Map<String, serde_json::Value>,
) {
    for (k, v) in low {
        match high.get_mut(k) {
            Some(h) => deep_merge_under(h, v),
            None => {
                high.insert(k.clone(), v.clone());
            }
        }
    }
}

/// What a redacted secret prints as.
pub const REDACTED: &str = "[redacted]";

/// Config keys whose values are secrets and never printed.
pub fn is_secret_key(key: &str) -> bool {
    let last = key.rsplit('.').next().unwrap_or(key);
    ["password", "passphrase", "key-data", "token", "secret"]
        .iter()
        .any(|word| last.contains(word))
}

/// One resolved target: everything the executor needs to reach it.
#[derive(Clone, Debug)]
pub struct Target {
    /// The name it is known by: its `name`, else its URI as written.
    pub name: String,
    /// The URI it was given, if any (`ssh://user@host:22`, `host:2222`).
    pub uri: Option<String>,
    pub aliases: Vec<String>,
    pub config: Config,
    pub facts: serde_json::Map<String, serde_json::Value>,
    pub vars: serde_json::Map<String, serde_json::Value>,
    pub features: BTreeSet<String>,
    /// Bolt's `plugin_hooks`, merged as vars are; ferry does not use them.
    pub plugin_hooks: serde_json::Map<String, serde_json::Value>,
    /// Every group the target belongs to, directly or through a subgroup,
    /// the group whose values win first (`all` not included).
    pub groups: Vec<String>,
    /// Where the target was first defined or named.
    pub origin: Origin,
}

impl Target {
    /// The transport named by config or URI scheme; `localhost` defaults to
    /// `local`, everything else to `ssh`.
    pub fn transport(&self) -> String {
        if let Some(scheme) = self.uri.as_deref().and_then(uri::scheme) {
            return scheme.to_string();
        }
        if let Some(t) = self.config.get("transport").and_then(|s| s.value.as_str()) {
            return t.to_string();
        }
        if self.host() == "localhost" {
            "local".into()
        } else {
            "ssh".into()
        }
    }

    /// The parsed URI (or name, when there is no URI).
    pub fn address(&self) -> Result<uri::Address, uri::UriError> {
        uri::Address::parse(self.uri.as_deref().unwrap_or(&self.name))
    }

    /// The host to connect to: the URI's host (a URI wins over config, as
    /// in Bolt), else `ssh.host` from config, else the name.
    pub fn host(&self) -> String {
        let address = || {
            // A URI with a bad port is refused before anything connects;
            // shown here as it was written.
            self.address()
                .map(|a| a.host)
                .unwrap_or_else(|_| self.uri.clone().unwrap_or_else(|| self.name.clone()))
        };
        if self.uri.is_some() {
            return address();
        }
        self.config
            .section("ssh")
            .find(|(k, _)| *k == "host")
            .and_then(|(_, s)| s.value.as_str().map(str::to_string))
            .unwrap_or_else(address)
    }

    /// The target as Bolt's `inventory show --detail` prints it: name, uri,
    /// alias, config (the transport and its section only), vars, features,
    /// facts, plugin_hooks and groups (`all` last). Secrets are redacted.
    pub fn detail(&self) -> serde_json::Value {
        let transport = self.transport();
        let mut config = serde_json::Map::new();
        config.insert("transport".into(), transport.clone().into());
        config.insert(transport.clone(), self.config.redacted_section(&transport));
        let mut groups = self.groups.clone();
        groups.push("all".into());
        serde_json::json!({
            "name": self.name,
            "uri": self.uri,
            "alias": self.aliases,
            "config": config,
            "vars": self.vars,
            "features": self.features,
            "facts": self.facts,
            "plugin_hooks": self.plugin_hooks,
            "groups": groups,
        })
    }
}

/// A whole inventory: its targets (in definition order) and groups.
#[derive(Debug, Clone)]
pub struct Inventory {
    pub path: Arc<PathBuf>,
    pub targets: Vec<Target>,
    /// Group name to member target names, subgroups' members included.
    pub groups: BTreeMap<String, Vec<String>>,
    /// Config, facts, vars and features of the top level, for targets that
    /// are named on the command line but not in the file.
    pub(crate) top: parse::GroupDef,
    /// Connection settings from the command line, under the inventory's.
    command_line: Vec<(String, serde_json::Value)>,
}

impl Inventory {
    /// Reads and resolves an inventory file.
    pub fn load(path: &Path) -> Result<Inventory, InventoryError> {
        let text = std::fs::read_to_string(path).map_err(|source| InventoryError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_str(&text, path)
    }

    /// Reads and resolves an inventory file, taking plugin values from `env`.
    pub fn load_with(path: &Path, env: &dyn plugin::Env) -> Result<Inventory, InventoryError> {
        let text = std::fs::read_to_string(path).map_err(|source| InventoryError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&text, path, env)
    }

    /// Resolves inventory text; `path` is only used in error positions.
    pub fn from_str(text: &str, path: &Path) -> Result<Inventory, InventoryError> {
        Self::parse(text, path, &plugin::ProcessEnv)
    }

    /// Resolves inventory text, taking plugin values from `env`.
    pub fn parse(
        text: &str,
        path: &Path,
        env: &dyn plugin::Env,
    ) -> Result<Inventory, InventoryError> {
        let file = Arc::new(path.to_path_buf());
        let node = crate::yaml::parse(text)
            .map_err(|e| InventoryError::at(Origin::new(&file, e.line, e.column), e.message))?;
        let node = node::Node::from_yaml(node, &file, 0)?;
        let node = plugin::Resolver::new(path, env).resolve(node, 0)?;
        let doc = parse::document(&node)?;
        resolve::resolve(doc, file)
    }

    /// Lays connection settings given on the command line (dotted keys:
    /// `ssh.user`) under every target's config, and under that of targets
    /// named later on the command line only. As in Bolt, the inventory's
    /// values win over them, and a URI's user and port over both.
    pub fn set_command_line(&mut self, settings: Vec<(String, serde_json::Value)>) {
        for target in &mut self.targets {
            for (key, value) in &settings {
                target.config.set_default(
                    key.clone(),
                    Setting {
                        value: value.clone(),
                        origin: Origin::command_line(),
                    },
                );
            }
        }
        self.command_line.extend(settings);
    }

    /// An inventory with no file: only `localhost` and URIs are known.
    pub fn empty() -> Inventory {
        let file = Arc::new(PathBuf::from("<no inventory>"));
        let top = parse::GroupDef::top(Origin::new(&file, 0, 0));
        Inventory {
            path: file,
            targets: Vec::new(),
            groups: BTreeMap::new(),
            top,
            command_line: Vec::new(),
        }
    }

    pub fn target(&self, name: &str) -> Option<&Target> {
        self.targets.iter().find(|t| t.name == name)
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}
