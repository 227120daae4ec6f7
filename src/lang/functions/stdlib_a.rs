//! More of Debian's stdlib (issue 14), with the argument checks and
//! messages of its Ruby sources: the numeric helpers Puppet 7's core now
//! provides in their place (`floor`, `ceiling`, `round`, `camelcase`, which
//! win over stdlib's 3.x copies), and stdlib's 3.x `num2bool`, `any2bool`,
//! `dos2unix`, `regexpescape`, `difference`, `intersection`,
//! `join_keys_to_values`, `delete_values`, `clamp`, `is_float`,
//! `convert_base`, `is_mac_address`, `is_email_address`,
//! `is_ipv4_address`, `is_ipv6_address` and `enclose_ipv6` (Ruby's
//! `IPAddr` rules), and its 4.x `batch_escape`, `powershell_escape`,
//! `is_a` and `os_version_gte`; `delete_regex`, `fqdn_uuid` (SHA-1 name
//! UUIDs) and the interface-fact tests `has_interface_with`,
//! `has_ip_address` and `has_ip_network`; `loadjson` and `loadyaml` of
//! local files, `parsepson`, `load_module_metadata` and
//! `is_function_available`.
//! Arguments of the 3.x functions arrive as Puppet passes them to Ruby: a
//! top-level undef is `''`.

use crate::lang::error::plain;
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::functions::stdlib::{arg_3x, arity, ruby_class};
use crate::lang::functions::{Builder, Family, any, sig, string};
use crate::lang::template::erb::methods::regexp_escape;
use crate::lang::values::types::PType;
use crate::lang::values::value::{Value, fmt_float, key_equal};

pub fn register(b: &mut Builder) {
    let f = Family::Stdlib;
    let rest = |ret| sig(ret).rest("args", any());
    let num_or_str = || PType::Variant(vec![PType::Numeric, string()]);
    b.add(
        &["floor"],
        Family::Numbers,
        sig("Integer").req("val", num_or_str()),
        floor,
    );
    b.add(
        &["ceiling"],
        Family::Numbers,
        sig("Integer").req("val", num_or_str()),
        ceiling,
    );
    b.add(
        &["round"],
        Family::Numbers,
        sig("Integer").req("val", PType::Numeric),
        round,
    );
    let camel = PType::Variant(vec![
        PType::Numeric,
        string(),
        PType::Array(
            Box::new(PType::Variant(vec![string(), PType::Numeric])),
            0,
            i64::MAX,
        ),
    ]);
    b.add(
        &["camelcase"],
        Family::Strings,
        sig("Any").req("arg", camel),
        camelcase,
    );
    b.add(&["num2bool"], f, rest("Boolean"), num2bool);
    b.add(&["any2bool"], f, rest("Boolean"), any2bool);
    b.add(&["dos2unix"], f, rest("String"), dos2unix);
    b.add(&["regexpescape"], f, rest("Any"), regexpescape);
    b.add(&["difference"], f, rest("Array"), difference);
    b.add(&["intersection"], f, rest("Array"), intersection);
    b.add(
        &["join_keys_to_values"],
        f,
        rest("Array"),
        join_keys_to_values,
    );
    b.add(&["delete_values"], f, rest("Hash"), delete_values);
    b.add(&["clamp"], f, rest("Integer"), clamp);
    b.add(&["is_float"], f, rest("Boolean"), is_float);
    b.add(
        &["batch_escape"],
        f,
        sig("String").req("string", any()),
        batch_escape,
    );
    let ps = sig("String").req("string", any());
    b.add(&["powershell_escape"], f, ps, powershell_escape);
    b.add(&["convert_base"], f, rest("String"), convert_base);
    b.add(&["is_mac_address"], f, rest("Boolean"), is_mac_address);
    b.add(&["is_email_address"], f, rest("Boolean"), is_email_address);
    b.add(&["is_ipv4_address"], f, rest("Boolean"), is_ipv4_address);
    b.add(&["is_ipv6_address"], f, rest("Boolean"), is_ipv6_address);
    b.add(&["enclose_ipv6"], f, rest("Array"), enclose_ipv6);
    let is_a_sig = sig("Boolean")
        .req("value", any())
        .req("type", PType::Type(None));
    b.add(&["is_a"], f, is_a_sig, is_a);
    let s1 = || PType::String(1, i64::MAX);
    let os_sig = sig("Boolean").req("os", s1()).req("version", s1());
    b.add(&["os_version_gte"], f, os_sig, os_version_gte);
    b.add(&["delete_regex"], f, rest("Any"), delete_regex);
    b.add(&["fqdn_uuid"], f, rest("String"), fqdn_uuid);
    b.add(
        &["has_interface_with"],
        f,
        rest("Boolean"),
        has_interface_with,
    );
    b.add(&["has_ip_address"], f, rest("Boolean"), has_ip_address);
    b.add(&["has_ip_network"], f, rest("Boolean"), has_ip_network);
    b.add(&["loadjson"], f, rest("Any"), loadjson);
    b.add(&["loadyaml"], f, rest("Any"), loadyaml);
    let pson = sig("Any")
        .req("pson_string", PType::String(1, i64::MAX))
        .opt("default", any());
    b.add(&["parsepson"], f, pson, parsepson);
    b.add(
        &["load_module_metadata"],
        f,
        rest("Any"),
        load_module_metadata,
    );
    let ifa = rest("Boolean");
    b.add(&["is_function_available"], f, ifa, is_function_available);
}

