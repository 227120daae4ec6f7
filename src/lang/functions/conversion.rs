//! Conversion and type functions: `type`, the `Type(value)` constructors
//! (`String(x)`, `Integer(x)`, ...), `hash`, `unwrap`, `to_json`,
//! `to_json_pretty`, `parsejson`, `bool2str`, `any2array`, `new`
//! (`Type.new(x)`), the `is_*` predicates, and Puppet core's `convert_to`,
//! `annotate` and `strftime`.

use crate::lang::error::plain;
use crate::lang::eval::control::{EvalResult, Unwind};
use crate::lang::eval::{Call, Evaluator};
use crate::lang::functions::{Builder, Family, any, sig};
use crate::lang::values::convert::new_value;
use crate::lang::values::types::infer::infer_type;
use crate::lang::values::types::{self, PType, capitalize};
use crate::lang::values::value::{Value, str_to_num};

pub fn register(b: &mut Builder) {
    let f = Family::Conversion;
    let one = |ret| sig(ret).req("value", any());
    b.add(
        &["type"],
        f,
        sig("Type").req("value", any()).opt("inference", any()),
        type_of,
    );
    b.add(&["hash"], f, one("Hash"), to_hash);
    b.add(&["unwrap"], f, one("Any"), unwrap);
    b.add(
        &["to_json", "to_json_pretty"],
        f,
        sig("String").req("data", any()).rest("options", any()),
        to_json,
    );
    b.add(
        &["parsejson"],
        f,
        sig("Data").req("json", any()).opt("default", any()),
        parsejson,
    );
    b.add(
        &["bool2str"],
        f,
        sig("String")
            .req("value", any())
            .opt("true_value", any())
            .opt("false_value", any()),
        bool2str,
    );
    b.add(
        &["any2array"],
        f,
        sig("Array").rest("values", any()),
        any2array,
    );
    b.add(&["is_string"], f, one("Boolean"), is_string);
    b.add(&["is_array"], f, one("Boolean"), is_array);
    b.add(&["is_hash"], f, one("Boolean"), is_hash);
    b.add(&["is_bool"], f, one("Boolean"), is_bool);
    b.add(&["is_integer"], f, one("Boolean"), is_integer);
    b.add(&["is_numeric"], f, one("Boolean"), is_numeric);
    b.add(
        &["new"],
        f,
        sig("Any").req("type", any()).rest("args", any()),
        new_of_type,
    );
}

/// `new(Type, args...)`, usually written `Type.new(args...)`
/// (`Integer.new($facts['os']['release']['major'])`): the same value as
/// `Type(args...)`.
fn new_of_type(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let Value::Type(t) = c.arg(0) else {
        return Err(plain(format!(
            "'new' parameter 'type' expects a Type value, got {}",
            c.arg(0).type_name()
        ))
        .into());
    };
    Ok(new_value(&t, c.args.get(1..).unwrap_or(&[]))?)
}

/// `Type(value, ...)` for a data type name written capitalized (`Integer('1')`):
/// `Type.new`. `None` when the name is not a data type.
pub fn type_constructor(c: Call<'_>) -> Option<EvalResult<Value>> {
    if !c.written.starts_with(|ch: char| ch.is_ascii_uppercase()) {
        return None;
    }
    let t = types::builtin_type(c.written).or_else(|| types::builtin_type(&capitalize(c.name)))?;
    Some(new_value(&t, &c.args).map_err(Unwind::from))
}

pub(crate) fn type_of(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    Ok(Value::Type(infer_type(&c.arg(0))))
}

fn unwrap(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    Ok(match a0 {
        Value::Sensitive(inner) => *inner,
        other => other,
    })
}

fn to_json(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    let name = c.name;
    Ok({
        let j = a0.to_json().unwrap_or(serde_json::Value::Null);
        let out = if name == "to_json" {
            serde_json::to_string(&j)
        } else {
            serde_json::to_string_pretty(&j)
        };
        Value::Str(out.map_err(|e| plain(e.to_string()))?)
    })
}

fn parsejson(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    Ok(
        match serde_json::from_str::<serde_json::Value>(&a0.to_s()) {
            Ok(j) => Value::from_json(&j),
            Err(e) => return Err(plain(format!("parsejson(): {e}")).into()),
        },
    )
}

