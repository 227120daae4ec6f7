//! What Puppet agents send the server, kept beside the jobs: each node's
//! reports (one per transaction: a report sent again replaces the first)
//! and its latest facts; and the last catalog compiled for each node. Values are kept as the agent sent them (JSON
//! text); the columns a listing needs are taken out when they are saved.

use serde_json::Value;
use sqlx::Row;

use super::{Store, StoreError, now, query_error};

/// A stored Puppet report.
#[derive(Debug, Clone)]
pub struct ReportRecord {
    pub certname: String,
    pub transaction_uuid: String,
    pub environment: String,
    pub status: String,
    /// When the run started (the report's `time`).
    pub time: String,
    pub received_at: String,
    pub report: Value,
}

/// A node's stored facts.
#[derive(Debug, Clone)]
pub struct FactsRecord {
    pub certname: String,
    pub environment: String,
    pub received_at: String,
    /// `{name, values, timestamp?, expiration?}` as the agent sent it.
    pub facts: Value,
}

/// A row of the facts table.
fn facts_record(r: &sqlx::any::AnyRow) -> Result<FactsRecord, StoreError> {
    let get =
        |c: &str| -> Result<String, StoreError> { r.try_get(c).map_err(query_error("read facts")) };
    Ok(FactsRecord {
        certname: get("certname")?,
        environment: get("environment")?,
        received_at: get("received_at")?,
        facts: parse_json(&get("facts")?, "read facts")?,
    })
}

/// A node's stored catalog.
#[derive(Debug, Clone)]
pub struct CatalogRecord {
    pub certname: String,
    pub environment: String,
    pub compiled_at: String,
    /// When a cache stops using it (RFC 3339).
    pub expiration: Option<String>,
    /// Puppet's catalog JSON, as it was saved.
    pub catalog: String,
}

/// What a report says about itself, for its columns.
pub struct ReportKey<'a> {
    pub certname: &'a str,
    pub transaction_uuid: &'a str,
    pub environment: &'a str,
    pub status: &'a str,
    pub time: &'a str,
}

fn json_text(v: &Value) -> String {
    v.to_string()
}

fn parse_json(text: &str, op: &'static str) -> Result<Value, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Query {
        op,
        message: e.to_string(),
    })
}

impl Store {
    /// Keeps a report (replacing one of the same node and transaction).
    pub async fn save_report(&self, key: &ReportKey<'_>, report: &Value) -> Result<(), StoreError> {
        let sql = self.sql(
            "INSERT INTO reports (certname, transaction_uuid, environment, status, time, received_at, report) \
             VALUES (?, ?, ?, ?, ?, ?, ?) \
             ON CONFLICT (certname, transaction_uuid) DO UPDATE SET \
             environment = excluded.environment, status = excluded.status, time = excluded.time, \
             received_at = excluded.received_at, report = excluded.report",
        );
        sqlx::query(&sql)
            .bind(key.certname)
            .bind(key.transaction_uuid)
            .bind(key.environment)
            .bind(key.status)
            .bind(key.time)
            .bind(now())
            .bind(json_text(report))
            .execute(&self.pool)
            .await
            .map_err(query_error("save a report"))?;
        Ok(())
    }

    /// A node's reports, the latest received first.
    pub async fn reports(&self, certname: &str) -> Result<Vec<ReportRecord>, StoreError> {
        let sql = self.sql(
            "SELECT certname, transaction_uuid, environment, status, time, received_at, report \
             FROM reports WHERE certname = ? ORDER BY received_at DESC",
        );
        let rows = sqlx::query(&sql)
            .bind(certname)
            .fetch_all(&self.pool)
            .await
            .map_err(query_error("read reports"))?;
        rows.iter()
            .map(|r| {
                let get = |c: &str| -> Result<String, StoreError> {
                    r.try_get(c).map_err(query_error("read reports"))
                };
                Ok(ReportRecord {
                    certname: get("certname")?,
                    transaction_uuid: get("transaction_uuid")?,
                    environment: get("environment")?,
                    status: get("status")?,
                    time: get("time")?,
                    received_at: get("received_at")?,
                    report: parse_json(&get("report")?, "read reports")?,
                })
            })
            .collect()
    }

