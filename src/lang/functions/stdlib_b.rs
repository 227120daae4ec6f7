//! More of Debian's stdlib, with the checks and messages of its Ruby
//! sources: the string helpers `swapcase`, `squeeze`, `unix2dos`,
//! `uriescape` (Ruby's RFC 2396 escaping), `shell_escape`, `shell_join` and `shell_split`
//! (Ruby's `Shellwords`), `stdlib::start_with`, `stdlib::end_with` and
//! `stdlib::extname`; the array `union`; `type_of` (the detailed inferred
//! type); the legacy validators `validate_slength`, `validate_domain_name`,
//! `validate_email_address` and `validate_ip(v4|v6)_address` (Ruby's
//! `IPAddr` forms: a prefix or mask after `/`, brackets); `seeded_rand`
//! (Ruby's MT19937 seeded by an MD5), `to_bytes`, `stdlib::xml_encode`,
//! `to_ruby`/`to_python` of Data values, and `shuffle` (an unseeded
//! MT19937, as Ruby's `rand`) `str2saltedsha512` (a random salt) and
//! `time` (the epoch seconds, whatever zone is named); `try_get_value` (a
//! path string walked as `dig44` walks it).

use crate::lang::error::plain;
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::functions::random::md5_rand;
use crate::lang::functions::stdlib::{arg_3x, arity, domain_name_ok, ruby_class, ruby_integer};
use crate::lang::functions::{Builder, Family, any, sig, string};
use crate::lang::template::erb::value::inspect;
use crate::lang::values::types::PType;
use crate::lang::values::value::Value;

pub fn register(b: &mut Builder) {
    let f = Family::Stdlib;
    let rest = |ret| sig(ret).rest("args", any());
    b.add(&["swapcase"], f, rest("Any"), swapcase);
    b.add(&["squeeze"], f, rest("Any"), squeeze);
    b.add(&["union"], f, rest("Array"), union);
    b.add(&["unix2dos"], f, rest("String"), unix2dos);
    b.add(&["uriescape"], f, rest("Any"), uriescape);
    b.add(&["shell_join"], f, rest("String"), shell_join);
    b.add(&["shell_split"], f, rest("Array"), shell_split);
    b.add(&["try_get_value"], f, rest("Any"), try_get_value);
    b.add(&["validate_slength"], f, rest("Any"), validate_slength);
    b.add(
        &["validate_domain_name"],
        f,
        rest("Any"),
        validate_domain_name,
    );
    b.add(
        &["validate_email_address"],
        f,
        rest("Any"),
        validate_email_address,
    );
    b.add(
        &["validate_ip_address"],
        f,
        rest("Any"),
        validate_ip_address,
    );
    b.add(
        &["validate_ipv4_address"],
        f,
        rest("Any"),
        validate_ip_address,
    );
    b.add(
        &["validate_ipv6_address"],
        f,
        rest("Any"),
        validate_ip_address,
    );
    b.add(&["seeded_rand"], f, rest("Integer"), seeded_rand);
    b.add(&["to_bytes"], f, rest("Any"), to_bytes);
    b.add(&["shuffle"], f, rest("Any"), shuffle);
    b.add(&["time"], f, rest("Integer"), time);
    b.add(&["str2saltedsha512"], f, rest("String"), str2saltedsha512);
    b.add(&["to_ruby"], f, sig("String").req("object", any()), to_ruby);
    b.add(
        &["to_python"],
        f,
        sig("String").req("object", any()),
        to_ruby,
    );
    b.add(
        &["stdlib::xml_encode"],
        f,
        sig("String")
            .req("str", string())
            .opt("type", PType::Enum(vec!["text".into(), "attr".into()])),
        xml_encode,
    );
    b.add(
        &["shell_escape"],
        f,
        sig("String").req("string", any()),
        |_, c| Ok(Value::Str(shell_escape(&c.arg(0).to_s()))),
    );
    let non_empty = PType::String(1, i64::MAX);
    let affixes = PType::Variant(vec![
        non_empty.clone(),
        PType::Array(Box::new(non_empty), 1, i64::MAX),
    ]);
    b.add(
        &["stdlib::start_with"],
        f,
        sig("Boolean")
            .req("test_string", string())
            .req("prefixes", affixes.clone()),
        |_, c| {
            Ok(Value::Bool(
                affix_list(&c.arg(1))
                    .iter()
                    .any(|p| c.arg(0).to_s().starts_with(p.as_str())),
            ))
        },
    );
    b.add(
        &["stdlib::end_with"],
        f,
        sig("Boolean")
            .req("test_string", string())
            .req("suffixes", affixes),
        |_, c| {
            Ok(Value::Bool(
                affix_list(&c.arg(1))
                    .iter()
                    .any(|p| c.arg(0).to_s().ends_with(p.as_str())),
            ))
        },
    );
    b.add(
        &["stdlib::extname"],
        f,
        sig("String").req("filename", string()),
        |_, c| {
            Ok(Value::Str(crate::lang::functions::native_ports::extname(
                &c.arg(0).to_s(),
            )))
        },
    );
    b.add(
        &["type_of"],
        f,
        sig("Type").req("value", any()),
        crate::lang::functions::conversion::type_of,
    );
}

