//! Bolt's plan functions, as the plan runner implements them: the steps
//! (`run_command`, `run_script`, `run_task`, `run_task_with`,
//! `upload_file`, `download_file`, `write_file`, `wait_until_available`,
//! `apply_prep`; `get_resources` in [`super::resources`]), targets and inventory (`get_targets`, `get_target`,
//! `vars`, `facts`, `set_var`, `add_facts`, `set_feature`,
//! `add_to_group`), control (`catch_errors`, `fail_plan`, `run_plan`,
//! `parallelize`, `background`, `wait`, `without_default_logging`,
//! `ctrl::sleep`, `ctrl::do_until`) and the plan's surroundings
//! (`out::message`, `out::verbose`, `log::*`, the logging functions,
//! `file::read`, `file::exists`, `file::readable`, `file::join`,
//! `system::env`; `prompt` and `prompt::menu` in [`super::prompt`]).
//!
//! A step that fails on any target raises Bolt's `bolt/run-failure`
//! (with the results in its details) unless `_catch_errors => true`;
//! `catch_errors` and `run_plan`'s `_catch_errors` turn such errors (and
//! `fail_plan`'s) back into `Error` values. Evaluation errors are not
//! caught, as in Bolt.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::library::{PlanFn, PlanLibrary};
use crate::lang::error::plain;
use crate::lang::eval::control::{EvalResult, Unwind};
use crate::lang::eval::{ApplyCall, Call, Evaluator};
use crate::lang::values::plan::{
    ErrorValue, Future, FutureSlot, PlanObject, PlanResult, PlanType, ResultKind, Target,
    as_object, value,
};
use crate::lang::values::value::{Value, hash_get_str};
use crate::run::events::{Discard, Sink};
use crate::run::{self, Action};

/// An executor's result as a plan's `Result` (an `ApplyResult` for an
/// apply) of target `t`.
pub fn plan_result(t: Target, r: &crate::run::TargetResult) -> PlanResult {
    let value = match Value::from_json(&r.value()) {
        Value::Hash(h) => h,
        other => vec![(Value::str("_output"), other)],
    };
    PlanResult {
        kind: if r.action == "apply" {
            ResultKind::ApplyResult
        } else {
            ResultKind::Result
        },
        target: t,
        action: r.action.clone(),
        object: Some(r.object.clone()),
        value,
    }
}

/// Bolt's description of a step a plan function runs, for the
/// "Starting:"/"Finished:" lines.
fn step_description(function: &str, object: &str) -> String {
    match function {
        "run_command" => format!("command '{object}'"),
        "run_script" => format!("script {object}"),
        "run_task" | "run_task_with" => format!("task {object}"),
        "upload_file" | "write_file" => format!("file upload from {object}"),
        "download_file" => format!("file download from {object}"),
        other => format!("{other} {object}"),
    }
}

/// The plan function called `name`, if there is one.
pub fn find(name: &str) -> Option<PlanFn> {
    Some(match name {
        "run_command" => run_command,
        "run_script" => run_script,
        "run_task" => run_task,
        "run_task_with" => run_task_with,
        "upload_file" => upload_file,
        "download_file" => download_file,
        "write_file" => write_file,
        "wait_until_available" => wait_until_available,
        "apply_prep" => apply_prep,
        "get_targets" => get_targets,
        "get_target" => get_target,
        "vars" => vars,
        "facts" => facts,
        "set_var" => set_var,
        "set_config" => set_config,
        "add_facts" => add_facts,
        "set_feature" => set_feature,
        "add_to_group" => add_to_group,
        "catch_errors" => catch_errors,
        "fail_plan" => fail_plan,
        "run_plan" => run_plan,
        "parallelize" => parallelize,
        "background" => background,
        "wait" => wait,
        "without_default_logging" => without_default_logging,
        "ctrl::sleep" => sleep,
        "ctrl::do_until" => do_until,
        "out::message" => out_message,
        "out::verbose" => out_verbose,
        "log::trace" | "log::debug" | "log::info" | "log::warn" | "log::error" | "log::fatal"
        | "notice" | "info" | "warning" | "err" | "debug" | "alert" | "crit" | "emerg" => log,
        "file::read" => file_read,
        "file::exists" => file_exists,
        "file::readable" => file_readable,
        "file::join" => file_join,
        "system::env" => system_env,
        "prompt" => super::prompt::prompt,
        "prompt::menu" => super::prompt::menu,
        "puppetdb_query" => super::puppetdb::puppetdb_query,
        "puppetdb_fact" => super::puppetdb::puppetdb_fact,
        "get_resources" => super::resources::get_resources,
        "run_container" => super::container::run_container,
        _ => return None,
    })
}

/// What a plan function called after the plan was stopped gives: an
/// evaluation error (no `catch_errors` takes it), so nothing runs after.
pub(super) fn stopped(c: &Call<'_>) -> Unwind {
    stopped_at(c.loc)
}

/// [`stopped`] at `loc`.
pub(super) fn stopped_at(loc: &crate::lang::error::Loc) -> Unwind {
    Unwind::Error(plain("the plan was stopped").at(loc))
}

/// A Bolt error raised at the call.
pub(super) fn raise(c: &Call<'_>, e: ErrorValue) -> Unwind {
    Unwind::Raise {
        error: Box::new(e),
        loc: c.loc.clone(),
    }
}

/// An argument error, worded as Puppet's.
pub(super) fn arg_error(c: &Call<'_>, param: &str, want: &str, got: &Value) -> Unwind {
    plain(format!(
        "'{}' parameter '{param}' expects {want}, got {}",
        c.name,
        got.type_name()
    ))
    .into()
}

pub(super) fn want_args(c: &Call<'_>, min: usize, max: usize) -> EvalResult<()> {
    let n = c.args.len();
    if n < min || n > max {
        let want = if min == max {
            format!("{min} arguments")
        } else {
            format!("between {min} and {max} arguments")
        };
        return Err(plain(format!("'{}' expects {want}, got {n}", c.name)).into());
    }
    Ok(())
}

fn string_arg(c: &Call<'_>, i: usize, param: &str) -> EvalResult<String> {
    match c.args.get(i) {
        Some(Value::Str(s)) if !s.is_empty() => Ok(s.clone()),
        Some(other) => Err(arg_error(c, param, "a String[1] value", other)),
        None => Err(plain(format!(
            "'{}' expects a value for parameter '{param}'",
            c.name
        ))
        .into()),
    }
}

