//! stdlib's legacy (3.x) validators and helpers, and Puppet's
//! `shellquote`, with the checks and messages of their Ruby sources
//! (Debian's puppet-module-puppetlabs-stdlib, Puppet 7): `validate_string`,
//! `validate_re`, `validate_integer`, `validate_bool`, `validate_array`,
//! `validate_hash`, `bool2num`, `is_domain_name`, `base64` (Ruby's
//! Base64 module: line-wrapped, strict and URL-safe forms, its lenient
//! decoder), `shellquote`, the
//! `translate` module's `translate`, and `deprecation` (a warning only).
//! The validators reach their 3.x bodies through stdlib's 4.x shims, so an
//! undef argument is Ruby's nil in their messages.

use crate::lang::error::plain;
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::functions::{Builder, Family, any, sig};
use crate::lang::template::erb::value::{inspect, to_s};
use crate::lang::values::regex::RubyRegex;
use crate::lang::values::value::Value;

pub fn register(b: &mut Builder) {
    let f = Family::Stdlib;
    let rest = |ret| sig(ret).rest("args", any());
    b.add(&["validate_string"], f, rest("Any"), validate_string);
    b.add(&["validate_re"], f, rest("Any"), validate_re);
    b.add(&["validate_integer"], f, rest("Any"), validate_integer);
    b.add(&["validate_bool"], f, rest("Any"), validate_bool);
    b.add(&["validate_array"], f, rest("Any"), validate_array);
    b.add(&["validate_hash"], f, rest("Any"), validate_hash);
    b.add(&["bool2num"], f, rest("Integer"), bool2num);
    b.add(&["is_domain_name"], f, rest("Boolean"), is_domain_name);
    b.add(&["shellquote"], f, rest("String"), shellquote);
    b.add(&["base64"], f, rest("String"), base64);
    b.add(&["deprecation"], f, rest("Undef"), |_, _| Ok(Value::Undef));
    b.add(
        &["translate"],
        f,
        sig("String")
            .req("message", crate::lang::functions::string())
            .opt("interpolation_values", any()),
        translate,
    );
}

/// An argument as a 3.x (`newfunction`) function receives it: Puppet
/// passes undef as `''` (which Ruby counts as given and true).
pub fn arg_3x(v: &Value) -> Value {
    if v.is_undef() {
        Value::str("")
    } else {
        v.clone()
    }
}

/// A 3.x function's "Wrong number of arguments given (N for M)" check.
pub(crate) fn arity(c: &Call<'_>, name: &str, want: usize) -> EvalResult<()> {
    if c.args.len() == want {
        return Ok(());
    }
    Err(plain(format!(
        "{name}(): Wrong number of arguments given ({} for {want})",
        c.args.len()
    ))
    .into())
}

/// The Ruby class name of a value, as stdlib's messages print it.
pub fn ruby_class(v: &Value) -> &'static str {
    match v {
        Value::Undef => "NilClass",
        Value::Str(_) => "String",
        Value::Int(_) => "Integer",
        Value::Float(_) => "Float",
        Value::Bool(true) => "TrueClass",
        Value::Bool(false) => "FalseClass",
        Value::Array(_) => "Array",
        Value::Hash(_) => "Hash",
        Value::Regex(_) => "Regexp",
        _ => "Object",
    }
}

fn validate_string(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    if c.args.is_empty() {
        return Err(plain("validate_string(): wrong number of arguments (0; must be > 0)").into());
    }
    for a in &c.args {
        if !matches!(a, Value::Str(_) | Value::Undef) {
            return Err(plain(format!(
                "{} is not a string.  It looks to be a {}",
                inspect(a),
                ruby_class(a)
            ))
            .into());
        }
    }
    Ok(Value::Undef)
}

fn validate_re(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let n = c.args.len();
    if !(2..=3).contains(&n) {
        return Err(plain(format!(
            "validate_re(): wrong number of arguments ({n}; must be 2 or 3)"
        ))
        .into());
    }
    let input = c.arg(0);
    let Value::Str(s) = &input else {
        return Err(plain(format!(
            "validate_re(): input needs to be a String, not a {}",
            ruby_class(&input)
        ))
        .into());
    };
    let res = c.arg(1);
    let patterns: Vec<Value> = match &res {
        Value::Array(a) => a.clone(),
        other => vec![other.clone()],
    };
    for p in &patterns {
        let pat = match p {
            Value::Regex(r) => r.clone(),
            other => other.to_s(),
        };
        if RubyRegex::new(&pat)?.is_match(s) {
            return Ok(Value::Undef);
        }
    }
    let msg = match c.args.get(2) {
        Some(m) if !matches!(m, Value::Undef) => m.to_s(),
        _ => format!(
            "validate_re(): {} does not match {}",
            inspect(&input),
            inspect(&res)
        ),
    };
    Err(plain(msg).into())
}

