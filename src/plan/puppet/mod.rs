//! Bolt plans in the Puppet language: `<module>/plans/*.pp` holding
//! `plan mod::name(TargetSpec $targets, String $x = 'd') { ... }`, run by
//! ferry's own evaluator (`lang`) with Bolt's plan functions.
//!
//! The evaluator knows plans, the plan data types and their methods, but
//! does no I/O; the functions that do (`run_command`, `run_task`,
//! `upload_file`, `get_targets`, `catch_errors`, `out::message`...) live
//! here, in [`library`], a [`Library`](crate::lang::eval::Library) that
//! answers them first and hands every other function to the built-in
//! registry. They run steps through the shared executor with one kept
//! connection per target for the whole plan (nested plans included).
//!
//! The evaluator is synchronous and runs on a thread of its own with the
//! compiler's stack; a step blocks that thread on the async executor
//! (`Handle::block_on`) while the runtime's workers do the I/O.
//!
//! [`find`] and [`list`] locate plans, [`show`] describes one's parameters,
//! [`run`] runs one and gives Bolt's result: the plan's return value, or
//! its error (`{kind, msg, details}`, with file, line and column).

mod container;
mod functions;
mod library;
mod prompt;
mod puppetdb;
mod resources;
mod state;
pub use state::PlanState;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value as J, json};

use crate::inventory::Inventory;
use crate::lang::error::{ErrorKind, LangError};
use crate::lang::eval::Evaluator;
use crate::lang::eval::control::Unwind;
use crate::lang::eval::plans::{plan_file, plan_name_for};
use crate::lang::loader::FsLoader;
use crate::lang::modulepath::Modulepath;
use crate::lang::values::plan::{ErrorValue, to_json};
use crate::lang::values::value::Value;
use crate::plan::Failure;
use crate::plan::expr::{Code, Val, Vars};
use crate::plan::run::Reporter;
use crate::query::NodeFacts;
use crate::run::events::Sink;
use crate::run::{Connections, RunOptions, Stop};

/// Stack size of the thread a plan is evaluated on (as the compiler's).
pub(crate) const PLAN_STACK: usize = 64 * 1024 * 1024;

/// Why a plan could not be listed or described.
#[derive(Debug, thiserror::Error)]
pub enum PuppetPlanError {
    /// The plan file does not parse, or does not define the plan.
    #[error("{0}")]
    Load(String),
    #[error(
        "Could not find a plan named '{0}'. For a list of available plans, run 'ferry plan show'."
    )]
    NotFound(String),
    #[error("could not start the plan's thread: {0}")]
    Thread(String),
}

/// The `.pp` file of plan `name` on the modulepath, if there is one.
pub fn find(name: &str, modulepath: &Modulepath) -> Option<PathBuf> {
    plan_file(&FsLoader, modulepath, name.trim_start_matches("::"))
}

/// Every `.pp` plan on the modulepath: (name, file), sorted by name; the
/// first module of a name on the modulepath wins.
pub fn list(modulepath: &Modulepath) -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = Vec::new();
    for (module, m) in modulepath.modules() {
        if out
            .iter()
            .any(|(n, _)| n.split("::").next() == Some(module.as_str()))
        {
            continue;
        }
        let plans = m.join("plans");
        let mut files = Vec::new();
        collect_pp(&plans, &mut files, 0);
        for f in files {
            let Ok(rel) = f.strip_prefix(&plans) else {
                continue;
            };
            if let Some(name) = plan_name_for(&module, rel) {
                out.push((name, f));
            }
        }
    }
    out.sort();
    out
}

fn collect_pp(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) {
    if depth > 8 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect_pp(&p, out, depth + 1);
        } else if p.extension().is_some_and(|e| e == "pp") {
            out.push(p);
        }
    }
}

/// One parameter of a plan, as `plan show` describes it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ParamInfo {
    #[serde(rename = "type")]
    pub ty: String,
    /// Whether the type is `Sensitive[...]`.
    pub sensitive: bool,
    /// The default as Puppet writes the value (`'d'`, `[1, 2]`), when it
    /// is a constant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_value: Option<String>,
}

