//! `ferry serve`: an HTTPS executor API. It answers bolt-server's
//! `/ssh/*` endpoints and ACE's `/check` with Bolt's result shapes, and runs
//! orchestrator-style jobs (`/orchestrator/v1/...`) over the server's
//! inventory with live events as server-sent events. It applies Puppet
//! code from its own environments over SSH too (ACE's `/execute_catalog`,
//! deploy jobs). Every run goes through the same executor as the CLI,
//! with one more sink that writes jobs, nodes, events and results to the
//! store (SQLite or PostgreSQL). TLS is required;
//! every request must present a client certificate from the configured CA
//! (optionally on an allowlist) or a bearer token from the tokens file, or
//! it is refused. It is a Puppet server too: a stock Puppet agent gets its
//! node, catalog and pluginsync files from it and sends it reports, with
//! a certificate that is only its node's (`http::auth`). Errors are JSON
//! `{kind, msg, details}`.
//!
//! Folders: `net` (listening, TLS, the connection cap), `http` (what every
//! endpoint shares: auth, bodies, bounds, errors), `api` (the endpoints that
//! answer at once: bolt-server, ACE, listings, OpenAPI, metrics), `jobs`
//! (orchestrator jobs, plan jobs, Puppet runs, their event stream, PQL scopes),
//! `files` (the file cache, its HTTPS client, per-request scratch
//! directories), `classifier` (node groups, classification and the node
//! termini), `indirector` (facts, catalogs and reports through their
//! configured termini and caches). Beside them: `config` (the YAML file), `environments`
//! (where the Puppet code applies come from), `runner` (a job on the
//! executor with a store sink), `scrub` (server paths out of results),
//! `ca` (the Puppet CA agents bootstrap with: its directory, CSRs, CRL),
//! `program` (running a configured program: ENC, autosign policy).
//! File-system work is done off the async threads (`spawn_blocking`).

pub mod api;
pub mod ca;
pub mod classifier;
pub mod config;
pub mod environments;
pub mod files;
pub mod http;
pub mod indirector;
pub mod inventory;
pub mod jobs;
pub mod net;
pub mod node;
pub mod program;
pub mod runner;
pub mod scrub;

use std::collections::HashMap;
use std::os::unix::fs::DirBuilderExt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post, put};
use tokio::sync::{broadcast, watch};

pub use config::{ConfigError, ServerConfig};
pub use net::listen::Server;

use api::ca as ca_api;
use api::ca_admin;
use api::classifier as classifier_api;
use api::{ace, bolt, fileserver, listing, metrics, openapi, puppet};
use files::{cache, client, scratch};
use http::{auth, errors};
use jobs::{deploy, orchestrator, plans, sse};

