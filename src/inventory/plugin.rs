//! `_plugin` references, which may stand wherever a value may. Three
//! plugins are built in, as in Bolt: `env_var` (`var`, `default`,
//! `optional`, `json`: a value from the environment, so that secrets stay
//! out of the file), `yaml` (`filepath`: the content of another YAML file,
//! so that an inventory can be composed of several files) and `puppetdb`
//! (`query`, `target_mapping`: targets from the configured PuppetDB, see
//! `crate::query`). Every other name goes to [`Env::plugin`]: the plugins
//! that run something (Bolt's `task` and `prompt`, the pkcs7 plugin, and a
//! module's `resolve_reference` hook) live above the inventory, which only
//! hands them their resolved parameters.
//!
//! References are replaced by their values before the document is
//! interpreted, leaves first, as Bolt does: a reference's parameters may be
//! references themselves, and a value a plugin returns may hold more
//! references, which are resolved in turn. An env_var value keeps the
//! position of its reference; the content of a file the yaml plugin reads
//! keeps its own file, line and column, so that later errors point into it.
//! A relative `filepath` is taken from the directory of the inventory file
//! (Bolt's project directory), `~/` from the home directory.
//!
//! A reference with `_cache: {ttl}` (or any, under the project's
//! `plugin-cache`) is looked up in Bolt's plugin cache ([`super::cache`])
//! first and its value kept there, through [`Env::plugin_cache`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::cache::{self, Cache};
use super::node::{Node, Value, key_text};
use super::{InventoryError, Origin};

/// Where plugin values come from: the process environment and the file
/// system in real use.
pub trait Env {
    fn var(&self, name: &str) -> Option<String>;

    /// The text of a file the yaml plugin reads.
    fn read_file(&self, path: &Path) -> std::io::Result<String> {
        std::fs::read_to_string(path)
    }

    /// Runs a plugin the inventory has not built in, with its parameters
    /// (the reference's keys, `_plugin` and `_cache` left out). `None`
    /// when there is no plugin of that name.
    fn plugin(
        &self,
        _name: &str,
        _params: &serde_json::Map<String, serde_json::Value>,
    ) -> Option<Result<serde_json::Value, PluginError>> {
        None
    }

    /// The plugins [`Env::plugin`] knows, for the message about an unknown one.
    fn plugin_names(&self) -> Vec<String> {
        Vec::new()
    }

    /// Where Bolt's plugin cache is kept (`_cache`), if anywhere.
    fn plugin_cache(&self) -> Option<CacheSettings> {
        None
    }

    /// Writes the plugin cache: readable by its owner only (a cached
    /// value may be a secret a plugin fetched), replaced whole.
    fn write_file(&self, path: &Path, text: &str) -> std::io::Result<()> {
        use std::io::Write as _;
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        // A new file with a random name (created exclusively, 0600), then
        // renamed over the cache: a link planted at a fixed name is never
        // followed.
        let mut f = tempfile::Builder::new()
            .prefix(".plugin_cache")
            .tempfile_in(dir)?;
        f.write_all(text.as_bytes())?;
        f.persist(path).map(drop).map_err(|e| e.error)
    }
}

/// The plugin cache's file and the project's default `plugin-cache` ttl.
#[derive(Debug, Clone)]
pub struct CacheSettings {
    pub file: PathBuf,
    pub default_ttl: Option<u64>,
}

/// Why a plugin that runs something gave no value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PluginError {
    /// Its parameters or its own files are wrong (Bolt's
    /// `bolt/validation-error` and `bolt/invalid-plugin-data`).
    #[error("plugin {plugin}: {message}")]
    Invalid { plugin: String, message: String },
    /// It ran and failed, or gave something that is not a value (Bolt's
    /// `bolt/plugin-error`).
    #[error("plugin {plugin}: {message}")]
    Failed { plugin: String, message: String },
}

/// The process environment.
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}

/// How many files the yaml plugin may read for one inventory.
pub const MAX_FILES: usize = 256;

/// How often a plugin's value may itself be a reference, in a chain.
const MAX_CHAIN: usize = 32;

/// Replaces every plugin reference in a document. An optional env_var
/// reference with no value becomes null, and a mapping entry whose value
/// is such a null is dropped.
pub struct Resolver<'a> {
    env: &'a dyn Env,
    /// The directory relative `filepath`s are read from.
    base: PathBuf,
    /// Files read so far, and the chain of files being resolved (a file
    /// that includes itself is an error, not a loop).
    reads: usize,
    reading: Vec<PathBuf>,
    /// The plugin cache, once read.
    cache: Option<Cache>,
}