/// A plan's name, file and parameters (in declaration order).
#[derive(Debug, Clone)]
pub struct PlanInfo {
    pub name: String,
    pub file: PathBuf,
    pub parameters: Vec<(String, ParamInfo)>,
}

/// Loads plan `name` and describes its parameters.
pub fn show(name: &str, modulepath: &Modulepath) -> Result<PlanInfo, PuppetPlanError> {
    let name = name.trim_start_matches("::").to_string();
    let mp = modulepath.clone();
    let work = move || -> Result<PlanInfo, PuppetPlanError> {
        let loader = FsLoader;
        let file = plan_file(&loader, &mp, &name)
            .ok_or_else(|| PuppetPlanError::NotFound(name.clone()))?;
        let mut ev = Evaluator::new(
            &loader,
            mp.clone(),
            None,
            "localhost",
            &Map::new(),
            crate::lang::functions::registry(),
        );
        let def = ev
            .find_plan(&name)
            .map_err(|e| PuppetPlanError::Load(e.to_string()))?
            .ok_or_else(|| PuppetPlanError::NotFound(name.clone()))?;
        let mut parameters = Vec::new();
        for p in &def.params {
            let ty = match &p.ty {
                Some(t) => match ev.constant(t) {
                    Some(Value::Type(t)) => t.to_string(),
                    _ => "Any".into(),
                },
                None => "Any".into(),
            };
            let default_value = p
                .default
                .as_ref()
                .and_then(|d| ev.constant(d))
                .map(|v| v.to_inspect(true));
            let sensitive = ty.starts_with("Sensitive");
            parameters.push((
                p.name.clone(),
                ParamInfo {
                    ty,
                    sensitive,
                    default_value,
                },
            ));
        }
        Ok(PlanInfo {
            name: def.name.clone(),
            file,
            parameters,
        })
    };
    crate::catalog::on_compiler_thread(work).map_err(|e| PuppetPlanError::Thread(e.to_string()))?
}

/// What a plan needs from its surroundings.
pub struct Context {
    pub inventory: Inventory,
    pub modulepath: Modulepath,
    pub options: RunOptions,
    /// A fresh sink for each step's events.
    pub sink: Arc<dyn Fn() -> Arc<dyn Sink> + Send + Sync>,
    /// Where `out::message` prints.
    pub message: Arc<dyn Fn(&str) + Send + Sync>,
    /// The directory `download_file` saves under (`<dir>/<destination>/<target>/`).
    pub downloads: PathBuf,
    /// Set when the plan is to stop (its job was stopped): the running
    /// step is cut off and no plan function runs after it. Dropping the
    /// future of [`run`] or [`eval_code`] sets it too.
    pub stop: Stop,
    /// Facts stored beyond the inventory's (the server's: what agents and
    /// deploy runs sent), which `puppetdb_query` and `puppetdb_fact` read
    /// when no PuppetDB is configured; asked at the first such query.
    pub stored_facts: Option<FactsSource>,
}

/// Where a plan finds stored facts beyond its inventory's.
pub type FactsSource = Arc<dyn Fn() -> Result<Vec<NodeFacts>, FactsUnreadable> + Send + Sync>;

/// Why the stored facts could not be read.
#[derive(Debug, thiserror::Error)]
#[error("the stored facts cannot be read: {0}")]
pub struct FactsUnreadable(pub String);

/// How a plan ended: its return value, or Bolt's error object.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub ok: bool,
    pub value: J,
}

/// Runs plan `name` with `params` (JSON values, as given on the command
/// line or to the API), and closes every connection it opened.
pub async fn run(name: &str, params: Map<String, J>, ctx: Context) -> Outcome {
    run_reported(name, params, ctx, None).await
}

