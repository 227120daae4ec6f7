//! The command line: argument parsing (clap), logging setup, and the
//! commands themselves. This is the outermost layer: the only place that
//! uses anyhow, prints errors, and chooses the exit status (0 when every
//! target succeeded, 2 when any failed, 1 for usage and inventory errors;
//! `plan run`: 0 when the plan returns, 1 when it fails, as Bolt's).

mod apply;
mod ca;
mod catalog;
mod commands;
mod connect;
mod device;
mod generate;
mod plan_report;
mod plans;
mod plugins;
mod pp_plans;
mod rerun;
mod secret;
mod serve;
mod tasks;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Result, bail};
use clap::{Args, Parser, Subcommand};

use ferry::run::Action;

use ferry::output::Format;

#[derive(Parser, Debug)]
#[command(
    name = "ferry",
    version,
    about = "Run commands, scripts and file transfers on many hosts over SSH, with nothing installed on them"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Top,
    /// Log level or filter (error, warn, info, debug, trace, or a tracing filter).
    #[arg(long, global = true, env = "FERRY_LOG", default_value = "warn")]
    pub log_level: String,
    /// Write logs as JSON lines.
    #[arg(long, global = true)]
    pub log_json: bool,
    /// The Bolt project directory (default: $BOLT_PROJECT, else the
    /// nearest Boltdir/ or bolt-project.yaml from here up).
    #[arg(long, global = true, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Delete the plugin cache (the project's .plugin_cache.json) before
    /// the command runs, as Bolt's --clear-cache.
    #[arg(long, global = true)]
    pub clear_cache: bool,
    /// The named PuppetDB instance (of the project's puppetdb-instances)
    /// that queries go to by default, as Bolt's --puppetdb.
    #[arg(long, global = true, value_name = "INSTANCE")]
    pub puppetdb: Option<String>,
}

/// The Bolt project of this run, found once before the command runs.
static PROJECT: std::sync::OnceLock<Option<ferry::project::Project>> = std::sync::OnceLock::new();

/// The Bolt project this command runs in, if any.
pub(crate) fn project() -> Option<&'static ferry::project::Project> {
    PROJECT.get().and_then(Option::as_ref)
}

/// Finds and reads the project (`--project`, `BOLT_PROJECT`, or the
/// nearest one up from the current directory) and tells its warnings.
fn find_project(option: Option<&std::path::Path>) -> Result<Option<ferry::project::Project>> {
    let env = std::env::var_os("BOLT_PROJECT")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let cwd = std::env::current_dir()?;
    let Some((dir, chosen)) = ferry::project::locate(option, env.as_deref(), &cwd)? else {
        return Ok(None);
    };
    let project = ferry::project::load(&dir, chosen)?;
    for w in &project.warnings {
        tracing::warn!("{w}");
    }
    Ok(Some(project))
}

/// The project's hiera config (`hiera-config`, else its `hiera.yaml` when
/// there is one), for `ferry apply` without `--hiera-config`.
pub(crate) fn project_hiera_config() -> Option<PathBuf> {
    let p = project()?;
    p.hiera_config
        .clone()
        .or_else(|| Some(p.dir.join("hiera.yaml")).filter(|h| h.is_file()))
}

/// How many targets run at once when `--concurrency` is not given: the
/// project's `concurrency`, else ferry's default.
pub(crate) fn default_concurrency() -> usize {
    project()
        .and_then(|p| p.concurrency)
        .unwrap_or_else(ferry::run::default_concurrency)
}

