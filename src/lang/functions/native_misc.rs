//! Native ports of pure module functions written in Ruby (no files, no
//! network): archive's `archive::parse_artifactory_url` (the parts of an
//! Artifactory artifact URL), collectd's `collectd_convert_processes`
//! (an old-style process list as a `create_resources` hash), dns's
//! `get_in_addr_arpa` and `date` (which fails in Puppet 7 for every call), inifile's `inifile::create_ini_settings`
//! (and its deprecated unqualified name: `ini_setting` resources from a
//! hash of sections), mongodb's `mongodb_password` and postgresql's
//! `postgresql::postgresql_acls_to_resources_hash` (pg_hba lines as
//! `postgresql::server::pg_hba_rule` parameters). Each gives its Ruby
//! original's results and messages, Ruby's own errors included where
//! module code can reach them.

use std::sync::LazyLock;

use md5::{Digest, Md5};

use crate::lang::error::plain;
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::functions::native_modules::no_method;
use crate::lang::functions::native_remote::{http_url, https_url};
use crate::lang::functions::stdlib::{arg_3x, arity};
use crate::lang::functions::{Builder, Family, any, sig, string};
use crate::lang::template::erb::value::{ruby_eq, to_s};
use crate::lang::values::types::PType;
use crate::lang::values::value::Value;

pub fn register(b: &mut Builder) {
    let f = Family::Native;
    b.add(
        &["archive::parse_artifactory_url"],
        f,
        sig("Any").req("url", PType::Variant(vec![http_url(), https_url()])),
        parse_artifactory_url,
    );
    b.add(
        &["collectd_convert_processes"],
        f,
        sig("Any").rest("args", any()),
        collectd_convert_processes,
    );
    b.add(
        &["get_in_addr_arpa"],
        f,
        sig("String").rest("args", any()),
        get_in_addr_arpa,
    );
    b.add(&["date"], f, sig("String").rest("args", any()), date);
    let hash = || PType::Hash(Box::new(any()), Box::new(any()), 0, i64::MAX);
    b.add(
        &["inifile::create_ini_settings"],
        f,
        sig("Any").req("settings", hash()).opt("defaults", hash()),
        create_ini_settings,
    );
    b.add(
        &["create_ini_settings"],
        f,
        sig("Any").rest("args", any()),
        create_ini_settings_deprecated,
    );
    b.add(
        &["mongodb_password"],
        f,
        sig("String").rest("args", any()),
        mongodb_password,
    );
    b.add(
        &["postgresql::postgresql_acls_to_resources_hash"],
        f,
        sig("Hash")
            .req("acls", PType::Array(Box::new(string()), 0, i64::MAX))
            .req("id", PType::String(1, i64::MAX))
            .req("offset", PType::Integer(0, i64::MAX)),
        postgresql_acls_to_resources_hash,
    );
}

/// The named groups of archive's Artifactory URL pattern, in order.
const ARTIFACTORY_PARTS: &[&str] = &[
    "base_url",
    "repository",
    "org_path",
    "module",
    "base_rev",
    "folder_iteg_rev",
    "file_iteg_rev",
    "classifier",
    "ext",
];

static ARTIFACTORY_URL: LazyLock<Option<fancy_regex::Regex>> = LazyLock::new(|| {
    fancy_regex::Regex::new(concat!(
        r"(?P<base_url>.*/artifactory)/(?P<repository>[^/]+)/(?P<org_path>.+?)/",
        r"(?P<module>[^/]+)/(?P<base_rev>[^/]+?)(?:-(?P<folder_iteg_rev>SNAPSHOT))?/",
        r"\k<module>-\k<base_rev>",
        r"(?:-(?P<file_iteg_rev>SNAPSHOT|(?:(?:[0-9]{8}.[0-9]{6})-(?:[0-9]+))))?",
        r"(?:-(?P<classifier>[^/]+?))?\.(?P<ext>(?:(?!\d))[^\-/]+|7z)",
    ))
    .ok()
});