/// The trailing `[description], [options]` of a step function, from
/// argument `from` on.
fn tail(c: &Call<'_>, from: usize) -> EvalResult<Vec<(Value, Value)>> {
    let mut rest = c.args.iter().skip(from);
    let mut options = Vec::new();
    match (rest.next(), rest.next(), rest.next()) {
        (None, None, None) => {}
        (Some(Value::Str(_)), None, None) | (Some(Value::Undef), None, None) => {}
        (Some(Value::Hash(h)), None, None) => options = h.clone(),
        (Some(Value::Str(_) | Value::Undef), Some(Value::Hash(h)), None) => options = h.clone(),
        (Some(other), ..) => {
            return Err(arg_error(c, "options", "a String or a Hash value", other));
        }
        (None, ..) => {}
    }
    if rest.next().is_some() {
        return Err(plain(format!("'{}' was given too many arguments", c.name)).into());
    }
    Ok(options)
}

/// The metaparameters of a step (`_catch_errors`, `_run_as`, `_noop`).
#[derive(Default)]
struct Meta {
    catch_errors: bool,
    run_as: Option<String>,
    noop: bool,
    /// `_env_vars`: set in the environment of a command or script (given
    /// on its standard input, never on a command line).
    env_vars: Vec<(String, String)>,
}

fn meta(c: &Call<'_>, options: &[(Value, Value)]) -> EvalResult<Meta> {
    let mut m = Meta::default();
    for (k, v) in options {
        match (k.as_str(), v) {
            (Some("_catch_errors"), v) => m.catch_errors = v.truthy(),
            (Some("_run_as"), Value::Str(s)) => m.run_as = Some(s.clone()),
            (Some("_run_as"), other) => return Err(arg_error(c, "_run_as", "a String", other)),
            (Some("_noop"), v) => m.noop = v.truthy(),
            (Some("_env_vars"), Value::Hash(h)) => {
                m.env_vars = h
                    .iter()
                    .map(|(k, v)| {
                        let text = match v {
                            Value::Undef => String::new(),
                            Value::Sensitive(inner) => inner.to_s(),
                            other => other.to_s(),
                        };
                        (k.to_s(), text)
                    })
                    .collect();
            }
            (Some("_env_vars"), other) => {
                return Err(arg_error(c, "_env_vars", "a Hash", other));
            }
            // apply's, checked there.
            (Some("_puppetdb"), _) if c.name == "apply" => {}
            (Some(k), _) if k.starts_with('_') => {
                tracing::warn!("{}: option {k} is not supported by ferry; ignored", c.name);
            }
            _ => {}
        }
    }
    Ok(m)
}

impl PlanLibrary {
    pub(super) fn targets_of(&self, c: &Call<'_>, spec: &Value) -> EvalResult<Vec<Target>> {
        self.state
            .targets(spec)
            .map_err(|e| plain(format!("'{}': {e}", c.name)).into())
    }

    fn sink(&self) -> Arc<dyn Sink> {
        if self.state.quiet() {
            Arc::new(Discard)
        } else {
            (self.sink)()
        }
    }

    /// Runs one action on `targets` through the executor with the plan's
    /// kept connections; the results in the targets' order, as a ResultSet.
    fn execute(
        &self,
        c: &Call<'_>,
        object: &str,
        targets: Vec<Target>,
        action: Action,
        meta: &Meta,
    ) -> EvalResult<Value> {
        let description = step_description(c.name, object);
        let report = self.reporter().filter(|_| !targets.is_empty());
        let names: Vec<String> = targets.iter().map(|t| t.name.clone()).collect();
        if let Some(r) = &report {
            r.step_started(&description, &names);
        }
        let started = std::time::Instant::now();
        let set = self.execute_set(targets, action, meta.run_as.clone(), false)?;
        if let Some(r) = &report {
            let failures = set.iter().filter(|x| !x.ok()).count();
            r.step_finished(&description, failures, started.elapsed());
        }
        self.check(c, object, set, meta.catch_errors)
    }

    /// Where the steps' Starting/Finished lines go, unless default logging
    /// is off.
    pub(super) fn reporter(&self) -> Option<Arc<dyn crate::plan::run::Reporter>> {
        if self.state.quiet() {
            return None;
        }
        self.report.clone()
    }

    /// A task's action with the proxies its remote runs on devices use
    /// (the targets their `network.run-on` names), as YAML plans and the
    /// command line give them.
    fn with_proxies(
        &self,
        action: Action,
        targets: &[crate::inventory::Target],
    ) -> EvalResult<Action> {
        if !matches!(action, Action::Task(_)) {
            return Ok(action);
        }
        let inventory = self
            .state
            .inventory
            .lock()
            .map_err(|_| plain("the plan's inventory is unavailable"))?;
        let proxies = run::actions::task::remote::proxies(&inventory, targets)
            .map_err(|e| plain(e.to_string()))?;
        Ok(action.with_proxies(proxies))
    }

    pub(super) fn execute_set(
        &self,
        targets: Vec<Target>,
        action: Action,
        run_as: Option<String>,
        quiet: bool,
    ) -> EvalResult<Vec<PlanResult>> {
        if targets.is_empty() {
            return Ok(Vec::new());
        }
        let inv: Vec<crate::inventory::Target> = targets
            .iter()
            .filter_map(|t| self.state.inventory_target(t))
            .collect();
        let mut options = self.options.clone();
        if let Some(user) = run_as.or_else(|| self.run_as.lock().ok().and_then(|r| r.clone())) {
            options.overrides.run_as = Some(user);
        }
        crate::transport::check_options(&inv, &options.overrides)
            .map_err(|e| plain(e.to_string()))?;
        let action = self.with_proxies(action, &inv)?;
        let sink = if quiet {
            Arc::new(Discard)
        } else {
            self.sink()
        };
        let summary = self
            .handle
            .block_on(self.stop.or(run::run_on(
                inv,
                action,
                &options,
                sink,
                Some(Arc::clone(&self.conns)),
            )))
            .ok_or_else(|| plain("the plan was stopped"))?;
        let mut results = Vec::new();
        for t in &targets {
            if let Some(r) = summary.results.iter().find(|r| r.target == t.name) {
                results.push(plan_result(t.clone(), r));
            }
        }
        Ok(results)
    }

