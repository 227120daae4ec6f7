//! `ferry plan run`: load the plan, check its parameters before anything
//! connects, run its steps with the chosen printer, print its result.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;

use super::{ModuleArgs, RunArgs};
use ferry::output::Format;
use ferry::output::human::HumanPrinter;
use ferry::plan::run::{Context, check_params};
use ferry::run::events::{Discard, Sink};
use ferry::run::{self, RunOptions};
use ferry::task::params::parse_assignments;

pub async fn run(
    name: &str,
    words: &[String],
    modules: &ModuleArgs,
    args: &RunArgs,
) -> Result<ExitCode> {
    let modulepath: Vec<PathBuf> = modules
        .modulepath
        .split(':')
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .collect();
    super::commands::check_output_flags(args)?;
    let path = ferry::plan::find(name, &modulepath)?;
    let plan = ferry::plan::load(&path, name)?;
    let mut given = parse_assignments(words)?;
    if let Some(spec) = &args.select.targets {
        given.insert("targets".into(), serde_json::Value::String(spec.clone()));
    }
    let params = check_params(&plan, given)?;
    let inventory = super::commands::run_inventory(args)?;
    let options = RunOptions {
        concurrency: args.concurrency.unwrap_or_else(run::default_concurrency),
        overrides: super::commands::overrides(args),
    };
    let format = args.format;
    let stream = args.stream;
    let sink = move || -> Arc<dyn Sink> {
        match format {
            Format::Human => Arc::new(HumanPrinter::new(Box::new(std::io::stdout()), stream)),
            Format::Json => Arc::new(Discard),
        }
    };
    let message = move |m: &str| {
        if format == Format::Human {
            println!("{m}");
        }
    };
    let ctx = Context {
        inventory: &inventory,
        modulepath,
        options,
        sink: &sink,
        message: &message,
    };
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let outcome = ferry::plan::run::run(&plan, &dir, params, &ctx).await;
    let mut out = std::io::stdout().lock();
    match format {
        Format::Json => {
            let steps: serde_json::Map<String, serde_json::Value> = outcome
                .steps
                .iter()
                .map(|(n, s)| (n.clone(), s.to_json()))
                .collect();
            let doc = serde_json::json!({
                "plan": plan.name,
                "status": if outcome.ok { "success" } else { "failure" },
                "steps": steps,
                "value": outcome.value,
            });
            writeln!(out, "{}", serde_json::to_string(&doc)?)?;
        }
        Format::Human => {
            let verdict = if outcome.ok { "Finished" } else { "Failed" };
            writeln!(
                out,
                "{verdict}: plan {} ({} step(s))",
                plan.name,
                outcome.steps.len()
            )?;
            if !outcome.value.is_null() {
                writeln!(out, "{}", serde_json::to_string_pretty(&outcome.value)?)?;
            }
        }
    }
    Ok(if outcome.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}
