//! Native implementations of well-known module functions. Some popular
//! modules ship functions written in Ruby (`lib/puppet/functions`), which
//! ferry cannot run; the small, pure ones that common modules call while
//! compiling are implemented here in Rust with the same results:
//! `apache::bool2httpd`, `apache::pw_hash` (and the older
//! `apache::apache_pw_hash`, `apache_pw_hash`, `bool2httpd` names),
//! `mysql::password` (and `mysql_password`) and `mysql::strip_hash`.
//! They are only reached when no Puppet-language function of that name was
//! found, so a module's own `.pp` function always wins.

use base64::Engine as _;
use sha1::{Digest, Sha1};

use crate::lang::error::LResult;
use crate::lang::error::plain;
use crate::lang::values::value::Value;

/// Call the native function `name`; `Ok(None)` when there is none.
pub fn call_native(name: &str, args: &[Value]) -> LResult<Option<Value>> {
    let v = match name {
        "apache::bool2httpd" | "bool2httpd" => {
            one_arg(name, args)?;
            bool2httpd(args.first().unwrap_or(&Value::Undef))
        }
        "apache::pw_hash" | "apache::apache_pw_hash" | "apache_pw_hash" => {
            let pw = string_arg(name, "password", args)?;
            if pw.is_empty() {
                return Err(plain(format!(
                    "'{name}' parameter 'password' expects a String[1] value, got String"
                )));
            }
            let digest = Sha1::digest(pw.as_bytes());
            Value::Str(format!(
                "{{SHA}}{}",
                base64::engine::general_purpose::STANDARD.encode(digest)
            ))
        }
        "mysql::password" | "mysql_password" => {
            Value::Str(mysql_password(&string_arg(name, "password", args)?))
        }
        "mysql::strip_hash" => match args {
            [Value::Hash(h)] => Value::Hash(
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
            ),
            [other] => {
                return Err(plain(format!(
                    "'{name}' parameter 'hash' expects a Hash value, got {}",
                    other.type_name()
                )));
            }
            _ => return Err(arg_count(name, 1, args.len())),
        },
        _ => return Ok(None),
    };
    Ok(Some(v))
}

fn is_empty_str(v: &Value) -> bool {
    matches!(v, Value::Str(s) if s.is_empty())
}

fn arg_count(name: &str, want: usize, got: usize) -> crate::lang::error::LangError {
    plain(format!("'{name}' expects {want} argument, got {got}"))
}

fn one_arg(name: &str, args: &[Value]) -> LResult<()> {
    if args.len() == 1 {
        Ok(())
    } else {
        Err(arg_count(name, 1, args.len()))
    }
}

fn string_arg(name: &str, param: &str, args: &[Value]) -> LResult<String> {
    one_arg(name, args)?;
    match args.first() {
        Some(Value::Str(s)) => Ok(s.clone()),
        Some(Value::Sensitive(inner)) if matches!(**inner, Value::Str(_)) => Ok(inner.to_s()),
        other => Err(plain(format!(
            "'{name}' parameter '{param}' expects a String value, got {}",
            other.map_or_else(|| "Undef".to_string(), Value::type_name)
        ))),
    }
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
    use super::*;

    fn call(name: &str, args: &[Value]) -> String {
        match call_native(name, args) {
            Ok(Some(v)) => v.to_s(),
            other => panic!("{name}: {other:?}"),
        }
    }

    #[test]
    fn bool2httpd_values() {
        assert_eq!(call("apache::bool2httpd", &[Value::Bool(true)]), "On");
        assert_eq!(call("apache::bool2httpd", &[Value::Undef]), "Off");
        assert_eq!(call("apache::bool2httpd", &[Value::str("FALSE")]), "Off");
        assert_eq!(call("apache::bool2httpd", &[Value::str("Truely")]), "On");
        assert_eq!(call("apache::bool2httpd", &[Value::str("Prod")]), "Prod");
        assert_eq!(call("apache::bool2httpd", &[Value::Int(3)]), "3");
    }

    #[test]
    fn password_hashes() {
        // Known values of MySQL's PASSWORD('secret') and htpasswd -s.
        assert_eq!(
            call("mysql::password", &[Value::str("secret")]),
            "*14E65567ABDB5135D0CFD9A70B3032C179A49EE7"
        );
        assert_eq!(call("mysql::password", &[Value::str("")]), "");
        let h = "*14E65567ABDB5135D0CFD9A70B3032C179A49EE7";
        assert_eq!(call("mysql::password", &[Value::str(h)]), h);
        assert_eq!(
            call("apache::pw_hash", &[Value::str("secret")]),
            "{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ="
        );
        assert!(call_native("apache::pw_hash", &[Value::str("")]).is_err());
        assert!(call_native("mysql::password", &[Value::Int(1)]).is_err());
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
        let Ok(Some(v)) = call_native("mysql::strip_hash", &[h]) else {
            panic!("strip_hash failed");
        };
        assert_eq!(v.to_inspect(true), "{'b' => {'d' => 1}}");
    }
}
