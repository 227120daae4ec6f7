//! Rich values beyond plain data: `SemVer`, `SemVerRange`, `Deferred`,
//! `Timespan` and `Timestamp` (the last two in `time.rs`).
//! They are created with `SemVer('1.2.3')`, `SemVerRange('>=1.0 <2')`,
//! `Deferred('fn', [args])`, compare and match (`<`, `==`, `=~`, `in`),
//! and appear in a catalog the way Puppet's JSON rendering writes them:
//! versions and ranges as their strings, a Deferred as
//! `Deferred({'name' => 'fn', 'arguments' => [...]})`.

use std::cmp::Ordering;

use crate::lang::error::LResult;
use crate::lang::error::plain;
use crate::lang::values::semver::{Range, Version};
use crate::lang::values::types::PType;
use crate::lang::values::value::{Value, hash_get_str};

#[derive(Debug, Clone)]
pub enum Rich {
    SemVer(Version),
    SemVerRange(Range),
    Deferred {
        name: String,
        args: Vec<Value>,
    },
    /// A duration in nanoseconds.
    Timespan(i128),
    /// Nanoseconds since the Unix epoch (UTC).
    Timestamp(i128),
    /// A plan's `Target`, `Result`, `ResultSet`, `Error` or `Future`.
    Plan(crate::lang::values::plan::PlanObject),
}

impl PartialEq for Rich {
    fn eq(&self, other: &Rich) -> bool {
        match (self, other) {
            (Rich::SemVer(a), Rich::SemVer(b)) => a == b,
            (Rich::SemVerRange(a), Rich::SemVerRange(b)) => a == b,
            (Rich::Deferred { name: n1, args: a1 }, Rich::Deferred { name: n2, args: a2 }) => {
                n1 == n2 && a1 == a2
            }
            (Rich::Timespan(a), Rich::Timespan(b)) | (Rich::Timestamp(a), Rich::Timestamp(b)) => {
                a == b
            }
            (Rich::Plan(a), Rich::Plan(b)) => a.equal(b),
            _ => false,
        }
    }
}

impl std::fmt::Display for Rich {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rich::SemVer(v) => write!(f, "{v}"),
            Rich::SemVerRange(r) => write!(f, "{}", r.text),
            Rich::Deferred { name, args } => write!(
                f,
                "Deferred({{'name' => '{name}', 'arguments' => {}}})",
                Value::Array(args.clone()).to_inspect(true)
            ),
            Rich::Timespan(n) => write!(f, "{}", crate::lang::values::time::fmt_span(*n)),
            Rich::Timestamp(n) => write!(f, "{}", crate::lang::values::time::fmt_stamp(*n)),
            Rich::Plan(o) => write!(f, "{}", o.to_s()),
        }
    }
}

impl Rich {
    pub fn type_name(&self) -> &'static str {
        match self {
            Rich::SemVer(_) => "SemVer",
            Rich::SemVerRange(_) => "SemVerRange",
            Rich::Deferred { .. } => "Deferred",
            Rich::Timespan(_) => "Timespan",
            Rich::Timestamp(_) => "Timestamp",
            Rich::Plan(o) => o.type_name(),
        }
    }

    /// The type `type()` reports.
    pub fn infer_type(&self) -> PType {
        match self {
            Rich::SemVer(v) => PType::SemVer(vec![format!("{v} - {v}")]),
            Rich::SemVerRange(_) => PType::SemVerRange,
            Rich::Deferred { .. } => PType::Deferred,
            Rich::Timespan(n) => PType::Timespan(Some(*n), Some(*n)),
            Rich::Timestamp(n) => PType::Timestamp(Some(*n), Some(*n)),
            Rich::Plan(o) => o.plan_type(),
        }
    }
}

/// Equality of rich values (`==`).
pub fn rich_equal(a: &Rich, b: &Rich) -> bool {
    match (a, b) {
        (Rich::SemVer(x), Rich::SemVer(y)) => x == y,
        (Rich::SemVerRange(x), Rich::SemVerRange(y)) => x.text == y.text,
        (Rich::Timespan(x), Rich::Timespan(y)) | (Rich::Timestamp(x), Rich::Timestamp(y)) => x == y,
        (Rich::Plan(x), Rich::Plan(y)) => x.equal(y),
        (Rich::Deferred { name: n1, args: a1 }, Rich::Deferred { name: n2, args: a2 }) => {
            n1 == n2 && Value::Array(a1.clone()) == Value::Array(a2.clone())
        }
        _ => false,
    }
}

/// Ordering of rich values (`<`, `sort`): versions by precedence.
pub fn rich_compare(a: &Rich, b: &Rich) -> Option<Ordering> {
    match (a, b) {
        (Rich::SemVer(x), Rich::SemVer(y)) => Some(x.precedence(y)),
        (Rich::Timespan(x), Rich::Timespan(y)) | (Rich::Timestamp(x), Rich::Timestamp(y)) => {
            Some(x.cmp(y))
        }
        _ => None,
    }
}

