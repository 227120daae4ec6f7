//! `ferry apply`: compile a manifest for each target from its facts (or
//! take one catalog for all), apply it over the target's transport with
//! nothing installed there, print the outcome, write one Puppet report
//! per target with `--report-dir`, and choose the exit status (Puppet's
//! with `--detailed-exitcodes`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, bail};

use super::{ModuleArgs, RunArgs, commands};
use ferry::apply::{ApplyCatalog, ApplyOptions};
use ferry::catalog::{CompileOptions, ManifestSource};
use ferry::run::actions::apply::{ApplyJob, CatalogSource};
use ferry::run::{Action, Output};

#[derive(clap::Args, Debug)]
pub struct ApplyArgs {
    /// The main manifest (a .pp file or a directory of them).
    #[arg(conflicts_with_all = ["code", "catalog"])]
    pub manifest: Option<PathBuf>,
    /// Puppet code to apply instead of a manifest file.
    #[arg(short = 'e', long = "execute", conflicts_with = "catalog")]
    pub code: Option<String>,
    /// Apply this catalog (Puppet's catalog JSON) to every target, as
    /// `puppet apply --catalog` does.
    #[arg(long)]
    pub catalog: Option<PathBuf>,
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
    /// The global hiera layer's hiera.yaml (Puppet's hiera_config).
    #[arg(long)]
    pub hiera_config: Option<PathBuf>,
    /// Change nothing; report what would change.
    #[arg(long)]
    pub noop: bool,
    /// Apply only resources with one of these tags (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub tags: Vec<String>,
    /// Write each target's Puppet report to DIR/<target>.json.
    #[arg(long, value_name = "DIR")]
    pub report_dir: Option<PathBuf>,
    /// Exit as Puppet does: 0 nothing changed, 2 changes, 4 failures, 6 both.
    #[arg(long)]
    pub detailed_exitcodes: bool,
    #[command(flatten)]
    pub modules: ModuleArgs,
    #[command(flatten)]
    pub run: RunArgs,
}

pub async fn apply(args: ApplyArgs) -> Result<ExitCode> {
    commands::check_output_flags(&args.run)?;
    let puppet_env = super::catalog::puppet_environment(
        args.environmentpath.as_deref(),
        args.environment.as_deref(),
        &args.modules,
    )?;
    let modulepath = match &puppet_env {
        Some(env) => env.modulepath.clone().into(),
        None => args.modules.resolve(),
    };
    let mut source_path = modulepath.clone();
    if let (Some(env), None) = (&args.environment, &puppet_env) {
        source_path.push_dir(env.join("modules"));
    }
    let source = match (&args.manifest, &args.code, &args.catalog) {
        (_, _, Some(file)) => {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("{}: cannot read the catalog", file.display()))?;
            let catalog = ApplyCatalog::from_json(&text, &file.display().to_string())?;
            CatalogSource::Fixed(Arc::new(catalog))
        }
        (manifest, code, None) => {
            let manifest = match (manifest, code) {
                (Some(m), _) => {
                    if !m.exists() {
                        bail!("{}: no such manifest", m.display());
                    }
                    ManifestSource::File(m.clone())
                }
                (None, Some(c)) => ManifestSource::Code(c.clone()),
                (None, None) => match &puppet_env {
                    Some(env) => super::catalog::env_manifest(env),
                    None => bail!("give a manifest, -e CODE or --catalog FILE"),
                },
            };
            let loader = ferry::task::Loader::new(Vec::new());
            let task = loader.load("ferry::facts")?;
            let facts_task =
                ferry::task::params::prepare(task, serde_json::Map::new(), false, &loader)?;
            CatalogSource::Compile {
                manifest,
                modulepath: modulepath.clone(),
                environment: match &puppet_env {
                    Some(env) => Some(env.dir.clone()),
                    None => args.environment.clone(),
                },
                options: CompileOptions {
                    hiera_config: args
                        .hiera_config
                        .clone()
                        .or_else(super::project_hiera_config),
                    environment_name: puppet_env.as_ref().map(|e| e.name.clone()),
                    modulepath_complete: puppet_env.is_some(),
                    ..CompileOptions::default()
                },
                facts_task: Arc::new(facts_task),
            }
        }
    };
    let job = ApplyJob {
        source,
        options: ApplyOptions {
            noop: args.noop,
            tags: args.tags.clone(),
            ..Default::default()
        },
        modulepath: source_path,
        prepared: Default::default(),
        observer: None,
    };
    let summary = commands::run_action(Action::Apply(Arc::new(job)), &args.run).await?;
    if let Some(dir) = &args.report_dir {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("{}: cannot make the report directory", dir.display()))?;
        for r in &summary.results {
            if let Some(Output::Apply(report)) = r.outcome.output() {
                let path = dir.join(format!("{}.json", sanitize(&r.target)));
                let text = serde_json::to_string_pretty(report)?;
                write_atomically(&path, text.as_bytes())
                    .with_context(|| format!("{}: cannot write the report", path.display()))?;
            }
        }
    }
    if !args.detailed_exitcodes {
        return Ok(if summary.all_ok() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(2)
        });
    }
    let mut code = 0u8;
    for r in &summary.results {
        match r.outcome.output() {
            Some(Output::Apply(report)) => {
                let c = report.counts();
                if c.changed > 0 {
                    code |= 2;
                }
                if c.failed > 0 || !r.ok() {
                    code |= 4;
                }
            }
            _ => code |= 4,
        }
    }
    Ok(ExitCode::from(code))
}

/// A target name as a file name: no path separators, no leading dot.
fn sanitize(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| if c == '/' || c == '\0' { '_' } else { c })
        .collect();
    if s.starts_with('.') {
        format!("_{s}")
    } else {
        s
    }
}

/// Writes a file so that it is whole or absent: a temporary file beside
/// it, renamed over it.
fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(std::path::Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut tmp, bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
