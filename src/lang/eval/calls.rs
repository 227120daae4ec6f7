//! Calls: function calls (Puppet-language functions first, then the
//! built-in functions of the [`Library`] the evaluator was created with),
//! lambdas, positional parameter binding with defaults, type checks and
//! captures-rest, and the unwinding of `next()`, `break()` and `return()`.
//!
//! The built-in functions live above the evaluator (`lang::functions`,
//! which uses hiera and templates); the evaluator reaches them only through
//! the [`Library`] trait, so `eval` depends on none of those modules.

use std::sync::Arc;

use crate::lang::error::{LangError, Loc, plain};
use crate::lang::eval::control::{EvalResult, Unwind};
use crate::lang::eval::{Evaluator, ResId, ScopeId, in_context};
use crate::lang::syntax::ast::{FunctionDef, Lambda, Param};
use crate::lang::values::types;
use crate::lang::values::value::Value;

/// What the evaluator needs from the layers above it: the built-in
/// functions and the data lookup behind automatic class parameters.
pub trait Library: Sync {
    /// Call the built-in function `call.name`; `None` when there is no
    /// function of that name.
    fn call(&self, ev: &mut Evaluator<'_>, call: Call<'_>) -> Option<EvalResult<Value>>;

    /// Look up a class parameter's value (`class::param`) in hiera.
    fn lookup_param(&self, ev: &mut Evaluator<'_>, key: &str) -> EvalResult<Option<Value>>;

    /// Run an `apply(targets) { ... }` block of a plan. Only a plan
    /// runner's library can; anywhere else it is an error.
    fn apply_block(&self, _ev: &mut Evaluator<'_>, call: ApplyCall<'_>) -> EvalResult<Value> {
        Err(LangError::eval(
            "The 'apply' expression is only available in a plan",
            call.loc,
        )
        .into())
    }
}

/// One `apply(args) { body }` block of a plan, its arguments evaluated.
pub struct ApplyCall<'a> {
    pub args: Vec<Value>,
    pub body: &'a Arc<Vec<crate::lang::syntax::ast::Expr>>,
    pub scope: ScopeId,
    pub loc: &'a Loc,
}

/// One call of a built-in function.
pub struct Call<'a> {
    /// The name as written, without a leading `::` (`Integer`, `notice`).
    pub written: &'a str,
    /// The name in lower case: the registry's key.
    pub name: &'a str,
    pub args: Vec<Value>,
    pub lambda: Option<&'a Lambda>,
    pub scope: ScopeId,
    pub loc: &'a Loc,
}

impl<'a> Call<'a> {
    /// Argument `i`, or undef.
    pub fn arg(&self, i: usize) -> Value {
        self.args.get(i).cloned().unwrap_or(Value::Undef)
    }

    /// Argument `i` as a string (empty when absent).
    pub fn str_arg(&self, i: usize) -> String {
        self.args.get(i).map(|v| v.to_s()).unwrap_or_default()
    }

    /// The lambda, which the function's signature requires.
    pub fn block(&self) -> EvalResult<&'a Lambda> {
        self.lambda
            .ok_or_else(|| plain(format!("'{}' expects a block", self.name)).into())
    }
}

impl<'l> Evaluator<'l> {
    /// Call the function `name`: a Puppet-language function (autoloaded
    /// from `<module>/functions` when namespaced) or a built-in one.
    pub fn call_function(
        &mut self,
        name: &str,
        args: Vec<Value>,
        lambda: Option<&Lambda>,
        sc: ScopeId,
        loc: &Loc,
    ) -> EvalResult<Value> {
        self.call_as(name, args, lambda, sc, loc, "Function Call")
    }

    /// Call `name` as a method (`$x.name(...)`): the receiver is the first
    /// argument, and errors are Puppet's "Method call" ones.
    pub fn call_method(
        &mut self,
        name: &str,
        args: Vec<Value>,
        lambda: Option<&Lambda>,
        sc: ScopeId,
        loc: &Loc,
    ) -> EvalResult<Value> {
        self.call_as(name, args, lambda, sc, loc, "Method call")
    }

    /// A call whose errors Puppet words as `context` (`Function Call`,
    /// `Method call`).
    fn call_as(
        &mut self,
        name: &str,
        args: Vec<Value>,
        lambda: Option<&Lambda>,
        sc: ScopeId,
        loc: &Loc,
        context: &str,
    ) -> EvalResult<Value> {
        self.enter(loc)?;
        let r = self.dispatch(name, args, lambda, sc, loc);
        self.leave();
        r.map_err(|u| u.map_error(|e| in_context(e, context, loc)))
    }

    fn dispatch(
        &mut self,
        name: &str,
        args: Vec<Value>,
        lambda: Option<&Lambda>,
        sc: ScopeId,
        loc: &Loc,
    ) -> EvalResult<Value> {
        let written = name.trim_start_matches("::");
        let lname = written.to_lowercase();
        if let Some(f) = self.functions.get(&lname).cloned() {
            return self.call_user_function(&f, args, loc);
        }
        if lname.contains("::") && !lname.starts_with("stdlib::") {
            self.autoload_function(&lname);
            if let Some(f) = self.functions.get(&lname).cloned() {
                return self.call_user_function(&f, args, loc);
            }
        }
        let library = self.library;
        let call = Call {
            written,
            name: &lname,
            args,
            lambda,
            scope: sc,
            loc,
        };
        library.call(self, call).unwrap_or_else(|| {
            let hint = match self.ruby_function(&lname) {
                Some((module, file)) => format!(
                    " Module '{module}' defines it in Ruby ({file}); ferry runs Puppet-language and built-in functions only."
                ),
                None => String::new(),
            };
            Err(LangError::eval(format!("Unknown function: '{name}'.{hint}"), loc).into())
        })
    }