/// Ruby's `Float(string)`: optional blanks around, a sign, decimal digits
/// with single underscores between them (none before a fraction), a fraction and an exponent (or a
/// 0x hex integer); `None` where Ruby raises.
pub(crate) fn ruby_float(s: &str) -> Option<f64> {
    let t = s.trim_matches(|c: char| c.is_ascii_whitespace());
    let (neg, body) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let sign = if neg { -1.0 } else { 1.0 };
    if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        return i64::from_str_radix(h, 16).ok().map(|v| sign * v as f64);
    }
    let bytes = body.as_bytes();
    let ok_underscores = bytes.iter().enumerate().all(|(i, &c)| {
        c != b'_'
            || (i > 0
                && i + 1 < bytes.len()
                && bytes[i - 1].is_ascii_digit()
                && bytes[i + 1].is_ascii_digit())
    });
    let clean = body.replace('_', "");
    let mut parts = clean.splitn(2, ['e', 'E']);
    let mantissa = parts.next().unwrap_or("");
    let exponent = parts.next();
    let (int, frac) = match mantissa.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (mantissa, None),
    };
    let digits = |d: &str| !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit());
    let exp_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        digits(e)
    });
    // Ruby reads `.5` (no integer part) but not `5.` (no fraction).
    let int_ok = digits(int) || (int.is_empty() && frac.is_some_and(digits));
    if !ok_underscores || !int_ok || frac.is_some_and(|f| !digits(f)) || !exp_ok {
        return None;
    }
    clean.parse::<f64>().ok().map(|v| sign * v)
}

/// Ruby's `Float#to_i` (truncation), saturating at the i64 range.
fn truncate(f: f64) -> i64 {
    f.trunc() as i64
}

/// Ruby's `String#to_i`: the leading decimal integer, 0 when none.
fn string_to_i(s: &str) -> i64 {
    let t = s.trim_start();
    let (neg, body) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let mut n: i64 = 0;
    let mut prev_digit = false;
    for c in body.chars() {
        match c {
            '0'..='9' => {
                n = n
                    .saturating_mul(10)
                    .saturating_add(i64::from(c as u8 - b'0'));
                prev_digit = true;
            }
            '_' if prev_digit => prev_digit = false,
            _ => break,
        }
    }
    if neg { -n } else { n }
}

/// `floor` and `ceiling` of Puppet's core: numbers directly, strings
/// through Ruby's `Float()`.
fn rounded(c: &Call<'_>, name: &str, op: fn(f64) -> f64) -> EvalResult<Value> {
    let x = match c.arg(0) {
        Value::Int(i) => return Ok(Value::Int(i)),
        Value::Float(x) => x,
        v => ruby_float(&v.to_s()).ok_or_else(|| {
            plain(format!(
                "{name}(): cannot convert given value to a floating point value."
            ))
        })?,
    };
    Ok(Value::Int(truncate(op(x))))
}

fn floor(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    rounded(&c, "floor", f64::floor)
}