    /// Runs a different action on each target, all at once, with the
    /// plan's kept connections; results in the targets' order.
    fn execute_many(
        &self,
        runs: Vec<(Target, Action, Option<String>)>,
    ) -> EvalResult<Vec<PlanResult>> {
        let mut futures = Vec::new();
        let mut order = Vec::new();
        for (t, action, run_as) in runs {
            let Some(inv) = self.state.inventory_target(&t) else {
                continue;
            };
            let mut options = self.options.clone();
            if let Some(user) = run_as.or_else(|| self.run_as.lock().ok().and_then(|r| r.clone())) {
                options.overrides.run_as = Some(user);
            }
            crate::transport::check_options(std::slice::from_ref(&inv), &options.overrides)
                .map_err(|e| plain(e.to_string()))?;
            let action = self.with_proxies(action, std::slice::from_ref(&inv))?;
            let sink = self.sink();
            let conns = Arc::clone(&self.conns);
            order.push(t);
            futures.push(async move {
                run::run_on(vec![inv], action, &options, sink, Some(conns)).await
            });
        }
        let summaries = self
            .handle
            .block_on(self.stop.or(futures_util::future::join_all(futures)))
            .ok_or_else(|| plain("the plan was stopped"))?;
        let mut results = Vec::new();
        for (t, summary) in order.into_iter().zip(summaries) {
            for r in summary.results {
                results.push(plan_result(t.clone(), &r));
            }
        }
        Ok(results)
    }

    /// The ResultSet, or Bolt's `bolt/run-failure` when a target failed
    /// and errors are not caught.
    pub(super) fn check(
        &self,
        c: &Call<'_>,
        object: &str,
        results: Vec<PlanResult>,
        catch_errors: bool,
    ) -> EvalResult<Value> {
        let failed = results.iter().filter(|r| !r.ok()).count();
        let set = value(PlanObject::ResultSet(results));
        if failed == 0 || catch_errors {
            return Ok(set);
        }
        let mut e = ErrorValue::new(
            format!(
                "{} '{object}' failed on {failed} target{}",
                c.name,
                if failed == 1 { "" } else { "s" }
            ),
            "bolt/run-failure",
        );
        e.details = vec![
            (Value::str("action"), Value::str(c.name)),
            (Value::str("object"), Value::str(object)),
            (Value::str("result_set"), set),
        ];
        Err(raise(c, e))
    }

    /// A file a plan names: an absolute path, `module/path` under that
    /// module's `files/` on the modulepath, or a path relative to the
    /// current directory.
    fn find_file(&self, name: &str) -> Option<PathBuf> {
        let p = Path::new(name);
        if p.is_absolute() {
            return p.exists().then(|| p.to_path_buf());
        }
        if let Some((module, rest)) = name.split_once('/')
            && !rest.split('/').any(|s| s == "..")
            && crate::task::loader::valid_segment(module)
        {
            let found = self
                .modulepath
                .candidates(module)
                .map(|d| d.join("files").join(rest))
                .find(|p| p.exists());
            if found.is_some() {
                return found;
            }
        }
        p.exists().then(|| p.to_path_buf())
    }
}

/// The action with the step's `_env_vars` in its environment.
fn with_env(action: Action, meta: &Meta) -> Action {
    if meta.env_vars.is_empty() {
        action
    } else {
        Action::Env {
            vars: meta.env_vars.clone(),
            action: Box::new(action),
        }
    }
}

fn run_command(lib: &PlanLibrary, _: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 2, 4)?;
    let command = string_arg(&c, 0, "command")?;
    let targets = lib.targets_of(&c, &c.arg(1))?;
    let meta = meta(&c, &tail(&c, 2)?)?;
    let action = with_env(
        Action::Command {
            line: command.clone(),
        },
        &meta,
    );
    lib.execute(&c, &command, targets, action, &meta)
}

fn run_script(lib: &PlanLibrary, _: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 2, 4)?;
    let script = string_arg(&c, 0, "script")?;
    let targets = lib.targets_of(&c, &c.arg(1))?;
    let options = tail(&c, 2)?;
    let meta = meta(&c, &options)?;
    let path = lib
        .find_file(&script)
        .ok_or_else(|| plain(format!("No such file or directory: {script}")))?;
    let args = match hash_get_str(&options, "arguments") {
        None | Some(Value::Undef) => Vec::new(),
        Some(Value::Array(a)) => a.iter().map(Value::to_s).collect(),
        Some(other) => return Err(arg_error(&c, "arguments", "an Array", other)),
    };
    let action = with_env(Action::Script { path, args }, &meta);
    lib.execute(&c, &script, targets, action, &meta)
}

/// The task parameters a plan passes, as JSON (Sensitive values unwrapped:
/// the task marks its own sensitive parameters).
fn task_params(h: &[(Value, Value)]) -> serde_json::Map<String, serde_json::Value> {
    h.iter()
        .filter(|(k, _)| !k.to_s().starts_with('_'))
        .map(|(k, v)| (k.to_s(), task_json(v)))
        .collect()
}

fn task_json(v: &Value) -> serde_json::Value {
    match v {
        Value::Array(a) => serde_json::Value::Array(a.iter().map(task_json).collect()),
        Value::Hash(h) => {
            serde_json::Value::Object(h.iter().map(|(k, x)| (k.to_s(), task_json(x))).collect())
        }
        Value::Sensitive(inner) => task_json(inner),
        Value::Rich(_) if as_object(v).is_some() => crate::lang::values::plan::to_json(v),
        other => other.to_json().unwrap_or(serde_json::Value::Null),
    }
}

pub(super) fn prepare_task(
    lib: &PlanLibrary,
    name: &str,
    params: &[(Value, Value)],
    noop: bool,
) -> EvalResult<Action> {
    let loader = crate::task::Loader::new(lib.modulepath.clone());
    let task = loader
        .load(name)
        .map_err(|e| Unwind::from(plain(e.to_string())))?;
    let prepared = crate::task::params::prepare(task, task_params(params), noop, &loader)
        .map_err(|e| Unwind::from(plain(e.to_string())))?;
    Ok(Action::Task(Arc::new(prepared)))
}

fn run_task(lib: &PlanLibrary, _: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 2, 4)?;
    let task = string_arg(&c, 0, "task_name")?;
    let targets = lib.targets_of(&c, &c.arg(1))?;
    let params = tail(&c, 2)?;
    let meta = meta(&c, &params)?;
    let action = prepare_task(lib, &task, &params, meta.noop)?;
    lib.execute(&c, &task, targets, action, &meta)
}

/// `run_task_with(task, targets) |$target| { params }`: each target's
/// parameters from the block, one run per target, one ResultSet.
fn run_task_with(lib: &PlanLibrary, ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 2, 4)?;
    let task = string_arg(&c, 0, "task_name")?;
    let targets = lib.targets_of(&c, &c.arg(1))?;
    let meta = meta(&c, &tail(&c, 2)?)?;
    let l = c.block()?;
    let mut results = Vec::new();
    for t in targets {
        let params = match ev.call_lambda(l, vec![value(PlanObject::Target(t.clone()))], c.scope)? {
            Value::Hash(h) => h,
            Value::Undef => Vec::new(),
            other => return Err(arg_error(&c, "block", "a Hash result", &other)),
        };
        let action = prepare_task(lib, &task, &params, meta.noop)?;
        results.extend(lib.execute_set(vec![t], action, meta.run_as.clone(), false)?);
    }
    lib.check(&c, &task, results, meta.catch_errors)
}

