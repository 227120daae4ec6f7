//! Bolt projects: the directory a Bolt user runs from, as Bolt finds and
//! reads it. A project is a directory holding `bolt-project.yaml` (or an
//! embedded `Boltdir/` holding one); it is chosen by `--project DIR`, else
//! `BOLT_PROJECT`, else by walking up from the current directory to the
//! first `Boltdir/` or `bolt-project.yaml`. With a `name`, the project is
//! itself a module of that name (its `plans/`, `tasks/`, `files/` at the
//! root) ahead of every other; its modulepath is `modulepath` (default
//! `modules`, relative to the project) with `.modules` (where Bolt installs
//! modules) always appended; its inventory is `inventory.yaml` in it; its
//! `plans` and `tasks` globs limit what `plan show` and `task show` list;
//! `concurrency` and `hiera-config` give defaults the command line
//! overrides; `rerunfile` and `save-rerun` place or turn off the record
//! `--rerun` reads. Other keys Bolt knows are accepted and ignored, unknown
//! keys and transport keys are warnings (as Bolt has them), wrong types
//! are errors with file, line and column. A project in a world-writable
//! directory is refused unless `BOLT_PROJECT` names it (Bolt's rule).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::inventory::glob::Glob;
use crate::lang::modulepath::Modulepath;
use crate::yaml::{self, Node, Origin, Value, key_text};

/// The project file's name.
pub const CONFIG_NAME: &str = "bolt-project.yaml";
/// The embedded project directory's name.
pub const BOLTDIR_NAME: &str = "Boltdir";

/// Keys Bolt reads from `bolt-project.yaml` (its `PROJECT_OPTIONS`).
const PROJECT_KEYS: &[&str] = &[
    "analytics",
    "apply-settings",
    "color",
    "compile-concurrency",
    "concurrency",
    "disable-warnings",
    "format",
    "future",
    "hiera-config",
    "log",
    "modulepath",
    "module-install",
    "modules",
    "name",
    "plans",
    "plugin-cache",
    "plugin-hooks",
    "plugins",
    "policies",
    "puppetdb",
    "puppetdb-instances",
    "rerunfile",
    "save-rerun",
    "spinner",
    "stream",
    "tasks",
    "trusted-external-command",
];

/// Transport keys, which Bolt ignores in a project file with a warning.
const TRANSPORT_KEYS: &[&str] = &[
    "transport",
    "docker",
    "jail",
    "local",
    "lxd",
    "pcp",
    "podman",
    "remote",
    "ssh",
    "winrm",
];

/// Bolt's built-in modules (and ferry's): a project may not take their names.
const BUILTIN_MODULES: &[&str] = &[
    "boltlib", "ctrl", "dir", "file", "log", "out", "prompt", "system", "ferry",
];

/// How the project was chosen, which decides whether a world-writable
/// directory is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chosen {
    /// `BOLT_PROJECT`: taken as named, even world-writable (Bolt's escape hatch).
    Environment,
    /// `--project DIR`.
    Option,
    /// Found by walking up from the current directory.
    Found,
}

#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    #[error("Could not find project at {0}")]
    Missing(String),
    #[error(
        "Project directory '{0}' is world-writable which poses a security risk. Set BOLT_PROJECT='{0}' to force the use of this project directory."
    )]
    WorldWritable(String),
    #[error("{0}: cannot read the project file: {1}")]
    Read(String, std::io::Error),
    #[error("{origin}: invalid configuration: {msg}")]
    Invalid { origin: Origin, msg: String },
}

/// A Bolt project as ferry uses it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Project {
    /// The project directory (absolute).
    pub dir: PathBuf,
    /// `name`: the project is a module of this name.
    pub name: Option<String>,
    /// `modulepath`, absolute; `None`: the default (`modules`).
    pub modulepath: Option<Vec<PathBuf>>,
    /// `plans`: the globs `plan show` lists by.
    pub plans: Option<Vec<String>>,
    /// `tasks`: the globs `task show` lists by.
    pub tasks: Option<Vec<String>>,
    pub concurrency: Option<usize>,
    /// `format`: `human`, `json` (`rainbow` is human).
    pub format: Option<String>,
    /// `hiera-config`, absolute.
    pub hiera_config: Option<PathBuf>,
    /// `rerunfile`, absolute; `None`: `.rerun.json` in the project.
    pub rerunfile: Option<PathBuf>,
    /// `save-rerun: false` turns the rerun file off.
    pub save_rerun: bool,
    /// `plugins`: each plugin's configuration (a module plugin's task
    /// parameters that every reference shares), by plugin name.
    pub plugins: BTreeMap<String, serde_json::Map<String, serde_json::Value>>,
    /// `plugin-cache.ttl`: how long every plugin reference's value is
    /// cached (seconds), when the reference sets no `_cache` of its own.
    pub plugin_cache: Option<u64>,
    /// `puppetdb`: the PuppetDB that queries go to (paths absolute).
    pub puppetdb: Option<crate::query::puppetdb::Config>,
    /// `puppetdb-instances`: named PuppetDBs, which a query names.
    pub puppetdb_instances: BTreeMap<String, crate::query::puppetdb::Config>,
    /// What Bolt would warn about (unknown and transport keys, a missing name).
    pub warnings: Vec<String>,
}

