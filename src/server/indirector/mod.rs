//! Puppet's indirector for the server: each model (facts, catalogs,
//! reports) is found and saved through the terminus its `routes:` entry
//! names, with an optional cache terminus in front (`indirection`: the
//! [`Terminus`] trait each terminus implements per model, and the cache
//! logic: a cache hit while it has not expired, else the terminus and a
//! cache fill). The termini: `yaml` (files under `cache-dir` in Puppet's
//! own layout, which Puppet reads and writes too), `store` (ferry's
//! database), `puppetdb` (a PuppetDB's command and query APIs, through
//! `query::puppetdb`'s client) and `compiler` (ferry's compiler, for
//! catalogs). The models are in `models`. Nodes keep their own termini
//! (`server::classifier::terminus`), which read facts through the facts
//! indirection. The Puppet agent endpoints and deploy jobs go through the
//! [`Indirector`] the server holds.

pub mod compiler;
pub mod indirection;
pub mod models;
pub mod puppetdb;
pub mod store;
pub mod yaml;

use std::sync::Arc;

pub use indirection::{FindOptions, Indirection, Model, Terminus};
pub use models::{BadReport, Catalog, CatalogRequest, Facts, FactsSearch, Report, trusted_facts};

use crate::query::puppetdb::{PuppetDb, PuppetDbError};
use crate::server::config::{Route, ServerConfig, TerminusKind};
use crate::store::{Store, StoreError};