#[derive(Subcommand, Debug)]
pub enum Top {
    /// Run a shell command on targets.
    Command {
        #[command(subcommand)]
        action: CommandAction,
    },
    /// Upload a script and run it on targets.
    Script {
        #[command(subcommand)]
        action: ScriptAction,
    },
    /// Run Bolt-format tasks, or show them.
    Task {
        #[command(subcommand)]
        action: TaskAction,
    },
    /// Run plans (YAML or Puppet language): steps on targets, one connection per target throughout.
    Plan {
        #[command(subcommand)]
        action: PlanAction,
    },
    /// Compile a manifest for each target from its facts and apply it
    /// there, with nothing installed on the target (or apply --catalog).
    Apply(Box<apply::ApplyArgs>),
    /// Compile Puppet-language manifests into catalogs.
    Catalog {
        #[command(subcommand)]
        action: CatalogAction,
    },
    /// Upload or download files.
    File {
        #[command(subcommand)]
        action: FileAction,
    },
    /// Network devices through their CLI: configure, back up, show facts.
    Device {
        #[command(subcommand)]
        action: device::DeviceAction,
    },
    /// Make keys for, encrypt and decrypt secret values (Bolt's `bolt secret`, pkcs7).
    Secret {
        #[command(subcommand)]
        action: secret::SecretAction,
    },
    /// Show the inventory.
    Inventory {
        #[command(subcommand)]
        action: InventoryAction,
    },
    /// Run the HTTPS executor API (bolt-server/ACE endpoints and jobs); see docs/SERVER.md.
    Serve {
        /// The server's YAML configuration file.
        #[arg(long)]
        config: PathBuf,
    },
    /// The Puppet CA `ferry serve` runs: setup, list, sign, revoke, clean; see docs/SERVER.md.
    Ca {
        #[command(subcommand)]
        action: ca::CaAction,
    },
    /// Print a shell completion script (e.g. `ferry completions bash > /etc/bash_completion.d/ferry`).
    Completions {
        /// The shell: bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Print the man page ferry(1), or write it and one page per subcommand into DIR.
    Man {
        /// Write ferry.1 and ferry-SUBCOMMAND.1 pages into this directory.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

#[derive(Subcommand, Debug)]
pub enum CommandAction {
    /// Run CMD with the target's shell.
    Run {
        /// The command line, run by the target's shell (quote it as one
        /// argument); @FILE reads it from a file, - from standard input.
        #[arg(value_parser = connect::arg_input)]
        cmd: String,
        #[command(flatten)]
        run: RunArgs,
    },
}

#[derive(Subcommand, Debug)]
pub enum ScriptAction {
    /// Copy FILE to each target, run it with ARGS, and remove it.
    Run {
        /// The local script to copy and run.
        file: PathBuf,
        /// Arguments for the script (put them after `--` if they start with `-`).
        args: Vec<String>,
        #[command(flatten)]
        run: RunArgs,
    },
}

// Parsed once per process: the size of its largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
pub enum TaskAction {
    /// Run task NAME (module::task) with parameters given as name=value.
    Run {
        /// The task to run: module::task.
        name: String,
        /// Parameters as name=value (a JSON value is taken as JSON).
        params: Vec<String>,
        /// All parameters as a JSON object, @file.json, or - (standard
        /// input); not together with name=value parameters.
        #[arg(long = "params", value_name = "JSON")]
        params_json: Option<String>,
        /// Ask the task to report what it would change, changing nothing.
        #[arg(long)]
        noop: bool,
        /// Keep the per-run install directory on the target.
        #[arg(long)]
        no_cleanup: bool,
        #[command(flatten)]
        modules: ModuleArgs,
        #[command(flatten)]
        run: RunArgs,
    },
    /// List tasks, or show one task's parameters and implementations.
    Show {
        /// The task to show (module::task); without it, every task.
        name: Option<String>,
        #[command(flatten)]
        modules: ModuleArgs,
        /// human (readable text) or json.
        #[arg(long, value_enum, default_value = "human")]
        format: Format,
    },
}

#[derive(Subcommand, Debug)]
// Parsed once per process: boxing `Run`'s arguments would buy nothing.
#[allow(clippy::large_enum_variant)]
pub enum PlanAction {
    /// Run plan NAME (module::plan: a .pp or .yaml plan; or a path to a .yaml plan) with name=value parameters;
    /// -t sets the `targets` parameter.
    Run {
        /// The plan: module::plan, or a path to a .yaml plan.
        name: String,
        /// Parameters as name=value (a JSON value is taken as JSON: quote a
        /// string that looks like JSON, e.g. version='"1.2"').
        params: Vec<String>,
        /// All parameters as a JSON object, @file.json, or - (standard
        /// input); not together with name=value parameters.
        #[arg(long = "params", value_name = "JSON")]
        params_json: Option<String>,
        #[command(flatten)]
        modules: ModuleArgs,
        #[command(flatten)]
        run: RunArgs,
    },
    /// List plans, or show one plan's description and parameters.
    Show {
        /// The plan to show (module::plan); without it, every plan that is not private.
        name: Option<String>,
        #[command(flatten)]
        modules: ModuleArgs,
        /// human (readable text) or json (Bolt's shape).
        #[arg(long, value_enum, default_value = "human")]
        format: Format,
    },
}

#[derive(Subcommand, Debug)]
pub enum CatalogAction {
    /// Compile one node's catalog and print it as Puppet's catalog JSON.
    Compile {
        #[command(flatten)]
        sources: Box<catalog::Sources>,
        #[command(flatten)]
        modules: ModuleArgs,
        /// json (Puppet's catalog format) or summary (a readable list).
        #[arg(long, value_enum, default_value = "json")]
        format: CatalogFormat,
    },
    /// List the built-in functions with their signatures.
    Functions {
        /// human (a table) or json (name, family, signature, parameters).
        #[arg(long, value_enum, default_value = "human")]
        format: Format,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CatalogFormat {
    Json,
    Summary,
}

#[derive(Args, Debug, Clone)]
pub struct ModuleArgs {
    /// Directories holding modules, separated by ':' (default: the
    /// project's modulepath, else ./modules).
    #[arg(long, env = "FERRY_MODULEPATH")]
    pub modulepath: Option<String>,
}

impl ModuleArgs {
    /// The modulepath: `--modulepath`'s directories, else the project's
    /// (with `.modules` and the project itself as a module), else
    /// `./modules`.
    pub fn resolve(&self) -> ferry::catalog::Modulepath {
        let given = self.modulepath.as_ref().map(|text| {
            text.split(':')
                .filter(|p| !p.is_empty())
                .map(PathBuf::from)
                .collect::<Vec<_>>()
        });
        match project() {
            Some(p) => p.modulepath(given),
            None => ferry::catalog::Modulepath::new(
                given.unwrap_or_else(|| vec![PathBuf::from("modules")]),
            ),
        }
    }
}

#[derive(Subcommand, Debug)]
pub enum FileAction {
    /// Copy a local file or directory to DEST on each target.
    Upload {
        /// The local file or directory.
        src: PathBuf,
        /// Where it goes on each target.
        dest: String,
        #[command(flatten)]
        run: RunArgs,
    },
    /// Copy SRC from each target into DESTDIR/<target>/.
    Download {
        /// The file or directory on each target.
        src: String,
        /// The local directory that gets one folder per target.
        destdir: PathBuf,
        #[command(flatten)]
        run: RunArgs,
    },
}

#[derive(Subcommand, Debug)]
pub enum InventoryAction {
    /// Print the targets a specification selects.
    Show {
        #[command(flatten)]
        select: SelectArgs,
        /// Also print each target's merged config, facts and vars (secrets redacted).
        #[arg(long)]
        detail: bool,
        /// human (names, and details with --detail) or json.
        #[arg(long, value_enum, default_value = "human")]
        format: Format,
    },
}

#[derive(Args, Debug, Clone)]
pub struct SelectArgs {
    /// Targets: names, aliases, groups, `all`, globs (`web*`, `db[1-3]`, `{a,b}*`), URIs; separated by commas or spaces;
    /// @FILE reads them from a file, - from standard input. May be repeated: every one counts.
    #[arg(short = 't', long = "targets", value_parser = connect::arg_input, action = clap::ArgAction::Append)]
    pub targets: Vec<String>,
    /// The inventory file (default: $FERRY_INVENTORY, else the project's
    /// inventory.yaml, else ./inventory.yaml).
    #[arg(
        short = 'i',
        long,
        visible_alias = "inventoryfile",
        env = "FERRY_INVENTORY"
    )]
    pub inventory: Option<PathBuf>,
    /// Take targets from the last run: those that failed, succeeded, or all.
    #[arg(long, value_enum)]
    pub rerun: Option<rerun::Rerun>,
    /// Targets from a PuppetDB query (PQL, or PuppetDB's AST as JSON): the
    /// certnames its rows name. Asks the project's puppetdb, else the
    /// inventory's facts.
    #[arg(short = 'q', long = "query", value_name = "QUERY")]
    pub query: Option<String>,
}

/// The longest timeout the command line takes: a year, in seconds.
const MAX_SECONDS: u64 = 365 * 24 * 3600;

/// `--concurrency`: a whole number from 1 to [`ferry::run::MAX_CONCURRENCY`].
fn parse_concurrency(text: &str) -> Result<usize, String> {
    let max = ferry::run::MAX_CONCURRENCY;
    match text.parse::<usize>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!("must be a whole number from 1 to {max}")),
    }
}

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub select: SelectArgs,
    /// How many targets to work on at once, 1 to 10000 (default 100, lower when the open-file limit is small).
    #[arg(long, value_parser = parse_concurrency)]
    pub concurrency: Option<usize>,
    /// Run as this user through sudo (under the inventory's `run-as`).
    #[arg(long, help_heading = "Connection")]
    pub run_as: Option<String>,
    /// Seconds to wait for a connection, 1 to 31536000 (under the
    /// inventory's `connect-timeout`).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=MAX_SECONDS), help_heading = "Connection")]
    pub connect_timeout: Option<u64>,
    #[command(flatten)]
    pub conn: connect::ConnArgs,
    /// Seconds each command may run before it fails with ferry/timeout (1 to 31536000).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=MAX_SECONDS))]
    pub command_timeout: Option<u64>,
    /// Bytes of each output stream (stdout, stderr, merged) kept per target:
    /// the first and last halves, with a marker and `truncated` in the
    /// result when more arrived. Bytes or K/M/G, 1K to 1G [default: 1M].
    #[arg(long, value_name = "SIZE", value_parser = ferry::run::capture::parse_size)]
    pub max_output: Option<usize>,
    /// Print output lines as they arrive, prefixed with the target's name.
    #[arg(long)]
    pub stream: bool,
    /// human (a summary per target) or json (Bolt's result format).
    #[arg(long, value_enum, default_value = "human")]
    pub format: Format,
}

