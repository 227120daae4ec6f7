//! Running a plan: parameters checked, then each step in order on its
//! targets through the shared executor, with one connection per target
//! (and run-as user) kept for the whole plan and the plans it runs. A
//! step that fails on any target ends the plan with Bolt's
//! `bolt/run-failure`, unless the step has `catch_errors`. What happens is
//! told to a [`Reporter`] (Bolt's "Starting:" and "Finished:" lines, the
//! messages); the plan's value is the caller's to print.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use serde_json::{Map, Value, json};

use super::expr::{Code, EvalError, Expr, Resolved, Vars};
use super::puppet::PlanState;
use super::{Failure, Located, Plan, PlanError, Step, StepKind, Val};
use crate::inventory::{Inventory, Target};
use crate::lang::modulepath::Modulepath;
use crate::run::events::{Discard, Sink};
use crate::run::{self, Action, Connections, RunOptions, TargetResult};
use crate::task::{Loader, params};
use crate::yaml::Origin;

/// How deeply plans may run plans.
const MAX_PLAN_DEPTH: usize = 64;

/// Hears what a plan does, as Bolt's outputters do.
pub trait Reporter: Send + Sync {
    fn plan_started(&self, plan: &str);
    fn plan_finished(&self, plan: &str, elapsed: Duration);
    /// A step that runs on targets begins (`description` is the step's, or
    /// Bolt's default such as `command 'hostname'`).
    fn step_started(&self, description: &str, targets: &[String]);
    fn step_finished(&self, description: &str, failures: usize, elapsed: Duration);
    /// A `message` step's text.
    fn message(&self, text: &str);
    /// A `verbose` step's text.
    fn verbose(&self, text: &str);
}

/// What a [`Reporter`] is told, sent from another thread (the Puppet
/// engine's) to the plan's reporter.
enum Told {
    PlanStarted(String),
    PlanFinished(String, Duration),
    StepStarted(String, Vec<String>),
    StepFinished(String, usize, Duration),
    Message(String),
    Verbose(String),
}

impl Told {
    fn tell(self, r: &dyn Reporter) {
        match self {
            Told::PlanStarted(p) => r.plan_started(&p),
            Told::PlanFinished(p, d) => r.plan_finished(&p, d),
            Told::StepStarted(s, t) => r.step_started(&s, &t),
            Told::StepFinished(s, f, d) => r.step_finished(&s, f, d),
            Told::Message(m) => r.message(&m),
            Told::Verbose(m) => r.verbose(&m),
        }
    }
}

/// A [`Reporter`] that sends what it hears over a channel.
struct Forward(tokio::sync::mpsc::UnboundedSender<Told>);

impl Reporter for Forward {
    fn plan_started(&self, plan: &str) {
        let _ = self.0.send(Told::PlanStarted(plan.into()));
    }
    fn plan_finished(&self, plan: &str, elapsed: Duration) {
        let _ = self.0.send(Told::PlanFinished(plan.into(), elapsed));
    }
    fn step_started(&self, description: &str, targets: &[String]) {
        let _ = self
            .0
            .send(Told::StepStarted(description.into(), targets.to_vec()));
    }
    fn step_finished(&self, description: &str, failures: usize, elapsed: Duration) {
        let _ = self
            .0
            .send(Told::StepFinished(description.into(), failures, elapsed));
    }
    fn message(&self, text: &str) {
        let _ = self.0.send(Told::Message(text.into()));
    }
    fn verbose(&self, text: &str) {
        let _ = self.0.send(Told::Verbose(text.into()));
    }
}

/// What a plan needs from its surroundings.
pub struct Context<'a> {
    pub inventory: &'a Inventory,
    pub modulepath: Modulepath,
    pub options: RunOptions,
    /// A fresh sink for each step's executor events.
    pub sink: &'a (dyn Fn() -> Arc<dyn Sink> + Sync),
    pub report: &'a dyn Reporter,
    /// Where `download` steps save files: `<downloads>/<destination>/<target>/`.
    pub downloads: PathBuf,
    /// Stored facts beyond the inventory's, for the Puppet code's
    /// `puppetdb_query` (see [`super::puppet::Context::stored_facts`]).
    pub stored_facts: Option<super::puppet::FactsSource>,
}

fn is_target_spec(ty: &str) -> bool {
    ty.contains("TargetSpec")
}

