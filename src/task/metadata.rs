//! Task metadata (`<task>.json`) in Bolt's format. Unknown keys are warned
//! about and ignored; malformed metadata is an error naming the file (and,
//! where the text shows it, the line and column). A key given twice keeps
//! its last value, as Ruby's JSON parser (Bolt's) does: published modules
//! rely on it. The metadata as written (`raw`) is kept for `task show` and
//! the server's task listing.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use super::TaskError;

/// How a task receives its parameters.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum InputMethod {
    Environment,
    Stdin,
    Both,
    Powershell,
}

#[derive(Clone, Debug, Default, Deserialize)]
pub struct Param {
    #[serde(rename = "type")]
    pub ty: Option<String>,
    pub description: Option<String>,
    pub default: Option<Value>,
    #[serde(default)]
    pub sensitive: bool,
    #[serde(flatten)]
    pub unknown: BTreeMap<String, Value>,
}

/// A list that may also be written `null` (Puppet accepts a null
/// `requirements`).
fn list_or_null<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    Ok(Option::<Vec<String>>::deserialize(d)?.unwrap_or_default())
}

#[derive(Clone, Debug, Default, Deserialize)]
pub struct Implementation {
    pub name: String,
    #[serde(default, deserialize_with = "list_or_null")]
    pub requirements: Vec<String>,
    pub input_method: Option<InputMethod>,
    #[serde(default, deserialize_with = "list_or_null")]
    pub files: Vec<String>,
    /// Whether this implementation runs on the proxy (`None`: the
    /// metadata's own `remote`).
    pub remote: Option<bool>,
    #[serde(flatten)]
    pub unknown: BTreeMap<String, Value>,
}

#[derive(Clone, Debug, Default, Deserialize)]
pub struct Metadata {
    pub description: Option<String>,
    /// `None` when the metadata does not declare parameters: then any are
    /// accepted, as in Bolt.
    pub parameters: Option<BTreeMap<String, Param>>,
    pub input_method: Option<InputMethod>,
    #[serde(default)]
    pub implementations: Vec<Implementation>,
    #[serde(default, deserialize_with = "list_or_null")]
    pub files: Vec<String>,
    #[serde(default)]
    pub supports_noop: bool,
    #[serde(default)]
    pub private: bool,
    #[serde(default)]
    pub remote: bool,
    #[serde(flatten)]
    pub unknown: BTreeMap<String, Value>,
    /// The metadata as written, each repeated key with its last value
    /// (`{}` for a task without metadata).
    #[serde(skip)]
    pub raw: Map<String, Value>,
}

/// Keys Bolt knows that ferry reads no further; not worth a warning.
const QUIET: &[&str] = &["puppet_task_version", "extensions"];

impl Metadata {
    /// Whether the metadata has `implementations` (then they, not the
    /// files named after the task, are its executables).
    pub fn declares_implementations(&self) -> bool {
        self.raw.contains_key("implementations")
    }

    /// Whether some implementation runs on a proxy (Bolt's `remote`, on the
    /// metadata or an implementation): the task can run for a device.
    pub fn runs_remote(&self) -> bool {
        if self.implementations.is_empty() {
            return self.remote;
        }
        self.implementations
            .iter()
            .any(|i| i.remote.unwrap_or(self.remote))
    }