impl<'a> Resolver<'a> {
    pub fn new(inventory: &Path, env: &'a dyn Env) -> Self {
        let base = inventory
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        Resolver {
            env,
            base,
            reads: 0,
            reading: Vec::new(),
            cache: None,
        }
    }

    /// Resolves the references in `node`, which stands `depth` levels deep.
    pub fn resolve(&mut self, node: Node, depth: usize) -> Result<Node, InventoryError> {
        self.resolve_chain(node, depth, 0)
    }

    fn resolve_chain(
        &mut self,
        node: Node,
        depth: usize,
        chain: usize,
    ) -> Result<Node, InventoryError> {
        if node.plugin_reference().is_some() {
            if chain >= MAX_CHAIN {
                return Err(InventoryError::at(
                    node.origin,
                    format!(
                        "plugin values are references again more than {MAX_CHAIN} times in a row (a reference that resolves to itself?)"
                    ),
                ));
            }
            let Node { origin, value } = node;
            let Value::Map(entries) = value else {
                return Ok(Node { origin, value });
            };
            // Leaves first: the reference's parameters may be references.
            let mut params = Vec::with_capacity(entries.len());
            for (k, v) in entries {
                let v = if k.as_str() == Some("_plugin") {
                    v
                } else {
                    self.resolve(v, depth + 1)?
                };
                params.push((k, v));
            }
            let (value, file) = self.cached_call(&params, &origin, depth)?;
            let pushed = file.is_some();
            if let Some(file) = file {
                self.reading.push(file);
            }
            let resolved = self.resolve_chain(value, depth, chain + 1);
            if pushed {
                self.reading.pop();
            }
            return resolved;
        }
        let Node { origin, value } = node;
        let value = match value {
            Value::Map(entries) => {
                let mut out = Vec::with_capacity(entries.len());
                for (k, v) in entries {
                    let is_reference = v.plugin_reference().is_some();
                    let v = self.resolve(v, depth + 1)?;
                    if is_reference && matches!(v.value, Value::Null) {
                        continue;
                    }
                    out.push((k, v));
                }
                Value::Map(out)
            }
            Value::Seq(items) => Value::Seq(
                items
                    .into_iter()
                    .map(|item| self.resolve(item, depth + 1))
                    .collect::<Result<_, _>>()?,
            ),
            other => other,
        };
        Ok(Node { origin, value })
    }

    /// [`Resolver::call`] through Bolt's plugin cache, when the reference
    /// has `_cache` or the project a default ttl. The plugins that hold
    /// secrets ([`cache::NEVER_CACHED`]) are never cached.
    fn cached_call(
        &mut self,
        params: &[(Node, Node)],
        at: &Origin,
        depth: usize,
    ) -> Result<(Node, Option<PathBuf>), InventoryError> {
        let entry = |name: &str| params.iter().find(|(k, _)| k.as_str() == Some(name));
        let given = entry("_cache");
        let explicit = cache::ttl_of(given.map(|(_, v)| v)).map_err(|e| {
            InventoryError::at(given.map_or(at, |(_, v)| &v.origin).clone(), e.to_string())
        })?;
        let plugin = entry("_plugin").and_then(|(_, v)| v.as_str()).unwrap_or("");
        let settings = self.env.plugin_cache();
        let ttl = explicit.or(settings.as_ref().and_then(|s| s.default_ttl));
        let (Some(settings), Some(ttl)) = (settings, ttl) else {
            return self.call(params, at, depth);
        };
        if cache::NEVER_CACHED.contains(&plugin) {
            if explicit.is_some() {
                tracing::warn!(
                    "{at}: the {plugin} plugin's values are secrets, which ferry never writes to the plugin cache; _cache ignored"
                );
            }
            return self.call(params, at, depth);
        }
        let id = cache::id(params);
        let now = chrono::Local::now().fixed_offset();
        let write_error = |e: std::io::Error| {
            InventoryError::at(
                at.clone(),
                format!(
                    "cannot write the plugin cache {}: {e}",
                    settings.file.display()
                ),
            )
        };
        if self.cache.is_none() {
            let text = match self.env.read_file(&settings.file) {
                Ok(t) => Some(t),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => {
                    return Err(InventoryError::at(
                        at.clone(),
                        format!(
                            "cannot read the plugin cache {}: {e}",
                            settings.file.display()
                        ),
                    ));
                }
            };
            let mut loaded = Cache::parse(text.as_deref()).map_err(|e| {
                InventoryError::at(at.clone(), format!("{}: {e}", settings.file.display()))
            })?;
            if loaded.expire(now) {
                self.env
                    .write_file(&settings.file, &loaded.to_text())
                    .map_err(write_error)?;
            }
            self.cache = Some(loaded);
        }
        if ttl > 0
            && let Some(v) = self.cache.as_ref().and_then(|c| c.get(&id))
        {
            tracing::debug!("{at}: the {plugin} plugin's value comes from the plugin cache");
            return Ok((Node::from_json(v, at), None));
        }
        let (value, file) = self.call(params, at, depth)?;
        let cache = self.cache.get_or_insert_with(Cache::default);
        cache.insert(id, value.to_json(), now, ttl);
        self.env
            .write_file(&settings.file, &cache.to_text())
            .map_err(write_error)?;
        Ok((value, file))
    }

