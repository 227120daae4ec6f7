//! Display of data types (`Integer[1, 10]`, `Enum['a', 'b']`...) and
//! Puppet-style mismatch descriptions ("expects a String value, got Integer").

use std::fmt;

use crate::lang::values::types::{PType, capitalize, is_instance};
use crate::lang::values::value::{Value, hash_get_str};

const MAXI: i64 = i64::MAX;
const MINI: i64 = i64::MIN;

fn article(s: &str) -> &'static str {
    match s.chars().next() {
        Some('A' | 'E' | 'I' | 'O' | 'U') => "an",
        _ => "a",
    }
}

/// Puppet-style description of why `v` does not match `t`.
pub fn mismatch(t: &PType, v: &Value) -> String {
    let got = match v {
        Value::Str(s) if matches!(t, PType::Enum(_) | PType::Pattern(_)) => format!("'{s}'"),
        _ => v.type_name(),
    };
    let got_str = format!("'{}'", v.to_s());
    match t {
        // Every variant of an alias failed: Puppet reports the alias,
        // written out with its definition (`to_alias_expanded_s`).
        PType::Alias(_, inner)
            if matches!(inner.as_ref(), PType::Variant(_))
                && !matches!(v, Value::Array(_) | Value::Hash(_)) =>
        {
            let e = alias_expanded(t);
            format!("expects {} {e} value, got {}", article(&e), v.type_name())
        }
        // Puppet's PatternMismatch names the alias with its definition.
        PType::Alias(_, inner) if matches!(inner.as_ref(), PType::Enum(_) | PType::Pattern(_)) => {
            let got = match v {
                Value::Str(s) => format!("'{s}'"),
                _ => v.type_name(),
            };
            format!("expects a match for {}, got {got}", alias_expanded(t))
        }
        PType::Alias(_, inner) => mismatch(inner, v),
        // Puppet's PatternMismatch, whatever the value's type.
        PType::Enum(_) | PType::Pattern(_) => {
            format!("expects a match for {t}, got {got}")
        }
        PType::Optional(inner) => {
            if let PType::Enum(_) | PType::Pattern(_) = inner.as_ref() {
                let got = match v {
                    Value::Str(s) => format!("'{s}'"),
                    _ => got,
                };
                return format!("expects an undef value or a match for {inner}, got {got}");
            }
            format!("expects a value of type Undef or {inner}, got {got}")
        }
        // Every variant a pattern or an enum: Puppet's PatternMismatch.
        PType::Variant(ts)
            if matches!(v, Value::Str(_))
                && !ts.is_empty()
                && ts
                    .iter()
                    .all(|t| matches!(resolved(t), PType::Enum(_) | PType::Pattern(_))) =>
        {
            format!("expects a match for {}, got {got_str}", alias_expanded(t))
        }
        PType::Variant(ts) => {
            // Unless the value is of the kind of one of the variants,
            // Puppet names each type, and the value's, by its short name.
            let short = !report_detailed(ts, v);
            let mut names: Vec<String> = if short {
                ts.iter().map(short_name).collect()
            } else {
                ts.iter().map(|t| t.to_string()).collect()
            };
            let mut seen = std::collections::HashSet::new();
            names.retain(|n| seen.insert(n.clone()));
            let got = if short { inferred_short(v) } else { got };
            let joined = match names.len() {
                0 => String::new(),
                1 | 2 => names.join(" or "),
                n => format!(
                    "{}, or {}",
                    names.get(..n - 1).unwrap_or(&[]).join(", "),
                    names.last().cloned().unwrap_or_default()
                ),
            };
            format!("expects a value of type {joined}, got {got}")
        }
        PType::Array(et, _, _) => match v {
            Value::Array(a) => match a.iter().position(|x| !is_instance(et, x)) {
                Some(i) => format!(
                    "index {i} {}",
                    mismatch(et, a.get(i).unwrap_or(&Value::Undef))
                ),
                None => size_mismatch(t, a.len()),
            },
            _ => single_mismatch(t, v, got),
        },
        PType::Hash(_, vt, _, _) => match v {
            Value::Hash(h) => match h.iter().find(|(_, x)| !is_instance(vt, x)) {
                Some((k, x)) => format!("entry '{}' {}", k.to_s(), mismatch(vt, x)),
                None => size_mismatch(t, h.len()),
            },
            _ => single_mismatch(t, v, got),
        },
        PType::Struct(fields) => match v {
            Value::Hash(h) => {
                for (k, _) in h {
                    if !fields
                        .iter()
                        .any(|(n, _, _)| matches!(k, Value::Str(s) if s == n))
                    {
                        return format!("unrecognized key '{}'", k.to_s());
                    }
                }
                for (n, opt, ft) in fields {
                    match hash_get_str(h, n) {
                        Some(x) if !is_instance(ft, x) => {
                            return format!("entry '{n}' {}", mismatch(ft, x));
                        }
                        None if !*opt && !is_instance(ft, &Value::Undef) => {
                            return format!("expects a value for key '{n}'");
                        }
                        _ => {}
                    }
                }
                format!("expects a {t} value, got Hash")
            }
            _ => format!("expects a Struct value, got {got}"),
        },
        _ => single_mismatch(t, v, got),
    }
}

