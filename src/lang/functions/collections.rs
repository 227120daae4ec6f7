//! Collection functions: `size`/`length`, `count`, `keys`, `values`,
//! `merge`, `deep_merge`, `flatten`, `unique`, `sort`, `reverse`, `concat`,
//! `empty`, `has_key`, `member`, `pick`, `pick_default`, `delete`,
//! `delete_at`, `delete_undef_values`, `range`, `dig`, `zip`, `values_at`.

use crate::lang::error::plain;
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::functions::{Block, Builder, Family, any, sig};
use crate::lang::values::value::{Value, compare, hash_get, hash_set, values_equal};

pub fn register(b: &mut Builder) {
    let f = Family::Collections;
    let one = |ret| sig(ret).req("collection", any());
    let two = |ret, second| sig(ret).req("collection", any()).req(second, any());
    b.add(&["size", "length"], f, one("Integer"), size);
    b.add(
        &["count"],
        f,
        sig("Integer")
            .req("collection", any())
            .opt("value", any())
            .block(Block::Optional),
        count,
    );
    b.add(&["keys"], f, one("Array"), keys);
    b.add(&["values"], f, one("Array"), values);
    b.add(&["merge"], f, sig("Hash").rest("hashes", any()), merge);
    b.add(
        &["deep_merge"],
        f,
        sig("Hash").rest("hashes", any()),
        deep_merge,
    );
    b.add(
        &["flatten"],
        f,
        sig("Array").rest("values", any()),
        flatten_all,
    );
    b.add(&["unique"], f, one("Variant[Array, String]"), unique);
    b.add(&["sort"], f, one("Array"), sort);
    b.add(&["reverse"], f, one("Variant[Array, String]"), reverse);
    b.add(
        &["concat"],
        f,
        sig("Array").req("array", any()).rest("values", any()),
        concat,
    );
    b.add(&["empty"], f, one("Boolean"), empty);
    b.add(&["has_key"], f, two("Boolean", "key"), has_key);
    b.add(&["member"], f, two("Boolean", "item"), member);
    b.add(
        &["pick", "pick_default"],
        f,
        sig("Any").rest("values", any()),
        pick,
    );
    b.add(&["delete"], f, two("Collection", "item"), delete);
    b.add(&["delete_at"], f, two("Array", "index"), delete_at);
    b.add(
        &["delete_undef_values"],
        f,
        one("Collection"),
        delete_undef_values,
    );
    b.add(
        &["range"],
        f,
        sig("Array")
            .req("from", any())
            .opt("to", any())
            .opt("step", any()),
        range,
    );
    b.add(
        &["dig"],
        f,
        sig("Any").req("data", any()).rest("keys", any()),
        dig,
    );
    b.add(&["zip"], f, two("Array", "other"), zip);
    b.add(&["values_at"], f, two("Any", "indices"), values_at);
}

fn size(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    Ok(match c.arg(0) {
        Value::Array(a) => Value::Int(a.len() as i64),
        Value::Hash(h) => Value::Int(h.len() as i64),
        Value::Str(x) => Value::Int(x.chars().count() as i64),
        other => {
            return Err(plain(format!(
                "size(): expects a Collection or String, got {}",
                other.type_name()
            ))
            .into());
        }
    })
}

/// `count` without a block is `size`; with one, the elements it accepts.
fn count(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let Some(l) = c.lambda else {
        return size(ev, c);
    };
    let mut n = 0;
    if let Value::Array(a) = c.arg(0) {
        for x in a {
            if ev.call_lambda(l, vec![x], c.scope)?.truthy() {
                n += 1;
            }
        }
    }
    Ok(Value::Int(n))
}

fn keys(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    Ok(match a0 {
        Value::Hash(h) => Value::Array(h.into_iter().map(|(k, _)| k).collect()),
        _ => Value::Array(vec![]),
    })
}

fn values(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    Ok(match a0 {
        Value::Hash(h) => Value::Array(h.into_iter().map(|(_, v)| v).collect()),
        _ => Value::Array(vec![]),
    })
}