/// stdlib's `bool2str` (a 3.x function: undef arguments arrive as `''`).
fn bool2str(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let n = c.args.len();
    if n != 1 && n != 3 {
        return Err(plain(format!(
            "bool2str(): Wrong number of arguments given ({n} for 3)"
        ))
        .into());
    }
    let Value::Bool(b) = c.arg(0) else {
        return Err(plain("bool2str(): Requires a boolean to work with").into());
    };
    let word = |i: usize, dflt: &str| match c.args.get(i) {
        None => Some(dflt.to_string()),
        Some(Value::Undef) => Some(String::new()),
        Some(Value::Str(s)) => Some(s.clone()),
        Some(_) => None,
    };
    let (Some(t), Some(f)) = (word(1, "true"), word(2, "false")) else {
        return Err(plain("bool2str(): Requires strings to convert to").into());
    };
    Ok(Value::Str(if b { t } else { f }))
}

fn any2array(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    Ok(match a0 {
        Value::Array(_) => a0,
        Value::Undef => Value::Array(vec![]),
        Value::Hash(h) => Value::Array(h.into_iter().flat_map(|(k, v)| [k, v]).collect()),
        other => Value::Array(vec![other]),
    })
}

fn is_string(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    Ok(Value::Bool(matches!(a0, Value::Str(_))))
}

fn is_array(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    Ok(Value::Bool(matches!(a0, Value::Array(_))))
}

fn is_hash(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    Ok(Value::Bool(matches!(a0, Value::Hash(_))))
}

fn is_bool(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    Ok(Value::Bool(matches!(a0, Value::Bool(_))))
}

fn is_integer(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    Ok(Value::Bool(
        matches!(a0, Value::Int(_)) || matches!(&a0, Value::Str(x) if x.parse::<i64>().is_ok()),
    ))
}

fn is_numeric(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    Ok(Value::Bool(
        matches!(a0, Value::Int(_) | Value::Float(_))
            || matches!(&a0, Value::Str(x) if str_to_num(x).is_some()),
    ))
}

fn to_hash(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    Ok(new_value(
        &PType::Hash(Box::new(PType::Any), Box::new(PType::Any), 0, i64::MAX),
        &c.args,
    )?)
}

// ---- convert_to and annotate (Puppet core) ----

pub fn register_core(b: &mut Builder) {
    let f = Family::Conversion;
    b.add(
        &["convert_to"],
        f,
        sig("Any")
            .req("value", any())
            .req("type", PType::Type(None))
            .rest("args", any())
            .block(crate::lang::functions::Block::Optional),
        convert_to,
    );
    b.add(
        &["annotate"],
        f,
        sig("Any")
            .req("type", any())
            .req("value", any())
            .opt("annotations", any())
            .block(crate::lang::functions::Block::Optional),
        annotate,
    );
}

/// `convert_to(value, Type, args...)`: `Type.new(value, args...)`, passed
/// to the lambda when there is one.
fn convert_to(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let Value::Type(t) = c.arg(1) else {
        return Ok(Value::Undef);
    };
    let mut args = vec![c.arg(0)];
    args.extend(c.args.iter().skip(2).cloned());
    let made = new_value(&t, &args).map_err(|e| plain(format!("'new' {}", e.message)))?;
    match c.lambda {
        Some(l) => ev.call_lambda(l, vec![made], c.scope),
        None => Ok(made),
    }
}

/// `annotate`: Puppet 7 annotates values with `Annotation` object types,
/// which no manifest can define or reach, so every call fails the
/// argument check as Puppet's does.
fn annotate(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let n = c.args.len();
    let got = match c.arg(0) {
        Value::Type(t) => format!("Type[{t}]"),
        other => other.type_name(),
    };
    let count = |want: usize| format!("expects {want} arguments, got {n}");
    let first = |name: &str| {
        format!("parameter 'type' expects a Type[Object[{{name => '{name}'}}]] value, got {got}")
    };
    let block = c.lambda.is_some();
    let with_three = |name: &str| {
        if n != 3 {
            count(3)
        } else if block {
            "does not expect a block".into()
        } else {
            first(name)
        }
    };
    let reasons = [
        if n != 2 {
            count(2)
        } else {
            first("Annotation")
        },
        with_three("Annotation"),
        with_three("Pcore"),
    ];
    let signatures = [
        "Type[Annotation] type, Any value, Callable[0, 0] block?",
        "Type[Annotation] type, Any value, Variant[Enum['clear'], Hash[Pcore::MemberName, Any]] annotation_hash",
        "Type[Pcore] type, Any value, Hash[Type[Annotation], Hash[Pcore::MemberName, Any]] annotations",
    ];
    let mut m = String::from(
        "The function 'annotate' was called with arguments it does not accept. It expects one of:",
    );
    for (s, why) in signatures.iter().zip(reasons) {
        m.push_str(&format!("\n  ({s})\n    rejected: {why}"));
    }
    Err(plain(m).into())
}