/// A prefix or suffix argument: one string or an array of them.
fn affix_list(v: &Value) -> Vec<String> {
    match v {
        Value::Array(a) => a.iter().map(Value::to_s).collect(),
        other => vec![other.to_s()],
    }
}

/// A string or an array whose strings are mapped by `f` (other elements
/// kept), as `swapcase` and `uriescape` take them; `None` for anything else.
fn map_strings(v: &Value, f: fn(&str) -> String) -> Option<Value> {
    match v {
        Value::Str(s) => Some(Value::Str(f(s))),
        Value::Array(a) => Some(Value::Array(
            a.iter()
                .map(|i| match i {
                    Value::Str(s) => Value::Str(f(s)),
                    other => other.clone(),
                })
                .collect(),
        )),
        _ => None,
    }
}

fn swapcase(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    if c.args.is_empty() {
        return Err(plain("swapcase(): Wrong number of arguments given (0 for 1)").into());
    }
    let swap = |s: &str| -> String {
        s.chars()
            .flat_map(|ch| {
                let v: Vec<char> = if ch.is_lowercase() {
                    ch.to_uppercase().collect()
                } else if ch.is_uppercase() {
                    ch.to_lowercase().collect()
                } else {
                    vec![ch]
                };
                v
            })
            .collect()
    };
    map_strings(&arg_3x(&c.arg(0)), swap)
        .ok_or_else(|| plain("swapcase(): Requires either array or string to work with").into())
}

/// Ruby's `String#squeeze(set)`: runs of one character in `set` (`a-z`
/// ranges, a leading `^` negates; `None`: every character) become one.
fn squeeze_str(s: &str, set: Option<&str>) -> String {
    let in_set = |ch: char| -> bool {
        let Some(set) = set else { return true };
        let (neg, body) = match set.strip_prefix('^') {
            Some(r) if !r.is_empty() => (true, r),
            _ => (false, set),
        };
        let cs: Vec<char> = body.chars().collect();
        let mut hit = false;
        let mut i = 0;
        while i < cs.len() {
            if i + 2 < cs.len() && cs[i + 1] == '-' {
                hit |= (cs[i]..=cs[i + 2]).contains(&ch);
                i += 3;
            } else {
                hit |= cs[i] == ch;
                i += 1;
            }
        }
        hit != neg
    };
    let mut out = String::new();
    let mut last = None;
    for ch in s.chars() {
        if last == Some(ch) && in_set(ch) {
            continue;
        }
        out.push(ch);
        last = Some(ch);
    }
    out
}

fn squeeze(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let n = c.args.len();
    if n != 1 && n != 2 {
        return Err(plain(format!(
            "squeeze(): Wrong number of arguments given {n} for 2 or 1"
        ))
        .into());
    }
    let set = c.args.get(1).map(|v| arg_3x(v).to_s());
    let one = |v: &Value| -> EvalResult<Value> {
        match v {
            Value::Str(s) => Ok(Value::Str(squeeze_str(s, set.as_deref()))),
            other => Err(plain(format!(
                "undefined method `squeeze' for {}:{}",
                inspect(other),
                ruby_class(other)
            ))
            .into()),
        }
    };
    match arg_3x(&c.arg(0)) {
        Value::Array(a) => Ok(Value::Array(a.iter().map(one).collect::<EvalResult<_>>()?)),
        other => one(&other),
    }
}