pub(super) fn init_logging(level: &str, json: bool) {
    let filter = tracing_subscriber::EnvFilter::try_new(level)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    let _ = if json {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
}

/// An error and its causes, `: `-separated, leaving out a cause whose text
/// the message already holds (many errors quote their source).
fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let part = cause.to_string();
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

/// Whether an error comes from writing to a pipe whose reader has gone.
fn broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The text of `--params`: as given, or standard input for `-`. As in
/// Bolt, it cannot be combined with name=value parameters.
fn params_text(params_json: Option<String>, words: &[String]) -> Result<Option<String>> {
    let Some(text) = params_json else {
        return Ok(None);
    };
    if !words.is_empty() {
        bail!("give parameters either with --params or as name=value, not both");
    }
    if text == "-" {
        let mut input = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut input)
            .map_err(|e| anyhow::anyhow!("--params -: cannot read standard input: {e}"))?;
        return Ok(Some(input));
    }
    Ok(Some(text))
}

/// Runs the command the arguments name.
async fn dispatch(top: Top) -> Result<ExitCode> {
    match top {
        Top::Command {
            action: CommandAction::Run { cmd, run },
        } => commands::execute(Action::Command { line: cmd }, &run).await,
        Top::Device { action } => device::execute(action).await,
        Top::Secret { action } => secret::execute(action),
        Top::Script {
            action: ScriptAction::Run { file, args, run },
        } => {
            if !file.is_file() {
                bail!("{}: no such script", file.display());
            }
            commands::execute(Action::Script { path: file, args }, &run).await
        }
        Top::File {
            action: FileAction::Upload { src, dest, run },
        } => {
            if !src.exists() {
                bail!("{}: no such file or directory", src.display());
            }
            commands::execute(Action::Upload { src, dest }, &run).await
        }
        Top::File {
            action: FileAction::Download { src, destdir, run },
        } => commands::execute(Action::Download { src, dest: destdir }, &run).await,
        Top::Task {
            action:
                TaskAction::Run {
                    name,
                    params,
                    params_json,
                    noop,
                    no_cleanup,
                    modules,
                    run,
                },
        } => {
            let params_json = params_text(params_json, &params)?;
            let prepared = tasks::prepare(
                &name,
                &params,
                params_json.as_deref(),
                noop,
                no_cleanup,
                &modules,
            )?;
            commands::execute(Action::Task(Arc::new(prepared)), &run).await
        }
        Top::Task {
            action:
                TaskAction::Show {
                    name,
                    modules,
                    format,
                },
        } => tasks::show(name.as_deref(), &modules, format),
        Top::Plan {
            action:
                PlanAction::Run {
                    name,
                    params,
                    params_json,
                    modules,
                    run,
                },
        } => {
            let params = match params_text(params_json, &params)? {
                // The object's entries as name=JSON words, which read back
                // as the same values.
                Some(text) => ferry::task::params::parse_params_option(&text)?
                    .into_iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect(),
                None => params,
            };
            plans::run(&name, &params, &modules, &run).await
        }
        Top::Plan {
            action:
                PlanAction::Show {
                    name,
                    modules,
                    format,
                },
        } => plans::show(name.as_deref(), &modules, format),
        Top::Catalog {
            action:
                CatalogAction::Compile {
                    sources,
                    modules,
                    format,
                },
        } => catalog::compile(*sources, &modules, format),
        Top::Catalog {
            action: CatalogAction::Functions { format },
        } => catalog::functions(format),
        Top::Inventory {
            action:
                InventoryAction::Show {
                    select,
                    detail,
                    format,
                },
        } => commands::show(&select, detail, format),
        Top::Apply(args) => apply::apply(*args).await,
        Top::Serve { config } => serve::run(&config).await,
        Top::Ca { action } => ca::execute(action),
        Top::Completions { shell } => generate::completions(shell),
        Top::Man { dir } => generate::man(dir.as_deref()),
    }
}

