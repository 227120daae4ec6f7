//! String functions: `split`, `join`, `versioncmp`, case and whitespace
//! (`upcase`, `downcase`, `capitalize`, `strip`, `lstrip`, `rstrip`,
//! `chomp`, `chop`), `sprintf`, `regsubst`, `match`, `prefix`, `suffix`,
//! `basename`, `dirname`, `sha256`, `md5`, `sha1`, `digest` and `scanf`. Functions that take a string also
//! map over an array of strings, as stdlib's do.

use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::functions::{Builder, Family, any, sig, string};
use crate::lang::values::regex::compile_regex;
use crate::lang::values::types::PType;
use crate::lang::values::value::{Value, str_to_num};

pub fn register(b: &mut Builder) {
    let f = Family::Strings;
    let one = |ret| sig(ret).req("value", any());
    b.add(
        &["split"],
        f,
        sig("Array[String]")
            .req("str", string())
            .opt("pattern", any()),
        split,
    );
    b.add(
        &["join"],
        f,
        sig("String")
            .req("arg", PType::Array(Box::new(PType::Any), 0, i64::MAX))
            .opt("delimiter", string()),
        join,
    );
    b.add(
        &["versioncmp"],
        f,
        sig("Integer[-1, 1]").req("a", string()).req("b", string()),
        versioncmp,
    );
    b.add(&["upcase"], f, one("Variant[String, Array]"), upcase);
    b.add(&["downcase"], f, one("Variant[String, Array]"), downcase);
    b.add(
        &["capitalize"],
        f,
        one("Variant[String, Array]"),
        capitalize,
    );
    b.add(&["strip"], f, one("Variant[String, Array]"), strip);
    b.add(&["lstrip"], f, one("Variant[String, Array]"), lstrip);
    b.add(&["rstrip"], f, one("Variant[String, Array]"), rstrip);
    b.add(&["chomp"], f, one("Variant[String, Array]"), chomp);
    b.add(&["chop"], f, one("Variant[String, Array]"), chop);
    b.add(&["lstrip_all"], f, one("Any"), lstrip_all);
    b.add(
        &["sprintf"],
        f,
        sig("String").req("format", any()).rest("args", any()),
        sprintf,
    );
    b.add(
        &["regsubst"],
        f,
        sig("Variant[String, Array]")
            // Puppet's two dispatches both take Variant[Array[String], String],
            // described together as "Array or String".
            .req(
                "target",
                PType::Variant(vec![
                    PType::Array(Box::new(PType::Any), 0, i64::MAX),
                    string(),
                ]),
            )
            .req("pattern", any())
            .req("replacement", any())
            .opt("flags", any())
            .opt("encoding", any()),
        regsubst,
    );
    b.add(
        &["match"],
        f,
        sig("Optional[Array]")
            .req("string", any())
            .req("pattern", any()),
        regex_match,
    );
    b.add(
        &["prefix", "suffix"],
        f,
        sig("Collection")
            .req("collection", any())
            .opt("affix", any()),
        prefix_suffix,
    );
    b.add(
        &["basename"],
        f,
        sig("String").req("path", any()).opt("extension", any()),
        basename,
    );
    b.add(&["dirname"], f, sig("String").req("path", any()), dirname);
    b.add(&["sha256"], f, one("String"), sha256);
}

fn split(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    let a1 = c.args.get(1);
    Ok({
        let st = a0.to_s();
        let pat = match a1 {
            Some(Value::Regex(r)) => r.clone(),
            // Puppet compiles a string pattern as a regular expression
            // (apt::source: `split($location, '[:\/]+')`).
            Some(Value::Str(s)) => s.clone(),
            Some(v) => regex::escape(&v.to_s()),
            None => " ".into(),
        };
        let re = compile_regex(&pat)?;
        let mut parts: Vec<Value> = if pat.is_empty() {
            st.chars().map(|c| Value::Str(c.to_string())).collect()
        } else {
            re.split(&st).map(|p| Value::Str(p.to_string())).collect()
        };
        while matches!(parts.last(), Some(Value::Str(x)) if x.is_empty()) {
            parts.pop();
        }
        Value::Array(parts)
    })
}

fn join(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    let a1 = c.args.get(1);
    Ok(match &a0 {
        Value::Array(a) => Value::Str(a.iter().map(|v| v.to_s()).collect::<Vec<_>>().join(&s(a1))),
        other => Value::Str(other.to_s()),
    })
}

fn versioncmp(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    let a1 = c.args.get(1);
    Ok(Value::Int(compare_versions(&a0.to_s(), &s(a1))))
}