/// Puppet's TypeMismatch for one type: short names (`String` for
/// `String[1]`, `Tuple` for an array) unless the value is of the type's
/// kind.
fn single_mismatch(t: &PType, v: &Value, got: String) -> String {
    let keep = matches!(t, PType::Resource(..) | PType::Class(_) | PType::Plan(_));
    let (ts, got) = if keep || report_detailed(std::slice::from_ref(t), v) {
        // Puppet infers a number as the range of just itself.
        let got = match (t, v) {
            (PType::Integer(..), Value::Int(_)) | (PType::Float(..), Value::Float(_)) => {
                let n = v.to_s();
                format!("{got}[{n}, {n}]")
            }
            _ => got,
        };
        (t.to_string(), got)
    } else {
        (short_name(t), inferred_short(v))
    };
    format!("expects {} {ts} value, got {got}", article(&ts))
}

/// Puppet's report when a value fails every variant of a Variant in
/// different places, so that `merge_descriptions` cannot merge them into
/// one message: a `variant N ...` line for each. `None` when they merge.
pub fn variant_rejections(t: &PType, v: &Value) -> Option<Vec<String>> {
    let PType::Variant(ts) = t else {
        return None;
    };
    let ms: Vec<String> = ts.iter().map(|vt| mismatch(vt, v)).collect();
    let key = |m: &str| {
        let (pos, rest) = m.split_once("expects ").unwrap_or((m, ""));
        (pos.to_string(), rest.starts_with("a match"))
    };
    let first = key(ms.first()?);
    if ms.iter().all(|m| key(m) == first) {
        return None;
    }
    Some(
        ms.iter()
            .enumerate()
            .map(|(i, m)| format!("variant {i} {m}"))
            .collect(),
    )
}

fn fmt_range(f: &mut fmt::Formatter<'_>, name: &str, min: i64, max: i64, dmin: i64) -> fmt::Result {
    if min == dmin && max == MAXI {
        write!(f, "{name}")
    } else if max == MAXI {
        write!(f, "{name}[{min}]")
    } else {
        let mn = if min == MINI {
            "default".to_string()
        } else {
            min.to_string()
        };
        write!(f, "{name}[{mn}, {max}]")
    }
}

/// The short name of the type Puppet infers for a value checked against a
/// signature (`infer_set`): a non-empty array is a `Tuple`, a non-empty
/// hash with string keys a `Struct`.
pub fn inferred_short(v: &Value) -> String {
    match v {
        Value::Array(a) if !a.is_empty() => "Tuple".into(),
        Value::Hash(h) if !h.is_empty() && h.iter().all(|(k, _)| matches!(k, Value::Str(_))) => {
            "Struct".into()
        }
        // A type value is a `Type` of its type's short name
        // (`Type[Resource]` for `Notify['a']`).
        Value::Type(t) => short_name(&PType::Type(Some(Box::new(t.clone())))),
        other => other.type_name(),
    }
}

/// Puppet's `report_detailed?` for a Variant: an alias among the types, or
/// a value of the kind of one of them (its type assignable to that type's
/// unparameterized form), is reported with full type names.
fn report_detailed(ts: &[PType], v: &Value) -> bool {
    ts.iter().any(|t| {
        matches!(
            (t, v),
            (PType::Alias(..), _)
                | (
                    PType::String(..) | PType::Enum(_) | PType::Pattern(_),
                    Value::Str(_)
                )
                | (PType::Integer(..), Value::Int(_))
                | (PType::Float(..), Value::Float(_))
                | (PType::Boolean, Value::Bool(_))
                | (PType::Array(..) | PType::Tuple(_), Value::Array(_))
                | (PType::Hash(..) | PType::Struct(_), Value::Hash(_))
                | (PType::Type(_), Value::Type(_))
        )
    })
}

