//! The plan runner's [`Library`]: Bolt's plan functions first (see
//! [`super::functions`]), then every built-in function of the registry.
//! It owns what the functions share: the run context (inventory, modules,
//! run options, sinks), the kept connections, the runtime handle steps
//! block on, and the plan's [`PlanState`].

use std::sync::{Arc, Mutex};

use super::Context;
use super::functions;
use super::state::PlanState;
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{ApplyCall, Call, Evaluator, Library};
use crate::lang::values::value::Value;
use crate::run::Connections;

/// A plan function's implementation.
pub type PlanFn = fn(&PlanLibrary, &mut Evaluator<'_>, Call<'_>) -> EvalResult<Value>;

/// The functions of a running plan.
pub struct PlanLibrary {
    pub modulepath: crate::lang::modulepath::Modulepath,
    pub options: crate::run::RunOptions,
    /// A fresh sink for each step's events.
    pub sink: Arc<dyn Fn() -> Arc<dyn crate::run::events::Sink> + Send + Sync>,
    /// Where `out::message` prints.
    pub message: Arc<dyn Fn(&str) + Send + Sync>,
    pub downloads: std::path::PathBuf,
    pub conns: Arc<Connections>,
    pub handle: tokio::runtime::Handle,
    /// The plan's targets and inventory; shared by every piece of code a
    /// YAML plan evaluates, as Bolt's inventory is one for the whole run.
    pub state: Arc<PlanState>,
    /// The `_run_as` of the `run_plan` being run, for its steps.
    pub run_as: Mutex<Option<String>>,
    /// Where steps and messages are told (Bolt's human output), if anywhere.
    pub report: Option<Arc<dyn crate::plan::run::Reporter>>,
    /// The library itself, for `background` blocks that outlive the call
    /// (set by whoever puts the library in an `Arc`).
    pub me: std::sync::OnceLock<std::sync::Weak<PlanLibrary>>,
    /// Set when the plan is to stop: no plan function runs after it.
    pub stop: crate::run::Stop,
    /// Stored facts beyond the inventory's, if the plan has any.
    pub stored_facts: Option<super::FactsSource>,
}

impl PlanLibrary {
    pub fn new(
        ctx: Context,
        conns: Arc<Connections>,
        handle: tokio::runtime::Handle,
    ) -> PlanLibrary {
        let state = Arc::new(PlanState::new(ctx.inventory.clone()));
        PlanLibrary::sharing(ctx, conns, handle, state)
    }

    /// A library over `state`, which other evaluations share (the
    /// context's inventory is then `state`'s, not read again).
    pub fn sharing(
        ctx: Context,
        conns: Arc<Connections>,
        handle: tokio::runtime::Handle,
        state: Arc<PlanState>,
    ) -> PlanLibrary {
        let Context {
            inventory: _,
            modulepath,
            options,
            sink,
            message,
            downloads,
            stop,
            stored_facts,
        } = ctx;
        PlanLibrary {
            modulepath,
            options,
            sink,
            message,
            downloads,
            conns,
            handle,
            state,
            run_as: Mutex::new(None),
            report: None,
            me: std::sync::OnceLock::new(),
            stop,
            stored_facts,
        }
    }
}

impl PlanLibrary {
    /// The library in an `Arc` that knows itself.
    pub fn shared(self) -> Arc<PlanLibrary> {
        let lib = Arc::new(self);
        let _ = lib.me.set(Arc::downgrade(&lib));
        lib
    }

    /// Waits for every `background` block the plan started.
    pub fn wait_for_background(&self) {
        let futures = self
            .state
            .futures
            .lock()
            .map(|f| f.clone())
            .unwrap_or_default();
        for f in futures {
            f.outcome.wait(None);
        }
    }
}

impl Library for PlanLibrary {
    fn call(&self, ev: &mut Evaluator<'_>, call: Call<'_>) -> Option<EvalResult<Value>> {
        match functions::find(call.name) {
            Some(_) if self.stop.is_set() => Some(Err(functions::stopped(&call))),
            Some(f) => Some(f(self, ev, call)),
            None => crate::lang::functions::registry().call(ev, call),
        }
    }

    fn lookup_param(&self, ev: &mut Evaluator<'_>, key: &str) -> EvalResult<Option<Value>> {
        crate::lang::functions::registry().lookup_param(ev, key)
    }

    fn apply_block(&self, ev: &mut Evaluator<'_>, call: ApplyCall<'_>) -> EvalResult<Value> {
        if self.stop.is_set() {
            return Err(functions::stopped_at(call.loc));
        }
        functions::apply_block(self, ev, call)
    }
}
