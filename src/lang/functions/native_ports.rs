//! Native ports of more module functions written in Ruby:
//! openstack_extras's `validate_yum_hash` (yumrepo parameters in a hash
//! of repositories), staging's `staging_parse` (a part of a file URI's
//! path: file name, base name, extension, parent directory, with Ruby's
//! `URI.parse` and `File` rules) and `scope_defaults` (whether a resource
//! default for a type's attribute is visible here), and vswitch's
//! `range_to_mask` (a CPU list such as `0-3,8` as a hexadecimal mask). Each gives its Ruby
//! original's results and messages, Ruby's own errors included where
//! module code can reach them.

use crate::lang::error::{LangError, plain};
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::functions::native_modules::no_method;
use crate::lang::functions::random::ruby_to_i;
use crate::lang::functions::stdlib::arg_3x;
use crate::lang::functions::{Builder, Family, any, sig};
use crate::lang::template::erb::value::{class_name, inspect, to_s};
use crate::lang::values::types::{self, PType};
use crate::lang::values::value::Value;

pub fn register(b: &mut Builder) {
    let f = Family::Native;
    b.add(
        &["validate_yum_hash"],
        f,
        sig("Any").rest("args", any()),
        validate_yum_hash,
    );
    b.add(
        &["staging_parse"],
        f,
        sig("String").rest("args", any()),
        staging_parse,
    );
    b.add(
        &["scope_defaults"],
        f,
        sig("Boolean").rest("args", any()),
        scope_defaults,
    );
    // Its three dispatches (an empty string, a CPU list, undef) are
    // checked in the function, for Puppet's message about all three.
    b.add(
        &["range_to_mask"],
        f,
        sig("Optional[String]").req("range", any()),
        range_to_mask,
    );
}

/// The parameters Puppet's yumrepo type has, as the function lists them.
const YUMREPO_PARAMS: &[&str] = &[
    "name",
    "ensure",
    "baseurl",
    "cost",
    "descr",
    "enabled",
    "enablegroups",
    "exclude",
    "failovermethod",
    "gpgcheck",
    "gpgkey",
    "http_caching",
    "include",
    "includepkgs",
    "keepalive",
    "metadata_expire",
    "metalink",
    "mirrorlist",
    "priority",
    "protect",
    "provider",
    "proxy",
    "proxy_password",
    "proxy_username",
    "repo_gpgcheck",
    "s3_enabled",
    "skip_if_unavailable",
    "sslcacert",
    "sslclientcert",
    "sslclientkey",
    "sslverify",
    "target",
    "timeout",
];

/// openstack_extras's `validate_yum_hash(repos)`: every key of every
/// repository's parameters is a yumrepo parameter. Returns the hash when
/// it has repositories (Ruby's `each` result), else undef.
fn validate_yum_hash(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    if c.args.len() > 1 {
        return Err(plain(format!(
            "validate_yum_hash takes only a single argument, {} provided",
            c.args.len()
        ))
        .into());
    }
    let Value::Hash(repos) = c.arg(0) else {
        return Err(plain("non-hash argument provided to validate_yum_hash").into());
    };
    if repos.is_empty() {
        return Ok(Value::Undef);
    }
    for (_, params) in &repos {
        // Ruby's `params.each do |param, value|`: a hash gives its keys,
        // an array its elements (the first of an inner array).
        let names: Vec<Value> = match params {
            Value::Hash(h) => h.iter().map(|(k, _)| k.clone()).collect(),
            Value::Array(a) => a
                .iter()
                .map(|e| match e {
                    Value::Array(inner) => inner.first().cloned().unwrap_or(Value::Undef),
                    other => other.clone(),
                })
                .collect(),
            other => return Err(no_method("each", other).into()),
        };
        for name in names {
            if !matches!(&name, Value::Str(s) if YUMREPO_PARAMS.contains(&s.as_str())) {
                return Err(plain(format!(
                    "Parameter {} is not valid for the yumrepo type",
                    to_s(&name)
                ))
                .into());
            }
        }
    }
    Ok(Value::Hash(repos))
}