/// Checks and completes the parameters a plan is given, as Puppet checks
/// a plan's arguments: no unknown names, a value for every parameter
/// without a default, each value of its type.
pub fn check_params(
    plan: &Plan,
    given: Map<String, Value>,
) -> Result<Map<String, Value>, PlanError> {
    let mut problems = Vec::new();
    for name in given.keys() {
        if !plan.parameters.contains_key(name) {
            problems.push(format!("has no parameter named '{name}'"));
        }
    }
    let mut out = Map::new();
    for (name, p) in &plan.parameters {
        let value = match given.get(name).cloned().or_else(|| p.default.clone()) {
            Some(v) => v,
            None => {
                problems.push(format!("expects a value for parameter '{name}'"));
                continue;
            }
        };
        let ty = p.ty.as_deref().unwrap_or("Any");
        // A plain value for a Sensitive parameter is wrapped, as Bolt's
        // run_plan wraps it: what it must be is the inner type.
        let ty = match ty.strip_prefix("Sensitive") {
            Some("") => "Any",
            Some(rest) => rest
                .strip_prefix('[')
                .and_then(|r| r.strip_suffix(']'))
                .unwrap_or(ty),
            None => ty,
        };
        let ok = if is_target_spec(ty) {
            let optional = ty.starts_with("Optional[");
            match &value {
                Value::String(_) => Ok(()),
                Value::Array(a) if a.iter().all(Value::is_string) => Ok(()),
                Value::Null if optional => Ok(()),
                _ => Err(format!(
                    "expects a TargetSpec (a string or a list of strings), got {value}"
                )),
            }
        } else {
            params::check_type(ty, &value).map_err(|e| e.to_string())
        };
        if let Err(why) = ok {
            problems.push(format!("parameter '{name}' {why}"));
        }
        out.insert(name.clone(), value);
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(PlanError::Param(format!(
            "invalid parameters for plan {}:\n  {}",
            plan.name,
            problems.join("\n  ")
        )))
    }
}

/// A module-relative file (`mymod/script.sh` → `<modulepath>/mymod/files/script.sh`),
/// an absolute path, or a path relative to the plan file.
fn module_file(rel: &str, modulepath: &Modulepath, plan_dir: &Path) -> Result<PathBuf, String> {
    if Path::new(rel).is_absolute() {
        return Ok(PathBuf::from(rel));
    }
    let direct = plan_dir.join(rel);
    if direct.exists() {
        return Ok(direct);
    }
    let (module, rest) = rel
        .split_once('/')
        .ok_or_else(|| format!("No such file or directory: {rel}"))?;
    if rest.split('/').any(|s| s == "..") {
        return Err(format!("file '{rel}' must stay inside its module"));
    }
    modulepath
        .candidates(module)
        .map(|d| d.join("files").join(rest))
        .find(|p| p.exists())
        .ok_or_else(|| format!("No such file or directory: {rel} (looked in each module's files/)"))
}

/// Runs a plan whose parameters were checked with [`check_params`]: its
/// return value, or the error that ended it.
pub async fn run(
    plan: &Plan,
    params: Map<String, Value>,
    ctx: &Context<'_>,
) -> Result<Val, Failure> {
    let runner = Runner {
        ctx,
        conns: Arc::new(Connections::default()),
        state: Arc::new(PlanState::new(ctx.inventory.clone())),
        loader: Loader::new(ctx.modulepath.clone()),
    };
    let vars: Vars = params.into_iter().map(|(k, v)| (k, Val::Data(v))).collect();
    let outcome = runner
        .plan(plan, vars, ctx.options.overrides.run_as.clone(), 0)
        .await;
    runner.conns.close_all().await;
    outcome
}

struct Runner<'a> {
    ctx: &'a Context<'a>,
    conns: Arc<Connections>,
    /// The inventory as the plan's code changes it (groups, vars, facts,
    /// features, config): the steps' targets are chosen from it.
    state: Arc<PlanState>,
    loader: Loader,
}

fn eval_failure(e: EvalError) -> Failure {
    Failure::new("bolt/evaluation-error", e.msg, Some(&e.at))
}

/// How one step ended: its value, or the error that ends the plan.
type StepResult = Result<Val, Failure>;