    /// The module whose Ruby code defines function `name`, and the file
    /// within it: `lib/puppet/functions/<ns>/<name>.rb` (the modern API,
    /// in the module of a namespaced name, else in any module) or
    /// `lib/puppet/parser/functions/<name>.rb` (the legacy API). For the
    /// error that names what ferry does not run.
    fn ruby_function(&self, name: &str) -> Option<(String, String)> {
        let segments: Vec<&str> = name.split("::").collect();
        if segments
            .iter()
            .any(|s| s.is_empty() || !s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        {
            return None;
        }
        let modern = format!("lib/puppet/functions/{}.rb", segments.join("/"));
        if let [module, _, ..] = segments.as_slice() {
            let dir = crate::lang::loader::module_dir(self.loader, &self.modulepath, module)?;
            return self
                .loader
                .is_file(&dir.join(&modern))
                .then(|| (module.to_string(), modern));
        }
        let legacy = format!("lib/puppet/parser/functions/{name}.rb");
        let project = self
            .modulepath
            .project()
            .map(|(n, p)| (n.to_string(), p.to_path_buf()));
        let listed = self.modulepath.dirs().iter().flat_map(|dir| {
            self.loader
                .list(dir)
                .unwrap_or_default()
                .into_iter()
                .filter_map(|m| Some((m.file_name()?.to_str()?.to_string(), m)))
        });
        for (module, dir) in project.into_iter().chain(listed) {
            for file in [&modern, &legacy] {
                if self.loader.is_file(&dir.join(file)) {
                    return Some((module, file.clone()));
                }
            }
        }
        None
    }

    /// A class parameter's value from hiera (automatic parameter lookup).
    pub fn lookup_param(&mut self, key: &str) -> EvalResult<Option<Value>> {
        let library = self.library;
        library.lookup_param(self, key)
    }

    /// Call a lambda with positional arguments in a new local scope.
    pub fn call_lambda(&mut self, l: &Lambda, args: Vec<Value>, sc: ScopeId) -> EvalResult<Value> {
        let container = self
            .scopes
            .get(sc)
            .map_or(ResId::default(), |s| s.container);
        let local = self.new_scope(Some(sc), Some(sc), container);
        self.bind_positional(&l.params, args, local, &l.loc, "lambda")?;
        self.enter(&l.loc)?;
        let r = self.eval_block(&l.body, local);
        self.leave();
        match r {
            Err(Unwind::Next { value, .. }) => Ok(value),
            other => other,
        }
    }

    /// Call a lambda for one iteration step; `None` when it executed `break()`.
    pub fn lambda_step(
        &mut self,
        l: &Lambda,
        args: Vec<Value>,
        sc: ScopeId,
    ) -> EvalResult<Option<Value>> {
        match self.call_lambda(l, args, sc) {
            Err(Unwind::Break { .. }) => Ok(None),
            other => other.map(Some),
        }
    }

    /// Bind positional arguments to parameters with type checks and defaults.
    pub fn bind_positional(
        &mut self,
        params: &[Param],
        args: Vec<Value>,
        sc: ScopeId,
        _loc: &Loc,
        what: &str,
    ) -> EvalResult<()> {
        let mut it = args.into_iter();
        for p in params {
            let v = if p.captures_rest {
                Value::Array(it.by_ref().collect())
            } else {
                match it.next() {
                    Some(v) => v,
                    None => match &p.default {
                        Some(d) => self.eval(d, sc)?,
                        None => Value::Undef,
                    },
                }
            };
            if let Some(t) = &p.ty
                && let Value::Type(t) = self.eval(t, sc)?
            {
                let check = if p.captures_rest {
                    match &v {
                        Value::Array(items) => {
                            items.iter().find(|x| !types::is_instance(&t, x)).cloned()
                        }
                        _ => None,
                    }
                } else if types::is_instance(&t, &v) {
                    None
                } else {
                    Some(v.clone())
                };
                if let Some(bad) = check {
                    return Err(plain(format!(
                        "{what} parameter '{}' {}",
                        p.name,
                        types::mismatch(&t, &bad)
                    ))
                    .into());
                }
            }
            if let Some(s) = self.scopes.get_mut(sc) {
                s.vars.insert(p.name.clone(), v);
            }
        }
        Ok(())
    }

    pub fn call_user_function(
        &mut self,
        f: &Arc<FunctionDef>,
        args: Vec<Value>,
        loc: &Loc,
    ) -> EvalResult<Value> {
        let local = self.new_scope(Some(ScopeId::TOP), Some(ScopeId::TOP), self.main_index);
        let what = format!("'{}'", f.name);
        self.bind_positional(&f.params, args, local, loc, &what)?;
        self.enter(loc)?;
        let r = self.eval_block(&f.body, local);
        self.leave();
        let v = match r {
            Err(Unwind::Return { value, .. }) => value,
            other => other?,
        };
        if let Some(rt) = &f.return_type
            && let Value::Type(t) = self.eval(rt, local)?
            && !types::is_instance(&t, &v)
        {
            return Err(LangError::eval(
                format!("{what} returned value {}", types::mismatch(&t, &v)),
                loc,
            )
            .into());
        }
        Ok(v)
    }
}