/// Ruby's `Integer(x.to_s)`: an optional sign, then decimal digits (or
/// 0x/0b/0o/0 prefixed ones), underscores between digits.
pub(crate) fn ruby_integer(s: &str) -> Option<i64> {
    let t = s.trim();
    let (neg, body) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let lower = body.to_ascii_lowercase();
    let (radix, digits) = if let Some(r) = lower.strip_prefix("0x") {
        (16, r.to_string())
    } else if let Some(r) = lower.strip_prefix("0b") {
        (2, r.to_string())
    } else if let Some(r) = lower.strip_prefix("0o") {
        (8, r.to_string())
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, lower[1..].to_string())
    } else {
        (10, lower.clone())
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
    {
        return None;
    }
    let v = i64::from_str_radix(&digits.replace('_', ""), radix).ok()?;
    Some(if neg { -v } else { v })
}

fn validate_integer(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    validate_bounded(
        &c,
        &Bounded {
            name: "validate_integer",
            noun: "an Integer",
            parse: |v| ruby_integer(&to_s(v)),
            show: |i| i.to_string(),
            value: Value::Int,
        },
    )
}

/// What `validate_integer` and `validate_numeric` (one Ruby body, two
/// conversions) do not share.
pub(crate) struct Bounded<T> {
    pub name: &'static str,
    /// "an Integer", "a Numeric".
    pub noun: &'static str,
    /// Ruby's `Integer(x.to_s)` or `Float(x.to_s)`.
    pub parse: fn(&Value) -> Option<T>,
    /// A bound as the messages print it.
    pub show: fn(T) -> String,
    /// The converted value, which the messages print for a non-array.
    pub value: fn(T) -> Value,
}

/// stdlib's `validate_integer`/`validate_numeric(value[, max[, min]])`:
/// the value (or every element of an array) converted from its Ruby
/// `to_s`, within the bounds;
/// an empty maximum is none when a minimum is given.
pub(crate) fn validate_bounded<T: PartialOrd + Copy>(
    c: &Call<'_>,
    b: &Bounded<T>,
) -> EvalResult<Value> {
    let (name, noun) = (b.name, b.noun);
    let n = c.args.len();
    if n == 0 || n > 3 {
        return Err(plain(format!(
            "{name}(): Wrong number of arguments; must be 1, 2 or 3, got {n}"
        ))
        .into());
    }
    let mut max = None;
    if n > 1 {
        // The Ruby turns the maximum into a String before converting it.
        let ms = to_s(&c.arg(1));
        if !(n > 2 && ms.is_empty()) {
            max = Some((b.parse)(&Value::Str(ms.clone())).ok_or_else(|| {
                plain(format!(
                    "{name}(): Expected second argument to be unset or {noun}, got {ms}:String"
                ))
            })?);
        }
    }
    let mut min = None;
    if n > 2 {
        let m = c.arg(2);
        min = Some((b.parse)(&m).ok_or_else(|| {
            plain(format!(
                "{name}(): Expected third argument to be unset or {noun}, got {}:{}",
                to_s(&m),
                ruby_class(&m)
            ))
        })?);
    }
    if let (Some(lo), Some(hi)) = (min, max)
        && lo > hi
    {
        return Err(plain(format!(
            "{name}(): Expected second argument to be larger than third argument, got {} < {}",
            (b.show)(hi),
            (b.show)(lo)
        ))
        .into());
    }
    // The messages print `input`, which the Ruby rebinds to the converted
    // value when it is not an Array.
    let check = |num: T, shown: &Value| -> EvalResult<()> {
        let shown = inspect(shown);
        if let Some(hi) = max
            && num > hi
        {
            return Err(plain(format!(
                "{name}(): Expected {shown} to be smaller or equal to {}, got {shown}.",
                (b.show)(hi)
            ))
            .into());
        }
        if let Some(lo) = min
            && num < lo
        {
            return Err(plain(format!(
                "{name}(): Expected {shown} to be greater or equal to {}, got {shown}.",
                (b.show)(lo)
            ))
            .into());
        }
        Ok(())
    };
    let input = c.arg(0);
    match &input {
        Value::Array(items) => {
            for (pos, item) in items.iter().enumerate() {
                let num = match item {
                    Value::Hash(_) => None,
                    other => (b.parse)(other),
                };
                let Some(num) = num else {
                    return Err(plain(format!(
                        "{name}(): Expected element at array position {pos} to be {noun}, got {}",
                        ruby_class(item)
                    ))
                    .into());
                };
                check(num, &input)?;
            }
        }
        // Both Ruby bodies name validate_integer here.
        Value::Hash(_) => {
            return Err(plain(format!(
                "validate_integer(): Expected first argument to be {noun} or Array, got Hash"
            ))
            .into());
        }
        other => {
            let Some(num) = (b.parse)(other) else {
                return Err(plain(format!(
                    "{name}(): Expected first argument to be {noun} or Array, got {}",
                    ruby_class(other)
                ))
                .into());
            };
            check(num, &(b.value)(num))?;
        }
    }
    Ok(Value::Undef)
}