impl<'a> Runner<'a> {
    fn plan<'b>(
        &'b self,
        plan: &'b Plan,
        mut vars: Vars,
        run_as: Option<String>,
        depth: usize,
    ) -> BoxFuture<'b, Result<Val, Failure>> {
        Box::pin(async move {
            let report = self.ctx.report;
            report.plan_started(&plan.name);
            let started = Instant::now();
            let outcome = async {
                for step in &plan.steps {
                    if let StepKind::Parallel { steps } = &step.kind {
                        let all = futures_util::future::join_all(
                            steps
                                .iter()
                                .map(|s| self.step(plan, s, &vars, &run_as, depth)),
                        )
                        .await;
                        let mut named = Vec::new();
                        for (s, done) in steps.iter().zip(all) {
                            let value = done?;
                            if let Some(name) = &s.name {
                                named.push((name.clone(), value));
                            }
                        }
                        vars.extend(named);
                        continue;
                    }
                    let value = self.step(plan, step, &vars, &run_as, depth).await?;
                    if let Some(name) = &step.name {
                        vars.insert(name.clone(), value);
                    }
                }
                match &plan.returns {
                    Some(r) => {
                        let resolved = self.resolve(&[r], &vars, &run_as).await?;
                        r.eval_with(&vars, &resolved).map_err(eval_failure)
                    }
                    None => Ok(Val::Data(Value::Null)),
                }
            }
            .await;
            report.plan_finished(&plan.name, started.elapsed());
            outcome
        })
    }

    async fn step(
        &self,
        plan: &Plan,
        step: &Step,
        vars: &Vars,
        run_as: &Option<String>,
        depth: usize,
    ) -> StepResult {
        let at = &step.origin;
        let resolved = self.resolve(&step.exprs(), vars, run_as).await?;
        let resolved = &resolved;
        let ev = |e: &Expr| e.eval_with(vars, resolved).map_err(eval_failure);
        let text = |e: &Expr, what: &str| -> Result<String, Failure> {
            match ev(e)? {
                Val::Data(Value::String(s)) if !s.is_empty() => Ok(s),
                other => Err(invalid(
                    at,
                    format!(
                        "{what} expects a non-empty String, got {}",
                        other.type_name()
                    ),
                )),
            }
        };
        let flag = |e: &Option<Expr>, what: &str| -> Result<bool, Failure> {
            match e {
                None => Ok(false),
                Some(e) => ev(e)?
                    .as_bool()
                    .ok_or_else(|| invalid(at, format!("{what} expects a Boolean"))),
            }
        };
        let mut catch = flag(&step.catch_errors, "catch_errors")?;
        let mut user = match &step.run_as {
            Some(e) => Some(text(e, "run_as")?),
            None => run_as.clone(),
        };
        let description = step
            .description
            .as_ref()
            .map(|d| ev(d).map(|v| v.to_text()))
            .transpose()?;
        let targets = |step: &Step| -> Result<Vec<Target>, Failure> {
            let Some(e) = &step.targets else {
                return Ok(Vec::new());
            };
            let mut words = Vec::new();
            ev(e)?
                .target_words(&mut words)
                .map_err(|m| invalid(at, format!("targets {m}")))?;
            if words.is_empty() {
                return Ok(Vec::new());
            }
            let named = self
                .state
                .targets(&crate::lang::values::value::Value::str(words.join(",")))
                .map_err(|e| Failure::new("bolt/inventory-error", e.to_string(), Some(at)))?;
            Ok(named
                .iter()
                .filter_map(|t| self.state.inventory_target(t))
                .collect())
        };
        let dir = plan.dir();
        let file = |rel: &str| {
            module_file(rel, &self.ctx.modulepath, &dir)
                .map_err(|m| Failure::new("bolt/file-not-found", m, Some(at)))
        };
        let env = |e: &Option<Expr>| -> Result<Vec<(String, String)>, Failure> {
            let Some(e) = e else {
                return Ok(Vec::new());
            };
            match ev(e)? {
                Val::Data(Value::Object(m)) => Ok(m
                    .into_iter()
                    .map(|(k, v)| {
                        let v = match v {
                            Value::String(s) => s,
                            Value::Null => String::new(),
                            other => other.to_string(),
                        };
                        (k, v)
                    })
                    .collect()),
                other => Err(invalid(
                    at,
                    format!(
                        "Option 'env_vars' must be a hash, got {}",
                        other.type_name()
                    ),
                )),
            }
        };
        let with_env = |action: Action, vars: Vec<(String, String)>| {
            if vars.is_empty() {
                action
            } else {
                Action::Env {
                    vars,
                    action: Box::new(action),
                }
            }
        };
        match &step.kind {
            StepKind::Message { message } => {
                self.ctx.report.message(&ev(message)?.message());
                Ok(Val::Data(Value::Null))
            }
            StepKind::Verbose { verbose } => {
                self.ctx.report.verbose(&ev(verbose)?.message());
                Ok(Val::Data(Value::Null))
            }
            StepKind::Eval { eval } => ev(eval),
            StepKind::Command { command, env_vars } => {
                let line = text(command, "command")?;
                let action = with_env(Action::Command { line: line.clone() }, env(env_vars)?);
                let desc = description.unwrap_or_else(|| format!("command '{line}'"));
                self.act(
                    action,
                    targets(step)?,
                    user,
                    desc,
                    "run_command",
                    &line,
                    catch,
                )
                .await
            }
            StepKind::Script {
                script,
                arguments,
                env_vars,
            } => {
                let name = text(script, "script")?;
                let path = file(&name)?;
                let args = match arguments.as_ref().map(ev).transpose()? {
                    None | Some(Val::Data(Value::Null)) => Vec::new(),
                    Some(Val::Data(Value::Array(a))) => {
                        a.into_iter().map(|v| Val::Data(v).to_text()).collect()
                    }
                    Some(other) => {
                        return Err(invalid(
                            at,
                            format!("arguments must be an Array, got {}", other.type_name()),
                        ));
                    }
                };
                let desc = description.unwrap_or_else(|| format!("script {}", path.display()));
                let action = with_env(Action::Script { path, args }, env(env_vars)?);
                self.act(
                    action,
                    targets(step)?,
                    user,
                    desc,
                    "run_script",
                    &name,
                    catch,
                )
                .await
            }
            StepKind::Task {
                task,
                parameters,
                noop,
            } => {
                let name = text(task, "task")?;
                let mut given = self.parameters(parameters, vars, resolved, at)?;
                // Metaparameters in `parameters`, as run_task takes them.
                if let Some(v) = given.remove("_catch_errors") {
                    catch = v.as_bool().unwrap_or(catch);
                }
                if let Some(Value::String(u)) = given.remove("_run_as") {
                    user = Some(u);
                }
                let mut noop = flag(noop, "noop")?;
                if let Some(v) = given.remove("_noop") {
                    noop = v.as_bool().unwrap_or(noop);
                }
                let loaded = self.loader.load(&name).map_err(|e| {
                    Failure::new(
                        "bolt/unknown-task",
                        format!("Could not find a task named '{name}': {e}"),
                        Some(at),
                    )
                })?;
                let prepared = params::prepare(loaded, given, noop, &self.loader)
                    .map_err(|e| Failure::new("bolt/pal-error", e.to_string(), Some(at)))?;
                let desc = description.unwrap_or_else(|| format!("task {name}"));
                let action = Action::Task(Arc::new(prepared));
                self.act(action, targets(step)?, user, desc, "run_task", &name, catch)
                    .await
            }
            StepKind::Upload {
                upload,
                destination,
            } => {
                let source = text(upload, "upload")?;
                let src = file(&source)?;
                let dest = text(destination, "destination")?;
                let desc = description
                    .unwrap_or_else(|| format!("file upload from {} to {dest}", src.display()));
                let action = Action::Upload { src, dest };
                self.act(
                    action,
                    targets(step)?,
                    user,
                    desc,
                    "upload_file",
                    &source,
                    catch,
                )
                .await
            }
            StepKind::Download {
                download,
                destination,
            } => {
                let src = text(download, "download")?;
                let dest = text(destination, "destination")?;
                let dir = self.download_dir(&dest, at)?;
                let desc = description
                    .unwrap_or_else(|| format!("file download from {src} to {}", dir.display()));
                let action = Action::Download {
                    src: src.clone(),
                    dest: dir,
                };
                self.act(
                    action,
                    targets(step)?,
                    user,
                    desc,
                    "download_file",
                    &src,
                    catch,
                )
                .await
            }
            StepKind::Plan {
                plan: p,
                parameters,
            } => {
                let name = text(p, "plan")?;
                let mut given = self.parameters(parameters, vars, resolved, at)?;
                if let Some(v) = given.remove("_catch_errors") {
                    catch = v.as_bool().unwrap_or(catch);
                }
                if let Some(Value::String(u)) = given.remove("_run_as") {
                    user = Some(u);
                }
                if let Some(e) = &step.targets {
                    given.insert("targets".into(), ev(e)?.to_json());
                }
                let done = self.sub_plan(&name, given, user, depth, at).await;
                match done {
                    Err(f) if catch => Ok(Val::Error(Arc::new(f))),
                    other => other,
                }
            }
            StepKind::Resources { resources, noop } => {
                let list = ev(resources)?.to_json();
                let noop = flag(noop, "noop")?;
                let targets = targets(step)?;
                if targets.is_empty() {
                    return Ok(Val::ResultSet(Arc::new(Vec::new())));
                }
                let names: Vec<String> = targets.iter().map(|t| t.name.clone()).collect();
                let text =
                    resources_code(&list, &names, catch, noop).map_err(|m| invalid(at, m))?;
                let code = Arc::new(Code {
                    text,
                    place: super::expr::Place {
                        at: at.clone(),
                        block_indent: None,
                        lead: 0,
                    },
                });
                self.engine(code, &Vars::new(), &user).await
            }
            StepKind::Parallel { .. } => Err(invalid(at, "a parallel step inside a parallel step")),
        }
    }

    /// A step's `parameters` mapping, computed.
    fn parameters(
        &self,
        parameters: &Option<Expr>,
        vars: &Vars,
        resolved: &Resolved,
        at: &Origin,
    ) -> Result<Map<String, Value>, Failure> {
        match parameters
            .as_ref()
            .map(|p| p.eval_with(vars, resolved))
            .transpose()
        {
            Err(e) => Err(eval_failure(e)),
            Ok(None) | Ok(Some(Val::Data(Value::Null))) => Ok(Map::new()),
            Ok(Some(Val::Data(Value::Object(m)))) => Ok(m),
            Ok(Some(other)) => Err(invalid(
                at,
                format!("parameters must be a Hash, got {}", other.type_name()),
            )),
        }
    }

    /// The values of the code in `exprs`, computed by the Puppet-language
    /// engine with the plan's variables, in the order written.
    async fn resolve(
        &self,
        exprs: &[&Expr],
        vars: &Vars,
        run_as: &Option<String>,
    ) -> Result<Resolved, Failure> {
        let mut codes = Vec::new();
        for e in exprs {
            e.codes(&mut codes);
        }
        let mut resolved = Resolved::default();
        for code in codes {
            if resolved.contains(&code) {
                continue;
            }
            let v = self.engine(Arc::clone(&code), vars, run_as).await?;
            resolved.insert(&code, v);
        }
        Ok(resolved)
    }

    /// Evaluates one piece of code with the Puppet-language engine, with
    /// the plan's kept connections; what it reports goes to the plan's
    /// reporter as it happens.
    async fn engine(
        &self,
        code: Arc<Code>,
        vars: &Vars,
        run_as: &Option<String>,
    ) -> Result<Val, Failure> {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let forward: Arc<dyn Reporter> = Arc::new(Forward(tx.clone()));
        let message: Arc<dyn Fn(&str) + Send + Sync> = Arc::new(move |m: &str| {
            let _ = tx.send(Told::Message(m.to_string()));
        });
        let mut options = self.ctx.options.clone();
        options.overrides.run_as = run_as.clone();
        let inv = self.ctx.inventory;
        let ctx = super::puppet::Context {
            inventory: inv.clone(),
            modulepath: self.ctx.modulepath.clone(),
            options,
            sink: Arc::new(|| -> Arc<dyn Sink> { Arc::new(Discard) }),
            message,
            downloads: self.ctx.downloads.clone(),
            stop: Default::default(),
            stored_facts: self.ctx.stored_facts.clone(),
        };
        let done = super::puppet::eval_code(
            code,
            vars.clone(),
            ctx,
            Arc::clone(&self.state),
            Arc::clone(&self.conns),
            Some(forward),
        );
        tokio::pin!(done);
        let report = self.ctx.report;
        loop {
            tokio::select! {
                r = &mut done => {
                    while let Ok(t) = rx.try_recv() {
                        t.tell(report);
                    }
                    return r;
                }
                Some(t) = rx.recv() => t.tell(report),
            }
        }
    }

    /// `<downloads>/<destination>`, checked and emptied as Bolt's
    /// download_file does.
    fn download_dir(&self, dest: &str, at: &Origin) -> Result<PathBuf, Failure> {
        let fail = |m: String| Failure::new("bolt/validation-error", m, Some(at));
        let dest = dest.trim();
        if dest.is_empty() {
            return Err(fail("Destination cannot be an empty string".into()));
        }
        let path = Path::new(dest);
        if path.is_absolute() {
            return Err(fail(format!(
                "Destination must be a relative path, received absolute path {dest}"
            )));
        }
        if path
            .components()
            .any(|c| !matches!(c, std::path::Component::Normal(_)))
            || dest.split('/').any(|s| s == ".")
        {
            return Err(fail(format!(
                "Destination must not include path traversal, received {dest}"
            )));
        }
        let dir = self.ctx.downloads.join(path);
        empty_dir(&dir).map_err(|e| {
            Failure::new(
                "bolt/file-error",
                format!("{}: {e}", dir.display()),
                Some(at),
            )
        })?;
        Ok(dir)
    }

    async fn sub_plan(
        &self,
        name: &str,
        given: Map<String, Value>,
        run_as: Option<String>,
        depth: usize,
        at: &Origin,
    ) -> StepResult {
        if depth + 1 >= MAX_PLAN_DEPTH {
            return Err(invalid(
                at,
                format!("plans run plans more than {MAX_PLAN_DEPTH} deep (at {name})"),
            ));
        }
        let modulepath = &self.ctx.modulepath;
        let fail = |e: PlanError| {
            let mut f = e.to_failure();
            if f.details.is_empty() {
                f.details = super::origin_details(at);
            }
            f
        };
        let path = match super::locate(name, modulepath).map_err(fail)? {
            Located::Yaml(p) => p,
            Located::Puppet(p) => {
                return Err(Failure::new(
                    "bolt/pal-error",
                    format!(
                        "plan {name} ({}) is in the Puppet language, which this runner does not run yet",
                        p.display()
                    ),
                    Some(at),
                ));
            }
        };
        let sub = super::load(&path, name).map_err(fail)?;
        let params = check_params(&sub, given).map_err(fail)?;
        let vars = params.into_iter().map(|(k, v)| (k, Val::Data(v))).collect();
        self.plan(&sub, vars, run_as, depth + 1).await
    }

    /// Runs an action on a step's targets, as Bolt's plan functions do: no
    /// targets, no run (an empty ResultSet); a failure on any target is the
    /// plan's end unless the step catches errors.
    #[allow(clippy::too_many_arguments)]
    async fn act(
        &self,
        action: Action,
        targets: Vec<Target>,
        run_as: Option<String>,
        description: String,
        function: &str,
        object: &str,
        catch: bool,
    ) -> StepResult {
        if targets.is_empty() {
            return Ok(Val::ResultSet(Arc::new(Vec::new())));
        }
        let mut options = self.ctx.options.clone();
        options.overrides.run_as = run_as;
        if let Err(e) = crate::transport::check_options(&targets, &options.overrides) {
            return Err(Failure::new(e.kind(), e.to_string(), None));
        }
        // Remote tasks on devices run on the targets their run-on names.
        let action = match action {
            Action::Task(_) => {
                match run::actions::task::remote::proxies(self.ctx.inventory, &targets) {
                    Ok(proxies) => action.with_proxies(proxies),
                    Err(e) => return Err(Failure::new(e.kind(), e.to_string(), None)),
                }
            }
            other => other,
        };
        let names: Vec<String> = targets.iter().map(|t| t.name.clone()).collect();
        let report = self.ctx.report;
        report.step_started(&description, &names);
        let started = Instant::now();
        let summary = run::run_on(
            targets,
            action,
            &options,
            (self.ctx.sink)(),
            Some(Arc::clone(&self.conns)),
        )
        .await;
        let mut results: Vec<TargetResult> = summary.results;
        // Bolt's ResultSet follows the targets' order.
        results.sort_by_key(|r| names.iter().position(|n| *n == r.target));
        let failures = results.iter().filter(|r| !r.ok()).count();
        report.step_finished(&description, failures, started.elapsed());
        let results = Arc::new(results);
        if failures > 0 && !catch {
            return Err(Failure::run_failure(function, object, results));
        }
        Ok(Val::ResultSet(results))
    }
}