fn upload_file(lib: &PlanLibrary, _: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 3, 5)?;
    let source = string_arg(&c, 0, "source")?;
    let dest = string_arg(&c, 1, "destination")?;
    let targets = lib.targets_of(&c, &c.arg(2))?;
    let meta = meta(&c, &tail(&c, 3)?)?;
    let src = lib
        .find_file(&source)
        .ok_or_else(|| plain(format!("No such file or directory: {source}")))?;
    lib.execute(&c, &source, targets, Action::Upload { src, dest }, &meta)
}

fn download_file(lib: &PlanLibrary, _: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 3, 5)?;
    let source = string_arg(&c, 0, "source")?;
    let dest = string_arg(&c, 1, "destination")?;
    if Path::new(&dest).is_absolute() || dest.split('/').any(|s| s == "..") {
        return Err(plain(format!(
            "'download_file' destination '{dest}' must be a relative path inside the downloads directory"
        ))
        .into());
    }
    let targets = lib.targets_of(&c, &c.arg(2))?;
    let meta = meta(&c, &tail(&c, 3)?)?;
    let dest = lib.downloads.join(dest);
    lib.execute(
        &c,
        &source,
        targets,
        Action::Download {
            src: source.clone(),
            dest,
        },
        &meta,
    )
}

fn write_file(lib: &PlanLibrary, _: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 3, 4)?;
    let content = match c.args.first() {
        Some(Value::Str(s)) => s.clone(),
        Some(other) => return Err(arg_error(&c, "content", "a String value", other)),
        None => String::new(),
    };
    let dest = string_arg(&c, 1, "destination")?;
    let targets = lib.targets_of(&c, &c.arg(2))?;
    let meta = meta(&c, &tail(&c, 3)?)?;
    let dir = tempfile::tempdir().map_err(|e| plain(format!("write_file: {e}")))?;
    let name = Path::new(&dest)
        .file_name()
        .map_or_else(|| "content".into(), |n| n.to_os_string());
    let src = dir.path().join(name);
    std::fs::write(&src, content).map_err(|e| plain(format!("write_file: {e}")))?;
    let r = lib.execute(
        &c,
        &dest,
        targets,
        Action::Upload {
            src,
            dest: dest.clone(),
        },
        &meta,
    );
    drop(dir);
    r
}

/// Connects to each target until it answers or `wait_time` (seconds,
/// default 120) passes, trying every `retry_interval` seconds (default 1).
fn wait_until_available(
    lib: &PlanLibrary,
    _: &mut Evaluator<'_>,
    c: Call<'_>,
) -> EvalResult<Value> {
    want_args(&c, 1, 3)?;
    let targets = lib.targets_of(&c, &c.arg(0))?;
    let options = tail(&c, 1)?;
    let meta = meta(&c, &options)?;
    let seconds = |k: &str, d: f64| match hash_get_str(&options, k) {
        Some(Value::Int(i)) => *i as f64,
        Some(Value::Float(f)) => *f,
        _ => d,
    };
    let wait = std::time::Duration::from_secs_f64(seconds("wait_time", 120.0).max(0.0));
    let every = std::time::Duration::from_secs_f64(seconds("retry_interval", 1.0).max(0.01));
    let start = std::time::Instant::now();
    let mut pending = targets;
    let mut done: Vec<PlanResult> = Vec::new();
    loop {
        let results = lib.execute_set(
            pending.clone(),
            Action::Command {
                line: "true".into(),
            },
            None,
            true,
        )?;
        let (ok, bad): (Vec<PlanResult>, Vec<PlanResult>) =
            results.into_iter().partition(PlanResult::ok);
        done.extend(ok.into_iter().map(|mut r| {
            r.action = "wait_until_available".into();
            r.object = None;
            r.value = Vec::new();
            r
        }));
        pending.retain(|t| bad.iter().any(|r| r.target.name == t.name));
        if pending.is_empty() || start.elapsed() >= wait {
            done.extend(bad.into_iter().map(|mut r| {
                r.action = "wait_until_available".into();
                r.object = None;
                r
            }));
            break;
        }
        lib.stop.sleep(&lib.handle, every);
    }
    lib.check(&c, "wait_until_available", done, meta.catch_errors)
        .map_err(|u| match u {
            Unwind::Raise { mut error, loc } => {
                error.msg = format!(
                    "wait_until_available timed out on {} target{}",
                    pending.len(),
                    if pending.len() == 1 { "" } else { "s" }
                );
                Unwind::Raise { error, loc }
            }
            other => other,
        })
}

/// Gathers facts with the built-in facts task and adds them to each
/// target (nothing needs installing: ferry applies without an agent).
fn apply_prep(lib: &PlanLibrary, _: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 1, 2)?;
    let targets = lib.targets_of(&c, &c.arg(0))?;
    let meta = meta(&c, &tail(&c, 1)?)?;
    for t in &targets {
        let hook = lib
            .state
            .inventory_target(t)
            .and_then(|i| i.plugin_hooks.get("puppet_library").cloned());
        if let Some(hook) = hook {
            let plugin = hook
                .get("plugin")
                .or_else(|| hook.get("_plugin"))
                .and_then(serde_json::Value::as_str)
                .unwrap_or("?");
            tracing::info!(
                "apply_prep: {}: plugin_hooks.puppet_library ({plugin}) is not run: ferry applies catalogs without a Puppet agent, so nothing is installed",
                t.name
            );
        }
    }
    let action = prepare_task(lib, "ferry::facts", &[], false)?;
    let results = lib.execute_set(targets, action, meta.run_as.clone(), false)?;
    for r in &results {
        if r.ok() {
            let facts: Vec<(Value, Value)> = r
                .value
                .iter()
                .filter(|(k, _)| !k.to_s().starts_with('_'))
                .cloned()
                .collect();
            r.target.update(|i| {
                for (k, v) in facts {
                    crate::lang::values::value::hash_set(&mut i.facts, k, v);
                }
            });
        }
    }
    lib.check(&c, "apply_prep", results, meta.catch_errors)
}

fn get_targets(lib: &PlanLibrary, _: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 1, 1)?;
    let targets = lib.targets_of(&c, &c.arg(0))?;
    Ok(Value::Array(
        targets
            .into_iter()
            .map(|t| value(PlanObject::Target(t)))
            .collect(),
    ))
}

fn get_target(lib: &PlanLibrary, _: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 1, 1)?;
    let mut targets = lib.targets_of(&c, &c.arg(0))?;
    if targets.len() != 1 {
        return Err(plain(format!(
            "'get_target' expects a single Target, got {}",
            targets.len()
        ))
        .into());
    }
    Ok(targets
        .pop()
        .map_or(Value::Undef, |t| value(PlanObject::Target(t))))
}

