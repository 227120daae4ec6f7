//! Reading YAML plans: `<module>/plans/<name>.yaml` on the modulepath (or a
//! file given by path), checked as Bolt checks them — top-level keys,
//! parameter names and keys, each step's kind and the keys that kind
//! allows, step names (valid, not repeated, not a parameter's), the
//! Puppet code in every value — plus references to variables no earlier
//! step or parameter defines. Every error names the file, line and column.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::expr::{self, Expr, ExprError, Place};
use super::{Param, Plan, PlanError, Step, StepKind};
use crate::lang::modulepath::Modulepath;
use crate::yaml::{self, Node, Origin, Value as Y, key_text};

/// A plan file found on the modulepath.
#[derive(Clone, Debug)]
pub enum Located {
    Yaml(PathBuf),
    /// A Puppet-language plan (`.pp`), for the Puppet-language engine.
    Puppet(PathBuf),
}

/// Whether `s` is a plan or module name segment (`[a-z][a-z0-9_]*`).
fn valid_segment(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Finds plan `mod::name` (`mod::dir::name` in a subfolder, `mod` for
/// `mod::init`) on the modulepath: a `.yaml` plan, or a `.pp` one.
pub fn locate(name: &str, modulepath: &Modulepath) -> Result<Located, PlanError> {
    if name.ends_with(".yaml") || name.contains('/') {
        return Ok(Located::Yaml(PathBuf::from(name)));
    }
    let mut segments: Vec<&str> = name.split("::").collect();
    if !segments.iter().all(|s| valid_segment(s)) {
        return Err(PlanError::Invalid {
            at: None,
            msg: format!(
                "invalid plan name '{name}': each part must start with a lowercase letter \
                 and hold only lowercase letters, digits and underscores"
            ),
        });
    }
    let module = segments.remove(0);
    if segments.is_empty() {
        segments.push("init");
    }
    let rel = segments.join("/");
    for dir in modulepath.candidates(module) {
        let base = dir.join("plans");
        let yaml = base.join(format!("{rel}.yaml"));
        if yaml.is_file() {
            return Ok(Located::Yaml(yaml));
        }
        let pp = base.join(format!("{rel}.pp"));
        if pp.is_file() {
            return Ok(Located::Puppet(pp));
        }
    }
    Err(PlanError::NotFound(name.to_string()))
}

/// Every plan on the modulepath, by name (the first module of a name
/// wins, as on the modulepath), with its file.
pub fn list(modulepath: &Modulepath) -> BTreeMap<String, Located> {
    fn walk(dir: &Path, prefix: &str, out: &mut Vec<(String, PathBuf)>, depth: usize) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let path = e.path();
            let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            if path.is_dir() && depth < 8 && valid_segment(stem) {
                walk(&path, &format!("{prefix}::{stem}"), out, depth + 1);
            } else if valid_segment(stem)
                && matches!(
                    path.extension().and_then(|x| x.to_str()),
                    Some("yaml" | "pp")
                )
            {
                let name = if stem == "init" && depth == 0 {
                    prefix.to_string()
                } else {
                    format!("{prefix}::{stem}")
                };
                out.push((name, path));
            }
        }
    }
    let mut plans = BTreeMap::new();
    for (module, dir) in modulepath.modules() {
        if !valid_segment(&module) {
            continue;
        }
        let mut found = Vec::new();
        walk(&dir.join("plans"), &module, &mut found, 0);
        for (name, path) in found {
            let located = if path.extension().is_some_and(|x| x == "pp") {
                Located::Puppet(path)
            } else {
                Located::Yaml(path)
            };
            plans.entry(name).or_insert(located);
        }
    }
    plans
}

