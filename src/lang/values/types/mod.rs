//! Puppet data types: the `PType` model, parameterization via `[]`,
//! instance checks (`=~ Type`, typed parameters) and Puppet-style mismatch
//! descriptions ("expects a String value, got Integer").

pub mod format;
pub mod infer;

use crate::lang::values::error::ValueError;
use crate::lang::values::value::{Value, hash_get_str};

#[derive(Debug, Clone, PartialEq)]
pub enum PType {
    Any,
    Undef,
    Default,
    Data,
    RichData,
    Scalar,
    ScalarData,
    Boolean,
    Numeric,
    String(i64, i64),
    Integer(i64, i64),
    Float(f64, f64),
    Enum(Vec<String>),
    Pattern(Vec<String>),
    Regexp(Option<String>),
    Array(Box<PType>, i64, i64),
    Hash(Box<PType>, Box<PType>, i64, i64),
    Tuple(Vec<PType>),
    Struct(Vec<(String, bool, PType)>),
    Optional(Box<PType>),
    NotUndef(Box<PType>),
    Variant(Vec<PType>),
    Collection,
    Iterable,
    Callable,
    CatalogEntry,
    Sensitive(Box<PType>),
    Type(Option<Box<PType>>),
    /// `Resource`, `File`, `File['/x']` (type names are capitalized).
    Resource(Option<String>, Option<String>),
    /// `Class`, `Class['foo']` (class names are lower case).
    Class(Option<String>),
    /// A named alias (user `type X = ...` or a Stdlib alias).
    Alias(String, Box<PType>),
    /// `SemVer` or `SemVer['>=1.0 <2', ...]` (ranges as written).
    SemVer(Vec<String>),
    SemVerRange,
    Deferred,
    /// `Timespan[from, to]` / `Timestamp[from, to]` in nanoseconds.
    Timespan(Option<i128>, Option<i128>),
    Timestamp(Option<i128>, Option<i128>),
    /// One of Bolt's plan data types (`Target`, `ResultSet`, `TargetSpec`...).
    Plan(crate::lang::values::plan::PlanType),
}

const MAXI: i64 = i64::MAX;
const MINI: i64 = i64::MIN;

/// Capitalize each `::` segment: `my::thing` -> `My::Thing`.
pub fn capitalize(name: &str) -> String {
    name.trim_start_matches("::")
        .split("::")
        .map(|seg| {
            let mut c = seg.chars();
            match c.next() {
                Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
                None => String::new(),
            }
        })
        .collect::<Vec<_>>()
        .join("::")
}

/// The type named by a capitalized reference, if it is a built-in data type.
pub fn builtin_type(name: &str) -> Option<PType> {
    Some(match name {
        "Any" => PType::Any,
        "Undef" => PType::Undef,
        "Default" => PType::Default,
        "Data" => PType::Data,
        "RichData" => PType::RichData,
        "Scalar" => PType::Scalar,
        "ScalarData" => PType::ScalarData,
        "Boolean" => PType::Boolean,
        "Numeric" => PType::Numeric,
        "String" => PType::String(0, MAXI),
        "Integer" => PType::Integer(MINI, MAXI),
        "Float" => PType::Float(f64::NEG_INFINITY, f64::INFINITY),
        "Enum" => PType::Enum(Vec::new()),
        "Pattern" => PType::Pattern(Vec::new()),
        "Regexp" => PType::Regexp(None),
        "Array" => PType::Array(Box::new(PType::Any), 0, MAXI),
        "Hash" => PType::Hash(Box::new(PType::Any), Box::new(PType::Any), 0, MAXI),
        "Tuple" => PType::Tuple(Vec::new()),
        "Struct" => PType::Struct(Vec::new()),
        "Optional" => PType::Optional(Box::new(PType::Any)),
        "NotUndef" => PType::NotUndef(Box::new(PType::Any)),
        "Variant" => PType::Variant(Vec::new()),
        "Collection" => PType::Collection,
        "Iterable" | "Iterator" => PType::Iterable,
        "Callable" => PType::Callable,
        "CatalogEntry" => PType::CatalogEntry,
        "Sensitive" => PType::Sensitive(Box::new(PType::Any)),
        "Type" => PType::Type(None),
        "Resource" => PType::Resource(None, None),
        "Class" => PType::Class(None),
        "SemVer" => PType::SemVer(Vec::new()),
        "SemVerRange" => PType::SemVerRange,
        "Deferred" => PType::Deferred,
        "Timespan" => PType::Timespan(None, None),
        "Timestamp" => PType::Timestamp(None, None),
        other => PType::Plan(crate::lang::values::plan::PlanType::from_name(other)?),
    })
}

