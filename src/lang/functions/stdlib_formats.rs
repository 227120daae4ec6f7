//! Debian stdlib's writers and readers of other formats: `to_yaml`
//! (Psych's `to_yaml` with its `indentation` and `line_width` options,
//! written by the ERB templates' Psych-exact writer), `to_toml` (the
//! output of stdlib's `TomlDumper`, byte for byte: keys sorted, plain
//! pairs before tables, Ruby's `inspect` of values) and `parsehocon`
//! (HOCON text to a hash by [`crate::lang::values::hocon`], the default
//! answered when the gem would raise a parse error).

use crate::lang::error::plain;
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::functions::{Builder, Family, any, sig, string};
use crate::lang::template::erb::control::Ctl;
use crate::lang::template::erb::value::{class_name, inspect, inspect_str, ruby_sort};
use crate::lang::template::erb::yaml::{Options, to_yaml_with};
use crate::lang::values::hocon;
use crate::lang::values::types::PType;
use crate::lang::values::value::Value;

pub fn register(b: &mut Builder) {
    let f = Family::Stdlib;
    let hash = || PType::Hash(Box::new(any()), Box::new(any()), 0, i64::MAX);
    b.add(
        &["to_yaml"],
        f,
        sig("String").req("data", any()).opt("options", hash()),
        to_yaml,
    );
    b.add(&["to_toml"], f, sig("String").req("data", hash()), to_toml);
    b.add(
        &["parsehocon"],
        f,
        sig("Data")
            .req("hocon_string", string())
            .opt("default", any()),
        parsehocon,
    );
}

/// An ERB-side error (the YAML writer's) as an evaluation error.
fn from_ctl(c: Ctl) -> crate::lang::eval::control::Unwind {
    match c {
        Ctl::Err(e) => e.into(),
        Ctl::Next(_) | Ctl::Break(_) | Ctl::Return(_) => plain("to_yaml: unexpected exit").into(),
    }
}

fn to_yaml(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let data = c.arg(0);
    if let Some(bad) = unsafe_for_yaml(&data) {
        return Err(plain(format!(
            "to_yaml(): ferry does not write a {bad} as YAML (Puppet writes Ruby's object dump)"
        ))
        .into());
    }
    let opts = yaml_options(&c.arg(1))?;
    Ok(Value::Str(to_yaml_with(&data, &opts).map_err(from_ctl)?))
}

/// The first value inside `v` that Psych would dump as a Ruby object
/// (`!ruby/object:...`): a type, a Sensitive (whose secret Psych writes
/// out), a timestamp or another rich value.
fn unsafe_for_yaml(v: &Value) -> Option<String> {
    match v {
        Value::Array(a) => a.iter().find_map(unsafe_for_yaml),
        Value::Hash(h) => h
            .iter()
            .find_map(|(k, v)| unsafe_for_yaml(k).or_else(|| unsafe_for_yaml(v))),
        Value::Undef
        | Value::Default
        | Value::Bool(_)
        | Value::Int(_)
        | Value::Float(_)
        | Value::Str(_)
        | Value::Regex(_) => None,
        other => Some(other.type_name()),
    }
}

/// Psych's options from the `options` hash: `indentation`, `line_width`
/// and `canonical` (which ferry refuses); other keys are ignored, as
/// Psych ignores them.
fn yaml_options(h: &Value) -> EvalResult<Options> {
    let mut o = Options::default();
    let Value::Hash(h) = h else {
        return Ok(o);
    };
    let int = |v: &Value| -> EvalResult<i64> {
        match v {
            Value::Int(i) => Ok(*i),
            Value::Float(f) => Ok(f.trunc() as i64),
            Value::Undef => Err(plain("no implicit conversion from nil to integer").into()),
            other => Err(plain(format!(
                "no implicit conversion of {} into Integer",
                class_name(other)
            ))
            .into()),
        }
    };
    for (k, v) in h {
        match k.to_s().as_str() {
            "indentation" => o.indentation = int(v)?,
            "line_width" => {
                let limit = match v {
                    Value::Int(i) => *i as f64,
                    Value::Float(f) => *f,
                    Value::Undef => f64::INFINITY,
                    other => {
                        return Err(plain(format!(
                            "comparison of {} with 0 failed",
                            class_name(other)
                        ))
                        .into());
                    }
                };
                if limit < 0.0 && limit != -1.0 {
                    return Err(plain(format!(
                        "Invalid line_width {}, must be non-negative or -1 for unlimited.",
                        inspect(v)
                    ))
                    .into());
                }
                o.line_width = int(v)?;
                o.fold_over = (limit >= 0.0).then_some(limit);
            }
            "canonical" if v.truthy() => {
                return Err(plain("to_yaml(): ferry does not write canonical YAML").into());
            }
            _ => {}
        }
    }
    Ok(o)
}

fn to_toml(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let mut out = String::new();
    if let Value::Hash(h) = c.arg(0) {
        toml_table(&mut out, &h, &[], false)?;
    }
    Ok(Value::Str(out))
}

/// A table's pairs split as the dumper splits them: plain values, tables
/// (hash values) and arrays of tables (arrays whose first item is a hash),
/// each in the order of the sorted keys.
type Pairs = Vec<(String, Value)>;