/// Finds a YAML plan (see [`locate`]).
pub fn find(name: &str, modulepath: &Modulepath) -> Result<PathBuf, PlanError> {
    match locate(name, modulepath)? {
        Located::Yaml(p) => Ok(p),
        Located::Puppet(p) => Err(PlanError::Invalid {
            at: Some(Origin::new(&Arc::new(p), 0, 0)),
            msg: format!("plan {name} is in the Puppet language; ferry runs YAML plans only"),
        }),
    }
}

/// Bolt's step kinds, in the order Bolt lists them in errors, and ferry's
/// `parallel`.
const STEP_KEYS: &[&str] = &[
    "command",
    "download",
    "eval",
    "message",
    "verbose",
    "plan",
    "resources",
    "script",
    "task",
    "upload",
    "parallel",
];

/// For each kind: (required keys, option keys, other keys), as Bolt's
/// step classes declare them. Every kind also takes name, description
/// and targets.
fn keys_of(
    kind: &str,
) -> (
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
) {
    match kind {
        "command" => (
            &["command", "targets"],
            &["catch_errors", "env_vars", "run_as"],
            &[],
        ),
        "download" => (
            &["download", "destination", "targets"],
            &["catch_errors", "run_as"],
            &[],
        ),
        "eval" => (&["eval"], &[], &[]),
        "message" => (&["message"], &[], &[]),
        "verbose" => (&["verbose"], &[], &[]),
        "plan" => (&["plan"], &["catch_errors", "run_as"], &["parameters"]),
        "resources" => (
            &["resources", "targets"],
            &["catch_errors", "description", "noop", "run_as"],
            &[],
        ),
        "script" => (
            &["script", "targets"],
            &["catch_errors", "env_vars", "run_as"],
            &["arguments", "pwsh_params"],
        ),
        "task" => (
            &["targets", "task"],
            &["catch_errors", "noop", "run_as"],
            &["parameters"],
        ),
        "upload" => (
            &["destination", "targets", "upload"],
            &["catch_errors", "run_as"],
            &[],
        ),
        _ => (&["parallel"], &[], &[]),
    }
}

/// A list written as Ruby writes an array of strings: `["a", "b"]`.
fn ruby_list<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    let quoted: Vec<String> = items.into_iter().map(|s| format!("{s:?}")).collect();
    format!("[{}]", quoted.join(", "))
}

/// Whether `s` is a valid variable name (`[a-z_][a-z0-9_]*`), as Bolt
/// requires of parameter and step names.
fn var_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// How a YAML scalar was written, which decides how Bolt reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
    Folded,
}

struct Ctx {
    file: Arc<PathBuf>,
    lines: Vec<String>,
}

impl Ctx {
    fn origin(&self, n: &Node) -> Origin {
        Origin::new(&self.file, n.line, n.column)
    }

    fn err(&self, n: &Node, msg: impl Into<String>) -> PlanError {
        PlanError::at(&self.origin(n), msg)
    }

    /// How the scalar `n` is written. serde-saphyr places a quoted
    /// scalar at its opening quote and a block scalar at its first line of
    /// text, so the block header (`|`, `>-`, ...) is found before it.
    fn style(&self, n: &Node) -> Style {
        let (Ok(line), Ok(col)) = (usize::try_from(n.line), usize::try_from(n.column)) else {
            return Style::Plain;
        };
        let Some(current) = line.checked_sub(1).and_then(|i| self.lines.get(i)) else {
            return Style::Plain;
        };
        let head: String = current.chars().take(col.saturating_sub(1)).collect();
        match current.chars().nth(col.saturating_sub(1)) {
            Some('"') => return Style::Double,
            Some('\'') => return Style::Single,
            _ => {}
        }
        // The last word before the text, on this line or the ones above.
        let mut before = head.trim_end().to_string();
        let mut i = line - 1;
        while before.is_empty() && i > 0 {
            i -= 1;
            before = self.lines[i].trim_end().to_string();
        }
        let word = before.rsplit([' ', '\t']).next().unwrap_or("");
        let mut chars = word.chars();
        let indicator = chars.next();
        if chars.all(|c| matches!(c, '-' | '+' | '1'..='9')) {
            match indicator {
                Some('|') => return Style::Literal,
                Some('>') => return Style::Folded,
                _ => {}
            }
        }
        Style::Plain
    }