/// Why a terminus could not find, save or destroy.
#[derive(Debug, thiserror::Error)]
pub enum IndirectorError {
    /// A certname no file may be named after.
    #[error("'{0}' is not a certname a file can be named after")]
    BadCertname(String),
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// A YAML file that cannot be read as the model.
    #[error("{path}:{line}:{column}: {message}")]
    Yaml {
        path: String,
        line: u64,
        column: u64,
        message: String,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    PuppetDb(#[from] PuppetDbError),
    /// A search's query cannot be read or answered.
    #[error(transparent)]
    Query(#[from] crate::query::QueryError),
    #[error("the {terminus} terminus cannot {op} {model}")]
    Unsupported {
        terminus: &'static str,
        model: &'static str,
        op: &'static str,
    },
    /// The catalog did not compile: the compiler's message.
    #[error("{0}")]
    Compile(String),
    /// The environment's `config_version` failed.
    #[error(transparent)]
    ConfigVersion(#[from] crate::server::environments::ConfigVersionError),
    /// A worker thread failed (a server fault).
    #[error("the {0} worker stopped")]
    Worker(&'static str),
}

/// The server's indirections.
pub struct Indirector {
    pub facts: Indirection<Facts>,
    pub catalog: Indirection<Catalog>,
    pub report: Indirection<Report>,
}

/// What the termini are made of.
struct Parts {
    yaml: Arc<yaml::Yaml>,
    store: Arc<store::StoreTerminus>,
    puppetdb: Option<Arc<puppetdb::PuppetDbTerminus>>,
}

impl Parts {
    fn puppetdb(&self) -> Result<Arc<puppetdb::PuppetDbTerminus>, IndirectorError> {
        self.puppetdb.clone().ok_or_else(|| {
            IndirectorError::PuppetDb(PuppetDbError::Config("puppetdb-url is not set".into()))
        })
    }
}

/// A model's terminus for a kind, or the error saying why not.
type Made<M> = Result<Arc<dyn Terminus<M>>, IndirectorError>;

fn unsupported(kind: TerminusKind, model: &'static str) -> IndirectorError {
    IndirectorError::Unsupported {
        terminus: kind.name(),
        model,
        op: "serve",
    }
}

fn facts_terminus(
    kind: TerminusKind,
    p: &Parts,
) -> Result<Arc<dyn Terminus<Facts>>, IndirectorError> {
    Ok(match kind {
        TerminusKind::Yaml => p.yaml.clone(),
        TerminusKind::Store => p.store.clone(),
        TerminusKind::PuppetDb => p.puppetdb()?,
        TerminusKind::Compiler => return Err(unsupported(kind, "facts")),
    })
}

fn report_terminus(
    kind: TerminusKind,
    p: &Parts,
) -> Result<Arc<dyn Terminus<Report>>, IndirectorError> {
    Ok(match kind {
        TerminusKind::Yaml => p.yaml.clone(),
        TerminusKind::Store => p.store.clone(),
        TerminusKind::PuppetDb => p.puppetdb()?,
        TerminusKind::Compiler => return Err(unsupported(kind, "report")),
    })
}

fn catalog_terminus(
    kind: TerminusKind,
    p: &Parts,
) -> Result<Arc<dyn Terminus<Catalog>>, IndirectorError> {
    Ok(match kind {
        TerminusKind::Compiler => Arc::new(compiler::Compiler),
        TerminusKind::Store => p.store.clone(),
        other => return Err(unsupported(other, "catalog")),
    })
}

/// An indirection for `route`, its terminus and cache made by `make`.
fn indirection<M: Model>(
    route: &Route,
    parts: &Parts,
    make: fn(TerminusKind, &Parts) -> Made<M>,
) -> Result<Indirection<M>, IndirectorError> {
    let cache = route.cache.map(|c| make(c, parts)).transpose()?;
    Ok(Indirection::new(
        make(route.terminus, parts)?,
        cache,
        route.ttl,
    ))
}

impl Indirector {
    /// The indirections the config's `routes:` name. A PuppetDB client is
    /// made (its certificates read) only when a route uses it.
    pub fn from_config(
        config: &ServerConfig,
        store: Arc<Store>,
    ) -> Result<Indirector, IndirectorError> {
        let routes = [
            &config.facts_route,
            &config.catalog_route,
            &config.report_route,
        ];
        let uses_puppetdb = routes.iter().any(|r| {
            r.terminus == TerminusKind::PuppetDb || r.cache == Some(TerminusKind::PuppetDb)
        });
        let puppetdb = match (&config.puppetdb, uses_puppetdb) {
            (Some(c), true) => Some(Arc::new(puppetdb::PuppetDbTerminus::new(
                Arc::new(PuppetDb::new(c)?),
                producer(config),
            ))),
            _ => None,
        };
        let parts = Parts {
            yaml: Arc::new(yaml::Yaml::new(&config.cache_dir)),
            store: Arc::new(store::StoreTerminus(store)),
            puppetdb,
        };
        let ind = Indirector {
            facts: indirection(&config.facts_route, &parts, facts_terminus)?,
            catalog: indirection(&config.catalog_route, &parts, catalog_terminus)?,
            report: indirection(&config.report_route, &parts, report_terminus)?,
        };
        tracing::debug!(
            "indirector: facts {}, catalog {}, report {}",
            ind.facts.describe(),
            ind.catalog.describe(),
            ind.report.describe()
        );
        Ok(ind)
    }
}

/// The name the server gives PuppetDB as the `producer` of what it sends:
/// the first name of its CA's server certificate, else its host name.
fn producer(config: &ServerConfig) -> String {
    config
        .ca
        .as_ref()
        .and_then(|c| c.server_names.first().cloned())
        .or_else(|| {
            std::fs::read_to_string("/proc/sys/kernel/hostname")
                .ok()
                .map(|h| h.trim().to_ascii_lowercase())
                .filter(|h| !h.is_empty())
        })
        .unwrap_or_else(|| "ferry".into())
}

/// A certname as a file name: printable ASCII without `/` or `\`, not
/// starting with a dot, so that nothing leaves its directory.
pub fn file_name(certname: &str) -> Result<&str, IndirectorError> {
    let ok = !certname.is_empty()
        && certname.len() <= 255
        && !certname.starts_with('.')
        && certname
            .chars()
            .all(|c| c.is_ascii_graphic() && c != '/' && c != '\\');
    if ok {
        Ok(certname)
    } else {
        Err(IndirectorError::BadCertname(
            certname.chars().take(80).collect(),
        ))
    }
}

/// Runs file or network work on the blocking pool.
pub(crate) async fn blocking<T: Send + 'static>(
    what: &'static str,
    work: impl FnOnce() -> Result<T, IndirectorError> + Send + 'static,
) -> Result<T, IndirectorError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|_| IndirectorError::Worker(what))?
}
