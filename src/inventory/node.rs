//! The inventory's document tree, each node with its full [`Origin`]
//! (file, line and column). The `yaml` plugin splices other files into
//! the inventory, so a position alone no longer says where a value was
//! written: every node here carries its file, and errors about values read
//! from an included file name that file.

use std::path::PathBuf;
use std::sync::Arc;

use super::{InventoryError, Origin};
use crate::yaml;

/// One node of the (plugin-resolved) inventory document.
#[derive(Clone, Debug)]
pub struct Node {
    pub origin: Origin,
    pub value: Value,
}

#[derive(Clone, Debug)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    /// Keys keep their own positions, in document order.
    Map(Vec<(Node, Node)>),
}

impl Node {
    /// The tree of one YAML document read from `file`. `depth` is how deep
    /// the document stands in the inventory (an included file's content
    /// sits under the reference that named it); the whole tree may nest
    /// [`yaml::MAX_DEPTH`] levels at most, so walks over it stay shallow.
    pub fn from_yaml(
        node: yaml::Node,
        file: &Arc<PathBuf>,
        depth: usize,
    ) -> Result<Node, InventoryError> {
        let origin = Origin::new(file, node.line, node.column);
        let nested = matches!(node.value, yaml::Value::Seq(_) | yaml::Value::Map(_));
        if nested && depth >= yaml::MAX_DEPTH {
            return Err(InventoryError::at(
                origin,
                format!(
                    "lists and mappings nest deeper than {} levels (counting the files the yaml plugin reads)",
                    yaml::MAX_DEPTH
                ),
            ));
        }
        let value = match node.value {
            yaml::Value::Null => Value::Null,
            yaml::Value::Bool(b) => Value::Bool(b),
            yaml::Value::Int(i) => Value::Int(i),
            yaml::Value::Float(x) => Value::Float(x),
            yaml::Value::Str(s) => Value::Str(s),
            yaml::Value::Seq(items) => Value::Seq(
                items
                    .into_iter()
                    .map(|i| Node::from_yaml(i, file, depth + 1))
                    .collect::<Result<_, _>>()?,
            ),
            yaml::Value::Map(entries) => Value::Map(
                entries
                    .into_iter()
                    .map(|(k, v)| {
                        Ok((
                            Node::from_yaml(k, file, depth + 1)?,
                            Node::from_yaml(v, file, depth + 1)?,
                        ))
                    })
                    .collect::<Result<_, InventoryError>>()?,
            ),
        };
        Ok(Node { origin, value })
    }

    /// A JSON value as a node tree, every node at `origin`.
    pub fn from_json(v: &serde_json::Value, origin: &Origin) -> Node {
        use serde_json::Value as J;
        let value = match v {
            J::Null => Value::Null,
            J::Bool(b) => Value::Bool(*b),
            J::Number(n) => n
                .as_i64()
                .map(Value::Int)
                .unwrap_or_else(|| Value::Float(n.as_f64().unwrap_or(0.0))),
            J::String(s) => Value::Str(s.clone()),
            J::Array(items) => {
                Value::Seq(items.iter().map(|i| Node::from_json(i, origin)).collect())
            }
            J::Object(map) => Value::Map(
                map.iter()
                    .map(|(k, v)| {
                        (
                            Node::from_json(&J::String(k.clone()), origin),
                            Node::from_json(v, origin),
                        )
                    })
                    .collect(),
            ),
        };
        Node {
            origin: origin.clone(),
            value,
        }
    }

    pub fn null(origin: Origin) -> Node {
        Node {
            origin,
            value: Value::Null,
        }
    }

    /// A short name of the node's kind, for "expected X, found Y" errors.
    pub fn kind(&self) -> &'static str {
        match self.value {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a number",
            Value::Str(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The entries of a mapping that is a `_plugin` reference.
    pub fn plugin_reference(&self) -> Option<&[(Node, Node)]> {
        match &self.value {
            Value::Map(entries) if entries.iter().any(|(k, _)| k.as_str() == Some("_plugin")) => {
                Some(entries)
            }
            _ => None,
        }
    }

    /// The node as plain JSON, positions dropped.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match &self.value {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i) => J::from(*i),
            Value::Float(x) => serde_json::Number::from_f64(*x).map_or(J::Null, J::Number),
            Value::Str(s) => J::String(s.clone()),
            Value::Seq(items) => J::Array(items.iter().map(Node::to_json).collect()),
            Value::Map(entries) => J::Object(
                entries
                    .iter()
                    .map(|(k, v)| (key_text(k), v.to_json()))
                    .collect(),
            ),
        }
    }
}

/// The text of a mapping key; a key that is not a string is named by its
/// kind (inventory keys are strings; anything else is an error later).
pub fn key_text(key: &Node) -> String {
    match &key.value {
        Value::Str(s) => s.clone(),
        Value::Int(i) => i.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Float(x) => x.to_string(),
        Value::Null => "null".into(),
        Value::Seq(_) | Value::Map(_) => format!("<{} at {}>", key.kind(), key.origin),
    }
}
