//! The `puppetdb` terminus: a real PuppetDB through `query::puppetdb`'s
//! client (the server's `puppetdb-url`, its TLS files). Facts are saved
//! with the `replace_facts` command (version 5), the node's trusted facts
//! among them as the fact `trusted` (as Puppet's terminus sends them),
//! and found with a query of the `inventory` entity (`/pdb/query/v4`,
//! without that `trusted`), searched by passing the search's query (PQL
//! or AST) to `/pdb/query/v4` unchanged, the facts of the certnames its
//! rows name then read; reports are saved with
//! `store_report` (version 8), converted from Puppet's report as Puppet's
//! own PuppetDB report processor converts them: metrics and logs as
//! lists, only the resources that had events or were skipped, times in
//! PuppetDB's wire format. Commands are queued by PuppetDB: what is saved
//! can be found a moment later. The client blocks: every call runs on the
//! blocking pool.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};

use super::models::{Facts, FactsSearch, Report, trusted_facts};
use super::{IndirectorError, Terminus, blocking};
use crate::query::puppetdb::PuppetDb;

/// The environment PuppetDB is told when facts came without one.
const DEFAULT_ENVIRONMENT: &str = "production";

/// A PuppetDB as a terminus.
pub struct PuppetDbTerminus {
    db: Arc<PuppetDb>,
    /// The certname of the server, PuppetDB's `producer`.
    producer: String,
}

impl PuppetDbTerminus {
    pub fn new(db: Arc<PuppetDb>, producer: String) -> PuppetDbTerminus {
        PuppetDbTerminus { db, producer }
    }
}

/// A time as PuppetDB's wire format writes it (UTC, milliseconds); text
/// that is not a time is passed as it is.
fn wire_time(text: &str) -> String {
    DateTime::parse_from_rfc3339(text)
        .map(|t| wire(t.with_timezone(&Utc)))
        .unwrap_or_else(|_| text.to_string())
}