fn merge(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let args = &c.args;
    Ok({
        let mut out = Vec::new();
        for a in args {
            match a {
                Value::Hash(h) => h
                    .iter()
                    .for_each(|(k, v)| hash_set(&mut out, k.clone(), v.clone())),
                Value::Undef => {}
                Value::Str(x) if x.is_empty() => {}
                other => {
                    return Err(plain(format!(
                        "merge(): expects Hash arguments, got {}",
                        other.type_name()
                    ))
                    .into());
                }
            }
        }
        Value::Hash(out)
    })
}

fn deep_merge(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let args = &c.args;
    Ok({
        fn dm(a: &mut Vec<(Value, Value)>, b: &[(Value, Value)]) {
            for (k, v) in b {
                match (a.iter_mut().find(|(x, _)| x == k), v) {
                    (Some((_, Value::Hash(inner))), Value::Hash(bh)) => dm(inner, bh),
                    _ => hash_set(a, k.clone(), v.clone()),
                }
            }
        }
        let mut out = Vec::new();
        for a in args {
            if let Value::Hash(h) = a {
                dm(&mut out, h);
            }
        }
        Value::Hash(out)
    })
}

fn flatten_all(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let args = &c.args;
    Ok({
        let mut out = Vec::new();
        for a in args {
            flatten_into(a, &mut out);
        }
        Value::Array(out)
    })
}

fn unique(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    Ok(match a0 {
        Value::Array(a) => {
            let mut out: Vec<Value> = Vec::new();
            for x in a {
                if !out
                    .iter()
                    .any(|y| values_equal(y, &x) && x.type_name() == y.type_name())
                {
                    out.push(x);
                }
            }
            Value::Array(out)
        }
        Value::Str(x) => {
            let mut seen = String::new();
            for c in x.chars() {
                if !seen.contains(c) {
                    seen.push(c);
                }
            }
            Value::Str(seen)
        }
        other => other,
    })
}

fn sort(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    Ok(match a0 {
        Value::Array(mut a) => {
            a.sort_by(|x, y| match (x, y) {
                (Value::Str(p), Value::Str(q)) => p.cmp(q),
                _ => compare(x, y).unwrap_or(std::cmp::Ordering::Equal),
            });
            Value::Array(a)
        }
        Value::Hash(mut h) => {
            // Ruby's Hash#sort (used by ERB templates): pairs by key.
            h.sort_by_key(|(k, _)| k.to_s());
            Value::Array(
                h.into_iter()
                    .map(|(k, v)| Value::Array(vec![k, v]))
                    .collect(),
            )
        }
        other => other,
    })
}

fn reverse(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    Ok(match a0 {
        Value::Array(mut a) => {
            a.reverse();
            Value::Array(a)
        }
        Value::Str(x) => Value::Str(x.chars().rev().collect()),
        other => other,
    })
}

/// stdlib's `concat(array, values...)`: the first argument must be an array.
fn concat(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let args = &c.args;
    if args.len() < 2 {
        return Err(plain(format!(
            "concat(): Wrong number of arguments given ({} for < 2)",
            args.len()
        ))
        .into());
    }
    if !matches!(args.first(), Some(Value::Array(_))) {
        return Err(plain("concat(): Requires array to work with").into());
    }
    Ok({
        let mut out = Vec::new();
        for a in args {
            match a {
                Value::Array(x) => out.extend(x.iter().cloned()),
                other => out.push(other.clone()),
            }
        }
        Value::Array(out)
    })
}

fn empty(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    Ok(Value::Bool(match &a0 {
        Value::Array(a) => a.is_empty(),
        Value::Hash(h) => h.is_empty(),
        Value::Str(x) => x.is_empty(),
        Value::Undef => true,
        _ => false,
    }))
}

fn has_key(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    let a1 = c.args.get(1);
    Ok(match &a0 {
        Value::Hash(h) => Value::Bool(hash_get(h, a1.unwrap_or(&Value::Undef)).is_some()),
        other => {
            // A 3.x function: an undef argument arrives as ''.
            let other = match other {
                Value::Undef => Value::Str(String::new()),
                o => o.clone(),
            };
            return Err(plain(format!(
                "has_key(): expects the first argument to be a hash, got {} which is of type {}",
                crate::lang::template::erb::value::inspect(&other),
                crate::lang::functions::stdlib::ruby_class(&other)
            ))
            .into());
        }
    })
}

fn member(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    let a1 = c.args.get(1);
    Ok(match &a0 {
        Value::Array(a) => Value::Bool(match a1 {
            Some(Value::Array(want)) => want.iter().all(|w| a.contains(w)),
            Some(w) => a.contains(w),
            None => false,
        }),
        _ => Value::Bool(false),
    })
}

