//! Runtime values of the Puppet language: equality and ordering semantics
//! (case-insensitive strings, numeric coercion), string conversion for
//! interpolation, and conversion to catalog JSON.

use std::cmp::Ordering;

use crate::lang::values::types::PType;

#[derive(Debug, Clone)]
pub enum Value {
    Undef,
    Default,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Regex(String),
    Array(Vec<Value>),
    /// Insertion-ordered hash.
    Hash(Vec<(Value, Value)>),
    Type(PType),
    Sensitive(Box<Value>),
    /// The elements an `Iterator` (from `reverse_each`, `step`) produces.
    Iterator(Vec<Value>),
    /// SemVer, SemVerRange and Deferred values.
    Rich(Box<crate::lang::values::rich::Rich>),
}

impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        values_equal(self, other)
    }
}

/// Puppet `==`: strings compare case-insensitively, numbers across Int/Float.
pub fn values_equal(a: &Value, b: &Value) -> bool {
    use Value::*;
    match (a, b) {
        (Undef, Undef) | (Default, Default) => true,
        (Bool(x), Bool(y)) => x == y,
        (Int(x), Int(y)) => x == y,
        (Int(x), Float(y)) | (Float(y), Int(x)) => (*x as f64) == *y,
        (Float(x), Float(y)) => x == y,
        (Str(x), Str(y)) => x.to_lowercase() == y.to_lowercase(),
        (Regex(x), Regex(y)) => x == y,
        (Array(x), Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| values_equal(a, b))
        }
        (Hash(x), Hash(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| hash_get(y, k).is_some_and(|w| values_equal(v, w)))
        }
        (Type(x), Type(y)) => x == y,
        (Rich(x), Rich(y)) => crate::lang::values::rich::rich_equal(x, y),
        (Sensitive(_), Sensitive(_)) => false,
        _ => false,
    }
}

/// Exact key equality for hashes (case-sensitive strings).
pub fn key_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Str(x), Value::Str(y)) => x == y,
        _ => values_equal(a, b),
    }
}

pub fn hash_get<'a>(h: &'a [(Value, Value)], k: &Value) -> Option<&'a Value> {
    h.iter().find(|(kk, _)| key_equal(kk, k)).map(|(_, v)| v)
}

pub fn hash_get_str<'a>(h: &'a [(Value, Value)], k: &str) -> Option<&'a Value> {
    h.iter()
        .find(|(kk, _)| matches!(kk, Value::Str(s) if s == k))
        .map(|(_, v)| v)
}

pub fn hash_set(h: &mut Vec<(Value, Value)>, k: Value, v: Value) {
    if let Some(slot) = h.iter_mut().find(|(kk, _)| key_equal(kk, &k)) {
        slot.1 = v;
    } else {
        h.push((k, v));
    }
}

impl Value {
    pub fn str(s: impl Into<String>) -> Value {
        Value::Str(s.into())
    }

    pub fn is_undef(&self) -> bool {
        matches!(self, Value::Undef)
    }

    /// Puppet truthiness: only `undef` and `false` are false.
    pub fn truthy(&self) -> bool {
        !matches!(self, Value::Undef | Value::Bool(false))
    }

    /// The name of the value's general type, as used in "got X" messages.
    pub fn type_name(&self) -> String {
        match self {
            Value::Undef => "Undef".into(),
            Value::Default => "Default".into(),
            Value::Bool(_) => "Boolean".into(),
            Value::Int(_) => "Integer".into(),
            Value::Float(_) => "Float".into(),
            Value::Str(_) => "String".into(),
            Value::Regex(_) => "Regexp".into(),
            Value::Array(_) => "Array".into(),
            Value::Hash(_) => "Hash".into(),
            Value::Type(t) => match t {
                PType::Resource(Some(n), Some(_)) => n.clone(),
                PType::Class(Some(_)) => "Class".into(),
                _ => "Type".into(),
            },
            Value::Sensitive(_) => "Sensitive".into(),
            Value::Iterator(_) => "Iterator".into(),
            Value::Rich(r) => r.type_name().into(),
        }
    }

    /// String form used by interpolation and `String(x)`.
    pub fn to_s(&self) -> String {
        match self {
            Value::Undef => String::new(),
            Value::Str(s) => s.clone(),
            Value::Iterator(items) => format!("Iterator[{}]-Value", common_type_name(items)),
            other => other.to_inspect(false),
        }
    }

