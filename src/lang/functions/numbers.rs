//! Number functions: `abs`, `min` and `max`, and Puppet core's `compare`
//! (which orders numbers, strings, versions and times).

use crate::lang::error::plain;
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::functions::{Builder, Family, any, sig};
use crate::lang::values::rich::Rich;
use crate::lang::values::value::{Value, compare};

pub fn register(b: &mut Builder) {
    let f = Family::Numbers;
    b.add(&["abs"], f, sig("Numeric").req("value", any()), abs);
    b.add(
        &["min", "max"],
        f,
        sig("Any").rest("values", any()),
        min_max,
    );
}

fn abs(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    Ok(match a0 {
        Value::Int(i) => Value::Int(i.wrapping_abs()),
        Value::Float(f) => Value::Float(f.abs()),
        other => other,
    })
}

fn min_max(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let args = &c.args;
    let name = c.name;
    Ok({
        let mut best: Option<Value> = None;
        for a in args {
            best = Some(match best {
                None => a.clone(),
                Some(b) => {
                    let ord = compare(a, &b).unwrap_or(std::cmp::Ordering::Equal);
                    let take = if name == "min" {
                        ord.is_lt()
                    } else {
                        ord.is_gt()
                    };
                    if take { a.clone() } else { b }
                }
            });
        }
        best.unwrap_or(Value::Undef)
    })
}

// ---- compare (Puppet core) ----

pub fn register_core(b: &mut Builder) {
    b.add(
        &["compare"],
        Family::Numbers,
        sig("Integer[-1, 1]")
            // Puppet counts the arguments itself: too few is "between 2
            // and 3", too many a message of its own.
            .opt("a", any())
            .opt("b", any())
            .rest("ignore_case", any()),
        compare_values,
    );
}

/// Puppet's label of a value in `compare`'s messages.
fn compare_label(v: &Value) -> String {
    match v {
        Value::Undef => "Undef Value".into(),
        Value::Default => "Object".into(),
        Value::Type(t) => format!("{t}-Type"),
        Value::Rich(r) => match &**r {
            Rich::SemVer(_) => "Semver".into(),
            Rich::SemVerRange(_) => "SemverRange".into(),
            Rich::Timespan(_) => "Timespan".into(),
            Rich::Timestamp(_) => "Timestamp".into(),
            _ => v.type_name(),
        },
        other => other.type_name(),
    }
}

/// `compare(a, b, ignore_case?)`: -1, 0 or 1 for numbers, strings (case
/// ignored unless the third argument is false), versions, timespans and
/// timestamps (these two also against numbers, as seconds).
fn compare_values(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    if c.args.len() < 2 {
        return Err(plain(format!(
            "'compare' expects between 2 and 3 arguments, got {}",
            c.args.len()
        ))
        .into());
    }
    let (a, b) = (c.arg(0), c.arg(1));
    let rest = c.args.get(2..).unwrap_or(&[]);
    let time = |v: &Value| match v {
        Value::Rich(r) => match &**r {
            Rich::Timespan(n) => Some((true, *n as f64 / 1e9)),
            Rich::Timestamp(n) => Some((false, *n as f64 / 1e9)),
            _ => None,
        },
        _ => None,
    };
    let number = |v: &Value| match v {
        Value::Int(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    };
    let fail =
        |m: String| -> EvalResult<Value> { Err(plain(format!("'compare' compare(): {m}")).into()) };
    let ordering = match (&a, &b, rest) {
        (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_), []) => compare(&a, &b),
        (Value::Str(x), Value::Str(y), [] | [Value::Bool(_)]) => {
            if matches!(rest, [Value::Bool(false)]) {
                Some(x.cmp(y))
            } else {
                Some(x.to_lowercase().cmp(&y.to_lowercase()))
            }
        }
        (Value::Rich(x), Value::Rich(y), [])
            if matches!((&**x, &**y), (Rich::SemVer(_), Rich::SemVer(_))) =>
        {
            compare(&a, &b)
        }
        (_, _, []) => match (time(&a), time(&b), number(&a), number(&b)) {
            (Some((kx, x)), Some((ky, y)), _, _) if kx == ky => x.partial_cmp(&y),
            (Some((_, x)), None, _, Some(y)) | (None, Some((_, y)), Some(x), _) => {
                x.partial_cmp(&y)
            }
            _ => None,
        },
        _ => None,
    };
    if let Some(o) = ordering {
        return Ok(Value::Int(o as i64));
    }
    let comparable = |v: &Value| {
        matches!(v, Value::Int(_) | Value::Float(_) | Value::Str(_))
            || time(v).is_some()
            || matches!(v, Value::Rich(r) if matches!(**r, Rich::SemVer(_)))
    };
    if !comparable(&a) || !comparable(&b) {
        return fail(format!(
            "Non comparable type. Only values of the types Numeric, String, Semver, Timestamp and Timestamp can be compared. Got {} and {}",
            compare_label(&a),
            compare_label(&b)
        ));
    }
    if !rest.is_empty() {
        if !matches!((&a, &b), (Value::Str(_), Value::Str(_))) {
            return fail(
                "The third argument (ignore case) can only be used when comparing strings".into(),
            );
        }
        if rest.len() != 1 {
            return fail(format!(
                "Accepts at most 3 arguments, got {}",
                2 + rest.len()
            ));
        }
        // Puppet 7's check names a constant its Ruby code does not define.
        return Err(plain(
            "uninitialized constant Puppet::Pops::Loader::RubyFunctionInstantiator::Boolean",
        )
        .into());
    }
    fail(format!(
        "Can only compare values of the same type (or for Timestamp/Timespan also against Numeric). Got {} and {}",
        compare_label(&a),
        compare_label(&b)
    ))
}
