//! `Type.new(value, ...)`: the constructors behind `String(x)`,
//! `Integer(x)`, `Hash(x)`, `Sensitive(x)`, the rich types and hiera's
//! `convert_to`.

use crate::lang::error::{LResult, plain};
use crate::lang::values::types::PType;
use crate::lang::values::value::{Value, hash_set, puppet_quote, str_to_num};

/// `String(x)`, `Integer(x)`, `Array(x)`... conversions.
pub fn new_value(t: &PType, args: &[Value]) -> LResult<Value> {
    let a = args.first().cloned().unwrap_or(Value::Undef);
    Ok(match t {
        PType::String(..) if let Some(f) = args.get(1).and_then(PFormat::quoting) => {
            let quoted = match &a {
                Value::Str(s) => puppet_quote(s, f.alt),
                other => other.to_inspect(true),
            };
            Value::Str(f.apply(quoted))
        }
        PType::String(..) => match &a {
            Value::Iterator(items) => Value::Str(Value::Array(items.clone()).to_inspect(true)),
            Value::Array(_) | Value::Hash(_) => Value::Str(a.to_inspect(true)),
            // Puppet's default format for a Float is `%f`.
            Value::Float(f) if f.is_finite() => Value::Str(format!("{f:.6}")),
            _ => Value::Str(a.to_s()),
        },
        PType::Integer(..) => match &a {
            Value::Int(_) => a,
            Value::Float(f) => Value::Int(*f as i64),
            Value::Bool(b) => Value::Int(i64::from(*b)),
            Value::Str(x) => match str_to_num(x) {
                Some(Value::Int(_)) if matches!(args.get(1), Some(Value::Int(2 | 8 | 16))) => {
                    radix_int(x, args.get(1))?
                }
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
            return crate::lang::values::rich::new_rich(t, args);
        }
        other => {
            return Err(plain(format!(
                "Creation of new instance of type '{other}' is not supported"
            )));
        }
    })
}

/// `Integer.new(string, radix)` for a radix of 2, 8 or 16: the digits
/// after an optional sign and the radix's prefix (`0b`, `0`, `0x`).
fn radix_int(x: &str, radix: Option<&Value>) -> LResult<Value> {
    let radix = match radix {
        Some(Value::Int(r)) => *r as u32,
        _ => 10,
    };
    let t = x.trim();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let digits = match radix {
        2 => digits
            .strip_prefix("0b")
            .or_else(|| digits.strip_prefix("0B"))
            .unwrap_or(digits),
        16 => digits
            .strip_prefix("0x")
            .or_else(|| digits.strip_prefix("0X"))
            .unwrap_or(digits),
        _ => digits,
    };
    match i64::from_str_radix(digits, radix) {
        Ok(n) => Ok(Value::Int(if neg { -n } else { n })),
        Err(_) => Err(plain(format!(
            "The string '{x}' cannot be converted to Integer"
        ))),
    }
}

/// A `String(x, '%p')` format: Puppet's quoted form, with its `-` and
/// `#` (double quotes) flags, width and precision.
struct PFormat {
    left: bool,
    alt: bool,
    width: Option<usize>,
    prec: Option<usize>,
}

impl PFormat {
    /// The format when it is a `%p` one.
    fn quoting(v: &Value) -> Option<PFormat> {
        let Value::Str(f) = v else { return None };
        let body = f.strip_prefix('%')?.strip_suffix('p')?;
        let flags_end = body
            .find(|c: char| !" [+#0{<(|-".contains(c))
            .unwrap_or(body.len());
        let (flags, rest) = body.split_at(flags_end);
        let (width, prec) = match rest.split_once('.') {
            Some((w, p)) => (w, Some(p)),
            None => (rest, None),
        };
        let num = |s: &str| s.parse::<usize>().ok();
        if !(width.is_empty() || (num(width).is_some() && !width.starts_with('0'))) {
            return None;
        }
        if prec.is_some_and(|p| p.is_empty() || num(p).is_none()) {
            return None;
        }
        Some(PFormat {
            left: flags.contains('-'),
            alt: flags.contains('#'),
            width: num(width),
            prec: prec.and_then(num),
        })
    }

    /// Ruby's `%-W.Ps` of the quoted form.
    fn apply(&self, quoted: String) -> String {
        let s: String = match self.prec {
            Some(p) => quoted.chars().take(p).collect(),
            None => quoted,
        };
        let n = s.chars().count();
        match self.width {
            Some(w) if w > n && self.left => s + &" ".repeat(w - n),
            Some(w) if w > n => " ".repeat(w - n) + &s,
            _ => s,
        }
    }
}
