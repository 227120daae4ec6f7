//! Task metadata (`<task>.json`) in Bolt's format. Unknown keys are warned
//! about and ignored; malformed metadata is an error naming the file (and,
//! for JSON syntax, the line and column).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

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

#[derive(Clone, Debug, Default, Deserialize)]
pub struct Implementation {
    pub name: String,
    #[serde(default)]
    pub requirements: Vec<String>,
    pub input_method: Option<InputMethod>,
    #[serde(default)]
    pub files: Vec<String>,
    #[serde(default)]
    pub remote: bool,
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
    #[serde(default)]
    pub files: Vec<String>,
    #[serde(default)]
    pub supports_noop: bool,
    #[serde(default)]
    pub private: bool,
    #[serde(default)]
    pub remote: bool,
    #[serde(flatten)]
    pub unknown: BTreeMap<String, Value>,
}

/// Keys Bolt knows that ferry reads no further; not worth a warning.
const QUIET: &[&str] = &["puppet_task_version", "extensions"];

impl Metadata {
    pub fn parse(text: &str, path: &str) -> Result<Metadata, TaskError> {
        let meta: Metadata = serde_json::from_str(text).map_err(|e| TaskError::Metadata {
            path: path.to_string(),
            message: format!("line {}, column {}: {e}", e.line(), e.column()),
        })?;
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