    fn place(&self, n: &Node, style: Style) -> Place {
        Place {
            at: self.origin(n),
            block_indent: (style == Style::Literal).then_some(n.column),
            lead: u64::from(style == Style::Double),
        }
    }

    /// A value of a step or of `return`, read as Bolt reads it.
    fn expr(&self, n: &Node) -> Result<Expr, ExprError> {
        Ok(match &n.value {
            Y::Null => Expr::Lit(serde_json::Value::Null),
            Y::Bool(_) | Y::Int(_) | Y::Float(_) => Expr::Lit(n.to_json()),
            Y::Str(s) => {
                let style = self.style(n);
                let place = self.place(n, style);
                match style {
                    Style::Single | Style::Folded => Expr::Lit(serde_json::json!(s)),
                    Style::Double => expr::interpolated(s, &place)?,
                    Style::Literal => expr::code(s, &place)?,
                    Style::Plain if s.starts_with('$') => expr::code(s, &place)?,
                    Style::Plain => {
                        expr::check_interpolated(s, &place)?;
                        Expr::Lit(serde_json::json!(s))
                    }
                }
            }
            Y::Seq(items) => Expr::List(
                items
                    .iter()
                    .map(|i| self.expr(i))
                    .collect::<Result<_, _>>()?,
            ),
            Y::Map(entries) => Expr::Map(
                entries
                    .iter()
                    .map(|(k, v)| {
                        let key = key_text(k);
                        let value = self.expr(v).map_err(|mut e| {
                            e.key.get_or_insert_with(|| key.clone());
                            e
                        })?;
                        Ok((key, value))
                    })
                    .collect::<Result<_, ExprError>>()?,
            ),
        })
    }

    fn map<'n>(&self, n: &'n Node, what: &str) -> Result<&'n [(Node, Node)], PlanError> {
        match &n.value {
            Y::Map(e) => Ok(e),
            _ => Err(self.err(n, format!("{what} must be a mapping, found {}", n.kind()))),
        }
    }

    fn string(&self, n: &Node, what: &str) -> Result<String, PlanError> {
        n.as_str()
            .map(str::to_string)
            .ok_or_else(|| self.err(n, format!("{what} must be a string, found {}", n.kind())))
    }
}