/// Fallback definitions of common `Stdlib::*` aliases when stdlib is absent.
pub fn stdlib_alias(name: &str) -> Option<PType> {
    let pat = |p: &str| PType::Pattern(vec![p.to_string()]);
    let t = match name {
        "Stdlib::Absolutepath" => pat(r"^(/|[a-zA-Z]:[\\/]|\\\\)"),
        "Stdlib::Unixpath" => pat(r"^/([^/\0]+/*)*$"),
        "Stdlib::Windowspath" => {
            pat(r"^(([a-zA-Z]:[\\/])|([\\/][\\/][^\\/]+[\\/][^\\/]+)|([\\/][\\/]\?[\\/][^\\/]+))")
        }
        "Stdlib::Port" => PType::Integer(0, 65535),
        "Stdlib::Port::Unprivileged" => PType::Integer(1024, 65535),
        "Stdlib::Filemode" => pat(
            r"^(([0-7]{1,4})|(([ugoa]*([-+=]([rwxXst]*|[ugo]))+|[-+=][0-7]+)(,([ugoa]*([-+=]([rwxXst]*|[ugo]))+|[-+=][0-7]+))*))$",
        ),
        "Stdlib::Ensure::Service" => PType::Enum(vec!["running".into(), "stopped".into()]),
        "Stdlib::Ensure::File" => PType::Enum(
            ["present", "absent", "file", "directory", "link"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
        ),
        "Stdlib::Fqdn" => pat(
            r"^(([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9\-]*[a-zA-Z0-9])\.)*([A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9\-]*[A-Za-z0-9])$",
        ),
        "Stdlib::Host" => PType::Variant(vec![
            pat(
                r"^(([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9\-]*[a-zA-Z0-9])\.)*([A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9\-]*[A-Za-z0-9])$",
            ),
            pat(r"^[0-9a-fA-F:.]+$"),
        ]),
        "Stdlib::HTTPUrl" | "Stdlib::Httpurl" => pat(r"(?i)^https?://.*$"),
        "Stdlib::HTTPSUrl" | "Stdlib::Httpsurl" => pat(r"(?i)^https://.*$"),
        "Stdlib::IP::Address" | "Stdlib::Compat::Ip_address" => pat(r"^[0-9a-fA-F:.]+(/[0-9]+)?$"),
        "Stdlib::IP::Address::V4" | "Stdlib::Compat::Ipv4" => {
            pat(r"^([0-9]{1,3}\.){3}[0-9]{1,3}(/[0-9]{1,2})?$")
        }
        "Stdlib::IP::Address::V6" | "Stdlib::Compat::Ipv6" => pat(r"^[0-9a-fA-F:]+(/[0-9]+)?$"),
        "Stdlib::Compat::String" => PType::String(0, MAXI),
        "Stdlib::Compat::Integer" => {
            PType::Variant(vec![PType::Integer(MINI, MAXI), pat(r"^-?\d+$")])
        }
        "Stdlib::Compat::Bool" => PType::Boolean,
        "Stdlib::Compat::Array" => PType::Array(Box::new(PType::Any), 0, MAXI),
        "Stdlib::Compat::Hash" => PType::Hash(Box::new(PType::Any), Box::new(PType::Any), 0, MAXI),
        "Stdlib::Compat::Absolute_path" => pat(r"^(/|[a-zA-Z]:[\\/])"),
        "Stdlib::Datasize" => pat(r"^\d+(?i:[kmgt]b?|b)$"),
        "Stdlib::Email" => pat(r"^[^@\s]+@[^@\s]+$"),
        "Stdlib::Base64" => pat(r"^[a-zA-Z0-9/+]+={0,2}$"),
        "Stdlib::Syslogfacility" => PType::String(1, MAXI),
        "Stdlib::Yes_no" => pat(r"^(?i:yes|no)$"),
        _ => return None,
    };
    Some(PType::Alias(name.to_string(), Box::new(t)))
}

fn int_arg(v: Option<&Value>, dflt: i64) -> Result<i64, ValueError> {
    match v {
        None | Some(Value::Default) => Ok(dflt),
        Some(Value::Int(i)) => Ok(*i),
        Some(other) => Err(ValueError(format!(
            "expected an Integer parameter, got {}",
            other.type_name()
        ))),
    }
}

fn type_arg(v: &Value) -> Result<PType, ValueError> {
    match v {
        Value::Type(t) => Ok(t.clone()),
        Value::Str(s) => Ok(PType::Enum(vec![s.clone()])),
        other => Err(ValueError(format!(
            "expected a Type parameter, got {}",
            other.type_name()
        ))),
    }
}

/// How deeply `t` nests (a type without type parameters is 1), counted
/// up to `limit + 1` at most, so the walk never goes deeper than `limit`.
pub fn depth(t: &PType, limit: usize) -> usize {
    if limit == 0 {
        return 1;
    }
    let inner = |t: &PType| depth(t, limit - 1);
    1 + match t {
        PType::Array(e, ..)
        | PType::Optional(e)
        | PType::NotUndef(e)
        | PType::Sensitive(e)
        | PType::Alias(_, e)
        | PType::Type(Some(e)) => inner(e),
        PType::Hash(k, v, ..) => inner(k).max(inner(v)),
        PType::Tuple(ts) | PType::Variant(ts) => ts.iter().map(inner).max().unwrap_or(0),
        PType::Struct(fields) => fields.iter().map(|(_, _, t)| inner(t)).max().unwrap_or(0),
        _ => 0,
    }
}

/// Apply `Type[args]`. Resource references with several titles yield arrays.
pub fn access_type(base: &PType, args: &[Value]) -> Result<Value, ValueError> {
    let a0 = args.first();
    let t = match base {
        PType::SemVer(_) => PType::SemVer(args.iter().map(|a| a.to_s()).collect()),
        PType::Timespan(..) => PType::Timespan(
            crate::lang::values::time::bound(a0, false),
            crate::lang::values::time::bound(args.get(1), false),
        ),
        PType::Timestamp(..) => PType::Timestamp(
            crate::lang::values::time::bound(a0, true),
            crate::lang::values::time::bound(args.get(1), true),
        ),
        PType::String(..) => PType::String(int_arg(a0, 0)?, int_arg(args.get(1), MAXI)?),
        PType::Integer(..) => PType::Integer(int_arg(a0, MINI)?, int_arg(args.get(1), MAXI)?),
        PType::Float(..) => {
            let f = |v: Option<&Value>, d: f64| match v {
                Some(Value::Int(i)) => *i as f64,
                Some(Value::Float(x)) => *x,
                _ => d,
            };
            PType::Float(f(a0, f64::NEG_INFINITY), f(args.get(1), f64::INFINITY))
        }
        PType::Enum(_) => PType::Enum(
            args.iter()
                .flat_map(|v| match v {
                    Value::Array(a) => a.clone(),
                    o => vec![o.clone()],
                })
                .map(|v| v.to_s())
                .collect(),
        ),
        PType::Pattern(_) => PType::Pattern(
            args.iter()
                .map(|v| match v {
                    Value::Regex(r) => r.clone(),
                    Value::Type(PType::Regexp(Some(r))) => r.clone(),
                    o => o.to_s(),
                })
                .collect(),
        ),
        PType::Regexp(_) => PType::Regexp(a0.map(|v| match v {
            Value::Regex(r) => r.clone(),
            o => o.to_s(),
        })),
        PType::Array(..) => match a0 {
            Some(Value::Type(t)) => PType::Array(
                Box::new(t.clone()),
                int_arg(args.get(1), 0)?,
                int_arg(args.get(2), MAXI)?,
            ),
            _ => PType::Array(
                Box::new(PType::Any),
                int_arg(a0, 0)?,
                int_arg(args.get(1), MAXI)?,
            ),
        },
        PType::Hash(..) => match (a0, args.get(1)) {
            (Some(Value::Type(k)), Some(Value::Type(v))) => PType::Hash(
                Box::new(k.clone()),
                Box::new(v.clone()),
                int_arg(args.get(2), 0)?,
                int_arg(args.get(3), MAXI)?,
            ),
            _ => PType::Hash(
                Box::new(PType::Any),
                Box::new(PType::Any),
                int_arg(a0, 0)?,
                int_arg(args.get(1), MAXI)?,
            ),
        },
        PType::Tuple(_) => PType::Tuple(
            args.iter()
                .filter_map(|v| match v {
                    Value::Type(t) => Some(t.clone()),
                    _ => None,
                })
                .collect(),
        ),
        PType::Struct(_) => {
            let Some(Value::Hash(h)) = a0 else {
                return Err("Struct expects a Hash parameter".into());
            };
            let mut fields = Vec::new();
            for (k, v) in h {
                let vt = type_arg(v)?;
                match k {
                    Value::Str(s) => fields.push((s.clone(), false, vt)),
                    Value::Type(PType::Optional(inner)) => match inner.as_ref() {
                        PType::Enum(e) if e.len() == 1 => {
                            fields.push((e.first().cloned().unwrap_or_default(), true, vt))
                        }
                        _ => return Err("Struct key must be a String".into()),
                    },
                    // NotUndef['k'] is the plain key 'k' (Puppet drops the wrapper).
                    Value::Type(PType::Enum(e)) if e.len() == 1 => {
                        fields.push((e.first().cloned().unwrap_or_default(), false, vt))
                    }
                    Value::Type(PType::NotUndef(inner)) => match inner.as_ref() {
                        PType::Enum(e) if e.len() == 1 => {
                            fields.push((e.first().cloned().unwrap_or_default(), false, vt))
                        }
                        _ => return Err("Struct key must be a String".into()),
                    },
                    _ => return Err("Struct key must be a String".into()),
                }
            }
            PType::Struct(fields)
        }
        PType::Optional(_) => PType::Optional(Box::new(type_arg(a0.unwrap_or(&Value::Undef))?)),
        PType::NotUndef(_) => PType::NotUndef(Box::new(type_arg(a0.unwrap_or(&Value::Undef))?)),
        PType::Sensitive(_) => PType::Sensitive(Box::new(type_arg(a0.unwrap_or(&Value::Undef))?)),
        PType::Type(_) => PType::Type(a0.map(type_arg).transpose()?.map(Box::new)),
        PType::Variant(_) => PType::Variant(args.iter().map(type_arg).collect::<Result<_, _>>()?),
        PType::Class(None) => {
            let names = flatten_titles(args);
            let refs: Vec<Value> = names
                .into_iter()
                .map(|n| {
                    Value::Type(PType::Class(Some(
                        n.trim_start_matches("::").to_lowercase(),
                    )))
                })
                .collect();
            return Ok(titles_result(args, refs));
        }
        PType::Resource(None, None) => {
            let Some(first) = a0 else {
                return Err("Resource[] requires a type name".into());
            };
            let tname = match first {
                Value::Type(PType::Resource(Some(n), None)) => n.clone(),
                other => capitalize(&other.to_s()),
            };
            let rest = args.get(1..).unwrap_or(&[]);
            if rest.is_empty() {
                return Ok(Value::Type(PType::Resource(Some(tname), None)));
            }
            return access_type(&PType::Resource(Some(tname), None), rest);
        }
        PType::Resource(Some(n), None) => {
            let refs: Vec<Value> = flatten_titles(args)
                .into_iter()
                .map(|t| Value::Type(PType::Resource(Some(n.clone()), Some(t))))
                .collect();
            return Ok(titles_result(args, refs));
        }
        PType::Alias(_, inner) => return access_type(inner, args),
        other => return Err(ValueError(format!("{other} is not parameterizable"))),
    };
    Ok(Value::Type(t))
}

/// The titles of `Type[...]`, arrays flattened and undef left out (as
/// Puppet's `compact!`).
fn flatten_titles(args: &[Value]) -> Vec<String> {
    let mut out = Vec::new();
    for a in args {
        match a {
            Value::Array(items) => out.extend(flatten_titles(items)),
            Value::Undef => {}
            Value::Type(PType::Resource(_, Some(t))) => out.push(t.clone()),
            Value::Type(PType::Class(Some(c))) => out.push(c.clone()),
            other => out.push(other.to_s()),
        }
    }
    out
}

/// `Type[...]` is an array of references when several titles or an array
/// were given, else the one reference (undef when the title was undef).
fn titles_result(args: &[Value], mut refs: Vec<Value>) -> Value {
    if args.len() > 1 || matches!(args.first(), Some(Value::Array(_))) {
        Value::Array(refs)
    } else {
        refs.pop().unwrap_or(Value::Undef)
    }
}

fn len_ok(n: usize, min: i64, max: i64) -> bool {
    let n = n as i64;
    n >= min && n <= max
}

fn regex_match(pattern: &str, s: &str) -> bool {
    crate::lang::values::regex::RubyRegex::new(pattern).is_ok_and(|r| r.is_match(s))
}

/// Is `v` an instance of `t`?
pub fn is_instance(t: &PType, v: &Value) -> bool {
    match t {
        PType::Any => true,
        PType::Undef => v.is_undef(),
        PType::Default => matches!(v, Value::Default),
        PType::Data => match v {
            Value::Undef | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_) => true,
            Value::Array(a) => a.iter().all(|x| is_instance(t, x)),
            Value::Hash(h) => h
                .iter()
                .all(|(k, x)| matches!(k, Value::Str(_)) && is_instance(t, x)),
            _ => false,
        },
        PType::RichData => true,
        PType::Scalar => matches!(
            v,
            Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_) | Value::Regex(_)
        ),
        PType::ScalarData => matches!(
            v,
            Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_)
        ),
        PType::Boolean => matches!(v, Value::Bool(_)),
        PType::Numeric => matches!(v, Value::Int(_) | Value::Float(_)),
        PType::String(min, max) => {
            matches!(v, Value::Str(s) if len_ok(s.chars().count(), *min, *max))
        }
        PType::Integer(min, max) => matches!(v, Value::Int(i) if i >= min && i <= max),
        PType::Float(min, max) => matches!(v, Value::Float(f) if f >= min && f <= max),
        PType::Enum(vals) => match v {
            Value::Str(s) => vals.is_empty() || vals.iter().any(|x| x == s),
            _ => false,
        },
        PType::Pattern(pats) => match v {
            Value::Str(s) => pats.is_empty() || pats.iter().any(|p| regex_match(p, s)),
            _ => false,
        },
        PType::Regexp(None) => matches!(v, Value::Regex(_)),
        PType::Regexp(Some(r)) => matches!(v, Value::Regex(x) if x == r),
        PType::Array(et, min, max) => match v {
            Value::Array(a) => len_ok(a.len(), *min, *max) && a.iter().all(|x| is_instance(et, x)),
            _ => false,
        },
        PType::Hash(kt, vt, min, max) => match v {
            Value::Hash(h) => {
                len_ok(h.len(), *min, *max)
                    && h.iter()
                        .all(|(k, x)| is_instance(kt, k) && is_instance(vt, x))
            }
            _ => false,
        },
        PType::Tuple(ts) => match v {
            Value::Array(a) => {
                a.len() == ts.len() && ts.iter().zip(a).all(|(t, x)| is_instance(t, x))
            }
            _ => false,
        },
        PType::Struct(fields) => match v {
            Value::Hash(h) => {
                h.iter().all(|(k, _)| {
                    fields
                        .iter()
                        .any(|(n, _, _)| matches!(k, Value::Str(s) if s == n))
                }) && fields.iter().all(|(n, opt, ft)| match hash_get_str(h, n) {
                    Some(x) => is_instance(ft, x),
                    None => *opt || is_instance(ft, &Value::Undef),
                })
            }
            _ => false,
        },
        PType::Optional(inner) => v.is_undef() || is_instance(inner, v),
        PType::NotUndef(inner) => !v.is_undef() && is_instance(inner, v),
        PType::Variant(ts) => ts.iter().any(|t| is_instance(t, v)),
        PType::Collection => matches!(v, Value::Array(_) | Value::Hash(_)),
        PType::Iterable => {
            matches!(
                v,
                Value::Array(_)
                    | Value::Hash(_)
                    | Value::Str(_)
                    | Value::Int(_)
                    | Value::Iterator(_)
            ) || crate::lang::values::plan::as_object(v).is_some_and(|o| o.elements().is_some())
        }
        PType::Callable => false,
        PType::SemVer(ranges) => crate::lang::values::rich::semver_instance(ranges, v),
        PType::SemVerRange => matches!(v, Value::Rich(r) if r.type_name() == "SemVerRange"),
        PType::Deferred => matches!(v, Value::Rich(r) if r.type_name() == "Deferred"),
        PType::Timespan(lo, hi) | PType::Timestamp(lo, hi) => match v {
            Value::Rich(r) => match (&**r, t) {
                (crate::lang::values::rich::Rich::Timespan(n), PType::Timespan(..))
                | (crate::lang::values::rich::Rich::Timestamp(n), PType::Timestamp(..)) => {
                    lo.is_none_or(|l| *n >= l) && hi.is_none_or(|h| *n <= h)
                }
                _ => false,
            },
            _ => false,
        },
        PType::CatalogEntry => matches!(
            v,
            Value::Type(PType::Resource(..)) | Value::Type(PType::Class(_))
        ),
        PType::Sensitive(inner) => match v {
            Value::Sensitive(x) => is_instance(inner, x),
            _ => false,
        },
        PType::Type(None) => matches!(v, Value::Type(_)),
        PType::Type(Some(inner)) => match v {
            Value::Type(x) => type_assignable(inner, x),
            _ => false,
        },
        PType::Resource(tn, title) => match v {
            Value::Type(PType::Resource(Some(n), Some(t))) => {
                tn.as_ref().is_none_or(|x| x.eq_ignore_ascii_case(n))
                    && title.as_ref().is_none_or(|x| x == t)
            }
            Value::Type(PType::Class(Some(c))) => {
                tn.as_ref().is_none_or(|x| x == "Class") && title.as_ref().is_none_or(|x| x == c)
            }
            _ => false,
        },
        PType::Class(name) => match v {
            Value::Type(PType::Class(Some(c))) => name.as_ref().is_none_or(|x| x == c),
            _ => false,
        },
        PType::Alias(_, inner) => is_instance(inner, v),
        PType::Plan(p) => p.is_instance(v),
    }
}

/// Rough assignability for `Type[T]` checks.
fn type_assignable(outer: &PType, inner: &PType) -> bool {
    if outer == inner || matches!(outer, PType::Any) {
        return true;
    }
    match (outer, inner) {
        (PType::Resource(None, None), PType::Resource(..)) => true,
        (PType::Resource(Some(a), None), PType::Resource(Some(b), _)) => a.eq_ignore_ascii_case(b),
        (PType::Class(None), PType::Class(_)) => true,
        (PType::CatalogEntry, PType::Resource(..) | PType::Class(_)) => true,
        (PType::Type(None), PType::Type(_)) => true,
        (PType::Type(Some(a)), PType::Type(Some(b))) => type_assignable(a, b),
        (PType::Numeric, PType::Integer(..) | PType::Float(..)) => true,
        (PType::Variant(ts), x) => ts.iter().any(|t| type_assignable(t, x)),
        (PType::Alias(_, t), x) => type_assignable(t, x),
        (t, PType::Alias(_, x)) => type_assignable(t, x),
        _ => false,
    }
}

pub use crate::lang::values::types::format::{mismatch, variant_rejections};