    /// Runs one reference whose parameters are resolved. Returns its value
    /// and, for the yaml plugin, the file it read.
    fn call(
        &mut self,
        params: &[(Node, Node)],
        at: &Origin,
        depth: usize,
    ) -> Result<(Node, Option<PathBuf>), InventoryError> {
        let name = params
            .iter()
            .find(|(k, _)| k.as_str() == Some("_plugin"))
            .map(|(k, v)| (k, v));
        let Some((key, plugin)) = name else {
            return Err(InventoryError::at(at.clone(), "_plugin is missing"));
        };
        match plugin.as_str() {
            Some("env_var") => Ok((env_var(params, at, self.env)?, None)),
            Some("yaml") => self.yaml(params, at, depth).map(|(n, p)| (n, Some(p))),
            Some("puppetdb") => Ok((puppetdb(params, at)?, None)),
            Some(other) => {
                let mut given = serde_json::Map::new();
                for (k, v) in params {
                    let key = key_text(k);
                    if key != "_plugin" && key != "_cache" {
                        given.insert(key, v.to_json());
                    }
                }
                match self.env.plugin(other, &given) {
                    Some(Ok(value)) => Ok((Node::from_json(&value, at), None)),
                    Some(Err(e)) => Err(InventoryError::at(at.clone(), e.to_string())),
                    None => {
                        let mut known = vec![
                            "env_var".to_string(),
                            "yaml".to_string(),
                            "puppetdb".to_string(),
                        ];
                        known.extend(self.env.plugin_names());
                        Err(InventoryError::at(
                            plugin.origin.clone(),
                            format!(
                                "unknown plugin '{other}' (ferry knows: {}; a module plugin is a module with a bolt_plugin.json on the modulepath)",
                                known.join(", ")
                            ),
                        ))
                    }
                }
            }
            None => Err(InventoryError::at(
                key.origin.clone(),
                format!("_plugin must be a string, found {}", plugin.kind()),
            )),
        }
    }

    /// The yaml plugin: `filepath` is read as one YAML document.
    fn yaml(
        &mut self,
        params: &[(Node, Node)],
        at: &Origin,
        depth: usize,
    ) -> Result<(Node, PathBuf), InventoryError> {
        let mut filepath = None;
        for (k, v) in params {
            match key_text(k).as_str() {
                "_plugin" | "_cache" => {}
                "filepath" => match v.as_str() {
                    Some(p) if !p.is_empty() => filepath = Some(p),
                    _ => {
                        return Err(InventoryError::at(
                            v.origin.clone(),
                            format!(
                                "filepath must be a path (a string that is not empty), found {}",
                                v.kind()
                            ),
                        ));
                    }
                },
                other => {
                    return Err(InventoryError::at(
                        k.origin.clone(),
                        format!("unknown key '{other}' for plugin yaml (expected filepath)"),
                    ));
                }
            }
        }
        let filepath = filepath
            .ok_or_else(|| InventoryError::at(at.clone(), "plugin yaml needs 'filepath'"))?;
        let path = self.path(filepath);
        if self.reading.contains(&path) {
            return Err(InventoryError::at(
                at.clone(),
                format!(
                    "plugin yaml: {} includes itself (through the yaml plugin)",
                    path.display()
                ),
            ));
        }
        self.reads += 1;
        if self.reads > MAX_FILES {
            return Err(InventoryError::at(
                at.clone(),
                format!("plugin yaml: more than {MAX_FILES} files read for one inventory"),
            ));
        }
        let text = self.env.read_file(&path).map_err(|e| {
            InventoryError::at(
                at.clone(),
                format!("plugin yaml: cannot read {}: {e}", path.display()),
            )
        })?;
        let file = Arc::new(path.clone());
        let node = crate::yaml::parse(&text)
            .map_err(|e| InventoryError::at(Origin::new(&file, e.line, e.column), e.message))?;
        Ok((Node::from_yaml(node, &file, depth)?, path))
    }