/// Reads a plan file. `name` is what the plan is called in output.
pub fn load(path: &Path, name: &str) -> Result<Plan, PlanError> {
    let text = std::fs::read_to_string(path).map_err(|e| PlanError::Invalid {
        at: Some(Origin::new(&Arc::new(path.to_path_buf()), 0, 0)),
        msg: e.to_string(),
    })?;
    let ctx = Ctx {
        file: Arc::new(path.to_path_buf()),
        lines: text.lines().map(str::to_string).collect(),
    };
    let root = yaml::parse(&text)
        .map_err(|e| PlanError::at(&Origin::new(&ctx.file, e.line, e.column), e.message))?;
    let Y::Map(top) = &root.value else {
        return Err(ctx.err(
            &root,
            format!("a plan must be a mapping, found {}", root.kind()),
        ));
    };
    const PLAN_KEYS: &[&str] = &[
        "parameters",
        "private",
        "steps",
        "return",
        "version",
        "description",
    ];
    let illegal: Vec<(String, &Node)> = top
        .iter()
        .map(|(k, _)| (key_text(k), k))
        .filter(|(k, _)| !PLAN_KEYS.contains(&k.as_str()))
        .collect();
    if let Some((_, first)) = illegal.first() {
        return Err(ctx.err(
            first,
            format!(
                "Plan contains illegal key(s) {}",
                ruby_list(illegal.iter().map(|(k, _)| k.as_str()))
            ),
        ));
    }
    let get = |key: &str| top.iter().find(|(k, _)| k.as_str() == Some(key));
    let mut plan = Plan {
        name: name.to_string(),
        description: None,
        private: false,
        parameters: BTreeMap::new(),
        steps: Vec::new(),
        returns: None,
        file: path.to_path_buf(),
    };
    if let Some((_, v)) = get("description") {
        plan.description = Some(ctx.string(v, "description")?);
    }
    if let Some((_, v)) = get("private") {
        match v.value {
            Y::Bool(b) => plan.private = b,
            _ => {
                return Err(ctx.err(
                    v,
                    format!(
                        "Plan {name} key 'private' must be a boolean, received: {}",
                        v.to_json()
                    ),
                ));
            }
        }
    }
    if let Some((_, v)) = get("parameters") {
        let Y::Map(params) = &v.value else {
            return Err(ctx.err(v, "Plan parameters must be a Hash"));
        };
        for (pk, pv) in params {
            let pname = key_text(pk);
            if !var_name(&pname) {
                return Err(ctx.err(pk, format!("Invalid parameter name {pname:?}")));
            }
            plan.parameters
                .insert(pname.clone(), param(&ctx, &pname, pv)?);
        }
    }
    let steps = match get("steps") {
        Some((
            _,
            v @ Node {
                value: Y::Seq(items),
                ..
            },
        )) => {
            let _ = v;
            items
        }
        Some((_, v)) => return Err(ctx.err(v, "Plan must specify an array of steps")),
        None => return Err(ctx.err(&root, "Plan must specify an array of steps")),
    };
    for (i, item) in steps.iter().enumerate() {
        plan.steps.push(step(&ctx, item, i + 1, false)?);
    }
    if let Some((_, v)) = get("return") {
        plan.returns =
            Some(ctx.expr(v).map_err(|e| {
                PlanError::at(&e.at, format!("Error parsing \"return\": {}", e.msg))
            })?);
    }
    check_names(&plan)?;
    Ok(plan)
}

fn param(ctx: &Ctx, name: &str, n: &Node) -> Result<Param, PlanError> {
    let mut p = Param {
        ty: None,
        default: None,
        description: None,
    };
    if matches!(n.value, Y::Null) {
        return Ok(p);
    }
    let entries = ctx.map(n, &format!("Plan parameter {name:?}"))?;
    let illegal: Vec<String> = entries
        .iter()
        .map(|(k, _)| key_text(k))
        .filter(|k| !["type", "default", "description"].contains(&k.as_str()))
        .collect();
    if !illegal.is_empty() {
        let first = entries
            .iter()
            .find(|(k, _)| key_text(k) == illegal[0])
            .map_or(n, |(k, _)| k);
        return Err(ctx.err(
            first,
            format!(
                "Plan parameter {name:?} contains illegal key(s) {}",
                ruby_list(illegal.iter().map(String::as_str))
            ),
        ));
    }
    for (k, v) in entries {
        match key_text(k).as_str() {
            "type" => {
                let ty = ctx.string(v, "type")?;
                let file: Arc<str> = Arc::from("<parameter type>");
                crate::lang::syntax::parser::parse_type(&ty, &file).map_err(|e| {
                    ctx.err(
                        v,
                        format!("invalid type for parameter '{name}': {}", e.message),
                    )
                })?;
                p.ty = Some(ty);
            }
            "default" => p.default = Some(v.to_json()),
            _ => p.description = Some(ctx.string(v, "description")?),
        }
    }
    Ok(p)
}

/// Bolt's "Parse error in step ..." for step `number` (named `name`).
fn step_error(at: &Origin, name: Option<&str>, number: usize, msg: &str) -> PlanError {
    let id = match name {
        Some(n) => format!("{n:?}"),
        None => format!("number {number}"),
    };
    PlanError::at(at, format!("Parse error in step {id}: {msg}"))
}

