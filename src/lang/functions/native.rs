//! Native implementations of well-known module functions. Some popular
//! modules ship functions written in Ruby (`lib/puppet/functions`), which
//! ferry cannot run; the small, pure ones that common modules call while
//! compiling are implemented here in Rust with the same results:
//! `apache::bool2httpd`, `apache::pw_hash` (and the older
//! `apache::apache_pw_hash`, `apache_pw_hash`, `bool2httpd` names),
//! `mysql::password` (and `mysql_password`), `mysql::strip_hash`,
//! `postgresql::postgresql_password` and `postgresql::postgresql_escape`
//! (and their unqualified names), openstacklib's `is_service_default`,
//! neutron's `validate_network_vlan_ranges`, `validate_tunnel_id_ranges`,
//! `validate_vni_ranges` and `validate_vxlan_udp_port`, and stdlib's
//! `validate_legacy`, `validate_absolute_path`, `is_absolute_path`, `grep`,
//! `get_module_path` and `dig44`, redis's `getvar_emptystring`,
//! memcached's `memcached::max_memory`, datacat's `template_body`,
//! openstacklib's `normalize_ip_for_uri` and `os_transport_url`, mcollective's
//! `mco_array_to_string`, neutron's `convert_to_json_string` and stdlib's
//! `is_ip_address`.
//! They are only reached when no Puppet-language function of that name was
//! found, so a module's own `.pp` function always wins.

use base64::Engine as _;
use md5::Md5;
use sha1::{Digest, Sha1};

use crate::lang::error::plain;
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::functions::{Builder, Family, any, sig, string};
use crate::lang::values::types::{self, PType};
use crate::lang::values::value::{Value, hash_get_str};