fn pick(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let args = &c.args;
    let name = c.name;
    Ok({
        let found = args
            .iter()
            .find(|v| !matches!(v, Value::Undef) && !matches!(v, Value::Str(x) if x.is_empty()));
        match found {
            Some(v) => v.clone(),
            None if name == "pick_default" => args.last().cloned().unwrap_or(Value::Undef),
            None => return Err(plain("pick(): must receive at least one non empty value").into()),
        }
    })
}

fn delete(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    let a1 = c.args.get(1);
    Ok(match a0 {
        Value::Array(a) => Value::Array(a.into_iter().filter(|x| Some(x) != a1).collect()),
        Value::Hash(h) => Value::Hash(h.into_iter().filter(|(k, _)| Some(k) != a1).collect()),
        Value::Str(x) => Value::Str(x.replace(&s(a1), "")),
        other => other,
    })
}

fn delete_at(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    let a1 = c.args.get(1);
    Ok(match (&a0, a1) {
        (Value::Array(a), Some(Value::Int(i))) => {
            let idx = if *i < 0 { a.len() as i64 + i } else { *i };
            match usize::try_from(idx).ok().filter(|i| *i < a.len()) {
                Some(i) => {
                    let mut a = a.clone();
                    a.remove(i);
                    Value::Array(a)
                }
                None => return Err(plain("delete_at(): index out of bounds").into()),
            }
        }
        _ => return Err(plain("delete_at(): expects an Array and an Integer").into()),
    })
}

fn delete_undef_values(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    Ok(match a0 {
        Value::Array(a) => Value::Array(a.into_iter().filter(|x| !x.is_undef()).collect()),
        Value::Hash(h) => Value::Hash(h.into_iter().filter(|(_, v)| !v.is_undef()).collect()),
        other => other,
    })
}

fn range(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    let a1 = c.args.get(1);
    Ok({
        let (a, b) = match (&a0, a1) {
            (Value::Int(a), Some(Value::Int(b))) => (*a, *b),
            (x, Some(y)) => (x.to_s().parse().unwrap_or(0), y.to_s().parse().unwrap_or(0)),
            _ => (0, -1),
        };
        if b.saturating_sub(a) > 100_000 {
            return Err(plain("range(): range too large").into());
        }
        Value::Array((a..=b).map(Value::Int).collect())
    })
}

fn dig(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let args = &c.args;
    let a0 = c.arg(0);
    Ok({
        let mut cur = a0;
        for k in args.get(1..).unwrap_or(&[]) {
            cur = match (&cur, k) {
                (Value::Hash(h), k) => hash_get(h, k).cloned().unwrap_or(Value::Undef),
                (Value::Array(a), Value::Int(i)) => usize::try_from(*i)
                    .ok()
                    .and_then(|i| a.get(i).cloned())
                    .unwrap_or(Value::Undef),
                _ => Value::Undef,
            };
        }
        cur
    })
}

fn zip(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    let a1 = c.args.get(1);
    Ok(match (&a0, a1) {
        (Value::Array(a), Some(Value::Array(b))) => Value::Array(
            a.iter()
                .zip(b)
                .map(|(x, y)| Value::Array(vec![x.clone(), y.clone()]))
                .collect(),
        ),
        _ => Value::Array(vec![]),
    })
}

fn values_at(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    let a1 = c.args.get(1);
    Ok(match (&a0, a1) {
        (Value::Array(a), Some(Value::Array(ix))) => Value::Array(
            ix.iter()
                .filter_map(|i| match i {
                    Value::Int(i) => usize::try_from(*i).ok().and_then(|i| a.get(i).cloned()),
                    _ => None,
                })
                .collect(),
        ),
        (Value::Array(a), Some(Value::Int(i))) => usize::try_from(*i)
            .ok()
            .and_then(|i| a.get(i).cloned())
            .unwrap_or(Value::Undef),
        _ => Value::Undef,
    })
}

fn s(v: Option<&Value>) -> String {
    v.map(|v| v.to_s()).unwrap_or_default()
}

fn flatten_into(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Array(a) => a.iter().for_each(|x| flatten_into(x, out)),
        other => out.push(other.clone()),
    }
}
