//! The `store` terminus: ferry's own database (SQLite or PostgreSQL,
//! `crate::store`) for facts (each node's latest, with the environment
//! they came in), reports (one per node and transaction) and catalogs
//! (each node's last, as the catalog indirection's cache). A facts search
//! evaluates its query over every node's latest facts.

use std::sync::Arc;

use super::models::{Catalog, CatalogRequest, Facts, FactsSearch, Report};
use super::{IndirectorError, Terminus};
use crate::store::{ReportKey, Store};

/// The store as a terminus.
pub struct StoreTerminus(pub Arc<Store>);

#[async_trait::async_trait]
impl Terminus<Facts> for StoreTerminus {
    fn name(&self) -> &'static str {
        "store"
    }
    async fn find(&self, certname: &String) -> Result<Option<Facts>, IndirectorError> {
        Ok(self
            .0
            .facts(certname)
            .await?
            .and_then(|r| Facts::from_json(&r.facts, Some(r.environment))))
    }
    async fn search(&self, search: &FactsSearch) -> Result<Vec<Facts>, IndirectorError> {
        let stored = self
            .0
            .all_facts()
            .await?
            .into_iter()
            .filter_map(|r| Facts::from_json(&r.facts, Some(r.environment)))
            .collect();
        Ok(search.select(stored)?)
    }
    async fn save(&self, facts: &Facts) -> Result<(), IndirectorError> {
        let environment = facts.environment.as_deref().unwrap_or_default();
        Ok(self
            .0
            .save_facts(&facts.name, environment, &facts.to_json())
            .await?)
    }
    async fn destroy(&self, certname: &str) -> Result<(), IndirectorError> {
        Ok(self.0.delete_facts(certname).await?)
    }
}

#[async_trait::async_trait]
impl Terminus<Report> for StoreTerminus {
    fn name(&self) -> &'static str {
        "store"
    }
    async fn save(&self, r: &Report) -> Result<(), IndirectorError> {
        let key = ReportKey {
            certname: &r.certname,
            transaction_uuid: &r.transaction_uuid,
            environment: &r.environment,
            status: &r.status,
            time: &r.time,
        };
        Ok(self.0.save_report(&key, &r.doc).await?)
    }
}

#[async_trait::async_trait]
impl Terminus<Catalog> for StoreTerminus {
    fn name(&self) -> &'static str {
        "store"
    }
    async fn find(&self, r: &CatalogRequest) -> Result<Option<Catalog>, IndirectorError> {
        Ok(self.0.catalog(&r.certname).await?.map(|c| Catalog {
            certname: c.certname,
            environment: c.environment,
            json: c.catalog.into(),
            expiration: c.expiration,
        }))
    }
    async fn save(&self, c: &Catalog) -> Result<(), IndirectorError> {
        Ok(self
            .0
            .save_catalog(
                &c.certname,
                &c.environment,
                c.expiration.as_deref(),
                &c.json,
            )
            .await?)
    }
    async fn destroy(&self, certname: &str) -> Result<(), IndirectorError> {
        Ok(self.0.delete_catalog(certname).await?)
    }
}
