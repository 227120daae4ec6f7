//! `ferry catalog compile`: read the facts, compile, print the catalog (or
//! the compiler's error, Puppet-style, with file, line and column).
//! With `--batch FILE`, one process compiles many catalogs: each line of
//! FILE (JSON) names a node, its facts and its code, and each answer is a
//! line of JSON on standard output, so a fleet's catalogs (or a test
//! corpus) compile with the modules parsed once, as a server compiles them.
//! `ferry catalog functions`: list the built-in functions and their
//! signatures.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};

use super::{CatalogFormat, ModuleArgs};
use ferry::catalog::environment::{DEFAULT_ENVIRONMENT, Environment};
use ferry::catalog::{
    Catalog, CompileOptions, CompileRequest, ManifestSource, compile_with_options,
};
use ferry::lang::functions::{Count, registry};
use ferry::lang::loader::FsLoader;
use ferry::output::Format;
use serde_json::{Map, Value, json};

/// What `ferry catalog compile` compiles: the manifest (a file or code),
/// the node and its facts, the environment and the global hiera layer.
#[derive(clap::Args, Debug)]
pub struct Sources {
    /// The main manifest (a .pp file or a directory of them).
    #[arg(long, conflicts_with = "code", required_unless_present_any = ["code", "environmentpath", "batch"])]
    pub manifest: Option<PathBuf>,
    /// Puppet code to compile instead of a manifest file.
    #[arg(short = 'e', long = "execute")]
    pub code: Option<String>,
    /// The node's facts, as a JSON object.
    #[arg(long)]
    pub facts: Option<PathBuf>,
    /// The node's certname [default: the facts' `clientcert` or fqdn, else
    /// this machine's host name, as `puppet apply` does].
    #[arg(long)]
    pub node: Option<String>,
    /// The environment: with --environmentpath its name (default
    /// production); alone, an environment directory (hiera.yaml, data/,
    /// modules/).
    #[arg(long)]
    pub environment: Option<PathBuf>,
    /// Directories holding Puppet environments, separated by ':' (Puppet's
    /// environmentpath): --environment names one, whose environment.conf
    /// applies (--modulepath is its $basemodulepath).
    #[arg(long, value_name = "DIRS")]
    pub environmentpath: Option<String>,
    /// The global hiera layer's hiera.yaml (Puppet's hiera_config),
    /// consulted before the environment's.
    #[arg(long)]
    pub hiera_config: Option<PathBuf>,
    /// Compile many catalogs in this one process: FILE ('-' for standard
    /// input) holds one JSON object per line, `{"node", "facts" (an
    /// object) or "facts_file", "code" or "manifest"}` (each optional:
    /// the command line's values are the defaults); each gives one line
    /// of JSON on standard output, `{"line", "node", "catalog"}` or
    /// `{"line", "node", "error"}`, with `"messages"` when the compile
    /// warned. The exit code is 1 when any line failed.
    #[arg(long, value_name = "FILE")]
    pub batch: Option<PathBuf>,
}

/// Reads a facts file: a JSON object, or `puppet facts` output (the facts
/// under `values`).
fn read_facts(path: &Path) -> Result<Map<String, Value>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read the facts", path.display()))?;
    match serde_json::from_str(&text) {
        // `puppet facts` output wraps the facts in {"name", "values"}.
        Ok(Value::Object(mut map)) if map.contains_key("values") && map.contains_key("name") => {
            match map.remove("values") {
                Some(Value::Object(values)) => Ok(values),
                _ => bail!("{}: \"values\" must be a JSON object", path.display()),
            }
        }
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => bail!("{}: facts must be a JSON object", path.display()),
        Err(e) => bail!("{}:{}:{}: {e}", path.display(), e.line(), e.column()),
    }
}

/// What every compile of one command shares: the environment (or
/// modulepath), the hiera layer and the catalog version.
struct Base {
    puppet_env: Option<Environment>,
    modulepath: ferry::lang::modulepath::Modulepath,
    environment: Option<PathBuf>,
    hiera_config: Option<PathBuf>,
    version: Option<String>,
}