/// The one target argument `i` of a function.
fn target_arg(lib: &PlanLibrary, c: &Call<'_>, i: usize) -> EvalResult<Target> {
    let v = c.arg(i);
    match as_object(&v) {
        Some(PlanObject::Target(t)) => Ok(t.clone()),
        _ => match lib.targets_of(c, &v)?.pop() {
            Some(t) if matches!(v, Value::Str(_)) => Ok(t),
            _ => Err(arg_error(c, "target", "a Target value", &v)),
        },
    }
}

fn vars(lib: &PlanLibrary, _: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 1, 1)?;
    Ok(Value::Hash(target_arg(lib, &c, 0)?.snapshot().vars))
}

fn facts(lib: &PlanLibrary, _: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 1, 1)?;
    Ok(Value::Hash(target_arg(lib, &c, 0)?.snapshot().facts))
}

fn set_var(lib: &PlanLibrary, _: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 3, 3)?;
    let t = target_arg(lib, &c, 0)?;
    let key = string_arg(&c, 1, "key")?;
    let v = c.arg(2);
    t.update(|i| crate::lang::values::value::hash_set(&mut i.vars, Value::Str(key), v));
    Ok(value(PlanObject::Target(t)))
}

/// `set_config($target, 'ssh', {...})` or `set_config($target, ['ssh',
/// 'user'], 'root')`: the target's transport options for the rest of the
/// plan (a hash given for a section sets each of its keys).
fn set_config(lib: &PlanLibrary, _: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 3, 3)?;
    let t = target_arg(lib, &c, 0)?;
    let path: Vec<String> = match c.arg(1) {
        Value::Str(s) if !s.is_empty() => vec![s],
        Value::Array(a) if !a.is_empty() && a.iter().all(|k| matches!(k, Value::Str(_))) => {
            a.iter().map(Value::to_s).collect()
        }
        other => {
            return Err(arg_error(
                &c,
                "key_or_key_path",
                "a String or an Array of Strings",
                &other,
            ));
        }
    };
    let v = c.arg(2);
    let json = match &v {
        Value::Sensitive(inner) => inner.to_json(),
        other => other.to_json(),
    }
    .ok_or_else(|| arg_error(&c, "value", "data (not a plan object)", &v))?;
    let mut settings = Vec::new();
    match (path.as_slice(), json) {
        ([section], serde_json::Value::Object(m)) if section != "transport" => {
            for (k, v) in m {
                settings.push((format!("{section}.{k}"), v));
            }
        }
        ([one], v) => settings.push((one.clone(), v)),
        ([section, rest @ ..], v) => settings.push((format!("{section}.{}", rest.join(".")), v)),
        ([], _) => {}
    }
    lib.state.set_config(&t, &settings);
    Ok(value(PlanObject::Target(t)))
}

fn add_facts(lib: &PlanLibrary, _: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 2, 2)?;
    let t = target_arg(lib, &c, 0)?;
    let Value::Hash(new) = c.arg(1) else {
        return Err(arg_error(&c, "facts", "a Hash value", &c.arg(1)));
    };
    t.update(|i| {
        for (k, v) in new {
            let merged = match (hash_get_str(&i.facts, &k.to_s()), v) {
                (Some(Value::Hash(old)), Value::Hash(add)) => Value::Hash(deep_merge(old, &add)),
                (_, v) => v,
            };
            crate::lang::values::value::hash_set(&mut i.facts, k, merged);
        }
    });
    Ok(value(PlanObject::Target(t)))
}

fn deep_merge(a: &[(Value, Value)], b: &[(Value, Value)]) -> Vec<(Value, Value)> {
    let mut out = a.to_vec();
    for (k, v) in b {
        let merged = match (hash_get_str(&out, &k.to_s()), v) {
            (Some(Value::Hash(x)), Value::Hash(y)) => Value::Hash(deep_merge(x, y)),
            _ => v.clone(),
        };
        crate::lang::values::value::hash_set(&mut out, k.clone(), merged);
    }
    out
}

fn set_feature(lib: &PlanLibrary, _: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 2, 3)?;
    let t = target_arg(lib, &c, 0)?;
    let feature = string_arg(&c, 1, "feature")?;
    let on = c.args.get(2).is_none_or(Value::truthy);
    t.update(|i| {
        i.features.retain(|f| f != &feature);
        if on {
            i.features.push(feature);
            i.features.sort();
        }
    });
    Ok(value(PlanObject::Target(t)))
}

fn add_to_group(lib: &PlanLibrary, _: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 2, 2)?;
    let targets = lib.targets_of(&c, &c.arg(0))?;
    let group = string_arg(&c, 1, "group")?;
    lib.state.add_to_group(&targets, &group);
    Ok(Value::Array(
        targets
            .into_iter()
            .map(|t| value(PlanObject::Target(t)))
            .collect(),
    ))
}

fn catch_errors(_: &PlanLibrary, ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 0, 1)?;
    let kinds: Option<Vec<String>> = match c.args.first() {
        None | Some(Value::Undef) => None,
        Some(Value::Array(a)) => Some(a.iter().map(Value::to_s).collect()),
        Some(other) => return Err(arg_error(&c, "error_types", "an Array[String[1]]", other)),
    };
    let l = c.block()?;
    match ev.call_lambda(l, Vec::new(), c.scope) {
        Err(Unwind::Raise { error, loc })
            if kinds
                .as_ref()
                .is_none_or(|k| error.kind.as_ref().is_some_and(|e| k.contains(e))) =>
        {
            let _ = loc;
            Ok(value(PlanObject::Error(*error)))
        }
        other => other,
    }
}

fn fail_plan(_: &PlanLibrary, _: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 1, 4)?;
    if let Some(PlanObject::Error(e)) = c.args.first().and_then(as_object) {
        return Err(raise(&c, e.clone()));
    }
    let msg = string_arg(&c, 0, "msg")?;
    let mut e = ErrorValue::new(msg, "bolt/plan-failure");
    if let Some(Value::Str(k)) = c.args.get(1) {
        e.kind = Some(k.clone());
    }
    if let Some(Value::Hash(d)) = c.args.get(2) {
        e.details = d.clone();
    }
    if let Some(Value::Str(code)) = c.args.get(3) {
        e.issue_code = Some(code.clone());
    }
    Err(raise(&c, e))
}