fn toml_sort(h: &[(Value, Value)]) -> EvalResult<(Pairs, Pairs, Pairs)> {
    let mut keys: Vec<Value> = h.iter().map(|(k, _)| k.clone()).collect();
    ruby_sort(&mut keys).map_err(from_ctl)?;
    let (mut simple, mut nested, mut arrays) = (Vec::new(), Vec::new(), Vec::new());
    for k in keys {
        let v = h
            .iter()
            .find(|(kk, _)| crate::lang::template::erb::value::ruby_eq(kk, &k))
            .map(|(_, v)| v.clone())
            .unwrap_or(Value::Undef);
        let name = toml_key(&k)?;
        match &v {
            Value::Hash(_) => nested.push((name, v)),
            Value::Array(a) if matches!(a.first(), Some(Value::Hash(_))) => arrays.push((name, v)),
            _ => simple.push((name, v)),
        }
    }
    Ok((simple, nested, arrays))
}

/// The dumper's `visit`: the `[prefix]` line when the table has plain
/// pairs or none at all, then its pairs.
fn toml_table(
    out: &mut String,
    h: &[(Value, Value)],
    prefix: &[String],
    array: bool,
) -> EvalResult<()> {
    let pairs = toml_sort(h)?;
    if !prefix.is_empty() && (!pairs.0.is_empty() || h.is_empty()) {
        toml_header(out, prefix, array);
    }
    toml_pairs(out, pairs, prefix)
}

fn toml_pairs(
    out: &mut String,
    (simple, nested, arrays): (Pairs, Pairs, Pairs),
    prefix: &[String],
) -> EvalResult<()> {
    for (k, v) in simple {
        out.push_str(&format!("{k} = {}\n", toml_value(&v)?));
    }
    for (k, v) in nested {
        if let Value::Hash(h) = v {
            toml_table(out, &h, &[prefix, &[k]].concat(), false)?;
        }
    }
    for (k, v) in arrays {
        let inner = [prefix, &[k]].concat();
        if let Value::Array(items) = v {
            for item in items {
                toml_header(out, &inner, true);
                let Value::Hash(h) = item else {
                    return Err(plain(format!(
                        "to_toml(): the array of tables '{}' holds a {}, not a Hash",
                        inner.join("."),
                        item.type_name()
                    ))
                    .into());
                };
                toml_pairs(out, toml_sort(&h)?, &inner)?;
            }
        }
    }
    Ok(())
}

fn toml_header(out: &mut String, prefix: &[String], array: bool) {
    let name = prefix.join(".");
    if array {
        out.push_str(&format!("[[{name}]]\n"));
    } else {
        out.push_str(&format!("[{name}]\n"));
    }
}

/// A key as the dumper writes it: bare when some line of it (Ruby's `^`
/// and `$`) is only letters, digits, `_` and `-`, else in double quotes
/// with only `"` escaped.
fn toml_key(k: &Value) -> EvalResult<String> {
    let text = crate::lang::template::erb::value::to_s(k);
    let body = text.strip_suffix('\n').unwrap_or(&text);
    let bare = body.split('\n').any(|line| {
        line.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    });
    if bare {
        return Ok(text);
    }
    match k {
        Value::Str(s) => Ok(format!("\"{}\"", s.replace('"', "\\\""))),
        other => Err(plain(format!(
            "undefined method `gsub' for {}:{}",
            inspect(other),
            class_name(other)
        ))
        .into()),
    }
}

/// A plain value: Ruby's `inspect` (a string's without the `\` it puts
/// before `#{`, `#$` and `#@`; a regexp's inspected once more).
fn toml_value(v: &Value) -> EvalResult<String> {
    if let Some(bad) = unsafe_for_yaml(v) {
        return Err(plain(format!("to_toml(): ferry does not write a {bad} as TOML")).into());
    }
    Ok(match v {
        Value::Str(s) => {
            // Ruby's `inspect.gsub(/\\(#[$@{])/, '\1')`.
            let quoted: Vec<char> = inspect_str(s).chars().collect();
            let mut out = String::with_capacity(quoted.len());
            for (i, &c) in quoted.iter().enumerate() {
                let escapes_hash = c == '\\'
                    && quoted.get(i + 1) == Some(&'#')
                    && matches!(quoted.get(i + 2), Some('{' | '$' | '@'));
                if !escapes_hash {
                    out.push(c);
                }
            }
            out
        }
        Value::Regex(_) => inspect_str(&inspect(v)),
        Value::Default => ":default".into(),
        other => inspect(other),
    })
}

fn parsehocon(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    match hocon::parse(&c.arg(0).to_s()) {
        Ok(v) => Ok(v),
        Err(e) if e.is_parse() && c.args.len() > 1 => Ok(c.arg(1)),
        Err(e) => Err(plain(e.to_string()).into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ruby_string_inspect() {
        let s = "a\u{1}\u{7f}\u{85}\u{2028}\u{10FFFF}\u{378}\u{e000}\u{1F600}#{x}#y\0";
        assert_eq!(
            inspect_str(s),
            "\"a\\u0001\\u007F\u{85}\\u2028\\u{10FFFF}\\u0378\u{e000}\u{1F600}\\#{x}#y\\u0000\""
        );
    }
}