/// `archive::parse_artifactory_url(url)`: the URL's base, repository,
/// organisation path, module, revisions, classifier and extension (a
/// part the URL lacks is undef); undef when it is no artifact URL.
fn parse_artifactory_url(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let url = to_s(&c.arg(0));
    let re = ARTIFACTORY_URL
        .as_ref()
        .ok_or_else(|| plain("archive::parse_artifactory_url: its pattern does not compile"))?;
    let caps = re
        .captures(&url)
        .map_err(|e| plain(format!("archive::parse_artifactory_url: {e}")))?;
    let Some(caps) = caps else {
        return Ok(Value::Undef);
    };
    Ok(Value::Hash(
        ARTIFACTORY_PARTS
            .iter()
            .map(|&n| {
                let v = caps
                    .name(n)
                    .map_or(Value::Undef, |m| Value::str(m.as_str()));
                (Value::str(n), v)
            })
            .collect(),
    ))
}

/// collectd's `collectd_convert_processes(processes)`: a hash stays as it
/// is; an array's strings become `name => {}` and its hashes
/// `name => the rest of the hash`.
fn collectd_convert_processes(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let err = |m: &str| Err(plain(format!("convert_process_array(): {m}")).into());
    arity(&c, "collectd_convert_processes", 1)?;
    let list = match arg_3x(&c.arg(0)) {
        h @ Value::Hash(_) => return Ok(h),
        Value::Array(a) => a,
        _ => return err("Needs an array as argument"),
    };
    let mut out: Vec<(Value, Value)> = Vec::new();
    for p in list {
        match p {
            Value::Str(s) => hash_put(&mut out, Value::Str(s), Value::Hash(Vec::new())),
            Value::Hash(mut h) => {
                let name = match h
                    .iter()
                    .position(|(k, _)| matches!(k, Value::Str(s) if s == "name"))
                {
                    Some(i) => h.remove(i).1,
                    None => Value::Undef,
                };
                hash_put(&mut out, name, Value::Hash(h));
            }
            _ => return err("array element must be string or hash"),
        }
    }
    Ok(Value::Hash(out))
}

/// dns's `get_in_addr_arpa(address)`: the address's dotted parts in
/// reverse order under `in-addr.arpa` (Ruby's `split`, which drops
/// trailing empty parts).
fn get_in_addr_arpa(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let s = match c.args.first() {
        Some(v) => match arg_3x(v) {
            Value::Str(s) => s,
            other => return Err(no_method("split", &other).into()),
        },
        None => return Err(no_method("split", &Value::Undef).into()),
    };
    let mut parts: Vec<&str> = s.split('.').collect();
    while parts.last().is_some_and(|p| p.is_empty()) {
        parts.pop();
    }
    parts.reverse();
    Ok(Value::Str(format!("{}.in-addr.arpa", parts.join("."))))
}

/// dns's `date()`: its Ruby block takes no arguments while Puppet passes
/// it the argument list, so every call fails as it does in Puppet 7.
fn date(_: &mut Evaluator<'_>, _: Call<'_>) -> EvalResult<Value> {
    Err(plain("wrong number of arguments (given 1, expected 0)").into())
}

/// inifile's deprecated `create_ini_settings(...)`: warns, then does what
/// `inifile::create_ini_settings` does.
fn create_ini_settings_deprecated(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    ev.call_function(
        "deprecation",
        vec![
            Value::str("create_ini_settings"),
            Value::str(
                "This method is deprecated, please use inifile::create_ini_settings instead.",
            ),
        ],
        None,
        c.scope,
        c.loc,
    )?;
    ev.call_function("inifile::create_ini_settings", c.args, None, c.scope, c.loc)
}