    /// Puppet's string forms of nested values: with `quote`, the `String(x)`
    /// form (`['a', undef]`); without, the interpolation form (`[a, ]`).
    pub fn to_inspect(&self, quote: bool) -> String {
        match self {
            Value::Undef => {
                if quote {
                    "undef".into()
                } else {
                    String::new()
                }
            }
            Value::Default => "default".into(),
            Value::Bool(b) => b.to_string(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => fmt_float(*f),
            Value::Str(s) if quote => puppet_quote(s, false),
            Value::Str(s) => s.clone(),
            Value::Regex(r) => format!("/{r}/"),
            Value::Array(a) => {
                let items: Vec<String> = a.iter().map(|v| v.to_inspect(quote)).collect();
                format!("[{}]", items.join(", "))
            }
            Value::Hash(h) => {
                let items: Vec<String> = h
                    .iter()
                    .map(|(k, v)| format!("{} => {}", k.to_inspect(quote), v.to_inspect(quote)))
                    .collect();
                format!("{{{}}}", items.join(", "))
            }
            Value::Type(PType::Resource(Some(t), Some(title))) => format!("{t}['{title}']"),
            // An alias in a string is spelled out, as Puppet's `to_s` does.
            Value::Type(t @ PType::Alias(..)) => {
                crate::lang::values::types::format::alias_expanded(t)
            }
            Value::Type(t) => t.to_string(),
            Value::Sensitive(_) => "Sensitive [value redacted]".into(),
            Value::Iterator(a) => Value::Array(a.clone()).to_inspect(quote),
            Value::Rich(r) => r.to_string(),
        }
    }

    /// Catalog JSON form; `None` for undef (omitted parameters).
    pub fn to_json(&self) -> Option<serde_json::Value> {
        use serde_json::Value as J;
        Some(match self {
            Value::Undef => return None,
            Value::Default => J::String("default".into()),
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i) => J::from(*i),
            Value::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
            Value::Str(s) => J::String(s.clone()),
            Value::Regex(r) => J::String(format!("/{r}/")),
            Value::Array(a) => J::Array(a.iter().map(|v| v.to_json().unwrap_or(J::Null)).collect()),
            Value::Hash(h) => {
                let mut m = serde_json::Map::new();
                for (k, v) in h {
                    m.insert(k.to_s(), v.to_json().unwrap_or(J::Null));
                }
                J::Object(m)
            }
            Value::Type(t) => J::String(t.to_string()),
            Value::Sensitive(v) => return v.to_json(),
            Value::Iterator(a) => return Value::Array(a.clone()).to_json(),
            Value::Rich(r) => J::String(r.to_string()),
        })
    }

    /// Convert JSON (facts, hiera data) to a value.
    pub fn from_json(j: &serde_json::Value) -> Value {
        use serde_json::Value as J;
        match j {
            J::Null => Value::Undef,
            J::Bool(b) => Value::Bool(*b),
            J::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Float(n.as_f64().unwrap_or(0.0)),
            },
            J::String(s) => Value::Str(s.clone()),
            J::Array(a) => Value::Array(a.iter().map(Value::from_json).collect()),
            J::Object(m) => Value::Hash(
                m.iter()
                    .map(|(k, v)| (Value::Str(k.clone()), Value::from_json(v)))
                    .collect(),
            ),
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// The general type name shared by all `items` (`Integer`, `String`...),
/// `Any` when they differ.
fn common_type_name(items: &[Value]) -> String {
    let mut names = items.iter().map(Value::type_name);
    let first = names.next().unwrap_or_else(|| "Any".into());
    if names.all(|n| n == first) {
        first
    } else {
        "Any".into()
    }
}

/// A string as Puppet quotes it inside a collection, Puppet's `puppet_quote`: single quotes (a quote escaped, a backslash
/// kept with the character after it) unless the string holds a control
/// character or `double` is asked; then double quotes with escapes.
pub fn puppet_quote(s: &str, double: bool) -> String {
    if double || s.chars().any(|c| (c as u32) < 0x20) {
        let mut o = String::from("\"");
        for c in s.chars() {
            match c {
                '\t' => o.push_str("\\t"),
                '\n' => o.push_str("\\n"),
                '\r' => o.push_str("\\r"),
                '"' => o.push_str("\\\""),
                '$' => o.push_str("\\$"),
                '\\' => o.push_str("\\\\"),
                c if (c as u32) < 0x20 => o.push_str(&format!("\\u{{{:X}}}", c as u32)),
                c => o.push(c),
            }
        }
        o.push('"');
        return o;
    }
    let mut o = String::from("'");
    let mut escaped = false;
    for c in s.chars() {
        if escaped {
            o.push('\\');
            o.push(c);
            escaped = false;
        } else if c == '\'' {
            o.push_str("\\'");
        } else if c == '\\' {
            escaped = true;
        } else {
            o.push(c);
        }
    }
    if escaped {
        o.push('\\');
    }
    o.push('\'');
    o
}

/// Ruby's `Float#to_s` (what Puppet interpolates): an exponent from
/// 1e16 up and under 1e-4 (`1.0e+20`, `2.5e-07`), else `1.5`, `2.0`.
pub fn fmt_float(f: f64) -> String {
    if f.is_finite() && (f.abs() >= 1e15 || (f != 0.0 && f.abs() < 1e-4)) {
        let s = format!("{f:e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let m = if m.contains('.') {
            m.to_string()
        } else {
            format!("{m}.0")
        };
        let (sign, digits) = e.strip_prefix('-').map_or(("+", e), |d| ("-", d));
        return format!("{m}e{sign}{digits:0>2}");
    }
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e15 {
        format!("{f:.1}")
    } else {
        format!("{f}")
    }
}

/// Ordering for `<`, `>`, sort: numbers numerically, strings case-insensitively.
pub fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    use Value::*;
    match (a, b) {
        (Int(x), Int(y)) => Some(x.cmp(y)),
        (Int(x), Float(y)) => (*x as f64).partial_cmp(y),
        (Float(x), Int(y)) => x.partial_cmp(&(*y as f64)),
        (Float(x), Float(y)) => x.partial_cmp(y),
        (Str(x), Str(y)) => Some(x.to_lowercase().cmp(&y.to_lowercase())),
        (Rich(x), Rich(y)) => crate::lang::values::rich::rich_compare(x, y),
        _ => None,
    }
}

/// Largest value (nodes plus string bytes / 64) an expression may build;
/// stops inputs that double a value until memory runs out.
pub const MAX_VALUE_SIZE: usize = 1_000_000;

/// How deeply values may nest: arrays, hashes, `Sensitive`, iterators,
/// `Deferred` arguments and the data types they hold, together. Far deeper
/// than data read from JSON (128) or YAML (64) can be; it bounds every
/// recursive walk over a value (comparison, conversion, output, drop), and
/// values nested by a loop at run time stop here with an error.
pub const MAX_VALUE_DEPTH: usize = 256;

/// What makes a value too big to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Excess {
    /// More than [`MAX_VALUE_SIZE`].
    Size,
    /// Nested deeper than [`MAX_VALUE_DEPTH`].
    Depth,
}

