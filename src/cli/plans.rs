//! `ferry plan run` and `ferry plan show`, printed as Bolt prints them.
//!
//! `plan run`: the plan is read and its parameters checked before anything
//! connects. With `--format human`, Bolt's "Starting:"/"Finished:" lines
//! for the plan and each step, messages on stdout, then the plan's result
//! (results as blocks with a summary, other values as JSON). With
//! `--format json`, only the plan's value on stdout — the return value
//! alone, or the error that ended the plan (`{kind, msg, details}`), also
//! for a plan that cannot be read — and messages on stderr.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, bail};

use super::plan_report::{HumanReport, JsonReport};
use super::{ModuleArgs, RunArgs};
use ferry::output::Format;
use ferry::output::human::HumanPrinter;
use ferry::plan::run::{Context, Reporter, check_params};
use ferry::plan::{Failure, Located, Plan, PlanError, Val};
use ferry::run::events::{Discard, Event, Sink};
use ferry::run::{RunOptions, Summary};
use ferry::task::params::parse_assignments;

/// A plan that cannot start: as JSON on stdout (exit 1) in JSON mode,
/// otherwise returned as the command's error.
fn refused(format: Format, e: PlanError) -> Result<ExitCode> {
    if format == Format::Json {
        println!("{}", e.to_failure().to_json());
        return Ok(ExitCode::from(1));
    }
    Err(e.into())
}

pub async fn run(
    name: &str,
    words: &[String],
    modules: &ModuleArgs,
    args: &RunArgs,
) -> Result<ExitCode> {
    let modulepath = modules.resolve();
    super::commands::check_output_flags(args)?;
    // `-t` (every one given) or `--rerun` is the plan's `targets`
    // parameter, which must then not be given again (Bolt's
    // application.rb#run_plan).
    let targets = super::commands::target_spec(&args.select)?;
    if targets.is_some()
        && words
            .iter()
            .any(|w| w.split_once('=').is_some_and(|(k, _)| k == "targets"))
    {
        bail!(
            "A plan's 'targets' parameter can be specified using the --targets option, but in that \
             case it must not be specified as a separate targets=<value> parameter nor included \
             in the JSON data passed in the --params option"
        );
    }
    if super::pp_plans::is_puppet_plan(name, modules) {
        let mut given = parse_assignments(words)?;
        if let Some(spec) = targets {
            given.insert("targets".into(), serde_json::Value::String(spec));
        }
        return super::pp_plans::run(name, given, modules, args).await;
    }
    let format = args.format;
    let loaded = (|| -> Result<(Plan, serde_json::Map<String, serde_json::Value>), PlanError> {
        let path = ferry::plan::find(name, &modulepath)?;
        let plan = ferry::plan::load(&path, name)?;
        let mut given = parse_assignments(words).map_err(|e| PlanError::Param(e.to_string()))?;
        if let Some(spec) = targets {
            given.insert("targets".into(), serde_json::Value::String(spec));
        }
        let params = check_params(&plan, given)?;
        Ok((plan, params))
    })();
    let (plan, params) = match loaded {
        Ok(p) => p,
        Err(e) => return refused(format, e),
    };
    let inventory = super::commands::run_inventory(args, Some(modules))?;
    let options = RunOptions {
        concurrency: args.concurrency.unwrap_or_else(super::default_concurrency),
        overrides: super::commands::overrides(args),
    };
    let stream = args.stream;
    let sink = move || -> Arc<dyn Sink> {
        if format == Format::Human && stream {
            Arc::new(HumanPrinter::new(Box::new(std::io::stdout()), true))
        } else {
            Arc::new(Discard)
        }
    };
    let report: &dyn Reporter = match format {
        Format::Human => &HumanReport,
        Format::Json => &JsonReport,
    };
    let ctx = Context {
        inventory: &inventory,
        modulepath,
        options,
        sink: &sink,
        report,
        downloads: PathBuf::from("downloads"),
        stored_facts: None,
    };
    let outcome = ferry::plan::run::run(&plan, params, &ctx).await;
    match format {
        Format::Json => {
            let doc = match &outcome {
                Ok(v) => v.to_json(),
                Err(f) => f.to_json(),
            };
            let mut out = std::io::stdout().lock();
            writeln!(out, "{}", serde_json::to_string(&doc)?)?;
        }
        Format::Human => print_human(&outcome)?,
    }
    Ok(super::commands::plan_exit_status(outcome.is_ok()))
}

/// Results as the human printer shows a run: a block each, then the summary.
fn print_results(results: &[ferry::run::TargetResult]) {
    let printer = HumanPrinter::new(Box::new(std::io::stdout()), false);
    for r in results {
        printer.event(&Event::TargetFinished(r));
    }
    printer.event(&Event::RunFinished(&Summary {
        results: results.to_vec(),
        elapsed: Duration::ZERO,
    }));
}

