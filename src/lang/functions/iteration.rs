//! Iteration functions: `each`, `map`, `filter`, `reject`, `any`, `all`,
//! `find`, `reduce`, `slice`, `each_with_index`, `with`, `then`, `lest`,
//! and the iterator functions `reverse_each` and `step`. Without a lambda
//! the latter return an `Iterator` value (its elements computed at once,
//! as nothing in the language can observe the laziness); `each`, `map`,
//! `Array(...)` and friends consume it, and a resource attribute refuses it
//! as Puppet does. With a lambda they call it for every element and return
//! `undef`.

use crate::lang::error::{LangError, plain};
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::functions::{Block, Builder, Family, any, sig};
use crate::lang::syntax::ast::Lambda;
use crate::lang::values::types::PType;
use crate::lang::values::value::Value;

pub fn register(b: &mut Builder) {
    let f = Family::Iteration;
    let over = |ret| sig(ret).req("iterable", any()).block(Block::Required);
    b.add(&["each"], f, over("Any"), iterate);
    b.add(&["map"], f, over("Array"), iterate);
    b.add(&["filter", "reject"], f, over("Collection"), iterate);
    b.add(&["any", "all"], f, over("Boolean"), iterate);
    b.add(&["find"], f, over("Any"), iterate);
    b.add(
        &["reduce"],
        f,
        sig("Any")
            .req("iterable", any())
            .opt("memo", any())
            .block(Block::Required),
        reduce,
    );
    b.add(
        &["slice", "each_with_index"],
        f,
        sig("Undef")
            .req("iterable", any())
            .opt("size", any())
            .block(Block::Required),
        slice,
    );
    b.add(
        &["with"],
        f,
        sig("Any").rest("args", any()).block(Block::Required),
        with,
    );
    b.add(
        &["then"],
        f,
        sig("Any").req("value", any()).block(Block::Required),
        then,
    );
    b.add(
        &["lest"],
        f,
        sig("Any").req("value", any()).block(Block::Required),
        lest,
    );
    b.add(
        &["reverse_each"],
        f,
        sig("Variant[Iterator, Undef]")
            .req("iterable", any())
            .block(Block::Optional),
        iterator,
    );
    b.add(
        &["step"],
        f,
        sig("Variant[Iterator, Undef]")
            .req("iterable", any())
            .req("step", any())
            .block(Block::Optional),
        iterator,
    );
}

/// Iterate a value as Puppet does: arrays by element, hashes by [k, v],
/// integers as 0..n, strings by character.
pub(crate) fn iter_items(v: &Value) -> Result<Vec<(Value, Value)>, LangError> {
    Ok(match v {
        Value::Array(a) | Value::Iterator(a) => a
            .iter()
            .enumerate()
            .map(|(i, x)| (Value::Int(i as i64), x.clone()))
            .collect(),
        Value::Hash(h) => h.clone(),
        Value::Int(n) => (0..(*n).clamp(0, 1_000_000))
            .map(|i| (Value::Int(i), Value::Int(i)))
            .collect(),
        Value::Type(PType::Integer(lo, hi))
            if *lo > i64::MIN && *hi < i64::MAX && hi.saturating_sub(*lo) <= 1_000_000 =>
        {
            (*lo..=*hi)
                .enumerate()
                .map(|(i, x)| (Value::Int(i as i64), Value::Int(x)))
                .collect()
        }
        Value::Str(s) => s
            .chars()
            .enumerate()
            .map(|(i, c)| (Value::Int(i as i64), Value::Str(c.to_string())))
            .collect(),
        other => {
            // A plan's ResultSet iterates over its results.
            if let Some(items) =
                crate::lang::values::plan::as_object(other).and_then(|o| o.elements())
            {
                return Ok(items
                    .into_iter()
                    .enumerate()
                    .map(|(i, x)| (Value::Int(i as i64), x))
                    .collect());
            }
            return Err(plain(format!(
                "expects an Iterable value, got {}",
                other.type_name()
            )));
        }
    })
}

/// Puppet's dispatch failure of `each`, `map`, `filter`, `any` and `all`
/// (four signatures: a Hash or an Iterable, a block of two or one
/// parameters) for an argument that is neither.
fn hash_or_iterable_mismatch(name: &str, got: &str) -> String {
    let mut m = format!(
        "The function '{name}' was called with arguments it does not accept. It expects one of:"
    );
    for (ty, param, article) in [("Hash", "hash", "a"), ("Iterable", "enumerable", "an")] {
        for n in [2, 1] {
            m.push_str(&format!(
                "\n  ({ty} {param}, Callable[{n}, {n}] block)\n    rejected: parameter '{param}' expects {article} {ty} value, got {got}"
            ));
        }
    }
    m
}

/// Lambda arguments for element (k, v): one param gets v (or [k, v] for
/// hashes), two params get k and v.
fn lambda_args(l: &Lambda, k: &Value, v: &Value, is_hash: bool) -> Vec<Value> {
    if l.params.len() >= 2 {
        vec![k.clone(), v.clone()]
    } else if is_hash {
        vec![Value::Array(vec![k.clone(), v.clone()])]
    } else {
        vec![v.clone()]
    }
}

