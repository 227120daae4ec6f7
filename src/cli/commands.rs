//! The commands that run an action on targets: load the inventory, select
//! targets, check their options, run the action through the executor with
//! the chosen printer, record the run for `--rerun`, and pick the exit
//! status; and `inventory show`. The other commands (tasks, plans, catalog,
//! serve) use the inventory helpers here; `cli::dispatch` routes to all.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, bail};

use super::rerun;
use super::{ModuleArgs, RunArgs, SelectArgs};
use ferry::inventory::{Inventory, Target};
use ferry::output::Format;
use ferry::output::human::HumanPrinter;
use ferry::output::json::JsonWriter;
use ferry::run::events::Sink;
use ferry::run::{self, Action, RunOptions};
use ferry::transport::{self, Overrides};

/// Refuses flags that contradict each other instead of ignoring one.
pub(super) fn check_output_flags(args: &RunArgs) -> Result<()> {
    if args.stream && matches!(args.format, Format::Json) {
        bail!("--stream prints output lines as they arrive; it cannot be used with --format json");
    }
    Ok(())
}

/// The inventory file when -i and FERRY_INVENTORY name none: the
/// project's `inventory.yaml`, else ./inventory.yaml.
pub(super) fn default_inventory() -> PathBuf {
    match super::project() {
        Some(p) => p.inventory_file(),
        None => PathBuf::from("inventory.yaml"),
    }
}

/// The inventory named by -i or FERRY_INVENTORY, else the default one
/// ([`default_inventory`]) if it exists, else an empty one (only localhost
/// and URIs). Module plugins are looked up on `modules`' modulepath
/// (FERRY_MODULEPATH or the project's for commands without --modulepath).
pub(super) fn load_inventory(
    path: Option<&Path>,
    modules: Option<&ModuleArgs>,
) -> Result<Inventory> {
    let path = match path {
        Some(p) => p.to_path_buf(),
        None => {
            let default = default_inventory();
            if !default.exists() {
                return Ok(Inventory::empty());
            }
            default
        }
    };
    let host = super::plugins::PluginHost::for_run(modules)?;
    Ok(Inventory::load_with(&path, &host)?)
}

/// The inventory of a run, with the connection flags laid under its
/// config (Bolt's precedence: the inventory's values win over them).
pub(super) fn run_inventory(args: &RunArgs, modules: Option<&ModuleArgs>) -> Result<Inventory> {
    let mut inventory = load_inventory(args.select.inventory.as_deref(), modules)?;
    let settings = args
        .conn
        .settings(args.run_as.as_deref(), args.connect_timeout)?;
    inventory.set_command_line(settings);
    Ok(inventory)
}

/// What the command line lays over every target (ferry's own flags; the
/// connection flags go through [`run_inventory`]).
pub(super) fn overrides(args: &RunArgs) -> Overrides {
    Overrides {
        run_as: None,
        connect_timeout: None,
        command_timeout: args.command_timeout.map(Duration::from_secs),
        max_output: args.max_output,
        identities: transport::Identities::UserDefaults,
    }
}

/// The targets the command line names, as one specification: every
/// `-t` (Bolt's option parser collects them all, and its inventory takes
/// the targets of each), or the last run's targets with `--rerun`; None
/// when neither is given. Both is Bolt's usage error.
pub(super) fn target_spec(select: &SelectArgs) -> Result<Option<String>> {
    if let Some(query) = &select.query {
        if !select.targets.is_empty() || select.rerun.is_some() {
            bail!(
                "Only one targeting option can be specified: '--targets', '--query' or '--rerun'"
            );
        }
        return query_spec(select, query).map(Some);
    }
    match (select.targets.is_empty(), select.rerun) {
        (false, Some(_)) => {
            bail!("Only one targeting option can be specified: '--targets' or '--rerun'")
        }
        (false, None) => Ok(Some(select.targets.join(","))),
        (true, Some(which)) => {
            let names = rerun::load(which)?;
            if names.is_empty() {
                bail!("--rerun: no targets of the last run match");
            }
            Ok(Some(names.join(",")))
        }
        (true, None) => Ok(None),
    }
}

/// `--query`: the certnames the query's rows name, from the project's
/// PuppetDB, else from the inventory's facts.
fn query_spec(select: &SelectArgs, query: &str) -> Result<String> {
    let stored = || -> Result<Vec<ferry::query::NodeFacts>> {
        Ok(load_inventory(select.inventory.as_deref(), None)?
            .targets
            .into_iter()
            .map(|t| ferry::query::NodeFacts {
                certname: t.name,
                environment: None,
                facts: t.facts,
            })
            .collect())
    };
    let query = ferry::query::from_text(query);
    let nodes = if ferry::query::puppetdb::configured().is_some() {
        Vec::new()
    } else {
        stored()?
    };
    let names =
        ferry::query::certnames(&query, || nodes).map_err(|e| anyhow::anyhow!("--query: {e}"))?;
    if names.is_empty() {
        bail!("--query: the query names no node");
    }
    Ok(names.join(","))
}

