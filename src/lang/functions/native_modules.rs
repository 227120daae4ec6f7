//! Native ports of module functions written in Ruby that the Debian
//! modules call while compiling (see `native.rs` for the first set):
//! ssh's `ipaddresses` (the addresses of the node's interfaces from its
//! legacy facts) and monit's `monit_validate_tests` (checks monit test
//! hashes and adds their `condition` in monit's syntax), archive's
//! `assemble_nexus_url` and stdlib's `parseyaml`. Each gives the
//! results and the messages of its Ruby original, Ruby's own errors
//! (`undefined method ...`) included where module code reaches them.

use crate::lang::error::plain;
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::functions::{Builder, Family, any, sig};
use crate::lang::template::erb::value::{class_name, inspect, to_s};
use crate::lang::values::value::Value;

pub fn register(b: &mut Builder) {
    let f = Family::Native;
    b.add(
        &["ipaddresses"],
        f,
        sig("Any").rest("args", any()),
        ipaddresses,
    );
    b.add(
        &["assemble_nexus_url"],
        f,
        sig("String").rest("args", any()),
        assemble_nexus_url,
    );
    b.add(&["parseyaml"], f, sig("Any").rest("args", any()), parseyaml);
    b.add(
        &["monit_validate_tests"],
        f,
        sig("Array").rest("args", any()),
        monit_validate_tests,
    );
}

/// ssh's `ipaddresses()`: `ipaddress_IF` and `ipaddress6_IF` of every
/// interface in the `interfaces` fact whose name does not contain `lo`;
/// false when the fact is missing.
fn ipaddresses(ev: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let Some(Value::Str(ifaces)) = ev.lookup_var("interfaces", c.scope) else {
        return Ok(Value::Bool(false));
    };
    let mut out = Vec::new();
    for iface in ifaces.split(',').filter(|i| !i.contains("lo")) {
        for fact in ["ipaddress", "ipaddress6"] {
            match ev.lookup_var(&format!("{fact}_{iface}"), c.scope) {
                None | Some(Value::Undef) => {}
                Some(v) => out.push(v),
            }
        }
    }
    Ok(Value::Array(out))
}

/// archive's `assemble_nexus_url(url, params)`: the Nexus REST URL of an
/// artifact, `params` as a query string escaped as Ruby's `CGI.escape` does.
fn assemble_nexus_url(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let query: Vec<String> = match c.arg(1) {
        Value::Hash(h) => h
            .iter()
            .map(|(k, v)| match v {
                Value::Str(s) => Ok(format!("{}={}", to_s(k), cgi_escape(s))),
                other => Err(plain(format!(
                    "no implicit conversion of {} into String",
                    class_name(other)
                ))),
            })
            .collect::<Result<_, _>>()?,
        Value::Undef => Vec::new(),
        other => return Err(no_method("to_a", &other).into()),
    };
    Ok(Value::Str(format!(
        "{}/service/local/artifact/maven/content?{}",
        to_s(&c.arg(0)),
        query.join("&")
    )))
}

/// Ruby's `CGI.escape`: letters, digits and `_.-~` stay, a space is `+`,
/// every other byte `%XX`.
fn cgi_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' | b'-' | b'~' => {
                out.push(char::from(b));
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// stdlib's `parseyaml(text[, default])`: the data the YAML text holds;
/// the default when it holds nothing (or false) or does not parse.
fn parseyaml(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    if c.args.is_empty() {
        return Err(
            plain("Wrong number of arguments. 1 or 2 arguments should be provided.").into(),
        );
    }
    let default = c.arg(1);
    let text = to_s(&c.arg(0));
    let parsed: Result<Ordered, _> = if text.trim().is_empty() {
        Ok(Ordered(Value::Undef))
    } else {
        serde_saphyr::from_str(&text)
    };
    match parsed.map(|o| o.0) {
        Ok(Value::Undef | Value::Bool(false)) => Ok(default),
        Ok(v) => Ok(v),
        Err(_) if !default.is_undef() => Ok(default),
        Err(e) => Err(plain(format!("parseyaml(): {e}")).into()),
    }
}

/// Ruby's NoMethodError message for `v.name`.
pub(crate) fn no_method(name: &str, v: &Value) -> crate::lang::error::LangError {
    let who = match v {
        Value::Undef => "nil".to_string(),
        other => inspect(other),
    };
    plain(format!(
        "undefined method `{name}' for {who}:{}",
        class_name(v)
    ))
}

