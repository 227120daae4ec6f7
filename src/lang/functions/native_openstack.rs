//! Native ports of the OpenStack modules' functions written in Ruby:
//! ironic's `ipv6_normalize_dnsmasq_ip_subnets` (IPv6 netmasks as prefix
//! lengths, IPv6 gateways dropped), murano's `get_ext_net_name` (the
//! network whose L2 part has `router_ext`), nova's
//! `to_array_of_json_strings` (hashes, or JSON text, as an array of JSON
//! strings), openstacklib's `inet6_prefix` (IPv6 addresses as
//! `inet6:[ADDR]`) and `os_database_connection` (an SQLAlchemy URL built
//! as Ruby's `URI::Generic.build` builds and checks it). Each gives its
//! Ruby original's results and messages (Ruby's `IPAddr` rules for what
//! an address is), Ruby's own errors included where module code can
//! reach them.

use crate::lang::error::{LangError, plain};
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::functions::native_misc::hash_put;
use crate::lang::functions::native_modules::{Ordered, no_method};
use crate::lang::functions::random::ruby_to_i;
use crate::lang::functions::stdlib::arity;
use crate::lang::functions::{Builder, Family, any, sig};
use crate::lang::template::erb::value::{class_name, to_s};
use crate::lang::values::value::Value;

pub fn register(b: &mut Builder) {
    let f = Family::Native;
    b.add(
        &["ipv6_normalize_dnsmasq_ip_subnets"],
        f,
        sig("Any").req("args", any()),
        ipv6_normalize_dnsmasq_ip_subnets,
    );
    b.add(
        &["get_ext_net_name"],
        f,
        sig("Any").rest("args", any()),
        get_ext_net_name,
    );
    b.add(
        &["to_array_of_json_strings"],
        f,
        sig("Any").rest("args", any()),
        to_array_of_json_strings,
    );
    b.add(
        &["inet6_prefix"],
        f,
        sig("Any").rest("args", any()),
        inet6_prefix,
    );
    b.add(
        &["os_database_connection"],
        f,
        sig("Any").rest("args", any()),
        os_database_connection,
    );
}

/// An address as Ruby's `IPAddr.new(text)` reads it: whether it is IPv6,
/// and its value with the prefix (`/64` or `/ffff::`) applied. None where
/// `IPAddr` raises one of its own errors.
pub(crate) fn ruby_ipaddr(text: &str) -> Option<(bool, u128)> {
    let (mut prefix, len) = match text.split_once('/') {
        Some((p, l)) => (p, Some(l)),
        None => (text, None),
    };
    let mut v6_only = false;
    if let Some(inner) = prefix.strip_prefix('[').and_then(|p| p.strip_suffix(']')) {
        prefix = inner;
        v6_only = true;
    }
    if let Some(at) = prefix.rfind('%') {
        let zone = &prefix[at + 1..];
        if !zone.is_empty() && zone.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            prefix = &prefix[..at];
            v6_only = true;
        }
    }
    let v4 = if v6_only { None } else { ruby_ipv4(prefix)? };
    let (v6, addr) = match v4 {
        Some(a) => (false, u128::from(a)),
        None => (true, u128::from(prefix.parse::<std::net::Ipv6Addr>().ok()?)),
    };
    let bits = if v6 { 128 } else { 32 };
    let full = if v6 { u128::MAX } else { u128::from(u32::MAX) };
    let mask = match len {
        None => full,
        Some(l) if !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()) => {
            if l.len() > 1 && l.starts_with('0') {
                return None;
            }
            let n: u32 = l.parse().ok().filter(|&n| n <= bits)?;
            if n == 0 {
                0
            } else {
                (full >> (bits - n)) << (bits - n) & full
            }
        }
        Some(l) => {
            let (mv6, m) = ruby_ipaddr(l)?;
            let inverted = m ^ full;
            if mv6 != v6 || (inverted.wrapping_add(1) & inverted) != 0 {
                return None;
            }
            m
        }
    };
    Some((v6, addr & mask))
}

/// Ruby's IPv4 reading: Ok(None) when the text is not four dotted
/// numbers, None (an error) for an octet over 255 or with a leading zero.
fn ruby_ipv4(s: &str) -> Option<Option<u32>> {
    let octets: Vec<&str> = s.split('.').collect();
    if octets.len() != 4
        || octets
            .iter()
            .any(|o| o.is_empty() || !o.bytes().all(|b| b.is_ascii_digit()))
    {
        return Some(None);
    }
    let mut out = 0u32;
    for o in octets {
        let n: u32 = o.parse().ok().filter(|&n| n < 256)?;
        if o.len() > 1 && o.starts_with('0') {
            return None;
        }
        out = out << 8 | n;
    }
    Some(Some(out))
}