fn ceiling(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    rounded(&c, "ceiling", f64::ceil)
}

fn round(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    Ok(Value::Int(match c.arg(0) {
        Value::Float(x) if x > 0.0 => truncate(x + 0.5),
        Value::Float(x) => truncate(x - 0.5),
        Value::Int(i) => i,
        _ => 0,
    }))
}

/// Ruby's `String#capitalize` on each `_`-separated word, joined.
fn camel_word(s: &str) -> String {
    s.split('_')
        .map(|w| {
            let mut cs = w.chars();
            match cs.next() {
                Some(first) => first
                    .to_uppercase()
                    .chain(cs.flat_map(char::to_lowercase))
                    .collect(),
                None => String::new(),
            }
        })
        .collect()
}

fn camelcase(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let one = |v: Value| match v {
        Value::Str(s) => Value::Str(camel_word(&s)),
        other => other,
    };
    Ok(match c.arg(0) {
        Value::Array(a) => Value::Array(a.into_iter().map(one).collect()),
        v => one(v),
    })
}

/// stdlib's `num2bool` on one (3.x) value.
fn num_to_bool(v: &Value) -> EvalResult<bool> {
    let n = match v {
        Value::Int(i) => *i,
        Value::Float(x) => truncate(*x),
        Value::Str(s) => truncate(ruby_float(s).ok_or_else(|| {
            plain(format!(
                "num2bool(): '{s}' does not look like a number: invalid value for Float(): {}",
                crate::lang::template::erb::value::inspect(v)
            ))
        })?),
        other => string_to_i(&other.to_s()),
    };
    Ok(n > 0)
}

fn num2bool(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    arity(&c, "num2bool", 1)?;
    Ok(Value::Bool(num_to_bool(&arg_3x(&c.arg(0)))?))
}

fn any2bool(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    if c.args.is_empty() {
        return Err(plain("any2bool(): Wrong number of arguments given (0 for 1)").into());
    }
    let v = arg_3x(&c.arg(0));
    Ok(Value::Bool(match &v {
        Value::Bool(b) => *b,
        Value::Int(_) | Value::Float(_) => num_to_bool(&v)?,
        Value::Str(s) if ruby_float(s).is_some() => num_to_bool(&v)?,
        Value::Str(s) => crate::lang::functions::stdlib_strings::str2bool_word(s)?,
        _ => true,
    }))
}

fn dos2unix(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    arity(&c, "dos2unix", 1)?;
    match c.arg(0) {
        Value::Str(s) => Ok(Value::Str(s.replace("\r\n", "\n"))),
        _ => Err(plain("dos2unix(): Requires string as argument").into()),
    }
}

fn regexpescape(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    if c.args.is_empty() {
        return Err(plain("regexpescape(): Wrong number of arguments given (0 for 1)").into());
    }
    let one = |v: Value| match v {
        Value::Str(s) => Value::Str(regexp_escape(&s)),
        other => other,
    };
    match arg_3x(&c.arg(0)) {
        Value::Array(a) => Ok(Value::Array(a.into_iter().map(one).collect())),
        s @ Value::Str(_) => Ok(one(s)),
        _ => Err(plain("regexpescape(): Requires either array or string to work with").into()),
    }
}

/// Ruby's `eql?`, which `Array#-`, `Array#&` and `Hash#delete_if` with
/// `==` on strings use: strings case-sensitively, an Integer never equal
/// to a Float, arrays element by element.
fn ruby_eql(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Int(_), Value::Float(_)) | (Value::Float(_), Value::Int(_)) => false,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| ruby_eql(p, q))
        }
        _ => key_equal(a, b),
    }
}

/// The two arrays of `difference` and `intersection`, or `None`.
fn two_arrays(c: &Call<'_>, name: &str) -> EvalResult<Option<(Vec<Value>, Vec<Value>)>> {
    arity(c, name, 2)?;
    Ok(match (arg_3x(&c.arg(0)), arg_3x(&c.arg(1))) {
        (Value::Array(a), Value::Array(b)) => Some((a, b)),
        _ => None,
    })
}