/// A validator that checks every argument (`validate_bool`,
/// `validate_array`, `validate_hash`): `ok` says which pass, `describe`
/// words the first that does not.
fn validate_each(
    c: &Call<'_>,
    name: &str,
    ok: fn(&Value) -> bool,
    describe: fn(&Value) -> String,
) -> EvalResult<Value> {
    if c.args.is_empty() {
        return Err(plain(format!(
            "{name}(): wrong number of arguments (0; must be > 0)"
        ))
        .into());
    }
    match c.args.iter().find(|a| !ok(a)) {
        Some(bad) => Err(plain(describe(bad)).into()),
        None => Ok(Value::Undef),
    }
}

fn validate_bool(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    validate_each(
        &c,
        "validate_bool",
        |v| matches!(v, Value::Bool(_)),
        |v| {
            format!(
                "{} is not a boolean.  It looks to be a {}",
                inspect(v),
                ruby_class(v)
            )
        },
    )
}

fn validate_array(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    validate_each(
        &c,
        "validate_array",
        |v| matches!(v, Value::Array(_)),
        |v| {
            format!(
                "{} is not an Array.  It looks to be a {}",
                inspect(v),
                ruby_class(v)
            )
        },
    )
}

fn validate_hash(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    validate_each(
        &c,
        "validate_hash",
        |v| matches!(v, Value::Hash(_)),
        |v| {
            format!(
                "{} is not a Hash.  It looks to be a {}",
                inspect(v),
                ruby_class(v)
            )
        },
    )
}

fn bool2num(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let Some(v) = c.args.first() else {
        return Err(plain("bool2num(): Wrong number of arguments given (0 for 1)").into());
    };
    let b = match v {
        Value::Bool(b) => *b,
        Value::Str(s) => crate::lang::functions::stdlib_strings::str2bool_word(s)?,
        _ => return Err(plain("str2bool(): Requires string to work with").into()),
    };
    Ok(Value::Int(i64::from(b)))
}

fn is_domain_name(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    if c.args.len() != 1 {
        return Err(plain(format!(
            "is_domain_name(): Wrong number of arguments given {} for 1",
            c.args.len()
        ))
        .into());
    }
    let Value::Str(domain) = c.arg(0) else {
        return Ok(Value::Bool(false));
    };
    Ok(Value::Bool(domain_name_ok(&domain)))
}

/// stdlib's `is_domain_name` test of a string: labels of letters,
/// digits and inner hyphens, an alphabetic top level, 255 characters at
/// most (`.` alone and a trailing dot allowed).
pub(crate) fn domain_name_ok(domain: &str) -> bool {
    if domain == "." {
        return true;
    }
    let d = domain.strip_suffix('.').unwrap_or(domain);
    if d.is_empty() || d.len() > 255 {
        return false;
    }
    if d.contains('.') {
        let tld = d.rsplit('.').next().unwrap_or("");
        if tld.is_empty() || !tld.chars().all(|ch| ch.is_ascii_alphabetic()) {
            return false;
        }
    }
    // Ruby's split drops trailing empty fields.
    let mut labels: Vec<&str> = d.split('.').collect();
    while labels.last() == Some(&"") {
        labels.pop();
    }
    labels.iter().all(|l| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '-')
    })
}

fn shellquote(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    fn flatten(vs: &[Value], out: &mut Vec<String>) {
        for v in vs {
            match v {
                Value::Array(a) => flatten(a, out),
                other => out.push(other.to_s()),
            }
        }
    }
    let safe = |ch: char| ch.is_ascii_alphanumeric() || "@%_+=:,./-".contains(ch);
    let dangerous = |ch: char| "!\"`$\\".contains(ch);
    let mut words = Vec::new();
    flatten(&c.args, &mut words);
    let quoted: Vec<String> = words
        .into_iter()
        .map(|w| {
            if !w.is_empty() && w.chars().all(safe) {
                w
            } else if !w.chars().any(dangerous) {
                format!("\"{w}\"")
            } else if !w.contains('\'') {
                format!("'{w}'")
            } else {
                let mut r = String::from("\"");
                for ch in w.chars() {
                    if dangerous(ch) {
                        r.push('\\');
                    }
                    r.push(ch);
                }
                r.push('"');
                r
            }
        })
        .collect();
    Ok(Value::Str(quoted.join(" ")))
}