/// A type's name without its parameters, as Puppet's mismatch messages
/// shorten it (`TypeMismatch#short_name`): `Type`, `Optional`,
/// `NotUndef` and `Sensitive` keep the name of the type they contain.
fn short_name(t: &PType) -> String {
    let name = |t: &PType| match t {
        PType::Resource(..) => "Resource".to_string(),
        other => {
            let full = other.to_string();
            full.split('[').next().unwrap_or_default().to_string()
        }
    };
    match t {
        PType::Optional(i) | PType::NotUndef(i) | PType::Sensitive(i) if **i != PType::Any => {
            format!("{}[{}]", name(t), name(i))
        }
        PType::Type(Some(i)) if **i != PType::Any => format!("Type[{}]", name(i)),
        other => name(other),
    }
}

fn join<T: fmt::Display>(items: &[T]) -> String {
    items
        .iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for PType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PType::Any => write!(f, "Any"),
            PType::Undef => write!(f, "Undef"),
            PType::Default => write!(f, "Default"),
            PType::Data => write!(f, "Data"),
            PType::RichData => write!(f, "RichData"),
            PType::Scalar => write!(f, "Scalar"),
            PType::ScalarData => write!(f, "ScalarData"),
            PType::Boolean => write!(f, "Boolean"),
            PType::Numeric => write!(f, "Numeric"),
            PType::String(a, b) => fmt_range(f, "String", *a, *b, 0),
            PType::Integer(a, b) => fmt_range(f, "Integer", *a, *b, MINI),
            PType::Float(a, b) => {
                if a.is_infinite() && b.is_infinite() {
                    write!(f, "Float")
                } else {
                    write!(f, "Float[{a:?}, {b:?}]")
                }
            }
            PType::Enum(v) => {
                // Puppet keeps an Enum's values unique and sorted.
                let mut sorted: Vec<&String> = v.iter().collect();
                sorted.sort();
                sorted.dedup();
                let q: Vec<String> = sorted.iter().map(|s| format!("'{s}'")).collect();
                write!(f, "Enum[{}]", q.join(", "))
            }
            PType::Pattern(v) => {
                let q: Vec<String> = v.iter().map(|s| regexp_inspect(s)).collect();
                write!(f, "Pattern[{}]", q.join(", "))
            }
            PType::Regexp(None) => write!(f, "Regexp"),
            PType::Regexp(Some(r)) => write!(f, "Regexp[{}]", regexp_inspect(r)),
            PType::Array(t, a, b) => {
                if **t == PType::Any && *a == 0 && *b == MAXI {
                    write!(f, "Array")
                } else if **t == PType::Any {
                    write!(f, "Array[{a}, {b}]")
                } else if *a == 0 && *b == MAXI {
                    write!(f, "Array[{t}]")
                } else {
                    write!(f, "Array[{t}, {a}, {b}]")
                }
            }
            PType::Hash(k, v, a, b) => {
                let any = **k == PType::Any && **v == PType::Any;
                let unbounded = *a == 0 && *b == MAXI;
                match (any, unbounded) {
                    (true, true) => write!(f, "Hash"),
                    (true, false) => write!(f, "Hash[{a}, {b}]"),
                    (false, true) => write!(f, "Hash[{k}, {v}]"),
                    (false, false) => write!(f, "Hash[{k}, {v}, {a}, {b}]"),
                }
            }
            PType::Tuple(ts) => write!(f, "Tuple[{}]", join(ts)),
            PType::Struct(fields) => {
                let items: Vec<String> = fields
                    .iter()
                    .map(|(n, opt, t)| {
                        if *opt {
                            format!("Optional['{n}'] => {t}")
                        } else {
                            format!("'{n}' => {t}")
                        }
                    })
                    .collect();
                write!(f, "Struct[{{{}}}]", items.join(", "))
            }
            PType::Optional(t) => write!(f, "Optional[{t}]"),
            PType::NotUndef(t) => write!(f, "NotUndef[{t}]"),
            PType::Variant(ts) => write!(f, "Variant[{}]", join(ts)),
            PType::Collection => write!(f, "Collection"),
            PType::Iterable => write!(f, "Iterable"),
            PType::Callable => write!(f, "Callable"),
            PType::CatalogEntry => write!(f, "CatalogEntry"),
            PType::Sensitive(t) => write!(f, "Sensitive[{t}]"),
            PType::Type(None) => write!(f, "Type"),
            PType::Type(Some(t)) => match &**t {
                PType::Resource(Some(n), Some(title)) => write!(f, "Type[{n}['{title}']]"),
                _ => write!(f, "Type[{t}]"),
            },
            PType::Resource(None, _) => write!(f, "Resource"),
            PType::Resource(Some(n), None) => write!(f, "{n}"),
            PType::Resource(Some(n), Some(t)) => write!(f, "{n}[{t}]"),
            PType::Class(None) => write!(f, "Class"),
            PType::Class(Some(c)) => write!(f, "Class[{}]", capitalize(c)),
            PType::Alias(n, _) => write!(f, "{n}"),
            PType::SemVer(r) if r.is_empty() => write!(f, "SemVer"),
            PType::SemVer(r) => {
                let q: Vec<String> = r.iter().map(|s| format!("'{s}'")).collect();
                write!(f, "SemVer[{}]", q.join(", "))
            }
            PType::SemVerRange => write!(f, "SemVerRange"),
            PType::Deferred => write!(f, "Deferred"),
            PType::Plan(p) => write!(f, "{}", p.name()),
            PType::Timespan(lo, hi) | PType::Timestamp(lo, hi) => {
                let stamp = matches!(self, PType::Timestamp(..));
                write!(f, "{}", if stamp { "Timestamp" } else { "Timespan" })?;
                let show = |n: &Option<i128>| match n {
                    Some(n) if stamp => format!("'{}'", crate::lang::values::time::fmt_stamp(*n)),
                    Some(n) => format!("'{}'", crate::lang::values::time::fmt_span(*n)),
                    None => "default".into(),
                };
                if lo.is_some() && lo == hi {
                    write!(f, "[{}]", show(lo))?;
                } else if lo.is_some() || hi.is_some() {
                    write!(f, "[{}, {}]", show(lo), show(hi))?;
                }
                Ok(())
            }
        }
    }
}