pub fn register(b: &mut Builder) {
    let f = Family::Native;
    b.add(
        &["memcached::max_memory"],
        f,
        sig("Integer").req("arg", any()),
        memcached_max_memory,
    );
    b.add(
        &["template_body"],
        f,
        sig("String").rest("files", any()),
        template_body,
    );
    b.add(
        &["mco_array_to_string"],
        f,
        sig("Array").rest("args", any()),
        |_, c| match c.arg(0) {
            Value::Array(a) => Ok(Value::Array(
                a.iter().map(|v| Value::Str(v.to_s())).collect(),
            )),
            other => Err(plain(format!(
                "Expected an array, but got a {}",
                crate::lang::functions::stdlib::ruby_class(&other)
            ))
            .into()),
        },
    );
    b.add(
        &["convert_to_json_string"],
        f,
        sig("String").rest("args", any()),
        |_, c| Ok(Value::Str(convert_to_json_string(&c.arg(0)))),
    );
    b.add(
        &["is_ip_address"],
        f,
        sig("Boolean").rest("args", any()),
        |_, c| {
            if c.args.len() != 1 {
                return Err(plain(format!(
                    "is_ip_address(): Wrong number of arguments given {} for 1",
                    c.args.len()
                ))
                .into());
            }
            Ok(Value::Bool(matches!(c.arg(0), Value::Str(s) if is_ip(&s))))
        },
    );
    b.add(
        &["os_transport_url"],
        f,
        sig("String").rest("args", any()),
        |_, c| os_transport_url(&c.args),
    );
    b.add(
        &["normalize_ip_for_uri"],
        f,
        sig("Any").rest("args", any()),
        |_, c| Ok(normalize_ip_for_uri(&c.args)),
    );
    let password = || PType::Variant(vec![string(), PType::Sensitive(Box::new(string()))]);
    b.add(
        &["apache::bool2httpd", "bool2httpd"],
        f,
        sig("String").req("arg", any()),
        |_, c| Ok(bool2httpd(&c.arg(0))),
    );
    b.add(
        &[
            "apache::pw_hash",
            "apache::apache_pw_hash",
            "apache_pw_hash",
        ],
        f,
        sig("String").req("password", password()),
        pw_hash,
    );
    b.add(
        &["mysql::password", "mysql_password"],
        f,
        sig("String").req("password", password()),
        |_, c| {
            Ok(Value::Str(mysql_password(
                &unwrap_sensitive(c.arg(0)).to_s(),
            )))
        },
    );
    b.add(
        &["mysql::strip_hash"],
        f,
        sig("Hash").req(
            "hash",
            PType::Hash(Box::new(PType::Any), Box::new(PType::Any), 0, i64::MAX),
        ),
        strip_hash,
    );
    let name_or_number = || {
        PType::Variant(vec![
            PType::String(1, i64::MAX),
            PType::Integer(i64::MIN, i64::MAX),
        ])
    };
    b.add(
        &["postgresql::postgresql_password", "postgresql_password"],
        f,
        sig("String")
            .req("username", name_or_number())
            .req("password", name_or_number()),
        |_, c| {
            // PostgreSQL's md5 password form: 'md5' + md5(password + username).
            let digest = <Md5 as md5::Digest>::digest(
                format!("{}{}", c.arg(1).to_s(), c.arg(0).to_s()).as_bytes(),
            );
            Ok(Value::Str(format!("md5{}", hex(&digest))))
        },
    );
    b.add(
        &["postgresql::postgresql_escape", "postgresql_escape"],
        f,
        sig("String").req("input_string", PType::String(1, i64::MAX)),
        |_, c| Ok(Value::Str(postgresql_escape(&c.arg(0).to_s()))),
    );
    b.add(
        &["validate_absolute_path"],
        f,
        sig("Undef").rest("paths", any()),
        validate_absolute_path,
    );
    b.add(
        &["is_absolute_path"],
        f,
        sig("Boolean").req("path", any()),
        |_, c| {
            Ok(Value::Bool(
                matches!(c.arg(0), Value::Str(s) if is_absolute(&s)),
            ))
        },
    );
    b.add(
        &[
            "validate_network_vlan_ranges",
            "validate_tunnel_id_ranges",
            "validate_vni_ranges",
            "validate_vxlan_udp_port",
        ],
        f,
        sig("Any").rest("args", any()),
        neutron_ranges,
    );
    b.add(
        &["grep"],
        f,
        sig("Array")
            .req("array", PType::Array(Box::new(PType::Any), 0, i64::MAX))
            .req("pattern", any()),
        stdlib_grep,
    );
    b.add(
        &["get_module_path"],
        f,
        sig("String").req("module", string()),
        get_module_path,
    );
    b.add(
        &["getvar_emptystring"],
        f,
        sig("Any").req("variable", any()),
        getvar_emptystring,
    );
    b.add(
        &["dig44"],
        f,
        sig("Any")
            .req("data", any())
            .req("path", any())
            .opt("default", any()),
        dig44,
    );
    b.add(
        &["is_service_default"],
        f,
        sig("Boolean").req("value", any()),
        |_, c| {
            Ok(Value::Bool(
                matches!(c.arg(0), Value::Str(s) if s == "<SERVICE DEFAULT>"),
            ))
        },
    );
    b.add(
        &["validate_legacy"],
        f,
        sig("Undef")
            .req(
                "target_type",
                PType::Variant(vec![PType::Type(None), string()]),
            )
            .req("function_name", string())
            .req("value", any())
            .rest("args", any()),
        validate_legacy,
    );
}