/// The plan's result as Bolt's human output prints it.
fn print_human(outcome: &Result<Val, Failure>) -> Result<()> {
    match outcome {
        Ok(Val::Data(serde_json::Value::Null)) => {
            println!("Plan completed successfully with no result");
        }
        Ok(Val::ResultSet(rs)) => print_results(rs),
        Ok(Val::Result(r)) => print_results(std::slice::from_ref(r.as_ref())),
        Ok(other) => println!("{}", serde_json::to_string_pretty(&other.to_json())?),
        Err(Failure {
            result_set: Some(rs),
            ..
        }) => print_results(rs),
        Err(f) => {
            let mut text = f.msg.clone();
            if let Some(file) = f.details.get("file").and_then(|v| v.as_str()) {
                text.push_str(&format!("\n  (file: {file}"));
                for key in ["line", "column"] {
                    if let Some(n) = f.details.get(key) {
                        text.push_str(&format!(", {key}: {n}"));
                    }
                }
                text.push(')');
            }
            println!("{text}");
        }
    }
    Ok(())
}

/// `ferry plan show [NAME]`: one plan's description and parameters, or
/// every plan that is not private.
pub fn show(name: Option<&str>, modules: &ModuleArgs, format: Format) -> Result<ExitCode> {
    let modulepath = modules.resolve();
    let mut out = std::io::stdout().lock();
    let Some(name) = name else {
        let mut plans = Vec::new();
        for (name, located) in ferry::plan::load::list(&modulepath) {
            if !super::project().is_none_or(|p| p.lists(true, &name)) {
                continue;
            }
            let description = match &located {
                Located::Yaml(path) => match ferry::plan::load(path, &name) {
                    Ok(p) if p.private => continue,
                    Ok(p) => p.description,
                    Err(_) => None,
                },
                Located::Puppet(_) => None,
            };
            plans.push((name, description));
        }
        match format {
            Format::Json => {
                let doc = serde_json::json!({
                    "plans": plans.iter().map(|(n, d)| serde_json::json!([n, d])).collect::<Vec<_>>(),
                    "modulepath": modulepath.dirs(),
                });
                writeln!(out, "{doc}")?;
            }
            Format::Human => {
                writeln!(out, "Plans")?;
                if plans.is_empty() {
                    writeln!(out, "  No available plans")?;
                }
                let width = plans.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
                for (n, d) in &plans {
                    let d = d.as_deref().unwrap_or("").lines().next().unwrap_or("");
                    writeln!(out, "  {n:width$}   {d}")?;
                }
                writeln!(out, "\nModulepath")?;
                let shown: Vec<String> = modulepath
                    .dirs()
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect();
                writeln!(out, "  {}", shown.join(":"))?;
            }
        }
        return Ok(ExitCode::SUCCESS);
    };
    if super::pp_plans::is_puppet_plan(name, modules) {
        return super::pp_plans::show(name, modules, format);
    }
    let path = ferry::plan::find(name, &modulepath)?;
    let plan = ferry::plan::load(&path, name)?;
    // <module>/plans/[sub/]name.yaml → <module>
    let module_dir = path
        .ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == "plans"))
        .and_then(|p| p.parent())
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    match format {
        Format::Json => writeln!(out, "{}", plan.info(&module_dir))?,
        Format::Human => {
            writeln!(out, "{}", plan.name)?;
            let desc = plan
                .description
                .as_deref()
                .unwrap_or("No description available.");
            for l in desc.trim().lines() {
                writeln!(out, "  {l}")?;
            }
            let mut usage = format!("ferry plan run {}", plan.name);
            for (n, p) in &plan.parameters {
                if p.default.is_some() {
                    usage.push_str(&format!(" [{n}=<value>]"));
                } else {
                    usage.push_str(&format!(" {n}=<value>"));
                }
            }
            writeln!(out, "\nUsage\n  {usage}\n")?;
            if !plan.parameters.is_empty() {
                writeln!(out, "Parameters")?;
                for (n, p) in &plan.parameters {
                    writeln!(out, "  {n}  {}", p.ty.as_deref().unwrap_or("Any"))?;
                    if let Some(d) = &p.description {
                        writeln!(out, "    {d}")?;
                    }
                    if let Some(d) = p.default.as_ref().filter(|d| !d.is_null()) {
                        writeln!(out, "    Default: {d}")?;
                    }
                    writeln!(out)?;
                }
            }
            writeln!(out, "Module\n  {module_dir}")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