fn union(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    if c.args.len() < 2 {
        return Err(plain(format!(
            "union(): Wrong number of arguments given ({} for < 2)",
            c.args.len()
        ))
        .into());
    }
    let mut out: Vec<Value> = Vec::new();
    for a in &c.args {
        let Value::Array(items) = a else {
            return Err(plain("union(): Every parameter must be an array").into());
        };
        for i in items {
            if !out.contains(i) {
                out.push(i.clone());
            }
        }
    }
    Ok(Value::Array(out))
}

fn unix2dos(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let Some(Value::Str(s)) = c.args.first() else {
        return Err(plain("unix2dos(): Requires string as argument").into());
    };
    let mut out = String::new();
    for line in s.split_inclusive('\n') {
        match line.strip_suffix('\n') {
            Some(body) => {
                out.push_str(body.trim_end_matches('\r'));
                out.push_str("\r\n");
            }
            None => out.push_str(line),
        }
    }
    Ok(Value::Str(out))
}

/// Ruby's `URI::DEFAULT_PARSER.escape` (RFC 2396): every byte outside the
/// unreserved and reserved characters as `%XX`.
fn uri_escape(s: &str) -> String {
    let keep = |b: u8| b.is_ascii_alphanumeric() || b"-_.!~*'();/?:@&=+$,[]".contains(&b);
    let mut out = String::new();
    for b in s.bytes() {
        if keep(b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn uriescape(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    if c.args.is_empty() {
        return Err(plain("uriescape(): Wrong number of arguments given (0 for 1)").into());
    }
    map_strings(&arg_3x(&c.arg(0)), uri_escape)
        .ok_or_else(|| plain("uriescape(): Requires either array or string to work with").into())
}

/// Ruby's `Shellwords.shellescape`: `''` for an empty string, else a
/// backslash before each character outside `A-Za-z0-9_-.,:+/@` and
/// newlines quoted as `'\n'`.
pub fn shell_escape(s: &str) -> String {
    if s.is_empty() {
        return "''".into();
    }
    let mut out = String::new();
    for ch in s.chars() {
        if ch == '\n' {
            out.push_str("'\n'");
        } else if ch.is_ascii_alphanumeric() || "_-.,:+/@".contains(ch) {
            out.push(ch);
        } else {
            out.push('\\');
            out.push(ch);
        }
    }
    out
}

fn shell_join(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    arity(&c, "shell_join", 1)?;
    let a = arg_3x(&c.arg(0));
    let Value::Array(items) = &a else {
        return Err(plain(format!("First argument is not an Array: {}", inspect(&a))).into());
    };
    let words: Vec<String> = items.iter().map(|i| shell_escape(&i.to_s())).collect();
    Ok(Value::Str(words.join(" ")))
}

/// stdlib's deprecated `try_get_value(data, path, default, separator)`:
/// `path` split on `separator` (default `/`), all-digit keys as indices,
/// walked as `dig44` walks; `default` (or, when it is undef, `data`) for
/// data that is no collection or an empty path.
fn try_get_value(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let n = c.args.len();
    if n < 1 {
        return Err(plain(format!(
            "try_get_value(): Wrong number of arguments given ({n} for minimum 1)"
        ))
        .into());
    }
    let data = c.arg(0);
    let path = arg_3x(&c.arg(1)).to_s();
    let default = c.arg(2);
    if !matches!(data, Value::Hash(_) | Value::Array(_)) || path.is_empty() {
        return Ok(if default.is_undef() { data } else { default });
    }
    let separator = match c.arg(3) {
        Value::Undef => "/".to_string(),
        other => other.to_s(),
    };
    // Ruby's String#split drops the empty strings at the end.
    let mut keys: Vec<&str> = path.split(separator.as_str()).collect();
    while keys.last().is_some_and(|k| k.is_empty()) {
        keys.pop();
    }
    let keys: Vec<Value> = keys
        .into_iter()
        .map(|k| match k.parse::<i64>() {
            Ok(i) if k.bytes().all(|b| b.is_ascii_digit()) => Value::Int(i),
            _ => Value::str(k),
        })
        .collect();
    Ok(crate::lang::functions::native::dig_path(
        data, &keys, default,
    ))
}

/// stdlib's `shell_split`: the words of a string as a Bourne shell splits
/// them (Ruby's `Shellwords.shellsplit`).
fn shell_split(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    arity(&c, "shell_split", 1)?;
    let line = arg_3x(&c.arg(0)).to_s();
    match shellsplit(&line) {
        Some(words) => Ok(Value::Array(words.into_iter().map(Value::Str).collect())),
        None => Err(plain(format!("Unmatched quote: {}", inspect(&Value::Str(line)))).into()),
    }
}

/// Ruby's `Shellwords.shellsplit`: unquoted words, `'...'` taken as is,
/// `"..."` with `\$`, `` \` ``, `\"`, `\\` and `\<newline>` unescaped, a
/// backslash outside quotes escaping the next character; pieces not
/// separated by white space make one word. `None` for an unmatched quote.
fn shellsplit(line: &str) -> Option<Vec<String>> {
    let chars: Vec<char> = line.chars().collect();
    let space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c');
    let mut words = Vec::new();
    let mut field = String::new();
    let mut i = 0;
    loop {
        // `\G\s*`: leading white space before a piece.
        while i < chars.len() && space(chars[i]) {
            i += 1;
        }
        if i >= chars.len() {
            break;
        }
        let c = chars[i];
        if c == '\'' {
            let close = chars[i + 1..].iter().position(|&x| x == '\'')?;
            field.extend(&chars[i + 1..i + 1 + close]);
            i += close + 2;
        } else if c == '"' {
            let mut j = i + 1;
            let mut piece = String::new();
            loop {
                match chars.get(j) {
                    None => return None,
                    Some('"') => break,
                    Some('\\') => {
                        let next = *chars.get(j + 1)?;
                        if !matches!(next, '$' | '`' | '"' | '\\' | '\n') {
                            piece.push('\\');
                        }
                        piece.push(next);
                        j += 2;
                    }
                    Some(&other) => {
                        piece.push(other);
                        j += 1;
                    }
                }
            }
            field.push_str(&piece);
            i = j + 1;
        } else if c == '\\' {
            match chars.get(i + 1) {
                Some(&next) => {
                    field.push(next);
                    i += 2;
                }
                None => {
                    field.push('\\');
                    i += 1;
                }
            }
        } else {
            while i < chars.len() && !space(chars[i]) && !matches!(chars[i], '\\' | '\'' | '"') {
                field.push(chars[i]);
                i += 1;
            }
        }
        // `(\s|\z)?`: a separator ends the word.
        if i >= chars.len() || space(chars[i]) {
            words.push(std::mem::take(&mut field));
            i += 1;
        }
    }
    Some(words)
}

/// Ruby's `Integer(v)` for `validate_slength`'s bounds: integers, floats
/// truncated, strings parsed strictly; `None` for anything else.
fn ruby_integer_of(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        Value::Float(f) if f.is_finite() => Some(f.trunc() as i64),
        Value::Str(s) => ruby_integer(s),
        _ => None,
    }
}

fn validate_slength(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let n = c.args.len();
    if n != 2 && n != 3 {
        return Err(plain(format!(
            "validate_slength(): Wrong number of arguments ({n}; must be 2 or 3)"
        ))
        .into());
    }
    let args: Vec<Value> = c.args.iter().map(arg_3x).collect();
    let bound = |v: &Value| format!("{}:{}", v.to_s(), ruby_class(v));
    let max = ruby_integer_of(&args[1])
        .filter(|m| *m > 0)
        .ok_or_else(|| {
            plain(format!(
                "validate_slength(): Expected second argument to be a positive Numeric, got {}",
                bound(&args[1])
            ))
        })?;
    let min = match args.get(2) {
        Some(m) => ruby_integer_of(m).filter(|m| *m >= 0).ok_or_else(|| {
            plain(format!(
                "validate_slength(): Expected third argument to be unset or a positive Numeric, got {}",
                bound(m)
            ))
        })?,
        None => 0,
    };
    if max < min {
        return Err(plain(
            "validate_slength(): Expected second argument to be equal to or larger than third argument",
        )
        .into());
    }
    let input = &args[0];
    let input_len = match input {
        Value::Str(s) => s.chars().count(),
        Value::Array(a) => a.len(),
        _ => 0,
    };
    let check = |s: &str| -> EvalResult<()> {
        let len = s.chars().count() as i64;
        if len > max || len < min {
            return Err(plain(format!(
                "validate_slength(): Expected length of {} to be between {min} and {max}, was {input_len}",
                inspect(input)
            ))
            .into());
        }
        Ok(())
    };
    match input {
        Value::Str(s) => check(s)?,
        Value::Array(a) => {
            for (pos, item) in a.iter().enumerate() {
                let Value::Str(s) = item else {
                    return Err(plain(format!(
                        "validate_slength(): Expected element at array position {pos} to be a String, got {}",
                        ruby_class(item)
                    ))
                    .into());
                };
                check(s)?;
            }
        }
        other => {
            return Err(plain(format!(
                "validate_slength(): Expected first argument to be a String or Array, got {}",
                ruby_class(other)
            ))
            .into());
        }
    }
    Ok(Value::Undef)
}

/// The checks every `validate_*` taking strings shares: at least one
/// argument, each a string that `ok` accepts (else `"{inspect} {what}"`).
fn validate_each(c: &Call<'_>, ok: impl Fn(&str) -> bool, what: &str) -> EvalResult<Value> {
    if c.args.is_empty() {
        return Err(plain(format!(
            "{}(): wrong number of arguments (0; must be > 0)",
            c.name
        ))
        .into());
    }
    for a in c.args.iter().map(arg_3x) {
        let Value::Str(s) = &a else {
            return Err(plain(format!("{} is not a string.", inspect(&a))).into());
        };
        if !ok(s) {
            return Err(plain(format!("{} {what}", inspect(&a))).into());
        }
    }
    Ok(Value::Undef)
}

fn validate_domain_name(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    validate_each(
        &c,
        domain_name_ok,
        "is not a syntactically correct domain name",
    )
}

/// stdlib's `is_email_address`: `\A([\w+\-].?)+@[a-z\d\-]+(\.[a-z]+)*\.[a-z]+\z`.
fn email_ok(s: &str) -> bool {
    let Some((local, domain)) = s.rsplit_once('@') else {
        return false;
    };
    let word = |ch: char| ch.is_alphanumeric() || ch == '_' || ch == '+' || ch == '-';
    // `([\w+\-].?)+`: no two characters in a row outside the word set,
    // starting with a word character.
    let cs: Vec<char> = local.chars().collect();
    let local_ok = cs.first().is_some_and(|c| word(*c))
        && cs.windows(2).all(|w| word(w[0]) || word(w[1]))
        && !cs.contains(&'\n');
    let labels: Vec<&str> = domain.split('.').collect();
    let domain_ok = labels.len() >= 2
        && labels[0]
            .chars()
            .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-')
        && !labels[0].is_empty()
        && labels[1..]
            .iter()
            .all(|l| !l.is_empty() && l.chars().all(|ch| ch.is_ascii_lowercase()));
    local_ok && domain_ok
}

fn validate_email_address(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    validate_each(&c, email_ok, "is not a valid email address")
}

/// Ruby's `IPAddr.new(s)`: an address in brackets or not, then an
/// optional `/prefix` or `/mask` of its family; `Some(true)` for IPv4,
/// `Some(false)` for IPv6, `None` when Ruby raises.
fn ruby_ipaddr(s: &str) -> Option<bool> {
    let (addr, mask) = match s.split_once('/') {
        Some((a, m)) => (a, Some(m)),
        None => (s, None),
    };
    let addr = addr
        .strip_prefix('[')
        .and_then(|a| a.strip_suffix(']'))
        .unwrap_or(addr);
    let v4 = if addr.parse::<std::net::Ipv4Addr>().is_ok() {
        true
    } else if addr.parse::<std::net::Ipv6Addr>().is_ok() {
        false
    } else {
        return None;
    };
    let bits = if v4 { 32 } else { 128 };
    match mask {
        None => Some(v4),
        Some(m) if !m.is_empty() && m.chars().all(|ch| ch.is_ascii_digit()) => {
            (m.parse::<u32>().ok()? <= bits).then_some(v4)
        }
        Some(m) if v4 => m.parse::<std::net::Ipv4Addr>().ok().map(|_| true),
        Some(m) => m.parse::<std::net::Ipv6Addr>().ok().map(|_| false),
    }
}

/// `validate_ip_address`, `validate_ipv4_address` and
/// `validate_ipv6_address`, told apart by the name called.
fn validate_ip_address(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let (want, what): (fn(Option<bool>) -> bool, &str) = match c.name {
        "validate_ipv4_address" => (|r| r == Some(true), "is not a valid IPv4 address."),
        "validate_ipv6_address" => (|r| r == Some(false), "is not a valid IPv6 address."),
        _ => (|r| r.is_some(), "is not a valid IP address."),
    };
    validate_each(&c, |s| want(ruby_ipaddr(s)), what)
}

/// stdlib's `is_integer` of a string: `-?(0|[1-9][0-9]*)`.
fn is_integer_str(s: &str) -> bool {
    let d = s.strip_prefix('-').unwrap_or(s);
    !d.is_empty() && d.chars().all(|ch| ch.is_ascii_digit()) && (d == "0" || !d.starts_with('0'))
}

fn seeded_rand(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let max = match c.args.first().map(arg_3x) {
        Some(Value::Int(i)) => i,
        Some(Value::Str(s)) if is_integer_str(&s) => s.parse().unwrap_or(0),
        _ => 0,
    };
    if max <= 0 {
        return Err(plain("seeded_rand(): first argument must be a positive integer").into());
    }
    let Some(Value::Str(seed)) = c.args.get(1).map(arg_3x) else {
        return Err(plain("seeded_rand(): second argument must be a string").into());
    };
    Ok(Value::Int(md5_rand(&seed, max as u64) as i64))
}

/// Ruby's `String#to_f`: the longest leading decimal number, 0.0 if none.
fn ruby_to_f(s: &str) -> f64 {
    let b = s.as_bytes();
    let digits = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let mut end = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let int_end = digits(end);
    let has_fraction =
        b.get(int_end) == Some(&b'.') && b.get(int_end + 1).is_some_and(u8::is_ascii_digit);
    // Ruby reads `.5` too, but not a bare `.`.
    if int_end == end && !has_fraction {
        return 0.0;
    }
    end = int_end;
    if has_fraction {
        end = digits(end + 1);
    }
    if matches!(b.get(end), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(b.get(end + 1), Some(b'+' | b'-')));
        let exp_end = digits(end + 1 + sign);
        if exp_end > end + 1 + sign {
            end = exp_end;
        }
    }
    let t = &s[..end];
    let t = t.replacen("-.", "-0.", 1).replacen("+.", "0.", 1);
    let t = if t.starts_with('.') {
        format!("0{t}")
    } else {
        t
    };
    t.parse().unwrap_or(0.0)
}

fn to_bytes(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    arity(&c, "to_bytes", 1)?;
    let arg = arg_3x(&c.arg(0));
    if matches!(arg, Value::Int(_) | Value::Float(_)) {
        return Ok(arg);
    }
    let s = arg.to_s();
    let num_len = s
        .find(|ch: char| !(ch.is_ascii_digit() || ".e+-".contains(ch)))
        .unwrap_or(s.len());
    let value = ruby_to_f(&s[..num_len]);
    let prefix = s[num_len..]
        .trim_start_matches([' ', '\t', '\n', '\r', '\x0c', '\x0b'])
        .chars()
        .next()
        .filter(|ch| *ch != 'b' && *ch != 'B');
    let shift = match prefix {
        None => 0,
        Some('k') => 10,
        Some('M') => 20,
        Some('G') => 30,
        Some('T') => 40,
        Some('P') => 50,
        Some('E') => 60,
        Some(p) => return Err(plain(format!("to_bytes(): Unknown prefix {p}")).into()),
    };
    Ok(Value::Int((value * (1u64 << shift) as f64) as i64))
}

/// `to_ruby` and `to_python`: a Data value as a Ruby or Python literal
/// (strings and numbers as Ruby's `inspect` writes them). Rich values
/// (types, regexps, Sensitive...) are refused with a clear error.
fn to_ruby(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    fn lit(v: &Value, py: bool, name: &str) -> EvalResult<String> {
        Ok(match v {
            Value::Undef if py => "None".into(),
            Value::Undef => "nil".into(),
            Value::Bool(b) if py => if *b { "True" } else { "False" }.into(),
            Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_) => inspect(v),
            Value::Array(a) => {
                let items: Vec<String> = a
                    .iter()
                    .map(|i| lit(i, py, name))
                    .collect::<EvalResult<_>>()?;
                format!("[{}]", items.join(", "))
            }
            Value::Hash(h) => {
                let arrow = if py { ": " } else { " => " };
                let mut items = Vec::new();
                for (k, v) in h.iter() {
                    items.push(format!("{}{arrow}{}", lit(k, py, name)?, lit(v, py, name)?));
                }
                format!("{{{}}}", items.join(", "))
            }
            other => {
                return Err(plain(format!(
                    "{name}(): ferry converts only Data values, not a {}",
                    other.type_name()
                ))
                .into());
            }
        })
    }
    Ok(Value::Str(lit(&c.arg(0), c.name == "to_python", c.name)?))
}