/// stdlib's `validate_legacy(Type, 'validate_x', value, ...)`: nothing when
/// the value is an instance of the type (a type may be given as a string);
/// otherwise the failure Puppet reports when the legacy `validate_x` also
/// refuses the value. When the legacy function accepts it (undef for
/// `validate_string`), Puppet only logs a deprecation warning and so does
/// nothing here; a legacy function ferry does not have counts as refusing.
fn validate_legacy(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let t = match c.arg(0) {
        Value::Type(t) => t,
        Value::Str(src) => {
            let expr = crate::lang::syntax::parser::parse_type(&src, &c.loc.file)
                .map_err(crate::lang::eval::control::Unwind::from)?;
            match ev.eval(&expr, c.scope)? {
                Value::Type(t) => t,
                other => {
                    return Err(plain(format!(
                        "validate_legacy: '{src}' is not a type, it is {}",
                        other.type_name()
                    ))
                    .into());
                }
            }
        }
        _ => return Ok(Value::Undef),
    };
    let v = c.arg(2);
    if types::is_instance(&t, &v) {
        return Ok(Value::Undef);
    }
    let legacy = c.arg(1).to_s().to_lowercase();
    if legacy != "validate_legacy" && crate::lang::functions::registry().get(&legacy).is_some() {
        let args: Vec<Value> = c.args.iter().skip(2).cloned().collect();
        if ev
            .call_function(&legacy, args, None, c.scope, c.loc)
            .is_ok()
        {
            return Ok(Value::Undef);
        }
    }
    Err(plain(format!(
        "validate_legacy({}) {}",
        c.arg(1).to_s(),
        types::mismatch(&t, &v)
    ))
    .into())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Dollar-quote a string for PostgreSQL: `$$s$$`, or `$tag$s$tag$` with a
/// tag made of the letters of its md5 (repeated until the string does not
/// contain it) when the string contains `$$` or ends in `$`.
fn postgresql_escape(s: &str) -> String {
    if !s.contains("$$") && !s.ends_with('$') {
        return format!("$${s}$$");
    }
    let tag_of = |x: &str| -> String {
        hex(&<Md5 as md5::Digest>::digest(x.as_bytes()))
            .chars()
            .take(6)
            .filter(|c| !c.is_ascii_digit())
            .collect()
    };
    let mut tag = tag_of(s);
    let mut guard = 0;
    while s.contains(tag.as_str()) && guard < 1000 {
        tag = tag_of(&tag);
        guard += 1;
    }
    format!("${tag}${s}${tag}$")
}

/// A POSIX or Windows absolute path, as Puppet::Util.absolute_path? sees it.
fn is_absolute(p: &str) -> bool {
    let b = p.as_bytes();
    p.starts_with('/')
        || p.starts_with("\\\\")
        || (b.len() >= 3
            && b.first().is_some_and(u8::is_ascii_alphabetic)
            && b.get(1) == Some(&b':')
            && matches!(b.get(2), Some(b'/' | b'\\')))
}

/// Ruby's `inspect` of a value as stdlib's messages print it.
fn ruby_inspect(v: &Value) -> String {
    match v {
        Value::Str(s) => format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\"")),
        Value::Undef => "nil".into(),
        other => other.to_s(),
    }
}

/// stdlib's `validate_absolute_path(path_or_paths, ...)`.
fn validate_absolute_path(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    for arg in &c.args {
        let candidates = match arg {
            Value::Array(a) => a.clone(),
            other => vec![other.clone()],
        };
        for p in candidates {
            if !matches!(&p, Value::Str(s) if is_absolute(s)) {
                return Err(plain(format!("{} is not an absolute path.", ruby_inspect(&p))).into());
            }
        }
    }
    Ok(Value::Undef)
}

/// neutron's range validators: `[physnet:]first:last` VLAN ranges (ids up
/// to 4094), tunnel id ranges (at most 1 000 000 wide), VNI ranges (ids up
/// to 16777215), and the VXLAN UDP port (4789 or 49152..=65535).
fn neutron_ranges(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let fail = |m: &str| Err(plain(m.to_string()).into());
    let a0 = c.arg(0);
    if c.name == "validate_vxlan_udp_port" {
        let n = match &a0 {
            Value::Int(i) => Some(*i),
            Value::Str(s) => s.trim().parse::<i64>().ok(),
            _ => None,
        };
        let Some(n) = n else {
            return Err(plain(format!(
                "invalid value for Integer(): {}",
                ruby_inspect(&a0)
            ))
            .into());
        };
        if n != 4789 && (n <= 49151 || n > 65535) {
            return fail("vxlan udp port is invalid.");
        }
        return Ok(Value::Undef);
    }
    let ranges = match a0 {
        Value::Array(a) => a,
        other => vec![other],
    };
    let pair = |s: &str, physnet: bool| -> Option<(i64, i64)> {
        let mut parts: Vec<&str> = s.rsplitn(3, ':').collect();
        parts.reverse();
        let (a, b) = match parts.as_slice() {
            [a, b] => (*a, *b),
            [p, a, b] if physnet && !p.is_empty() => (*a, *b),
            _ => return None,
        };
        let num = |x: &str| {
            (!x.is_empty() && x.bytes().all(|c| c.is_ascii_digit()))
                .then(|| x.parse::<i64>().ok())
                .flatten()
        };
        Some((num(a)?, num(b)?))
    };
    for r in ranges {
        if r.is_undef() || r == Value::Bool(false) {
            continue;
        }
        let s = r.to_s();
        match c.name {
            "validate_network_vlan_ranges" => {
                if let Some((first, second)) = pair(&s, true) {
                    if first > 4094 || second > 4094 {
                        return fail("vlan id are invalid.");
                    }
                    if second - first < 0 {
                        return fail("network vlan ranges are invalid.");
                    }
                } else {
                    // `^([^:]+)?(:\d+)?$`: a physical network, optionally with one id.
                    let ok = match s.split_once(':') {
                        None => true,
                        Some((_, id)) => !id.is_empty() && id.bytes().all(|c| c.is_ascii_digit()),
                    };
                    if !ok {
                        return fail("network vlan ranges are invalid.");
                    }
                }
            }
            "validate_tunnel_id_ranges" => match pair(&s, false) {
                Some((first, second)) if second - first > 1_000_000 => {
                    return fail("tunnel id ranges are to large.");
                }
                Some((first, second)) if second - first < 0 => {
                    return fail("tunnel id ranges are invalid.");
                }
                Some(_) => {}
                None => return fail("tunnel id ranges are invalid."),
            },
            _ => match pair(&s, false) {
                Some((first, second))
                    if (0..=16_777_215).contains(&first)
                        && (0..=16_777_215).contains(&second)
                        && second >= first => {}
                _ => return fail("vni ranges are invalid."),
            },
        }
    }
    Ok(Value::Undef)
}

