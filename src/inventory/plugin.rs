//! `_plugin` references: `{_plugin: env_var, var: NAME, default, optional, json}`
//! may stand wherever a value may, so that secrets stay out of the file. They
//! are replaced by their values before the document is interpreted; a value
//! keeps the position of the reference, so later errors point at it.

use std::path::PathBuf;
use std::sync::Arc;

use super::{InventoryError, Origin};
use crate::yaml::{Node, Value, key_text};

/// Where plugin values come from; the process environment in real use.
pub trait Env {
    fn var(&self, name: &str) -> Option<String>;
}

/// The process environment.
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}

/// Replaces every plugin reference in the tree by its value. An optional
/// reference with no value becomes null, and a mapping entry whose value is
/// such a null is dropped.
pub fn resolve(node: Node, file: &Arc<PathBuf>, env: &dyn Env) -> Result<Node, InventoryError> {
    let Node {
        line,
        column,
        value,
    } = node;
    let value = match value {
        Value::Map(entries) if entries.iter().any(|(k, _)| k.as_str() == Some("_plugin")) => {
            return env_var(&entries, Origin::new(file, line, column), env);
        }
        Value::Map(entries) => {
            let mut out = Vec::with_capacity(entries.len());
            for (k, v) in entries {
                let is_plugin = matches!(&v.value, Value::Map(e) if e.iter().any(|(k, _)| k.as_str() == Some("_plugin")));
                let v = resolve(v, file, env)?;
                if is_plugin && matches!(v.value, Value::Null) {
                    continue;
                }
                out.push((k, v));
            }
            Value::Map(out)
        }
        Value::Seq(items) => Value::Seq(
            items
                .into_iter()
                .map(|item| resolve(item, file, env))
                .collect::<Result<_, _>>()?,
        ),
        other => other,
    };
    Ok(Node {
        line,
        column,
        value,
    })
}

fn env_var(entries: &[(Node, Node)], at: Origin, env: &dyn Env) -> Result<Node, InventoryError> {
    let mut var = None;
    let mut default = None;
    let mut optional = false;
    let mut json = false;
    for (k, v) in entries {
        let here = Origin::new(&at.file, k.line, k.column);
        match key_text(k).as_str() {
            "_plugin" => match v.as_str() {
                Some("env_var") => {}
                Some(other) => {
                    return Err(InventoryError::at(
                        here,
                        format!("unknown plugin '{other}' (ferry knows: env_var)"),
                    ));
                }
                None => return Err(InventoryError::at(here, "_plugin must be a string")),
            },
            "var" => {
                var = Some(v.as_str().ok_or_else(|| {
                    InventoryError::at(here, format!("var must be a string, found {}", v.kind()))
                })?)
            }
            "default" => default = Some(v),
            "optional" => optional = bool_of(v, &here, "optional")?,
            "json" => json = bool_of(v, &here, "json")?,
            other => {
                return Err(InventoryError::at(
                    here,
                    format!(
                        "unknown key '{other}' for plugin env_var (expected var, default, optional, json)"
                    ),
                ));
            }
        }
    }
    let var = var.ok_or_else(|| InventoryError::at(at.clone(), "plugin env_var needs 'var'"))?;
    let located = |value| Node {
        line: at.line,
        column: at.column,
        value,
    };
    match env.var(var) {
        Some(text) if json => {
            let parsed: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
                InventoryError::at(
                    at.clone(),
                    format!("environment variable {var} is not valid JSON: {e}"),
                )
            })?;
            Ok(from_json(&parsed, &at))
        }
        Some(text) => Ok(located(Value::Str(text))),
        None => match default {
            Some(d) => Ok(d.clone()),
            None if optional => Ok(located(Value::Null)),
            None => Err(InventoryError::at(
                at,
                format!("environment variable {var} is not set (plugin env_var)"),
            )),
        },
    }
}

fn bool_of(v: &Node, here: &Origin, what: &str) -> Result<bool, InventoryError> {
    match v.value {
        Value::Bool(b) => Ok(b),
        _ => Err(InventoryError::at(
            here.clone(),
            format!("{what} must be true or false, found {}", v.kind()),
        )),
    }
}

/// A JSON value as a node tree, every node at the given position.
fn from_json(v: &serde_json::Value, at: &Origin) -> Node {
    use serde_json::Value as J;
    let value = match v {
        J::Null => Value::Null,
        J::Bool(b) => Value::Bool(*b),
        J::Number(n) => n
            .as_i64()
            .map(Value::Int)
            .unwrap_or_else(|| Value::Float(n.as_f64().unwrap_or(0.0))),
        J::String(s) => Value::Str(s.clone()),
        J::Array(items) => Value::Seq(items.iter().map(|i| from_json(i, at)).collect()),
        J::Object(map) => Value::Map(
            map.iter()
                .map(|(k, v)| (from_json(&J::String(k.clone()), at), from_json(v, at)))
                .collect(),
        ),
    };
    Node {
        line: at.line,
        column: at.column,
        value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse;
    use std::collections::HashMap;

    struct FakeEnv(HashMap<&'static str, &'static str>);
    impl Env for FakeEnv {
        fn var(&self, name: &str) -> Option<String> {
            self.0.get(name).map(|s| s.to_string())
        }
    }

    fn run(yaml: &str, env: &[(&'static str, &'static str)]) -> Result<serde_json::Value, String> {
        let env = FakeEnv(env.iter().copied().collect());
        let file = Arc::new(PathBuf::from("inv.yaml"));
        resolve(parse(yaml).unwrap(), &file, &env)
            .map(|n| n.to_json())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn env_var_values() {
        let doc = "a: {_plugin: env_var, var: A}\nb: {_plugin: env_var, var: B, default: d}\nc: {_plugin: env_var, var: C, optional: true}\nd: {_plugin: env_var, var: D, json: true}\n";
        let out = run(doc, &[("A", "x"), ("D", "[1, {\"k\": true}]")]).unwrap();
        assert_eq!(
            out,
            serde_json::json!({"a": "x", "b": "d", "d": [1, {"k": true}]})
        );
    }

    #[test]
    fn env_var_errors_name_the_position() {
        let err = run("x:\n  y: {_plugin: env_var, var: NOPE}\n", &[]).unwrap_err();
        assert_eq!(
            err,
            "inv.yaml:2:6: environment variable NOPE is not set (plugin env_var)"
        );
        let err = run("x: {_plugin: vault, var: A}\n", &[]).unwrap_err();
        assert!(
            err.starts_with("inv.yaml:1:5: unknown plugin 'vault'"),
            "{err}"
        );
    }
}