/// staging's `staging_parse(source[, info[, extension]])` (3.x: an undef
/// argument is `''`, which Ruby counts as given).
fn staging_parse(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let n = c.args.len();
    if !(1..=3).contains(&n) {
        return Err(plain(format!(
            "staging_parse(): Wrong number of arguments given ({n} for 1, 2, 3)"
        ))
        .into());
    }
    let source = arg_3x(&c.arg(0));
    let Value::Str(src) = &source else {
        return Err(no_method("gsub", &source).into());
    };
    let path = uri_path(&src.replace('\\', "/"))?.ok_or_else(|| {
        plain(format!(
            "staging_parse(): {} has no URI 'path' component",
            inspect(&source)
        ))
    })?;
    let info = c.args.get(1).map_or(Value::str("filename"), arg_3x);
    let result = match info {
        Value::Str(s) if s == "filename" => basename(&path, None),
        Value::Str(s) if s == "basename" => {
            let ext = match c.args.get(2).map(arg_3x) {
                None => extname(&path),
                Some(Value::Str(e)) => e,
                Some(other) => {
                    return Err(plain(format!(
                        "no implicit conversion of {} into String",
                        class_name(&other)
                    ))
                    .into());
                }
            };
            basename(&path, Some(&ext))
        }
        Value::Str(s) if s == "extname" => extname(&path),
        Value::Str(s) if s == "parent" => parent(&path),
        other => {
            return Err(plain(format!(
                "staging_parse(), unknown parse info {}.",
                to_s(&other)
            ))
            .into());
        }
    };
    Ok(Value::Str(result))
}

/// staging's `scope_defaults(type, attribute)` (3.x): whether a resource
/// default (`Exec { path => ... }`) for the attribute is visible from the
/// calling scope.
fn scope_defaults(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    if c.args.len() != 2 {
        return Err(plain(format!(
            "scope_defaults(): Wrong number of arguments given ({} for 2)",
            c.args.len()
        ))
        .into());
    }
    let ty = match c.arg(0) {
        Value::Undef => String::new(),
        Value::Str(s) => s,
        other => return Err(no_method("split", &other).into()),
    };
    // Ruby's `capitalize` on each segment: the rest in lower case.
    let ty: Vec<String> = ty
        .split("::")
        .map(|seg| {
            let mut ch = seg.chars();
            ch.next().map_or(String::new(), |f| {
                f.to_uppercase()
                    .chain(ch.flat_map(char::to_lowercase))
                    .collect()
            })
        })
        .collect();
    let attr = c.arg(1).to_s();
    let found = ev
        .visible_defaults(c.scope, &ty.join("::"))
        .iter()
        .any(|(n, _)| *n == attr);
    Ok(Value::Bool(found))
}

/// The path of a URI as Ruby's `URI.parse(s).path` gives it: `None` for
/// an opaque URI (`mailto:x`), Ruby's error for text that is no URI.
fn uri_path(s: &str) -> Result<Option<String>, LangError> {
    let bad = || plain(format!("bad URI(is not URI?): {}", inspect(&Value::str(s))));
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let hex = |k: usize| b.get(k).is_some_and(u8::is_ascii_hexdigit);
                if !(hex(i + 1) && hex(i + 2)) {
                    return Err(bad());
                }
                i += 3;
                continue;
            }
            c if c.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,;=".contains(&c) => {}
            _ => return Err(bad()),
        }
        i += 1;
    }
    let end = s.find(['?', '#']).unwrap_or(s.len());
    let before = &s[..end];
    let scheme = before.split_once(':').filter(|(sc, _)| {
        let mut ch = sc.chars();
        ch.next().is_some_and(|c| c.is_ascii_alphabetic())
            && ch.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    });
    let (scheme, rest) = match scheme {
        Some((sc, rest)) => (Some(sc.to_ascii_lowercase()), rest),
        None => (None, before),
    };
    let path = match rest.strip_prefix("//") {
        Some(auth) => auth.find('/').map_or("", |p| &auth[p..]),
        // URI::MailTo wants an address before any `?`.
        None if scheme.as_deref() == Some("mailto") && !rest.contains('@') && !rest.is_empty() => {
            return Err(plain(format!(
                "unrecognised opaque part for mailtoURL: {}",
                &s[s.find(':').map_or(0, |p| p + 1)..]
            )));
        }
        None if scheme.is_some() && !rest.starts_with('/') => return Ok(None),
        None => rest,
    };
    // URI::FTP keeps the path without its leading slash.
    if scheme.as_deref() == Some("ftp") {
        return Ok(Some(path.strip_prefix('/').unwrap_or(path).to_string()));
    }
    Ok(Some(path.to_string()))
}

/// Ruby's `File.basename(path[, suffix])`.
fn basename(path: &str, suffix: Option<&str>) -> String {
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return if path.is_empty() { "" } else { "/" }.to_string();
    }
    let base = trimmed.rsplit('/').next().unwrap_or(trimmed);
    match suffix {
        Some(".*") => {
            let ext = extname(base);
            base[..base.len() - ext.len()].to_string()
        }
        Some(sfx) if !sfx.is_empty() && base != sfx && base.ends_with(sfx) => {
            base[..base.len() - sfx.len()].to_string()
        }
        _ => base.to_string(),
    }
}

