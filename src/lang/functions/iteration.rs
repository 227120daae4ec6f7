//! The iterator functions `reverse_each` and `step`. Without a lambda they
//! return an `Iterator` value (its elements computed at once, as nothing in
//! the language can observe the laziness); `each`, `map`, `Array(...)` and
//! friends consume it, and a resource attribute refuses it as Puppet does.
//! With a lambda they call it for every element and return `undef`.

use crate::lang::error::LResult;
use crate::lang::error::plain;
use crate::lang::eval::{Evaluator, ScopeId};
use crate::lang::functions::catalog::iter_items;
use crate::lang::syntax::ast::Lambda;
use crate::lang::values::value::Value;

impl<'l> Evaluator<'l> {
    pub(crate) fn fn_iterator(
        &mut self,
        name: &str,
        args: Vec<Value>,
        lambda: Option<&Lambda>,
        sc: ScopeId,
    ) -> LResult<Value> {
        let a0 = args.first().cloned().unwrap_or(Value::Undef);
        let is_hash = matches!(a0, Value::Hash(_));
        let mut items: Vec<Value> = iter_items(&a0)
            .map_err(|e| plain(format!("'{name}' parameter 'iterable' {}", e.message)))?
            .into_iter()
            .map(|(k, v)| if is_hash { Value::Array(vec![k, v]) } else { v })
            .collect();
        if name == "reverse_each" {
            if args.len() != 1 {
                return Err(plain(format!(
                    "'reverse_each' expects 1 argument, got {}",
                    args.len()
                )));
            }
            items.reverse();
        } else {
            let n = match args.get(1) {
                Some(Value::Int(n)) if *n >= 1 => *n as usize,
                Some(Value::Int(_)) => {
                    return Err(plain(
                        "'step' parameter 'step' expects an Integer[1] value, got Integer",
                    ));
                }
                Some(other) => {
                    return Err(plain(format!(
                        "'step' parameter 'step' expects an Integer value, got {}",
                        other.type_name()
                    )));
                }
                None => return Err(plain("'step' expects 2 arguments, got 1")),
            };
            items = items.into_iter().step_by(n).collect();
        }
        let Some(l) = lambda else {
            return Ok(Value::Iterator(items));
        };
        for item in items {
            if self.lambda_step(l, vec![item], sc)?.is_none() {
                break;
            }
        }
        Ok(Value::Undef)
    }
}
