//! Bolt plans in the evaluator: finding `plan` definitions (autoloaded
//! from `<module>/plans/<name>.pp`, `init.pp` for the module's own plan),
//! the check Puppet makes with tasks enabled (no catalog statements outside
//! an `apply` block, no `apply` inside one), running a plan with named
//! arguments (types checked, defaults, `return`), the methods of the plan
//! objects (`$results.ok_set`, `$result.value`...) and `apply` blocks,
//! which go to the [`Library`](crate::lang::eval::Library): only a plan
//! runner can apply a catalog.
//!
//! No plan function lives here: `run_command` and the others are the plan
//! runner's (`plan::puppet`), reached through the library like any other
//! function.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::lang::error::{LResult, LangError, Loc, plain};
use crate::lang::eval::control::{EvalResult, Unwind};
use crate::lang::eval::{ApplyCall, Evaluator, ScopeId};
use crate::lang::loader::{Loader, module_dir};
use crate::lang::modulepath::Modulepath;
use crate::lang::syntax::ast::{Definition, Expr, ExprKind, Lambda};
use crate::lang::values::plan::{PlanObject, as_object, value};
use crate::lang::values::types::PType;
use crate::lang::values::value::Value;

/// The file that should define plan `name` (`mod::a::b` →
/// `<mod>/plans/a/b.pp`, `mod` → `<mod>/plans/init.pp`), if it exists.
pub fn plan_file(loader: &dyn Loader, modulepath: &Modulepath, name: &str) -> Option<PathBuf> {
    let mut segs = name.split("::");
    let module = segs.next()?;
    let rest: Vec<&str> = segs.collect();
    if rest
        .iter()
        .any(|s| s.is_empty() || !s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
    {
        return None;
    }
    let mut p = module_dir(loader, modulepath, module)?.join("plans");
    if rest.is_empty() {
        p.push("init.pp");
    } else {
        for s in &rest {
            p.push(s);
        }
        p.set_extension("pp");
    }
    loader.is_file(&p).then_some(p)
}

/// The plan name a file under `<module>/plans/` defines (`a/b.pp` in
/// module `m` is `m::a::b`, `init.pp` is `m`).
pub fn plan_name_for(module: &str, relative: &Path) -> Option<String> {
    let mut segs: Vec<String> = Vec::new();
    for c in relative.with_extension("").components() {
        segs.push(c.as_os_str().to_str()?.to_string());
    }
    if segs.len() == 1 && segs.first().is_some_and(|s| s == "init") {
        return Some(module.to_string());
    }
    Some(
        std::iter::once(module.to_string())
            .chain(segs)
            .collect::<Vec<_>>()
            .join("::"),
    )
}

/// Puppet's label of a catalog statement, for the tasks check.
fn catalog_statement(e: &Expr) -> Option<String> {
    Some(match &e.kind {
        ExprKind::Resource { .. } => "A Resource Statement".into(),
        ExprKind::ResourceDefaults { .. } => "A Resource Defaults Expression".into(),
        ExprKind::ResourceOverride { .. } => "A Resource Override".into(),
        ExprKind::Collector { exported, .. } => {
            if *exported {
                "An Exported Query".into()
            } else {
                "A Virtual Query".into()
            }
        }
        ExprKind::Relationship(op, ..) => {
            let text = match op {
                crate::lang::syntax::ast::RelOp::Before => "->",
                crate::lang::syntax::ast::RelOp::Notify => "~>",
                crate::lang::syntax::ast::RelOp::Require => "<-",
                crate::lang::syntax::ast::RelOp::Subscribe => "<~",
            };
            format!("A '{text}' expression")
        }
        ExprKind::NodeDef(_) => "A Node Definition".into(),
        ExprKind::ClassDef(_) => "A Host Class Definition".into(),
        ExprKind::DefineDef(_) => "A 'define' expression".into(),
        _ => return None,
    })
}

/// The expressions directly inside `e`, with the lambdas' bodies.
fn lambda_parts(l: &Option<Box<Lambda>>) -> Vec<&Expr> {
    l.as_ref().map_or(Vec::new(), |l| {
        l.body
            .iter()
            .chain(l.params.iter().filter_map(|p| p.default.as_ref()))
            .collect()
    })
}

fn children(e: &Expr) -> Vec<&Expr> {
    let lambda = lambda_parts;
    match &e.kind {
        ExprKind::Interp(v) | ExprKind::Array(v) | ExprKind::Block(v) => v.iter().collect(),
        ExprKind::Hash(pairs) => pairs.iter().flat_map(|(k, v)| [k, v]).collect(),
        ExprKind::Unary(_, x) => vec![x],
        ExprKind::Binary(_, a, b) | ExprKind::Assign(a, b) | ExprKind::Relationship(_, a, b) => {
            vec![a, b]
        }
        ExprKind::Access(x, keys) => std::iter::once(&**x).chain(keys).collect(),
        ExprKind::Call {
            args, lambda: l, ..
        } => args.iter().chain(lambda(l)).collect(),
        ExprKind::MethodCall {
            recv,
            args,
            lambda: l,
            ..
        } => std::iter::once(&**recv)
            .chain(args)
            .chain(lambda(l))
            .collect(),
        ExprKind::If { cond, then, els } | ExprKind::Unless { cond, then, els } => {
            std::iter::once(&**cond)
                .chain(then)
                .chain(els.iter().flatten())
                .collect()
        }
        ExprKind::Case { subject, options } => std::iter::once(&**subject)
            .chain(options.iter().flat_map(|o| o.values.iter().chain(&o.body)))
            .collect(),
        ExprKind::Selector { subject, options } => std::iter::once(&**subject)
            .chain(options.iter().flat_map(|(k, v)| [k, v]))
            .collect(),
        ExprKind::Apply { args, body } => args.iter().chain(body.iter()).collect(),
        _ => Vec::new(),
    }
}

/// The check Puppet makes on a plan with tasks enabled: catalog
/// statements only inside an `apply` block, and no `apply` within one.
pub fn check_plan(def: &Definition) -> LResult<()> {
    fn walk(e: &Expr, in_apply: bool) -> LResult<()> {
        if let ExprKind::Apply { args, body } = &e.kind {
            if in_apply {
                return Err(LangError::syntax(
                    "An 'apply' expression is not available when compiling a catalog",
                    e.loc.clone(),
                ));
            }
            args.iter().try_for_each(|a| walk(a, false))?;
            return body.iter().try_for_each(|b| walk(b, true));
        }
        if !in_apply && let Some(what) = catalog_statement(e) {
            return Err(LangError::syntax(
                format!("{what} is only available when compiling a catalog"),
                e.loc.clone(),
            ));
        }
        if in_apply {
            // Definitions and resources are fine in an apply block; their
            // bodies are the catalog's business.
            return match &e.kind {
                ExprKind::ClassDef(_) | ExprKind::DefineDef(_) | ExprKind::NodeDef(_) => Ok(()),
                _ => children(e).into_iter().try_for_each(|c| walk(c, true)),
            };
        }
        children(e).into_iter().try_for_each(|c| walk(c, in_apply))
    }
    def.body.iter().try_for_each(|e| walk(e, false))
}

impl<'l> Evaluator<'l> {
    /// The plan `name` (`mod::name`, or `mod` for `mod/plans/init.pp`),
    /// loaded from the modulepath and checked; `None` when no file defines it.
    pub fn find_plan(&mut self, name: &str) -> LResult<Option<Arc<Definition>>> {
        let key = name.trim_start_matches("::").to_lowercase();
        if let Some(d) = self.plans.get(&key) {
            return Ok(Some(d.clone()));
        }
        let Some(path) = plan_file(self.loader, &self.modulepath, &key) else {
            return Ok(None);
        };
        self.load_file(&path)?;
        match self.plans.get(&key).cloned() {
            Some(d) => {
                check_plan(&d)?;
                Ok(Some(d))
            }
            None => Err(LangError::load(format!(
                "{} does not define plan {key} (it must hold `plan {key}(...) {{ ... }}`)",
                path.display()
            ))),
        }
    }

    /// Runs plan `def` with named arguments: unknown names and missing or
    /// mistyped values are errors, defaults fill the rest, and `return()`
    /// ends the plan with its value (else the plan's value is undef).
    pub fn run_plan(
        &mut self,
        def: &Definition,
        mut args: Vec<(String, Value)>,
        loc: &Loc,
    ) -> EvalResult<Value> {
        let scope = self.new_scope(Some(ScopeId::TOP), Some(ScopeId::TOP), self.main_index);
        if let Some(s) = self.scopes.get_mut(scope) {
            s.module = def.name.split("::").next().map(str::to_string);
        }
        let what = format!("plan {}", def.name);
        if let Some((unknown, _)) = args
            .iter()
            .find(|(n, _)| !def.params.iter().any(|p| &p.name == n))
        {
            return Err(LangError::eval(
                format!("{what}: has no parameter named '{unknown}'"),
                &def.loc,
            )
            .into());
        }
        // A value for a parameter typed Sensitive arrives plain (from the
        // command line, JSON, another plan) and is wrapped, as Bolt's
        // run_plan wraps it.
        for (name, value) in args.iter_mut() {
            let Some(ty) = def
                .params
                .iter()
                .find(|p| &p.name == name)
                .and_then(|p| p.ty.as_ref())
            else {
                continue;
            };
            if !matches!(value, Value::Sensitive(_))
                && matches!(self.eval(ty, scope), Ok(Value::Type(PType::Sensitive(_))))
            {
                *value = Value::Sensitive(Box::new(std::mem::replace(value, Value::Undef)));
            }
        }
        self.bind_definition_params(def, &mut args, scope, &what, false)
            .map_err(|u| u.at(&def.loc))?;
        self.enter(loc)?;
        let r = self.eval_block(&def.body, scope);
        self.leave();
        match r {
            Ok(_) => Ok(Value::Undef),
            Err(Unwind::Return { value, .. }) => Ok(value),
            Err(other) => Err(other),
        }
    }

    /// Evaluates code on its own, as a YAML plan's embedded code: `vars`
    /// bound in a scope of its own under the top scope; the last
    /// statement's value (or what `return` gives).
    pub fn eval_code(
        &mut self,
        body: &[Expr],
        vars: Vec<(String, Value)>,
        loc: &Loc,
    ) -> EvalResult<Value> {
        let scope = self.new_scope(Some(ScopeId::TOP), Some(ScopeId::TOP), self.main_index);
        for (name, v) in vars {
            self.set_var(&name, v, scope, loc)?;
        }
        self.enter(loc)?;
        let r = self.eval_block(body, scope);
        self.leave();
        match r {
            Err(Unwind::Return { value, .. }) => Ok(value),
            other => other,
        }
    }

    /// Calls a plan's block on an evaluator of its own (another thread's,
    /// for `parallelize` and `background`): `vars`, the variables the
    /// block saw where it was written, bound in a scope under the top one.
    pub fn call_lambda_with(
        &mut self,
        l: &Lambda,
        args: Vec<Value>,
        vars: Vec<(String, Value)>,
    ) -> EvalResult<Value> {
        let scope = self.new_scope(Some(ScopeId::TOP), Some(ScopeId::TOP), self.main_index);
        for (name, v) in vars {
            self.set_var(&name, v, scope, &l.loc)?;
        }
        self.call_lambda(l, args, scope)
    }

    /// Evaluates a default value of a plan parameter on its own (for
    /// listings); `None` when it needs anything evaluation provides.
    pub fn constant(&mut self, e: &Expr) -> Option<Value> {
        let scope = self.new_scope(Some(ScopeId::TOP), None, self.main_index);
        self.eval(e, scope).ok()
    }

    /// A method of a plan object (`$set.ok_set`, `$result['stdout']`,
    /// `$set.filter_set |$r| { ... }`); `None` when `recv` is no plan
    /// object or its type has no method `name`.
    pub(in crate::lang) fn plan_method(
        &mut self,
        recv: &Value,
        name: &str,
        args: &[Value],
        lambda: Option<&Lambda>,
        sc: ScopeId,
        loc: &Loc,
    ) -> Option<EvalResult<Value>> {
        let obj = as_object(recv)?;
        if let (PlanObject::ResultSet(results), "filter_set") = (obj, name) {
            let Some(l) = lambda else {
                return Some(Err(
                    LangError::eval("'filter_set' expects a block", loc).into()
                ));
            };
            let mut kept = Vec::new();
            for r in results {
                let item = value(PlanObject::Result(r.clone()));
                match self.call_lambda(l, vec![item], sc) {
                    Ok(v) if v.truthy() => kept.push(r.clone()),
                    Ok(_) => {}
                    Err(e) => return Some(Err(e)),
                }
            }
            return Some(Ok(value(PlanObject::ResultSet(kept))));
        }
        let r = obj.method(name, args)?;
        Some(
            r.map_err(|e| {
                Unwind::from(plain(format!("{} '{name}': {e}", obj.type_name()))).at(loc)
            }),
        )
    }

    /// `apply(...) { ... }`: handed to the library (the plan runner).
    pub(in crate::lang) fn eval_apply(
        &mut self,
        args: Vec<Value>,
        body: &Arc<Vec<Expr>>,
        sc: ScopeId,
        loc: &Loc,
    ) -> EvalResult<Value> {
        let library = self.library;
        library.apply_block(
            self,
            ApplyCall {
                args,
                body,
                scope: sc,
                loc,
            },
        )
    }

    /// The variables visible in scope `sc` that hold plain data, innermost
    /// first wins (what an `apply` block's catalog sees of the plan).
    pub fn visible_vars(&self, sc: ScopeId) -> Vec<(String, Value)> {
        let mut out: Vec<(String, Value)> = Vec::new();
        let mut cur = Some(sc);
        let mut guard = 0;
        while let Some(id) = cur {
            let Some(s) = self.scopes.get(id) else { break };
            for (k, v) in &s.vars {
                if !out.iter().any(|(n, _)| n == k) {
                    out.push((k.clone(), v.clone()));
                }
            }
            cur = s.parent;
            guard += 1;
            if guard > 10_000 {
                break;
            }
        }
        out
    }

    /// Sets a top-scope variable unless it is set already (facts and
    /// Puppet's own variables win).
    pub fn define_top(&mut self, name: &str, v: Value) {
        if let Some(top) = self.scopes.get_mut(ScopeId::TOP) {
            top.vars.entry(name.to_string()).or_insert(v);
        }
    }

    /// The modulepath the evaluator loads from.
    pub fn modulepath(&self) -> &Modulepath {
        &self.modulepath
    }

    /// The loader the evaluator reads files through.
    pub fn loader(&self) -> &'l dyn Loader {
        self.loader
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::syntax::parser::parse;

    fn first_plan(src: &str) -> Arc<Definition> {
        let file: Arc<str> = Arc::from("p.pp");
        match parse(src, &file).ok().and_then(|s| s.into_iter().next()) {
            Some(Expr {
                kind: ExprKind::PlanDef(d),
                ..
            }) => d,
            other => panic!("not a plan: {other:?}"),
        }
    }

    #[test]
    fn catalog_statements_only_in_apply_blocks() {
        let ok =
            first_plan("plan m(TargetSpec $t) { apply($t) { file { '/x': ensure => file } } }");
        assert!(check_plan(&ok).is_ok());
        let bad = first_plan("plan m() {\n  if true {\n    file { '/x': }\n  }\n}");
        let e = check_plan(&bad)
            .err()
            .map(|e| (e.message, e.loc.map(|l| (l.line, l.col))));
        assert_eq!(
            e,
            Some((
                "A Resource Statement is only available when compiling a catalog".into(),
                Some((3, 5))
            ))
        );
        let nested = first_plan("plan m() { apply('a') { apply('b') { } } }");
        assert!(check_plan(&nested).is_err());
    }

    #[test]
    fn plan_names_follow_files() {
        assert_eq!(
            plan_name_for("m", Path::new("init.pp")).as_deref(),
            Some("m")
        );
        assert_eq!(
            plan_name_for("m", Path::new("a/b.pp")).as_deref(),
            Some("m::a::b")
        );
    }
}
