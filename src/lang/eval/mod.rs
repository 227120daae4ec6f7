//! The evaluator: its state (scopes, definitions, the growing catalog),
//! variable scoping and the depth bound. The evaluation itself is split by
//! idea: [`expr`] (plain expressions), [`operators`], `calls` (lambdas,
//! Puppet-language functions and the [`Library`] of built-in functions),
//! [`resources`] (resource expressions, defaults, overrides, collectors,
//! relationships), `classes` (classes, defined types, nodes, autoloading),
//! [`core_types`] (Puppet's built-in resource types) and [`finish`]
//! (setting up and finishing a compilation). Every step returns
//! [`control::EvalResult`]: an error or a `next()`/`break()`/`return()`
//! unwinding, one enum ([`control::Unwind`]) caught where Puppet ends it.

mod calls;
mod classes;
pub mod control;
pub mod core_types;
pub mod expr;
pub mod finish;
pub mod operators;
pub mod resources;

pub use calls::{Call, Library};
pub use finish::{Output, OutputResource, ResId};

use control::EvalResult;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use crate::lang::error::{ErrorKind, LangError, Loc};
use crate::lang::loader::Loader;
use crate::lang::syntax::ast::{Definition, Expr, FunctionDef, NodeDef};
use crate::lang::values::value::Value;

/// Maximum evaluation nesting (calls, includes, lambdas).
pub const MAX_EVAL_DEPTH: usize = 300;

pub type ScopeId = usize;

#[derive(Debug, Default)]
pub struct Scope {
    pub vars: HashMap<String, Value>,
    /// Lexical parent for variable lookup.
    pub parent: Option<ScopeId>,
    /// Dynamic parent for resource defaults.
    pub dyn_parent: Option<ScopeId>,
    /// Resource defaults declared here: capitalized type -> (param, value).
    pub defaults: Vec<(String, String, Value)>,
    /// Index of the resource that contains resources declared in this scope.
    pub container: usize,
    /// Module name for `$module_name` and relative lookups.
    pub module: Option<String>,
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
    pub type_name: String,
    pub title: String,
    pub params: Vec<(String, Value)>,
    pub loc: Option<Loc>,
    pub kind: ResKind,
    pub virtual_: bool,
    pub exported: bool,
    pub container: Option<usize>,
    pub tags: Vec<String>,
    /// Scope the resource was declared in (for lazily applied defaults).
    pub scope: ScopeId,
    pub evaluated: bool,
}

/// A relationship operand resolved at the end.
#[derive(Debug, Clone)]
pub enum RelEnd {
    Refs(Vec<(String, String)>),
    Collector(usize),
}

#[derive(Debug, Clone)]
pub struct Collect {
    pub type_name: String,
    pub exported: bool,
    pub query: Option<Expr>,
    pub overrides: ParamOps,
    pub scope: ScopeId,
    pub loc: Loc,
    pub matched: HashSet<usize>,
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
    pub loader: &'l dyn Loader,
    /// The built-in functions and hiera, from the layers above.
    library: &'static dyn Library,
    pub modulepath: Vec<PathBuf>,
    pub env_dir: Option<PathBuf>,
    pub node: String,
    pub environment: String,
    pub classes: HashMap<String, Arc<Definition>>,
    pub defines: HashMap<String, Arc<Definition>>,
    pub functions: HashMap<String, Arc<FunctionDef>>,
    pub type_aliases: HashMap<String, Expr>,
    pub resolving_aliases: HashSet<String>,
    pub nodes: Vec<Arc<NodeDef>>,
    pub loaded_files: HashSet<PathBuf>,
    pub scopes: Vec<Scope>,
    pub resources: Vec<Res>,
    pub index: HashMap<(String, String), usize>,
    /// Containment edges in creation order (container, contained).
    pub edges: Vec<(usize, usize)>,
    pub class_scopes: HashMap<String, ScopeId>,
    pub class_list: Vec<String>,
    pub pending_defines: Vec<usize>,
    pub collectors: Vec<Collect>,
    pub overrides: Vec<Override>,
    pub relationships: Vec<(RelEnd, RelEnd, &'static str, Loc)>,
    pub depth: usize,
    pub messages: Vec<String>,
    pub hiera_cache: HashMap<PathBuf, Option<Value>>,
    pub main_index: usize,
    pub stage_index: usize,
    pub node_scope: Option<ScopeId>,
    /// Module resource types (`lib/puppet/type/*.rb`): name -> namevar, or
    /// None when no module defines the type.
    pub type_cache: HashMap<String, Option<String>>,
    pub facts: Value,
    /// Output buffers of templates being rendered.
    pub render_stack: Vec<String>,
    /// References passed to `realize`, applied while finishing.
    pub pending_realize: Vec<(String, String)>,
    /// Total size of resource parameter values so far.
    pub catalog_weight: usize,
    /// The global hiera layer's `hiera.yaml` (consulted before the
    /// environment layer).
    pub hiera_global: Option<PathBuf>,
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
        container: usize,
    ) -> ScopeId {
        let module = parent
            .and_then(|p| self.scopes.get(p))
            .and_then(|s| s.module.clone());
        self.scopes.push(Scope {
            parent,
            dyn_parent,
            container,
            module,
            ..Scope::default()
        });
        self.scopes.len() - 1
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
        if let Some(stripped) = name.strip_prefix("::") {
            if stripped.contains("::") {
                return self.lookup_qualified(stripped);
            }
            return self
                .scopes
                .first()
                .and_then(|s| s.vars.get(stripped))
                .cloned();
        }
        if name.contains("::") {
            return self.lookup_qualified(name);
        }
        let mut cur = Some(sc);
        let mut guard = 0;
        while let Some(id) = cur {
            let s = self.scopes.get(id)?;
            if let Some(v) = s.vars.get(name) {
                return Some(v.clone());
            }
            cur = s.parent;
            guard += 1;
            if guard > 10_000 {
                break;
            }
        }
        None
    }

    fn lookup_qualified(&self, name: &str) -> Option<Value> {
        let (class, var) = name.rsplit_once("::")?;
        let sc = *self.class_scopes.get(class)?;
        self.scopes.get(sc).and_then(|s| s.vars.get(var)).cloned()
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
            let builtin = sc == 0
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
