//! Data functions: hiera lookups (`lookup`, `hiera`, `hiera_array`,
//! `hiera_hash`, through [`crate::lang::hiera`]), `getvar`, `fact`, `get`
//! (dotted navigation into a value) and the hiera backend functions
//! (`yaml_data`, `json_data`, `hocon_data`, `eyaml_lookup_key`) as a
//! manifest sees them.

use crate::lang::error::plain;
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::functions::{Block, Builder, Family, any, sig, string};
use crate::lang::values::plan::{ErrorValue, PlanObject};
use crate::lang::values::rich::Rich;
use crate::lang::values::types::infer::infer_type;
use crate::lang::values::value::{Value, hash_get, hash_get_str};

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

// ---- get and the hiera backend functions (Puppet core) ----

pub fn register_core(b: &mut Builder) {
    let f = Family::Data;
    b.add(
        &["get"],
        f,
        sig("Any")
            .req("value", any())
            .req("dotted_string", string())
            .opt("default_value", any())
            .block(Block::Optional),
        get,
    );
    // The hiera backends ferry runs itself (`lang::hiera`); called from a
    // manifest they need a lookup context no manifest can make.
    b.add(
        &["yaml_data", "json_data", "hocon_data"],
        f,
        sig("Hash").req("options", any()).req("context", any()),
        no_context,
    );
    // Puppet fails to load it (no hiera_eyaml library) before any check.
    b.add(
        &["eyaml_lookup_key"],
        f,
        sig("Any").rest("args", any()),
        eyaml_lookup_key,
    );
}

/// Puppet's refusal of the second argument: no value a manifest can make
/// is a `Puppet::LookupContext`.
fn no_context(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    Err(plain(format!(
        "'{}' parameter 'context' expects a Puppet::LookupContext value, got {}",
        c.name,
        c.arg(1).type_name()
    ))
    .into())
}

/// Puppet loads `eyaml_lookup_key` only with the hiera_eyaml library,
/// which ferry does not emulate.
fn eyaml_lookup_key(_: &mut Evaluator<'_>, _: Call<'_>) -> EvalResult<Value> {
    Err(plain(
        "Function Load Error for function 'eyaml_lookup_key': Lookup using eyaml lookup_key \
         function is only supported when the hiera_eyaml library is present",
    )
    .into())
}

/// Split a dotted navigation (`a."b.c".0`) as Puppet's sub-lookup does:
/// segments separated by dots, quoted ones taken literally, integers (an
/// optional sign) as indexes. `None` for a syntax error.
fn split_navigation(nav: &str) -> Option<Vec<Value>> {
    static SEGMENT: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#"\s*"[^"]+"\s*|\s*'[^']+'\s*|[^'".]+"#).ok()
    });
    let re = SEGMENT.as_ref()?;
    let mut segments = Vec::new();
    let mut at = 0;
    for (i, m) in re.find_iter(nav).enumerate() {
        let between = nav.get(at..m.start())?;
        if between != if i == 0 { "" } else { "." } {
            return None;
        }
        segments.push(m.as_str().trim());
        at = m.end();
    }
    if at != nav.len() || segments.is_empty() {
        return None;
    }
    let int = regex::Regex::new(r"^:?[+-]?[0-9]+$").ok()?;
    Some(
        segments
            .into_iter()
            .map(|s| {
                if s.starts_with(['"', '\'']) {
                    Value::str(s.get(1..s.len() - 1).unwrap_or(""))
                } else if int.is_match(s) {
                    // Ruby's to_i: a leading ':' reads as 0.
                    Value::Int(s.parse().unwrap_or(0))
                } else {
                    Value::str(s)
                }
            })
            .collect(),
    )
}

/// Ruby's inspect of a walked path: `["a", 0]`.
fn inspect_path(path: &[Value]) -> String {
    let parts: Vec<String> = path
        .iter()
        .map(|v| match v {
            Value::Str(s) => format!("{s:?}"),
            other => other.to_s(),
        })
        .collect();
    format!("[{}]", parts.join(", "))
}

/// `get(value, 'a.b.0', default)`: navigate with `dig`'s rules; a
/// navigation error goes to the lambda as an `Error` when there is one.
fn get(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let (value, nav, default) = (c.arg(0), c.str_arg(1), c.arg(2));
    if value.is_undef() {
        return Ok(default);
    }
    if nav.is_empty() {
        return Ok(value);
    }
    let Some(segments) = split_navigation(&format!("x.{nav}")) else {
        return Err(plain("Syntax error in dotted-navigation string").into());
    };
    let mut cur = value;
    let mut walked: Vec<Value> = Vec::new();
    for seg in segments.into_iter().skip(1) {
        let failure = match (&cur, &seg) {
            (Value::Undef, _) => return Ok(default),
            (Value::Hash(h), _) => {
                let next = hash_get(h, &seg).cloned().unwrap_or(Value::Undef);
                walked.push(seg);
                cur = next;
                continue;
            }
            (Value::Array(a), Value::Int(i)) => {
                let len = a.len() as i64;
                let at = if *i < 0 { len + i } else { *i };
                let next = usize::try_from(at)
                    .ok()
                    .and_then(|at| a.get(at).cloned())
                    .unwrap_or(Value::Undef);
                walked.push(seg);
                cur = next;
                continue;
            }
            (Value::Array(_), _) => {
                let t = infer_type(&seg);
                walked.push(seg);
                (
                    format!(
                        "The given data requires an Integer index at {}, got '{t}'",
                        inspect_path(&walked)
                    ),
                    "EXPECTED_INTEGER_INDEX",
                    "index_type",
                    t,
                )
            }
            (other, _) => {
                let t = infer_type(other);
                (
                    format!(
                        "The given data does not contain a Collection at {}, got '{t}'",
                        inspect_path(&walked)
                    ),
                    "EXPECTED_COLLECTION",
                    "value_type",
                    t,
                )
            }
        };
        let (msg, code, detail, t) = failure;
        let Some(l) = c.lambda else {
            return Err(plain(msg).into());
        };
        let error = ErrorValue {
            msg,
            kind: Some("SLICE_ERROR".into()),
            details: vec![
                (Value::str("walked_path"), Value::Array(walked)),
                (Value::str(detail), Value::Type(t)),
            ],
            issue_code: Some(code.into()),
        };
        let error = Value::Rich(Box::new(Rich::Plan(PlanObject::Error(error))));
        return ev.call_lambda(l, vec![error], c.scope);
    }
    Ok(if cur.is_undef() { default } else { cur })
}
