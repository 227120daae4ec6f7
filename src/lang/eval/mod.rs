//! The evaluator: its state (scopes, definitions, the growing catalog),
//! variable scoping and the depth bound. The evaluation itself is split by
//! idea: [`expr`] (plain expressions), [`operators`], `calls` (lambdas,
//! Puppet-language functions and the [`Library`] of built-in functions),
//! [`resources`] (resource expressions, defaults, overrides, collectors,
//! relationships), `classes` (classes, defined types, nodes, autoloading),
//! [`core_types`] (Puppet's built-in resource types) and [`finish`]
//! (setting up and finishing a compilation), and [`plans`] (Bolt plans:
//! loading, the check that keeps catalog statements out of them,
//! running one with named arguments, the plan objects' methods). Every step returns
//! [`control::EvalResult`]: an error or a `next()`/`break()`/`return()`
//! unwinding, one enum ([`control::Unwind`]) caught where Puppet ends it.

mod calls;
mod classes;
pub mod control;
pub mod core_types;
pub mod device_types;
pub mod expr;
pub mod finish;
pub mod operators;
pub mod plans;
pub mod resources;
pub mod title_patterns;

pub use calls::{ApplyCall, Call, Library};
pub use finish::{Output, OutputResource};

use control::EvalResult;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use typed_index_collections::TiVec;

use crate::lang::error::{ErrorKind, LangError, Loc};
use crate::lang::loader::Loader;
use crate::lang::modulepath::Modulepath;
use crate::lang::syntax::ast::{Definition, Expr, FunctionDef, NodeDef};
use crate::lang::values::value::Value;

/// Maximum evaluation nesting (calls, includes, lambdas).
pub const MAX_EVAL_DEPTH: usize = 300;

/// A scope of the compilation: its place in the evaluator's scope table.
/// The top scope is [`ScopeId::TOP`]; others come from
/// [`Evaluator::new_scope`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ScopeId(usize);

impl ScopeId {
    /// The top scope (`$::x`, facts, the main manifest's variables).
    pub const TOP: ScopeId = ScopeId(0);
}

/// A resource of the catalog being built: its place in the evaluator's
/// resource table, and in [`Output::resources`] when finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ResId(pub usize);

// The tables' key conversions (typed_index_collections).
macro_rules! table_key {
    ($($id:ident),*) => {$(
        impl From<usize> for $id {
            fn from(i: usize) -> $id {
                $id(i)
            }
        }
        impl From<$id> for usize {
            fn from(id: $id) -> usize {
                id.0
            }
        }
    )*};
}
table_key!(ScopeId, ResId);

#[derive(Debug, Default)]
pub struct Scope {
    pub(in crate::lang) vars: HashMap<String, Value>,
    /// Lexical parent for variable lookup.
    pub(in crate::lang) parent: Option<ScopeId>,
    /// Dynamic parent for resource defaults.
    pub(in crate::lang) dyn_parent: Option<ScopeId>,
    /// Resource defaults declared here: capitalized type -> (param, value).
    pub(in crate::lang) defaults: Vec<(String, String, Value)>,
    /// The resource that contains resources declared in this scope.
    pub(in crate::lang) container: ResId,
    /// Module name for `$module_name` and relative lookups.
    pub(in crate::lang) module: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResKind {
    Builtin,
    Define,
    Class,
    Node,
    Stage,
}

/// A resource in the catalog being built.
#[derive(Debug, Clone)]
pub struct Res {
    pub(in crate::lang) type_name: String,
    pub(in crate::lang) title: String,
    pub(in crate::lang) params: Vec<(String, Value)>,
    pub(in crate::lang) loc: Option<Loc>,
    pub(in crate::lang) kind: ResKind,
    pub(in crate::lang) virtual_: bool,
    pub(in crate::lang) exported: bool,
    pub(in crate::lang) container: Option<ResId>,
    pub(in crate::lang) tags: Vec<String>,
    /// Scope the resource was declared in (for lazily applied defaults).
    pub(in crate::lang) scope: ScopeId,
    pub(in crate::lang) evaluated: bool,
    /// Lines of relationship metaparameters written in the resource's body
    /// (catalog validation reports a missing target at that line).
    pub(in crate::lang) meta_lines: Vec<(String, u32)>,
}

/// A relationship operand resolved at the end.
#[derive(Debug, Clone)]
pub enum RelEnd {
    Refs(Vec<(String, String)>),
    /// A collector, with the left operand of the chain it ended (`A -> C`):
    /// as a source, an empty collector stands for that operand instead, so
    /// `A -> Type<||> -> B` relates A to B when nothing is collected
    /// (Puppet's empty alternative).
    Collector(usize, Option<Box<RelEnd>>),
}

#[derive(Debug, Clone)]
pub struct Collect {
    pub(in crate::lang) type_name: String,
    pub(in crate::lang) exported: bool,
    pub(in crate::lang) query: Option<Expr>,
    pub(in crate::lang) overrides: ParamOps,
    pub(in crate::lang) scope: ScopeId,
    pub(in crate::lang) matched: HashSet<ResId>,
}

/// A resource reference as (capitalized type, title).
pub type RefKey = (String, String);

/// A pending resource override: targets, operations, location.
pub type Override = (Vec<RefKey>, ParamOps, Loc);

/// An evaluated attribute operation: `name => value` or `name +> value`.
#[derive(Debug, Clone)]
pub enum ParamOp {
    Set(Value),
    Append(Value),
}

impl ParamOp {
    pub fn value(&self) -> &Value {
        match self {
            ParamOp::Set(v) | ParamOp::Append(v) => v,
        }
    }