/// `each`, `map`, `filter`, `reject`, `any`, `all` and `find`.
fn iterate(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let l = c.block()?;
    let name = c.name;
    let a0 = c.arg(0);
    let is_hash = matches!(a0, Value::Hash(_));
    if matches!(name, "each" | "map" | "filter" | "any" | "all")
        && matches!(
            a0,
            Value::Undef | Value::Bool(_) | Value::Float(_) | Value::Default
        )
    {
        return Err(plain(hash_or_iterable_mismatch(name, &a0.type_name())).into());
    }
    let items = iter_items(&a0)?;
    let mut out_arr = Vec::new();
    let mut out_hash = Vec::new();
    for (k, v) in items {
        let Some(r) = ev.lambda_step(l, lambda_args(l, &k, &v, is_hash), c.scope)? else {
            break;
        };
        match name {
            "map" => out_arr.push(r),
            "filter" | "reject" if r.truthy() == (name == "filter") => {
                if is_hash {
                    out_hash.push((k, v));
                } else {
                    out_arr.push(v);
                }
            }
            "any" if r.truthy() => return Ok(Value::Bool(true)),
            "all" if !r.truthy() => return Ok(Value::Bool(false)),
            "find" if r.truthy() => {
                return Ok(if is_hash { Value::Array(vec![k, v]) } else { v });
            }
            _ => {}
        }
    }
    Ok(match name {
        "each" => a0,
        "any" => Value::Bool(false),
        "all" => Value::Bool(true),
        "find" => Value::Undef,
        "filter" | "reject" if is_hash => Value::Hash(out_hash),
        _ => Value::Array(out_arr),
    })
}

fn reduce(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let l = c.block()?;
    let a0 = c.arg(0);
    let is_hash = matches!(a0, Value::Hash(_));
    let items = iter_items(&a0)?;
    let mut it = items
        .into_iter()
        .map(|(k, v)| if is_hash { Value::Array(vec![k, v]) } else { v });
    let mut acc = match c.args.get(1) {
        Some(init) => init.clone(),
        None => it.next().unwrap_or(Value::Undef),
    };
    for v in it {
        match ev.lambda_step(l, vec![acc.clone(), v], c.scope)? {
            Some(next) => acc = next,
            None => break,
        }
    }
    Ok(acc)
}

/// `slice(n)` and `each_with_index`: the lambda gets chunks of `n`.
fn slice(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let l = c.block()?;
    let n = match c.args.get(1) {
        Some(Value::Int(n)) if *n > 0 => *n as usize,
        _ => 1,
    };
    let items: Vec<Value> = iter_items(&c.arg(0))?.into_iter().map(|(_, v)| v).collect();
    for chunk in items.chunks(n) {
        let arg = if n == 1 {
            chunk.first().cloned().unwrap_or(Value::Undef)
        } else {
            Value::Array(chunk.to_vec())
        };
        if ev.lambda_step(l, vec![arg], c.scope)?.is_none() {
            break;
        }
    }
    Ok(Value::Undef)
}

fn with(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let l = c.block()?;
    ev.call_lambda(l, c.args, c.scope)
}

fn then(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let l = c.block()?;
    let a0 = c.arg(0);
    if a0.is_undef() {
        Ok(Value::Undef)
    } else {
        ev.call_lambda(l, vec![a0], c.scope)
    }
}

fn lest(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let l = c.block()?;
    let a0 = c.arg(0);
    if a0.is_undef() {
        ev.call_lambda(l, vec![], c.scope)
    } else {
        Ok(a0)
    }
}

/// `reverse_each` and `step`.
fn iterator(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let (name, args, lambda, sc) = (c.name, &c.args, c.lambda, c.scope);
    let a0 = args.first().cloned().unwrap_or(Value::Undef);
    let is_hash = matches!(a0, Value::Hash(_));
    let mut items: Vec<Value> = iter_items(&a0)
        .map_err(|e| plain(format!("'{name}' parameter 'iterable' {}", e.message)))?
        .into_iter()
        .map(|(k, v)| if is_hash { Value::Array(vec![k, v]) } else { v })
        .collect();
    if name == "reverse_each" {
        items.reverse();
    } else {
        let n = match c.arg(1) {
            Value::Int(n) if n >= 1 => n as usize,
            Value::Int(n) => {
                return Err(plain(format!(
                    "'step' parameter 'step' expects an Integer[1] value, got Integer[{n}, {n}]"
                ))
                .into());
            }
            other => {
                return Err(plain(format!(
                    "'step' parameter 'step' expects an Integer value, got {}",
                    other.type_name()
                ))
                .into());
            }
        };
        items = items.into_iter().step_by(n).collect();
    }
    let Some(l) = lambda else {
        return Ok(Value::Iterator(items));
    };
    for item in items {
        if ev.lambda_step(l, vec![item], sc)?.is_none() {
            break;
        }
    }
    Ok(Value::Undef)
}