    /// A `filepath` as a path to read: `~/` from the home directory, a
    /// relative path from the inventory's directory.
    fn path(&self, filepath: &str) -> PathBuf {
        if let Some(rest) = filepath.strip_prefix("~/")
            && let Some(home) = self.env.var("HOME")
        {
            return PathBuf::from(home).join(rest);
        }
        let path = Path::new(filepath);
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.base.join(path)
        }
    }
}

fn env_var(params: &[(Node, Node)], at: &Origin, env: &dyn Env) -> Result<Node, InventoryError> {
    let mut var = None;
    let mut default = None;
    let mut optional = false;
    let mut json = false;
    for (k, v) in params {
        let here = k.origin.clone();
        match key_text(k).as_str() {
            "_plugin" | "_cache" => {}
            "var" => {
                var = Some(v.as_str().ok_or_else(|| {
                    InventoryError::at(here, format!("var must be a string, found {}", v.kind()))
                })?)
            }
            "default" => default = Some(v),
            "optional" => optional = bool_of(v, &here, "optional")?,
            "json" => json = bool_of(v, &here, "json")?,
            other => {
                return Err(InventoryError::at(
                    here,
                    format!(
                        "unknown key '{other}' for plugin env_var (expected var, default, optional, json)"
                    ),
                ));
            }
        }
    }
    let var = var.ok_or_else(|| InventoryError::at(at.clone(), "plugin env_var needs 'var'"))?;
    let located = |value| Node {
        origin: at.clone(),
        value,
    };
    match env.var(var) {
        Some(text) if json => {
            let parsed: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
                InventoryError::at(
                    at.clone(),
                    format!("environment variable {var} is not valid JSON: {e}"),
                )
            })?;
            Ok(Node::from_json(&parsed, at))
        }
        Some(text) => Ok(located(Value::Str(text))),
        None => match default {
            Some(d) => Ok(d.clone()),
            None if optional => Ok(Node::null(at.clone())),
            None => Err(InventoryError::at(
                at.clone(),
                format!("environment variable {var} is not set (plugin env_var)"),
            )),
        },
    }
}

/// Keys of a target that the puppetdb plugin fills from `target_mapping`.
const TEMPLATE_KEYS: &[&str] = &[
    "alias", "config", "facts", "features", "name", "uri", "vars",
];