/// The project directory for a run started in `cwd`: `--project` (given
/// as `option`), else `BOLT_PROJECT` (`env`), else the first directory
/// from `cwd` up that holds `Boltdir/` (the project is that `Boltdir`) or
/// `bolt-project.yaml`. `None` when there is none.
pub fn locate(
    option: Option<&Path>,
    env: Option<&Path>,
    cwd: &Path,
) -> Result<Option<(PathBuf, Chosen)>, ProjectError> {
    let named = |p: &Path, chosen| {
        let dir = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        if dir.is_dir() {
            Ok(Some((dir, chosen)))
        } else {
            Err(ProjectError::Missing(p.display().to_string()))
        }
    };
    if let Some(p) = env {
        return named(p, Chosen::Environment);
    }
    if let Some(p) = option {
        return named(p, Chosen::Option);
    }
    let mut dir = Some(cwd);
    while let Some(d) = dir {
        if d.join(BOLTDIR_NAME).is_dir() {
            return Ok(Some((d.join(BOLTDIR_NAME), Chosen::Found)));
        }
        if d.join(CONFIG_NAME).is_file() {
            return Ok(Some((d.to_path_buf(), Chosen::Found)));
        }
        dir = d.parent();
    }
    Ok(None)
}

/// Reads the project at `dir` (its `bolt-project.yaml` may be absent).
pub fn load(dir: &Path, chosen: Chosen) -> Result<Project, ProjectError> {
    if chosen != Chosen::Environment && world_writable(dir) {
        return Err(ProjectError::WorldWritable(dir.display().to_string()));
    }
    let file = dir.join(CONFIG_NAME);
    let mut project = Project {
        dir: dir.to_path_buf(),
        name: None,
        modulepath: None,
        plans: None,
        tasks: None,
        concurrency: None,
        format: None,
        hiera_config: None,
        rerunfile: None,
        save_rerun: true,
        plugins: BTreeMap::new(),
        plugin_cache: None,
        puppetdb: None,
        puppetdb_instances: BTreeMap::new(),
        warnings: Vec::new(),
    };
    let text = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(project),
        Err(e) => return Err(ProjectError::Read(file.display().to_string(), e)),
    };
    let origin_file = Arc::new(file);
    let at = |line: u64, column: u64| Origin::new(&origin_file, line, column);
    let doc = yaml::parse(&text).map_err(|e| ProjectError::Invalid {
        origin: at(e.line, e.column),
        msg: e.message,
    })?;
    let entries = match &doc.value {
        Value::Null => return Ok(project),
        Value::Map(entries) => entries,
        _ => {
            return Err(ProjectError::Invalid {
                origin: at(doc.line, doc.column),
                msg: format!("the project file must be a mapping, not {}", doc.kind()),
            });
        }
    };
    let invalid = |node: &Node, msg: String| ProjectError::Invalid {
        origin: at(node.line, node.column),
        msg,
    };
    let mut transport = Vec::new();
    for (k, v) in entries {
        let key = key_text(k);
        let wrong = |ty: &str| invalid(v, format!("Value at '{key}' must be of type {ty}"));
        match key.as_str() {
            "name" => {
                let name = v.as_str().ok_or_else(|| wrong("String"))?;
                if !valid_name(name) {
                    return Err(invalid(
                        v,
                        format!(
                            "Invalid project name '{name}' in bolt-project.yaml; project name must begin with a lowercase letter and can include lowercase letters, numbers, and underscores."
                        ),
                    ));
                }
                if BUILTIN_MODULES.contains(&name) {
                    return Err(invalid(
                        v,
                        format!(
                            "The project '{name}' will not be loaded. The project name conflicts with a built-in module of the same name."
                        ),
                    ));
                }
                project.name = Some(name.to_string());
            }
            "modulepath" => {
                let dirs: Vec<String> = match &v.value {
                    Value::Str(s) => s.split(':').map(str::to_string).collect(),
                    Value::Seq(_) => strings(v).ok_or_else(|| wrong("Array or String"))?,
                    _ => return Err(wrong("Array or String")),
                };
                let managed = dir.join(".modules");
                let mut out = Vec::new();
                for d in dirs.iter().filter(|d| !d.is_empty()) {
                    let p = dir.join(d);
                    if p == managed {
                        return Err(invalid(
                            v,
                            format!(
                                "Found invalid path in modulepath: {}. This path is automatically appended to the modulepath and cannot be configured.",
                                managed.display()
                            ),
                        ));
                    }
                    out.push(p);
                }
                project.modulepath = Some(out);
            }
            "plans" => project.plans = Some(strings(v).ok_or_else(|| wrong("Array"))?),
            "tasks" => project.tasks = Some(strings(v).ok_or_else(|| wrong("Array"))?),
            "concurrency" => match v.value {
                Value::Int(n) if n >= 1 => project.concurrency = usize::try_from(n).ok(),
                Value::Int(_) => {
                    return Err(invalid(
                        v,
                        "Value at 'concurrency' must be a minimum of 1".into(),
                    ));
                }
                _ => return Err(wrong("Integer")),
            },
            "format" => match v.as_str() {
                Some(f @ ("human" | "json" | "rainbow")) => project.format = Some(f.to_string()),
                _ => {
                    return Err(invalid(
                        v,
                        "Value at 'format' must be human, json or rainbow".into(),
                    ));
                }
            },
            "hiera-config" => {
                let p = v.as_str().ok_or_else(|| wrong("String"))?;
                project.hiera_config = Some(dir.join(p));
            }
            "rerunfile" => {
                let p = v.as_str().ok_or_else(|| wrong("String"))?;
                project.rerunfile = Some(dir.join(p));
            }
            "save-rerun" => match v.value {
                Value::Bool(b) => project.save_rerun = b,
                _ => return Err(wrong("Boolean")),
            },
            "plugins" => {
                let Value::Map(plugins) = &v.value else {
                    return Err(wrong("Hash"));
                };
                for (key, config) in plugins {
                    let name = key_text(key);
                    if name == "puppetdb" {
                        // Bolt's rule: the plugin reads the `puppetdb` section.
                        return Err(invalid(
                            key,
                            "Configuration for the PuppetDB plugin must be in the 'puppetdb' config section, not 'plugins'".into(),
                        ));
                    }
                    match config.to_json() {
                        serde_json::Value::Object(map) => {
                            project.plugins.insert(name, map);
                        }
                        _ => {
                            return Err(invalid(
                                config,
                                format!("Value at 'plugins.{name}' must be of type Hash"),
                            ));
                        }
                    }
                }
            }
            "puppetdb" => project.puppetdb = Some(puppetdb(dir, v, &at, "puppetdb")?),
            "puppetdb-instances" => {
                let Value::Map(instances) = &v.value else {
                    return Err(wrong("Hash"));
                };
                for (name, config) in instances {
                    let name = key_text(name);
                    let section = format!("puppetdb-instances.{name}");
                    let config = puppetdb(dir, config, &at, &section)?;
                    project.puppetdb_instances.insert(name, config);
                }
            }
            "plugin-cache" => {
                let Value::Map(entries) = &v.value else {
                    return Err(wrong("Hash"));
                };
                match entries.iter().find(|(k, _)| key_text(k) == "ttl") {
                    Some((_, t)) => match t.value {
                        Value::Int(n) if n >= 0 => project.plugin_cache = u64::try_from(n).ok(),
                        Value::Int(_) => {
                            return Err(invalid(
                                t,
                                "Value at 'plugin-cache.ttl' must be a minimum of 0".into(),
                            ));
                        }
                        _ => {
                            return Err(invalid(
                                t,
                                "Value at 'plugin-cache.ttl' must be of type Integer".into(),
                            ));
                        }
                    },
                    None => {
                        return Err(invalid(
                            v,
                            "Value at 'plugin-cache' is missing required keys ttl".into(),
                        ));
                    }
                }
            }
            k if TRANSPORT_KEYS.contains(&k) => transport.push(key),
            k if PROJECT_KEYS.contains(&k) => {}
            _ => project.warnings.push(format!(
                "Unknown option '{key}' at {}.",
                at(k.line, k.column)
            )),
        }
    }
    if !transport.is_empty() {
        project.warnings.push(format!(
            "Transport configuration isn't supported in bolt-project.yaml. Ignoring keys {transport:?}."
        ));
    }
    if project.name.is_none()
        && ["plans", "tasks", "files"]
            .iter()
            .any(|d| dir.join(d).is_dir())
    {
        project.warnings.push(
            "No project name is specified in bolt-project.yaml. Project-level content will not be available.".into(),
        );
    }
    Ok(project)
}