    pub fn parse(text: &str, path: &str) -> Result<Metadata, TaskError> {
        let at = |e: &serde_json::Error| TaskError::Metadata {
            path: path.to_string(),
            message: format!("line {}, column {}: {e}", e.line(), e.column()),
        };
        // Read as a plain value first: that keeps the last of repeated keys.
        let raw = match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => {
                return Err(TaskError::Metadata {
                    path: path.to_string(),
                    message: "task metadata must be a JSON object".into(),
                });
            }
            Err(e) => return Err(at(&e)),
        };
        let mut meta: Metadata =
            serde_json::from_value(Value::Object(raw.clone())).map_err(|e| {
                // Reading the text again gives the error its position, unless
                // what it trips on is a repeated key (which is allowed).
                match serde_json::from_str::<Metadata>(text) {
                    Err(positioned) if !positioned.to_string().starts_with("duplicate field") => {
                        at(&positioned)
                    }
                    _ => TaskError::Metadata {
                        path: path.to_string(),
                        message: e.to_string(),
                    },
                }
            })?;
        meta.raw = raw;
        for key in meta.unknown.keys().filter(|k| !QUIET.contains(&k.as_str())) {
            tracing::warn!("{path}: unknown key '{key}' in task metadata is ignored");
        }
        for (name, p) in meta.parameters.iter().flatten() {
            for key in p.unknown.keys() {
                tracing::warn!("{path}: unknown key '{key}' in parameter {name} is ignored");
            }
            if !super::loader::valid_segment(name) {
                return Err(TaskError::Metadata {
                    path: path.to_string(),
                    message: format!(
                        "invalid parameter name '{name}' (lowercase letters, digits and '_')"
                    ),
                });
            }
        }
        for i in &meta.implementations {
            for key in i.unknown.keys() {
                tracing::warn!(
                    "{path}: unknown key '{key}' in implementation {} is ignored",
                    i.name
                );
            }
        }
        Ok(meta)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_bolts_metadata() {
        let m = Metadata::parse(
            r#"{"description": "d", "parameters": {"name": {"type": "String[1]", "sensitive": true}},
                "input_method": "stdin", "supports_noop": true, "files": ["m/files/a.sh"],
                "implementations": [{"name": "t.sh", "requirements": ["shell"]}], "puppet_task_version": 1}"#,
            "t.json",
        )
        .unwrap();
        assert_eq!(m.input_method, Some(InputMethod::Stdin));
        assert!(m.parameters.as_ref().unwrap()["name"].sensitive);
        assert_eq!(m.implementations[0].requirements, vec!["shell"]);
    }

    #[test]
    fn a_repeated_key_keeps_its_last_value_as_rubys_parser_does() {
        let m = Metadata::parse(
            r#"{"description": "first", "input_method": "stdin",
                "implementations": [{"name": "a.sh", "input_method": "stdin", "input_method": "environment"}],
                "description": "last"}"#,
            "t.json",
        )
        .unwrap();
        assert_eq!(m.description.as_deref(), Some("last"));
        assert_eq!(
            m.implementations[0].input_method,
            Some(InputMethod::Environment)
        );
        assert_eq!(m.raw["description"], "last");
        // A bad value after a repeated key is still an error naming it.
        let e = Metadata::parse(
            r#"{"private": true, "private": false, "supports_noop": "yes"}"#,
            "t.json",
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("t.json: ") && e.contains("boolean"), "{e}");
    }

    #[test]
    fn null_requirements_and_files_are_empty_and_raw_keeps_unknown_keys() {
        let m = Metadata::parse(
            r#"{"implementations": [{"name": "a.sh", "requirements": null}], "files": null,
                "anything": true, "extensions": {}}"#,
            "t.json",
        )
        .unwrap();
        assert!(m.implementations[0].requirements.is_empty());
        assert!(m.files.is_empty());
        assert!(m.declares_implementations());
        assert_eq!(m.raw["anything"], true);
        assert!(!Metadata::default().declares_implementations());
        let e = Metadata::parse("[1]", "t.json").unwrap_err().to_string();
        assert!(e.contains("must be a JSON object"), "{e}");
    }

    #[test]
    fn malformed_metadata_names_the_file_and_position() {
        let e = Metadata::parse("{\n  \"parameters\": [1]\n}", "m/tasks/t.json")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("m/tasks/t.json: line 2, column"), "{e}");
        let e = Metadata::parse("{\"input_method\": \"carrier-pigeon\"}", "t.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("carrier-pigeon"), "{e}");
    }
}
