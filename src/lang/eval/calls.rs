//! Calling lambdas and Puppet-language functions: positional parameter
//! binding with defaults, type checks and captures-rest, and the unwinding
//! of `next()`, `break()` and `return()`.

use std::sync::Arc;

use crate::lang::error::plain;
use crate::lang::error::{ErrorKind, LResult, LangError, Loc};
use crate::lang::eval::{Evaluator, ScopeId};
use crate::lang::syntax::ast::{FunctionDef, Lambda, Param};
use crate::lang::values::types;
use crate::lang::values::value::Value;

impl<'l> Evaluator<'l> {
    /// Call a lambda with positional arguments in a new local scope.
    pub fn call_lambda(&mut self, l: &Lambda, args: Vec<Value>, sc: ScopeId) -> LResult<Value> {
        let container = self.scopes.get(sc).map_or(0, |s| s.container);
        let local = self.new_scope(Some(sc), Some(sc), container);
        self.bind_positional(&l.params, args, local, &l.loc, "lambda")?;
        self.enter(&l.loc)?;
        let r = self.eval_block(&l.body, local);
        self.leave();
        match r {
            Err(e) if e.kind == ErrorKind::Next => {
                Ok(std::mem::replace(&mut self.control_value, Value::Undef))
            }
            other => other,
        }
    }

    /// Call a lambda for one iteration step; `None` when it executed `break()`.
    pub fn lambda_step(
        &mut self,
        l: &Lambda,
        args: Vec<Value>,
        sc: ScopeId,
    ) -> LResult<Option<Value>> {
        match self.call_lambda(l, args, sc) {
            Err(e) if e.kind == ErrorKind::Break => Ok(None),
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
    ) -> LResult<()> {
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
                    )));
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
    ) -> LResult<Value> {
        let local = self.new_scope(Some(0), Some(0), self.main_index);
        let what = format!("'{}'", f.name);
        self.bind_positional(&f.params, args, local, loc, &what)?;
        self.enter(loc)?;
        let r = self.eval_block(&f.body, local);
        self.leave();
        let v = match r {
            Err(e) if e.kind == ErrorKind::Return => {
                std::mem::replace(&mut self.control_value, Value::Undef)
            }
            other => other?,
        };
        if let Some(rt) = &f.return_type
            && let Value::Type(t) = self.eval(rt, local)?
            && !types::is_instance(&t, &v)
        {
            return Err(LangError::eval(
                format!("{what} returned value {}", types::mismatch(&t, &v)),
                loc,
            ));
        }
        Ok(v)
    }
}