impl Project {
    /// The project's modulepath: `modulepath` given on the command line
    /// (`cli`), else the project's, else `modules`; then `.modules`; with
    /// the project itself as a module when it has a name.
    pub fn modulepath(&self, cli: Option<Vec<PathBuf>>) -> Modulepath {
        let mut dirs = cli
            .or_else(|| self.modulepath.clone())
            .unwrap_or_else(|| vec![self.dir.join("modules")]);
        let managed = self.dir.join(".modules");
        if !dirs.contains(&managed) {
            dirs.push(managed);
        }
        let mp = Modulepath::new(dirs);
        match &self.name {
            Some(name) => mp.with_project(name, self.dir.clone()),
            None => mp,
        }
    }

    /// The project's inventory file.
    pub fn inventory_file(&self) -> PathBuf {
        self.dir.join("inventory.yaml")
    }

    /// Where `--rerun` reads the last run and each run records itself
    /// (Bolt's format: `[{target, status}]`).
    pub fn rerun_file(&self) -> PathBuf {
        self.rerunfile
            .clone()
            .unwrap_or_else(|| self.dir.join(".rerun.json"))
    }

    /// Whether `plan show` (`plans: true`) or `task show` lists `name`:
    /// always without a `plans`/`tasks` key, else when a glob matches.
    pub fn lists(&self, plans: bool, name: &str) -> bool {
        let globs = if plans { &self.plans } else { &self.tasks };
        match globs {
            None => true,
            Some(globs) => globs.iter().any(|g| glob_matches(g, name)),
        }
    }
}