/// The IPv6-ness of a value as `IPAddr.new(v).ipv6?`: None where
/// `IPAddr.new` raises (not a string, or no address).
fn is_ipv6(v: &Value) -> Option<bool> {
    match v {
        Value::Str(s) => ruby_ipaddr(s).map(|(v6, _)| v6),
        _ => None,
    }
}

fn truthy(v: &Value) -> bool {
    !matches!(v, Value::Undef | Value::Bool(false))
}

/// Ruby's `hash[key]` on a value: a hash's entry; a string's `key` when
/// it contains it; Ruby's errors for what has no `[]` with a string.
pub(crate) fn ruby_index(v: &Value, key: &str) -> Result<Value, LangError> {
    match v {
        Value::Hash(h) => Ok(h
            .iter()
            .find(|(k, _)| matches!(k, Value::Str(s) if s == key))
            .map_or(Value::Undef, |(_, v)| v.clone())),
        Value::Str(s) => Ok(if s.contains(key) {
            Value::str(key)
        } else {
            Value::Undef
        }),
        Value::Array(_) | Value::Int(_) => {
            Err(plain("no implicit conversion of String into Integer"))
        }
        other => Err(no_method("[]", other)),
    }
}

/// ironic's `ipv6_normalize_dnsmasq_ip_subnets(subnets)`: each subnet hash
/// with an IPv6 `netmask` as its prefix length and an IPv6 `gateway`
/// removed.
fn ipv6_normalize_dnsmasq_ip_subnets(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let items = match c.arg(0) {
        Value::Array(a) => a,
        Value::Hash(h) => h
            .into_iter()
            .map(|(k, v)| Value::Array(vec![k, v]))
            .collect(),
        other => return Err(no_method("each", &other).into()),
    };
    let mut out = Vec::with_capacity(items.len());
    for subnet in items {
        let mut copy = subnet.clone();
        let netmask = ruby_index(&subnet, "netmask")?;
        if truthy(&netmask) && is_ipv6(&netmask) == Some(true) {
            let prefix = netmask
                .as_str()
                .and_then(ruby_ipaddr)
                .map_or(0, |(_, a)| a.count_ones());
            if let Value::Hash(h) = &mut copy {
                hash_put(h, Value::str("netmask"), Value::Int(i64::from(prefix)));
            }
        }
        let gateway = ruby_index(&subnet, "gateway")?;
        if truthy(&gateway)
            && is_ipv6(&gateway) == Some(true)
            && let Value::Hash(h) = &mut copy
        {
            h.retain(|(k, _)| !matches!(k, Value::Str(s) if s == "gateway"));
        }
        out.push(copy);
    }
    Ok(Value::Array(out))
}

/// murano's `get_ext_net_name(networks)`: the name of the first network
/// whose `L2` hash has a true `router_ext`; undef when none has.
fn get_ext_net_name(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let Value::Hash(networks) = c.arg(0) else {
        return Err(plain("get_ext_net_name(): No network data provided!").into());
    };
    for (name, net) in networks {
        let l2 = match &net {
            Value::Hash(h) => h
                .iter()
                .find(|(k, _)| matches!(k, Value::Str(s) if s == "L2"))
                .map_or(Value::Hash(Vec::new()), |(_, v)| v.clone()),
            Value::Array(_) => {
                return Err(plain("no implicit conversion of String into Integer").into());
            }
            other => return Err(no_method("fetch", other).into()),
        };
        if truthy(&ruby_index(&l2, "router_ext")?) {
            return Ok(name);
        }
    }
    Ok(Value::Undef)
}

/// nova's `to_array_of_json_strings(list)`: an array of hashes (or JSON
/// text holding one hash or an array of them; single quotes accepted
/// with a deprecation warning) as the JSON text of each hash.
fn to_array_of_json_strings(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    if c.args.len() != 1 {
        return Err(plain("to_array_of_json_strings(): Wrong number of arguments").into());
    }
    let arg = c.arg(0);
    let mut list = arg.clone();
    if let Value::Str(text) = &arg {
        let parsed = match ruby_json_load(text) {
            Some(v) => v,
            None => match ruby_json_load(&text.replace('\'', "\"")) {
                Some(v) => {
                    ev.messages.push(format!(
                        "warning: {text} is not valid JSON. Support for this format is deprecated and may be removed in future."
                    ));
                    v
                }
                None => {
                    return Err(plain(format!("Syntax error: {text} is not valid")).into());
                }
            },
        };
        list = match parsed {
            a @ Value::Array(_) => a,
            other => Value::Array(vec![other]),
        };
    }
    match list {
        Value::Array(items) if items.iter().all(|e| matches!(e, Value::Hash(_))) => Ok(
            Value::Array(items.iter().map(|e| Value::Str(ruby_json(e))).collect()),
        ),
        _ => Err(plain(format!(
            "Syntax error: {} is not an Array or JSON encoded String",
            to_s(&arg)
        ))
        .into()),
    }
}