/// stdlib's `grep(array, pattern)`: the elements whose string form the
/// pattern, a string compiled as a regex, matches. (A Puppet regex reaches
/// this 3.x function as its `/.../` text, slashes included, as in Puppet.)
fn stdlib_grep(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let pattern = match c.arg(1) {
        Value::Regex(r) => format!("/{r}/"),
        other => other.to_s(),
    };
    let re = crate::lang::values::regex::compile_regex(&pattern)?;
    let Value::Array(items) = c.arg(0) else {
        return Ok(Value::Array(Vec::new()));
    };
    Ok(Value::Array(
        items
            .into_iter()
            .filter(|v| re.is_match(&v.to_s()))
            .collect(),
    ))
}

/// stdlib's `get_module_path(module)`: the directory of the first module
/// of that name on the environment's modulepath, or its error.
fn get_module_path(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let name = c.arg(0).to_s();
    match crate::lang::loader::module_dir(ev.loader, &ev.modulepath, &name) {
        Some(dir) => Ok(Value::Str(dir.display().to_string())),
        None => Err(plain(format!(
            "Could not find module {name} in environment {}",
            ev.environment
        ))
        .into()),
    }
}

/// redis's `getvar_emptystring(name)`: the variable (a qualified name
/// reaches another scope), or `''` when it is undef or unknown.
fn getvar_emptystring(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let name = c.arg(0).to_s();
    Ok(match ev.lookup_var(name.trim_start_matches('$'), c.scope) {
        Some(Value::Undef) | None => Value::Str(String::new()),
        Some(v) => v,
    })
}

/// stdlib's `dig44(data, path, default)`: follow the path through hashes
/// and arrays (array keys as integers); the default when a step is missing
/// or undef.
fn dig44(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let data = c.arg(0);
    if !matches!(data, Value::Hash(_) | Value::Array(_)) {
        return Err(plain("dig44(): The data must be a Hash or Array").into());
    }
    let Value::Array(path) = c.arg(1) else {
        return Err(plain("dig44(): The path must be an Array").into());
    };
    Ok(dig_path(data, &path, c.arg(2)))
}

/// stdlib's `dig44` walk: down `data` by each key of `path` (a hash key,
/// or an array index, negative from the end), `default` when a step finds
/// nothing or undef.
pub(crate) fn dig_path(data: Value, path: &[Value], default: Value) -> Value {
    let mut cur = data;
    for key in path {
        let next = match &cur {
            Value::Hash(h) => crate::lang::values::value::hash_get(h, key).cloned(),
            Value::Array(a) => {
                let i = match key {
                    Value::Int(i) => Some(*i),
                    Value::Str(s) => s.trim().parse::<i64>().ok(),
                    _ => None,
                };
                i.and_then(|i| {
                    let n = a.len() as i64;
                    let i = if i < 0 { n + i } else { i };
                    usize::try_from(i).ok().and_then(|i| a.get(i).cloned())
                })
            }
            _ => None,
        };
        match next {
            Some(v) if !v.is_undef() => cur = v,
            _ => return default,
        }
    }
    cur
}

