//! More of Debian's stdlib, with the checks and messages of its Ruby
//! sources: the string helpers `swapcase`, `squeeze`, `unix2dos`,
//! `uriescape` (Ruby's RFC 2396 escaping), `shell_escape` and `shell_join`
//! (Ruby's `Shellwords`), `stdlib::start_with`, `stdlib::end_with` and
//! `stdlib::extname`; the array `union`; `type_of` (the detailed inferred
//! type); and the legacy validator `validate_slength`.

use crate::lang::error::plain;
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::functions::stdlib::{arg_3x, ruby_class, ruby_integer};
use crate::lang::functions::{Builder, Family, any, sig, string};
use crate::lang::template::erb::value::inspect;
use crate::lang::values::types::PType;
use crate::lang::values::value::Value;

pub fn register(b: &mut Builder) {
    let f = Family::Stdlib;
    let rest = |ret| sig(ret).rest("args", any());
    b.add(&["swapcase"], f, rest("Any"), swapcase);
    b.add(&["squeeze"], f, rest("Any"), squeeze);
    b.add(&["union"], f, rest("Array"), union);
    b.add(&["unix2dos"], f, rest("String"), unix2dos);
    b.add(&["uriescape"], f, rest("Any"), uriescape);
    b.add(&["shell_join"], f, rest("String"), shell_join);
    b.add(&["validate_slength"], f, rest("Any"), validate_slength);
    b.add(
        &["shell_escape"],
        f,
        sig("String").req("string", any()),
        |_, c| Ok(Value::Str(shell_escape(&c.arg(0).to_s()))),
    );
    let non_empty = PType::String(1, i64::MAX);
    let affixes = PType::Variant(vec![
        non_empty.clone(),
        PType::Array(Box::new(non_empty), 1, i64::MAX),
    ]);
    b.add(
        &["stdlib::start_with"],
        f,
        sig("Boolean")
            .req("test_string", string())
            .req("prefixes", affixes.clone()),
        |_, c| {
            Ok(Value::Bool(
                affix_list(&c.arg(1))
                    .iter()
                    .any(|p| c.arg(0).to_s().starts_with(p.as_str())),
            ))
        },
    );
    b.add(
        &["stdlib::end_with"],
        f,
        sig("Boolean")
            .req("test_string", string())
            .req("suffixes", affixes),
        |_, c| {
            Ok(Value::Bool(
                affix_list(&c.arg(1))
                    .iter()
                    .any(|p| c.arg(0).to_s().ends_with(p.as_str())),
            ))
        },
    );
    b.add(
        &["stdlib::extname"],
        f,
        sig("String").req("filename", string()),
        |_, c| {
            Ok(Value::Str(crate::lang::functions::native_ports::extname(
                &c.arg(0).to_s(),
            )))
        },
    );
    b.add(
        &["type_of"],
        f,
        sig("Type").req("value", any()),
        crate::lang::functions::conversion::type_of,
    );
}

/// A prefix or suffix argument: one string or an array of them.
fn affix_list(v: &Value) -> Vec<String> {
    match v {
        Value::Array(a) => a.iter().map(Value::to_s).collect(),
        other => vec![other.to_s()],
    }
}

/// A string or an array whose strings are mapped by `f` (other elements
/// kept), as `swapcase` and `uriescape` take them; `None` for anything else.
fn map_strings(v: &Value, f: fn(&str) -> String) -> Option<Value> {
    match v {
        Value::Str(s) => Some(Value::Str(f(s))),
        Value::Array(a) => Some(Value::Array(
            a.iter()
                .map(|i| match i {
                    Value::Str(s) => Value::Str(f(s)),
                    other => other.clone(),
                })
                .collect(),
        )),
        _ => None,
    }
}