pub(super) fn targets(select: &SelectArgs, inventory: &Inventory) -> Result<Vec<Target>> {
    let Some(spec) = target_spec(select)? else {
        bail!("no targets given: use -t/--targets (names, groups, `all`, globs or URIs)")
    };
    Ok(inventory.select(&spec)?)
}

/// A plan run's exit status, as Bolt's CLI gives it (`cli.rb`: the plan
/// result's `ok?`): 0 when the plan returned, whatever it returned (a
/// ResultSet with failures too); 1 when it failed or could not start.
pub(super) fn plan_exit_status(returned: bool) -> ExitCode {
    if returned {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

pub(super) async fn execute(action: Action, args: &RunArgs) -> Result<ExitCode> {
    let summary = run_action(action, args).await?;
    Ok(if summary.all_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

/// Runs an action on the selected targets with the chosen printer and
/// records the run for `--rerun`.
pub(super) async fn run_action(action: Action, args: &RunArgs) -> Result<run::Summary> {
    check_output_flags(args)?;
    let inventory = run_inventory(args, None)?;
    let targets = targets(&args.select, &inventory)?;
    let overrides = overrides(args);
    transport::check_options(&targets, &overrides)?;
    // Remote tasks on devices run on the targets their run-on names.
    let action = match action {
        Action::Task(_) => {
            let proxies = run::actions::task::remote::proxies(&inventory, &targets)?;
            action.with_proxies(proxies)
        }
        other => other,
    };
    let options = RunOptions {
        concurrency: args.concurrency.unwrap_or_else(super::default_concurrency),
        overrides,
    };
    let stdout: Box<dyn Write + Send> = Box::new(std::io::stdout());
    let sink: Arc<dyn Sink> = match args.format {
        Format::Json => Arc::new(JsonWriter::new(stdout)),
        Format::Human => Arc::new(HumanPrinter::new(stdout, args.stream)),
    };
    let summary = run::run(targets, action, &options, sink).await;
    rerun::save(&summary);
    Ok(summary)
}

/// `inventory show`: the selected targets, split as Bolt splits them into
/// those the inventory defines and those named on the command line only
/// (adhoc). JSON is Bolt's shape: `{inventory: {count, targets, file,
/// default}, adhoc: {count, targets}, targets, count}` with target names,
/// or with `--detail` each target's detail object.
pub(super) fn show(select: &SelectArgs, detail: bool, format: Format) -> Result<ExitCode> {
    let default = default_inventory();
    if select.inventory.is_none() && !default.exists() {
        bail!(
            "no inventory: {} does not exist (give one with -i FILE or FERRY_INVENTORY)",
            if super::project().is_some() {
                default.display().to_string()
            } else {
                "./inventory.yaml".to_string()
            }
        );
    }
    let inventory = load_inventory(select.inventory.as_deref(), None)?;
    let spec = SelectArgs {
        targets: if select.targets.is_empty() && select.rerun.is_none() && select.query.is_none() {
            vec!["all".into()]
        } else {
            select.targets.clone()
        },
        ..select.clone()
    };
    let targets = targets(&spec, &inventory)?;
    // What `command run` would refuse, `inventory show` refuses too.
    transport::check_options(&targets, &Overrides::default())?;
    let (known, adhoc): (Vec<&Target>, Vec<&Target>) = targets
        .iter()
        .partition(|t| inventory.target(&t.name).is_some());
    let item = |t: &Target| {
        if detail {
            t.detail()
        } else {
            serde_json::Value::String(t.name.clone())
        }
    };
    let mut out = std::io::stdout().lock();
    match format {
        Format::Json => {
            let absolute = |p: &Path| {
                std::path::absolute(p)
                    .unwrap_or_else(|_| p.to_path_buf())
                    .display()
                    .to_string()
            };
            let file = select.inventory.as_deref().unwrap_or(&default);
            let doc = serde_json::json!({
                "inventory": {
                    "count": known.len(),
                    "targets": known.iter().map(|t| item(t)).collect::<Vec<_>>(),
                    "file": absolute(file),
                    "default": absolute(&default),
                },
                "adhoc": {
                    "count": adhoc.len(),
                    "targets": adhoc.iter().map(|t| item(t)).collect::<Vec<_>>(),
                },
                "targets": targets.iter().map(item).collect::<Vec<_>>(),
                "count": targets.len(),
            });
            writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        }
        Format::Human => {
            for t in &targets {
                writeln!(out, "{}", t.name)?;
                if detail {
                    for line in serde_yaml_like(&t.detail()).lines() {
                        writeln!(out, "  {line}")?;
                    }
                }
            }
            writeln!(
                out,
                "{} target(s): {} from the inventory, {} adhoc",
                targets.len(),
                known.len(),
                adhoc.len()
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Pretty JSON without the outer braces reads well enough as a detail block.
fn serde_yaml_like(v: &serde_json::Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}
