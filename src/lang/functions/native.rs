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
//! `get_module_path` and `dig44`, and redis's `getvar_emptystring`.
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
use crate::lang::values::value::Value;

pub fn register(b: &mut Builder) {
    let f = Family::Native;
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
/// refuses the value. (When the legacy function would accept it, Puppet
/// only warns; ferry does not run the legacy functions and fails.)
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
    let mut cur = data;
    for key in &path {
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
            _ => return Ok(c.arg(2)),
        }
    }
    Ok(cur)
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