    pub fn into_value(self) -> Value {
        match self {
            ParamOp::Set(v) | ParamOp::Append(v) => v,
        }
    }
}

/// Evaluated attribute operations in source order, one per name.
pub type ParamOps = Vec<(String, ParamOp)>;

/// Compiler state for one node.
pub struct Evaluator<'l> {
    pub(in crate::lang) loader: &'l dyn Loader,
    /// The built-in functions and hiera, from the layers above.
    library: &'l dyn Library,
    pub(in crate::lang) modulepath: Modulepath,
    pub(in crate::lang) env_dir: Option<PathBuf>,
    pub(in crate::lang) node: String,
    pub(in crate::lang) environment: String,
    pub(in crate::lang) classes: HashMap<String, Arc<Definition>>,
    pub(in crate::lang) defines: HashMap<String, Arc<Definition>>,
    pub(in crate::lang) functions: HashMap<String, Arc<FunctionDef>>,
    /// Bolt plans loaded so far (`plan` definitions), by lower-case name.
    pub(in crate::lang) plans: HashMap<String, Arc<Definition>>,
    pub(in crate::lang) type_aliases: HashMap<String, Expr>,
    pub(in crate::lang) resolving_aliases: HashSet<String>,
    /// While a definition's parameter defaults are evaluated: its scope,
    /// the parameters without a value yet, and the one being evaluated
    /// (Puppet's ParameterScope refuses to read the others).
    pub(in crate::lang) param_guard: Option<ParamGuard>,
    pub(in crate::lang) nodes: Vec<Arc<NodeDef>>,
    pub(in crate::lang) loaded_files: HashSet<PathBuf>,
    pub(in crate::lang) scopes: TiVec<ScopeId, Scope>,
    pub(in crate::lang) resources: TiVec<ResId, Res>,
    pub(in crate::lang) index: HashMap<(String, String), ResId>,
    /// Containment edges in creation order (container, contained).
    pub(in crate::lang) edges: Vec<(ResId, ResId)>,
    pub(in crate::lang) class_scopes: HashMap<String, ScopeId>,
    pub(in crate::lang) class_list: Vec<String>,
    pub(in crate::lang) pending_defines: Vec<ResId>,
    pub(in crate::lang) collectors: Vec<Collect>,
    pub(in crate::lang) overrides: Vec<Override>,
    pub(in crate::lang) relationships: Vec<(RelEnd, RelEnd, &'static str, Loc)>,
    pub(in crate::lang) depth: usize,
    pub(in crate::lang) messages: Vec<String>,
    pub(in crate::lang) hiera_cache: HashMap<PathBuf, Option<Arc<Value>>>,
    pub(in crate::lang) main_index: ResId,
    pub(in crate::lang) stage_index: ResId,
    pub(in crate::lang) node_scope: Option<ScopeId>,
    /// Module resource types (`lib/puppet/type/*.rb`): name -> namevar, or
    /// None when no module defines the type.
    pub(in crate::lang) type_cache: HashMap<String, Option<core_types::RubyType>>,
    pub(in crate::lang) facts: Value,
    /// Output buffers of templates being rendered.
    pub(in crate::lang) render_stack: Vec<String>,
    /// References passed to `realize`, applied while finishing.
    pub(in crate::lang) pending_realize: Vec<(String, String)>,
    /// Total size of resource parameter values so far.
    pub(in crate::lang) catalog_weight: usize,
    /// The global hiera layer's `hiera.yaml` (consulted before the
    /// environment layer).
    pub(in crate::lang) hiera_global: Option<PathBuf>,
    /// The compile is a network device's: the device resource types are
    /// built in ([`device_types`]).
    pub(in crate::lang) device_types: bool,
}

/// The parameters a default expression may not read yet.
#[derive(Debug, Clone)]
pub struct ParamGuard {
    pub scope: ScopeId,
    pub callee: String,
    /// Declared parameters in order, and whether each has its value.
    pub params: Vec<(String, bool)>,
    pub current: String,
}

/// Wrap a location-less error with Puppet's statement context.
pub fn in_context(e: LangError, what: &str, loc: &Loc) -> LangError {
    if e.loc.is_some() || e.kind != ErrorKind::Evaluation {
        return e;
    }
    LangError {
        kind: e.kind,
        message: format!("Error while evaluating a {what}, {}", e.message),
        loc: Some(loc.clone()),
    }
}

impl<'l> Evaluator<'l> {
    pub fn new_scope(
        &mut self,
        parent: Option<ScopeId>,
        dyn_parent: Option<ScopeId>,
        container: ResId,
    ) -> ScopeId {
        let module = parent
            .and_then(|p| self.scopes.get(p))
            .and_then(|s| s.module.clone());
        self.scopes.push_and_get_key(Scope {
            parent,
            dyn_parent,
            container,
            module,
            ..Scope::default()
        })
    }