/// Parses arguments, runs the command, and returns the exit status.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    ExitCode::SUCCESS
                }
                _ => ExitCode::from(1),
            };
        }
    };
    // The server takes its log level from its config file (or FERRY_LOG),
    // and runs in no project.
    if !matches!(cli.command, Top::Serve { .. }) {
        init_logging(&cli.log_level, cli.log_json);
        match find_project(cli.project.as_deref()) {
            Ok(p) => {
                let named = p
                    .as_ref()
                    .map(|p| p.puppetdb_instances.clone())
                    .unwrap_or_default();
                let default = match &cli.puppetdb {
                    Some(name) => match named.get(name) {
                        Some(config) => Some(config.clone()),
                        None => {
                            eprintln!(
                                "ferry: --puppetdb: {}",
                                ferry::query::PuppetDbError::UnknownInstance(name.clone())
                            );
                            return ExitCode::from(1);
                        }
                    },
                    None => p.as_ref().and_then(|p| p.puppetdb.clone()),
                };
                ferry::query::puppetdb::install_instances(ferry::query::puppetdb::Instances {
                    default,
                    named,
                });
                let _ = PROJECT.set(p);
                if cli.clear_cache
                    && let Err(e) = plugins::clear_cache()
                {
                    eprintln!("ferry: {}", error_text(&e));
                    return ExitCode::from(1);
                }
            }
            Err(e) => {
                eprintln!("ferry: {}", error_text(&e));
                return ExitCode::from(1);
            }
        }
    }
    // Each target holds a socket: take all the open files allowed, before
    // any default concurrency (the CLI's or `ferry serve`'s) is sized.
    ferry::run::raise_open_file_limit();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("ferry: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(dispatch(cli.command)) {
        Ok(code) => code,
        // The reader went away (`ferry ... | head`): nothing to tell it.
        Err(e) if broken_pipe(&e) => ExitCode::from(1),
        Err(e) => {
            eprintln!("ferry: {}", error_text(&e));
            ExitCode::from(1)
        }
    }
}