fn run_plan(lib: &PlanLibrary, ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 1, 3)?;
    let name = string_arg(&c, 0, "plan_name")?;
    let (targets, given) = match (c.args.get(1), c.args.get(2)) {
        (None, _) => (None, Vec::new()),
        (Some(Value::Hash(h)), None) => (None, h.clone()),
        (Some(t), None) => (Some(t.clone()), Vec::new()),
        (Some(t), Some(Value::Hash(h))) => (Some(t.clone()), h.clone()),
        (Some(_), Some(other)) => return Err(arg_error(&c, "args", "a Hash value", other)),
    };
    let mut params: Vec<(String, Value)> = Vec::new();
    let mut options = Vec::new();
    for (k, v) in given {
        let k = k.to_s();
        if k.starts_with('_') {
            options.push((Value::Str(k), v));
        } else {
            params.push((k, v));
        }
    }
    let meta = meta(&c, &options)?;
    let def = match ev.find_plan(&name) {
        Ok(Some(d)) => d,
        Ok(None) => {
            return Err(raise(
                &c,
                ErrorValue::new(
                    format!(
                        "Could not find a plan named '{name}'. For a list of available plans, run 'ferry plan show'."
                    ),
                    "bolt/unknown-plan",
                ),
            ));
        }
        Err(e) => return Err(e.into()),
    };
    if let Some(t) = targets {
        if params.iter().any(|(k, _)| k == "targets") {
            return Err(plain(format!(
                "'run_plan' was given targets both as an argument and as the plan's 'targets' parameter for {name}"
            ))
            .into());
        }
        params.push(("targets".into(), t));
    }
    let saved = meta
        .run_as
        .clone()
        .and_then(|r| lib.run_as.lock().ok().map(|mut cur| cur.replace(r)));
    let r = ev.run_plan(&def, params, c.loc);
    if saved.is_some()
        && let Ok(mut cur) = lib.run_as.lock()
    {
        *cur = saved.flatten();
    }
    match r {
        Ok(v) if !PlanType::PlanResult.is_instance(&v) => Err(raise(
            &c,
            ErrorValue::new(
                format!("Plan {name} returned an invalid result: {}", v.to_s()),
                "bolt/invalid-plan-result",
            ),
        )),
        Err(Unwind::Raise { error, .. }) if meta.catch_errors => {
            Ok(value(PlanObject::Error(*error)))
        }
        other => other,
    }
}

/// How one block of `parallelize` or `background` ended: a value, or a
/// Bolt error (evaluation errors end the plan at once).
fn block_outcome(r: EvalResult<Value>) -> EvalResult<Result<Value, ErrorValue>> {
    match r {
        Ok(v) | Err(Unwind::Return { value: v, .. }) | Err(Unwind::Next { value: v, .. }) => {
            Ok(Ok(v))
        }
        Err(Unwind::Raise { error, .. }) => Ok(Err(*error)),
        Err(other) => Err(other),
    }
}

/// The values of finished blocks, or `bolt/parallel-failure` when some
/// raised and errors are not caught.
fn gather(
    c: &Call<'_>,
    outcomes: Vec<Result<Value, ErrorValue>>,
    catch_errors: bool,
) -> EvalResult<Value> {
    let failed: Vec<i64> = outcomes
        .iter()
        .enumerate()
        .filter(|(_, o)| o.is_err())
        .map(|(i, _)| i as i64)
        .collect();
    let values: Vec<Value> = outcomes
        .into_iter()
        .map(|o| o.unwrap_or_else(|e| value(PlanObject::Error(e))))
        .collect();
    if failed.is_empty() || catch_errors {
        return Ok(Value::Array(values));
    }
    let mut e = ErrorValue::new(
        format!(
            "parallel block failed on {} target{}",
            failed.len(),
            if failed.len() == 1 { "" } else { "s" }
        ),
        "bolt/parallel-failure",
    );
    e.details = vec![
        (Value::str("action"), Value::str("parallelize")),
        (
            Value::str("failed_indices"),
            Value::Array(failed.into_iter().map(Value::Int).collect()),
        ),
        (Value::str("results"), Value::Array(values)),
    ];
    Err(raise(c, e))
}

/// The variables a block sees where it is written, to bind on another
/// evaluator (numbered match variables left out).
fn block_vars(ev: &Evaluator<'_>, c: &Call<'_>) -> Vec<(String, Value)> {
    ev.visible_vars(c.scope)
        .into_iter()
        .filter(|(k, _)| !k.chars().all(|ch| ch.is_ascii_digit()))
        .collect()
}

/// Runs `l` on an evaluator of its own on the current thread, with the
/// plan's library (its targets, connections and futures).
fn run_block(
    lib: &PlanLibrary,
    l: &crate::lang::syntax::ast::Lambda,
    args: Vec<Value>,
    vars: Vec<(String, Value)>,
) -> EvalResult<Result<Value, ErrorValue>> {
    let loader = crate::lang::loader::FsLoader;
    let mut ev = Evaluator::new(
        &loader,
        lib.modulepath.clone(),
        None,
        "localhost",
        &serde_json::Map::new(),
        lib,
    );
    block_outcome(ev.call_lambda_with(l, args, vars))
}

/// `parallelize($items) |$item| { ... }`: each item's block on a thread
/// of its own (with the compiler's stack and an evaluator of its own, the
/// plan's connections shared), all at once; the values in the items'
/// order, or Bolt's `bolt/parallel-failure`.
fn parallelize(lib: &PlanLibrary, ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 1, 1)?;
    let Value::Array(items) = c.arg(0) else {
        return Err(arg_error(&c, "data", "an Array value", &c.arg(0)));
    };
    let l = c.block()?;
    let vars = block_vars(ev, &c);
    let joined: Vec<EvalResult<Result<Value, ErrorValue>>> = std::thread::scope(|s| {
        let handles: Vec<_> = items
            .into_iter()
            .map(|item| {
                let vars = vars.clone();
                std::thread::Builder::new()
                    .name("ferry-plan-parallel".into())
                    .stack_size(super::PLAN_STACK)
                    .spawn_scoped(s, move || run_block(lib, l, vec![item], vars))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h
                    .join()
                    .unwrap_or_else(|_| Err(plain("a parallelize block panicked").into())),
                Err(e) => Err(plain(format!("parallelize: could not start a thread: {e}")).into()),
            })
            .collect()
    });
    let mut outcomes = Vec::new();
    for o in joined {
        outcomes.push(o?);
    }
    gather(&c, outcomes, false)
}