    pub fn enter(&mut self, loc: &Loc) -> EvalResult<()> {
        self.depth += 1;
        if self.depth > MAX_EVAL_DEPTH {
            return Err(LangError::eval(
                "Maximum evaluation depth exceeded (infinite recursion?)",
                loc,
            )
            .into());
        }
        Ok(())
    }
    pub fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    pub fn lookup_var(&self, name: &str, sc: ScopeId) -> Option<Value> {
        self.lookup_var_ref(name, sc).cloned()
    }

    /// [`Self::lookup_var`] without the clone (the facts hash is big:
    /// `$facts['os']['family']` and hiera's `%{facts.os.family}` index
    /// into it by reference).
    pub fn lookup_var_ref(&self, name: &str, sc: ScopeId) -> Option<&Value> {
        if let Some(stripped) = name.strip_prefix("::") {
            if stripped.contains("::") {
                return self.lookup_qualified(stripped);
            }
            return self.scopes.first().and_then(|s| s.vars.get(stripped));
        }
        if name.contains("::") {
            return self.lookup_qualified(name);
        }
        let mut cur = Some(sc);
        let mut guard = 0;
        while let Some(id) = cur {
            let s = self.scopes.get(id)?;
            if let Some(v) = s.vars.get(name) {
                return Some(v);
            }
            cur = s.parent;
            guard += 1;
            if guard > 10_000 {
                break;
            }
        }
        None
    }

    /// `$class::var`: the class's own variable, else its inherited
    /// classes' (Puppet's lookup_qualified_variable walks inherited scopes).
    fn lookup_qualified(&self, name: &str) -> Option<&Value> {
        let (class, var) = name.rsplit_once("::")?;
        let mut sc = *self.class_scopes.get(class)?;
        for _ in 0..1000 {
            let s = self.scopes.get(sc)?;
            if let Some(v) = s.vars.get(var) {
                return Some(v);
            }
            // A class scope's parent is its inherited class's scope, or the
            // node or top scope (where the walk stops).
            match s.parent {
                Some(p) if p != ScopeId::TOP && Some(p) != self.node_scope => sc = p,
                _ => return None,
            }
        }
        None
    }

    pub fn set_var(&mut self, name: &str, v: Value, sc: ScopeId, loc: &Loc) -> EvalResult<()> {
        if name.contains("::") {
            return Err(LangError::eval(
                format!("Cannot assign to a fully qualified variable '${name}'"),
                loc,
            )
            .into());
        }
        let Some(scope) = self.scopes.get_mut(sc) else {
            return Err(LangError::eval("internal: bad scope", loc).into());
        };
        let numeric = name.chars().all(|c| c.is_ascii_digit());
        if !numeric && scope.vars.contains_key(name) {
            let builtin = sc == ScopeId::TOP
                && (matches!(
                    name,
                    "facts"
                        | "trusted"
                        | "name"
                        | "title"
                        | "environment"
                        | "clientcert"
                        | "module_name"
                ) || matches!(&self.facts, Value::Hash(h) if crate::lang::values::value::hash_get_str(h, name).is_some()))
                || matches!(name, "title" | "name");
            let msg = if builtin {
                format!("Cannot reassign built in (or already assigned) variable '${name}'")
            } else {
                format!("Cannot reassign variable '${name}'")
            };
            return Err(LangError::eval(msg, loc).into());
        }
        scope.vars.insert(name.to_string(), v);
        Ok(())
    }
}