/// `inifile::create_ini_settings(settings[, defaults])`: an `ini_setting`
/// titled `PATH [SECTION] SETTING` for every setting of every section
/// (`ensure => present` and the value, or the setting's own hash of
/// parameters), declared by `create_resources` with the defaults.
fn create_ini_settings(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let Value::Hash(settings) = c.arg(0) else {
        return Ok(Value::Undef);
    };
    let defaults = match c.arg(1) {
        Value::Hash(d) => d,
        _ => Vec::new(),
    };
    let path_key = |(k, _): &&(Value, Value)| matches!(k, Value::Str(s) if s == "path");
    let path = settings
        .iter()
        .find(path_key)
        .or_else(|| defaults.iter().find(path_key))
        .map_or(Value::Undef, |(_, v)| v.clone());
    let mut resources: Vec<(Value, Value)> = Vec::new();
    for (section, body) in &settings {
        let Value::Hash(body) = body else {
            return Err(plain(format!(
                "create_ini_settings(): Section {} must contain a Hash",
                to_s(section)
            ))
            .into());
        };
        if path.is_undef() || path == Value::Bool(false) {
            return Err(plain(
                "create_ini_settings(): must pass the path parameter to the Ini_setting resource!",
            )
            .into());
        }
        for (setting, value) in body {
            let title = format!("{} [{}] {}", to_s(&path), to_s(section), to_s(setting));
            let mut params = vec![
                (Value::str("ensure"), Value::str("present")),
                (Value::str("section"), section.clone()),
                (Value::str("setting"), setting.clone()),
            ];
            let extra = match value {
                Value::Hash(h) => h.clone(),
                other => vec![(Value::str("value"), other.clone())],
            };
            for (k, v) in extra {
                hash_put(&mut params, k, v);
            }
            hash_put(&mut resources, Value::Str(title), Value::Hash(params));
        }
    }
    ev.call_function(
        "create_resources",
        vec![
            Value::str("ini_setting"),
            Value::Hash(resources),
            Value::Hash(defaults),
        ],
        None,
        c.scope,
        c.loc,
    )
}

/// mongodb's `mongodb_password(user, password)`: the md5 hex digest of
/// `USER:mongo:PASSWORD`.
fn mongodb_password(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    arity(&c, "mongodb_password", 2)?;
    let text = format!(
        "{}:mongo:{}",
        to_s(&arg_3x(&c.arg(0))),
        to_s(&arg_3x(&c.arg(1)))
    );
    Ok(Value::Str(hex::encode(Md5::digest(text.as_bytes()))))
}

/// `postgresql::postgresql_acls_to_resources_hash(acls, id, offset)`: one
/// `pg_hba_rule` parameter hash per pg_hba line (type, database, user,
/// address unless local, auth method and options), ordered from
/// `offset` by the line's first index.
fn postgresql_acls_to_resources_hash(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let acls: Vec<String> = match c.arg(0) {
        Value::Array(a) => a.iter().map(to_s).collect(),
        _ => Vec::new(),
    };
    let id = to_s(&c.arg(1));
    let offset = match c.arg(2) {
        Value::Int(i) => i,
        _ => 0,
    };
    let mut out: Vec<(Value, Value)> = Vec::new();
    for acl in &acls {
        let index = acls.iter().position(|a| a == acl).unwrap_or_default();
        let parts: Vec<&str> = acl.split_ascii_whitespace().collect();
        if parts.len() < 4 {
            return Err(plain(format!(
                "postgresql::postgresql_acls_to_resources_hash(): acl line {index} does not have enough parts"
            ))
            .into());
        }
        let part = |i: usize| parts.get(i).map_or(Value::Undef, |p| Value::str(*p));
        let rest = |from: usize| Value::Str(parts[from..].join(" "));
        let order = i64::try_from(index)
            .ok()
            .and_then(|i| i.checked_add(offset))
            .unwrap_or(i64::MAX);
        let mut r = vec![
            (Value::str("type"), part(0)),
            (Value::str("database"), part(1)),
            (Value::str("user"), part(2)),
            (Value::str("order"), Value::Str(format!("{order:03}"))),
        ];
        let (address, method_at) = if parts[0] == "local" {
            (None, 3)
        } else if parts
            .get(4)
            .is_some_and(|p| p.starts_with(|ch: char| ch.is_ascii_digit()))
        {
            (Some(format!("{} {}", parts[3], parts[4])), 5)
        } else {
            (Some(parts[3].to_string()), 4)
        };
        if let Some(a) = address {
            r.push((Value::str("address"), Value::Str(a)));
        }
        r.push((Value::str("auth_method"), part(method_at)));
        if parts.len() > method_at + 1 {
            r.push((Value::str("auth_option"), rest(method_at + 1)));
        }
        let key = Value::Str(format!("postgresql class generated rule {id} {index}"));
        hash_put(&mut out, key, Value::Hash(r));
    }
    Ok(Value::Hash(out))
}

/// Ruby's `hash[k] = v`: a new key goes last, an existing one keeps its
/// place.
pub(crate) fn hash_put(h: &mut Vec<(Value, Value)>, k: Value, v: Value) {
    match h.iter_mut().find(|(x, _)| ruby_eq(x, &k)) {
        Some(slot) => slot.1 = v,
        None => h.push((k, v)),
    }
}