fn wire(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// `replace_facts`' payload (version 5). As Puppet's own terminus does,
/// the node's trusted facts go with its facts, as the fact `trusted`.
pub fn facts_payload(facts: &Facts, producer: &str, now: DateTime<Utc>) -> Value {
    let mut values = facts.values.clone();
    values.insert("trusted".into(), Value::Object(trusted_facts(&facts.name)));
    json!({
        "certname": facts.name,
        "environment": facts.environment.as_deref().filter(|e| !e.is_empty()).unwrap_or(DEFAULT_ENVIRONMENT),
        "values": values,
        "producer_timestamp": wire(now),
        "producer": producer,
    })
}

/// A value as Ruby's `to_s` writes it: text as it is, nil empty, the rest
/// as JSON.
fn to_s(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

fn text(v: Option<&Value>) -> Value {
    match v {
        Some(Value::String(s)) => json!(s),
        None | Some(Value::Null) => Value::Null,
        Some(other) => json!(other.to_string()),
    }
}

fn flag(v: Option<&Value>) -> Value {
    v.and_then(Value::as_bool).map_or(Value::Null, Value::Bool)
}

/// `store_report`'s payload (version 8) from Puppet's report.
pub fn report_payload(report: &Report, producer: &str, now: DateTime<Utc>) -> Value {
    let doc = &report.doc;
    let get = |k: &str| doc.get(k);
    let metrics = get("metrics").and_then(Value::as_object);
    let mut metric_list = Vec::new();
    let mut total = 0.0;
    for (category, data) in metrics.into_iter().flatten() {
        let rows = data.get("values").and_then(Value::as_array);
        for row in rows.into_iter().flatten() {
            let Some(row) = row.as_array() else { continue };
            let (Some(name), Some(value)) = (row.first(), row.last()) else {
                continue;
            };
            if category == "time" && name == "total" {
                total = value.as_f64().unwrap_or(0.0);
            }
            metric_list.push(json!({"category": category, "name": name, "value": value}));
        }
    }
    let logs: Vec<Value> = get("logs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|l| {
            json!({
                "file": l.get("file"),
                "line": l.get("line"),
                "level": text(l.get("level")),
                "message": to_s(l.get("message")),
                "source": to_s(l.get("source")),
                "tags": l.get("tags").filter(|t| t.is_array()).cloned().unwrap_or(json!([])),
                "time": wire_time(&to_s(l.get("time"))),
            })
        })
        .collect();
    let statuses = get("resource_statuses").and_then(Value::as_object);
    let mut resources = Vec::new();
    for status in statuses.into_iter().flat_map(Map::values) {
        let events: Vec<Value> = status
            .get("events")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|e| {
                json!({
                    "status": text(e.get("status")),
                    "timestamp": wire_time(&to_s(e.get("time"))),
                    "name": e.get("name"),
                    "property": e.get("property"),
                    "new_value": to_s(e.get("desired_value")),
                    "old_value": to_s(e.get("previous_value")),
                    "corrective_change": flag(e.get("corrective_change")),
                    "message": e.get("message"),
                })
            })
            .collect();
        let skipped = status
            .get("skipped")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if events.is_empty() && !skipped {
            continue;
        }
        resources.push(json!({
            "skipped": skipped,
            "timestamp": wire_time(&to_s(status.get("time"))),
            "resource_type": to_s(status.get("resource_type")),
            "resource_title": to_s(status.get("title")),
            "file": status.get("file"),
            "line": status.get("line"),
            "containment_path": status.get("containment_path").filter(|c| c.is_array()).cloned().unwrap_or(json!([])),
            "corrective_change": flag(status.get("corrective_change")),
            "events": events,
        }));
    }
    let start = DateTime::parse_from_rfc3339(&report.time).map(|t| t.with_timezone(&Utc));
    let end = start
        .as_ref()
        .map(|s| wire(*s + chrono::Duration::milliseconds((total * 1000.0) as i64)))
        .unwrap_or_else(|_| report.time.clone());
    let report_format = match get("report_format") {
        Some(Value::Number(n)) => n.as_i64().unwrap_or(12),
        Some(Value::String(s)) => s.parse().unwrap_or(12),
        _ => 12,
    };
    let noop = get("noop").and_then(Value::as_bool).unwrap_or(false);
    json!({
        "certname": report.certname,
        "environment": if report.environment.is_empty() { DEFAULT_ENVIRONMENT } else { &report.environment },
        "puppet_version": to_s(get("puppet_version")),
        "report_format": report_format,
        "configuration_version": to_s(get("configuration_version")),
        "start_time": wire_time(&report.time),
        "end_time": end,
        "producer_timestamp": wire(now),
        "producer": producer,
        "resources": resources,
        "metrics": metric_list,
        "logs": logs,
        "transaction_uuid": report.transaction_uuid,
        "catalog_uuid": get("catalog_uuid").and_then(Value::as_str).unwrap_or(&report.transaction_uuid),
        "code_id": text(get("code_id")),
        "job_id": text(get("job_id")),
        "cached_catalog_status": text(get("cached_catalog_status")),
        "status": report.status,
        "noop": noop,
        "noop_pending": flag(get("noop_pending")),
        "corrective_change": flag(get("corrective_change")),
        "type": "agent",
    })
}

#[async_trait::async_trait]
impl Terminus<Facts> for PuppetDbTerminus {
    fn name(&self) -> &'static str {
        "puppetdb"
    }
    async fn find(&self, certname: &String) -> Result<Option<Facts>, IndirectorError> {
        let db = Arc::clone(&self.db);
        let query = json!(["=", "certname", certname]);
        let rows = blocking("puppetdb", move || Ok(db.query_at("inventory", &query)?)).await?;
        let Some(row) = rows.into_iter().next() else {
            return Ok(None);
        };
        let mut values = row
            .get("facts")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        // The server's own addition on save: `$trusted` is never a fact.
        values.remove("trusted");
        let text = |k: &str| row.get(k).and_then(Value::as_str).map(str::to_string);
        Ok(Some(Facts {
            name: certname.clone(),
            values,
            timestamp: text("timestamp").unwrap_or_default(),
            expiration: None,
            environment: text("environment"),
        }))
    }
    async fn search(&self, search: &FactsSearch) -> Result<Vec<Facts>, IndirectorError> {
        let db = Arc::clone(&self.db);
        let query = search.query.clone();
        blocking("puppetdb", move || {
            let rows = db.query(&query)?;
            let mut names: Vec<String> = Vec::new();
            for row in &rows {
                let Some(name) = row.get("certname").and_then(Value::as_str) else {
                    let keys = row
                        .as_object()
                        .map(|m| m.keys().cloned().collect::<Vec<_>>().join(", "))
                        .unwrap_or_default();
                    return Err(crate::query::QueryError::NoCertname(keys).into());
                };
                if !names.iter().any(|n| n == name) {
                    names.push(name.to_string());
                }
            }
            let mut facts = db.facts_for(&names)?;
            Ok(names
                .into_iter()
                .map(|name| {
                    let values = match facts.remove(&name) {
                        Some(Value::Object(values)) => values,
                        _ => Map::new(),
                    };
                    Facts::new(&name, values, None)
                })
                .collect())
        })
        .await
    }
    async fn save(&self, facts: &Facts) -> Result<(), IndirectorError> {
        let db = Arc::clone(&self.db);
        let payload = facts_payload(facts, &self.producer, Utc::now());
        let certname = facts.name.clone();
        blocking("puppetdb", move || {
            Ok(db.submit("replace_facts", 5, &certname, &payload)?)
        })
        .await
    }
}

