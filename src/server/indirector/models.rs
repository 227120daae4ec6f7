//! The models the indirector carries: a node's facts (Puppet's
//! `Puppet::Node::Facts`: name, values, timestamp, expiration, and the
//! environment they were sent in), a compiled catalog (Puppet's catalog
//! JSON) and a run's report (Puppet's report JSON, with the fields its
//! termini file it by taken out and checked).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::indirection::{Model, timestamp};
use crate::server::environments::Loaded;

/// A node's facts.
#[derive(Clone, Debug, PartialEq)]
pub struct Facts {
    pub name: String,
    pub values: Map<String, Value>,
    /// When they were collected (RFC 3339).
    pub timestamp: String,
    /// When a cache stops using them.
    pub expiration: Option<String>,
    /// The environment they were sent in, when known.
    pub environment: Option<String>,
}

impl Facts {
    /// Facts collected now.
    pub fn new(name: &str, values: Map<String, Value>, environment: Option<String>) -> Facts {
        Facts {
            name: name.to_string(),
            values,
            timestamp: timestamp(chrono::Utc::now()),
            expiration: None,
            environment,
        }
    }

    /// Puppet's JSON form: `{name, values, timestamp, expiration}`.
    pub fn to_json(&self) -> Value {
        let mut doc = json!({
            "name": self.name,
            "values": self.values,
            "timestamp": self.timestamp,
        });
        if let Some(e) = &self.expiration {
            doc["expiration"] = json!(e);
        }
        doc
    }

    /// Facts from Puppet's JSON form (as an agent sends them, as the
    /// store keeps them); `None` without a `values` object. An old
    /// `_timestamp` among the values is taken out, as Puppet does.
    pub fn from_json(doc: &Value, environment: Option<String>) -> Option<Facts> {
        let mut values = doc.get("values")?.as_object()?.clone();
        let old = values.remove("_timestamp");
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
        Some(Facts {
            name: text(doc.get("name")).unwrap_or_default(),
            timestamp: text(doc.get("timestamp"))
                .or_else(|| text(old.as_ref()))
                .unwrap_or_else(|| timestamp(chrono::Utc::now())),
            expiration: text(doc.get("expiration")),
            values,
            environment,
        })
    }
}

impl Model for Facts {
    const NAME: &'static str = "facts";
    type Request = String;
    type Search = FactsSearch;
    fn request_certname(request: &String) -> &str {
        request
    }
    fn certname(&self) -> &str {
        &self.name
    }
    fn expiration(&self) -> Option<&str> {
        self.expiration.as_deref()
    }
    fn set_expiration(&mut self, at: Option<String>) {
        self.expiration = at;
    }
}

/// A node's trusted facts as the server knows them from its certname:
/// Puppet's `$trusted` for a remote node (`authenticated: remote`, the
/// certname split into host and domain, no certificate extensions, no
/// `trusted_external_command` data).
pub fn trusted_facts(certname: &str) -> Map<String, Value> {
    let (host, domain) = certname.split_once('.').unwrap_or((certname, ""));
    let mut t = Map::new();
    t.insert("authenticated".into(), json!("remote"));
    t.insert("certname".into(), json!(certname));
    t.insert("domain".into(), json!(domain));
    t.insert("extensions".into(), json!({}));
    t.insert("external".into(), json!({}));
    t.insert("hostname".into(), json!(host));
    t
}

/// A search of facts: the nodes a PuppetDB query (PQL text or PuppetDB's
/// AST) selects.
#[derive(Clone, Debug, Default)]
pub struct FactsSearch {
    pub query: Value,
    /// Facts laid over a node's stored facts before the query sees them
    /// (a job's inventory's own facts), by certname; a node named here
    /// that the terminus has no facts for is searched with these alone.
    /// The `puppetdb` terminus cannot lay them: PuppetDB answers the query
    /// over its own facts.
    pub overlay: BTreeMap<String, Map<String, Value>>,
}

impl FactsSearch {
    /// The nodes of `stored` (and of the overlay) whose facts, the overlay
    /// laid over them, the query selects; evaluated here (the `yaml` and
    /// `store` termini).
    pub fn select(&self, stored: Vec<Facts>) -> Result<Vec<Facts>, crate::query::QueryError> {
        let query = crate::query::parse(&self.query)?;
        let mut out = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for mut facts in stored {
            if let Some(over) = self.overlay.get(&facts.name) {
                facts.values.extend(over.clone());
            }
            seen.insert(facts.name.clone());
            if query.selects(&facts.name, &facts.values) {
                out.push(facts);
            }
        }
        for (name, values) in &self.overlay {
            if !seen.contains(name) && query.selects(name, values) {
                out.push(Facts::new(name, values.clone(), None));
            }
        }
        Ok(out)
    }
}

/// A report that cannot be kept: the field at fault and why.
#[derive(Debug, thiserror::Error)]
#[error("{field}: {message}")]
pub struct BadReport {
    pub field: &'static str,
    pub message: String,
}