/// Ruby's `String#encode(xml: :text | :attr)`: `&`, `<` and `>` as
/// entities; `attr` also `"` and the whole wrapped in double quotes.
fn xml_encode(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let attr = c.arg(1).to_s() == "attr";
    let mut out = String::new();
    if attr {
        out.push('"');
    }
    for ch in c.arg(0).to_s().chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attr => out.push_str("&quot;"),
            other => out.push(other),
        }
    }
    if attr {
        out.push('"');
    }
    Ok(Value::Str(out))
}

fn shuffle(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    use rand_core_06::RngCore;
    if c.args.is_empty() {
        return Err(plain("shuffle(): Wrong number of arguments given (0 for 1)").into());
    }
    let value = arg_3x(&c.arg(0));
    let (mut items, string) = match &value {
        Value::Array(a) => (a.clone(), false),
        Value::Str(s) => (s.chars().map(|ch| Value::Str(ch.into())).collect(), true),
        _ => {
            return Err(plain("shuffle(): Requires either array or string to work with").into());
        }
    };
    let mut seed = [0u8; 16];
    rand_core_06::OsRng.fill_bytes(&mut seed);
    let mut mt = crate::lang::functions::random::Mt::from_seed_be(&seed);
    let n = items.len();
    for i in 0..n {
        let j = mt.rand_below((n - i) as u64) as usize + i;
        items.swap(i, j);
    }
    Ok(if string {
        Value::Str(items.iter().map(Value::to_s).collect())
    } else {
        Value::Array(items)
    })
}

