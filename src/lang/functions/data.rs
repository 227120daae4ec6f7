//! Data functions: hiera lookups (`lookup`, `hiera`, `hiera_array`,
//! `hiera_hash`, through [`crate::lang::hiera`]), `getvar` and `fact`.

use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::functions::{Block, Builder, Family, any, sig};
use crate::lang::values::value::{Value, hash_get_str};

pub fn register(b: &mut Builder) {
    let f = Family::Data;
    b.add(
        &["lookup"],
        f,
        sig("Any")
            .req("name", any())
            .opt("value_type", any())
            .opt("merge", any())
            .opt("default_value", any())
            .block(Block::Optional),
        lookup,
    );
    b.add(
        &["hiera", "hiera_array", "hiera_hash"],
        f,
        sig("Any")
            .req("key", any())
            .opt("default", any())
            .opt("override", any())
            .block(Block::Optional),
        lookup,
    );
    b.add(
        &["getvar"],
        f,
        sig("Any").req("name", any()).opt("default", any()),
        getvar,
    );
    b.add(&["fact"], f, sig("Any").req("name", any()), fact);
}

fn lookup(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    ev.fn_lookup(c.name, &c.args, c.lambda, c.scope)
}

/// Follow a dotted path (`a.b.0`) into hashes and arrays.
fn dig_path<'s>(mut cur: Value, segs: impl Iterator<Item = &'s str>) -> Value {
    for seg in segs {
        cur = match cur {
            Value::Hash(h) => hash_get_str(&h, seg).cloned().unwrap_or(Value::Undef),
            Value::Array(a) => seg
                .parse::<usize>()
                .ok()
                .and_then(|i| a.get(i).cloned())
                .unwrap_or(Value::Undef),
            _ => Value::Undef,
        };
    }
    cur
}

/// `getvar('x')`, `getvar('x.y.0')` with an optional default.
fn getvar(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let path = c.str_arg(0);
    let mut segs = path.trim_start_matches('$').split('.');
    let first = ev
        .lookup_var(segs.next().unwrap_or(""), c.scope)
        .unwrap_or(Value::Undef);
    let found = dig_path(first, segs);
    Ok(if found.is_undef() { c.arg(1) } else { found })
}

/// `fact('os.family')`.
fn fact(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let path = c.str_arg(0);
    Ok(dig_path(ev.facts.clone(), path.split('.')))
}