/// A run's report.
#[derive(Clone, Debug)]
pub struct Report {
    pub certname: String,
    pub transaction_uuid: String,
    pub environment: String,
    pub status: String,
    /// When the run started.
    pub time: String,
    /// Puppet's report, whole.
    pub doc: Value,
}

impl Report {
    /// A report from Puppet's JSON: an object whose `host` is `certname`,
    /// with a `transaction_uuid`.
    pub fn from_json(certname: &str, doc: Value) -> Result<Report, BadReport> {
        let bad = |field, message: String| BadReport { field, message };
        if !doc.is_object() {
            return Err(bad("", "a report is a JSON object".into()));
        }
        let text = |field: &'static str| -> Result<String, BadReport> {
            match doc.get(field) {
                Some(Value::String(s)) => Ok(s.clone()),
                Some(Value::Null) | None => Ok(String::new()),
                Some(_) => Err(bad(field, "must be a string".into())),
            }
        };
        let host = text("host")?;
        if host != certname {
            return Err(bad(
                "host",
                format!("is '{host}', not the report's node '{certname}'"),
            ));
        }
        let transaction_uuid = text("transaction_uuid")?;
        if transaction_uuid.is_empty() {
            return Err(bad("transaction_uuid", "is required".into()));
        }
        Ok(Report {
            certname: host,
            transaction_uuid,
            environment: text("environment")?,
            status: text("status")?,
            time: text("time")?,
            doc,
        })
    }
}

impl Model for Report {
    const NAME: &'static str = "report";
    type Request = String;
    type Search = ();
    fn request_certname(request: &String) -> &str {
        request
    }
    fn certname(&self) -> &str {
        &self.certname
    }
    fn expiration(&self) -> Option<&str> {
        None
    }
    fn set_expiration(&mut self, _: Option<String>) {}
}

/// A compiled catalog.
#[derive(Clone, Debug)]
pub struct Catalog {
    pub certname: String,
    pub environment: String,
    /// Puppet's catalog JSON, written once when it is compiled: a
    /// catalog of a few hundred resources made into a `serde_json::Value`
    /// tree first would cost about a fifth of a catalog request.
    pub json: std::sync::Arc<str>,
    pub expiration: Option<String>,
}

/// What a catalog is compiled from: the node, its facts (node parameters
/// already over them), its environment and its classification's code.
pub struct CatalogRequest {
    pub certname: String,
    pub facts: Map<String, Value>,
    pub environment: Arc<Loaded>,
    pub node_code: Arc<crate::catalog::NodeCode>,
    /// Compile for a network device: its types (`device_config`,
    /// `network_interface`...) built in.
    pub device_types: bool,
}

impl Model for Catalog {
    const NAME: &'static str = "catalog";
    type Request = CatalogRequest;
    type Search = ();
    fn request_certname(request: &CatalogRequest) -> &str {
        &request.certname
    }
    fn certname(&self) -> &str {
        &self.certname
    }
    fn expiration(&self) -> Option<&str> {
        self.expiration.as_deref()
    }
    fn set_expiration(&mut self, at: Option<String>) {
        self.expiration = at;
    }
    /// A catalog answers a request in its own environment only.
    fn answers(&self, request: &CatalogRequest) -> bool {
        self.environment == request.environment.env.name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(name: &str, values: Value) -> Facts {
        Facts::new(name, values.as_object().cloned().unwrap_or_default(), None)
    }

    #[test]
    fn a_search_sees_stored_facts_with_the_overlay_laid_over_them() {
        let stored = || {
            vec![
                facts("a", json!({"role": "web", "os": {"family": "Debian"}})),
                facts("b", json!({"role": "db", "os": {"family": "Debian"}})),
                facts("gone", json!({"role": "web"})),
            ]
        };
        let overlay: BTreeMap<String, Map<String, Value>> = [
            ("a", json!({})),
            ("b", json!({"role": "web"})),
            ("c", json!({"role": "web"})),
            ("d", json!({})),
        ]
        .into_iter()
        .map(|(n, v)| (n.to_string(), v.as_object().cloned().unwrap_or_default()))
        .collect();
        // (query, the nodes it selects)
        let cases = [
            (
                "nodes[certname] { facts.role = \"web\" }",
                vec!["a", "b", "gone", "c"],
            ),
            (
                "nodes[certname] { facts.os.family = \"Debian\" and facts.role = \"web\" }",
                vec!["a", "b"],
            ),
            ("nodes[certname] { facts.role = \"db\" }", vec![]),
        ];
        for (query, want) in cases {
            let search = FactsSearch {
                query: json!(query),
                overlay: overlay.clone(),
            };
            let got = search.select(stored()).expect("selects");
            let names: Vec<&str> = got.iter().map(|f| f.name.as_str()).collect();
            assert_eq!(names, want, "{query}");
        }
        let bad = FactsSearch {
            query: json!("nodes[certname] {"),
            overlay: BTreeMap::new(),
        };
        assert!(bad.select(stored()).is_err());
    }
}
