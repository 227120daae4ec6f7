//! Plans in the Puppet language on the command line: `ferry plan run`
//! for a `.pp` plan (its value printed alone, or Bolt's error object) and
//! `ferry plan show` (every plan on the modulepath, or one plan's
//! parameters). The human output tells the plan and its steps as the YAML
//! runner does (`plan_report`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;

use super::{ModuleArgs, RunArgs};
use ferry::output::Format;
use ferry::output::human::HumanPrinter;
use ferry::plan::puppet::{self, Context};
use ferry::run::RunOptions;
use ferry::run::events::{Discard, Sink};

/// Whether `name` is a Puppet-language plan on the modulepath.
pub(super) fn is_puppet_plan(name: &str, modules: &ModuleArgs) -> bool {
    !name.ends_with(".yaml")
        && !name.contains('/')
        && puppet::find(name, &modules.resolve()).is_some()
}

/// Runs a `.pp` plan and prints its result as Bolt does.
pub(super) async fn run(
    name: &str,
    given: serde_json::Map<String, serde_json::Value>,
    modules: &ModuleArgs,
    args: &RunArgs,
) -> Result<ExitCode> {
    let inventory = super::commands::run_inventory(args, Some(modules))?;
    let options = RunOptions {
        concurrency: args.concurrency.unwrap_or_else(super::default_concurrency),
        overrides: super::commands::overrides(args),
    };
    let format = args.format;
    let stream = args.stream;
    // As for YAML plans: Bolt's Starting/Finished lines, each target's
    // output as it comes only with --stream.
    let sink = Arc::new(move || -> Arc<dyn Sink> {
        if format == Format::Human && stream {
            Arc::new(HumanPrinter::new(Box::new(std::io::stdout()), true))
        } else {
            Arc::new(Discard)
        }
    });
    let report: Option<Arc<dyn ferry::plan::run::Reporter>> = match format {
        Format::Human => Some(Arc::new(super::plan_report::HumanReport)),
        Format::Json => None,
    };
    // Messages go to standard output, or to standard error when standard
    // output holds the JSON result.
    let message = Arc::new(move |m: &str| match format {
        Format::Human => println!("{m}"),
        Format::Json => eprintln!("{m}"),
    });
    let ctx = Context {
        inventory,
        modulepath: modules.resolve(),
        options,
        sink,
        message,
        downloads: PathBuf::from("downloads"),
        stop: Default::default(),
        stored_facts: None,
    };
    let outcome = puppet::run_reported(name, given, ctx, report).await;
    let mut out = std::io::stdout().lock();
    match format {
        Format::Json => writeln!(out, "{}", serde_json::to_string(&outcome.value)?)?,
        Format::Human => {
            if outcome.ok && outcome.value.is_null() {
                writeln!(out, "Plan completed successfully with no result")?;
            } else if outcome.ok {
                writeln!(out, "{}", serde_json::to_string_pretty(&outcome.value)?)?;
            } else {
                let msg = outcome.value["msg"].as_str().unwrap_or("the plan failed");
                let kind = outcome.value["kind"].as_str().unwrap_or("bolt/error");
                writeln!(out, "Plan failed ({kind}): {msg}")?;
                if let Some(results) = outcome.value["details"]["result_set"].as_array() {
                    for r in results {
                        writeln!(out, "{}", serde_json::to_string_pretty(r)?)?;
                    }
                }
            }
        }
    }
    Ok(super::commands::plan_exit_status(outcome.ok))
}

/// `ferry plan show NAME` for a Puppet-language plan (the list of all
/// plans is `plans::show`'s).
pub(super) fn show(name: &str, modules: &ModuleArgs, format: Format) -> Result<ExitCode> {
    let mp = modules.resolve();
    let mut out = std::io::stdout().lock();
    let info = puppet::show(name, &mp)?;
    match format {
        Format::Json => {
            let params: serde_json::Map<String, serde_json::Value> = info
                .parameters
                .iter()
                .map(|(n, p)| Ok((n.clone(), serde_json::to_value(p)?)))
                .collect::<Result<_, serde_json::Error>>()?;
            let module_dir = info
                .file
                .parent()
                .and_then(|p| p.parent())
                .map(|p| p.display().to_string());
            let doc = serde_json::json!({
                "name": info.name,
                "description": null,
                "parameters": params,
                "module_dir": module_dir,
                "private": false,
            });
            writeln!(out, "{}", serde_json::to_string(&doc)?)?;
        }
        Format::Human => {
            writeln!(out, "{}", info.name)?;
            writeln!(
                out,
                "\nUsage:\n  ferry plan run {}{}",
                info.name,
                usage(&info)
            )?;
            writeln!(out, "\nParameters:")?;
            if info.parameters.is_empty() {
                writeln!(out, "  (none)")?;
            }
            for (n, p) in &info.parameters {
                let default = p
                    .default_value
                    .as_ref()
                    .map_or(String::new(), |d| format!("\n    Default: {d}"));
                writeln!(out, "  {n}  {}{default}", p.ty)?;
            }
            writeln!(out, "\nModule:\n  {}", info.file.display())?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn usage(info: &puppet::PlanInfo) -> String {
    info.parameters
        .iter()
        .map(|(n, p)| {
            if p.default_value.is_some() || p.ty.starts_with("Optional") {
                format!(" [{n}=<value>]")
            } else {
                format!(" {n}=<value>")
            }
        })
        .collect()
}