/// Bolt's module and project name rule.
fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// A list of strings, or `None` when the node is anything else.
/// Bolt's `puppetdb` settings: `server_urls` (a list, or one URL),
/// `cacert`, `cert`, `key`, `token` (files, relative to the project),
/// `connect_timeout` and `read_timeout` (seconds).
fn puppetdb(
    dir: &Path,
    v: &Node,
    at: &dyn Fn(u64, u64) -> Origin,
    section: &str,
) -> Result<crate::query::puppetdb::Config, ProjectError> {
    let invalid = |node: &Node, msg: String| ProjectError::Invalid {
        origin: at(node.line, node.column),
        msg,
    };
    let Value::Map(entries) = &v.value else {
        return Err(invalid(
            v,
            format!("Value at '{section}' must be of type Hash"),
        ));
    };
    let mut config = crate::query::puppetdb::Config::new(Vec::new());
    for (k, v) in entries {
        let key = key_text(k);
        let wrong = |ty: &str| {
            invalid(
                v,
                format!("Value at '{section}.{key}' must be of type {ty}"),
            )
        };
        let path = || -> Result<PathBuf, ProjectError> {
            let p = v.as_str().ok_or_else(|| wrong("String"))?;
            Ok(match p.strip_prefix("~/") {
                Some(rest) => std::env::var_os("HOME")
                    .map_or_else(|| dir.join(p), |h| PathBuf::from(h).join(rest)),
                None => dir.join(p),
            })
        };
        let secs = || -> Result<std::time::Duration, ProjectError> {
            match v.value {
                Value::Int(n) if n >= 1 => Ok(std::time::Duration::from_secs(n.unsigned_abs())),
                Value::Int(_) => Err(invalid(
                    v,
                    format!("Value at '{section}.{key}' must be a minimum of 1"),
                )),
                _ => Err(wrong("Integer")),
            }
        };
        match key.as_str() {
            "server_urls" => {
                config.server_urls = match &v.value {
                    Value::Str(s) => vec![s.clone()],
                    _ => strings(v).ok_or_else(|| wrong("Array"))?,
                }
            }
            "cacert" => config.cacert = Some(path()?),
            "cert" => config.cert = Some(path()?),
            "key" => config.key = Some(path()?),
            "token" => config.token = Some(path()?),
            "connect_timeout" => config.connect_timeout = secs()?,
            "read_timeout" => config.read_timeout = secs()?,
            "default" => {
                return Err(invalid(
                    k,
                    format!(
                        "Unknown option 'default' in {section}: the default PuppetDB is the 'puppetdb' section itself; to make a named instance of 'puppetdb-instances' the default, pass --puppetdb NAME"
                    ),
                ));
            }
            other => {
                return Err(invalid(
                    k,
                    format!(
                        "Unknown option '{other}' in {section} (expected server_urls, cacert, cert, key, token, connect_timeout, read_timeout)"
                    ),
                ));
            }
        }
    }
    if config.server_urls.is_empty() {
        return Err(invalid(v, format!("{section} needs server_urls")));
    }
    Ok(config)
}