/// Ruby's `JSON.load(text)`: blank text is nil; None when it does not parse.
fn ruby_json_load(text: &str) -> Option<Value> {
    if text.is_empty() {
        return Some(Value::Undef);
    }
    serde_json::from_str::<Ordered>(text).ok().map(|o| o.0)
}

/// Ruby's `to_json` of a value: compact, keys in their order.
fn ruby_json(v: &Value) -> String {
    let quote = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    match v {
        Value::Undef => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(_) => to_s(v),
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(ruby_json).collect::<Vec<_>>().join(",")
        ),
        Value::Hash(h) => format!(
            "{{{}}}",
            h.iter()
                .map(|(k, v)| format!("{}:{}", quote(&to_s(k)), ruby_json(v)))
                .collect::<Vec<_>>()
                .join(",")
        ),
        other => quote(&to_s(other)),
    }
}

/// Whether a string holds a line `inet6:` and more (Ruby's `/^inet6:.+/`).
fn has_inet6_line(s: &str) -> bool {
    s.split('\n')
        .any(|l| l.len() > "inet6:".len() && l.starts_with("inet6:"))
}

/// openstacklib's `inet6_prefix(addresses)`: each IPv6 address (with an
/// optional `[...]` and what follows it) as `inet6:[ADDR]REST`; other
/// values as they are. One address in, one out.
fn inet6_prefix(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let args = match c.args.first() {
        Some(Value::Array(a)) => a.clone(),
        _ => c.args.clone(),
    };
    let mut result: Vec<Value> = args.iter().map(inet6_one).collect();
    if result.len() == 1 {
        return Ok(result.remove(0));
    }
    Ok(Value::Array(result))
}

fn inet6_one(ip: &Value) -> Value {
    let Value::Str(s) = ip else {
        return ip.clone();
    };
    if has_inet6_line(s) {
        return ip.clone();
    }
    let parts: Vec<&str> = s
        .split(|ch: char| ch.is_ascii_whitespace() || ch == '\u{b}' || ch == '[' || ch == ']')
        .filter(|p| !p.is_empty())
        .collect();
    match parts.split_first() {
        Some((first, rest)) if ruby_ipaddr(first).is_some_and(|(v6, _)| v6) => {
            Value::Str(format!("inet6:[{first}]{}", rest.concat()))
        }
        _ => ip.clone(),
    }
}

/// ERB's `url_encode`: every byte but letters, digits and `_-.~` as `%XX`.
fn url_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Whether every character is one `allowed` accepts or a `%XX` escape.
fn uri_chars(s: &str, allowed: fn(u8) -> bool) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && b.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
            && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
        {
            i += 3;
        } else if allowed(b[i]) {
            i += 1;
        } else {
            return false;
        }
    }
    true
}

/// The characters of a URI path segment (RFC 3986 `pchar`).
fn pchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!$&'()*+,-.:;=@_~".contains(&b)
}

/// The characters of a URI host name (RFC 3986 `reg-name`).
fn reg_name(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!$&'()*+,-.;=_~".contains(&b)
}

fn bad_component(what: &str, v: &str) -> LangError {
    plain(format!("bad component(expected {what} component): {v}"))
}

/// Ruby's `URI::Generic#query=`: tabs and line breaks dropped, other
/// characters a query may not hold escaped.
fn uri_query(q: &str) -> Result<String, LangError> {
    let b: Vec<u8> = q.bytes().filter(|b| !b"\t\r\n".contains(b)).collect();
    for w in b.windows(3) {
        if w[0] == b'%' && !w[1].is_ascii_hexdigit() && !w[2].is_ascii_hexdigit() {
            return Err(plain(format!(
                "invalid percent escape: {}",
                String::from_utf8_lossy(w)
            )));
        }
    }
    let mut out = String::new();
    for &c in &b {
        let keep = matches!(c, b'!' | b'$'..=b'&' | b'('..=b';' | b'=' | b'?'..=b'_' | b'a'..=b'~');
        if keep {
            out.push(char::from(c));
        } else {
            out.push_str(&format!("%{c:02X}"));
        }
    }
    Ok(out)
}