fn step(ctx: &Ctx, n: &Node, number: usize, in_parallel: bool) -> Result<Step, PlanError> {
    let origin = ctx.origin(n);
    let Y::Map(entries) = &n.value else {
        return Err(step_error(
            &origin,
            None,
            number,
            "Plan step must be an object with valid step keys.",
        ));
    };
    let get = |key: &str| {
        entries
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    };
    let name_node = get("name");
    let name = name_node.map(|v| match &v.value {
        Y::Str(s) => s.clone(),
        _ => v.to_json().to_string(),
    });
    let fail = |at: &Origin, msg: &str| step_error(at, name.as_deref(), number, msg);
    let keys: Vec<String> = entries.iter().map(|(k, _)| key_text(k)).collect();
    let kinds: Vec<&str> = STEP_KEYS
        .iter()
        .copied()
        .filter(|k| keys.iter().any(|key| key == k))
        .collect();
    let kind = match kinds.as_slice() {
        [] => return Err(fail(&origin, "No valid action detected")),
        [one] => *one,
        many => {
            return Err(fail(
                &origin,
                &format!(
                    "Multiple action keys detected: {}",
                    ruby_list(many.iter().copied())
                ),
            ));
        }
    };
    let (required, options, extra) = keys_of(kind);
    let allowed = |k: &str| {
        if kind == "parallel" {
            return ["parallel", "description"].contains(&k);
        }
        required.contains(&k)
            || options.contains(&k)
            || extra.contains(&k)
            || ["name", "description", "targets"].contains(&k)
    };
    let illegal: Vec<&str> = keys
        .iter()
        .map(String::as_str)
        .filter(|k| !allowed(k))
        .collect();
    if let Some(first) = illegal.first() {
        let at = entries
            .iter()
            .find(|(k, _)| key_text(k) == *first)
            .map_or(origin.clone(), |(k, _)| ctx.origin(k));
        return Err(fail(
            &at,
            &format!(
                "The {kind:?} step does not support: {} key(s)",
                ruby_list(illegal.iter().copied())
            ),
        ));
    }
    let missing: Vec<&str> = required
        .iter()
        .copied()
        .filter(|k| !keys.iter().any(|key| key == k))
        .collect();
    if !missing.is_empty() {
        return Err(fail(
            &origin,
            &format!(
                "The {kind:?} step requires: {} key(s)",
                ruby_list(missing.iter().copied())
            ),
        ));
    }
    if let Some(v) = get("env_vars")
        && !matches!(v.value, Y::Map(_) | Y::Str(_))
    {
        return Err(fail(
            &ctx.origin(v),
            "env_vars key must be a hash or evaluable string",
        ));
    }
    if let Some(v) = get("arguments")
        && !matches!(v.value, Y::Seq(_) | Y::Null)
    {
        return Err(fail(&ctx.origin(v), "arguments key must be an array"));
    }
    if let Some(v) = get("pwsh_params")
        && !matches!(v.value, Y::Map(_) | Y::Null)
    {
        return Err(fail(&ctx.origin(v), "pwsh_params key must be a hash"));
    }
    if let Some(v) = get("parameters") {
        let Y::Map(params) = &v.value else {
            return Err(fail(&ctx.origin(v), "Parameters key must be a hash"));
        };
        let dups: Vec<String> = params
            .iter()
            .filter_map(|(k, _)| key_text(k).strip_prefix('_').map(str::to_string))
            .filter(|m| keys.contains(m))
            .collect();
        if !dups.is_empty() {
            return Err(fail(
                &ctx.origin(v),
                &format!(
                    "Cannot specify metaparameters when using top-level keys with same name: {}",
                    dups.join(", ")
                ),
            ));
        }
    }
    if let (Some(v), Some(name)) = (name_node, &name)
        && !(matches!(v.value, Y::Str(_)) && var_name(name))
    {
        return Err(fail(
            &ctx.origin(v),
            &format!("Invalid step name: {name:?}"),
        ));
    }
    if kind == "resources" {
        check_resources(get("resources").unwrap_or(n), &|at, m| fail(at, m), ctx)?;
    }
    if kind == "parallel" && in_parallel {
        return Err(fail(
            &origin,
            "a parallel step cannot hold another parallel step",
        ));
    }
    // Every value, read as Bolt reads it (code parsed here, not later).
    let value = |key: &str| -> Result<Option<Expr>, PlanError> {
        let Some(v) = get(key) else {
            return Ok(None);
        };
        ctx.expr(v).map(Some).map_err(|e| {
            let msg = format!(
                "Error parsing {:?}: {}",
                e.key.as_deref().unwrap_or(key),
                e.msg
            );
            fail(&e.at, &msg)
        })
    };
    let must = |key: &str| -> Result<Expr, PlanError> {
        value(key)?.ok_or_else(|| {
            fail(
                &origin,
                &format!("The {kind:?} step requires: [{key:?}] key(s)"),
            )
        })
    };
    let step_kind = match kind {
        "command" => StepKind::Command {
            command: must("command")?,
            env_vars: value("env_vars")?,
        },
        // `pwsh_params` (checked above) are for PowerShell scripts on a
        // PowerShell shell; on the POSIX shells ferry runs, the script
        // runs without them, as Bolt's bash shell runs it.
        "script" => StepKind::Script {
            script: must("script")?,
            arguments: value("arguments")?,
            env_vars: value("env_vars")?,
        },
        "task" => StepKind::Task {
            task: must("task")?,
            parameters: value("parameters")?,
            noop: value("noop")?,
        },
        "upload" => StepKind::Upload {
            upload: must("upload")?,
            destination: must("destination")?,
        },
        "download" => StepKind::Download {
            download: must("download")?,
            destination: must("destination")?,
        },
        "plan" => StepKind::Plan {
            plan: must("plan")?,
            parameters: value("parameters")?,
        },
        "message" => StepKind::Message {
            message: must("message")?,
        },
        "verbose" => StepKind::Verbose {
            verbose: must("verbose")?,
        },
        "eval" => StepKind::Eval {
            eval: must("eval")?,
        },
        "resources" => StepKind::Resources {
            resources: must("resources")?,
            noop: value("noop")?,
        },
        _ => {
            let Some(Node {
                value: Y::Seq(items),
                ..
            }) = get("parallel")
            else {
                return Err(fail(&origin, "parallel must be a list of steps"));
            };
            let mut steps = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                steps.push(step(ctx, item, i + 1, true)?);
            }
            StepKind::Parallel { steps }
        }
    };
    let description = value("description")?;
    let targets = value("targets")?;
    let catch_errors = value("catch_errors")?;
    let run_as = value("run_as")?;
    Ok(Step {
        name: name.clone(),
        description,
        targets,
        catch_errors,
        run_as,
        kind: step_kind,
        origin,
    })
}