fn upcase(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    Ok(map_str(&a0, &|x| x.to_uppercase()))
}

fn downcase(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    Ok(map_str(&a0, &|x| x.to_lowercase()))
}

fn capitalize(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    Ok(map_str(&a0, &|x| {
        let mut c = x.chars();
        c.next()
            .map(|f| f.to_uppercase().collect::<String>() + &c.as_str().to_lowercase())
            .unwrap_or_default()
    }))
}

fn strip(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    Ok(map_str(&a0, &|x| x.trim().to_string()))
}

fn lstrip(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    Ok(map_str(&a0, &|x| x.trim_start().to_string()))
}

fn rstrip(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    Ok(map_str(&a0, &|x| x.trim_end().to_string()))
}

fn chomp(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    Ok(map_str(&a0, &|x| {
        x.strip_suffix("\r\n")
            .or_else(|| x.strip_suffix('\n'))
            .unwrap_or(x)
            .to_string()
    }))
}

fn chop(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    Ok(map_str(&a0, &|x| {
        let mut c: Vec<char> = x.chars().collect();
        c.pop();
        c.into_iter().collect()
    }))
}

fn sprintf(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let args = &c.args;
    let a0 = c.arg(0);
    Ok(Value::Str(format(&a0.to_s(), args.get(1..).unwrap_or(&[]))))
}

fn regsubst(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let args = &c.args;
    let a0 = c.arg(0);
    let a1 = c.args.get(1);
    Ok({
        let pat = match a1 {
            Some(Value::Regex(r)) => r.clone(),
            Some(v) => v.to_s(),
            None => String::new(),
        };
        let repl = s(args.get(2)).replace("\\0", "${0}");
        let repl = (1..10).fold(repl, |r, i| {
            r.replace(&format!("\\{i}"), &format!("${{{i}}}"))
        });
        let flags = s(args.get(3));
        let pat = if flags.contains('I') {
            format!("(?i){pat}")
        } else {
            pat
        };
        let re = compile_regex(&pat)?;
        let global = flags.contains('G');
        map_str(&a0, &|x| {
            if global {
                re.replace_all(x, repl.as_str()).into_owned()
            } else {
                re.replace(x, repl.as_str()).into_owned()
            }
        })
    })
}

fn regex_match(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    let a1 = c.args.get(1);
    Ok({
        let pat = match a1 {
            Some(Value::Regex(r)) => r.clone(),
            Some(v) => v.to_s(),
            None => String::new(),
        };
        let re = compile_regex(&pat)?;
        match re.captures(&a0.to_s()) {
            Some(c) => Value::Array(
                c.iter()
                    .map(|m| m.map_or(Value::Undef, |m| Value::str(m.as_str())))
                    .collect(),
            ),
            None => Value::Undef,
        }
    })
}

fn prefix_suffix(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    let a1 = c.args.get(1);
    let name = c.name;
    Ok({
        let p = s(a1);
        let f = |x: &Value| {
            Value::Str(if name == "prefix" {
                format!("{p}{}", x.to_s())
            } else {
                format!("{}{p}", x.to_s())
            })
        };
        match a0 {
            Value::Array(a) => Value::Array(a.iter().map(f).collect()),
            Value::Hash(h) => Value::Hash(h.iter().map(|(k, v)| (f(k), v.clone())).collect()),
            other => other,
        }
    })
}

/// stdlib's `basename(path, [suffix])`: Ruby's `File.basename`.
fn basename(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let Value::Str(path) = c.arg(0) else {
        return Err(
            crate::lang::error::plain("basename(): Requires string as first argument").into(),
        );
    };
    let suffix = match c.args.get(1) {
        None => None,
        Some(Value::Str(s)) => Some(s.clone()),
        Some(_) => {
            return Err(crate::lang::error::plain(
                "basename(): Requires string as second argument",
            )
            .into());
        }
    };
    Ok(Value::Str(file_basename(&path, suffix.as_deref())))
}

/// Ruby's `File.basename(path, suffix)`: the last component (trailing
/// slashes ignored, `/` for a root), without `suffix` when it ends the name
/// and is not all of it; the suffix `.*` removes any extension.
fn file_basename(path: &str, suffix: Option<&str>) -> String {
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return if path.is_empty() {
            String::new()
        } else {
            "/".into()
        };
    }
    let name = trimmed.rsplit('/').next().unwrap_or(trimmed);
    let stem = match suffix {
        Some(".*") => name
            .rfind('.')
            .filter(|i| *i > 0)
            .and_then(|i| name.get(..i)),
        Some(sfx) if !sfx.is_empty() && name.len() > sfx.len() => name.strip_suffix(sfx),
        _ => None,
    };
    stem.unwrap_or(name).to_string()
}