/// The puppetdb plugin: the targets `query` names (rows with a
/// `certname`), each made from `target_mapping`, whose string leaves are
/// `certname` or a fact path (`facts.os.family`, array elements by index)
/// looked up in that node's facts. A target given neither `uri` nor `name`
/// gets its certname as `uri`. Needs a configured PuppetDB.
fn puppetdb(params: &[(Node, Node)], at: &Origin) -> Result<Node, InventoryError> {
    let mut query = None;
    let mut mapping = None;
    let mut instance: Option<String> = None;
    for (k, v) in params {
        let here = k.origin.clone();
        match key_text(k).as_str() {
            "_plugin" | "_cache" => {}
            "query" => query = Some(v.to_json()),
            "target_mapping" => mapping = Some(v),
            "instance" => {
                instance = Some(v.as_str().map(str::to_string).ok_or_else(|| {
                    InventoryError::at(
                        v.origin.clone(),
                        format!(
                            "plugin puppetdb: instance must be a string, found {}",
                            v.kind()
                        ),
                    )
                })?)
            }
            key if TEMPLATE_KEYS.contains(&key) => {
                return Err(InventoryError::at(
                    here,
                    format!(
                        "PuppetDB plugin expects keys [\"{key}\"] to be set under 'target_mapping'"
                    ),
                ));
            }
            other => {
                return Err(InventoryError::at(
                    here,
                    format!(
                        "Unknown keys in PuppetDB plugin: [\"{other}\"] (expected query, target_mapping, instance)"
                    ),
                ));
            }
        }
    }
    let template = match mapping {
        None => serde_json::Value::Object(serde_json::Map::new()),
        Some(m) if matches!(m.value, Value::Map(_)) => m.to_json(),
        Some(m) => {
            return Err(InventoryError::at(
                m.origin.clone(),
                format!("target_mapping must be a mapping, found {}", m.kind()),
            ));
        }
    };
    let Some(query) = query else {
        return Ok(Node::from_json(&serde_json::Value::Array(Vec::new()), at));
    };
    let fail =
        |e: &dyn std::fmt::Display| InventoryError::at(at.clone(), format!("plugin puppetdb: {e}"));
    let db = match crate::query::puppetdb::named(instance.as_deref()) {
        Some(db) => db.map_err(|e| fail(&e))?,
        None => {
            return Err(fail(
                &"no PuppetDB is configured (set puppetdb: server_urls in bolt-project.yaml)",
            ));
        }
    };
    let rows = db.query(&query).map_err(|e| fail(&e))?;
    let mut certnames: Vec<String> = Vec::new();
    for r in &rows {
        match r.get("certname").and_then(serde_json::Value::as_str) {
            Some(c) if !certnames.iter().any(|x| x == c) => certnames.push(c.to_string()),
            Some(_) => {}
            None => {
                let keys = r
                    .as_object()
                    .map(|m| m.keys().cloned().collect::<Vec<_>>().join(", "))
                    .unwrap_or_default();
                return Err(fail(&format!(
                    "Query results did not contain a 'certname' field: got {keys}"
                )));
            }
        }
    }
    let facts = db.facts_for(&certnames).map_err(|e| fail(&e))?;
    let mut targets = Vec::with_capacity(certnames.len());
    for c in &certnames {
        let node_facts = facts.get(c).cloned().unwrap_or(serde_json::Value::Null);
        let mut target = map_target(&template, c, &node_facts)
            .map_err(|m| InventoryError::at(mapping.map_or(at, |m| &m.origin).clone(), m))?;
        if let serde_json::Value::Object(t) = &mut target
            && !t.contains_key("uri")
            && !t.contains_key("name")
        {
            t.insert("uri".into(), serde_json::Value::String(c.clone()));
        }
        targets.push(target);
    }
    Ok(Node::from_json(&serde_json::Value::Array(targets), at))
}

/// `target_mapping` for one node: each string leaf replaced by the
/// certname or the fact it names; a fact the node lacks leaves the key out.
fn map_target(
    template: &serde_json::Value,
    certname: &str,
    facts: &serde_json::Value,
) -> Result<serde_json::Value, String> {
    use serde_json::Value as J;
    Ok(match template {
        J::Object(m) => {
            let mut out = serde_json::Map::new();
            for (k, v) in m {
                let v = map_target(v, certname, facts)?;
                if !v.is_null() {
                    out.insert(k.clone(), v);
                }
            }
            J::Object(out)
        }
        J::Array(a) => J::Array(
            a.iter()
                .map(|v| map_target(v, certname, facts))
                .collect::<Result<_, _>>()?,
        ),
        J::String(s) if s == "certname" => J::String(certname.to_string()),
        J::String(s) => {
            let Some(path) = s.strip_prefix("facts.") else {
                return Err(format!(
                    "Fact lookup '{s}' contains an invalid factname: fact lookups must start with 'facts.'"
                ));
            };
            let mut v = facts;
            for p in path.split('.') {
                v = match v {
                    J::Object(m) => m.get(p).unwrap_or(&J::Null),
                    J::Array(a) => p
                        .parse::<usize>()
                        .ok()
                        .and_then(|i| a.get(i))
                        .unwrap_or(&J::Null),
                    _ => &J::Null,
                };
            }
            if v.is_null() {
                tracing::warn!("Could not find fact {s} for node {certname}");
            }
            v.clone()
        }
        other => {
            return Err(format!(
                "Fact lookup '{other}' contains an invalid factname: fact lookups must be a string"
            ));
        }
    })
}