fn unwrap_sensitive(v: Value) -> Value {
    match v {
        Value::Sensitive(inner) => *inner,
        other => other,
    }
}

/// Apache's `{SHA}` password hash (htpasswd -s).
fn pw_hash(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let pw = unwrap_sensitive(c.arg(0)).to_s();
    if pw.is_empty() {
        return Err(plain(format!(
            "'{}' parameter 'password' expects a String[1] value, got String",
            c.name
        ))
        .into());
    }
    let digest = Sha1::digest(pw.as_bytes());
    Ok(Value::Str(format!(
        "{{SHA}}{}",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )))
}

/// The hash without empty-string values, one level deep.
fn strip_hash(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let Value::Hash(h) = c.arg(0) else {
        return Ok(Value::Undef);
    };
    Ok(Value::Hash(
        h.iter()
            .filter(|(_, v)| !is_empty_str(v))
            .map(|(k, v)| {
                let v = match v {
                    Value::Hash(inner) => Value::Hash(
                        inner
                            .iter()
                            .filter(|(_, x)| !is_empty_str(x))
                            .cloned()
                            .collect(),
                    ),
                    other => other.clone(),
                };
                (k.clone(), v)
            })
            .collect(),
    ))
}

fn is_empty_str(v: &Value) -> bool {
    matches!(v, Value::Str(s) if s.is_empty())
}

/// Apache's On/Off for a boolean-ish value: false, undef and strings
/// containing "false" (any case) are `Off`; true and strings containing
/// "true" are `On`; anything else is its string form.
fn bool2httpd(v: &Value) -> Value {
    let word = |s: &str, w: &str| s.to_lowercase().contains(w);
    Value::str(match v {
        Value::Undef | Value::Bool(false) => "Off",
        Value::Str(s) if word(s, "false") => "Off",
        Value::Bool(true) => "On",
        Value::Str(s) if word(s, "true") => "On",
        other => return Value::Str(other.to_s()),
    })
}

/// MySQL's `PASSWORD()` hash: `*` and the upper-case hex SHA1 of the SHA1
/// of the password. Empty stays empty; an existing hash is kept as is.
fn mysql_password(pw: &str) -> String {
    if pw.is_empty() {
        return String::new();
    }
    if is_mysql_hash(pw) {
        return pw.to_string();
    }
    let inner = Sha1::digest(pw.as_bytes());
    let outer = Sha1::digest(inner);
    format!("*{}", hex::encode_upper(outer))
}

/// Does `s` end in `*` followed by 40 upper-case hex digits?
fn is_mysql_hash(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 41
        && b.get(b.len() - 41) == Some(&b'*')
        && b.iter()
            .rev()
            .take(40)
            .all(|c| c.is_ascii_digit() || (b'A'..=b'F').contains(c))
}

/// Ruby's `String#to_f`: the longest leading float, 0.0 without one.
fn ruby_to_f(s: &str) -> f64 {
    let t = s.trim_start();
    let mut end = 0;
    let mut seen_dot = false;
    let mut seen_digit = false;
    for (i, ch) in t.char_indices() {
        match ch {
            '+' | '-' if i == 0 => {}
            '0'..='9' => seen_digit = true,
            '.' if !seen_dot => seen_dot = true,
            _ => break,
        }
        end = i + ch.len_utf8();
    }
    if !seen_digit {
        return 0.0;
    }
    t.get(..end)
        .map(|n| n.trim_end_matches('.'))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0.0)
}