/// Ruby's `File.extname(path)`: from the last dot of the base name, not
/// counting its leading dots (`.bashrc` has none; `x.` has `.`).
pub(crate) fn extname(path: &str) -> String {
    let base = basename(path, None);
    let rest = base.trim_start_matches('.');
    rest.rfind('.')
        .map_or(String::new(), |p| rest[p..].to_string())
}

/// Ruby's `File.expand_path(File.join(path, '..'))`: the parent
/// directory, absolute (a relative path is taken from the working
/// directory, as the Ruby's is).
fn parent(path: &str) -> String {
    let joined = if path.ends_with('/') {
        format!("{path}..")
    } else {
        format!("{path}/..")
    };
    let full = if joined.starts_with('/') {
        joined
    } else {
        let cwd = std::env::current_dir().map_or_else(|_| "/".into(), |d| d.display().to_string());
        format!("{cwd}/{joined}")
    };
    let mut parts: Vec<&str> = Vec::new();
    for seg in full.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    format!("/{}", parts.join("/"))
}

/// The highest CPU number a mask may name (a guard against a range that
/// would take Ruby minutes to expand).
const MAX_CPU: i64 = 1 << 20;

/// vswitch's `range_to_mask(range)`: undef for undef or an empty string;
/// otherwise the CPUs of a list like `0-3,8` as a hexadecimal mask, each
/// item read as Ruby's `to_i` reads it (an empty one is CPU 0).
fn range_to_mask(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let dispatches = PType::Pattern(vec!["^$".into(), r"^[0-9\-\,]".into()]);
    let range = match c.arg(0) {
        Value::Undef => return Ok(Value::Undef),
        Value::Str(s) if types::is_instance(&dispatches, &Value::Str(s.clone())) => s,
        other => {
            let got = match &other {
                Value::Str(s) => format!("'{s}'"),
                v => v.type_name(),
            };
            return Err(plain(format!(
                "'range_to_mask' parameter 'range' expects an undef value or a match for {dispatches}, got {got}"
            ))
            .into());
        }
    };
    if crate::lang::values::regex::RubyRegex::new("^$")?.is_match(&range) {
        return Ok(Value::Undef);
    }
    let too_big = || {
        plain(format!(
            "range_to_mask: CPU numbers above {MAX_CPU} are not supported"
        ))
    };
    let mut items: Vec<String> = Vec::new();
    for item in ruby_split_comma(&range) {
        if !item.contains('-') {
            items.push(item.to_string());
            continue;
        }
        let ends: Vec<i64> = ruby_split(item, '-')
            .iter()
            .map(|p| ruby_to_i(&Value::str(*p)))
            .collect();
        let lo = ends.first().copied().unwrap_or(0);
        let Some(&hi) = ends.get(1) else {
            return Err(plain("cannot convert endless range to an array").into());
        };
        if hi > MAX_CPU {
            return Err(too_big().into());
        }
        let expanded: Vec<String> = (lo..=hi).map(|n| n.to_string()).collect();
        items.push(expanded.join(","));
    }
    let mut bits: Vec<u64> = Vec::new();
    for item in ruby_split_comma(&items.join(",")) {
        let n = ruby_to_i(&Value::str(item));
        if n > MAX_CPU {
            return Err(too_big().into());
        }
        // Ruby's `1 << n` with a negative n is 0.
        let Ok(n) = usize::try_from(n) else { continue };
        if bits.len() <= n / 64 {
            bits.resize(n / 64 + 1, 0);
        }
        if let Some(word) = bits.get_mut(n / 64) {
            *word |= 1 << (n % 64);
        }
    }
    while bits.len() > 1 && bits.last() == Some(&0) {
        bits.pop();
    }
    let mut hex = String::new();
    for (i, word) in bits.iter().rev().enumerate() {
        if i == 0 {
            hex.push_str(&format!("{word:x}"));
        } else {
            hex.push_str(&format!("{word:016x}"));
        }
    }
    if hex.is_empty() {
        hex.push('0');
    }
    Ok(Value::Str(hex))
}

/// Ruby's `String#split(sep)` with a one-character separator: trailing
/// empty fields dropped.
fn ruby_split(s: &str, sep: char) -> Vec<&str> {
    let mut parts: Vec<&str> = s.split(sep).collect();
    while parts.last() == Some(&"") {
        parts.pop();
    }
    parts
}

fn ruby_split_comma(s: &str) -> Vec<&str> {
    ruby_split(s, ',')
}
