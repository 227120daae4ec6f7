//! A classification as Puppet code, the way Puppet's compiler takes an
//! ENC's node: its parameters become top-scope variables before the main
//! manifest (`$tier = 'gold'`), and its classes are declared after it —
//! those with parameters resource-like (`class { 'ntp': servers => [...]
//! }`), then the others with `include`. Values are written as Puppet
//! literals (single-quoted strings with `\\` and `\'` escaped, numbers,
//! booleans, `undef`, arrays, hashes with quoted keys), and names were
//! checked when the classification was made, so nothing a group holds can
//! become code of its own. The groups' config data goes with it as hiera
//! data keyed `class::param` (PE's classifier data), not as code.

use serde_json::{Map, Value};

use crate::catalog::NodeCode;

use super::classify::Classification;
use super::group::{is_class_name, is_param_name, is_variable_name};

/// A Puppet single-quoted string.
fn quote(s: &str, out: &mut String) {
    out.push('\'');
    for c in s.chars() {
        if c == '\\' || c == '\'' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('\'');
}

/// A JSON value as a Puppet literal.
pub fn literal(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("undef"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => out.push_str(&i.to_string()),
            (None, Some(u), _) => out.push_str(&u.to_string()),
            (_, _, Some(f)) => out.push_str(&format!("{f:?}")),
            _ => out.push_str("undef"),
        },
        Value::String(s) => quote(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                literal(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                quote(k, out);
                out.push_str(" => ");
                literal(item, out);
            }
            out.push('}');
        }
    }
}

/// The classification's parameters and classes as Puppet code. Names
/// that are not Puppet's are skipped (a classification's names are
/// checked where it is made; this is the last guard).
pub fn node_code(c: &Classification) -> NodeCode {
    let mut parameters = String::new();
    for (name, value) in &c.parameters {
        if !is_variable_name(name) {
            continue;
        }
        parameters.push('$');
        parameters.push_str(name);
        parameters.push_str(" = ");
        literal(value, &mut parameters);
        parameters.push('\n');
    }
    let mut classes = String::new();
    let declared = |params: &Map<String, Value>| !params.is_empty();
    for (class, params) in c.classes.iter().filter(|(_, p)| declared(p)) {
        if !is_class_name(class) {
            continue;
        }
        classes.push_str("class { ");
        quote(class, &mut classes);
        classes.push(':');
        for (p, v) in params.iter().filter(|(p, _)| is_param_name(p)) {
            classes.push_str("\n  ");
            classes.push_str(p);
            classes.push_str(" => ");
            literal(v, &mut classes);
            classes.push(',');
        }
        classes.push_str("\n}\n");
    }
    for (class, _) in c.classes.iter().filter(|(_, p)| !declared(p)) {
        if is_class_name(class) {
            classes.push_str("include ");
            quote(class, &mut classes);
            classes.push('\n');
        }
    }
    let mut data = Map::new();
    for (class, params) in &c.config_data {
        for (param, value) in params {
            data.insert(format!("{class}::{param}"), value.clone());
        }
    }
    NodeCode {
        parameters,
        classes,
        data,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::classifier::classify::NodeEnvironment;
    use serde_json::json;

    #[test]
    fn values_become_literals_that_cannot_escape() {
        let mut out = String::new();
        literal(
            &json!({"a": [1, -2, 1.5, true, null, "it's \\ ok"], "b'": {}}),
            &mut out,
        );
        assert_eq!(
            out,
            r#"{'a' => [1, -2, 1.5, true, undef, 'it\'s \\ ok'], 'b\'' => {}}"#
        );
    }

    #[test]
    fn parameters_first_then_classes_with_parameters_then_includes() {
        let c = Classification {
            groups: vec![],
            environment: NodeEnvironment::Default,
            classes: [
                ("motd".to_string(), Map::new()),
                (
                    "ntp".to_string(),
                    json!({"iburst": true, "servers": ["a"]})
                        .as_object()
                        .cloned()
                        .unwrap_or_default(),
                ),
            ]
            .into_iter()
            .collect(),
            parameters: json!({"tier": "gold", "Bad-Name": 1})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            config_data: [(
                "ntp".to_string(),
                json!({"servers": ["b"]})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            )]
            .into_iter()
            .collect(),
        };
        let code = node_code(&c);
        assert_eq!(code.parameters, "$tier = 'gold'\n");
        assert_eq!(json!(code.data), json!({"ntp::servers": ["b"]}));
        assert_eq!(
            code.classes,
            "class { 'ntp':\n  iburst => true,\n  servers => ['a'],\n}\ninclude 'motd'\n"
        );
    }
}