fn swapcase(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    if c.args.is_empty() {
        return Err(plain("swapcase(): Wrong number of arguments given (0 for 1)").into());
    }
    let swap = |s: &str| -> String {
        s.chars()
            .flat_map(|ch| {
                let v: Vec<char> = if ch.is_lowercase() {
                    ch.to_uppercase().collect()
                } else if ch.is_uppercase() {
                    ch.to_lowercase().collect()
                } else {
                    vec![ch]
                };
                v
            })
            .collect()
    };
    map_strings(&arg_3x(&c.arg(0)), swap)
        .ok_or_else(|| plain("swapcase(): Requires either array or string to work with").into())
}

/// Ruby's `String#squeeze(set)`: runs of one character in `set` (`a-z`
/// ranges, a leading `^` negates; `None`: every character) become one.
fn squeeze_str(s: &str, set: Option<&str>) -> String {
    let in_set = |ch: char| -> bool {
        let Some(set) = set else { return true };
        let (neg, body) = match set.strip_prefix('^') {
            Some(r) if !r.is_empty() => (true, r),
            _ => (false, set),
        };
        let cs: Vec<char> = body.chars().collect();
        let mut hit = false;
        let mut i = 0;
        while i < cs.len() {
            if i + 2 < cs.len() && cs[i + 1] == '-' {
                hit |= (cs[i]..=cs[i + 2]).contains(&ch);
                i += 3;
            } else {
                hit |= cs[i] == ch;
                i += 1;
            }
        }
        hit != neg
    };
    let mut out = String::new();
    let mut last = None;
    for ch in s.chars() {
        if last == Some(ch) && in_set(ch) {
            continue;
        }
        out.push(ch);
        last = Some(ch);
    }
    out
}

fn squeeze(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let n = c.args.len();
    if n != 1 && n != 2 {
        return Err(plain(format!(
            "squeeze(): Wrong number of arguments given {n} for 2 or 1"
        ))
        .into());
    }
    let set = c.args.get(1).map(|v| arg_3x(v).to_s());
    let one = |v: &Value| -> EvalResult<Value> {
        match v {
            Value::Str(s) => Ok(Value::Str(squeeze_str(s, set.as_deref()))),
            other => Err(plain(format!(
                "undefined method `squeeze' for {}:{}",
                inspect(other),
                ruby_class(other)
            ))
            .into()),
        }
    };
    match arg_3x(&c.arg(0)) {
        Value::Array(a) => Ok(Value::Array(a.iter().map(one).collect::<EvalResult<_>>()?)),
        other => one(&other),
    }
}

fn union(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    if c.args.len() < 2 {
        return Err(plain(format!(
            "union(): Wrong number of arguments given ({} for < 2)",
            c.args.len()
        ))
        .into());
    }
    let mut out: Vec<Value> = Vec::new();
    for a in &c.args {
        let Value::Array(items) = a else {
            return Err(plain("union(): Every parameter must be an array").into());
        };
        for i in items {
            if !out.contains(i) {
                out.push(i.clone());
            }
        }
    }
    Ok(Value::Array(out))
}

fn unix2dos(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let Some(Value::Str(s)) = c.args.first() else {
        return Err(plain("unix2dos(): Requires string as argument").into());
    };
    let mut out = String::new();
    for line in s.split_inclusive('\n') {
        match line.strip_suffix('\n') {
            Some(body) => {
                out.push_str(body.trim_end_matches('\r'));
                out.push_str("\r\n");
            }
            None => out.push_str(line),
        }
    }
    Ok(Value::Str(out))
}