fn strings(node: &Node) -> Option<Vec<String>> {
    match &node.value {
        Value::Seq(items) => items
            .iter()
            .map(|n| n.as_str().map(str::to_string))
            .collect(),
        _ => None,
    }
}

/// Ruby's `File.fnmatch` with braces, as Bolt filters plan and task names
/// (the `--targets` glob rules: `*`, `?`, `[set]`, `{a,b}`).
fn glob_matches(glob: &str, name: &str) -> bool {
    Glob::new(glob).matches(name)
}

/// Whether others may write `dir` (mode `o+w`).
fn world_writable(dir: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(dir).is_ok_and(|m| m.permissions().mode() & 0o002 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_as_bolt_filters_names() {
        assert!(glob_matches("myproject::*", "myproject::deploy"));
        assert!(glob_matches("{facts,package}", "package"));
        assert!(glob_matches("[abc]_module::*", "b_module::x"));
        assert!(!glob_matches("myproject::*", "other::deploy"));
    }

    #[test]
    fn a_world_writable_project_is_refused_unless_bolt_project_names_it() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(CONFIG_NAME), "name: open\n").unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        for chosen in [Chosen::Found, Chosen::Option] {
            let e = load(dir.path(), chosen).unwrap_err().to_string();
            assert!(e.contains("is world-writable"), "{e}");
            assert!(e.contains("Set BOLT_PROJECT="), "{e}");
        }
        let p = load(dir.path(), Chosen::Environment).unwrap();
        assert_eq!(p.name.as_deref(), Some("open"));
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(load(dir.path(), Chosen::Found).is_ok());
    }

    #[test]
    fn wrong_types_name_the_key_and_its_position() {
        let dir = tempfile::tempdir().unwrap();
        let write = |text: &str| std::fs::write(dir.path().join(CONFIG_NAME), text).unwrap();
        write("name: p\nconcurrency: many\n");
        let e = load(dir.path(), Chosen::Found).unwrap_err().to_string();
        assert!(e.ends_with("bolt-project.yaml:2:14: invalid configuration: Value at 'concurrency' must be of type Integer"), "{e}");
        write("modulepath: [modules, .modules]\n");
        let e = load(dir.path(), Chosen::Found).unwrap_err().to_string();
        assert!(
            e.contains("is automatically appended to the modulepath"),
            "{e}"
        );
        write("name: boltlib\n");
        let e = load(dir.path(), Chosen::Found).unwrap_err().to_string();
        assert!(e.contains("conflicts with a built-in module"), "{e}");
    }

    #[test]
    fn the_rerun_file_is_the_projects_unless_moved_or_turned_off() {
        let dir = tempfile::tempdir().unwrap();
        let write = |text: &str| std::fs::write(dir.path().join(CONFIG_NAME), text).unwrap();
        write("name: p\n");
        let p = load(dir.path(), Chosen::Found).unwrap();
        assert_eq!(p.rerun_file(), dir.path().join(".rerun.json"));
        assert!(p.save_rerun);
        write("rerunfile: state/last.json\nsave-rerun: false\n");
        let p = load(dir.path(), Chosen::Found).unwrap();
        assert_eq!(p.rerun_file(), dir.path().join("state/last.json"));
        assert!(!p.save_rerun);
        write("save-rerun: nope\n");
        let e = load(dir.path(), Chosen::Found).unwrap_err().to_string();
        assert!(
            e.contains("Value at 'save-rerun' must be of type Boolean"),
            "{e}"
        );
    }

    #[test]
    fn project_names_follow_bolts_rule() {
        assert!(valid_name("my_project2"));
        assert!(!valid_name("2proj"));
        assert!(!valid_name("MyProject"));
        assert!(!valid_name("my-project"));
    }
}