fn bool_of(v: &Node, here: &Origin, what: &str) -> Result<bool, InventoryError> {
    match v.value {
        Value::Bool(b) => Ok(b),
        _ => Err(InventoryError::at(
            here.clone(),
            format!("{what} must be true or false, found {}", v.kind()),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct FakeEnv {
        vars: HashMap<&'static str, &'static str>,
        files: HashMap<&'static str, &'static str>,
    }
    impl Env for FakeEnv {
        fn var(&self, name: &str) -> Option<String> {
            self.vars.get(name).map(|s| s.to_string())
        }
        fn read_file(&self, path: &Path) -> std::io::Result<String> {
            let key = path.to_string_lossy();
            self.files
                .get(key.as_ref())
                .map(|s| s.to_string())
                .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))
        }
    }

    fn run_with(
        yaml: &str,
        vars: &[(&'static str, &'static str)],
        files: &[(&'static str, &'static str)],
    ) -> Result<serde_json::Value, String> {
        let env = FakeEnv {
            vars: vars.iter().copied().collect(),
            files: files.iter().copied().collect(),
        };
        let file = Arc::new(PathBuf::from("proj/inv.yaml"));
        let node = Node::from_yaml(crate::yaml::parse(yaml).unwrap(), &file, 0).unwrap();
        Resolver::new(&file, &env)
            .resolve(node, 0)
            .map(|n| n.to_json())
            .map_err(|e| e.to_string())
    }

    fn run(yaml: &str, env: &[(&'static str, &'static str)]) -> Result<serde_json::Value, String> {
        run_with(yaml, env, &[])
    }

    #[test]
    fn env_var_values() {
        let doc = "a: {_plugin: env_var, var: A}\nb: {_plugin: env_var, var: B, default: d}\nc: {_plugin: env_var, var: C, optional: true}\nd: {_plugin: env_var, var: D, json: true}\n";
        let out = run(doc, &[("A", "x"), ("D", "[1, {\"k\": true}]")]).unwrap();
        assert_eq!(
            out,
            serde_json::json!({"a": "x", "b": "d", "d": [1, {"k": true}]})
        );
    }

    #[test]
    fn env_var_errors_name_the_position() {
        let err = run("x:\n  y: {_plugin: env_var, var: NOPE}\n", &[]).unwrap_err();
        assert_eq!(
            err,
            "proj/inv.yaml:2:6: environment variable NOPE is not set (plugin env_var)"
        );
        let err = run("x: {_plugin: vault, var: A}\n", &[]).unwrap_err();
        assert!(
            err.starts_with("proj/inv.yaml:1:14: unknown plugin 'vault'"),
            "{err}"
        );
    }

    #[test]
    fn parameters_are_resolved_first_and_values_again() {
        // The filepath comes from the environment; the file's content holds
        // another reference.
        let out = run_with(
            "x: {_plugin: yaml, filepath: {_plugin: env_var, var: F}}\n",
            &[("F", "part.yaml"), ("U", "me")],
            &[("proj/part.yaml", "user: {_plugin: env_var, var: U}\n")],
        )
        .unwrap();
        assert_eq!(out, serde_json::json!({"x": {"user": "me"}}));
        // A variable whose JSON value is a reference to itself stops.
        let err = run(
            "x: {_plugin: env_var, var: S, json: true}\n",
            &[("S", r#"{"_plugin": "env_var", "var": "S", "json": true}"#)],
        )
        .unwrap_err();
        assert!(err.contains("more than 32 times"), "{err}");
    }

    #[test]
    fn yaml_paths_and_errors() {
        let files = [
            ("/abs/a.yaml", "[1, 2]\n"),
            ("/home/u/creds.yaml", "user: me\n"),
            ("proj/loop.yaml", "{_plugin: yaml, filepath: loop.yaml}\n"),
            ("proj/bad.yaml", "a: [1,\n"),
        ];
        let vars = [("HOME", "/home/u")];
        let out = run_with(
            "a: {_plugin: yaml, filepath: /abs/a.yaml}\nb: {_plugin: yaml, filepath: ~/creds.yaml}\n",
            &vars,
            &files,
        )
        .unwrap();
        assert_eq!(out, serde_json::json!({"a": [1, 2], "b": {"user": "me"}}));
        let err = run_with("a: {_plugin: yaml, filepath: loop.yaml}\n", &vars, &files).unwrap_err();
        assert!(
            err.starts_with("proj/loop.yaml:1:1: plugin yaml: proj/loop.yaml includes itself"),
            "{err}"
        );
        let err = run_with("a: {_plugin: yaml, filepath: bad.yaml}\n", &vars, &files).unwrap_err();
        assert!(err.starts_with("proj/bad.yaml:"), "{err}");
        let err = run_with("a: {_plugin: yaml, filepath: none.yaml}\n", &vars, &files).unwrap_err();
        assert!(
            err.starts_with("proj/inv.yaml:1:4: plugin yaml: cannot read proj/none.yaml"),
            "{err}"
        );
        let err = run_with("a: {_plugin: yaml, path: x}\n", &vars, &files).unwrap_err();
        assert!(err.contains("unknown key 'path' for plugin yaml"), "{err}");
    }
}