/// `background(name) { ... }`: the block on a thread of its own (an
/// evaluator of its own, the plan's variables as they are now, the
/// plan's connections shared), at once; a Future that `wait` joins.
fn background(lib: &PlanLibrary, ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 0, 1)?;
    let l = c.block()?;
    let id = lib.state.future_id();
    let name = match c.args.first() {
        Some(Value::Str(s)) => s.clone(),
        _ => format!("Future {id}"),
    };
    let slot = Arc::new(FutureSlot::default());
    let vars = block_vars(ev, &c);
    let me = lib.me.get().and_then(std::sync::Weak::upgrade);
    let started = me.and_then(|shared| {
        let lambda = l.clone();
        let done = Arc::clone(&slot);
        std::thread::Builder::new()
            .name("ferry-plan-background".into())
            .stack_size(super::PLAN_STACK)
            .spawn(move || {
                let outcome = match run_block(&shared, &lambda, Vec::new(), vars) {
                    Ok(o) => o,
                    Err(u) => Err(super::pal_error(&u.into_error())),
                };
                done.set(outcome);
            })
            .ok()
    });
    if started.is_none() {
        // No thread: the block runs now, as it would have.
        let outcome = block_outcome(ev.call_lambda(l, Vec::new(), c.scope))?;
        slot.set(outcome);
    }
    let f = Future {
        id,
        name,
        outcome: slot,
    };
    if let Ok(mut all) = lib.state.futures.lock() {
        all.push(f.clone());
    }
    Ok(value(PlanObject::Future(f)))
}

fn wait(lib: &PlanLibrary, _: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 0, 3)?;
    let mut futures: Option<Vec<Future>> = None;
    let mut options = Vec::new();
    let mut timeout = None;
    for a in &c.args {
        match (a, as_object(a)) {
            (_, Some(PlanObject::Future(f))) => {
                futures.get_or_insert_with(Vec::new).push(f.clone())
            }
            (Value::Array(items), _) => {
                let list = futures.get_or_insert_with(Vec::new);
                for i in items {
                    match as_object(i) {
                        Some(PlanObject::Future(f)) => list.push(f.clone()),
                        _ => return Err(arg_error(&c, "futures", "an Array[Future]", i)),
                    }
                }
            }
            (Value::Hash(h), _) => options = h.clone(),
            (Value::Int(_) | Value::Float(_), _) => timeout = Some(seconds(&c, a, "timeout")?),
            (other, _) => {
                return Err(arg_error(
                    &c,
                    "futures",
                    "a Future or an Array[Future]",
                    other,
                ));
            }
        }
    }
    let futures = match futures {
        Some(f) => f,
        None => lib
            .state
            .futures
            .lock()
            .map(|f| f.clone())
            .unwrap_or_default(),
    };
    let meta = meta(&c, &options)?;
    let deadline = timeout.map(|t| std::time::Instant::now() + t);
    let mut outcomes = Vec::new();
    for f in &futures {
        let left = deadline.map(|d| d.saturating_duration_since(std::time::Instant::now()));
        match f.outcome.wait(left) {
            Some(o) => outcomes.push(o),
            None => {
                let secs = timeout.map_or(0.0, |t| t.as_secs_f64());
                let mut e = ErrorValue::new(
                    format!("Future '{}' timed out after {secs} seconds.", f.name),
                    "bolt/future-timeout-error",
                );
                e.details = vec![(Value::str("future"), Value::str(f.name.clone()))];
                if meta.catch_errors {
                    outcomes.push(Err(e));
                } else {
                    return Err(raise(&c, e));
                }
            }
        }
    }
    gather(&c, outcomes, meta.catch_errors)
}

fn without_default_logging(
    lib: &PlanLibrary,
    ev: &mut Evaluator<'_>,
    c: Call<'_>,
) -> EvalResult<Value> {
    want_args(&c, 0, 0)?;
    let l = c.block()?;
    if let Ok(mut q) = lib.state.quiet.lock() {
        *q += 1;
    }
    let r = ev.call_lambda(l, Vec::new(), c.scope);
    if let Ok(mut q) = lib.state.quiet.lock() {
        *q = q.saturating_sub(1);
    }
    r
}

fn seconds(c: &Call<'_>, v: &Value, param: &str) -> EvalResult<std::time::Duration> {
    let s = match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        other => return Err(arg_error(c, param, "a Numeric value", other)),
    };
    Ok(std::time::Duration::from_secs_f64(s.clamp(0.0, 1e9)))
}

fn sleep(lib: &PlanLibrary, _: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 1, 1)?;
    if !lib
        .stop
        .sleep(&lib.handle, seconds(&c, &c.arg(0), "period")?)
    {
        return Err(stopped(&c));
    }
    Ok(Value::Undef)
}

/// `ctrl::do_until({limit => N, interval => S}) || { ... }`: the block
/// again until it returns a true value or the limit is reached; its last value.
fn do_until(lib: &PlanLibrary, ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 0, 1)?;
    let options = match c.args.first() {
        Some(Value::Hash(h)) => h.clone(),
        None => Vec::new(),
        Some(other) => return Err(arg_error(&c, "options", "a Hash value", other)),
    };
    let limit = match hash_get_str(&options, "limit") {
        Some(Value::Int(i)) => *i,
        _ => 0,
    };
    let interval = match hash_get_str(&options, "interval") {
        Some(v) => Some(seconds(&c, v, "interval")?),
        None => None,
    };
    let l = c.block()?;
    let mut i = 0;
    loop {
        let x = ev.call_lambda(l, Vec::new(), c.scope)?;
        if x.truthy() {
            return Ok(x);
        }
        i += 1;
        if limit != 0 && i >= limit {
            return Ok(x);
        }
        if let Some(d) = interval
            && !lib.stop.sleep(&lib.handle, d)
        {
            return Err(stopped(&c));
        }
    }
}

fn out_message(lib: &PlanLibrary, _: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 1, 1)?;
    (lib.message)(&crate::lang::values::plan::display(&c.arg(0)));
    Ok(Value::Undef)
}

fn out_verbose(_: &PlanLibrary, _: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 1, 1)?;
    tracing::info!("{}", crate::lang::values::plan::display(&c.arg(0)));
    Ok(Value::Undef)
}

/// `log::*` and Puppet's logging functions: warnings and errors on
/// standard error, the rest in the log (`RUST_LOG`).
fn log(_: &PlanLibrary, _: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let text = c
        .args
        .iter()
        .map(crate::lang::values::plan::display)
        .collect::<Vec<_>>()
        .join(" ");
    match c.name.trim_start_matches("log::") {
        "warn" | "warning" => eprintln!("Warning: {text}"),
        "error" | "err" | "fatal" | "alert" | "crit" | "emerg" => eprintln!("Error: {text}"),
        "info" | "notice" => tracing::info!("{text}"),
        _ => tracing::debug!("{text}"),
    }
    Ok(Value::Undef)
}

