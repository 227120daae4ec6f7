//! The catalog an apply works from: Puppet's catalog JSON (what `ferry
//! catalog compile` and `puppet catalog compile` write), read into plain
//! resources with their parameters, containment edges and the catalog's
//! identity (node, version, uuid, environment). A catalog ferry compiled
//! itself comes in through [`ApplyCatalog::from_compiled`] without a round
//! trip through text; a file through [`ApplyCatalog::from_json`], whose
//! errors carry the file, line and column.

use std::collections::BTreeSet;

use serde::Deserialize;
use serde_json::{Map, Value};

/// One resource of the catalog, as Puppet serialized it.
#[derive(Debug, Clone, PartialEq)]
pub struct Resource {
    /// The type as Puppet writes it in references: `File`, `Class`, `Foo::Bar`.
    pub type_name: String,
    pub title: String,
    pub tags: Vec<String>,
    pub file: Option<String>,
    pub line: Option<u64>,
    pub exported: bool,
    /// `defined_type` for instances of defined types, when the catalog says.
    pub kind: Option<String>,
    pub params: Map<String, Value>,
    /// Parameters whose values were `Sensitive` in the manifest.
    pub sensitive: BTreeSet<String>,
}

impl Resource {
    /// A resource with the parameters of a JSON object (anything else:
    /// none), no tags and no source position; for tests of the types.
    pub fn with_params(type_name: &str, title: &str, params: &Value) -> Resource {
        Resource {
            params: params.as_object().cloned().unwrap_or_default(),
            ..Resource::made(type_name, title.to_string(), Vec::new())
        }
    }

    /// A resource no catalog declared (a generated file, a container named
    /// in a message): no parameters, no source position.
    pub fn made(type_name: &str, title: String, tags: Vec<String>) -> Resource {
        Resource {
            type_name: type_name.into(),
            title,
            tags,
            file: None,
            line: None,
            exported: false,
            kind: None,
            params: serde_json::Map::new(),
            sensitive: std::collections::BTreeSet::new(),
        }
    }

    /// `Type[title]`, the resource's reference.
    pub fn reference(&self) -> String {
        format!("{}[{}]", self.type_name, self.title)
    }

    /// The type in lower case, as providers name it: `file`, `exec`.
    pub fn type_key(&self) -> String {
        self.type_name.to_ascii_lowercase()
    }

    /// A parameter's value.
    pub fn param(&self, name: &str) -> Option<&Value> {
        self.params.get(name)
    }

    /// Whether the parameter's value was `Sensitive`.
    pub fn is_sensitive(&self, name: &str) -> bool {
        self.sensitive.contains(name)
    }
}

/// A catalog ready to be ordered and applied.
#[derive(Debug, Clone, PartialEq)]
pub struct ApplyCatalog {
    /// The node (certname) it was compiled for.
    pub name: String,
    /// Puppet's `version`: the configuration version, as text.
    pub version: String,
    pub catalog_uuid: Option<String>,
    pub code_id: Option<String>,
    pub environment: String,
    pub resources: Vec<Resource>,
    /// Containment: (container, contained), as indices into `resources`.
    pub contains: Vec<(usize, usize)>,
}

/// Why a catalog file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("{file}:{line}:{column}: {message}")]
    Syntax {
        file: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{file}: edge {index}: {message}")]
    Edge {
        file: String,
        index: usize,
        message: String,
    },
}

#[derive(Deserialize)]
struct RawCatalog {
    #[serde(default)]
    name: String,
    #[serde(default)]
    version: Option<Value>,
    #[serde(default)]
    catalog_uuid: Option<String>,
    #[serde(default)]
    code_id: Option<String>,
    #[serde(default = "production")]
    environment: String,
    resources: Vec<RawResource>,
    #[serde(default)]
    edges: Vec<RawEdge>,
}

fn production() -> String {
    "production".into()
}

#[derive(Deserialize)]
struct RawResource {
    #[serde(rename = "type")]
    type_name: String,
    title: Value,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    file: Option<String>,
    #[serde(default)]
    line: Option<u64>,
    #[serde(default)]
    exported: bool,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    parameters: Map<String, Value>,
    #[serde(default)]
    sensitive_parameters: Vec<String>,
}

#[derive(Deserialize)]
struct RawEdge {
    source: String,
    target: String,
}