/// stdlib's `str2saltedsha512`: a random 4-byte salt (below 2**31 - 1,
/// little-endian), then SHA-512 of salt and password, all in hex.
fn str2saltedsha512(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    use rand_core_06::RngCore;
    use sha2::Digest;
    let n = c.args.len();
    if n != 1 {
        return Err(plain(format!(
            "str2saltedsha512(): Wrong number of arguments passed ({n} but we require 1)"
        ))
        .into());
    }
    let password = arg_3x(&c.arg(0));
    let Value::Str(password) = &password else {
        return Err(plain(format!(
            "str2saltedsha512(): Requires a String argument, you passed: {}",
            ruby_class(&password)
        ))
        .into());
    };
    let salt = (rand_core_06::OsRng.next_u32() % 0x7fff_ffff).to_le_bytes();
    let mut hasher = sha2::Sha512::new();
    hasher.update(salt);
    hasher.update(password.as_bytes());
    let digest = hasher.finalize();
    Ok(Value::Str(format!(
        "{}{}",
        hex::encode(salt),
        hex::encode(digest)
    )))
}

fn time(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let n = c.args.len();
    if n > 1 {
        return Err(plain(format!(
            "time(): Wrong number of arguments given {n} for 0 or 1"
        ))
        .into());
    }
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Ok(Value::Int(i64::try_from(secs).unwrap_or(i64::MAX)))
}
