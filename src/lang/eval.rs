//! The evaluator's state (scopes, definitions, the growing catalog) and the
//! evaluation of plain expressions: literals, variables, control flow,
//! calls and lambdas. Operators live in `eval_ops.rs`, catalog-building
//! forms in `eval_res.rs`, finishing in `eval_finish.rs`.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use crate::lang::ast::{Definition, Expr, ExprKind, FunctionDef, NodeDef, UnOp};
use crate::lang::error::{ErrorKind, LResult, LangError, Loc};
use crate::lang::loader::Loader;
use crate::lang::types::{self, PType, capitalize};
use crate::lang::value::Value;

pub use crate::lang::puppet_regex::compile_regex;

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
    pub overrides: Vec<(String, Value, bool)>,
    pub scope: ScopeId,
    pub loc: Loc,
    pub matched: HashSet<usize>,
}

/// A resource reference as (capitalized type, title).
pub type RefKey = (String, String);

/// A pending resource override: targets, operations (name, value, append), location.
pub type Override = (Vec<RefKey>, Vec<(String, Value, bool)>, Loc);

/// Compiler state for one node.
pub struct Evaluator<'l> {
    pub loader: &'l dyn Loader,
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
    /// Value carried by next()/break()/return().
    pub control_value: Value,
    /// Total size of resource parameter values so far.
    pub catalog_weight: usize,
    /// The global hiera layer's `hiera.yaml` (consulted before the
    /// environment layer).
    pub hiera_global: Option<PathBuf>,
}