impl ApplyCatalog {
    /// Reads Puppet's catalog JSON; `file` names it in errors. A catalog
    /// wrapped as `puppet catalog find` prints it (`{"data": {...}}`) is
    /// taken too.
    pub fn from_json(text: &str, file: &str) -> Result<ApplyCatalog, CatalogError> {
        let syntax = |e: serde_json::Error| CatalogError::Syntax {
            file: file.to_string(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        };
        let value: Value = serde_json::from_str(text).map_err(syntax)?;
        let value = match value {
            Value::Object(mut m) if m.contains_key("data") && !m.contains_key("resources") => {
                m.remove("data").unwrap_or(Value::Null)
            }
            v => v,
        };
        // Re-read from the text for positions when the shape is wrong.
        let raw: RawCatalog = match serde_json::from_value(value) {
            Ok(raw) => raw,
            Err(e) => {
                return Err(match serde_json::from_str::<RawCatalog>(text) {
                    Err(pos) if pos.line() > 0 => syntax(pos),
                    _ => CatalogError::Syntax {
                        file: file.to_string(),
                        line: 1,
                        column: 1,
                        message: e.to_string(),
                    },
                });
            }
        };
        Self::from_raw(raw, file)
    }

    fn from_raw(raw: RawCatalog, file: &str) -> Result<ApplyCatalog, CatalogError> {
        let exported: BTreeSet<String> = raw
            .resources
            .iter()
            .filter(|r| r.exported)
            .map(|r| format!("{}[{}]", r.type_name, r.title.as_str().unwrap_or_default()))
            .collect();
        let resources: Vec<Resource> = raw
            .resources
            .into_iter()
            // Exported resources never reach an agent.
            .filter(|r| !r.exported)
            .map(|r| Resource {
                type_name: r.type_name,
                title: match r.title {
                    Value::String(s) => s,
                    other => other.to_string(),
                },
                tags: r.tags,
                file: r.file,
                line: r.line,
                exported: r.exported,
                kind: r.kind,
                params: r.parameters,
                sensitive: r.sensitive_parameters.into_iter().collect(),
            })
            .collect();
        let index: std::collections::HashMap<String, usize> = resources
            .iter()
            .enumerate()
            .map(|(i, r)| (r.reference(), i))
            .collect();
        let mut contains = Vec::new();
        for (n, e) in raw.edges.iter().enumerate() {
            if exported.contains(&e.source) || exported.contains(&e.target) {
                continue;
            }
            let find = |name: &str| {
                index.get(name).copied().ok_or_else(|| CatalogError::Edge {
                    file: file.to_string(),
                    index: n,
                    message: format!("{name} is not a resource of the catalog"),
                })
            };
            contains.push((find(&e.source)?, find(&e.target)?));
        }
        Ok(ApplyCatalog {
            name: raw.name,
            version: match raw.version {
                Some(Value::String(s)) => s,
                Some(Value::Null) | None => String::new(),
                Some(v) => v.to_string(),
            },
            catalog_uuid: raw.catalog_uuid,
            code_id: raw.code_id,
            environment: raw.environment,
            resources,
            contains,
        })
    }

    /// A catalog ferry compiled (taken apart: its parameters move, a
    /// content is never copied).
    pub fn from_compiled(c: crate::catalog::Catalog) -> ApplyCatalog {
        let resources: Vec<Resource> = c
            .resources
            .into_iter()
            .map(|r| Resource {
                type_name: r.type_name,
                title: r.title,
                tags: r.tags,
                // Inline code's empty file name (`"file": ""` in the
                // catalog) stays out of reports, as before.
                file: r.file.filter(|f| !f.is_empty()),
                line: r.line.map(u64::from),
                exported: r.exported,
                kind: Some(r.kind),
                params: r.parameters,
                sensitive: r.sensitive_parameters.into_iter().collect(),
            })
            .collect();
        let index: std::collections::HashMap<String, usize> = resources
            .iter()
            .enumerate()
            .map(|(i, r)| (r.reference(), i))
            .collect();
        let contains = c
            .edges
            .iter()
            .filter_map(|e| Some((*index.get(&e.source)?, *index.get(&e.target)?)))
            .collect();
        ApplyCatalog {
            name: c.name,
            version: c.version.to_string(),
            catalog_uuid: Some(c.catalog_uuid),
            code_id: c.code_id,
            environment: c.environment,
            resources,
            contains,
        }
    }
}