fn difference(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let Some((a, b)) = two_arrays(&c, "difference")? else {
        return Err(plain("difference(): Requires 2 arrays").into());
    };
    Ok(Value::Array(
        a.into_iter()
            .filter(|x| !b.iter().any(|y| ruby_eql(x, y)))
            .collect(),
    ))
}

fn intersection(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let Some((a, b)) = two_arrays(&c, "intersection")? else {
        return Err(plain(format!(
            "intersection(): Requires 2 arrays, got {} and {}",
            ruby_class(&arg_3x(&c.arg(0))),
            ruby_class(&arg_3x(&c.arg(1)))
        ))
        .into());
    };
    let mut out: Vec<Value> = Vec::new();
    for x in a {
        if b.iter().any(|y| ruby_eql(&x, y)) && !out.iter().any(|y| ruby_eql(&x, y)) {
            out.push(x);
        }
    }
    Ok(Value::Array(out))
}

/// Ruby's `String(v)` for a value a 3.x function received.
fn ruby_string(v: &Value) -> String {
    match v {
        Value::Float(f) => fmt_float(*f),
        other => other.to_s(),
    }
}

fn join_keys_to_values(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    if c.args.len() != 2 {
        return Err(plain(format!(
            "join_keys_to_values(): Takes exactly two arguments, but {} given.",
            c.args.len()
        ))
        .into());
    }
    let Value::Hash(h) = arg_3x(&c.arg(0)) else {
        return Err(plain(format!(
            "join_keys_to_values(): The first argument must be a hash, but a {} was given.",
            ruby_class(&arg_3x(&c.arg(0)))
        ))
        .into());
    };
    let Value::Str(sep) = arg_3x(&c.arg(1)) else {
        return Err(plain(format!(
            "join_keys_to_values(): The second argument must be a string, but a {} was given.",
            ruby_class(&arg_3x(&c.arg(1)))
        ))
        .into());
    };
    let mut out = Vec::new();
    for (k, v) in &h {
        let key = ruby_string(k);
        match v {
            Value::Array(items) => {
                for i in items {
                    out.push(Value::Str(format!("{key}{sep}{}", ruby_string(i))));
                }
            }
            v if ruby_string(v) == "undef" => out.push(Value::Str(key)),
            v => out.push(Value::Str(format!("{key}{sep}{}", ruby_string(v)))),
        }
    }
    Ok(Value::Array(out))
}

fn delete_values(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    if c.args.len() != 2 {
        return Err(plain(format!(
            "delete_values(): Wrong number of arguments given ({} of 2)",
            c.args.len()
        ))
        .into());
    }
    let item = arg_3x(&c.arg(1));
    match arg_3x(&c.arg(0)) {
        Value::Hash(h) => Ok(Value::Hash(
            h.into_iter()
                .filter(|(_, v)| !key_equal(v, &item))
                .collect(),
        )),
        other => Err(plain(format!(
            "delete_values(): First argument must be a Hash. Given an argument of class {}.",
            ruby_class(&other)
        ))
        .into()),
    }
}

/// Ruby's `Array#flatten`.
fn flatten(v: Value, out: &mut Vec<Value>) {
    match v {
        Value::Array(a) => a.into_iter().for_each(|x| flatten(x, out)),
        other => out.push(other),
    }
}

fn clamp(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let mut vals = Vec::new();
    for a in &c.args {
        flatten(arg_3x(a), &mut vals);
    }
    if vals.len() != 3 {
        return Err(plain("clamp(): Wrong number of arguments, need three to clamp").into());
    }
    let mut nums = Vec::with_capacity(3);
    for v in &vals {
        nums.push(match v {
            Value::Str(s) if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) => {
                return Err(
                    plain(format!("clamp(): Required explicit numeric ({s}:String)")).into(),
                );
            }
            Value::Str(s) => string_to_i(s),
            Value::Hash(_) => {
                return Err(plain(format!(
                    "clamp(): The Hash type is not allowed ({})",
                    crate::lang::template::erb::value::inspect(v)
                ))
                .into());
            }
            Value::Int(i) => *i,
            Value::Float(x) => truncate(*x),
            other => {
                return Err(plain(format!(
                    "clamp(): cannot convert {} to an Integer",
                    ruby_class(other)
                ))
                .into());
            }
        });
    }
    nums.sort_unstable();
    Ok(Value::Int(nums[1]))
}

