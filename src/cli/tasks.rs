//! `ferry task run` and `ferry task show`: finding the task, checking its
//! parameters before anything connects, and listing tasks.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;

use serde_json::{Value, json};

use super::ModuleArgs;
use ferry::output::Format;
use ferry::task::{Loader, Prepared, Task, TaskFile, params};

fn loader(modules: &ModuleArgs) -> Loader {
    Loader::new(modules.resolve())
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

/// The files of a task as Bolt's `task show` lists them: each
/// implementation's executable (`name` is its file name), then the other
/// files it names (`name` is `<module>/<mount>/<path>`), with where each is.
/// An implementation whose own files cannot be read is left out with a
/// warning; the shared `files` must all be there.
fn shown_files(loader: &Loader, task: &Task) -> Result<Vec<Value>> {
    let path = |f: &TaskFile| {
        f.origin
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| format!("<built-in>/{}", f.relative))
    };
    let mut files: Vec<Value> = Vec::new();
    let mut extra: Vec<TaskFile> = Vec::new();
    let meta = &task.metadata;
    if meta.implementations.is_empty() {
        for (name, f) in &task.executables {
            files.push(json!({"name": name, "path": path(f)}));
        }
    } else {
        let own = loader.implementation_files(task);
        for (i, found) in meta.implementations.iter().zip(own) {
            if let Some(f) = task.executables.get(&i.name) {
                files.push(json!({"name": i.name, "path": path(f)}));
            }
            match found {
                Ok(list) => extra.extend(list),
                Err(e) => tracing::warn!(
                    "task {}: implementation {} cannot run here: {e}",
                    task.name,
                    i.name
                ),
            }
        }
    }
    extra.extend(loader.shared_files(task)?);
    for f in &extra {
        if !files.iter().any(|g| g["name"] == f.relative.as_str()) {
            files.push(json!({"name": f.relative, "path": path(f)}));
        }
    }
    Ok(files)
}

pub fn show(name: Option<&str>, modules: &ModuleArgs, format: Format) -> Result<ExitCode> {
    let loader = loader(modules);
    let mut out = std::io::stdout().lock();
    let Some(name) = name else {
        let mut tasks = loader.list();
        tasks.retain(|t| super::project().is_none_or(|p| p.lists(false, &t.name)));
        match format {
            Format::Json => {
                // Bolt's shape: [name, description] pairs and the modulepath.
                let list: Vec<Value> = tasks
                    .iter()
                    .map(|t| json!([t.name, t.metadata.description]))
                    .collect();
                let modulepath: Vec<String> = loader
                    .modulepath
                    .dirs()
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect();
                let doc = json!({"tasks": list, "modulepath": modulepath});
                writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
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
    let files = shown_files(&loader, &task)?;
    let module_dir = task
        .module_dir
        .as_ref()
        .map(|d| d.display().to_string())
        .unwrap_or_else(|| "built-in module".to_string());
    let meta = &task.metadata;
    match format {
        Format::Json => {
            let doc = json!({"name": task.name, "files": files,
                "metadata": Value::Object(meta.raw.clone()), "module_dir": module_dir});
            writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        }
        Format::Human => {
            writeln!(out, "{}", task.name)?;
            let description = meta
                .description
                .as_deref()
                .unwrap_or("No description available.");
            writeln!(out, "  {}\n", description.trim_end())?;
            let mut usage = format!("ferry task run {} -t <targets>", task.name);
            if meta.supports_noop {
                usage.push_str(" [--noop]");
            }
            for (n, p) in meta.parameters.iter().flatten() {
                let optional = p.default.is_some()
                    || p.ty.as_deref().is_some_and(|t| t.starts_with("Optional"));
                if optional {
                    usage.push_str(&format!(" [{n}=<value>]"));
                } else {
                    usage.push_str(&format!(" {n}=<value>"));
                }
            }
            writeln!(out, "Usage\n  {usage}\n")?;
            if meta.parameters.as_ref().is_some_and(|p| !p.is_empty()) {
                writeln!(out, "Parameters")?;
            }
            for (n, p) in meta.parameters.iter().flatten() {
                let sensitive = if p.sensitive { " [sensitive]" } else { "" };
                writeln!(
                    out,
                    "  {n}  {}{sensitive}",
                    p.ty.as_deref().unwrap_or("Any")
                )?;
                if let Some(d) = &p.description {
                    writeln!(out, "    {}", d.trim_end())?;
                }
                if let Some(d) = &p.default {
                    writeln!(out, "    Default: {d}")?;
                }
                writeln!(out)?;
            }
            writeln!(out, "Implementations")?;
            if meta.implementations.is_empty() {
                for n in task.executables.keys() {
                    writeln!(out, "  {n}")?;
                }
            }
            for i in &meta.implementations {
                if i.requirements.is_empty() {
                    writeln!(out, "  {}", i.name)?;
                } else {
                    writeln!(out, "  {}  requires {}", i.name, i.requirements.join(", "))?;
                }
            }
            writeln!(out, "\nModule\n  {module_dir}")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
