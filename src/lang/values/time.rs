//! The `Timespan` and `Timestamp` data types. Both hold nanoseconds (a
//! duration; a point since the Unix epoch, UTC). They are created from
//! strings in Puppet's default formats, numbers of seconds, hashes or
//! parts, compare, take part in arithmetic (`timestamp - timestamp` is a
//! timespan, `timestamp + timespan` a timestamp, a timespan scales by a
//! number) and print as Puppet does: `1-02:03:04.5` and
//! `2020-01-01T00:00:00.000000000 UTC`.

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};

use crate::lang::values::error::ValueError;
use crate::lang::values::rich::Rich;
use crate::lang::values::value::{Value, hash_get_str};

const NS: i128 = 1_000_000_000;

/// The string formats `Timespan('...')` accepts, in Puppet's order.
const SPAN_FORMATS: &str =
    "%D-%H:%M:%S.%-N, %H:%M:%S.%-N, %M:%S.%-N, %S.%-N, %D-%H:%M:%S, %H:%M:%S, %D-%H:%M, %S";

fn rich(r: Rich) -> Value {
    Value::Rich(Box::new(r))
}

/// `1-02:03:04.5` (days-hours:minutes:seconds.fraction, `-` when negative).
pub fn fmt_span(ns: i128) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    let ns_u = NS.unsigned_abs();
    let secs = a / ns_u;
    let frac = a % ns_u;
    let mut f = format!("{frac:09}");
    while f.len() > 1 && f.ends_with('0') {
        f.pop();
    }
    format!(
        "{sign}{}-{:02}:{:02}:{:02}.{f}",
        secs / 86_400,
        secs / 3600 % 24,
        secs / 60 % 60,
        secs % 60
    )
}

/// `2020-01-01T00:00:00.000000000 UTC`.
pub fn fmt_stamp(ns: i128) -> String {
    let secs = ns.div_euclid(NS);
    let frac = ns.rem_euclid(NS);
    match i64::try_from(secs)
        .ok()
        .and_then(|s| DateTime::<Utc>::from_timestamp(s, frac as u32))
    {
        Some(t) => format!("{}.{frac:09} UTC", t.format("%Y-%m-%dT%H:%M:%S")),
        None => format!("{secs}.{frac:09}"),
    }
}

fn num_ns(v: &Value) -> Option<i128> {
    match v {
        Value::Int(i) => Some(i128::from(*i) * NS),
        Value::Float(f) if f.is_finite() && f.abs() < 1e18 => Some((f * 1e9).round() as i128),
        _ => None,
    }
}

fn parse_span(s: &str) -> Option<i128> {
    let (neg, body) = match s.trim().strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s.trim()),
    };
    let (main, frac) = match body.split_once('.') {
        Some((m, f)) if !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()) => (m, Some(f)),
        Some(_) => return None,
        None => (body, None),
    };
    let (days, clock) = match main.split_once('-') {
        Some((d, c)) => (Some(d), c),
        None => (None, main),
    };
    let nums: Vec<i128> = clock
        .split(':')
        .map(|p| {
            if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) || p.len() > 12 {
                None
            } else {
                p.parse().ok()
            }
        })
        .collect::<Option<_>>()?;
    let d: i128 = match days {
        Some(d) if !d.is_empty() && d.len() <= 12 && d.bytes().all(|b| b.is_ascii_digit()) => {
            d.parse().ok()?
        }
        Some(_) => return None,
        None => 0,
    };
    // Which fields the clock part holds, following the accepted formats.
    let (h, m, sec) = match (days.is_some(), frac.is_some(), nums.as_slice()) {
        (true, _, [h, m, s]) => (*h, *m, *s),
        (true, false, [h, m]) => (*h, *m, 0),
        (false, _, [h, m, s]) => (*h, *m, *s),
        (false, true, [m, s]) => (0, *m, *s),
        (false, _, [s]) => (0, 0, *s),
        _ => return None,
    };
    let frac_ns = match frac {
        Some(f) => {
            let digits: String = f.chars().take(9).collect();
            format!("{digits:0<9}").parse::<i128>().ok()?
        }
        None => 0,
    };
    let total = (((d * 24 + h) * 60 + m) * 60 + sec) * NS + frac_ns;
    Some(if neg { -total } else { total })
}