fn is_float(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    if c.args.len() != 1 {
        return Err(plain(format!(
            "is_float(): Wrong number of arguments given {} for 1",
            c.args.len()
        ))
        .into());
    }
    Ok(Value::Bool(match arg_3x(&c.arg(0)) {
        Value::Float(_) => true,
        Value::Str(s) => {
            let to_f = ruby_float_prefix(&s);
            s == fmt_float(to_f)
        }
        _ => false,
    }))
}

/// Ruby's `String#to_f`: the longest leading float, 0.0 when none.
fn ruby_float_prefix(s: &str) -> f64 {
    let t = s.trim_start();
    let end = t
        .char_indices()
        .map(|(i, ch)| i + ch.len_utf8())
        .rfind(|&e| ruby_float(&t[..e]).is_some() && !t[..e].contains(['x', 'X', '_']))
        .unwrap_or(0);
    ruby_float(&t[..end]).unwrap_or(0.0)
}

/// stdlib's `batch_escape`: a cmd.exe argument in double quotes.
fn batch_escape(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let mut out = String::from("\"");
    for ch in ruby_string(&c.arg(0)).chars() {
        match ch {
            '"' => out.push_str("\"\""),
            '$' | '\\' => {
                out.push('\\');
                out.push(ch);
            }
            ch => out.push(ch),
        }
    }
    out.push('"');
    Ok(Value::Str(out))
}

/// stdlib's `powershell_escape`: PowerShell's backtick before its
/// special characters.
fn powershell_escape(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let mut out = String::new();
    for ch in ruby_string(&c.arg(0)).chars() {
        match ch {
            ' ' | '\'' | '`' | '|' | '\n' | '$' => {
                out.push('`');
                out.push(ch);
            }
            '"' => out.push_str("\\`\""),
            ch => out.push(ch),
        }
    }
    Ok(Value::Str(out))
}

fn convert_base(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    arity(&c, "convert_base", 2)?;
    let digits_msg = "convert_base(): First argument must be an integer or a string corresponding to an integer in base 10";
    let mut nums = [0i64; 2];
    for (i, which) in ["First", "Second"].iter().enumerate() {
        nums[i] = match arg_3x(&c.arg(i)) {
            Value::Int(n) => n,
            Value::Str(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
                string_to_i(&s)
            }
            Value::Str(_) => return Err(plain(digits_msg).into()),
            _ => {
                return Err(plain(format!(
                    "convert_base(): {which} argument must be either a string or an integer"
                ))
                .into());
            }
        };
    }
    let [mut n, base] = nums;
    if !(2..=36).contains(&base) {
        return Err(plain(
            "convert_base(): base must be at least 2 and must not be greater than 36",
        )
        .into());
    }
    let neg = n < 0;
    let mut out = Vec::new();
    loop {
        let d = (n % base).unsigned_abs() as u32;
        out.push(char::from_digit(d, base as u32).unwrap_or('0'));
        n /= base;
        if n == 0 {
            break;
        }
    }
    if neg {
        out.push('-');
    }
    Ok(Value::Str(out.into_iter().rev().collect()))
}

/// The single-argument count check of stdlib's `is_*` predicates.
fn one_arg(c: &Call<'_>, name: &str) -> EvalResult<Value> {
    if c.args.len() != 1 {
        return Err(plain(format!(
            "{name}(): Wrong number of arguments given {} for 1",
            c.args.len()
        ))
        .into());
    }
    Ok(arg_3x(&c.arg(0)))
}

fn is_mac_address(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let Value::Str(mac) = one_arg(&c, "is_mac_address")? else {
        return Err(plain(format!(
            "no implicit conversion of {} into String",
            ruby_class(&c.arg(0))
        ))
        .into());
    };
    let groups: Vec<&str> = mac.split(':').collect();
    let ok = matches!(groups.len(), 6 | 20)
        && groups
            .iter()
            .all(|g| (1..=2).contains(&g.len()) && g.bytes().all(|b| b.is_ascii_hexdigit()));
    Ok(Value::Bool(ok))
}

