//! `ferry catalog compile`: read the facts, compile, print the catalog (or
//! the compiler's error, Puppet-style, with file, line and column).
//! `ferry catalog functions`: list the built-in functions and their
//! signatures.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};

use super::{CatalogFormat, ModuleArgs};
use ferry::catalog::environment::{DEFAULT_ENVIRONMENT, Environment};
use ferry::catalog::{CompileOptions, CompileRequest, ManifestSource, compile_with_options};
use ferry::lang::functions::{Count, registry};
use ferry::lang::loader::FsLoader;
use ferry::output::Format;

/// What `ferry catalog compile` compiles: the manifest (a file or code),
/// the node and its facts, the environment and the global hiera layer.
#[derive(clap::Args, Debug)]
pub struct Sources {
    /// The main manifest (a .pp file or a directory of them).
    #[arg(long, conflicts_with = "code", required_unless_present_any = ["code", "environmentpath"])]
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
    } = sources;
    let puppet_env =
        puppet_environment(environmentpath.as_deref(), environment.as_deref(), modules)?;
    let facts = match facts.as_deref() {
        None => serde_json::Map::new(),
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("{}: cannot read the facts", path.display()))?;
            match serde_json::from_str(&text) {
                // `puppet facts` output wraps the facts in {"name", "values"}.
                Ok(serde_json::Value::Object(mut map))
                    if map.contains_key("values") && map.contains_key("name") =>
                {
                    match map.remove("values") {
                        Some(serde_json::Value::Object(values)) => values,
                        _ => bail!("{}: \"values\" must be a JSON object", path.display()),
                    }
                }
                Ok(serde_json::Value::Object(map)) => map,
                Ok(_) => bail!("{}: facts must be a JSON object", path.display()),
                Err(e) => bail!("{}:{}:{}: {e}", path.display(), e.line(), e.column()),
            }
        }
    };
    let node = node.unwrap_or_else(|| default_node(&facts));
    let manifest = match (manifest, code, &puppet_env) {
        (Some(m), _, _) => ManifestSource::File(m),
        (None, Some(c), _) => ManifestSource::Code(c),
        (None, None, Some(env)) => env_manifest(env),
        (None, None, None) => bail!("give --manifest FILE or -e CODE"),
    };
    let (request, options) = match &puppet_env {
        Some(env) => (
            CompileRequest {
                manifest,
                modulepath: env.modulepath.clone().into(),
                facts,
                node,
                environment: Some(env.dir.clone()),
            },
            CompileOptions {
                hiera_config,
                environment_name: Some(env.name.clone()),
                modulepath_complete: true,
                ..CompileOptions::default()
            },
        ),
        None => (
            CompileRequest {
                manifest,
                modulepath: modules.resolve(),
                facts,
                node,
                environment,
            },
            CompileOptions {
                hiera_config,
                ..CompileOptions::default()
            },
        ),
    };
    let version = match puppet_env
        .as_ref()
        .and_then(|e| e.config_version.as_deref())
    {
        Some(command) => Some(ferry::server::environments::run_config_version(
            command,
            puppet_env
                .as_ref()
                .map(|e| e.dir.as_path())
                .unwrap_or(std::path::Path::new(".")),
        )?),
        None => None,
    };
    let catalog = match compile_with_options(&request, &FsLoader, &options) {
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
        CatalogFormat::Json => {
            let mut doc = serde_json::to_value(&catalog)?;
            if let Some(v) = version {
                // Puppet's catalog version is config_version's output.
                doc["version"] = serde_json::Value::String(v);
            }
            writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?
        }
        CatalogFormat::Summary => write!(out, "{}", catalog.summary())?,
    }
    Ok(ExitCode::SUCCESS)
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