/// Ruby's `URI::DEFAULT_PARSER.escape` (RFC 2396): every byte outside the
/// unreserved and reserved characters as `%XX`.
fn uri_escape(s: &str) -> String {
    let keep = |b: u8| b.is_ascii_alphanumeric() || b"-_.!~*'();/?:@&=+$,[]".contains(&b);
    let mut out = String::new();
    for b in s.bytes() {
        if keep(b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn uriescape(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    if c.args.is_empty() {
        return Err(plain("uriescape(): Wrong number of arguments given (0 for 1)").into());
    }
    map_strings(&arg_3x(&c.arg(0)), uri_escape)
        .ok_or_else(|| plain("uriescape(): Requires either array or string to work with").into())
}

/// Ruby's `Shellwords.shellescape`: `''` for an empty string, else a
/// backslash before each character outside `A-Za-z0-9_-.,:+/@` and
/// newlines quoted as `'\n'`.
pub fn shell_escape(s: &str) -> String {
    if s.is_empty() {
        return "''".into();
    }
    let mut out = String::new();
    for ch in s.chars() {
        if ch == '\n' {
            out.push_str("'\n'");
        } else if ch.is_ascii_alphanumeric() || "_-.,:+/@".contains(ch) {
            out.push(ch);
        } else {
            out.push('\\');
            out.push(ch);
        }
    }
    out
}

fn shell_join(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let n = c.args.len();
    if n != 1 {
        return Err(plain(format!(
            "shell_join(): Wrong number of arguments given ({n} for 1)"
        ))
        .into());
    }
    let a = arg_3x(&c.arg(0));
    let Value::Array(items) = &a else {
        return Err(plain(format!("First argument is not an Array: {}", inspect(&a))).into());
    };
    let words: Vec<String> = items.iter().map(|i| shell_escape(&i.to_s())).collect();
    Ok(Value::Str(words.join(" ")))
}

/// Ruby's `Integer(v)` for `validate_slength`'s bounds: integers, floats
/// truncated, strings parsed strictly; `None` for anything else.
fn ruby_integer_of(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        Value::Float(f) if f.is_finite() => Some(f.trunc() as i64),
        Value::Str(s) => ruby_integer(s),
        _ => None,
    }
}

fn validate_slength(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let n = c.args.len();
    if n != 2 && n != 3 {
        return Err(plain(format!(
            "validate_slength(): Wrong number of arguments ({n}; must be 2 or 3)"
        ))
        .into());
    }
    let args: Vec<Value> = c.args.iter().map(arg_3x).collect();
    let bound = |v: &Value| format!("{}:{}", v.to_s(), ruby_class(v));
    let max = ruby_integer_of(&args[1])
        .filter(|m| *m > 0)
        .ok_or_else(|| {
            plain(format!(
                "validate_slength(): Expected second argument to be a positive Numeric, got {}",
                bound(&args[1])
            ))
        })?;
    let min = match args.get(2) {
        Some(m) => ruby_integer_of(m).filter(|m| *m >= 0).ok_or_else(|| {
            plain(format!(
                "validate_slength(): Expected third argument to be unset or a positive Numeric, got {}",
                bound(m)
            ))
        })?,
        None => 0,
    };
    if max < min {
        return Err(plain(
            "validate_slength(): Expected second argument to be equal to or larger than third argument",
        )
        .into());
    }
    let input = &args[0];
    let input_len = match input {
        Value::Str(s) => s.chars().count(),
        Value::Array(a) => a.len(),
        _ => 0,
    };
    let check = |s: &str| -> EvalResult<()> {
        let len = s.chars().count() as i64;
        if len > max || len < min {
            return Err(plain(format!(
                "validate_slength(): Expected length of {} to be between {min} and {max}, was {input_len}",
                inspect(input)
            ))
            .into());
        }
        Ok(())
    };
    match input {
        Value::Str(s) => check(s)?,
        Value::Array(a) => {
            for (pos, item) in a.iter().enumerate() {
                let Value::Str(s) = item else {
                    return Err(plain(format!(
                        "validate_slength(): Expected element at array position {pos} to be a String, got {}",
                        ruby_class(item)
                    ))
                    .into());
                };
                check(s)?;
            }
        }
        other => {
            return Err(plain(format!(
                "validate_slength(): Expected first argument to be a String or Array, got {}",
                ruby_class(other)
            ))
            .into());
        }
    }
    Ok(Value::Undef)
}
