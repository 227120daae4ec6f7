//! Ruby semantics of ERB values: `to_s` and `inspect` forms, `==`
//! (case-sensitive strings), `<=>` (byte-order strings, element-wise
//! arrays), class names, and sorting.

use crate::lang::template::erb::control::{R, fail};
use crate::lang::values::value::{Value, fmt_float};

/// Ruby's `to_s`.
pub fn to_s(v: &Value) -> String {
    match v {
        Value::Undef => String::new(),
        Value::Str(s) => s.strip_prefix("\u{0}class:").unwrap_or(s).to_string(),
        Value::Float(f) => ruby_float(*f),
        Value::Array(_) | Value::Hash(_) => inspect(v),
        Value::Regex(r) => format!("(?-mix:{r})"),
        other => other.to_s(),
    }
}

fn ruby_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    fmt_float(f)
}

/// Ruby's `inspect`.
pub fn inspect(v: &Value) -> String {
    match v {
        Value::Undef => "nil".into(),
        Value::Str(s) if s.starts_with("\u{0}class:") => to_s(v),
        Value::Str(s) => inspect_str(s),
        Value::Array(a) => format!("[{}]", a.iter().map(inspect).collect::<Vec<_>>().join(", ")),
        Value::Hash(h) => format!(
            "{{{}}}",
            h.iter()
                .map(|(k, v)| format!("{}=>{}", inspect(k), inspect(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Regex(r) => format!("/{r}/"),
        other => to_s(other),
    }
}

/// Ruby's `String#inspect` of a UTF-8 string: the escapes Ruby has a
/// letter for, `\#` before `{`, `$` or `@`, and `\uXXXX` for the
/// characters Onigmo does not count as printable (controls but U+0085,
/// the line and paragraph separators and unassigned points).
pub fn inspect_str(s: &str) -> String {
    static UNPRINTABLE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let unprintable = UNPRINTABLE.get_or_init(|| {
        regex::Regex::new(r"^[\p{Cc}\p{Cn}\x{2028}\x{2029}]$")
            .unwrap_or_else(|_| regex::Regex::new("$^").expect("empty"))
    });
    let mut o = String::from("\"");
    let mut chars = s.chars().peekable();
    let mut buf = [0u8; 4];
    while let Some(c) = chars.next() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\t' => o.push_str("\\t"),
            '\r' => o.push_str("\\r"),
            '\x0c' => o.push_str("\\f"),
            '\x0b' => o.push_str("\\v"),
            '\x08' => o.push_str("\\b"),
            '\x07' => o.push_str("\\a"),
            '\x1b' => o.push_str("\\e"),
            '#' if matches!(chars.peek(), Some('{' | '$' | '@')) => o.push_str("\\#"),
            '\u{85}' => o.push(c),
            c if unprintable.is_match(c.encode_utf8(&mut buf)) => {
                let code = c as u32;
                if code <= 0xFFFF {
                    o.push_str(&format!("\\u{code:04X}"));
                } else {
                    o.push_str(&format!("\\u{{{code:X}}}"));
                }
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// Ruby's `==`.
pub fn ruby_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| ruby_eq(a, b))
        }
        (Value::Hash(x), Value::Hash(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.iter().any(|(k2, v2)| ruby_eq(k, k2) && ruby_eq(v, v2)))
        }
        (Value::Sensitive(_), _) | (_, Value::Sensitive(_)) => false,
        _ => crate::lang::values::value::values_equal(a, b),
    }
}

/// Ruby's `<=>` (None when the values do not compare).
pub fn ruby_cmp(a: &Value, b: &Value) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Value::Str(x), Value::Str(y)) => Some(x.as_bytes().cmp(y.as_bytes())),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                match ruby_cmp(p, q)? {
                    std::cmp::Ordering::Equal => {}
                    o => return Some(o),
                }
            }
            Some(x.len().cmp(&y.len()))
        }
        (Value::Bool(x), Value::Bool(y)) if x == y => Some(std::cmp::Ordering::Equal),
        (Value::Undef, Value::Undef) => Some(std::cmp::Ordering::Equal),
        _ => crate::lang::values::value::compare(a, b),
    }
}

/// Ruby class name of a value (for messages and `is_a?`).
pub fn class_name(v: &Value) -> &'static str {
    match v {
        Value::Undef => "NilClass",
        Value::Bool(true) => "TrueClass",
        Value::Bool(false) => "FalseClass",
        Value::Int(_) => "Integer",
        Value::Float(_) => "Float",
        Value::Str(_) => "String",
        Value::Regex(_) => "Regexp",
        Value::Array(_) => "Array",
        Value::Hash(_) => "Hash",
        Value::Default => "Symbol",
        _ => "Object",
    }
}

/// Sorted copy with Ruby's ordering (an error when elements do not compare).
pub fn ruby_sort(items: &mut [Value]) -> R<()> {
    let mut bad = None;
    items.sort_by(|a, b| {
        ruby_cmp(a, b).unwrap_or_else(|| {
            bad = Some(format!(
                "comparison of {} with {} failed",
                class_name(a),
                class_name(b)
            ));
            std::cmp::Ordering::Equal
        })
    });
    match bad {
        Some(m) => fail(m),
        None => Ok(()),
    }
}
