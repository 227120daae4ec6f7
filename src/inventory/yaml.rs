//! A YAML document as a tree of nodes that remember where they stand in the
//! file. The inventory is read into this tree first (syntax errors come from
//! serde-saphyr with their line and column), then converted by hand into typed
//! values, so that every later error — an unknown key, a wrong type, a
//! duplicate group — can name the file, line and column it is about.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

/// Where something stands in a source file. Lines and columns count from 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    pub file: Arc<PathBuf>,
    pub line: u64,
    pub column: u64,
}

impl Origin {
    pub fn new(file: &Arc<PathBuf>, line: u64, column: u64) -> Self {
        Origin {
            file: Arc::clone(file),
            line,
            column,
        }
    }

    /// An origin for values that come from no file (URIs given on the command line).
    pub fn command_line() -> Self {
        Origin {
            file: Arc::new(PathBuf::from("<command line>")),
            line: 0,
            column: 0,
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.file.display())
        } else {
            write!(f, "{}:{}:{}", self.file.display(), self.line, self.column)
        }
    }
}

/// One node of the document with its position (line, column).
#[derive(Clone, Debug)]
pub struct Node {
    pub line: u64,
    pub column: u64,
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

/// The text of a mapping key; non-string keys are written as JSON.
pub fn key_text(key: &Node) -> String {
    match &key.value {
        Value::Str(s) => s.clone(),
        _ => key.to_json().to_string(),
    }
}

/// A YAML syntax error, with the position serde-saphyr gives.
#[derive(Debug)]
pub struct SyntaxError {
    pub line: u64,
    pub column: u64,
    pub message: String,
}

/// Parses YAML text into a node tree. An empty document is `Null`.
pub fn parse(text: &str) -> Result<Node, SyntaxError> {
    if text.trim().is_empty() {
        return Ok(Node {
            line: 1,
            column: 1,
            value: Value::Null,
        });
    }
    // YAML 1.2 booleans only: `n`, `y`, `on`, `no` stay strings (as keys
    // they are names; boolean options accept yes/no/on/off themselves).
    let mut options = serde_saphyr::Options::default();
    options.strict_booleans = true;
    serde_saphyr::from_str_with_options::<Node>(text, options).map_err(|e| {
        let (line, column) = e
            .location()
            .map(|l| (l.line(), l.column()))
            .unwrap_or((0, 0));
        SyntaxError {
            line,
            column,
            message: first_line(&e.without_snippet().to_string()),
        }
    })
}

fn first_line(text: &str) -> String {
    // serde-saphyr appends "at line X, column Y"; we print our own position.
    let line = text.lines().next().unwrap_or("invalid YAML").trim();
    // Advice meant for programs using the YAML library, not for users.
    let line = line
        .split(", set DuplicateKeyPolicy")
        .next()
        .unwrap_or(line);
    match line.find(" at line ") {
        Some(i) => line[..i].to_string(),
        None => line.to_string(),
    }
}

/// Used by callers that only need the file name in errors.
pub fn display_path(path: &Path) -> String {
    path.display().to_string()
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let spanned = Spanned::<Value>::deserialize(d)?;
        Ok(Node {
            line: spanned.referenced.line(),
            column: spanned.referenced.column(),
            value: spanned.value,
        })
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Value::deserialize(d)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        i64::try_from(v)
            .map(Value::Int)
            .map_err(|_| E::custom("integer is too large"))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::Str(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Node>()? {
            items.push(item);
        }
        Ok(Value::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries = Vec::new();
        while let Some((k, v)) = map.next_entry::<Node, Node>()? {
            entries.push((k, v));
        }
        Ok(Value::Map(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_keep_positions() {
        let node = parse("a: 1\nb:\n  - x\n  - {c: true}\n").unwrap();
        let Value::Map(entries) = &node.value else {
            panic!("not a map")
        };
        let (key_b, val_b) = &entries[1];
        assert_eq!((key_b.line, key_b.column), (2, 1));
        let Value::Seq(items) = &val_b.value else {
            panic!("not a seq")
        };
        assert_eq!(items[0].line, 3);
        assert_eq!(items[1].line, 4);
        assert_eq!(
            node.to_json(),
            serde_json::json!({"a":1,"b":["x",{"c":true}]})
        );
    }

    #[test]
    fn syntax_errors_have_positions() {
        let err = parse("a: 1\nb: [1, 2\nc: 3\n").unwrap_err();
        assert!(err.line >= 2, "{err:?}");
        assert!(!err.message.is_empty());
    }

    #[test]
    fn only_yaml_1_2_booleans() {
        let node = parse("n: 1\ny: no\nt: true\n").unwrap();
        assert_eq!(
            node.to_json(),
            serde_json::json!({"n": 1, "y": "no", "t": true})
        );
    }

    #[test]
    fn duplicate_keys_are_an_error() {
        let err = parse("a: 1\na: 2\n").unwrap_err();
        assert_eq!(err.line, 2, "{err:?}");
    }
}