/// memcached's `memcached::max_memory(arg)`: `arg` megabytes, or `arg`
/// percent (95% by default) of the `memorysize` fact, floored.
fn memcached_max_memory(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let arg = c.arg(0);
    let given = !matches!(arg, Value::Undef | Value::Bool(false));
    if given && !arg.to_s().ends_with('%') {
        // Ruby's to_i: the leading number, truncated.
        let n: i64 = match &arg {
            Value::Int(i) => *i,
            Value::Float(f) => *f as i64,
            other => ruby_to_f(&other.to_s()) as i64,
        };
        return Ok(Value::Int(n));
    }
    let percent = if given { ruby_to_f(&arg.to_s()) } else { 95.0 };
    let memsize = match &ev.facts {
        Value::Hash(h) => hash_get_str(h, "memorysize").map(|v| v.to_s()),
        _ => None,
    }
    .unwrap_or_default();
    // /([0-9.e+-]*)\s*([^bB]?)/ from the start of the fact.
    let num: String = memsize
        .chars()
        .take_while(|ch| ch.is_ascii_digit() || matches!(ch, '.' | 'e' | '+' | '-'))
        .collect();
    let rest = memsize.get(num.len()..).unwrap_or("").trim_start();
    let prefix = rest.chars().next().filter(|ch| !matches!(ch, 'b' | 'B'));
    let mut value = ruby_to_f(&num);
    value *= match prefix {
        None => 1.0,
        Some('k') => (1u64 << 10) as f64,
        Some('M') => (1u64 << 20) as f64,
        Some('G') => (1u64 << 30) as f64,
        Some('T') => (1u64 << 40) as f64,
        Some('E') => (1u64 << 50) as f64,
        Some(p) => {
            return Err(plain(format!("memcached_max_memory(): Unknown prefix {p}")).into());
        }
    };
    let bytes = value as i64;
    let mb = bytes / (1 << 20);
    Ok(Value::Int((mb as f64 * (percent / 100.0)).floor() as i64))
}

/// datacat's `template_body(files...)`: the templates' text, joined.
fn template_body(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let mut out = String::new();
    for f in &c.args {
        let name = f.to_s();
        match crate::lang::template::read_template(ev, &name) {
            Some(text) => out.push_str(&text),
            None => return Err(plain(format!("Could not find template '{name}'")).into()),
        }
    }
    Ok(Value::Str(out))
}

/// openstacklib's `normalize_ip_for_uri(ip_or_ips)`: IPv6 addresses in
/// brackets; one address gives a String, several an Array.
fn normalize_ip_for_uri(args: &[Value]) -> Value {
    let items: Vec<Value> = match args.first() {
        Some(Value::Array(a)) => a.clone(),
        _ => args.to_vec(),
    };
    let out: Vec<Value> = items
        .into_iter()
        .map(|ip| match &ip {
            Value::Str(s) if is_ipv6(s) && !(s.contains('[') && s.contains(']')) => {
                Value::Str(format!("[{s}]"))
            }
            _ => ip,
        })
        .collect();
    if out.len() == 1 {
        out.into_iter().next().unwrap_or(Value::Undef)
    } else {
        Value::Array(out)
    }
}

/// Ruby's `IPAddr.new(s).ipv6?` (an address, optionally with a prefix).
fn is_ipv6(s: &str) -> bool {
    let addr = s.split('/').next().unwrap_or("");
    let addr = addr.split('%').next().unwrap_or("");
    addr.parse::<std::net::Ipv6Addr>().is_ok()
}

/// Ruby's `IPAddr.new(s)` succeeds: an IPv4 or IPv6 address, optionally
/// with a `/prefix` (a length or a mask).
fn is_ip(s: &str) -> bool {
    let (addr, prefix) = match s.split_once('/') {
        Some((a, p)) => (a, Some(p)),
        None => (s, None),
    };
    let v4 = addr.parse::<std::net::Ipv4Addr>().is_ok();
    let v6 = !v4
        && addr
            .split('%')
            .next()
            .unwrap_or("")
            .parse::<std::net::Ipv6Addr>()
            .is_ok();
    let prefix_ok = match prefix {
        None => true,
        Some(p) => match p.parse::<u32>() {
            Ok(n) => n <= if v4 { 32 } else { 128 },
            Err(_) => is_ip(p),
        },
    };
    (v4 || v6) && prefix_ok
}