#[async_trait::async_trait]
impl Terminus<Report> for PuppetDbTerminus {
    fn name(&self) -> &'static str {
        "puppetdb"
    }
    async fn save(&self, report: &Report) -> Result<(), IndirectorError> {
        let db = Arc::clone(&self.db);
        let payload = report_payload(report, &self.producer, Utc::now());
        let certname = report.certname.clone();
        blocking("puppetdb", move || {
            Ok(db.submit("store_report", 8, &certname, &payload)?)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_becomes_puppetdbs_wire_format() {
        let doc = json!({
            "host": "n1", "time": "2026-01-01T10:00:00.123456789+01:00", "transaction_uuid": "u1",
            "environment": "dev", "status": "changed", "report_format": 12, "puppet_version": "7.23.0",
            "configuration_version": 1700000000, "noop": false, "corrective_change": false,
            "metrics": {"time": {"name": "time", "label": "Time", "values": [["total", "Total", 2.5], ["file", "File", 0.1]]},
                        "events": {"name": "events", "values": [["success", "Success", 1]]}},
            "logs": [{"level": "notice", "message": "hi", "source": "Puppet", "tags": ["notice"],
                      "time": "2026-01-01T09:00:01.000000000+00:00", "file": null, "line": null}],
            "resource_statuses": {
                "File[/a]": {"resource_type": "File", "title": "/a", "time": "2026-01-01T09:00:00.5+00:00",
                    "skipped": false, "containment_path": ["Stage[main]", "Main", "File[/a]"], "file": "/site.pp", "line": 3,
                    "events": [{"property": "ensure", "previous_value": "absent", "desired_value": "file",
                        "status": "success", "time": "2026-01-01T09:00:00.6+00:00", "message": "created", "name": "file_created"}]},
                "Notify[quiet]": {"resource_type": "Notify", "title": "quiet", "skipped": false, "events": []},
            },
        });
        let report = Report::from_json("n1", doc).expect("report");
        let now = DateTime::parse_from_rfc3339("2026-01-01T09:00:05Z")
            .expect("t")
            .with_timezone(&Utc);
        let p = report_payload(&report, "server.test", now);
        assert_eq!(p["start_time"], "2026-01-01T09:00:00.123Z");
        assert_eq!(p["end_time"], "2026-01-01T09:00:02.623Z");
        assert_eq!(p["producer_timestamp"], "2026-01-01T09:00:05.000Z");
        assert_eq!(p["configuration_version"], "1700000000");
        assert_eq!(p["catalog_uuid"], "u1");
        assert_eq!(p["metrics"].as_array().map(Vec::len), Some(3));
        assert!(
            p["metrics"]
                .as_array()
                .expect("list")
                .contains(&json!({"category": "time", "name": "total", "value": 2.5}))
        );
        assert_eq!(p["logs"][0]["time"], "2026-01-01T09:00:01.000Z");
        let resources = p["resources"].as_array().expect("list");
        assert_eq!(resources.len(), 1, "only resources with events");
        assert_eq!(resources[0]["resource_title"], "/a");
        assert_eq!(resources[0]["events"][0]["old_value"], "absent");
        assert_eq!(resources[0]["events"][0]["new_value"], "file");
        assert_eq!(p["type"], "agent");
    }
}