fn parse_stamp(s: &str) -> Option<i128> {
    let s = s.trim();
    let to_ns =
        |t: DateTime<Utc>| i128::from(t.timestamp()) * NS + i128::from(t.timestamp_subsec_nanos());
    if let Some(naive) = s
        .strip_suffix(" UTC")
        .or_else(|| s.strip_suffix('Z'))
        .and_then(|b| {
            [
                "%Y-%m-%dT%H:%M:%S%.f",
                "%Y-%m-%dT%H:%M:%S",
                "%Y-%m-%d %H:%M:%S%.f",
            ]
            .iter()
            .find_map(|f| NaiveDateTime::parse_from_str(b, f).ok())
        })
    {
        return Some(to_ns(naive.and_utc()));
    }
    for f in [
        "%Y-%m-%dT%H:%M:%S%.f%:z",
        "%Y-%m-%dT%H:%M:%S%:z",
        "%Y-%m-%dT%H:%M:%S%.f%z",
    ] {
        if let Ok(t) = DateTime::parse_from_str(s, f) {
            return Some(to_ns(t.with_timezone(&Utc)));
        }
    }
    for f in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%d %H:%M:%S",
    ] {
        if let Ok(t) = NaiveDateTime::parse_from_str(s, f) {
            return Some(to_ns(t.and_utc()));
        }
    }
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| to_ns(t.and_utc()))
}

/// `Timespan(...)`.
pub fn new_timespan(args: &[Value]) -> Result<Value, ValueError> {
    let a0 = args.first().cloned().unwrap_or(Value::Undef);
    let ns = match (&a0, args.len()) {
        (Value::Rich(r), 1) if matches!(**r, Rich::Timespan(_)) => return Ok(a0.clone()),
        (Value::Str(s), 1) => parse_span(s).ok_or_else(|| {
            format!("Unable to parse '{s}' using any of the formats {SPAN_FORMATS}")
        })?,
        (Value::Int(_) | Value::Float(_), 1) => num_ns(&a0).ok_or("Timespan out of range")?,
        (Value::Hash(h), 1) => {
            let part = |k: &str| -> i128 {
                hash_get_str(h, k)
                    .and_then(|v| match v {
                        Value::Int(i) => Some(i128::from(*i)),
                        Value::Float(f) if f.is_finite() && f.abs() < 1e15 => Some(*f as i128),
                        _ => None,
                    })
                    .unwrap_or(0)
            };
            let total = (((part("days") * 24 + part("hours")) * 60 + part("minutes")) * 60
                + part("seconds"))
                * NS
                + part("milliseconds") * 1_000_000
                + part("microseconds") * 1_000
                + part("nanoseconds");
            if hash_get_str(h, "negative").is_some_and(Value::truthy) {
                -total
            } else {
                total
            }
        }
        (_, 3..=7) => {
            let mut parts = [0i128; 7];
            for (i, a) in args.iter().enumerate() {
                let Value::Int(v) = a else {
                    return Err(ValueError(format!(
                        "Timespan expects Integer parts, got {}",
                        a.type_name()
                    )));
                };
                if let Some(slot) = parts.get_mut(i) {
                    *slot = i128::from(*v);
                }
            }
            let [d, h, m, s, ms, us, n] = parts;
            (((d * 24 + h) * 60 + m) * 60 + s) * NS + ms * 1_000_000 + us * 1_000 + n
        }
        _ => {
            return Err(ValueError(format!(
                "Cannot create a Timespan from {}",
                a0.type_name()
            )));
        }
    };
    Ok(rich(Rich::Timespan(ns)))
}

/// `Timestamp(...)`: a string in a default format, seconds since the epoch
/// (`Timestamp()` alone is the current time).
pub fn new_timestamp(args: &[Value]) -> Result<Value, ValueError> {
    let a0 = args.first().cloned().unwrap_or(Value::Undef);
    let ns = match &a0 {
        Value::Rich(r) if matches!(**r, Rich::Timestamp(_)) => return Ok(a0.clone()),
        Value::Str(s) => {
            parse_stamp(s).ok_or_else(|| format!("Unable to parse '{s}' as a Timestamp"))?
        }
        Value::Int(_) | Value::Float(_) => num_ns(&a0).ok_or("Timestamp out of range")?,
        Value::Undef if args.is_empty() => {
            let now = Utc::now();
            i128::from(now.timestamp()) * NS + i128::from(now.timestamp_subsec_nanos())
        }
        other => {
            return Err(ValueError(format!(
                "Cannot create a Timestamp from {}",
                other.type_name()
            )));
        }
    };
    Ok(rich(Rich::Timestamp(ns)))
}