impl Base {
    fn new(
        environmentpath: Option<&str>,
        environment: Option<PathBuf>,
        hiera_config: Option<PathBuf>,
        modules: &ModuleArgs,
    ) -> Result<Base> {
        let puppet_env = puppet_environment(environmentpath, environment.as_deref(), modules)?;
        let version = match &puppet_env {
            Some(env) => match env.config_version.as_deref() {
                Some(command) => Some(ferry::server::environments::run_config_version(
                    command, &env.dir,
                )?),
                None => None,
            },
            None => None,
        };
        Ok(Base {
            modulepath: modules.resolve(),
            puppet_env,
            environment,
            hiera_config,
            version,
        })
    }

    /// The manifest when a compile names none: the environment's, if any.
    fn default_manifest(&self) -> Option<ManifestSource> {
        self.puppet_env.as_ref().map(env_manifest)
    }

    /// `node`'s catalog from `manifest` with `facts`, or the compiler's
    /// error.
    fn compile(
        &self,
        manifest: ManifestSource,
        facts: Map<String, Value>,
        node: String,
    ) -> Result<Catalog, ferry::catalog::CompileError> {
        let (request, options) = match &self.puppet_env {
            Some(env) => (
                CompileRequest {
                    manifest,
                    modulepath: env.modulepath.clone().into(),
                    facts,
                    node,
                    environment: Some(env.dir.clone()),
                },
                CompileOptions {
                    hiera_config: self.hiera_config.clone(),
                    environment_name: Some(env.name.clone()),
                    modulepath_complete: true,
                    ..CompileOptions::default()
                },
            ),
            None => (
                CompileRequest {
                    manifest,
                    modulepath: self.modulepath.clone(),
                    facts,
                    node,
                    environment: self.environment.clone(),
                },
                CompileOptions {
                    hiera_config: self.hiera_config.clone(),
                    ..CompileOptions::default()
                },
            ),
        };
        compile_with_options(&request, &FsLoader, &options)
    }

    /// The catalog as Puppet's catalog JSON, with the environment's
    /// config_version as its version.
    fn json(&self, catalog: &Catalog) -> Result<Value> {
        let mut doc = serde_json::to_value(catalog)?;
        if let Some(v) = &self.version {
            // Puppet's catalog version is config_version's output.
            doc["version"] = Value::String(v.clone());
        }
        Ok(doc)
    }
}

pub fn compile(sources: Sources, modules: &ModuleArgs, format: CatalogFormat) -> Result<ExitCode> {
    let Sources {
        manifest,
        code,
        facts,
        node,
        environment,
        environmentpath,
        hiera_config,
        batch,
    } = sources;
    let base = Base::new(
        environmentpath.as_deref(),
        environment,
        hiera_config,
        modules,
    )?;
    let facts = match facts.as_deref() {
        None => Map::new(),
        Some(path) => read_facts(path)?,
    };
    let manifest = match (manifest, code) {
        (Some(m), _) => Some(ManifestSource::File(m)),
        (None, Some(c)) => Some(ManifestSource::Code(c)),
        (None, None) => base.default_manifest(),
    };
    if let Some(file) = batch {
        if format != CatalogFormat::Json {
            bail!("--batch prints JSON lines: it takes no --format summary");
        }
        return compile_batch(&base, &file, manifest, facts, node);
    }
    let node = node.unwrap_or_else(|| default_node(&facts));
    let Some(manifest) = manifest else {
        bail!("give --manifest FILE or -e CODE");
    };
    let catalog = match base.compile(manifest, facts, node) {
        Ok(c) => c,
        Err(e) => {
            // Puppet's own form, so its users (and compare.py) read it as Puppet's.
            eprintln!("Error: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    for m in &catalog.messages {
        eprintln!("{m}");
    }
    let mut out = std::io::stdout().lock();
    match format {
        CatalogFormat::Json => writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&base.json(&catalog)?)?
        )?,
        CatalogFormat::Summary => write!(out, "{}", catalog.summary())?,
    }
    Ok(ExitCode::SUCCESS)
}