fn upcase(v: &Value) -> Result<String, crate::lang::error::LangError> {
    match v {
        Value::Str(s) => Ok(s.to_uppercase()),
        other => Err(no_method("upcase", other)),
    }
}

const RESOURCE_TESTS: &[&str] = &[
    "CPU",
    "CPU(USER)",
    "CPU(SYSTEM)",
    "CPU(WAIT)",
    "TOTAL CPU",
    "CHILDREN",
    "LOADAVG(1MIN)",
    "LOADAVG(5MIN)",
    "LOADAVG(15MIN)",
    "TOTAL MEMORY",
    "MEMORY",
    "SWAP",
];
const OPERATORS: &[&str] = &[
    "<", ">", "!=", "==", "GT", "LT", "EQ", "NE", "GREATER", "LESS", "EQUAL", "NOTEQUAL",
];
const ACTIONS: &[&str] = &["ALERT", "RESTART", "START", "STOP", "EXEC", "UNMONITOR"];

/// The test types a check type accepts (None: an unknown check type).
fn test_types(check: &str) -> Option<Vec<&'static str>> {
    Some(match check {
        "DIRECTORY" | "FIFO" | "FILE" | "PROGRAM" => Vec::new(),
        "FILESYSTEM" => vec!["FSFLAGS", "SPACE", "INODE", "PERM", "PERMISSION"],
        "HOST" => vec!["CONNECTION"],
        "PROCESS" => RESOURCE_TESTS
            .iter()
            .copied()
            .chain(["CONNECTION"])
            .collect(),
        "SYSTEM" => RESOURCE_TESTS.to_vec(),
        _ => return None,
    })
}

/// A Ruby hash being changed in place (assigning a key keeps its place).
struct RHash(Vec<(Value, Value)>);

impl RHash {
    fn get(&self, k: &str) -> Value {
        self.0
            .iter()
            .find(|(x, _)| matches!(x, Value::Str(s) if s == k))
            .map_or(Value::Undef, |(_, v)| v.clone())
    }
    fn has(&self, k: &str) -> bool {
        self.0
            .iter()
            .any(|(x, _)| matches!(x, Value::Str(s) if s == k))
    }
    fn set(&mut self, k: &str, v: Value) {
        match self
            .0
            .iter_mut()
            .find(|(x, _)| matches!(x, Value::Str(s) if s == k))
        {
            Some(slot) => slot.1 = v,
            None => self.0.push((Value::str(k), v)),
        }
    }
}

/// monit's `monit_validate_tests(check_type, tests)`.
fn monit_validate_tests(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let check = upcase(&c.arg(0))?;
    let tests = match c.arg(1) {
        Value::Array(a) => a,
        Value::Str(s) => {
            // Ruby's did_you_mean adds its suggestion for a String.
            return Err(plain(format!(
                "undefined method `each_with_index' for {}:String\nDid you mean?  each_line",
                inspect(&Value::Str(s))
            ))
            .into());
        }
        Value::Hash(_) => {
            return Err(plain("no implicit conversion of String into Integer").into());
        }
        other => return Err(no_method("each_with_index", &other).into()),
    };
    let mut out = Vec::with_capacity(tests.len());
    for test in tests {
        let Value::Hash(h) = test else {
            return Err(plain(format!(
                "Tests for '{check}': a test must be a Hash, got {}",
                inspect(&test)
            ))
            .into());
        };
        out.push(Value::Hash(validate_test(&check, RHash(h))?.0));
    }
    Ok(Value::Array(out))
}