/// A regexp as Ruby's `Regexp#inspect` writes it, as Puppet prints the
/// regexps of `Pattern` and `Regexp` types: between slashes, a slash the
/// source does not escape escaped (`'^[^/]+'` is `/^[^\/]+/`).
fn regexp_inspect(source: &str) -> String {
    let mut out = String::with_capacity(source.len() + 2);
    out.push('/');
    let mut chars = source.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                out.push(c);
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            }
            '/' => out.push_str("\\/"),
            _ => out.push(c),
        }
    }
    out.push('/');
    out
}

/// A type with its aliases resolved.
fn resolved(t: &PType) -> &PType {
    match t {
        PType::Alias(_, inner) => resolved(inner),
        other => other,
    }
}

/// A type written with its aliases spelled out, `Name = Definition`
/// (Puppet's `to_alias_expanded_s`), as type mismatches print an alias.
pub fn alias_expanded(t: &PType) -> String {
    let list = |ts: &[PType]| ts.iter().map(alias_expanded).collect::<Vec<_>>().join(", ");
    match t {
        // (`type()`'s display names such as `Boolean[true]` are no aliases.)
        PType::Alias(name, inner) if !name.contains('[') => {
            format!("{name} = {}", alias_expanded(inner))
        }
        PType::Variant(ts) => format!("Variant[{}]", list(ts)),
        PType::Optional(inner) => format!("Optional[{}]", alias_expanded(inner)),
        PType::NotUndef(inner) => format!("NotUndef[{}]", alias_expanded(inner)),
        PType::Array(inner, 0, MAXI) if **inner != PType::Any => {
            format!("Array[{}]", alias_expanded(inner))
        }
        other => other.to_string(),
    }
}

/// Puppet's SizeMismatch: a collection whose elements fit but whose size
/// does not (`expects size to be at least 1, got 0`).
fn size_mismatch(t: &PType, n: usize) -> String {
    let (min, max) = match t {
        PType::Array(_, a, b) | PType::Hash(_, _, a, b) => (*a, *b),
        _ => (0, MAXI),
    };
    let min = min.max(0);
    let range = if min == max {
        min.to_string()
    } else if min == 0 {
        if max == MAXI {
            "unlimited".to_string()
        } else {
            format!("at most {max}")
        }
    } else if max == MAXI {
        format!("at least {min}")
    } else {
        format!("between {min} and {max}")
    };
    format!("expects size to be {range}, got {n}")
}