/// The translate module's `translate`: the message itself (no catalogs
/// are translated), `%{key}` replaced from the optional hash.
fn translate(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let mut msg = c.arg(0).to_s();
    if let Value::Hash(h) = c.arg(1) {
        for (k, v) in &h {
            msg = msg.replace(&format!("%{{{}}}", k.to_s()), &v.to_s());
        }
    }
    Ok(Value::Str(msg))
}

/// stdlib's `base64(action, string[, method])` (3.x: undef arrives as
/// `''`), with Ruby's Base64 results and errors.
fn base64(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE};
    let n = c.args.len();
    if n < 2 {
        return Err(plain(format!(
            "base64(): Wrong number of arguments ({n}; must be >= 2)"
        ))
        .into());
    }
    let action = arg_3x(&c.arg(0));
    let Value::Str(action) = action else {
        return Err(
            plain("base64(): the first argument must be one of 'encode' or 'decode'").into(),
        );
    };
    if action != "encode" && action != "decode" {
        return Err(
            plain("base64(): the first argument must be one of 'encode' or 'decode'").into(),
        );
    }
    let Value::Str(text) = arg_3x(&c.arg(1)) else {
        return Err(plain("base64(): the second argument must be a string to base64").into());
    };
    let method = if n <= 2 {
        "default".to_string()
    } else {
        match arg_3x(&c.arg(2)) {
            Value::Str(m) => m,
            _ => String::new(),
        }
    };
    if !["default", "strict", "urlsafe"].contains(&method.as_str()) {
        return Err(plain(
            "base64(): the third argument must be one of 'default', 'strict', or 'urlsafe'",
        )
        .into());
    }
    let bytes = text.as_bytes();
    if action == "encode" {
        return Ok(Value::Str(match method.as_str() {
            "strict" => STANDARD.encode(bytes),
            "urlsafe" => URL_SAFE.encode(bytes),
            _ => STANDARD
                .encode(bytes)
                .as_bytes()
                .chunks(60)
                .map(|l| format!("{}\n", String::from_utf8_lossy(l)))
                .collect(),
        }));
    }
    let decoded = match method.as_str() {
        "default" => Ok(lenient_decode64(bytes)),
        "strict" => STANDARD.decode(bytes),
        _ => {
            // Ruby pads an unpadded URL-safe string before decoding strictly.
            let mut t = text.replace('-', "+").replace('_', "/");
            if !text.ends_with('=') && text.len() % 4 != 0 {
                t.push_str(&"=".repeat(4 - text.len() % 4));
            }
            STANDARD.decode(t.as_bytes())
        }
    };
    match decoded {
        Ok(d) => match String::from_utf8(d) {
            Ok(text) => Ok(Value::Str(text)),
            // Puppet keeps the bytes and fails when it writes the catalog
            // ("source sequence is illegal/malformed utf-8"); ferry's
            // strings are text, so it fails here, naming the call.
            Err(_) => Err(plain(
                "base64(): the decoded bytes are not UTF-8 text, which a catalog cannot \
                 hold (Puppet fails writing the catalog: source sequence is \
                 illegal/malformed utf-8)",
            )
            .into()),
        },
        Err(_) => Err(plain("invalid base64").into()),
    }
}

/// Ruby's `unpack1('m')`: characters outside the alphabet are skipped, a
/// `=` in the third or fourth place of a group ends the data, and a last
/// group of two or three characters gives one or two bytes.
fn lenient_decode64(s: &[u8]) -> Vec<u8> {
    let value = |b: u8| -> Option<u32> {
        match b {
            b'A'..=b'Z' => Some(u32::from(b - b'A')),
            b'a'..=b'z' => Some(u32::from(b - b'a') + 26),
            b'0'..=b'9' => Some(u32::from(b - b'0') + 52),
            b'+' => Some(62),
            b'/' => Some(63),
            _ => None,
        }
    };
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let mut i = 0;
    // The next alphabet character from `i`; `stop_at_pad`: a `=` ends it.
    let next = |i: &mut usize, stop_at_pad: bool| -> Option<u32> {
        while let Some(&b) = s.get(*i) {
            if let Some(v) = value(b) {
                *i += 1;
                return Some(v);
            }
            if stop_at_pad && b == b'=' {
                return None;
            }
            *i += 1;
        }
        None
    };
    while let Some(a) = next(&mut i, false) {
        let Some(b) = next(&mut i, false) else { break };
        let Some(c) = next(&mut i, true) else {
            out.push(((a << 2) | (b >> 4)) as u8);
            break;
        };
        let Some(d) = next(&mut i, true) else {
            out.push(((a << 2) | (b >> 4)) as u8);
            out.push(((b << 4) | (c >> 2)) as u8);
            break;
        };
        out.push(((a << 2) | (b >> 4)) as u8);
        out.push(((b << 4) | (c >> 2)) as u8);
        out.push(((c << 6) | d) as u8);
    }
    out
}
