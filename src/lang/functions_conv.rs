//! Conversions and formatting used by the data functions: `versioncmp`,
//! `sprintf`, the `Type(value)` constructors (`String(x)`, `Integer(x)`...)
//! and the type inference behind `type(x)`.

use crate::lang::error::LResult;
use crate::lang::eval::plain;
use crate::lang::eval_ops::str_to_num;
use crate::lang::types::PType;
use crate::lang::value::{Value, hash_set};

fn s(v: Option<&Value>) -> String {
    v.map(|v| v.to_s()).unwrap_or_default()
}

/// Compare two version strings like Puppet's `versioncmp`.
pub fn versioncmp(a: &str, b: &str) -> i64 {
    fn parts(s: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut cur = String::new();
        let mut digit = None;
        for c in s.chars() {
            if c == '.' || c == '-' {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                out.push(c.to_string());
                digit = None;
                continue;
            }
            let d = c.is_ascii_digit();
            if digit.is_some_and(|x| x != d) && !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            digit = Some(d);
            cur.push(c);
        }
        if !cur.is_empty() {
            out.push(cur);
        }
        out
    }
    if a == b {
        return 0;
    }
    let (pa, pb) = (parts(a), parts(b));
    for (x, y) in pa.iter().zip(pb.iter()) {
        if x == y {
            continue;
        }
        if x == "-" && y != "-" {
            return -1;
        }
        if y == "-" && x != "-" {
            return 1;
        }
        if x == "." && y != "." {
            return -1;
        }
        if y == "." && x != "." {
            return 1;
        }
        let ord = match (x.parse::<u128>(), y.parse::<u128>()) {
            (Ok(n), Ok(m)) if !(x.starts_with('0') || y.starts_with('0')) => n.cmp(&m),
            _ => x.to_uppercase().cmp(&y.to_uppercase()),
        };
        match ord {
            std::cmp::Ordering::Less => return -1,
            std::cmp::Ordering::Greater => return 1,
            std::cmp::Ordering::Equal => {}
        }
    }
    match pa.len().cmp(&pb.len()) {
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Greater => 1,
        std::cmp::Ordering::Equal => 0,
    }
}

pub fn sprintf(fmt: &str, args: &[Value]) -> String {
    let mut out = String::new();
    let mut it = args.iter();
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = String::new();
        while let Some(&n) = chars.peek() {
            chars.next();
            if n.is_ascii_alphabetic() || n == '%' {
                spec.push(n);
                break;
            }
            spec.push(n);
        }
        let conv = spec.chars().last().unwrap_or('s');
        let flags = spec.get(..spec.len().saturating_sub(1)).unwrap_or("");
        let left = flags.contains('-');
        let zero = flags.starts_with('0');
        let (width, prec) = match flags
            .trim_start_matches(['-', '0', '+', ' '])
            .split_once('.')
        {
            Some((w, p)) => (w.parse::<usize>().unwrap_or(0), p.parse::<usize>().ok()),
            None => (
                flags
                    .trim_start_matches(['-', '0', '+', ' '])
                    .parse::<usize>()
                    .unwrap_or(0),
                None,
            ),
        };
        let body = match conv {
            '%' => "%".to_string(),
            'd' | 'i' => match it.next() {
                Some(Value::Int(i)) => i.to_string(),
                Some(Value::Float(f)) => (*f as i64).to_string(),
                Some(v) => match str_to_num(&v.to_s()) {
                    Some(Value::Int(i)) => i.to_string(),
                    _ => v.to_s(),
                },
                None => String::new(),
            },
            'f' => {
                let f = match it.next() {
                    Some(Value::Int(i)) => *i as f64,
                    Some(Value::Float(f)) => *f,
                    Some(v) => v.to_s().parse().unwrap_or(0.0),
                    None => 0.0,
                };
                format!("{:.*}", prec.unwrap_or(6), f)
            }
            'x' => match it.next() {
                Some(Value::Int(i)) => format!("{i:x}"),
                Some(v) => v.to_s(),
                None => String::new(),
            },
            'o' => match it.next() {
                Some(Value::Int(i)) => format!("{i:o}"),
                Some(v) => v.to_s(),
                None => String::new(),
            },
            _ => {
                let v = s(it.next());
                match prec {
                    Some(p) => v.chars().take(p).collect(),
                    None => v,
                }
            }
        };
        let pad = width.saturating_sub(body.chars().count());
        if left {
            out.push_str(&body);
            out.push_str(&" ".repeat(pad));
        } else if zero && conv != 's' {
            out.push_str(&"0".repeat(pad));
            out.push_str(&body);
        } else {
            out.push_str(&" ".repeat(pad));
            out.push_str(&body);
        }
    }
    out
}