/// `strftime`: a Timespan or a Timestamp (with an optional timezone)
/// formatted, or the deprecated `(String format, String timezone?)` form,
/// which formats the current time.
pub fn register_strftime(b: &mut Builder) {
    b.add(
        &["strftime"],
        Family::Conversion,
        sig("String").rest("args", any()),
        strftime,
    );
}

fn strftime(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    use crate::lang::values::rich::Rich;
    use crate::lang::values::strftime::{format_timespan, format_timestamp, utc_offset};
    let text = |i: usize| match c.args.get(i) {
        Some(Value::Str(s)) => Some(s.as_str()),
        _ => None,
    };
    let n = c.args.len();
    if n == 0 || n > 3 {
        let got = if n == 0 {
            "none".to_string()
        } else {
            n.to_string()
        };
        return Err(plain(format!(
            "'strftime' expects between 1 and 3 arguments, got {got}"
        ))
        .into());
    }
    let zone = |i: usize| -> EvalResult<Option<i32>> {
        match text(i) {
            Some(tz) if !tz.is_empty() => Ok(Some(
                utc_offset(tz).map_err(crate::lang::error::LangError::from)?,
            )),
            _ => Ok(None),
        }
    };
    let formatted = match (c.args.first(), text(1)) {
        (Some(Value::Rich(r)), Some(fmt)) => match (r.as_ref(), n) {
            (Rich::Timespan(ns), 2) => Some(format_timespan(*ns, fmt)),
            (Rich::Timestamp(ns), 2) => Some(format_timestamp(*ns, fmt, None)),
            (Rich::Timestamp(ns), 3) if text(2).is_some() => {
                Some(format_timestamp(*ns, fmt, zone(2)?))
            }
            _ => None,
        },
        (Some(Value::Str(fmt)), _) if n == 1 || (n == 2 && text(1).is_some()) => {
            let now = chrono::Utc::now();
            let ns = i128::from(now.timestamp()) * 1_000_000_000
                + i128::from(now.timestamp_subsec_nanos());
            Some(format_timestamp(ns, fmt, zone(1)?))
        }
        _ => None,
    };
    let formatted = formatted
        .transpose()
        .map_err(crate::lang::error::LangError::from)?;
    match formatted {
        Some(s) => Ok(Value::Str(s)),
        None => Err(plain(strftime_mismatch(&c.args)).into()),
    }
}

/// One of `strftime`'s signatures: as shown, its (name, type) parameters
/// and how many are required.
type Dispatch = (&'static str, &'static [(&'static str, &'static str)], usize);

/// Puppet's dispatch failure for `strftime`'s three signatures.
fn strftime_mismatch(args: &[Value]) -> String {
    let sigs: [Dispatch; 3] = [
        (
            "Timespan time_object, String format",
            &[("time_object", "Timespan"), ("format", "String")],
            2,
        ),
        (
            "Timestamp time_object, String format, String timezone?",
            &[
                ("time_object", "Timestamp"),
                ("format", "String"),
                ("timezone", "String"),
            ],
            2,
        ),
        (
            "String format, String timezone?",
            &[("format", "String"), ("timezone", "String")],
            1,
        ),
    ];
    let mut m = String::from(
        "The function 'strftime' was called with arguments it does not accept. It expects one of:",
    );
    for (shown, params, min) in sigs {
        m.push_str(&format!("\n  ({shown})\n    rejected: "));
        let max = params.len();
        if args.len() < min || args.len() > max {
            let want = if min == max {
                format!("{min}")
            } else {
                format!("between {min} and {max}")
            };
            m.push_str(&format!("expects {want} arguments, got {}", args.len()));
            continue;
        }
        for ((name, ty), v) in params.iter().zip(args) {
            let t = types::builtin_type(ty).unwrap_or(PType::Any);
            if !types::is_instance(&t, v) {
                m.push_str(&format!("parameter '{name}' {}", types::mismatch(&t, v)));
                break;
            }
        }
    }
    m
}
