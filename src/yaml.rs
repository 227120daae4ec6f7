//! YAML, read one way for every file ferry takes: the inventory, plans and
//! the server's configuration and tokens file. [`parse`] gives a tree of
//! nodes that remember where they stand in the file (syntax errors come
//! from serde-saphyr with their line and column); the inventory and plan
//! readers convert it by hand into typed values, so that every later error
//! — an unknown key, a wrong type, a duplicate group — can name the file,
//! line and column it is about. [`from_str`] reads straight into a serde
//! type (the server's files) with the same options, limits and messages.
//!
//! The reader is bounded (serde-saphyr's budget, set explicitly here):
//! lists and mappings nest at most [`MAX_DEPTH`] levels, a document holds at
//! most [`MAX_NODES`] values with aliases counted at every use (so "billion
//! laughs" stops early), and every recursive walk over the tree, here and
//! in the inventory and plan readers, is as deep as the document at most.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::{self, Deserialize, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
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
        self.json_with(key_text)
    }

    /// The node as JSON, each mapping key written by `key`.
    fn json_with(&self, key: fn(&Node) -> String) -> serde_json::Value {
        use serde_json::Value as J;
        match &self.value {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i) => J::from(*i),
            Value::Float(x) => serde_json::Number::from_f64(*x).map_or(J::Null, J::Number),
            Value::Str(s) => J::String(s.clone()),
            Value::Seq(items) => J::Array(items.iter().map(|n| n.json_with(key)).collect()),
            Value::Map(entries) => J::Object(
                entries
                    .iter()
                    .map(|(k, v)| (key(k), v.json_with(key)))
                    .collect(),
            ),
        }
    }
}

/// The text of a mapping key; non-string keys are written as JSON, in
/// which a list or mapping that is itself a key is named only by its kind
/// and position. (Writing nested keys out in full would escape key text
/// inside key text, doubling its length at every level: 40 nested `? `
/// keys took 33 s of CPU.)
pub fn key_text(key: &Node) -> String {
    match &key.value {
        Value::Str(s) => s.clone(),
        _ => key.json_with(inner_key).to_string(),
    }
}

/// A key inside a key: a list or mapping by its kind and position, a
/// scalar as [`key_text`] writes it.
fn inner_key(key: &Node) -> String {
    match &key.value {
        Value::Seq(_) | Value::Map(_) => {
            format!(
                "<{} at line {}, column {}>",
                key.kind(),
                key.line,
                key.column
            )
        }
        _ => key_text(key),
    }
}

/// How deeply lists and mappings may nest in an inventory or a plan.
pub const MAX_DEPTH: usize = 64;

/// Most values (scalars, lists, mappings) a document may hold, values
/// reached through aliases counted each time they are used.
pub const MAX_NODES: usize = 250_000;

/// A YAML syntax error, with the position serde-saphyr gives.
#[derive(Debug)]
pub struct SyntaxError {
    pub line: u64,
    pub column: u64,
    pub message: String,
}

/// Stack for the reader's own thread. serde-saphyr recurses once per
/// level with large frames (about 50 KiB a level in debug builds): at
/// [`MAX_DEPTH`] that is more than a 2 MiB thread (a tokio worker, a test)
/// holds, so the reading happens on a thread of known size.
const READER_STACK: usize = 16 * 1024 * 1024;

/// Parses YAML text into a node tree. An empty document is `Null`.
pub fn parse(text: &str) -> Result<Node, SyntaxError> {
    if text.trim().is_empty() {
        return Ok(Node {
            line: 1,
            column: 1,
            value: Value::Null,
        });
    }
    on_reader_thread(|| read(text))
}

/// Reads YAML text into a typed value, with [`parse`]'s options, limits
/// and messages.
pub fn from_str<T: DeserializeOwned + Send>(text: &str) -> Result<T, SyntaxError> {
    on_reader_thread(|| read(text))
}

/// Runs the reader on a thread of [`READER_STACK`] bytes.
fn on_reader_thread<T: Send>(
    read: impl FnOnce() -> Result<T, SyntaxError> + Send,
) -> Result<T, SyntaxError> {
    let failed = |message: String| SyntaxError {
        line: 0,
        column: 0,
        message,
    };
    let result = std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("ferry-yaml".into())
            .stack_size(READER_STACK)
            .spawn_scoped(s, read)
            .map(|h| h.join())
    });
    match result {
        Ok(Ok(read)) => read,
        Ok(Err(_)) => Err(failed("internal error: the YAML reader panicked".into())),
        Err(e) => Err(failed(format!("could not start the YAML reader: {e}"))),
    }
}

fn read<T: DeserializeOwned>(text: &str) -> Result<T, SyntaxError> {
    // YAML 1.2 booleans only: `n`, `y`, `on`, `no` stay strings (as keys
    // they are names; boolean options accept yes/no/on/off themselves).
    let mut options = serde_saphyr::Options::default();
    options.strict_booleans = true;
    let mut budget = serde_saphyr::Budget::default();
    budget.max_depth = MAX_DEPTH;
    budget.flow_nesting_limit = MAX_DEPTH;
    budget.max_nodes = MAX_NODES;
    options.budget = Some(budget);
    options.alias_limits.max_total_replayed_events = MAX_NODES;
    options.alias_limits.max_replay_stack_depth = MAX_DEPTH;
    serde_saphyr::from_str_with_options::<T>(text, options).map_err(|e| {
        let (line, column) = e
            .location()
            .map(|l| (l.line(), l.column()))
            .unwrap_or((0, 0));
        SyntaxError {
            line,
            column,
            message: message(&e),
        }
    })
}