/// openstacklib's `os_database_connection(parts)`: the database URL of a
/// hash of `dialect`, `host`, `port`, `database`, `username`, `password`,
/// `charset` and `extra` (query parameters).
fn os_database_connection(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let err = |m: String| -> EvalResult<Value> {
        Err(plain(format!("os_database_connection(): {m}")).into())
    };
    arity(&c, "os_database_connection", 1)?;
    let Value::Hash(v) = c.arg(0) else {
        return err(format!("Requires an hash, got {}", class_name(&c.arg(0))));
    };
    for (k, val) in &v {
        let extra = matches!(k, Value::Str(s) if s == "extra");
        let ok = if extra {
            matches!(val, Value::Hash(_))
        } else {
            matches!(val, Value::Str(_))
        };
        if !ok {
            let klass = if extra { "Hash" } else { "String" };
            return err(format!("{} should be a {klass}", to_s(k)));
        }
    }
    let get = |key: &str| {
        v.iter()
            .find(|(k, _)| matches!(k, Value::Str(s) if s == key))
            .map(|(_, v)| v.clone())
    };
    let text = |key: &str| get(key).map(|v| to_s(&v));
    let Some(dialect) = text("dialect") else {
        return err("dialect is required".into());
    };
    let host = text("host");
    let Some(database) = text("database") else {
        return err("database is required".into());
    };
    let port = match get("port") {
        Some(p) if host.is_some() => Some(ruby_to_i(&p)),
        Some(_) => return err("host is required with port".into()),
        None => None,
    };
    let mut userinfo = None;
    if let Some(user) = text("username").filter(|u| !u.is_empty()) {
        let mut u = url_encode(&user);
        if let Some(pass) = text("password").filter(|p| !p.is_empty()) {
            u.push(':');
            u.push_str(&url_encode(&pass));
        }
        userinfo = Some(u);
    }
    let mut extra: Vec<(Value, Value)> = match get("extra") {
        Some(Value::Hash(h)) => h,
        _ => Vec::new(),
    };
    if let Some(charset) = get("charset") {
        hash_put(&mut extra, Value::str("charset"), charset);
    }
    let query = (!extra.is_empty()).then(|| {
        extra
            .iter()
            .map(|(k, v)| format!("{}={}", to_s(k), to_s(v)))
            .collect::<Vec<_>>()
            .join("&")
    });
    let path = match host {
        Some(_) => format!("/{database}"),
        None => format!("///{database}"),
    };
    // URI::Generic.build: each part checked, the scheme in lower case.
    let scheme_ok = dialect.starts_with(|ch: char| ch.is_ascii_alphabetic())
        && dialect
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
    if !scheme_ok {
        return Err(bad_component("scheme", &dialect).into());
    }
    let scheme = dialect.to_ascii_lowercase();
    let host = host.map(|h| {
        if h.contains(':') && !(h.starts_with('[') && h.ends_with(']')) {
            format!("[{h}]")
        } else {
            h
        }
    });
    if let Some(h) = &host {
        let literal = h
            .strip_prefix('[')
            .and_then(|x| x.strip_suffix(']'))
            .is_some_and(|x| x.parse::<std::net::Ipv6Addr>().is_ok());
        if !literal && !uri_chars(h, reg_name) {
            return Err(bad_component("host", h).into());
        }
    }
    let path_ok = scheme == "ftp"
        || path
            .strip_prefix('/')
            .is_some_and(|p| p.split('/').all(|seg| uri_chars(seg, pchar)));
    if !path_ok {
        return Err(bad_component("absolute path", &path).into());
    }
    let query = query.map(|q| uri_query(&q)).transpose()?;
    let mut out = format!("{scheme}:");
    if host.is_some() || scheme == "file" || scheme == "postgres" {
        out.push_str("//");
    }
    if let Some(u) = userinfo {
        out.push_str(&u);
        out.push('@');
    }
    if let Some(h) = &host {
        out.push_str(h);
    }
    if let Some(p) = port {
        out.push_str(&format!(":{p}"));
    }
    out.push_str(&path);
    if let Some(q) = query {
        out.push('?');
        out.push_str(&q);
    }
    Ok(Value::Str(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_addresses_as_ruby_ipaddr_does() {
        assert_eq!(ruby_ipaddr("10.0.0.1"), Some((false, 0x0a00_0001)));
        assert_eq!(ruby_ipaddr("010.0.0.1"), None);
        assert_eq!(ruby_ipaddr("fe80::1%eth0").map(|a| a.0), Some(true));
        assert_eq!(
            ruby_ipaddr("ffff:ffff:ffff:ffff::").map(|a| a.1.count_ones()),
            Some(64)
        );
        assert_eq!(ruby_ipaddr("[::1]/129"), None);
        assert_eq!(
            ruby_ipaddr("ffff::/ffff::").map(|a| a.1.count_ones()),
            Some(16)
        );
        assert_eq!(ruby_ipaddr("[1.2.3.4]"), None);
        assert_eq!(ruby_ipaddr("host"), None);
    }
}