/// A `resources` step as Puppet code, as Bolt runs it: `apply_prep` on
/// the targets, then an `apply` block declaring each resource in order,
/// each after the one before. Types are checked names; titles and
/// parameters are written as Puppet literals of their computed values.
fn resources_code(
    list: &Value,
    targets: &[String],
    catch: bool,
    noop: bool,
) -> Result<String, String> {
    let Value::Array(items) = list else {
        return Err(format!("resources must be a list of resources, got {list}"));
    };
    let mut declared = Vec::new();
    for item in items {
        let Value::Object(m) = item else {
            return Err(format!("a resource must be a mapping, got {item}"));
        };
        let (ty, title) = match (m.get("type"), m.get("title")) {
            (Some(Value::String(t)), Some(title)) => (t.clone(), title.clone()),
            _ => {
                let mut keys = m.keys().filter(|k| *k != "parameters");
                match (keys.next(), keys.next()) {
                    (Some(k), None) => (k.clone(), m[k].clone()),
                    _ => return Err(format!("Resource declaration has no single type: {item}")),
                }
            }
        };
        let ty_ok = !ty.is_empty()
            && ty.split("::").all(|seg| {
                let mut c = seg.chars();
                c.next().is_some_and(|f| f.is_ascii_alphabetic())
                    && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
            });
        if !ty_ok {
            return Err(format!("Invalid resource type {ty:?}"));
        }
        let mut text = format!("{} {{ {}:", ty.to_lowercase(), puppet_literal(&title));
        match m.get("parameters") {
            None | Some(Value::Null) => {}
            Some(Value::Object(params)) => {
                for (k, v) in params {
                    let mut c = k.chars();
                    let bare = c.next().is_some_and(|f| f.is_ascii_lowercase())
                        && c.all(|x| x.is_ascii_lowercase() || x.is_ascii_digit() || x == '_');
                    if !bare {
                        return Err(format!("Invalid attribute name {k:?} for {ty}"));
                    }
                    text.push_str(&format!("\n    {k} => {},", puppet_literal(v)));
                }
            }
            Some(other) => return Err(format!("resource parameters must be a Hash, got {other}")),
        }
        text.push_str("\n  }");
        declared.push(text);
    }
    let targets = puppet_literal(&json!(targets));
    Ok(format!(
        "apply_prep({targets})\napply({targets}, {{'_catch_errors' => {catch}, '_noop' => {noop}}}) {{\n  {}\n}}\n",
        declared.join("\n  -> ")
    ))
}