fn too_deep() -> String {
    format!("lists and mappings nest deeper than {MAX_DEPTH} levels")
}

fn too_many() -> String {
    format!("the document holds more than {MAX_NODES} values (aliases count at every use)")
}

/// The first line of serde-saphyr's message, or ours for the limits.
fn message(e: &serde_saphyr::Error) -> String {
    use serde_saphyr::budget::BudgetBreach;
    // The error itself, without the snippet and alias wrappers around it.
    let mut inner = e;
    while let serde_saphyr::Error::WithSnippet { error, .. }
    | serde_saphyr::Error::AliasError { error, .. } = inner
    {
        inner = error;
    }
    match inner {
        serde_saphyr::Error::Budget { breach, .. } => match breach {
            BudgetBreach::Depth { .. } => too_deep(),
            BudgetBreach::Nodes { .. } => too_many(),
            _ => first_line(&e.without_snippet().to_string()),
        },
        serde_saphyr::Error::AliasReplayLimitExceeded { .. } => too_many(),
        serde_saphyr::Error::AliasReplayStackDepthExceeded { .. } => too_deep(),
        _ => {
            let text = first_line(&e.without_snippet().to_string());
            // The scanner's own limit on nested flow collections (`[[[`).
            if text == "recursion limit exceeded" {
                too_deep()
            } else {
                text
            }
        }
    }
}

fn first_line(text: &str) -> String {
    // serde-saphyr appends "at line X, column Y" (and with a type, may start
    // with "error: " and "line N: "); we print our own position.
    let mut line = text.lines().next().unwrap_or("invalid YAML").trim();
    line = line.strip_prefix("error: ").unwrap_or(line);
    if let Some(rest) = line.strip_prefix("line ")
        && let Some((_, after)) = rest.split_once(": ")
    {
        line = after;
    }
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

    /// Found by fuzzing (fuzz/regressions/plan, 40 levels; 20 here): keys nested with
    /// `? ` made key text grow twice as long at each level.
    #[test]
    fn nested_complex_keys_keep_their_text_short() {
        let text = format!("{}x: 1\n", "? ".repeat(20));
        let doc = parse(&text).expect("parses");
        let Value::Map(entries) = &doc.value else {
            panic!("a mapping: {doc:?}");
        };
        let key = key_text(&entries[0].0);
        assert!(key.len() < 200, "{} bytes: {key:.300}", key.len());
        assert!(key.contains("<a mapping at line 1"), "{key}");
        assert!(doc.to_json().to_string().len() < 400);
    }

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

    /// Runs `f` on a thread with the stack of a tokio worker (2 MiB).
    fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(f)
            .unwrap()
            .join()
            .unwrap()
    }

    fn parse_err(text: String) -> SyntaxError {
        on_small_stack(move || parse(&text).map(|_| ())).unwrap_err()
    }

    #[test]
    fn deep_nesting_is_an_error_with_a_position() {
        let n = 100_000;
        for (text, line) in [
            (format!("a:\n  b: {}", "[".repeat(n)), 2),
            (format!("a: {}1{}", "[".repeat(n), "]".repeat(n)), 1),
            (format!("a: {}", "{a: ".repeat(n)), 1),
            (format!("{}x", "- ".repeat(n)), 1),
            (format!("{}x", "? ".repeat(n)), 1),
            (format!("a: {}", "!!seq [".repeat(n)), 1),
            (
                (0..200)
                    .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
                    .collect::<String>(),
                65,
            ),
        ] {
            let what = text.chars().take(12).collect::<String>();
            let err = parse_err(text);
            assert_eq!(
                err.message, "lists and mappings nest deeper than 64 levels",
                "{what}: {err:?}"
            );
            assert_eq!(err.line, line, "{what}: {err:?}");
            assert!(err.column > 0, "{what}: {err:?}");
        }
    }

    #[test]
    fn alias_expansion_is_bounded() {
        let mut laughs = String::from("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        for (prev, c) in ('a'..='i').zip('b'..='j') {
            laughs.push_str(&format!(
                "{c}: &{c} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
            ));
        }
        let err = parse_err(laughs);
        assert!(err.message.contains("more than 250000 values"), "{err:?}");
        assert!(err.line > 1, "{err:?}");
        // Aliases that refer to aliases, deeper than the nesting limit.
        let mut chain = String::from("a0: &a0 [1]\n");
        for i in 1..100 {
            chain.push_str(&format!("a{i}: &a{i} [*a{}]\n", i - 1));
        }
        let err = parse_err(chain);
        assert_eq!(err.message, "lists and mappings nest deeper than 64 levels");
    }

    #[test]
    fn nesting_up_to_the_limit_reads_and_drops_on_a_small_stack() {
        let d = MAX_DEPTH - 1;
        let text = format!("a: {}1{}", "[".repeat(d), "]".repeat(d));
        let json = on_small_stack(move || parse(&text).map(|n| n.to_json().to_string()));
        assert!(json.unwrap().starts_with("{\"a\":[[[["));
    }
}