/// [`run`], telling `report` when the plan and each step start and finish
/// (Bolt's human output, as the YAML runner tells it).
pub async fn run_reported(
    name: &str,
    params: Map<String, J>,
    ctx: Context,
    report: Option<Arc<dyn Reporter>>,
) -> Outcome {
    let conns = Arc::new(Connections::default());
    let handle = tokio::runtime::Handle::current();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let name = name.trim_start_matches("::").to_string();
    // Whoever drops this future stops the evaluation thread too.
    let guard = ctx.stop.on_drop();
    let kept = Arc::clone(&conns);
    let spawned = std::thread::Builder::new()
        .name("ferry-plan".into())
        .stack_size(PLAN_STACK)
        .spawn(move || {
            let outcome = evaluate(&name, params, ctx, kept, handle, report);
            let _ = tx.send(outcome);
        });
    let outcome = match spawned {
        Ok(_) => rx.await.unwrap_or_else(|_| Outcome {
            ok: false,
            value: error_json(&ErrorValue::new(
                "internal error: the plan's evaluation stopped",
                "bolt/pal-error",
            )),
        }),
        Err(e) => Outcome {
            ok: false,
            value: error_json(&ErrorValue::new(
                PuppetPlanError::Thread(e.to_string()).to_string(),
                "bolt/pal-error",
            )),
        },
    };
    guard.disarm();
    conns.close_all().await;
    outcome
}

/// Evaluates the plan on the current (plan) thread.
fn evaluate(
    name: &str,
    params: Map<String, J>,
    ctx: Context,
    conns: Arc<Connections>,
    handle: tokio::runtime::Handle,
    report: Option<Arc<dyn Reporter>>,
) -> Outcome {
    let loader = FsLoader;
    let modulepath = ctx.modulepath.clone();
    let mut library = library::PlanLibrary::new(ctx, conns, handle);
    library.report = report.clone();
    let library = library.shared();
    let mut ev = Evaluator::new(
        &loader,
        modulepath,
        None,
        "localhost",
        &Map::new(),
        &*library,
    );
    let def = match ev.find_plan(name) {
        Ok(Some(d)) => d,
        Ok(None) => {
            return Outcome {
                ok: false,
                value: error_json(&ErrorValue::new(
                    PuppetPlanError::NotFound(name.to_string()).to_string(),
                    "bolt/unknown-plan",
                )),
            };
        }
        Err(e) => return failure(Unwind::Error(e)),
    };
    let args: Vec<(String, Value)> = params
        .iter()
        .map(|(k, v)| (k.clone(), Value::from_json(v)))
        .collect();
    let loc = def.loc.clone();
    if let Some(r) = &report {
        r.plan_started(&def.name);
    }
    let started = std::time::Instant::now();
    let ran = ev.run_plan(&def, args, &loc);
    // Background blocks end before the plan does (and before its
    // connections close).
    library.wait_for_background();
    if let Some(r) = &report {
        r.plan_finished(&def.name, started.elapsed());
    }
    if library.stop.is_set() {
        return stopped(ran.err());
    }
    match ran {
        Ok(v) => {
            if !crate::lang::values::plan::PlanType::PlanResult.is_instance(&v) {
                let e = ErrorValue::new(
                    format!("Plan {} returned an invalid result: {}", def.name, v.to_s()),
                    "bolt/invalid-plan-result",
                );
                return Outcome {
                    ok: false,
                    value: error_json(&e),
                };
            }
            Outcome {
                ok: true,
                value: to_json(&v),
            }
        }
        Err(u) => failure(u),
    }
}

/// A stopped plan's end: `ferry/plan-stopped`, at the call that was cut
/// off or refused.
fn stopped(end: Option<Unwind>) -> Outcome {
    let mut e = ErrorValue::new("The plan was stopped", "ferry/plan-stopped");
    if let Some(l) = end.and_then(|u| u.into_error().loc) {
        e.details = location_details(&l);
    }
    Outcome {
        ok: false,
        value: error_json(&e),
    }
}

/// A plan's end by error, as Bolt prints it.
fn failure(u: Unwind) -> Outcome {
    let e = match u {
        Unwind::Raise { mut error, loc } => {
            if !error
                .details
                .iter()
                .any(|(k, _)| k.as_str() == Some("file"))
            {
                error.details.extend(location_details(&loc));
            }
            *error
        }
        other => pal_error(&other.into_error()),
    };
    Outcome {
        ok: false,
        value: error_json(&e),
    }
}