/// JSON data as a Puppet literal.
fn puppet_literal(v: &Value) -> String {
    match v {
        Value::Null => "undef".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(puppet_literal).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{} => {}", puppet_literal(&json!(k)), puppet_literal(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn invalid(at: &Origin, msg: impl Into<String>) -> Failure {
    Failure::new("bolt/pal-error", msg, Some(at))
}

/// Makes `dir` (and its parents) and removes what it holds, not following
/// symbolic links: a download step starts from an empty directory.
fn empty_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            std::fs::remove_dir_all(entry.path())?;
        } else {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_become_an_apply_block_that_parses() {
        let list = json!([
            {"file": "/tmp/d", "parameters": {"ensure": "directory"}},
            {"type": "File", "title": "/tmp/d/it's", "parameters": {"content": "a\\b\n", "mode": 420}},
            {"notify": "hi"},
        ]);
        let code = resources_code(&list, &["t".into()], false, true).unwrap();
        let file: Arc<str> = Arc::from("x.yaml");
        if let Err(e) = crate::lang::syntax::parser::parse(&code, &file) {
            panic!("{code}\n{e}");
        }
        assert!(code.contains("-> file { '/tmp/d/it\\'s':"), "{code}");
        assert!(code.contains("'_noop' => true"), "{code}");
        for bad in [
            json!([{"type": "file; exec", "title": "x"}]),
            json!([{"file": "x", "parameters": {"a' => 1, b": 2}}]),
            json!(["x"]),
            json!({}),
        ] {
            assert!(resources_code(&bad, &[], false, false).is_err(), "{bad}");
        }
    }
}