/// `version =~ range` and `version in range`.
pub fn range_match(v: &Value, range: &Rich) -> bool {
    match (v, range) {
        (Value::Rich(r), Rich::SemVerRange(range)) => match &**r {
            Rich::SemVer(ver) => range.includes(ver),
            _ => false,
        },
        _ => false,
    }
}

/// Is `v` an instance of `SemVer[ranges]`?
pub fn semver_instance(ranges: &[String], v: &Value) -> bool {
    let Value::Rich(r) = v else { return false };
    let Rich::SemVer(ver) = &**r else {
        return false;
    };
    ranges.is_empty()
        || ranges
            .iter()
            .any(|r| Range::parse(r).is_some_and(|r| r.includes(ver)))
}

fn rich(r: Rich) -> Value {
    Value::Rich(Box::new(r))
}

fn u64_arg(v: Option<&Value>, what: &str) -> LResult<u64> {
    match v {
        Some(Value::Int(i)) if *i >= 0 => Ok(*i as u64),
        Some(other) => Err(plain(format!(
            "'new_Version' parameter '{what}' expects an Integer[0] value, got {}",
            other.type_name()
        ))),
        None => Err(plain(format!(
            "'new_Version' expects a value for parameter '{what}'"
        ))),
    }
}

/// `SemVer(...)`, `SemVerRange(...)`, `Deferred(...)`.
pub fn new_rich(t: &PType, args: &[Value]) -> LResult<Value> {
    let a0 = args.first().cloned().unwrap_or(Value::Undef);
    match t {
        PType::SemVer(_) => match (&a0, args.len()) {
            (Value::Rich(r), 1) if matches!(**r, Rich::SemVer(_)) => Ok(a0.clone()),
            (Value::Str(s), 1) => {
                Version::parse(s)
                    .map(|v| rich(Rich::SemVer(v)))
                    .ok_or_else(|| {
                        plain(format!(
                            "'new_Version' The string '{s}' cannot be converted to a SemVer"
                        ))
                    })
            }
            (Value::Hash(h), 1) => {
                let mut v = Version::new(
                    u64_arg(hash_get_str(h, "major"), "major")?,
                    u64_arg(hash_get_str(h, "minor"), "minor")?,
                    u64_arg(hash_get_str(h, "patch"), "patch")?,
                );
                if let Some(Value::Str(p)) = hash_get_str(h, "prerelease") {
                    v.pre = crate::lang::values::semver::parse_pre(p)
                        .ok_or_else(|| plain(format!("Invalid prerelease '{p}'")))?;
                }
                if let Some(Value::Str(b)) = hash_get_str(h, "build") {
                    v.build = Some(b.clone());
                }
                Ok(rich(Rich::SemVer(v)))
            }
            (_, 3..=5) => {
                let mut v = Version::new(
                    u64_arg(args.first(), "major")?,
                    u64_arg(args.get(1), "minor")?,
                    u64_arg(args.get(2), "patch")?,
                );
                if let Some(Value::Str(p)) = args.get(3) {
                    v.pre = crate::lang::values::semver::parse_pre(p)
                        .ok_or_else(|| plain(format!("Invalid prerelease '{p}'")))?;
                }
                if let Some(Value::Str(b)) = args.get(4) {
                    v.build = Some(b.clone());
                }
                Ok(rich(Rich::SemVer(v)))
            }
            _ => Err(plain(format!(
                "'new_Version' expects a String, a Hash or 3 to 5 arguments, got {}",
                a0.type_name()
            ))),
        },
        PType::Timespan(..) => crate::lang::values::time::new_timespan(args).map_err(Into::into),
        PType::Timestamp(..) => crate::lang::values::time::new_timestamp(args).map_err(Into::into),
        PType::SemVerRange => match &a0 {
            Value::Str(s) => Range::parse(s)
                .map(|r| rich(Rich::SemVerRange(r)))
                .ok_or_else(|| {
                    plain(format!(
                        "'new_VersionRange' The string '{s}' cannot be converted to a SemVerRange"
                    ))
                }),
            Value::Rich(r) if matches!(**r, Rich::SemVerRange(_)) => Ok(a0.clone()),
            other => Err(plain(format!(
                "'new_VersionRange' expects a String value, got {}",
                other.type_name()
            ))),
        },
        _ => {
            let Value::Str(name) = &a0 else {
                return Err(plain(format!(
                    "Deferred parameter 'name' expects a String value, got {}",
                    a0.type_name()
                )));
            };
            let args = match args.get(1) {
                None | Some(Value::Undef) => Vec::new(),
                Some(Value::Array(a)) => a.clone(),
                Some(other) => {
                    return Err(plain(format!(
                        "Deferred parameter 'arguments' expects a value of type Undef or Array, got {}",
                        other.type_name()
                    )));
                }
            };
            Ok(rich(Rich::Deferred {
                name: name.clone(),
                args,
            }))
        }
    }
}