/// A type bound given as a Timespan/Timestamp, a number of seconds or a string.
pub fn bound(v: Option<&Value>, stamp: bool) -> Option<i128> {
    match v? {
        Value::Rich(r) => match **r {
            Rich::Timespan(n) | Rich::Timestamp(n) => Some(n),
            _ => None,
        },
        Value::Str(s) if stamp => parse_stamp(s),
        Value::Str(s) => parse_span(s),
        other => num_ns(other),
    }
}

/// Arithmetic with timespans and timestamps; `op` is `+ - * /`.
pub fn arith(op: &str, a: &Value, b: &Value) -> Result<Value, ValueError> {
    let span = |v: &Value| match v {
        Value::Rich(r) => match **r {
            Rich::Timespan(n) => Some(n),
            _ => None,
        },
        other => num_ns(other),
    };
    let stamp = |v: &Value| match v {
        Value::Rich(r) => match **r {
            Rich::Timestamp(n) => Some(n),
            _ => None,
        },
        _ => None,
    };
    let is_span = |v: &Value| matches!(v, Value::Rich(r) if matches!(**r, Rich::Timespan(_)));
    let factor = |v: &Value| match v {
        Value::Int(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    };
    let out = match (op, stamp(a), stamp(b)) {
        ("-", Some(x), Some(y)) => Rich::Timespan(x - y),
        ("+", Some(x), None) => Rich::Timestamp(x + span(b).ok_or("not a Timespan")?),
        ("+", None, Some(y)) if span(a).is_some() => Rich::Timestamp(y + span(a).unwrap_or(0)),
        ("-", Some(x), None) => Rich::Timestamp(x - span(b).ok_or("not a Timespan")?),
        ("+" | "-", None, None) if is_span(a) || is_span(b) => {
            let (x, y) = (
                span(a).ok_or("not a Timespan")?,
                span(b).ok_or("not a Timespan")?,
            );
            Rich::Timespan(if op == "+" { x + y } else { x - y })
        }
        ("*", None, None) if is_span(a) && factor(b).is_some() => {
            let f = factor(b).unwrap_or(1.0);
            Rich::Timespan((span(a).unwrap_or(0) as f64 * f).round() as i128)
        }
        ("*", None, None) if is_span(b) && factor(a).is_some() => {
            let f = factor(a).unwrap_or(1.0);
            Rich::Timespan((span(b).unwrap_or(0) as f64 * f).round() as i128)
        }
        ("/", None, None) if is_span(a) && is_span(b) => {
            let y = span(b).unwrap_or(0);
            if y == 0 {
                return Err("Division by 0".into());
            }
            return Ok(Value::Float(span(a).unwrap_or(0) as f64 / y as f64));
        }
        ("/", None, None) if is_span(a) && factor(b).is_some() => {
            let f = factor(b).unwrap_or(1.0);
            if f == 0.0 {
                return Err("Division by 0".into());
            }
            Rich::Timespan((span(a).unwrap_or(0) as f64 / f).round() as i128)
        }
        _ => {
            return Err(ValueError(format!(
                "Operator '{op}' is not applicable to {} and {}",
                a.type_name(),
                b.type_name()
            )));
        }
    };
    Ok(rich(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans() {
        assert_eq!(
            parse_span("1-02:03:04").map(fmt_span).as_deref(),
            Some("1-02:03:04.0")
        );
        assert_eq!(
            parse_span("01:30.5").map(fmt_span).as_deref(),
            Some("0-00:01:30.5")
        );
        assert!(parse_span("10:00").is_none());
        assert_eq!(fmt_span(-90 * NS), "-0-00:01:30.0");
    }

    #[test]
    fn stamps() {
        let t = parse_stamp("2020-01-01T10:00:00+02:00").expect("parses");
        assert_eq!(fmt_stamp(t), "2020-01-01T08:00:00.000000000 UTC");
        assert_eq!(fmt_stamp(0), "1970-01-01T00:00:00.000000000 UTC");
        assert!(parse_stamp("2021-01-01").is_some());
    }
}