fn is_email_address(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let Value::Str(s) = one_arg(&c, "is_email_address")? else {
        return Ok(Value::Bool(false));
    };
    let re = crate::lang::values::regex::RubyRegex::new(
        r"\A([\w+\-].?)+@[a-z\d\-]+(\.[a-z]+)*\.[a-z]+\z",
    )?;
    Ok(Value::Bool(re.is_match(&s)))
}

/// Ruby's `IPAddr.new(string)`: an address, optionally `/prefix` or
/// `/mask`, the host bits cleared; `None` where Ruby raises.
fn ip_addr(s: &str) -> Option<std::net::IpAddr> {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    let (addr, mask) = match s.split_once('/') {
        Some((a, m)) => (a, Some(m)),
        None => (s, None),
    };
    let addr = addr
        .strip_prefix('[')
        .and_then(|a| a.strip_suffix(']'))
        .unwrap_or(addr);
    let ip: IpAddr = addr.parse().ok()?;
    let bits: u32 = if ip.is_ipv4() { 32 } else { 128 };
    let prefix = match mask {
        None => bits,
        Some(m) if !m.is_empty() && m.bytes().all(|b| b.is_ascii_digit()) => {
            m.parse::<u32>().ok().filter(|p| *p <= bits)?
        }
        Some(m) => match (ip, m.parse::<IpAddr>().ok()?) {
            (IpAddr::V4(_), IpAddr::V4(mk)) => u32::from(mk).count_ones(),
            (IpAddr::V6(_), IpAddr::V6(mk)) => u128::from(mk).count_ones(),
            _ => return None,
        },
    };
    Some(match ip {
        IpAddr::V4(a) => {
            let keep = u32::MAX.checked_shl(32 - prefix).unwrap_or(0);
            IpAddr::V4(Ipv4Addr::from(u32::from(a) & keep))
        }
        IpAddr::V6(a) => {
            let keep = u128::MAX.checked_shl(128 - prefix).unwrap_or(0);
            IpAddr::V6(Ipv6Addr::from(u128::from(a) & keep))
        }
    })
}

fn is_ipv4_address(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let v = one_arg(&c, "is_ipv4_address")?;
    let ip = match &v {
        Value::Str(s) => ip_addr(s),
        _ => None,
    };
    Ok(Value::Bool(ip.is_some_and(|ip| ip.is_ipv4())))
}

fn is_ipv6_address(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let v = one_arg(&c, "is_ipv6_address")?;
    let ip = match &v {
        Value::Str(s) => ip_addr(s),
        _ => None,
    };
    Ok(Value::Bool(ip.is_some_and(|ip| ip.is_ipv6())))
}

fn enclose_ipv6(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let v = one_arg(&c, "enclose_ipv6")?;
    if !matches!(v, Value::Str(_) | Value::Array(_)) {
        return Err(plain(format!(
            "enclose_ipv6(): Wrong argument type given {} expected String or Array",
            ruby_class(&v)
        ))
        .into());
    }
    let mut items = Vec::new();
    flatten(v, &mut items);
    let mut out: Vec<Value> = Vec::new();
    for item in items.into_iter().filter(|i| !i.is_undef()) {
        let val = match &item {
            Value::Str(s) if s == "*" => item.clone(),
            Value::Str(s) => match ip_addr(s) {
                Some(std::net::IpAddr::V6(ip)) => Value::Str(format!("[{ip}]")),
                Some(_) => item.clone(),
                None => {
                    return Err(plain(format!(
                        "enclose_ipv6(): Wrong argument given {s} is not an ip address."
                    ))
                    .into());
                }
            },
            other => {
                return Err(plain(format!(
                    "enclose_ipv6(): Wrong argument given {} is not an ip address.",
                    ruby_string(other)
                ))
                .into());
            }
        };
        if !out.iter().any(|o| ruby_eql(o, &val)) {
            out.push(val);
        }
    }
    Ok(Value::Array(out))
}

fn is_a(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let Value::Type(t) = c.arg(1) else {
        return Ok(Value::Bool(false));
    };
    Ok(Value::Bool(crate::lang::values::types::is_instance(
        &t,
        &c.arg(0),
    )))
}

