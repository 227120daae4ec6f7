//! PuppetDB queries, for the plan functions (`puppetdb_query`,
//! `puppetdb_fact`), the inventory's `puppetdb` plugin, the CLI's
//! `--query` and the server's job scopes. A query is PQL text ([`pql`]) or
//! PuppetDB's AST as JSON ([`ast`]), read into one [`Query`] ([`model`]).
//! Where its answer comes from: the PuppetDB the Bolt project configures
//! ([`puppetdb`], the query passed through unchanged), else ferry's stored
//! facts, which [`eval`] evaluates the query over in PuppetDB's row shapes.
//! Pure but for [`puppetdb`]'s HTTPS requests; it depends on no other
//! part of ferry, so every layer may use it.

pub mod ast;
pub mod eval;
pub mod model;
pub mod pql;
pub mod puppetdb;

use serde_json::{Map, Value};

pub use eval::NodeFacts;
pub use model::Query;
pub use pql::PqlError;
pub use puppetdb::PuppetDbError;

/// Why a query has no answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum QueryError {
    #[error("invalid query: {0}")]
    Pql(#[from] PqlError),
    #[error(transparent)]
    PuppetDb(#[from] PuppetDbError),
    #[error("a query must be PQL text or PuppetDB's AST (an array), not {0}")]
    NotAQuery(&'static str),
    #[error("Query results did not contain a 'certname' field: got {0}")]
    NoCertname(String),
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "a hash",
    }
}

/// A query as typed on a command line: a JSON array is PuppetDB's AST,
/// anything else PQL text.
pub fn from_text(text: &str) -> Value {
    if text.trim_start().starts_with('[')
        && let Ok(v @ Value::Array(_)) = serde_json::from_str::<Value>(text)
    {
        return v;
    }
    Value::String(text.to_string())
}

/// Reads a query given as PQL text or as AST.
pub fn parse(q: &Value) -> Result<Query, QueryError> {
    match q {
        Value::String(s) => Ok(Query::parse(s)?),
        Value::Array(_) => Ok(Query::from_ast(q)?),
        other => Err(QueryError::NotAQuery(kind(other))),
    }
}

/// Runs a query: on the configured PuppetDB when there is one (unchanged,
/// so PuppetDB's whole language works there), else over `stored()`.
pub fn run(q: &Value, stored: impl FnOnce() -> Vec<NodeFacts>) -> Result<Vec<Value>, QueryError> {
    run_on(None, q, stored)
}

/// [`run`] on the named PuppetDB instance (`None`: the default one); a
/// named instance must be configured.
pub fn run_on(
    instance: Option<&str>,
    q: &Value,
    stored: impl FnOnce() -> Vec<NodeFacts>,
) -> Result<Vec<Value>, QueryError> {
    if !matches!(q, Value::String(_) | Value::Array(_)) {
        return Err(QueryError::NotAQuery(kind(q)));
    }
    match puppetdb::named(instance) {
        Some(db) => Ok(db?.query(q)?),
        None => Ok(parse(q)?.evaluate(&stored())),
    }
}

/// The certnames a query's rows name, each once (Bolt's
/// `query_certnames`: rows without `certname` are an error).
pub fn certnames(
    q: &Value,
    stored: impl FnOnce() -> Vec<NodeFacts>,
) -> Result<Vec<String>, QueryError> {
    let rows = run(q, stored)?;
    let mut out: Vec<String> = Vec::new();
    for r in &rows {
        match r.get("certname").and_then(Value::as_str) {
            Some(c) => {
                if !out.iter().any(|o| o == c) {
                    out.push(c.to_string())
                }
            }
            None => {
                let keys = r
                    .as_object()
                    .map(|m| m.keys().cloned().collect::<Vec<_>>().join(", "))
                    .unwrap_or_default();
                return Err(QueryError::NoCertname(keys));
            }
        }
    }
    Ok(out)
}

/// Each certname's facts (Bolt's `puppetdb_fact`): from the configured
/// PuppetDB, else from `stored()`; a certname with no facts gets an empty
/// hash, as Bolt documents.
pub fn facts(
    instance: Option<&str>,
    certnames: &[String],
    stored: impl FnOnce() -> Vec<NodeFacts>,
) -> Result<Map<String, Value>, QueryError> {
    let mut found = match puppetdb::named(instance) {
        Some(db) => db?.facts_for(certnames)?,
        None => stored()
            .into_iter()
            .filter(|n| certnames.contains(&n.certname))
            .map(|n| (n.certname, Value::Object(n.facts)))
            .collect(),
    };
    let mut out = Map::new();
    for c in certnames {
        let v = found.remove(c).unwrap_or_else(|| Value::Object(Map::new()));
        out.insert(c.clone(), v);
    }
    Ok(out)
}