/// neutron's `convert_to_json_string(value)`: an array of `k:v` strings as
/// a JSON object, anything else as its JSON.
fn convert_to_json_string(v: &Value) -> String {
    if let Value::Array(items) = v
        && items
            .iter()
            .all(|x| matches!(x, Value::Str(s) if s.contains(':')))
    {
        // A Ruby Hash keeps its insertion order (a later key replaces).
        let mut pairs: Vec<(String, serde_json::Value)> = Vec::new();
        for x in items {
            let s = x.to_s();
            let mut parts = s.split(':');
            let k = parts.next().unwrap_or("").to_string();
            let val = parts.next().map_or(serde_json::Value::Null, |p| {
                serde_json::Value::String(p.to_string())
            });
            match pairs.iter_mut().find(|(pk, _)| *pk == k) {
                Some(slot) => slot.1 = val,
                None => pairs.push((k, val)),
            }
        }
        let body: Vec<String> = pairs
            .iter()
            .map(|(k, v)| format!("{}:{}", serde_json::Value::String(k.clone()), v))
            .collect();
        return format!("{{{}}}", body.join(","));
    }
    v.to_json()
        .map(|j| j.to_string())
        .unwrap_or_else(|| "null".into())
}

/// Ruby's `ERB::Util.url_encode`: everything but `[A-Za-z0-9_.~-]`
/// percent-encoded.
fn url_encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'~' | b'-') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// os_transport_url's `_str2bool`.
fn transport_str2bool(v: &Value) -> Result<bool, crate::lang::error::LangError> {
    match v {
        Value::Bool(b) => Ok(*b),
        Value::Str(s) => {
            let l = s.to_lowercase();
            if l.is_empty()
                || matches!(l.as_str(), "0" | "f" | "n" | "false" | "no")
                || matches!(s.as_str(), "undef" | "undefined")
            {
                Ok(false)
            } else if matches!(l.as_str(), "1" | "t" | "y" | "true" | "yes") {
                Ok(true)
            } else {
                Err(plain(
                    "os_transport_url _str2bool(): Unknown type of boolean given",
                ))
            }
        }
        _ => Err(plain("str2bool(): Requires string to work with")),
    }
}

/// openstacklib's `os_transport_url(hash)`: a messaging URL
/// (`rabbit://user:pass@host:port/vhost?query`) from its parts, with the
/// Ruby function's checks and messages.
fn os_transport_url(args: &[Value]) -> EvalResult<Value> {
    if args.len() != 1 {
        return Err(plain("os_transport_url(): Wrong number of arguments").into());
    }
    let Some(Value::Hash(raw)) = args.first() else {
        let got = args.first().cloned().unwrap_or(Value::Undef);
        return Err(plain(format!(
            "os_transport_url(): Requires an hash, got {}",
            crate::lang::functions::stdlib::ruby_class(&got)
        ))
        .into());
    };
    let mut v: Vec<(String, Value)> = Vec::new();
    for (k, val) in raw {
        let key = k.to_s();
        let val = if key == "port" {
            Value::Str(val.to_s())
        } else {
            val.clone()
        };
        let (want, ok) = match key.as_str() {
            "hosts" => ("Array", matches!(val, Value::Array(_))),
            "query" => ("Hash", matches!(val, Value::Hash(_))),
            _ => ("String", matches!(val, Value::Str(_))),
        };
        if !ok {
            return Err(plain(format!("os_transport_url(): {key} should be a {want}")).into());
        }
        v.push((key, val));
    }
    let get = |k: &str| v.iter().find(|(n, _)| n == k).map(|(_, x)| x.clone());
    let Some(transport) = get("transport") else {
        return Err(plain("os_transport_url(): transport is required").into());
    };
    let (host, hosts) = (get("host"), get("hosts"));
    if host.is_none() && hosts.is_none() {
        return Err(plain("os_transport_url(): host or hosts is required").into());
    }
    if host.is_some() && hosts.is_some() {
        return Err(plain("os_transport_url(): cannot use both host and hosts.").into());
    }
    let mut userinfo = None;
    if let Some(u) = get("username").filter(|u| !u.to_s().is_empty()) {
        let mut ui = url_encode(&u.to_s());
        if let Some(pw) = get("password").filter(|p| !p.to_s().is_empty()) {
            ui.push(':');
            ui.push_str(&url_encode(&pw.to_s()));
        }
        userinfo = Some(ui);
    }
    let port = get("port").map(|p| p.to_s());
    let mut hostinfo = "localhost".to_string();
    if let Some(h) = host {
        let mut one = normalize_ip_for_uri(&[h]).to_s();
        if let Some(p) = &port {
            one = format!("{one}:{p}");
        }
        hostinfo = match &userinfo {
            Some(ui) => format!("{ui}@{one}"),
            None => one,
        };
    }
    if let Some(hs) = hosts {
        let list: Vec<String> = match normalize_ip_for_uri(&[hs]) {
            Value::Array(a) => a.iter().map(|x| x.to_s()).collect(),
            other => vec![other.to_s()],
        };
        let list: Vec<String> = list
            .into_iter()
            .map(|h| match &port {
                Some(p) => format!("{h}:{p}"),
                None => h,
            })
            .map(|h| match &userinfo {
                Some(ui) => format!("{ui}@{h}"),
                None => h,
            })
            .collect();
        hostinfo = list.join(",");
    }
    let path = match get("virtual_host") {
        Some(vh) => format!("/{}", vh.to_s()),
        None => "/".to_string(),
    };
    let mut query: Vec<(String, String)> = Vec::new();
    if let Some(Value::Hash(q)) = get("query") {
        for (k, x) in q {
            query.push((k.to_s(), x.to_s()));
        }
    }
    if let Some(ssl) = get("ssl") {
        let on = transport_str2bool(&ssl)?;
        let val = if on { "1" } else { "0" }.to_string();
        match query.iter_mut().find(|(k, _)| k == "ssl") {
            Some(slot) => slot.1 = val,
            None => query.push(("ssl".into(), val)),
        }
    }
    let mut url = format!("{}://{hostinfo}{path}", transport.to_s());
    if !query.is_empty() {
        let q: Vec<String> = query.iter().map(|(k, x)| format!("{k}={x}")).collect();
        url.push('?');
        url.push_str(&q.join("&"));
    }
    Ok(Value::Str(url))
}