/// A language error (syntax, evaluation) as Bolt's `bolt/pal-error`, its
/// position in `details`.
pub fn pal_error(e: &LangError) -> ErrorValue {
    let msg = match e.kind {
        // Bolt reports a plan's syntax error without Puppet's environment prefix.
        ErrorKind::Syntax => match &e.loc {
            Some(l) => format!("{} {l}", e.message),
            None => e.message.clone(),
        },
        _ => e.to_string(),
    };
    let mut err = ErrorValue::new(msg, "bolt/pal-error");
    if let Some(l) = &e.loc {
        err.details = location_details(l);
    }
    err
}

fn location_details(l: &crate::lang::error::Loc) -> Vec<(Value, Value)> {
    let mut d = vec![(Value::str("file"), Value::str(l.file.to_string()))];
    d.push((Value::str("line"), Value::Int(i64::from(l.line))));
    if l.col > 0 {
        d.push((Value::str("column"), Value::Int(i64::from(l.col))));
    }
    d
}

fn error_json(e: &ErrorValue) -> J {
    let mut j = e.to_data();
    if j.get("details").is_none() {
        j["details"] = json!({});
    }
    j
}

/// Evaluates a YAML plan's embedded code (an `eval` step, a `return`, any
/// value beyond a reference) with the Puppet-language engine: the plan's
/// variables and earlier steps' results bound as plan values (`ResultSet`,
/// `Result`, `Target`, `Error`), plan functions run with the plan's kept
/// connections `conns` over the plan's `state` (what `set_var`,
/// `add_facts`, `add_to_group`, `set_config`... change holds for the later
/// steps, as in Bolt; the code's own variables do not, each piece being
/// evaluated in a local scope of its own). The value comes back as data
/// (Bolt's `to_data`); an error as Bolt's, its position in the plan file.
pub async fn eval_code(
    code: Arc<Code>,
    vars: Vars,
    ctx: Context,
    state: Arc<PlanState>,
    conns: Arc<Connections>,
    report: Option<Arc<dyn Reporter>>,
) -> Result<Val, Failure> {
    let handle = tokio::runtime::Handle::current();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let guard = ctx.stop.on_drop();
    let spawned = std::thread::Builder::new()
        .name("ferry-plan-code".into())
        .stack_size(PLAN_STACK)
        .spawn(move || {
            let _ = tx.send(eval_code_here(
                &code, &vars, ctx, state, conns, handle, report,
            ));
        });
    match spawned {
        Ok(_) => {
            let done = rx.await.unwrap_or_else(|_| {
                Err(Failure::new(
                    "bolt/pal-error",
                    "internal error: the code's evaluation stopped",
                    None,
                ))
            });
            guard.disarm();
            done
        }
        Err(e) => Err(Failure::new(
            "bolt/pal-error",
            PuppetPlanError::Thread(e.to_string()).to_string(),
            None,
        )),
    }
}