/// stdlib's `os_version_gte`: the node's `operatingsystem` fact is `os`
/// and its `operatingsystemmajrelease` at least `version`.
fn os_version_gte(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let fact = |name: &str| match &ev.facts {
        Value::Hash(h) => crate::lang::values::value::hash_get_str(h, name).cloned(),
        _ => None,
    };
    let same_os = matches!(fact("operatingsystem"), Some(Value::Str(s)) if s == c.str_arg(0));
    let release = fact("operatingsystemmajrelease").map(|v| v.to_s());
    Ok(Value::Bool(
        same_os
            && release.is_some_and(|r| {
                crate::lang::functions::strings::compare_versions(&r, &c.str_arg(1)) >= 0
            }),
    ))
}

fn delete_regex(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    if c.args.len() != 2 {
        return Err(plain(format!(
            "delete_regex(): Wrong number of arguments given {} for 2",
            c.args.len()
        ))
        .into());
    }
    let mut collection = arg_3x(&c.arg(0));
    let items = match arg_3x(&c.arg(1)) {
        Value::Array(a) => a,
        other => vec![other],
    };
    for item in items {
        let re = crate::lang::values::regex::RubyRegex::new(&format!(r"\b{}\b", item.to_s()))?;
        let hit = |v: &Value| matches!(v, Value::Str(s) if re.is_match(s));
        collection = match collection {
            Value::Array(a) => Value::Array(a.into_iter().filter(|v| !hit(v)).collect()),
            Value::Hash(h) => Value::Hash(h.into_iter().filter(|(k, _)| !hit(k)).collect()),
            other => {
                return Err(plain(format!(
                    "delete_regex(): First argument must be an Array, Hash, or String. Given an argument of class {}.",
                    ruby_class(&other)
                ))
                .into());
            }
        };
    }
    Ok(collection)
}

/// stdlib's `fqdn_uuid`: the RFC 4122 version 5 UUID of a name in the
/// DNS namespace.
fn fqdn_uuid(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    use sha1::{Digest, Sha1};
    match c.args.len() {
        0 => return Err(plain("fqdn_uuid: No arguments given").into()),
        1 => {}
        n => return Err(plain(format!("fqdn_uuid: Too many arguments given ({n})")).into()),
    }
    const DNS: [u8; 16] = [
        0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30,
        0xc8,
    ];
    let mut h = Sha1::new();
    h.update(DNS);
    h.update(ruby_string(&arg_3x(&c.arg(0))).as_bytes());
    let d = h.finalize();
    let mut b: Vec<u8> = d.iter().take(16).copied().collect();
    b[6] = (b[6] & 0x0f) | 0x50;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex =
        |r: std::ops::Range<usize>| b[r].iter().map(|x| format!("{x:02x}")).collect::<String>();
    Ok(Value::Str(format!(
        "{}-{}-{}-{}-{}",
        hex(0..4),
        hex(4..6),
        hex(6..8),
        hex(8..10),
        hex(10..16)
    )))
}

/// stdlib's `has_interface_with`: an interface named in the legacy
/// `interfaces` fact, or a `KIND` / `KIND_IFACE` fact equal to the value.
fn interface_with(ev: &Evaluator<'_>, name: &str, args: &[Value]) -> EvalResult<Value> {
    if args.is_empty() || args.len() > 2 {
        return Err(plain(format!(
            "{name}(): Wrong number of arguments given ({} for 1 or 2)",
            args.len()
        ))
        .into());
    }
    let fact = |n: &str| match &ev.facts {
        Value::Hash(h) => crate::lang::values::value::hash_get_str(h, n).cloned(),
        _ => None,
    };
    let Some(interfaces) = fact("interfaces").filter(|v| !v.is_undef()) else {
        return Ok(Value::Bool(false));
    };
    let ifaces: Vec<String> = interfaces.to_s().split(',').map(str::to_string).collect();
    let value = arg_3x(&args[0]);
    let Some(wanted) = args.get(1).map(arg_3x) else {
        return Ok(Value::Bool(
            ifaces
                .iter()
                .any(|i| value.to_s() == *i && matches!(value, Value::Str(_))),
        ));
    };
    let kind = value.to_s();
    let same = |f: Option<Value>| f.is_some_and(|f| key_equal(&f, &wanted));
    Ok(Value::Bool(
        same(fact(&kind))
            || ifaces
                .iter()
                .any(|i| same(fact(&format!("{kind}_{}", i.to_lowercase())))),
    ))
}