fn dirname(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    Ok({
        let p = a0.to_s();
        Value::Str(match p.trim_end_matches('/').rsplit_once('/') {
            Some(("", _)) => "/".into(),
            Some((d, _)) => d.to_string(),
            None => ".".into(),
        })
    })
}

fn sha256(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    Ok({
        use sha2::Digest;
        let d = sha2::Sha256::digest(a0.to_s().as_bytes());
        Value::Str(d.iter().map(|b| format!("{b:02x}")).collect())
    })
}

fn lstrip_all(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    Ok(a0)
}

/// Apply `f` to a string, or to every string of an array.
fn map_str(v: &Value, f: &dyn Fn(&str) -> String) -> Value {
    match v {
        Value::Str(x) => Value::Str(f(x)),
        Value::Array(a) => Value::Array(a.iter().map(|x| map_str(x, f)).collect()),
        other => other.clone(),
    }
}

fn s(v: Option<&Value>) -> String {
    v.map(|v| v.to_s()).unwrap_or_default()
}

/// Compare two version strings like Puppet's `versioncmp`.
pub fn compare_versions(a: &str, b: &str) -> i64 {
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

pub fn format(fmt: &str, args: &[Value]) -> String {
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

/// `md5`, `sha1` and `digest` (Puppet's default `digest_algorithm`,
/// sha256): 3.x functions of exactly one String, hex digests.
pub fn register_digests(b: &mut Builder) {
    let f = Family::Strings;
    let one = || sig("String").rest("value", any());
    b.add(&["md5"], f, one(), hex_digest);
    b.add(&["sha1"], f, one(), hex_digest);
    b.add(&["digest"], f, one(), hex_digest);
}

fn hex_digest(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    crate::lang::functions::stdlib::arity(&c, c.name, 1)?;
    // A 3.x function gets a top-level undef as the empty string; anything
    // else that is not a String fails Ruby's implicit conversion.
    let text = match c.arg(0) {
        Value::Str(s) => s,
        Value::Undef => String::new(),
        other => {
            let class = match other {
                Value::Bool(b) => b.to_string(),
                v => crate::lang::functions::stdlib::ruby_class(&v).to_string(),
            };
            return Err(crate::lang::error::plain(format!(
                "no implicit conversion of {class} into String"
            ))
            .into());
        }
    };
    let bytes = text.as_bytes();
    let hex = match c.name {
        "md5" => {
            use md5::Digest;
            hex::encode(md5::Md5::digest(bytes))
        }
        "sha1" => {
            use sha1::Digest;
            hex::encode(sha1::Sha1::digest(bytes))
        }
        _ => {
            use sha2::Digest;
            hex::encode(sha2::Sha256::digest(bytes))
        }
    };
    Ok(Value::Str(hex))
}

/// `scanf`: the values a format reads from a string, as Ruby's
/// `String#scanf` converts them (stopping at the first directive that does
/// not match), handed to the optional block.
pub fn register_scanf(b: &mut Builder) {
    b.add(
        &["scanf"],
        Family::Strings,
        sig("Any")
            .req("data", string())
            .req("format", string())
            .block(crate::lang::functions::Block::Optional),
        scanf,
    );
}

fn scanf(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let result = Value::Array(scan(&c.str_arg(0), &c.str_arg(1)));
    match c.lambda {
        Some(l) => ev.call_lambda(l, vec![result], c.scope),
        None => Ok(result),
    }
}

/// Ruby's `scanf` directives `%d %i %o %x %u %f %e %g %s %c %[set]`, with
/// widths and `*` (read, not kept). As Ruby's tokenizer does, input
/// whitespace is skipped before each literal run and directive except
/// `%[set]` and a `%c` with no whitespace before it in the format.
fn scan(data: &str, format: &str) -> Vec<Value> {
    let d: Vec<char> = data.chars().collect();
    let f: Vec<char> = format.chars().collect();
    let (mut di, mut fi) = (0, 0);
    let mut out = Vec::new();
    let skip_ws = |di: &mut usize| {
        while d.get(*di).is_some_and(|c| c.is_whitespace()) {
            *di += 1;
        }
    };
    let mut space_before = false;
    let mut in_literal = false;
    while fi < f.len() {
        let fc = f[fi];
        if fc.is_whitespace() {
            space_before = true;
            in_literal = false;
            fi += 1;
            continue;
        }
        if fc != '%' || f.get(fi + 1) == Some(&'%') {
            if !in_literal {
                skip_ws(&mut di);
            }
            let lit = if fc == '%' { 2 } else { 1 };
            if d.get(di) != Some(&fc) {
                break;
            }
            di += 1;
            fi += lit;
            in_literal = fc != '%';
            space_before = false;
            continue;
        }
        in_literal = false;
        fi += 1;
        let keep = f.get(fi) != Some(&'*');
        if !keep {
            fi += 1;
        }
        let mut width = String::new();
        while let Some(c) = f.get(fi).filter(|c| c.is_ascii_digit()) {
            width.push(*c);
            fi += 1;
        }
        let max: usize = width.parse().unwrap_or(usize::MAX);
        let Some(&conv) = f.get(fi) else { break };
        fi += 1;
        let mut set: Option<(bool, Vec<char>)> = None;
        if conv == '[' {
            let negate = f.get(fi) == Some(&'^');
            if negate {
                fi += 1;
            }
            let mut chars = Vec::new();
            while let Some(&c) = f.get(fi) {
                fi += 1;
                if c == ']' {
                    break;
                }
                if f.get(fi) == Some(&'-') && f.get(fi + 1).is_some_and(|e| *e != ']') {
                    let end = f[fi + 1];
                    chars.extend(c..=end);
                    fi += 2;
                } else {
                    chars.push(c);
                }
            }
            set = Some((negate, chars));
        }
        if conv != '[' && (conv != 'c' || space_before) {
            skip_ws(&mut di);
        }
        space_before = false;
        let rest: String = d[di..].iter().take(max).collect();
        let taken = scan_one(conv, &rest, max, set.as_ref());
        let Some((len, v)) = taken else { break };
        di += len;
        if keep {
            out.push(v);
        }
    }
    out
}

/// One conversion at the start of `s` (already cut to the width): the
/// characters it used and the value, None when it does not match.
fn scan_one(
    conv: char,
    s: &str,
    max: usize,
    set: Option<&(bool, Vec<char>)>,
) -> Option<(usize, Value)> {
    let int_re = |radix: &str| -> Option<(usize, Value)> {
        let pat = match radix {
            "d" | "u" => r"^[-+]?\d+",
            "x" => r"^[-+]?(0[xX])?[0-9a-fA-F]+",
            "o" => r"^[-+]?[0-7]+",
            _ => r"^[-+]?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9]\d*)",
        };
        let m = regex::Regex::new(pat).ok()?.find(s)?;
        let t = m.as_str();
        let (neg, body) = match t.strip_prefix('-') {
            Some(b) => (true, b),
            None => (false, t.trim_start_matches('+')),
        };
        let (radix, digits) = match radix {
            "x" => (16, body.trim_start_matches("0x").trim_start_matches("0X")),
            "o" => (8, body),
            "i" if body.len() > 1 && (body.starts_with("0x") || body.starts_with("0X")) => {
                (16, &body[2..])
            }
            "i" if body.len() > 1 && body.starts_with('0') => (8, &body[1..]),
            _ => (10, body),
        };
        let n = i64::from_str_radix(digits, radix).ok()?;
        Some((t.chars().count(), Value::Int(if neg { -n } else { n })))
    };
    match conv {
        'd' | 'u' => int_re("d"),
        'i' => int_re("i"),
        'x' | 'X' => int_re("x"),
        'o' => int_re("o"),
        'f' | 'e' | 'E' | 'g' | 'G' | 'a' | 'A' => {
            // Ruby's pattern: an integer not followed by a digit or a
            // dot, or a decimal with an optional exponent.
            let re =
                fancy_regex::Regex::new(r"^[-+]?(\d+(?![\d.])|\d*\.\d*([eE][-+]?\d+)?)").ok()?;
            let t = re.find(s).ok()??.as_str();
            let value = t
                .trim_end_matches('.')
                .parse::<f64>()
                .or_else(|_| t.replace(".e", "e").replace(".E", "E").parse::<f64>())
                .unwrap_or(0.0);
            Some((t.chars().count(), Value::Float(value)))
        }
        's' => {
            let t: String = s.chars().take_while(|c| !c.is_whitespace()).collect();
            (!t.is_empty()).then(|| (t.chars().count(), Value::Str(t)))
        }
        'c' => {
            let n = if max == usize::MAX { 1 } else { max };
            let t: String = s.chars().take(n).collect();
            (t.chars().count() == n).then_some((n, Value::Str(t)))
        }
        '[' => {
            let (negate, chars) = set?;
            let t: String = s
                .chars()
                .take_while(|c| chars.contains(c) != *negate)
                .collect();
            (!t.is_empty()).then(|| (t.chars().count(), Value::Str(t)))
        }
        _ => None,
    }
}