fn file_read(lib: &PlanLibrary, _: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 1, 1)?;
    let name = string_arg(&c, 0, "filename")?;
    let path = lib
        .find_file(&name)
        .ok_or_else(|| plain(format!("No such file or directory: {name}")))?;
    std::fs::read_to_string(&path)
        .map(Value::Str)
        .map_err(|e| plain(format!("'file::read' {name}: {e}")).into())
}

fn file_exists(lib: &PlanLibrary, _: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 1, 1)?;
    let name = string_arg(&c, 0, "filename")?;
    Ok(Value::Bool(lib.find_file(&name).is_some()))
}

fn file_readable(lib: &PlanLibrary, _: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 1, 1)?;
    let name = string_arg(&c, 0, "filename")?;
    Ok(Value::Bool(lib.find_file(&name).is_some_and(|p| {
        if p.is_dir() {
            std::fs::read_dir(&p).is_ok()
        } else {
            std::fs::File::open(&p).is_ok()
        }
    })))
}

fn file_join(_: &PlanLibrary, _: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    if c.args.is_empty() {
        return Err(plain("'file::join' expects at least 1 argument, got 0").into());
    }
    let mut out = String::new();
    for (i, a) in c.args.iter().enumerate() {
        let s = a.to_s();
        if i > 0 && !out.ends_with('/') {
            out.push('/');
        }
        out.push_str(if i > 0 { s.trim_start_matches('/') } else { &s });
    }
    Ok(Value::Str(out))
}

fn system_env(_: &PlanLibrary, _: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    want_args(&c, 1, 1)?;
    let name = string_arg(&c, 0, "name")?;
    Ok(std::env::var(&name).map_or(Value::Undef, Value::Str))
}

/// apply's `_puppetdb`: a named instance of the project's
/// `puppetdb-instances`, which must be configured (Bolt's error). ferry's
/// compile queries no PuppetDB, so the instance is only checked.
fn apply_puppetdb(c: &Call<'_>, options: &[(Value, Value)]) -> EvalResult<()> {
    match hash_get_str(options, "_puppetdb") {
        None | Some(Value::Undef) => Ok(()),
        Some(Value::Str(name)) => match crate::query::puppetdb::named(Some(name)) {
            Some(Err(e @ crate::query::PuppetDbError::UnknownInstance(_))) => Err(raise(
                c,
                ErrorValue::new(e.to_string(), "bolt/puppetdb-error"),
            )),
            _ => Ok(()),
        },
        Some(other) => Err(arg_error(c, "_puppetdb", "a String", other)),
    }
}

/// `apply($targets, options) { ... }`: the block compiled into a catalog
/// per target (its facts, its vars and the plan's variables in the top
/// scope), each applied on its target through the executor, all at once.
/// Gives a ResultSet of ApplyResults; a failed target raises Bolt's
/// `bolt/apply-failure` unless `_catch_errors`.
pub fn apply_block(
    lib: &PlanLibrary,
    ev: &mut Evaluator<'_>,
    call: ApplyCall<'_>,
) -> EvalResult<Value> {
    let c = Call {
        written: "apply",
        name: "apply",
        args: call.args.clone(),
        lambda: None,
        scope: call.scope,
        loc: call.loc,
    };
    want_args(&c, 1, 2)?;
    let targets = lib.targets_of(&c, &c.arg(0))?;
    let options = match c.args.get(1) {
        Some(Value::Hash(h)) => h.clone(),
        None | Some(Value::Undef) => Vec::new(),
        Some(other) => return Err(arg_error(&c, "options", "a Hash value", other)),
    };
    let meta = meta(&c, &options)?;
    apply_puppetdb(&c, &options)?;
    let plan_vars: Vec<(String, Value)> = ev
        .visible_vars(call.scope)
        .into_iter()
        .filter(|(k, _)| !k.chars().all(|ch| ch.is_ascii_digit()))
        .collect();
    let mut jobs = Vec::new();
    let mut results = Vec::new();
    for t in targets {
        let info = t.snapshot();
        let facts: serde_json::Map<String, serde_json::Value> = info
            .facts
            .iter()
            .map(|(k, v)| (k.to_s(), v.to_json().unwrap_or(serde_json::Value::Null)))
            .collect();
        let mut vars = plan_vars.clone();
        vars.extend(info.vars.iter().map(|(k, v)| (k.to_s(), v.clone())));
        match crate::catalog::compile_statements(
            call.body,
            lib.modulepath.clone(),
            &t.name,
            &facts,
            vars,
            info.transport == "network",
        ) {
            Ok(catalog) => {
                let job = crate::run::actions::apply::ApplyJob {
                    source: crate::run::actions::apply::CatalogSource::Fixed(Arc::new(
                        crate::apply::ApplyCatalog::from_compiled(catalog),
                    )),
                    options: crate::apply::ApplyOptions {
                        noop: meta.noop,
                        ..Default::default()
                    },
                    modulepath: lib.modulepath.clone(),
                    prepared: Default::default(),
                    observer: None,
                };
                jobs.push((t, Action::Apply(Arc::new(job))));
            }
            Err(e) => {
                let mut err = ErrorValue::new(
                    format!("Apply failed to compile for {}: {}", t.name, e.error),
                    "bolt/apply-error",
                );
                err.details = Vec::new();
                results.push(PlanResult {
                    kind: ResultKind::ApplyResult,
                    target: t.clone(),
                    action: "apply".into(),
                    object: None,
                    value: vec![(Value::str("_error"), err.to_hash())],
                });
            }
        }
    }
    let runs: Vec<_> = jobs
        .into_iter()
        .map(|(t, action)| {
            let run_as = meta.run_as.clone();
            (t, action, run_as)
        })
        .collect();
    let report = lib
        .reporter()
        .filter(|_| !runs.is_empty() || !results.is_empty());
    let names: Vec<String> = runs
        .iter()
        .map(|(t, _, _)| t.name.clone())
        .chain(results.iter().map(|r| r.target.name.clone()))
        .collect();
    if let Some(r) = &report {
        r.step_started("apply catalog", &names);
    }
    let started = std::time::Instant::now();
    results.extend(lib.execute_many(runs)?);
    let failed = results.iter().filter(|r| !r.ok()).count();
    if let Some(r) = &report {
        r.step_finished("apply catalog", failed, started.elapsed());
    }
    let set = value(PlanObject::ResultSet(results));
    if failed == 0 || meta.catch_errors {
        return Ok(set);
    }
    let mut e = ErrorValue::new(
        format!(
            "apply 'catalog' failed on {failed} target{}",
            if failed == 1 { "" } else { "s" }
        ),
        "bolt/apply-failure",
    );
    e.details = vec![
        (Value::str("action"), Value::str("apply")),
        (Value::str("object"), Value::str("catalog")),
        (Value::str("result_set"), set),
    ];
    Err(raise(&c, e))
}
