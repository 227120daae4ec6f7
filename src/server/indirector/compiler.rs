//! The catalog indirection's `compiler` terminus: ferry's compiler on the
//! blocking pool, in the node's environment (its loader, so a kept
//! environment compiles its code as first read), with its facts, its
//! classification's code, `$trusted` as a remote node's, and the
//! environment's `config_version` as the catalog's version; a network
//! device's compile has the device types built in.

use std::sync::Arc;

use serde_json::json;

use super::models::{Catalog, CatalogRequest};
use super::{IndirectorError, Terminus, blocking};
use crate::server::environments;

/// ferry's compiler.
pub struct Compiler;

#[async_trait::async_trait]
impl Terminus<Catalog> for Compiler {
    fn name(&self) -> &'static str {
        "compiler"
    }

    async fn find(&self, r: &CatalogRequest) -> Result<Option<Catalog>, IndirectorError> {
        let env = Arc::clone(&r.environment);
        let node = r.certname.clone();
        let facts = r.facts.clone();
        let code = Arc::clone(&r.node_code);
        let device_types = r.device_types;
        let (version, compiled) = blocking("compiler", move || {
            let (request, mut options) = environments::compile_request(&env.env, &node, facts);
            options.trusted_authenticated = Some("remote".into());
            options.node_code = Some(code);
            options.device_types = device_types;
            let version = env.config_version();
            let compiled =
                crate::catalog::compile_with_options(&request, env.loader.as_ref(), &options);
            Ok((version, compiled))
        })
        .await?;
        let compiled = compiled.map_err(|e| IndirectorError::Compile(e.to_string()))?;
        let version = version?;
        for m in &compiled.messages {
            tracing::info!("{}: {m}", r.certname);
        }
        let json = match version {
            None => serde_json::to_string(&compiled),
            Some(v) => serde_json::to_value(&compiled).and_then(|mut doc| {
                doc["version"] = json!(v);
                serde_json::to_string(&doc)
            }),
        }
        .map_err(|e| IndirectorError::Compile(format!("cannot write the catalog: {e}")))?;
        Ok(Some(Catalog {
            certname: r.certname.clone(),
            environment: r.environment.env.name.clone(),
            json: json.into(),
            expiration: None,
        }))
    }
}