fn eval_code_here(
    code: &Code,
    vars: &Vars,
    ctx: Context,
    state: Arc<PlanState>,
    conns: Arc<Connections>,
    handle: tokio::runtime::Handle,
    report: Option<Arc<dyn Reporter>>,
) -> Result<Val, Failure> {
    let place = &code.place;
    let file: Arc<str> = Arc::from(place.at.file.display().to_string());
    // Positions inside the code, as positions in the plan file.
    let at = |l: &crate::lang::error::Loc| place.map(l.line, l.col);
    let lang_failure = |e: &LangError| {
        Failure::new(
            "bolt/pal-error",
            e.message.clone(),
            e.loc.as_ref().map(at).as_ref(),
        )
    };
    let stmts =
        crate::lang::syntax::parser::parse(&code.text, &file).map_err(|e| lang_failure(&e))?;
    let loader = FsLoader;
    let modulepath = ctx.modulepath.clone();
    let mut library = library::PlanLibrary::sharing(ctx, conns, handle, state);
    library.report = report;
    let library = library.shared();
    let library = &*library;
    let bound: Vec<(String, Value)> = vars
        .iter()
        .map(|(k, v)| (k.clone(), plan_value(library, v)))
        .collect();
    let mut ev = Evaluator::new(&loader, modulepath, None, "localhost", &Map::new(), library);
    let loc = crate::lang::error::Loc::new(&file, 1, 1);
    let done = ev.eval_code(&stmts, bound, &loc);
    library.wait_for_background();
    match done {
        Ok(v) => Ok(yaml_value(&v)),
        Err(Unwind::Raise { error, loc }) => {
            let kind = error.kind.as_deref().unwrap_or("bolt/plan-failure");
            let mut f = Failure::new(kind, error.msg.clone(), Some(&at(&loc)));
            if let J::Object(d) = error.to_data()["details"].take() {
                for (k, v) in d {
                    f.details.entry(k).or_insert(v);
                }
            }
            Err(f)
        }
        Err(other) => Err(lang_failure(&other.into_error())),
    }
}

/// The Puppet engine's value as a YAML plan's: results stay results (so
/// that `$step.ok` and `$step.first.value` work on them), anything else
/// is its data.
fn yaml_value(v: &Value) -> Val {
    use crate::lang::values::plan::{PlanObject, as_object};
    let result = |r: &crate::lang::values::plan::PlanResult| {
        let value = to_json(&Value::Hash(r.value.clone()));
        let output = crate::run::result::Output::Task(value);
        crate::run::TargetResult {
            target: r.target.name.clone(),
            action: r.action.clone(),
            object: r.object.clone().unwrap_or_default(),
            outcome: if r.ok() {
                crate::run::result::Outcome::Ok(output)
            } else {
                crate::run::result::Outcome::Failed(output)
            },
        }
    };
    match as_object(v) {
        Some(PlanObject::ResultSet(rs)) => {
            Val::ResultSet(Arc::new(rs.iter().map(result).collect()))
        }
        Some(PlanObject::Result(r)) => Val::Result(Arc::new(result(r))),
        Some(PlanObject::Target(t)) => Val::Target(t.name.clone()),
        Some(PlanObject::Error(e)) => {
            let data = e.to_data();
            let mut f = Failure::new(
                e.kind.as_deref().unwrap_or("bolt/error"),
                e.msg.clone(),
                None,
            );
            if let J::Object(d) = &data["details"] {
                f.details = d.clone();
            }
            Val::Error(Arc::new(f))
        }
        _ => match v {
            Value::Array(items) if items.iter().any(|i| as_object(i).is_some()) => {
                Val::List(items.iter().map(yaml_value).collect())
            }
            other => Val::Data(to_json(other)),
        },
    }
}

/// A YAML plan's value as the Puppet engine's.
fn plan_value(lib: &library::PlanLibrary, v: &Val) -> Value {
    use crate::lang::values::plan::{PlanObject, Target, value};
    let target = |name: &str| -> Target {
        lib.state
            .targets(&Value::str(name))
            .ok()
            .and_then(|t| t.into_iter().next())
            .unwrap_or_else(|| Target {
                name: name.to_string(),
                info: Default::default(),
            })
    };
    match v {
        Val::Data(d) => Value::from_json(d),
        Val::ResultSet(rs) => value(PlanObject::ResultSet(
            rs.iter()
                .map(|r| functions::plan_result(target(&r.target), r))
                .collect(),
        )),
        Val::Result(r) => value(PlanObject::Result(functions::plan_result(
            target(&r.target),
            r,
        ))),
        Val::Target(name) => value(PlanObject::Target(target(name))),
        Val::List(items) => Value::Array(items.iter().map(|i| plan_value(lib, i)).collect()),
        Val::Error(f) => {
            let mut e = ErrorValue::new(f.msg.clone(), &f.kind);
            if let Value::Hash(h) = Value::from_json(&f.to_json()["details"]) {
                e.details = h;
            }
            value(PlanObject::Error(e))
        }
    }
}