impl std::fmt::Display for Excess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Excess::Size => write!(f, "Value too large (more than {MAX_VALUE_SIZE} elements)"),
            Excess::Depth => write!(
                f,
                "Value nested too deeply (more than {MAX_VALUE_DEPTH} levels)"
            ),
        }
    }
}

/// The deep size of `v` counted up to `limit + 1`, and whether it nests
/// deeper than [`MAX_VALUE_DEPTH`] (the walk never goes deeper).
fn measure(v: &Value, limit: usize) -> (usize, bool) {
    fn walk(v: &Value, budget: &mut usize, depth: usize, deep: &mut bool) -> bool {
        if depth > MAX_VALUE_DEPTH {
            *deep = true;
            return true;
        }
        let cost = 1 + match v {
            Value::Str(s) | Value::Regex(s) => s.len() / 64,
            _ => 0,
        };
        if *budget < cost {
            *budget = 0;
            return true;
        }
        *budget -= cost;
        let mut inner = |x: &Value| walk(x, budget, depth + 1, deep);
        match v {
            Value::Array(a) | Value::Iterator(a) => a.iter().any(inner),
            Value::Hash(h) => h.iter().any(|(k, x)| inner(k) || inner(x)),
            Value::Sensitive(x) => inner(x),
            Value::Rich(r) => match &**r {
                crate::lang::values::rich::Rich::Deferred { args, .. } => args.iter().any(inner),
                _ => false,
            },
            Value::Type(t) => {
                let room = MAX_VALUE_DEPTH + 1 - depth;
                if crate::lang::values::types::depth(t, room) > room {
                    *deep = true;
                    return true;
                }
                false
            }
            _ => false,
        }
    }
    let mut budget = limit;
    let mut deep = false;
    if walk(v, &mut budget, 1, &mut deep) {
        (limit.saturating_add(1), deep)
    } else {
        (limit - budget, false)
    }
}

/// Deep size of `v` (nodes plus string bytes / 64), counted up to
/// `limit + 1` at most; a value nested deeper than [`MAX_VALUE_DEPTH`]
/// counts as `limit + 1`.
pub fn deep_size(v: &Value, limit: usize) -> usize {
    measure(v, limit).0
}

/// Whether `v` is too large ([`MAX_VALUE_SIZE`]) or too deep
/// ([`MAX_VALUE_DEPTH`]) to keep.
pub fn excess(v: &Value) -> Option<Excess> {
    match measure(v, MAX_VALUE_SIZE) {
        (_, true) => Some(Excess::Depth),
        (size, false) if size > MAX_VALUE_SIZE => Some(Excess::Size),
        _ => None,
    }
}

/// Parse a numeric string the way Puppet arithmetic does.
pub fn str_to_num(s: &str) -> Option<Value> {
    let t = s.trim();
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return i64::from_str_radix(h, 16).ok().map(Value::Int);
    }
    if let Ok(i) = t.parse::<i64>() {
        return Some(Value::Int(i));
    }
    if t.chars().all(|c| c.is_ascii_digit() || ".eE+-".contains(c)) && !t.is_empty() {
        return t.parse::<f64>().ok().map(Value::Float);
    }
    None
}
