//! `ferry task run` and `ferry task show`: finding the task, checking its
//! parameters before anything connects, and listing tasks.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use super::ModuleArgs;
use ferry::output::Format;
use ferry::task::{Loader, Prepared, params};

fn loader(modules: &ModuleArgs) -> Loader {
    Loader::new(
        modules
            .modulepath
            .split(':')
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .collect(),
    )
}

pub fn prepare(
    name: &str,
    words: &[String],
    json: Option<&str>,
    noop: bool,
    no_cleanup: bool,
    modules: &ModuleArgs,
) -> Result<Prepared> {
    let loader = loader(modules);
    let task = loader.load(name)?;
    let mut given = match json {
        Some(text) => params::parse_params_option(text)?,
        None => serde_json::Map::new(),
    };
    given.extend(params::parse_assignments(words)?);
    let mut prepared = params::prepare(task, given, noop, &loader)?;
    prepared.cleanup = !no_cleanup;
    Ok(prepared)
}

pub fn show(name: Option<&str>, modules: &ModuleArgs, format: Format) -> Result<ExitCode> {
    let loader = loader(modules);
    let mut out = std::io::stdout().lock();
    let Some(name) = name else {
        let tasks = loader.list();
        match format {
            Format::Json => {
                let list: Vec<serde_json::Value> = tasks
                    .iter()
                    .map(|t| serde_json::json!({"name": t.name, "description": t.metadata.description}))
                    .collect();
                writeln!(out, "{}", serde_json::to_string_pretty(&list)?)?;
            }
            Format::Human => {
                let width = tasks.iter().map(|t| t.name.len()).max().unwrap_or(0);
                for t in &tasks {
                    writeln!(
                        out,
                        "{:width$}  {}",
                        t.name,
                        t.metadata.description.as_deref().unwrap_or("")
                    )?;
                }
            }
        }
        return Ok(ExitCode::SUCCESS);
    };
    let task = loader.load(name)?;
    let meta = &task.metadata;
    let params: Vec<serde_json::Value> = meta
        .parameters
        .iter()
        .flatten()
        .map(|(n, p)| {
            serde_json::json!({"name": n, "type": p.ty.as_deref().unwrap_or("Any"), "description": p.description,
                "default": p.default, "sensitive": p.sensitive})
        })
        .collect();
    let implementations: Vec<serde_json::Value> = if meta.implementations.is_empty() {
        task.executables
            .keys()
            .map(|n| serde_json::json!({"name": n, "requirements": []}))
            .collect()
    } else {
        meta.implementations
            .iter()
            .map(|i| serde_json::json!({"name": i.name, "requirements": i.requirements}))
            .collect()
    };
    match format {
        Format::Json => {
            let doc = serde_json::json!({"name": task.name, "description": meta.description, "parameters": params,
                "implementations": implementations, "supports_noop": meta.supports_noop});
            writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        }
        Format::Human => {
            writeln!(out, "{}", task.name)?;
            if let Some(d) = &meta.description {
                writeln!(out, "  {d}")?;
            }
            writeln!(out, "\nParameters:")?;
            if params.is_empty() {
                writeln!(out, "  (none)")?;
            }
            for p in &params {
                let default = match &p["default"] {
                    serde_json::Value::Null => String::new(),
                    d => format!(" (default: {d})"),
                };
                let sensitive = if p["sensitive"] == true {
                    " [sensitive]"
                } else {
                    ""
                };
                writeln!(
                    out,
                    "  {}  {}{default}{sensitive}",
                    p["name"].as_str().unwrap_or(""),
                    p["type"].as_str().unwrap_or("")
                )?;
                if let Some(d) = p["description"].as_str() {
                    writeln!(out, "      {d}")?;
                }
            }
            writeln!(out, "\nImplementations:")?;
            for i in &implementations {
                writeln!(
                    out,
                    "  {}  requires {}",
                    i["name"].as_str().unwrap_or(""),
                    i["requirements"]
                )?;
            }
            if meta.supports_noop {
                writeln!(out, "\nSupports --noop.")?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