fn validate_test(check: &str, mut t: RHash) -> Result<RHash, crate::lang::error::LangError> {
    let ty = upcase(&t.get("type"))?;
    t.set("type", Value::str(&ty));
    let Some(types) = test_types(check) else {
        return Err(no_method("include?", &Value::Undef));
    };
    if !types.contains(&ty.as_str()) {
        return Err(plain(format!(
            "Tests for '{check}': invalid test type '{ty}'"
        )));
    }
    let prefix = format!("Tests for '{check}' ('{ty}'): ");
    let fail = |m: &str| plain(format!("{prefix}{m}"));
    if t.has("tolerance") {
        let tol = match t.get("tolerance") {
            Value::Hash(h) => RHash(h),
            _ => RHash(Vec::new()),
        };
        if !tol.has("cycles") {
            return Err(fail(
                "tolerance must be a hash with 'cycles' key and optionally 'times'.",
            ));
        }
        let cycles = to_s(&tol.get("cycles"));
        let text = if tol.has("times") {
            format!("{} TIMES WITHIN {cycles} CYCLES", to_s(&tol.get("times")))
        } else {
            format!("{cycles} CYCLES")
        };
        t.set("tolerance", Value::Str(text));
    }
    if !t.has("action") {
        t.set("action", Value::str("ALERT"));
    } else {
        let action = upcase(&t.get("action"))?;
        t.set("action", Value::str(&action));
        if !ACTIONS.contains(&action.as_str()) {
            return Err(fail(&format!("invalid action '{action}'")));
        }
        if action == "EXEC" && !t.has("exec") {
            return Err(fail("missing command for exec action"));
        }
    }
    if RESOURCE_TESTS.contains(&ty.as_str()) || ty == "SPACE" || ty == "INODE" {
        if !t.has("operator") {
            return Err(fail("'operator' is mandatory"));
        }
        let op = t.get("operator");
        if !matches!(&op, Value::Str(s) if OPERATORS.contains(&s.as_str())) {
            return Err(fail(&format!("invalid operator: {}", to_s(&op))));
        }
        if !t.has("value") {
            return Err(fail("'value' is mandatory"));
        }
        let op = upcase(&op)?;
        t.set("operator", Value::str(&op));
        let cond = format!("{ty} {op} {}", to_s(&t.get("value")));
        t.set("condition", Value::Str(cond));
    } else if ty == "FSFLAGS" {
        t.set("condition", Value::Str(format!("CHANGED {ty}")));
    } else if ty == "PERM" || ty == "PERMISSION" {
        if !t.has("value") {
            return Err(fail("'value' is mandatory"));
        }
        let cond = format!("FAILED {ty} {}", to_s(&t.get("value")));
        t.set("condition", Value::Str(cond));
    } else if ty == "CONNECTION" {
        let cond = connection_condition(&mut t, &fail)?;
        t.set("condition", Value::Str(cond));
    }
    Ok(t)
}

/// The `condition` of a CONNECTION test (port or socket, protocol and its
/// request/response checks, timeout, retry).
fn connection_condition(
    t: &mut RHash,
    fail: &dyn Fn(&str) -> crate::lang::error::LangError,
) -> Result<String, crate::lang::error::LangError> {
    if !t.has("port") && !t.has("unixsocket") {
        return Err(fail("'port' or 'unixsocket' is mandatory"));
    }
    let mut cond = String::from("FAILED");
    if t.has("unixsocket") {
        cond.push_str(&format!("UNIXSOCKET {}", to_s(&t.get("unixsocket"))));
        return Ok(cond);
    }
    let port = to_s(&t.get("port"));
    if t.has("host") {
        cond.push_str(&format!(" HOST {} PORT {port}", to_s(&t.get("host"))));
    } else {
        cond.push_str(&format!(" PORT {port}"));
    }
    if t.has("socket_type") {
        let st = upcase(&t.get("socket_type"))?;
        t.set("socket_type", Value::str(&st));
        cond.push_str(&format!(" TYPE {st}"));
        if st == "TCPSSL" {
            if t.has("socket_type_cypher") {
                let cy = upcase(&t.get("socket_type_cypher"))?;
                t.set("socket_type_cypher", Value::str(&cy));
                cond.push_str(&format!(" {cy}"));
            }
            if t.has("socket_type_checksum") {
                cond.push_str(&format!(
                    " CERTMD5 {}",
                    to_s(&t.get("socket_type_checksum"))
                ));
            }
        }
    }
    if t.has("protocol") {
        let proto = upcase(&t.get("protocol"))?;
        t.set("protocol", Value::str(&proto));
        if proto != "GENERIC" {
            cond.push_str(&format!("\n    PROTOCOL {proto} "));
        }
        if t.has("protocol_test") {
            protocol_test(&proto, &t.get("protocol_test"), &mut cond, fail)?;
        }
    }
    if t.has("timeout") {
        cond.push_str(&format!(
            "\n    WITH TIMEOUT {} SECONDS",
            to_s(&t.get("timeout"))
        ));
    }
    if t.has("retry") {
        cond.push_str(&format!(" RETRY {}", to_s(&t.get("retry"))));
    }
    Ok(cond)
}