    /// Keeps a node's latest facts.
    pub async fn save_facts(
        &self,
        certname: &str,
        environment: &str,
        facts: &Value,
    ) -> Result<(), StoreError> {
        let sql = self.sql(
            "INSERT INTO facts (certname, environment, received_at, facts) VALUES (?, ?, ?, ?) \
             ON CONFLICT (certname) DO UPDATE SET environment = excluded.environment, \
             received_at = excluded.received_at, facts = excluded.facts",
        );
        sqlx::query(&sql)
            .bind(certname)
            .bind(environment)
            .bind(now())
            .bind(json_text(facts))
            .execute(&self.pool)
            .await
            .map_err(query_error("save facts"))?;
        Ok(())
    }

    /// A node's latest facts, if any were sent.
    pub async fn facts(&self, certname: &str) -> Result<Option<FactsRecord>, StoreError> {
        let sql = self
            .sql("SELECT certname, environment, received_at, facts FROM facts WHERE certname = ?");
        let row = sqlx::query(&sql)
            .bind(certname)
            .fetch_optional(&self.pool)
            .await
            .map_err(query_error("read facts"))?;
        row.as_ref().map(facts_record).transpose()
    }

    /// Every node's latest facts, by certname (for queries over the
    /// stored facts: a plan job's `puppetdb_query` without PuppetDB).
    pub async fn all_facts(&self) -> Result<Vec<FactsRecord>, StoreError> {
        let sql = self
            .sql("SELECT certname, environment, received_at, facts FROM facts ORDER BY certname");
        let rows = sqlx::query(&sql)
            .fetch_all(&self.pool)
            .await
            .map_err(query_error("read facts"))?;
        rows.iter().map(facts_record).collect()
    }

    /// Forgets a node's facts.
    pub async fn delete_facts(&self, certname: &str) -> Result<(), StoreError> {
        let sql = self.sql("DELETE FROM facts WHERE certname = ?");
        sqlx::query(&sql)
            .bind(certname)
            .execute(&self.pool)
            .await
            .map_err(query_error("delete facts"))?;
        Ok(())
    }

    /// Keeps a node's catalog (replacing the one before).
    pub async fn save_catalog(
        &self,
        certname: &str,
        environment: &str,
        expiration: Option<&str>,
        catalog: &str,
    ) -> Result<(), StoreError> {
        let sql = self.sql(
            "INSERT INTO catalogs (certname, environment, compiled_at, expiration, catalog) \
             VALUES (?, ?, ?, ?, ?) \
             ON CONFLICT (certname) DO UPDATE SET environment = excluded.environment, \
             compiled_at = excluded.compiled_at, expiration = excluded.expiration, \
             catalog = excluded.catalog",
        );
        sqlx::query(&sql)
            .bind(certname)
            .bind(environment)
            .bind(now())
            .bind(expiration)
            .bind(catalog)
            .execute(&self.pool)
            .await
            .map_err(query_error("save a catalog"))?;
        Ok(())
    }

    /// A node's stored catalog, if there is one.
    pub async fn catalog(&self, certname: &str) -> Result<Option<CatalogRecord>, StoreError> {
        let sql = self.sql(
            "SELECT certname, environment, compiled_at, expiration, catalog FROM catalogs \
             WHERE certname = ?",
        );
        let row = sqlx::query(&sql)
            .bind(certname)
            .fetch_optional(&self.pool)
            .await
            .map_err(query_error("read a catalog"))?;
        let Some(r) = row else { return Ok(None) };
        let get = |c: &str| -> Result<String, StoreError> {
            r.try_get(c).map_err(query_error("read a catalog"))
        };
        Ok(Some(CatalogRecord {
            certname: get("certname")?,
            environment: get("environment")?,
            compiled_at: get("compiled_at")?,
            expiration: r
                .try_get::<Option<String>, _>("expiration")
                .map_err(query_error("read a catalog"))?,
            catalog: get("catalog")?,
        }))
    }

    /// Forgets a node's catalog.
    pub async fn delete_catalog(&self, certname: &str) -> Result<(), StoreError> {
        let sql = self.sql("DELETE FROM catalogs WHERE certname = ?");
        sqlx::query(&sql)
            .bind(certname)
            .execute(&self.pool)
            .await
            .map_err(query_error("delete a catalog"))?;
        Ok(())
    }
}