pub fn plain(msg: impl Into<String>) -> LangError {
    LangError {
        kind: ErrorKind::Evaluation,
        message: msg.into(),
        loc: None,
    }
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

    pub fn enter(&mut self, loc: &Loc) -> LResult<()> {
        self.depth += 1;
        if self.depth > MAX_EVAL_DEPTH {
            return Err(LangError::eval(
                "Maximum evaluation depth exceeded (infinite recursion?)",
                loc,
            ));
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

    pub fn set_var(&mut self, name: &str, v: Value, sc: ScopeId, loc: &Loc) -> LResult<()> {
        if name.contains("::") {
            return Err(LangError::eval(
                format!("Cannot assign to a fully qualified variable '${name}'"),
                loc,
            ));
        }
        let Some(scope) = self.scopes.get_mut(sc) else {
            return Err(LangError::eval("internal: bad scope", loc));
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
                ) || matches!(&self.facts, Value::Hash(h) if crate::lang::value::hash_get_str(h, name).is_some()))
                || matches!(name, "title" | "name");
            let msg = if builtin {
                format!("Cannot reassign built in (or already assigned) variable '${name}'")
            } else {
                format!("Cannot reassign variable '${name}'")
            };
            return Err(LangError::eval(msg, loc));
        }
        scope.vars.insert(name.to_string(), v);
        Ok(())
    }

    pub fn eval_block(&mut self, body: &[Expr], sc: ScopeId) -> LResult<Value> {
        let mut last = Value::Undef;
        for e in body {
            last = self.eval(e, sc)?;
        }
        Ok(last)
    }

    pub fn eval(&mut self, e: &Expr, sc: ScopeId) -> LResult<Value> {
        self.enter(&e.loc)?;
        let r = self.eval_inner(e, sc);
        self.leave();
        // Expressions that build values are checked against the size and
        // depth bounds.
        if let Ok(v) = &r
            && matches!(
                e.kind,
                ExprKind::Array(_)
                    | ExprKind::Hash(_)
                    | ExprKind::Interp(_)
                    | ExprKind::Binary(..)
                    | ExprKind::Access(..)
                    | ExprKind::Call { .. }
                    | ExprKind::MethodCall { .. }
            )
            && matches!(
                v,
                Value::Array(_)
                    | Value::Hash(_)
                    | Value::Str(_)
                    | Value::Type(_)
                    | Value::Sensitive(_)
                    | Value::Iterator(_)
                    | Value::Rich(_)
            )
            && let Some(excess) = crate::lang::value::excess(v)
        {
            return Err(LangError::eval(excess.to_string(), &e.loc));
        }
        r
    }

    fn eval_inner(&mut self, e: &Expr, sc: ScopeId) -> LResult<Value> {
        let loc = &e.loc;
        Ok(match &e.kind {
            ExprKind::Undef => Value::Undef,
            ExprKind::Default => Value::Default,
            ExprKind::Bool(b) => Value::Bool(*b),
            ExprKind::Int(i) => Value::Int(*i),
            ExprKind::Float(f) => Value::Float(*f),
            ExprKind::Str(s) => Value::Str(s.clone()),
            ExprKind::Bare(s) => Value::Str(s.clone()),
            ExprKind::Regex(r) => Value::Regex(r.clone()),
            ExprKind::Interp(parts) => {
                let mut s = String::new();
                for p in parts {
                    let v = self.eval(p, sc)?;
                    s.push_str(&v.to_s());
                }
                Value::Str(s)
            }
            ExprKind::TypeRef(name) => Value::Type(self.resolve_type_name(name, loc)?),
            ExprKind::Var(name) => self.lookup_var(name, sc).unwrap_or(Value::Undef),
            ExprKind::Array(items) => Value::Array(self.eval_args(items, sc)?),
            ExprKind::Hash(pairs) => {
                let mut h = Vec::new();
                for (k, v) in pairs {
                    let k = self.eval(k, sc)?;
                    let v = self.eval(v, sc)?;
                    crate::lang::value::hash_set(&mut h, k, v);
                }
                Value::Hash(h)
            }
            ExprKind::Unary(op, inner) => {
                let v = self.eval(inner, sc)?;
                match op {
                    UnOp::Not => Value::Bool(!v.truthy()),
                    UnOp::Splat => v,
                    UnOp::Neg => match v {
                        Value::Int(i) => Value::Int(i.wrapping_neg()),
                        Value::Float(f) => Value::Float(-f),
                        Value::Str(ref s) => match crate::lang::eval_ops::str_to_num(s) {
                            Some(Value::Int(i)) => Value::Int(-i),
                            Some(Value::Float(f)) => Value::Float(-f),
                            _ => {
                                return Err(LangError::eval(
                                    format!("The value '{s}' cannot be converted to Numeric"),
                                    loc,
                                ));
                            }
                        },
                        other => {
                            return Err(LangError::eval(
                                format!("Operator '-' is not applicable to {}", other.type_name()),
                                loc,
                            ));
                        }
                    },
                }
            }
            ExprKind::Binary(op, l, r) => self.eval_binary(*op, l, r, sc, loc)?,
            ExprKind::Assign(lhs, rhs) => {
                let v = self.eval(rhs, sc)?;
                self.assign(lhs, v.clone(), sc, loc)?;
                v
            }
            ExprKind::Access(target, keys) => {
                let t = self.eval(target, sc)?;
                let ks = self.eval_args(keys, sc)?;
                self.access(t, &ks, loc)?
            }
            ExprKind::Call { name, args, lambda } => {
                let vals = self.eval_args(args, sc)?;
                self.call_function(name, vals, lambda.as_deref(), sc, loc)?
            }
            ExprKind::MethodCall {
                recv,
                name,
                args,
                lambda,
            } => {
                let mut vals = vec![self.eval(recv, sc)?];
                vals.extend(self.eval_args(args, sc)?);
                self.call_function(name, vals, lambda.as_deref(), sc, loc)?
            }
            ExprKind::If { cond, then, els } => {
                if self.eval(cond, sc)?.truthy() {
                    self.eval_block(then, sc)?
                } else if let Some(els) = els {
                    self.eval_block(els, sc)?
                } else {
                    Value::Undef
                }
            }
            ExprKind::Unless { cond, then, els } => {
                if !self.eval(cond, sc)?.truthy() {
                    self.eval_block(then, sc)?
                } else if let Some(els) = els {
                    self.eval_block(els, sc)?
                } else {
                    Value::Undef
                }
            }
            ExprKind::Case { subject, options } => {
                let v = self.eval(subject, sc)?;
                let mut default_body = None;
                for opt in options {
                    for ov in &opt.values {
                        if matches!(ov.kind, ExprKind::Default) {
                            default_body = Some(&opt.body);
                            continue;
                        }
                        let o = self.eval(ov, sc)?;
                        if self.case_match(&v, &o, sc, &ov.loc)? {
                            return self.eval_block(&opt.body, sc);
                        }
                    }
                }
                match default_body {
                    Some(b) => self.eval_block(b, sc)?,
                    None => Value::Undef,
                }
            }
            ExprKind::Selector { subject, options } => {
                let v = self.eval(subject, sc)?;
                let mut default = None;
                for (k, val) in options {
                    if matches!(k.kind, ExprKind::Default) {
                        default = Some(val);
                        continue;
                    }
                    let o = self.eval(k, sc)?;
                    if self.case_match(&v, &o, sc, &k.loc)? {
                        return self.eval(val, sc);
                    }
                }
                match default {
                    Some(d) => self.eval(d, sc)?,
                    None => {
                        return Err(LangError::eval(
                            format!(
                                "No matching entry for selector parameter with value '{}'",
                                v.to_s()
                            ),
                            loc,
                        ));
                    }
                }
            }
            ExprKind::Relationship(op, l, r) => self.eval_relationship(*op, l, r, sc, loc)?,
            ExprKind::Resource {
                virt,
                type_name,
                bodies,
            } => self
                .eval_resource(*virt, type_name, bodies, sc, loc)
                .map_err(|e| in_context(e, "Resource Statement", loc))?,
            ExprKind::ResourceDefaults { type_name, ops } => {
                self.eval_defaults(type_name, ops, sc, loc)?
            }
            ExprKind::ResourceOverride { target, ops } => {
                self.eval_override(target, ops, sc, loc)?
            }
            ExprKind::Collector {
                type_name,
                exported,
                query,
                overrides,
            } => self.eval_collector(type_name, *exported, query.as_deref(), overrides, sc, loc)?,
            ExprKind::Block(body) => self.eval_block(body, sc)?,
            ExprKind::ClassDef(_)
            | ExprKind::DefineDef(_)
            | ExprKind::NodeDef(_)
            | ExprKind::FunctionDef(_)
            | ExprKind::TypeAlias(..) => Value::Undef,
        })
    }

    /// Evaluate arguments, expanding `*splat` of arrays.
    pub fn eval_args(&mut self, args: &[Expr], sc: ScopeId) -> LResult<Vec<Value>> {
        let mut out = Vec::with_capacity(args.len());
        for a in args {
            if let ExprKind::Unary(UnOp::Splat, inner) = &a.kind {
                match self.eval(inner, sc)? {
                    Value::Array(items) => out.extend(items),
                    other => out.push(other),
                }
            } else {
                out.push(self.eval(a, sc)?);
            }
        }
        Ok(out)
    }

    fn assign(&mut self, lhs: &Expr, v: Value, sc: ScopeId, op_loc: &Loc) -> LResult<()> {
        match &lhs.kind {
            ExprKind::Var(name) => self.set_var(name, v, sc, op_loc),
            ExprKind::Array(targets) => {
                let vals = match v {
                    Value::Array(a) => a,
                    other => {
                        return Err(LangError::eval(
                            format!(
                                "Cannot assign a {} to multiple variables",
                                other.type_name()
                            ),
                            &lhs.loc,
                        ));
                    }
                };
                if vals.len() != targets.len() {
                    return Err(LangError::eval(
                        format!(
                            "Mismatched number of assignable entries and values, expected {}, got {}",
                            targets.len(),
                            vals.len()
                        ),
                        &lhs.loc,
                    ));
                }
                for (t, v) in targets.iter().zip(vals) {
                    self.assign(t, v, sc, op_loc)?;
                }
                Ok(())
            }
            _ => Err(LangError::eval(
                "Illegal attempt to assign to a non-variable",
                &lhs.loc,
            )),
        }
    }

    /// Resolve a capitalized name to a type (built-in, alias or resource type).
    pub fn resolve_type_name(&mut self, name: &str, loc: &Loc) -> LResult<PType> {
        let name = name.trim_start_matches("::");
        if let Some(t) = types::builtin_type(name) {
            return Ok(t);
        }
        let key = name.to_lowercase();
        if !self.type_aliases.contains_key(&key) {
            self.autoload_type_alias(&key);
        }
        if let Some(expr) = self.type_aliases.get(&key).cloned() {
            if !self.resolving_aliases.insert(key.clone()) {
                return Ok(PType::Alias(name.to_string(), Box::new(PType::Any)));
            }
            let v = self.eval(&expr, 0);
            self.resolving_aliases.remove(&key);
            return match v? {
                Value::Type(t) => Ok(PType::Alias(name.to_string(), Box::new(t))),
                other => Err(LangError::eval(
                    format!(
                        "Type alias '{name}' does not resolve to a type, got {}",
                        other.type_name()
                    ),
                    loc,
                )),
            };
        }
        if let Some(t) = types::stdlib_alias(name) {
            return Ok(t);
        }
        Ok(PType::Resource(Some(capitalize(name)), None))
    }

    /// Does case/selector option `o` match value `v`?
    pub fn case_match(&mut self, v: &Value, o: &Value, sc: ScopeId, loc: &Loc) -> LResult<bool> {
        Ok(match o {
            Value::Regex(r) => match v {
                Value::Str(s) => self.regex_match(r, s, sc, loc)?,
                _ => false,
            },
            Value::Type(t) if !matches!(v, Value::Type(_)) => types::is_instance(t, v),
            Value::Array(opts) if !matches!(v, Value::Array(_)) => {
                let mut any = false;
                for x in opts {
                    if crate::lang::value::values_equal(v, x) {
                        any = true;
                        break;
                    }
                }
                any
            }
            _ => crate::lang::value::values_equal(v, o),
        })
    }

    /// Match and set `$0..$n` in scope `sc` on success.
    pub fn regex_match(&mut self, pattern: &str, s: &str, sc: ScopeId, loc: &Loc) -> LResult<bool> {
        let re = compile_regex(pattern).map_err(|m| LangError::eval(m, loc))?;
        match re.captures(s) {
            Some(caps) => {
                if let Some(scope) = self.scopes.get_mut(sc) {
                    scope
                        .vars
                        .retain(|k, _| !k.chars().all(|c| c.is_ascii_digit()));
                    for (i, c) in caps.iter().enumerate() {
                        let val = c.map_or(Value::Undef, |m| Value::Str(m.as_str().to_string()));
                        scope.vars.insert(i.to_string(), val);
                    }
                }
                Ok(true)
            }
            None => Ok(false),
        }
    }
}