/// `String(x)`, `Integer(x)`, `Array(x)`... conversions.
pub fn new_value(t: &PType, args: &[Value]) -> LResult<Value> {
    let a = args.first().cloned().unwrap_or(Value::Undef);
    Ok(match t {
        PType::String(..) => match &a {
            Value::Iterator(items) => Value::Str(Value::Array(items.clone()).to_inspect(true)),
            Value::Array(_) | Value::Hash(_) => Value::Str(a.to_inspect(true)),
            _ => Value::Str(a.to_s()),
        },
        PType::Integer(..) => match &a {
            Value::Int(_) => a,
            Value::Float(f) => Value::Int(*f as i64),
            Value::Bool(b) => Value::Int(i64::from(*b)),
            Value::Str(x) => match str_to_num(x) {
                Some(Value::Int(i)) => Value::Int(i),
                Some(Value::Float(f)) => Value::Int(f as i64),
                _ => {
                    return Err(plain(format!(
                        "The string '{x}' cannot be converted to Integer"
                    )));
                }
            },
            other => {
                return Err(plain(format!(
                    "Cannot convert {} to Integer",
                    other.type_name()
                )));
            }
        },
        PType::Float(..) | PType::Numeric => match &a {
            Value::Int(i) if matches!(t, PType::Float(..)) => Value::Float(*i as f64),
            Value::Int(_) | Value::Float(_) => a,
            Value::Str(x) => match str_to_num(x) {
                Some(Value::Int(i)) if matches!(t, PType::Float(..)) => Value::Float(i as f64),
                Some(v) => v,
                None => {
                    return Err(plain(format!(
                        "The string '{x}' cannot be converted to Numeric"
                    )));
                }
            },
            other => {
                return Err(plain(format!(
                    "Cannot convert {} to Numeric",
                    other.type_name()
                )));
            }
        },
        PType::Boolean => match &a {
            Value::Bool(_) => a,
            Value::Str(x) => match x.to_lowercase().as_str() {
                "true" | "yes" | "y" => Value::Bool(true),
                "false" | "no" | "n" | "" => Value::Bool(false),
                _ => {
                    return Err(plain(format!(
                        "The string '{x}' cannot be converted to Boolean"
                    )));
                }
            },
            Value::Int(i) => Value::Bool(*i != 0),
            other => {
                return Err(plain(format!(
                    "Cannot convert {} to Boolean",
                    other.type_name()
                )));
            }
        },
        PType::Array(..) => match a {
            Value::Array(_) => a,
            Value::Iterator(items) => Value::Array(items),
            Value::Hash(h) => Value::Array(
                h.into_iter()
                    .map(|(k, v)| Value::Array(vec![k, v]))
                    .collect(),
            ),
            other => Value::Array(vec![other]),
        },
        PType::Hash(..) => match a {
            Value::Hash(_) => a,
            Value::Array(items) => {
                let mut h = Vec::new();
                let mut it = items.into_iter();
                while let Some(k) = it.next() {
                    match k {
                        Value::Array(pair) => {
                            let mut p = pair.into_iter();
                            hash_set(
                                &mut h,
                                p.next().unwrap_or(Value::Undef),
                                p.next().unwrap_or(Value::Undef),
                            );
                        }
                        k => hash_set(&mut h, k, it.next().unwrap_or(Value::Undef)),
                    }
                }
                Value::Hash(h)
            }
            other => {
                return Err(plain(format!(
                    "Cannot convert {} to Hash",
                    other.type_name()
                )));
            }
        },
        PType::Sensitive(_) => Value::Sensitive(Box::new(a)),
        PType::SemVer(_)
        | PType::SemVerRange
        | PType::Deferred
        | PType::Timespan(..)
        | PType::Timestamp(..) => {
            return crate::lang::rich::new_rich(t, args);
        }
        other => {
            return Err(plain(format!(
                "Creation of new instance of type '{other}' is not supported"
            )));
        }
    })
}

/// The most specific simple type of a value (for `type()`).
pub fn infer_type(v: &Value) -> PType {
    // Display-only refinements Puppet prints but `PType` does not model are
    // named aliases of the general type.
    let named = |n: String, t: PType| PType::Alias(n, Box::new(t));
    match v {
        Value::Undef => PType::Undef,
        Value::Default => PType::Default,
        Value::Bool(b) => named(format!("Boolean[{b}]"), PType::Boolean),
        Value::Int(i) => PType::Integer(*i, *i),
        Value::Float(f) => PType::Float(*f, *f),
        Value::Str(_) => PType::String(0, i64::MAX),
        Value::Regex(r) => PType::Regexp(Some(r.clone())),
        Value::Array(a) if a.is_empty() => PType::Array(Box::new(PType::Any), 0, 0),
        Value::Array(a) => PType::Tuple(a.iter().map(infer_type).collect()),
        Value::Hash(h) if h.is_empty() => {
            PType::Hash(Box::new(PType::Any), Box::new(PType::Any), 0, 0)
        }
        Value::Hash(h) if h.iter().all(|(k, _)| matches!(k, Value::Str(_))) => PType::Struct(
            h.iter()
                .map(|(k, v)| (k.to_s(), false, infer_type(v)))
                .collect(),
        ),
        Value::Hash(h) => {
            let n = h.len() as i64;
            PType::Hash(
                Box::new(common(h.iter().map(|(k, _)| infer_type(k)).collect())),
                Box::new(common(h.iter().map(|(_, v)| infer_type(v)).collect())),
                n,
                n,
            )
        }
        Value::Type(t) => PType::Type(Some(Box::new(t.clone()))),
        Value::Sensitive(inner) => PType::Sensitive(Box::new(infer_type(inner))),
        Value::Iterator(items) => {
            let elem = match items.len() {
                0 => "Unit".to_string(),
                1 => items
                    .first()
                    .map(|i| infer_type(i).to_string())
                    .unwrap_or_default(),
                _ => PType::Variant(items.iter().map(infer_type).collect()).to_string(),
            };
            named(format!("Iterator[{elem}]"), PType::Iterable)
        }
        Value::Rich(r) => r.infer_type(),
    }
}

/// One type for several inferred types: the type itself when they agree,
/// else their Variant.
fn common(mut ts: Vec<PType>) -> PType {
    ts.dedup();
    if ts.len() == 1 {
        ts.pop().unwrap_or(PType::Any)
    } else {
        PType::Variant(ts)
    }
}