use crate::inventory::{Inventory, InventoryError};
use crate::store::{Store, StoreError};

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("inventory: {0}")]
    Inventory(#[from] InventoryError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    #[error("classifier-groups: {0}")]
    Classifier(#[from] classifier::store::StoreError),
    #[error("ca: {0}")]
    Ca(#[from] ca::CaError),
    #[error("routes: {0}")]
    Indirector(#[from] indirector::IndirectorError),
    #[error("cache-dir {path}: {source}")]
    CacheDir {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// Everything the handlers share.
pub struct AppState {
    pub config: ServerConfig,
    pub store: Arc<Store>,
    /// Where facts, catalogs and reports are found and saved (`routes`).
    pub indirector: Arc<indirector::Indirector>,
    pub inventory: Option<Inventory>,
    pub tokens: Option<auth::Tokens>,
    pub metrics: metrics::Metrics,
    /// The Puppet environments on the `environmentpath`, each kept for its
    /// timeout.
    pub environments: environments::Environments,
    /// Files fetched from `file-server-uri`.
    pub files: Arc<cache::FileCache>,
    /// The file server, when configured.
    pub file_server: Option<client::FileServer>,
    /// Every recorded job event, for event-stream subscribers.
    pub hub: broadcast::Sender<runner::JobEvent>,
    /// `https://host:port`, for job URLs.
    pub base_url: Mutex<String>,
    /// The node groups (`classifier-groups`), for the classifier API and
    /// the `classifier` node terminus.
    pub groups: Arc<classifier::GroupStore>,
    /// Where nodes' classifications come from (`routes: node`).
    pub nodes: Arc<dyn classifier::NodeTerminus>,
    /// The Puppet CA (`ca` in the config), opened at start.
    pub ca: Option<Arc<ca::Ca>>,
    /// Each running job's stop signal, while its runner lives.
    stops: Mutex<HashMap<i64, watch::Sender<bool>>>,
}

impl AppState {
    /// Loads the inventory and tokens the config names, opens the store,
    /// and fails the jobs a previous server left unfinished.
    pub async fn new(config: ServerConfig) -> Result<Arc<AppState>, ServerError> {
        // A cache dir the server makes is private (0700) from the start.
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(scratch::DIR_MODE)
            .create(&config.cache_dir)
            .map_err(|source| ServerError::CacheDir {
                path: config.cache_dir.display().to_string(),
                source,
            })?;
        let inventory = match &config.inventory {
            Some(path) => Some(inventory::load(path)?),
            None => None,
        };
        let tokens = match &config.tokens_file {
            Some(path) => Some(auth::Tokens::load(path, &config.path)?),
            None => None,
        };
        let file_server = client::FileServer::from_config(&config)?;
        let files = Arc::new(cache::FileCache::new(
            &config.cache_dir,
            config.file_cache_ttl,
        ));
        files.spawn_purger();
        let store = Arc::new(Store::open(&config.store).await?);
        let failed = store.recover().await?;
        if !failed.is_empty() {
            tracing::warn!("jobs {failed:?} were running when the server stopped; marked failed");
        }
        let (hub, _) = broadcast::channel(1024);
        let environments = environments::Environments::new(
            config.environmentpath.clone(),
            config.modulepath.clone(),
            config.environment_timeout,
        );
        let base_url = Mutex::new(format!("https://{}:{}", config.host, config.port));
        let groups = Arc::new(classifier::GroupStore::load(&config.classifier_groups)?);
        let nodes: Arc<dyn classifier::NodeTerminus> = match config.node_terminus {
            config::NodeTerminusKind::Plain => Arc::new(classifier::terminus::Plain),
            config::NodeTerminusKind::Classifier => {
                Arc::new(classifier::terminus::Classifier(Arc::clone(&groups)))
            }
            config::NodeTerminusKind::Exec => Arc::new(classifier::terminus::Exec {
                program: config.external_nodes.clone().unwrap_or_default(),
            }),
        };
        let ca = match &config.ca {
            Some(settings) => Some(Arc::new(
                ca::Ca::open(&settings.dir)?.with_cert_ttl(settings.cert_ttl),
            )),
            None => None,
        };
        let indirector = Arc::new(indirector::Indirector::from_config(
            &config,
            Arc::clone(&store),
        )?);
        let state = Arc::new(AppState {
            ca,
            config,
            store,
            indirector,
            inventory,
            tokens,
            metrics: metrics::Metrics::new(),
            environments,
            files,
            file_server,
            hub,
            base_url,
            groups,
            nodes,
            stops: Mutex::new(HashMap::new()),
        });
        metrics::Metrics::spawn_upkeep(&state);
        Ok(state)
    }

    pub(crate) fn stops(&self) -> MutexGuard<'_, HashMap<i64, watch::Sender<bool>>> {
        self.stops.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn base_url(&self) -> String {
        self.base_url
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Every route: (method, path). `/openapi.json` describes the same list.
pub const ROUTES: &[(&str, &str)] = &[
    ("POST", "/check"),
    ("POST", "/run_task"),
    ("POST", "/execute_catalog"),
    ("GET", "/metrics"),
    ("GET", "/openapi.json"),
    ("GET", "/tasks"),
    ("GET", "/tasks/{module}/{task}"),
    ("GET", "/plans"),
    ("GET", "/plans/{module}/{plan}"),
    ("GET", "/puppet/v3/file_content/{mount}/{module}/{path}"),
    ("POST", "/ssh/check_node_connections"),
    ("POST", "/ssh/run_command"),
    ("POST", "/ssh/run_script"),
    ("POST", "/ssh/upload_file"),
    ("POST", "/ssh/run_task"),
    ("POST", "/orchestrator/v1/command/command"),
    ("POST", "/orchestrator/v1/command/task"),
    ("POST", "/orchestrator/v1/command/deploy"),
    ("POST", "/orchestrator/v1/command/stop"),
    ("GET", "/orchestrator/v1/jobs"),
    ("GET", "/orchestrator/v1/jobs/{id}"),
    ("GET", "/orchestrator/v1/jobs/{id}/nodes"),
    ("GET", "/orchestrator/v1/jobs/{id}/report"),
    ("GET", "/orchestrator/v1/jobs/{id}/events"),
    ("GET", "/orchestrator/v1/jobs/{id}/events/stream"),
    ("POST", "/orchestrator/v1/command/plan_run"),
    ("GET", "/orchestrator/v1/plan_jobs"),
    ("GET", "/orchestrator/v1/plan_jobs/{id}"),
    ("GET", "/orchestrator/v1/plan_jobs/{id}/events"),
    ("GET", "/puppet/v3/node/{certname}"),
    ("POST", "/puppet/v3/catalog/{certname}"),
    ("GET", "/puppet/v3/catalog/{certname}"),
    ("PUT", "/puppet/v3/report/{certname}"),
    ("PUT", "/puppet/v3/facts/{certname}"),
    ("GET", "/puppet/v3/environments"),
    ("GET", "/puppet/v3/file_metadata/{mount}/{path}"),
    ("GET", "/puppet/v3/file_metadatas/{mount}/{path}"),
    ("GET", "/status/v1/simple"),
    ("GET", "/classifier-api/v1/groups"),
    ("POST", "/classifier-api/v1/groups"),
    ("GET", "/classifier-api/v1/groups/{id}"),
    ("PUT", "/classifier-api/v1/groups/{id}"),
    ("POST", "/classifier-api/v1/groups/{id}"),
    ("DELETE", "/classifier-api/v1/groups/{id}"),
    ("POST", "/classifier-api/v1/groups/{id}/pin"),
    ("POST", "/classifier-api/v1/groups/{id}/unpin"),
    ("POST", "/classifier-api/v1/commands/unpin-from-all"),
    ("POST", "/classifier-api/v1/classified/nodes/{name}"),
    ("GET", "/puppet-ca/v1/certificate/{certname}"),
    ("GET", "/puppet-ca/v1/certificate_revocation_list/{name}"),
    ("PUT", "/puppet-ca/v1/certificate_request/{certname}"),
    ("GET", "/puppet-ca/v1/certificate_request/{certname}"),
    ("GET", "/puppet-ca/v1/certificate_status/{certname}"),
    ("PUT", "/puppet-ca/v1/certificate_status/{certname}"),
    ("DELETE", "/puppet-ca/v1/certificate_status/{certname}"),
    ("GET", "/puppet-ca/v1/certificate_statuses/{any}"),
];

/// The answer to a path no endpoint serves, as bolt-server words it.
async fn no_route(uri: axum::http::Uri) -> errors::ApiError {
    errors::ApiError::new(
        axum::http::StatusCode::NOT_FOUND,
        "boltserver/not-found",
        format!("Could not find route {}", uri.path()),
    )
}

/// The whole API. Requests must carry a [`auth::Peer`] extension (the TLS
/// layer adds it); without one only bearer tokens authenticate.
pub fn router(state: Arc<AppState>) -> Router {
    let limit = usize::try_from(state.config.request_size_limit).unwrap_or(usize::MAX);
    Router::new()
        .route("/check", post(ace::check))
        .route("/run_task", post(ace::run_task))
        .route("/execute_catalog", post(ace::execute_catalog))
        .route("/metrics", get(metrics::metrics))
        .route("/openapi.json", get(openapi::openapi))
        .route("/tasks", get(listing::list_tasks))
        .route("/tasks/{module}/{task}", get(listing::show_task))
        .route("/plans", get(listing::list_plans))
        .route("/plans/{module}/{plan}", get(listing::show_plan))
        .route(
            "/puppet/v3/file_content/{mount}/{*path}",
            get(listing::file_content),
        )
        .route("/puppet/v3/node/{certname}", get(puppet::node))
        .route(
            "/puppet/v3/catalog/{certname}",
            post(puppet::catalog).get(puppet::cached_catalog),
        )
        .route("/puppet/v3/report/{certname}", put(puppet::report))
        .route("/puppet/v3/facts/{certname}", put(puppet::facts))
        .route("/puppet/v3/environments", get(puppet::list_environments))
        .route(
            "/puppet/v3/file_metadata/{*path}",
            get(fileserver::file_metadata),
        )
        .route(
            "/puppet/v3/file_metadatas/{*path}",
            get(fileserver::file_metadatas),
        )
        .route("/status/v1/simple", get(puppet::status))
        .route("/status/v1/simple/{service}", get(puppet::status))
        .route(
            "/classifier-api/v1/groups",
            get(classifier_api::list).post(classifier_api::create),
        )
        .route(
            "/classifier-api/v1/groups/{id}",
            get(classifier_api::show)
                .put(classifier_api::replace)
                .post(classifier_api::update)
                .delete(classifier_api::delete),
        )
        .route(
            "/classifier-api/v1/groups/{id}/pin",
            post(classifier_api::pin),
        )
        .route(
            "/classifier-api/v1/groups/{id}/unpin",
            post(classifier_api::unpin),
        )
        .route(
            "/classifier-api/v1/commands/unpin-from-all",
            post(classifier_api::unpin_from_all),
        )
        .route(
            "/classifier-api/v1/classified/nodes/{name}",
            post(classifier_api::classified),
        )
        .route(
            "/puppet-ca/v1/certificate/{certname}",
            get(ca_api::certificate),
        )
        .route(
            "/puppet-ca/v1/certificate_revocation_list/{name}",
            get(ca_api::crl),
        )
        .route(
            "/puppet-ca/v1/certificate_request/{certname}",
            get(ca_api::request)
                .put(ca_api::submit)
                .layer(DefaultBodyLimit::max(ca_api::MAX_CSR_BYTES.min(limit))),
        )
        .route(
            "/puppet-ca/v1/certificate_status/{certname}",
            get(ca_admin::status)
                .put(ca_admin::change)
                .delete(ca_admin::delete),
        )
        .route(
            "/puppet-ca/v1/certificate_statuses/{any}",
            get(ca_admin::statuses),
        )
        .route(
            "/ssh/check_node_connections",
            post(bolt::check_node_connections),
        )
        .route("/ssh/run_command", post(bolt::run_command))
        .route("/ssh/run_script", post(bolt::run_script))
        .route("/ssh/upload_file", post(bolt::upload_file))
        .route("/ssh/run_task", post(bolt::run_task))
        .route(
            "/orchestrator/v1/command/command",
            post(orchestrator::command),
        )
        .route("/orchestrator/v1/command/task", post(orchestrator::task))
        .route("/orchestrator/v1/command/deploy", post(deploy::deploy))
        .route("/orchestrator/v1/command/stop", post(orchestrator::stop))
        .route("/orchestrator/v1/jobs", get(orchestrator::list))
        .route("/orchestrator/v1/jobs/{id}", get(orchestrator::show))
        .route("/orchestrator/v1/jobs/{id}/nodes", get(orchestrator::nodes))
        .route("/orchestrator/v1/jobs/{id}/report", get(deploy::report))
        .route(
            "/orchestrator/v1/jobs/{id}/events",
            get(orchestrator::events),
        )
        .route("/orchestrator/v1/jobs/{id}/events/stream", get(sse::stream))
        .route("/orchestrator/v1/command/plan_run", post(plans::plan_run))
        .route("/orchestrator/v1/plan_jobs", get(plans::list))
        .route("/orchestrator/v1/plan_jobs/{id}", get(plans::show))
        .route("/orchestrator/v1/plan_jobs/{id}/events", get(plans::events))
        .fallback(no_route)
        .method_not_allowed_fallback(errors::wrong_method)
        .layer(DefaultBodyLimit::max(limit))
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state),
            auth::authenticate,
        ))
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state),
            metrics::track,
        ))
        .with_state(state)
}