/// One line of a `--batch` file.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct BatchLine {
    node: Option<String>,
    facts: Option<Map<String, Value>>,
    facts_file: Option<PathBuf>,
    code: Option<String>,
    manifest: Option<PathBuf>,
}

/// `--batch FILE`: compiles each line's catalog in turn, printing one
/// JSON line per input line as it is done. A line that is not a valid
/// request gets an error naming FILE, line and column, and the others go
/// on.
fn compile_batch(
    base: &Base,
    file: &Path,
    manifest: Option<ManifestSource>,
    facts: Map<String, Value>,
    node: Option<String>,
) -> Result<ExitCode> {
    let input: Box<dyn BufRead> = if file == Path::new("-") {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::io::BufReader::new(
            std::fs::File::open(file)
                .with_context(|| format!("{}: cannot read", file.display()))?,
        ))
    };
    let shown = file.display();
    let mut failed = false;
    let mut out = std::io::stdout().lock();
    for (i, line) in input.lines().enumerate() {
        let number = i + 1;
        let line = line.with_context(|| format!("{shown}:{number}: cannot read"))?;
        if line.trim().is_empty() {
            continue;
        }
        let answer = match batch_request(base, &line, &manifest, &facts, &node) {
            Err(why) => {
                let at = |e: &serde_json::Error| {
                    // serde's message ends with its own "at line 1 column C".
                    let text = e.to_string();
                    let text = match text.rfind(" at line ") {
                        Some(cut) => text[..cut].to_string(),
                        None => text,
                    };
                    format!("{shown}:{number}:{}: {text}", e.column())
                };
                json!({ "line": number, "error": match why {
                    BatchInputError::Json(e) => at(&e),
                    BatchInputError::Other(msg) => format!("{shown}:{number}: {msg}"),
                }})
            }
            Ok((manifest, facts, node)) => match base.compile(manifest, facts, node.clone()) {
                Ok(catalog) => {
                    let mut a =
                        json!({ "line": number, "node": node, "catalog": base.json(&catalog)? });
                    if !catalog.messages.is_empty() {
                        let messages: Vec<String> =
                            catalog.messages.iter().map(|m| m.to_string()).collect();
                        a["messages"] = json!(messages);
                    }
                    a
                }
                Err(e) => json!({ "line": number, "node": node, "error": e.to_string() }),
            },
        };
        failed |= answer.get("error").is_some();
        writeln!(out, "{answer}")?;
        out.flush()?;
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Why a `--batch` line is not a request.
enum BatchInputError {
    Json(serde_json::Error),
    Other(String),
}

/// A `--batch` line's manifest, facts and node, the command line's where
/// the line gives none.
fn batch_request(
    base: &Base,
    line: &str,
    manifest: &Option<ManifestSource>,
    facts: &Map<String, Value>,
    node: &Option<String>,
) -> Result<(ManifestSource, Map<String, Value>, String), BatchInputError> {
    let req: BatchLine = serde_json::from_str(line).map_err(BatchInputError::Json)?;
    let other = |msg: &str| BatchInputError::Other(msg.to_string());
    let facts = match (req.facts, req.facts_file) {
        (Some(_), Some(_)) => return Err(other("give facts or facts_file, not both")),
        (Some(f), None) => f,
        (None, Some(path)) => {
            read_facts(&path).map_err(|e| BatchInputError::Other(format!("facts_file: {e:#}")))?
        }
        (None, None) => facts.clone(),
    };
    let manifest = match (req.code, req.manifest) {
        (Some(_), Some(_)) => return Err(other("give code or manifest, not both")),
        (Some(c), None) => ManifestSource::Code(c),
        (None, Some(m)) => ManifestSource::File(m),
        (None, None) => match manifest.clone().or_else(|| base.default_manifest()) {
            Some(m) => m,
            None => {
                return Err(other(
                    "no code or manifest (on the line or the command line)",
                ));
            }
        },
    };
    let node = req
        .node
        .or_else(|| node.clone())
        .unwrap_or_else(|| default_node(&facts));
    Ok((manifest, facts, node))
}

/// `--environmentpath DIRS --environment NAME`: Puppet's environment NAME
/// (default production) with its environment.conf applied and
/// `--modulepath` as `$basemodulepath`. Without --environmentpath there is
/// none (`--environment` is then an environment directory).
pub fn puppet_environment(
    environmentpath: Option<&str>,
    environment: Option<&std::path::Path>,
    modules: &ModuleArgs,
) -> Result<Option<Environment>> {
    let Some(path) = environmentpath else {
        return Ok(None);
    };
    let dirs: Vec<PathBuf> = path
        .split(':')
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .collect();
    if dirs.is_empty() {
        bail!("--environmentpath must name at least one directory");
    }
    let name = match environment {
        None => DEFAULT_ENVIRONMENT.to_string(),
        Some(n) => n
            .to_str()
            .context("--environment must be an environment name (UTF-8)")?
            .to_string(),
    };
    let env = ferry::catalog::environment::load(&FsLoader, &dirs, &name, modules.resolve().dirs())
        .with_context(|| format!("--environment {name}"))?;
    for w in &env.warnings {
        eprintln!("Warning: {w}");
    }
    Ok(Some(env))
}

/// An environment's main manifest, or no code when it has none (as
/// Puppet compiles such an environment).
pub fn env_manifest(env: &Environment) -> ManifestSource {
    if env.manifest.exists() {
        ManifestSource::File(env.manifest.clone())
    } else {
        ManifestSource::Code(String::new())
    }
}

/// Print every built-in function with its family and signature.
pub fn functions(format: Format) -> Result<ExitCode> {
    let all = registry().list();
    let mut out = std::io::stdout().lock();
    match format {
        Format::Human => {
            let width = all.iter().map(|f| f.name.len()).max().unwrap_or(0);
            writeln!(out, "{:width$}  {:11}  SIGNATURE", "FUNCTION", "FAMILY")?;
            for f in &all {
                writeln!(
                    out,
                    "{:width$}  {:11}  {}",
                    f.name,
                    f.family.to_string(),
                    f.signature
                )?;
            }
            writeln!(out, "{} functions", all.len())?;
        }
        Format::Json => {
            let list: Vec<serde_json::Value> = all
                .iter()
                .map(|f| {
                    let params: Vec<serde_json::Value> = f
                        .signature
                        .params
                        .iter()
                        .map(|p| {
                            serde_json::json!({
                                "name": p.name,
                                "type": p.ty.to_string(),
                                "required": p.count == Count::Required,
                                "repeated": p.count == Count::Repeated,
                            })
                        })
                        .collect();
                    serde_json::json!({
                        "name": f.name,
                        "family": f.family,
                        "signature": f.signature.to_string(),
                        "parameters": params,
                        "block": f.signature.block,
                        "returns": f.signature.returns,
                    })
                })
                .collect();
            writeln!(out, "{}", serde_json::to_string_pretty(&list)?)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The certname when `--node` is not given: the facts' `clientcert`, then
/// their fqdn (`networking.fqdn`, legacy `fqdn`), else this machine's host
/// name, the node `puppet apply` compiles for.
fn default_node(facts: &serde_json::Map<String, serde_json::Value>) -> String {
    let named = facts
        .get("clientcert")
        .or_else(|| facts.get("networking").and_then(|n| n.get("fqdn")))
        .or_else(|| facts.get("fqdn"))
        .and_then(|v| v.as_str())
        .filter(|s| !s.is_empty());
    if let Some(name) = named {
        return name.to_string();
    }
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}
