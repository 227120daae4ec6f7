//! Evaluation of plain expressions: literals, variables and assignment
//! (with destructuring), blocks, if/unless/case/selectors, type names and
//! regex matches with their `$0..$n` captures.

use crate::lang::error::{LangError, Loc};
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Evaluator, ScopeId, in_context};
use crate::lang::loader;
use crate::lang::syntax::ast::{Expr, ExprKind, UnOp};
use crate::lang::values::regex::RubyRegex;
use crate::lang::values::types::{self, PType, capitalize};
use crate::lang::values::value::Value;

impl<'l> Evaluator<'l> {
    pub fn eval_block(&mut self, body: &[Expr], sc: ScopeId) -> EvalResult<Value> {
        let mut last = Value::Undef;
        for e in body {
            last = self.eval(e, sc)?;
        }
        Ok(last)
    }

    pub fn eval(&mut self, e: &Expr, sc: ScopeId) -> EvalResult<Value> {
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
            && let Some(excess) = crate::lang::values::value::excess(v)
        {
            return Err(LangError::eval(excess.to_string(), &e.loc).into());
        }
        r
    }

    fn eval_inner(&mut self, e: &Expr, sc: ScopeId) -> EvalResult<Value> {
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
            ExprKind::Var(name) => {
                if let Some(g) = &self.param_guard
                    && g.scope == sc
                    && let Some(to) = g.params.iter().position(|(n, set)| n == name && !set)
                {
                    let from = g.params.iter().position(|(n, _)| *n == g.current);
                    let msg = if from.is_some_and(|f| to < f) {
                        format!("{}: expects a value for parameter ${name}", g.callee)
                    } else {
                        format!(
                            "{}: default expression for ${} tries to illegally access not yet evaluated ${name}",
                            g.callee, g.current
                        )
                    };
                    return Err(crate::lang::error::plain(msg).into());
                }
                self.lookup_var(name, sc).unwrap_or(Value::Undef)
            }
            ExprKind::Array(items) => Value::Array(self.eval_args(items, sc)?),
            ExprKind::Hash(pairs) => {
                let mut h = Vec::new();
                for (k, v) in pairs {
                    let k = self.eval(k, sc)?;
                    let v = self.eval(v, sc)?;
                    crate::lang::values::value::hash_set(&mut h, k, v);
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
                        Value::Str(ref s) => match crate::lang::values::value::str_to_num(s) {
                            Some(Value::Int(i)) => Value::Int(-i),
                            Some(Value::Float(f)) => Value::Float(-f),
                            _ => {
                                return Err(LangError::eval(
                                    format!("The value '{s}' cannot be converted to Numeric"),
                                    loc,
                                )
                                .into());
                            }
                        },
                        other => {
                            return Err(LangError::eval(
                                format!("Operator '-' is not applicable to {}", other.type_name()),
                                loc,
                            )
                            .into());
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
                let ks = self.eval_args(keys, sc)?;
                // `$hash['key']`: index the variable by reference instead of
                // cloning it whole (the facts hash, big class parameters).
                if let ExprKind::Var(name) = &target.kind
                    && self.param_guard.is_none()
                    && let [Value::Str(k)] = ks.as_slice()
                    && let Some(Value::Hash(h)) = self.lookup_var_ref(name, sc)
                {
                    crate::lang::values::value::hash_get_str(h, k)
                        .cloned()
                        .unwrap_or(Value::Undef)
                } else {
                    let t = self.eval(target, sc)?;
                    self.access(t, &ks, loc)?
                }
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
                let recv = self.eval(recv, sc)?;
                let rest = self.eval_args(args, sc)?;
                if let Some(v) = self.plan_method(&recv, name, &rest, lambda.as_deref(), sc, loc) {
                    return v;
                }
                let mut vals = vec![recv];
                vals.extend(rest);
                self.call_method(name, vals, lambda.as_deref(), sc, loc)?
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
                        )
                        .into());
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
                .map_err(|u| u.map_error(|e| in_context(e, "Resource Statement", loc)))?,
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
            | ExprKind::TypeAlias(..)
            | ExprKind::PlanDef(_) => Value::Undef,
            ExprKind::Apply { args, body } => {
                let vals = self.eval_args(args, sc)?;
                self.eval_apply(vals, body, sc, loc)?
            }
        })
    }

    /// Evaluate arguments, expanding `*splat` of arrays.
    pub fn eval_args(&mut self, args: &[Expr], sc: ScopeId) -> EvalResult<Vec<Value>> {
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

    fn assign(&mut self, lhs: &Expr, v: Value, sc: ScopeId, op_loc: &Loc) -> EvalResult<()> {
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
                        )
                        .into());
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
                    ).into());
                }
                for (t, v) in targets.iter().zip(vals) {
                    self.assign(t, v, sc, op_loc)?;
                }
                Ok(())
            }
            _ => {
                Err(LangError::eval("Illegal attempt to assign to a non-variable", &lhs.loc).into())
            }
        }
    }

    /// Resolve a capitalized name to a type (built-in, alias or resource type).
    pub fn resolve_type_name(&mut self, name: &str, loc: &Loc) -> EvalResult<PType> {
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
            let v = self.eval(&expr, ScopeId::TOP);
            self.resolving_aliases.remove(&key);
            return match v? {
                Value::Type(t) => Ok(PType::Alias(name.to_string(), Box::new(t))),
                other => Err(LangError::eval(
                    format!(
                        "Type alias '{name}' does not resolve to a type, got {}",
                        other.type_name()
                    ),
                    loc,
                )
                .into()),
            };
        }
        // ferry's own Stdlib aliases stand in only when stdlib is not
        // installed: with it, a name its types/ lack is unknown, as in
        // Puppet (Debian's stdlib has no Stdlib::Ip_address).
        if let Some(t) = types::stdlib_alias(name)
            && loader::module_dir(self.loader, &self.modulepath, "stdlib").is_none()
        {
            return Ok(t);
        }
        // Any other name must be a resource type (built in, a module's
        // Ruby type or a defined type): Puppet's QualifiedReference.
        // (Puppet's own types ferry does not model keep the old fallback.)
        let unmodeled = matches!(
            name,
            "Binary" | "URI" | "Object" | "TypeSet" | "Init" | "Runtime" | "Unit" | "Node"
        );
        if !unmodeled && self.resource_kind(&key)?.is_none() {
            return Err(LangError::eval(format!("Resource type not found: {name}"), loc).into());
        }
        Ok(PType::Resource(Some(capitalize(name)), None))
    }

    /// Does case/selector option `o` match value `v`?
    pub fn case_match(&mut self, v: &Value, o: &Value, sc: ScopeId, loc: &Loc) -> EvalResult<bool> {
        Ok(match o {
            Value::Regex(r) => match v {
                Value::Str(s) => self.regex_match(r, s, sc, loc)?,
                _ => false,
            },
            Value::Type(t) if !matches!(v, Value::Type(_)) => types::is_instance(t, v),
            Value::Array(opts) if !matches!(v, Value::Array(_)) => {
                let mut any = false;
                for x in opts {
                    if crate::lang::values::value::values_equal(v, x) {
                        any = true;
                        break;
                    }
                }
                any
            }
            _ => crate::lang::values::value::values_equal(v, o),
        })
    }

    /// Match and set `$0..$n` in scope `sc` on success.
    pub fn regex_match(
        &mut self,
        pattern: &str,
        s: &str,
        sc: ScopeId,
        loc: &Loc,
    ) -> EvalResult<bool> {
        let re = RubyRegex::new(pattern).map_err(|e| LangError::from(e).at(loc))?;
        match re.captures(s) {
            Some(caps) => {
                if let Some(scope) = self.scopes.get_mut(sc) {
                    scope
                        .vars
                        .retain(|k, _| !k.chars().all(|c| c.is_ascii_digit()));
                    for (i, c) in caps.into_iter().enumerate() {
                        let val = c.map_or(Value::Undef, Value::Str);
                        scope.vars.insert(i.to_string(), val);
                    }
                }
                Ok(true)
            }
            None => Ok(false),
        }
    }
}
