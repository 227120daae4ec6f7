//! Functions that find and read files in the environment's modules:
//! `file` (the first existing of several `module/name` references under
//! a module's `files/`, or absolute paths, read as text), `find_file`
//! and `find_template` (the path of the first that exists, or undef) and
//! `module_directory` (the directory of the first module found). Module
//! references resolve on the modulepath as `template` and `epp` do.

use std::path::PathBuf;

use crate::lang::error::plain;
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::functions::{Builder, Family, any, sig, string};
use crate::lang::loader;
use crate::lang::values::types::{self, PType};
use crate::lang::values::value::Value;

pub fn register(b: &mut Builder) {
    let f = Family::Files;
    b.add(&["file"], f, sig("String").rest("files", any()), file);
    let either = || sig("Optional[String]").rest("paths", any());
    b.add(&["find_file"], f, either(), find_file);
    b.add(&["find_template"], f, either(), find_template);
    b.add(&["module_directory"], f, either(), module_directory);
}

/// Where reference `r` points: an absolute path as it is, `module/rest`
/// under the module's `subdir` (Puppet's `Parser::Files.find_in_module`),
/// whether or not it exists.
fn resolve(ev: &Evaluator<'_>, subdir: &str, r: &str) -> Option<PathBuf> {
    let p = std::path::Path::new(r);
    if p.is_absolute() {
        return Some(p.to_path_buf());
    }
    let (module, rest) = r.split_once('/')?;
    if rest.split('/').any(|s| s == "..") {
        return None;
    }
    let dir = loader::module_dir(ev.loader, &ev.modulepath, module)?;
    Some(dir.join(subdir).join(rest))
}

/// The first of `refs` that resolves to an existing file or directory.
fn first_existing(ev: &Evaluator<'_>, subdir: &str, refs: &[String]) -> Option<PathBuf> {
    refs.iter()
        .filter_map(|r| resolve(ev, subdir, r))
        .find(|p| ev.loader.is_file(p) || ev.loader.is_dir(p))
}

/// `file()`, a 3.x function: at least one argument, each a reference.
fn file(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    if c.args.is_empty() {
        return Err(plain("file(): Wrong number of arguments given (0 for minimum 1)").into());
    }
    let refs: Vec<String> = c.args.iter().map(Value::to_s).collect();
    let Some(path) = first_existing(ev, "files", &refs) else {
        return Err(plain(format!("Could not find any files from {}", refs.join(", "))).into());
    };
    ev.loader
        .read(&path)
        .map(Value::Str)
        .map_err(|e| plain(format!("file(): could not read '{}': {e}", path.display())).into())
}

/// The arguments of a function dispatched as `(String name*)` or
/// `(Array[String] name_array*)`: the strings, or Puppet's dispatch
/// failure naming the first argument each signature rejects.
fn strings_or_arrays(c: &Call<'_>, names: [&str; 2]) -> EvalResult<Vec<String>> {
    let s = string();
    let arr = PType::Array(Box::new(string()), 0, i64::MAX);
    if c.args.iter().all(|a| types::is_instance(&s, a)) {
        return Ok(c.args.iter().map(Value::to_s).collect());
    }
    if c.args.iter().all(|a| types::is_instance(&arr, a)) {
        let mut out = Vec::new();
        for a in &c.args {
            if let Value::Array(items) = a {
                out.extend(items.iter().map(Value::to_s));
            }
        }
        return Ok(out);
    }
    let mut lines = Vec::new();
    for (ty, name) in [(&s, names[0]), (&arr, names[1])] {
        if let Some(bad) = c.args.iter().find(|a| !types::is_instance(ty, a)) {
            lines.push(format!(
                "  ({ty} {name}*)\n    rejected: parameter '{name}' {}",
                types::mismatch(ty, bad)
            ));
        }
    }
    Err(plain(format!(
        "The function '{}' was called with arguments it does not accept. It expects one of:\n{}",
        c.name,
        lines.join("\n")
    ))
    .into())
}

fn path_value(p: Option<PathBuf>) -> Value {
    p.map_or(Value::Undef, |p| Value::Str(p.display().to_string()))
}

fn find_file(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let refs = strings_or_arrays(&c, ["paths", "paths_array"])?;
    Ok(path_value(first_existing(ev, "files", &refs)))
}

fn find_template(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let refs = strings_or_arrays(&c, ["paths", "paths_array"])?;
    Ok(path_value(first_existing(ev, "templates", &refs)))
}

/// `module_directory()`: both of Puppet's signatures name their parameter
/// `names`, so a mismatch is reported once, against both types.
fn module_directory(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let names = match strings_or_arrays(&c, ["names", "names"]) {
        Ok(n) => n,
        Err(_) => {
            let bad = c
                .args
                .iter()
                .find(|a| !matches!(a, Value::Str(_) | Value::Array(_)));
            let got = bad.map_or_else(|| "Array".to_string(), Value::type_name);
            return Err(plain(format!(
                "'module_directory' parameter 'names' expects a value of type String or Array, got {got}"
            ))
            .into());
        }
    };
    Ok(path_value(names.iter().find_map(|n| {
        loader::module_dir(ev.loader, &ev.modulepath, n)
    })))
}