/// Bolt's checks of a `resources` list: each entry a mapping with `type`
/// and `title`, or one `<type>: <title>` key, and optional `parameters`.
/// A list written as code is checked when it runs.
fn check_resources(
    n: &Node,
    fail: &dyn Fn(&Origin, &str) -> PlanError,
    ctx: &Ctx,
) -> Result<(), PlanError> {
    let items = match &n.value {
        Y::Seq(items) => items,
        Y::Str(_) => return Ok(()),
        _ => {
            return Err(fail(
                &ctx.origin(n),
                "resources must be a list of resources",
            ));
        }
    };
    for item in items {
        let at = ctx.origin(item);
        let Y::Map(entries) = &item.value else {
            return Err(fail(&at, "a resource must be a mapping"));
        };
        let keys: Vec<String> = entries.iter().map(|(k, _)| key_text(k)).collect();
        let has = |k: &str| keys.iter().any(|x| x == k);
        if has("type") || has("title") {
            if !has("type") {
                return Err(fail(
                    &at,
                    "Resource declaration must include type key if title key is set",
                ));
            }
            if !has("title") {
                return Err(fail(
                    &at,
                    "Resource declaration must include title key if type key is set",
                ));
            }
        } else {
            let types: Vec<&str> = keys
                .iter()
                .map(String::as_str)
                .filter(|k| *k != "parameters")
                .collect();
            match types.as_slice() {
                [] => return Err(fail(&at, "Resource declaration is missing a type")),
                [_] => {}
                many => {
                    return Err(fail(
                        &at,
                        &format!(
                            "Resource declaration has ambiguous type: could be {}",
                            many.join(" or ")
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Step names: not a parameter's, not repeated; and every variable a
/// value refers to is a parameter or an earlier step's name (the steps of
/// a `parallel` group see only what was defined before the group).
fn check_names(plan: &Plan) -> Result<(), PlanError> {
    let mut defined: Vec<String> = plan.parameters.keys().cloned().collect();
    for (i, step) in plan.steps.iter().enumerate() {
        let inner: Vec<(usize, &Step)> = match &step.kind {
            StepKind::Parallel { steps } => steps.iter().enumerate().collect(),
            _ => vec![(i, step)],
        };
        for (_, s) in &inner {
            check_refs(s, &defined)?;
        }
        for (j, s) in inner {
            if let Some(name) = &s.name {
                if defined.contains(name) {
                    return Err(step_error(
                        &s.origin,
                        Some(name),
                        j + 1,
                        &format!("Duplicate step name or parameter detected: {name:?}"),
                    ));
                }
                defined.push(name.clone());
            }
        }
    }
    if let Some(r) = &plan.returns {
        check_expr(r, &defined)?;
    }
    Ok(())
}

fn check_refs(step: &Step, defined: &[String]) -> Result<(), PlanError> {
    for e in step.exprs() {
        check_expr(e, defined)?;
    }
    Ok(())
}

fn check_expr(e: &Expr, defined: &[String]) -> Result<(), PlanError> {
    let mut refs = Vec::new();
    e.refs(&mut refs);
    for r in refs {
        if !defined.contains(&r.var) {
            return Err(PlanError::at(
                &r.at,
                format!(
                    "Unknown variable: '{}' (not a parameter or an earlier step's name)",
                    r.var
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::run::check_params;

    /// Runs `f` on a thread with the stack of a tokio worker (2 MiB).
    fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(f)
            .unwrap()
            .join()
            .unwrap()
    }

    fn load_text(text: String) -> Result<Plan, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plan.yaml");
        std::fs::write(&path, text).unwrap();
        let shown = path.display().to_string();
        on_small_stack(move || load(&path, "t::plan").map_err(|e| e.to_string()))
            .map_err(|e| e.replace(&shown, "plan.yaml"))
    }

    #[test]
    fn string_styles_decide_what_is_code() {
        let plan = load_text(
            "parameters:\n  m: {default: hi}\nsteps:\n  - name: a\n    eval: $m\n  - name: b\n    eval: '$m'\n  - name: c\n    eval: \"${m} world\"\n  - name: d\n    eval: |\n      $m\n  - name: e\n    eval: >\n      $m\n  - name: f\n    eval: hello $m\n".into(),
        )
        .unwrap();
        let vars = crate::plan::expr::Vars::from([(
            "m".to_string(),
            crate::plan::Val::Data(serde_json::json!("hi")),
        )]);
        let got: Vec<serde_json::Value> = plan
            .steps
            .iter()
            .map(|s| match &s.kind {
                StepKind::Eval { eval } => eval.eval(&vars).unwrap().to_json(),
                _ => panic!("not eval"),
            })
            .collect();
        assert_eq!(
            got,
            serde_json::json!(["hi", "$m", "hi world", "hi", "$m\n", "hello $m"])
                .as_array()
                .unwrap()
                .clone()
        );
    }

    #[test]
    fn code_errors_point_into_the_code() {
        let err = load_text(
            "steps:\n  - name: x_fail\n    task: sample\n    targets: foo\n    parameters:\n      message: |\n        $a = [1,\n        def not_puppet\n".into(),
        )
        .unwrap_err();
        assert!(
            err.starts_with("plan.yaml:")
                && err.contains("Parse error in step \"x_fail\": Error parsing \"message\""),
            "{err}"
        );
        // Code beyond references loads; the engine evaluates it when it runs.
        assert!(load_text("steps:\n  - eval: $x * 2\n".into()).is_ok());
        assert!(load_text("steps:\n  - message: \"a ${x.map |$v| { $v }} b\"\n".into()).is_ok());
        let err = load_text("steps:\n  - eval: $x * \n".into()).unwrap_err();
        assert!(err.starts_with("plan.yaml:2:"), "{err}");
    }

    #[test]
    fn deep_plans_are_errors_with_a_position() {
        let n = 100_000;
        let step = "steps:\n  - task: t::x\n    targets: all\n    parameters:\n";
        for (text, at) in [
            (
                format!("{step}      p: {}\n", "[".repeat(n)),
                "plan.yaml:5:",
            ),
            (
                format!("{step}      p: {}\n", "{a: ".repeat(n)),
                "plan.yaml:5:",
            ),
            (
                format!(
                    "parameters:\n  p:\n    default:\n      {}1\n{step}",
                    "- ".repeat(n)
                ),
                "plan.yaml:4:",
            ),
        ] {
            let err = load_text(text).unwrap_err();
            assert!(
                err.starts_with(at)
                    && err.ends_with("lists and mappings nest deeper than 64 levels"),
                "{err}"
            );
        }
        let mut laughs =
            String::from("steps:\n  - message: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        for (prev, c) in ('a'..='i').zip('b'..='j') {
            laughs.push_str(&format!("  - message: &{c} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
        }
        let err = load_text(laughs).unwrap_err();
        assert!(err.contains("more than 250000 values"), "{err}");
    }

    #[test]
    fn deep_types_and_references_stay_bounded() {
        let ty = format!("{}String{}", "Array[".repeat(10_000), "]".repeat(10_000));
        let text = format!("parameters:\n  p:\n    type: \"{ty}\"\nsteps:\n  - message: $p\n");
        let err = load_text(text).unwrap_err();
        assert!(err.contains("invalid type"), "{err:.300}");
        // A step as deep as a plan may be, referring to a value as deep as
        // a step's JSON result may be: resolved on a small stack.
        let d = 60;
        let text = format!(
            "parameters:\n  deep: {{}}\nsteps:\n  - message: {}$deep{}\n",
            "[".repeat(d),
            "]".repeat(d)
        );
        let plan = load_text(text).unwrap();
        let value: serde_json::Value =
            serde_json::from_str(&format!("{}1{}", "[".repeat(120), "]".repeat(120))).unwrap();
        let resolved = on_small_stack(move || {
            let StepKind::Message { message } = &plan.steps[0].kind else {
                panic!("not a message step")
            };
            let vars = crate::plan::expr::Vars::from([(
                "deep".to_string(),
                crate::plan::Val::Data(value),
            )]);
            message.eval(&vars).map(|v| v.to_json().to_string().len())
        });
        assert_eq!(resolved.unwrap(), 2 * (d + 120) + 1);
        let plan = load_text("parameters:\n  p:\n    type: Integer\nsteps: []\n".into()).unwrap();
        let err = check_params(&plan, serde_json::Map::new()).unwrap_err();
        assert!(
            err.to_string()
                .contains("expects a value for parameter 'p'"),
            "{err}"
        );
    }
}