fn has_interface_with(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    interface_with(ev, "has_interface_with", &c.args)
}

fn has_ip_address(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    arity(&c, "has_ip_address", 1)?;
    interface_with(
        ev,
        "has_interface_with",
        &[Value::str("ipaddress"), c.arg(0)],
    )
}

fn has_ip_network(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    arity(&c, "has_ip_network", 1)?;
    interface_with(ev, "has_interface_with", &[Value::str("network"), c.arg(0)])
}

/// stdlib's `loadjson` and `loadyaml` on the compiling machine: the data
/// of a local file, the default (second argument) when the file is
/// missing, holds nothing or false, or does not parse. URLs are refused:
/// ferry does not fetch from the network while compiling.
fn load_file(c: &Call<'_>, name: &str, parse: fn(&str) -> Option<Value>) -> EvalResult<Value> {
    if c.args.is_empty() {
        return Err(
            plain("Wrong number of arguments. 1 or 2 arguments should be provided.").into(),
        );
    }
    let path = c.str_arg(0);
    let default = c.arg(1);
    if path.starts_with("http://") || path.starts_with("https://") {
        return Err(plain(format!(
            "{name}(): loading from a URL is not supported by ferry; copy the file to the compiling machine"
        ))
        .into());
    }
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(default);
    };
    match parse(&text) {
        Some(Value::Undef | Value::Bool(false)) => Ok(default),
        Some(v) => Ok(v),
        None if !default.is_undef() => Ok(default),
        None => Err(plain(format!("{name}(): {path} does not parse")).into()),
    }
}

fn loadjson(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    load_file(&c, "loadjson", |t| {
        serde_json::from_str::<serde_json::Value>(t)
            .ok()
            .map(|j| Value::from_json(&j))
    })
}

fn loadyaml(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    load_file(&c, "loadyaml", |t| {
        if t.trim().is_empty() {
            return Some(Value::Undef);
        }
        serde_saphyr::from_str::<crate::lang::functions::native_modules::Ordered>(t)
            .ok()
            .map(|o| o.0)
    })
}

/// stdlib's `parsepson`: PSON text (JSON with an object or array at the
/// top) as data, the default when it does not parse.
fn parsepson(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let text = c.str_arg(0);
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(j) if j.is_object() || j.is_array() => Ok(Value::from_json(&j)),
        Ok(_) if c.args.len() > 1 => Ok(c.arg(1)),
        Ok(_) => Err(plain(format!("source '{text}' not in PSON!")).into()),
        Err(_) if c.args.len() > 1 => Ok(c.arg(1)),
        Err(e) => Err(plain(format!("parsepson(): {e}")).into()),
    }
}

/// stdlib's `load_module_metadata(name[, allow_empty])`: the module's
/// metadata.json, `{}` when it has none and that is allowed.
fn load_module_metadata(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    if !(1..=2).contains(&c.args.len()) {
        return Err(
            plain("load_module_metadata(): Wrong number of arguments, expects one or two").into(),
        );
    }
    let name = c.str_arg(0);
    let Some(dir) = crate::lang::loader::module_dir(ev.loader, &ev.modulepath, &name) else {
        return Err(plain(format!(
            "Could not find module {name} in environment {}",
            ev.environment
        ))
        .into());
    };
    let file = dir.join("metadata.json");
    match ev.loader.read(&file) {
        Ok(text) => serde_json::from_str::<serde_json::Value>(&text)
            .map(|j| Value::from_json(&j))
            .map_err(|e| plain(format!("load_module_metadata(): {}: {e}", file.display())).into()),
        Err(_) if c.args.get(1).map(arg_3x).is_some_and(|v| v.truthy()) => {
            Ok(Value::Hash(Vec::new()))
        }
        Err(_) => Err(plain(format!(
            "load_module_metadata(): No metadata.json file for module {name}"
        ))
        .into()),
    }
}

/// stdlib's `is_function_available`: whether a built-in function has the
/// name (a non-string is never one).
fn is_function_available(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let v = one_arg(&c, "is_function_available?")?;
    Ok(Value::Bool(matches!(&v, Value::Str(s)
        if crate::lang::functions::registry().get(s).is_some())))
}