/// The protocol checks of a CONNECTION test: HTTP/APACHE-STATUS options
/// (`request` first) or GENERIC send/expect pairs.
fn protocol_test(
    proto: &str,
    pt: &Value,
    cond: &mut String,
    fail: &dyn Fn(&str) -> crate::lang::error::LangError,
) -> Result<(), crate::lang::error::LangError> {
    let options: &[&str] = match proto {
        "HTTP" => &["REQUEST", "STATUS", "CHECKSUM", "HOSTHEADER", "CONTENT"],
        "APACHE-STATUS" => &[
            "LOGLIMIT",
            "CLOSELIMIT",
            "DNSLIMIT",
            "KEEPALIVELIMIT",
            "REPLYLIMIT",
            "REQUESTLIMIT",
            "STARTLIMIT",
            "WAITLIMIT",
            "GRACEFULLIMIT",
            "CLEANUPLIMIT",
        ],
        _ => &["SEND", "EXPECT"],
    };
    if options != ["SEND", "EXPECT"] {
        let Value::Hash(h) = pt else {
            return Err(fail(&format!(
                "protocol_test must be a hash with any of this keys: {}.",
                options.join(", ")
            )));
        };
        let mut invalid = Vec::new();
        for (k, _) in h {
            let k = upcase(k)?;
            if !options.contains(&k.as_str()) && !invalid.contains(&k) {
                invalid.push(k);
            }
        }
        if !invalid.is_empty() {
            return Err(fail(&format!(
                "invalid options in {proto} ckeck: {}",
                invalid.join(", ")
            )));
        }
        let opts = RHash(h.clone());
        if opts.has("request") {
            cond.push_str(&format!("\n    REQUEST {}", to_s(&opts.get("request"))));
        }
        for (k, v) in h {
            if !matches!(k, Value::Str(s) if s == "request") {
                cond.push_str(&format!("\n    {} {}", upcase(k)?, to_s(v)));
            }
        }
        return Ok(());
    }
    let Value::Array(pairs) = pt else {
        return Err(fail(
            "protocol_test must be an array of hashes with send/expect pairs.",
        ));
    };
    for pair in pairs {
        let Value::Hash(p) = pair else {
            return Err(no_method("keys", pair));
        };
        let keys = p
            .iter()
            .map(|(k, _)| upcase(k))
            .collect::<Result<Vec<_>, _>>()?;
        if !options.iter().all(|o| keys.iter().any(|k| k == o)) {
            return Err(fail(&format!(
                "missing options in {proto} ckeck: {} are mandatory.",
                options.join(", ")
            )));
        }
        for (k, v) in p {
            cond.push_str(&format!("\n    {} {}", upcase(k)?, to_s(v)));
        }
    }
    Ok(())
}

/// YAML data as a Puppet value, mappings in the order they are written
/// (as Ruby's hashes keep them).
pub(crate) struct Ordered(pub(crate) Value);

impl<'de> serde::Deserialize<'de> for Ordered {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(OrderedVisitor).map(Ordered)
    }
}

struct OrderedVisitor;

impl<'de> serde::de::Visitor<'de> for OrderedVisitor {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("YAML data")
    }
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E>(self, i: i64) -> Result<Value, E> {
        Ok(Value::Int(i))
    }
    fn visit_u64<E>(self, u: u64) -> Result<Value, E> {
        Ok(i64::try_from(u).map_or(Value::Float(u as f64), Value::Int))
    }
    fn visit_f64<E>(self, f: f64) -> Result<Value, E> {
        Ok(Value::Float(f))
    }
    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::str(s))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Undef)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Undef)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Ordered(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out: Vec<(Value, Value)> = Vec::new();
        while let Some((Ordered(k), Ordered(v))) = map.next_entry()? {
            match out.iter_mut().find(|(x, _)| *x == k) {
                Some(slot) => slot.1 = v,
                None => out.push((k, v)),
            }
        }
        Ok(Value::Hash(out))
    }
}