#[cfg(test)]
mod tests {
    use crate::lang::functions::tests::call;
    use crate::lang::values::value::Value;

    fn text(name: &str, args: &[Value]) -> String {
        match call(name, args) {
            Ok(v) => v.to_s(),
            other => panic!("{name}: {other:?}"),
        }
    }

    #[test]
    fn bool2httpd_values() {
        assert_eq!(text("apache::bool2httpd", &[Value::Bool(true)]), "On");
        assert_eq!(text("apache::bool2httpd", &[Value::Undef]), "Off");
        assert_eq!(text("apache::bool2httpd", &[Value::str("FALSE")]), "Off");
        assert_eq!(text("apache::bool2httpd", &[Value::str("Truely")]), "On");
        assert_eq!(text("apache::bool2httpd", &[Value::str("Prod")]), "Prod");
        assert_eq!(text("apache::bool2httpd", &[Value::Int(3)]), "3");
    }

    #[test]
    fn password_hashes() {
        // Known values of MySQL's PASSWORD('secret') and htpasswd -s.
        assert_eq!(
            text("mysql::password", &[Value::str("secret")]),
            "*14E65567ABDB5135D0CFD9A70B3032C179A49EE7"
        );
        assert_eq!(text("mysql::password", &[Value::str("")]), "");
        let h = "*14E65567ABDB5135D0CFD9A70B3032C179A49EE7";
        assert_eq!(text("mysql::password", &[Value::str(h)]), h);
        assert_eq!(
            text("apache::pw_hash", &[Value::str("secret")]),
            "{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ="
        );
        assert!(call("apache::pw_hash", &[Value::str("")]).is_err());
        assert!(call("mysql::password", &[Value::Int(1)]).is_err());
    }

    #[test]
    fn strip_hash_drops_empty_strings() {
        let h = Value::Hash(vec![
            (Value::str("a"), Value::str("")),
            (
                Value::str("b"),
                Value::Hash(vec![
                    (Value::str("c"), Value::str("")),
                    (Value::str("d"), Value::Int(1)),
                ]),
            ),
        ]);
        let Ok(v) = call("mysql::strip_hash", &[h]) else {
            panic!("strip_hash failed");
        };
        assert_eq!(v.to_inspect(true), "{'b' => {'d' => 1}}");
    }
}
