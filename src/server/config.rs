//! The server's configuration file: YAML with ACE's and bolt-server's key
//! names plus ferry's own, every key checked at start. A YAML problem is an
//! error at `file:line:col`; a bad value names its key; an unknown key is an
//! error, so a typo never silently turns a protection off.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::catalog::environment::{DEFAULT_ENVIRONMENT, Timeout, check_name};
use crate::server::ca::{Autosign, check_certname};

/// Why the configuration (or a file it names) cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: cannot read: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}:{column}: {message}")]
    Yaml {
        path: String,
        line: u64,
        column: u64,
        message: String,
    },
    #[error("{path}: {key}: {message}")]
    Value {
        path: String,
        key: &'static str,
        message: String,
    },
}

/// Default `port`, as ACE and bolt-server use it.
pub const DEFAULT_PORT: u16 = 44633;
/// Default `request-size-limit`: 10 MiB.
pub const DEFAULT_REQUEST_SIZE_LIMIT: u64 = 10 * 1024 * 1024;
/// Default `request-timeout` in seconds.
pub const DEFAULT_REQUEST_TIMEOUT: u64 = 30;
/// Default `file-cache-ttl` in seconds (a day).
pub const DEFAULT_FILE_CACHE_TTL: u64 = 86400;
/// Default `max-connections`.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// Largest `max-connections`.
pub const MAX_MAX_CONNECTIONS: usize = 1_000_000;
/// Default `environmentpath`: Puppet's (`$codedir/environments`).
pub const DEFAULT_ENVIRONMENTPATH: &str = "/etc/puppetlabs/code/environments";
/// Default `loglevel`.
pub const DEFAULT_LOGLEVEL: &str = "info";

/// A YAML error in the file `path`, at its position.
pub(crate) fn yaml_error(path: &str, e: crate::yaml::SyntaxError) -> ConfigError {
    ConfigError::Yaml {
        path: path.to_string(),
        line: e.line,
        column: e.column,
        message: e.message,
    }
}

/// A path list (`modulepath`, `environmentpath`): a `:`-separated string
/// or a list of directories.
#[derive(Deserialize)]
#[serde(untagged)]
enum PathList {
    Joined(String),
    List(Vec<PathBuf>),
}

/// `environment-timeout`: seconds, or Puppet's TTL text (`5m`, `unlimited`).
#[derive(Deserialize)]
#[serde(untagged)]
enum Ttl {
    Seconds(u64),
    Text(String),
}

/// `routes:` (Puppet's routes.yaml): the terminus of each model.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Routes {
    node: Option<RawRoute>,
    facts: Option<RawRoute>,
    catalog: Option<RawRoute>,
    report: Option<RawRoute>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRoute {
    terminus: Option<String>,
    cache: Option<String>,
    /// Seconds, or a duration's text; read by hand so that any bad value
    /// is an error naming the key.
    ttl: Option<serde_json::Value>,
}

/// A terminus of the facts, catalog or report indirection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TerminusKind {
    /// Files under `cache-dir` in Puppet's layout.
    Yaml,
    /// ferry's store (SQLite or PostgreSQL).
    Store,
    /// A PuppetDB (`puppetdb-url`).
    PuppetDb,
    /// ferry's compiler (catalogs).
    Compiler,
}

impl TerminusKind {
    /// The name in the config.
    pub fn name(self) -> &'static str {
        match self {
            TerminusKind::Yaml => "yaml",
            TerminusKind::Store => "store",
            TerminusKind::PuppetDb => "puppetdb",
            TerminusKind::Compiler => "compiler",
        }
    }
}

/// Default `ttl` of a cache: Puppet's (its `runinterval`, 30 minutes).
pub const DEFAULT_CACHE_TTL: Duration = Duration::from_secs(1800);

/// Where one model is found and saved (`routes: MODEL: {terminus, cache, ttl}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    pub terminus: TerminusKind,
    /// The cache terminus in front, if any.
    pub cache: Option<TerminusKind>,
    /// How long a cache entry is used (`None`: `unlimited`).
    pub ttl: Option<Duration>,
}

/// What each model may be routed to, and the config keys naming its parts.
struct ModelRoutes {
    termini: &'static [TerminusKind],
    caches: &'static [TerminusKind],
    keys: [&'static str; 3],
    default: TerminusKind,
}

const FACTS_ROUTES: ModelRoutes = ModelRoutes {
    termini: &[
        TerminusKind::Yaml,
        TerminusKind::Store,
        TerminusKind::PuppetDb,
    ],
    caches: &[
        TerminusKind::Yaml,
        TerminusKind::Store,
        TerminusKind::PuppetDb,
    ],
    keys: [
        "routes.facts.terminus",
        "routes.facts.cache",
        "routes.facts.ttl",
    ],
    default: TerminusKind::Store,
};
const CATALOG_ROUTES: ModelRoutes = ModelRoutes {
    termini: &[TerminusKind::Compiler],
    caches: &[TerminusKind::Store],
    keys: [
        "routes.catalog.terminus",
        "routes.catalog.cache",
        "routes.catalog.ttl",
    ],
    default: TerminusKind::Compiler,
};
const REPORT_ROUTES: ModelRoutes = ModelRoutes {
    termini: &[
        TerminusKind::Store,
        TerminusKind::Yaml,
        TerminusKind::PuppetDb,
    ],
    caches: &[],
    keys: [
        "routes.report.terminus",
        "routes.report.cache",
        "routes.report.ttl",
    ],
    default: TerminusKind::Store,
};

fn names(kinds: &[TerminusKind]) -> String {
    kinds
        .iter()
        .map(|k| k.name())
        .collect::<Vec<_>>()
        .join(", ")
}

impl ModelRoutes {
    /// The checked route, or the key at fault and why.
    fn check(&self, raw: Option<RawRoute>) -> Result<Route, (&'static str, String)> {
        let [t_key, c_key, ttl_key] = self.keys;
        let Some(raw) = raw else {
            return Ok(Route {
                terminus: self.default,
                cache: None,
                ttl: None,
            });
        };
        let pick = |name: &str, allowed: &[TerminusKind], key: &'static str| {
            allowed
                .iter()
                .copied()
                .find(|k| k.name() == name)
                .ok_or_else(|| {
                    if allowed.is_empty() {
                        (key, "is not supported: this model has no cache".to_string())
                    } else {
                        (key, format!("'{name}' is not one of {}", names(allowed)))
                    }
                })
        };
        let terminus = match raw.terminus.as_deref() {
            None => self.default,
            Some(t) => pick(t, self.termini, t_key)?,
        };
        let cache = match raw.cache.as_deref() {
            None => None,
            Some(c) => Some(pick(c, self.caches, c_key)?),
        };
        if cache == Some(terminus) {
            return Err((
                c_key,
                format!("cannot be the terminus itself ('{}')", terminus.name()),
            ));
        }
        let ttl = match raw.ttl {
            None => Some(DEFAULT_CACHE_TTL),
            Some(ttl) => {
                if cache.is_none() {
                    return Err((
                        ttl_key,
                        "needs a cache: it is how long cache entries are used".into(),
                    ));
                }
                match duration(&ttl) {
                    Some(Timeout::Seconds(n)) if n > 0 => Some(Duration::from_secs(n)),
                    Some(Timeout::Unlimited) => None,
                    _ => {
                        return Err((
                            ttl_key,
                            "must be a number of seconds (at least 1), a duration such as 5m, or unlimited".into(),
                        ));
                    }
                }
            }
        };
        Ok(Route {
            terminus,
            cache,
            ttl,
        })
    }
}

/// Where nodes' classifications come from (`routes: node: {terminus}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeTerminusKind {
    /// Nothing classified: a node keeps the environment it asks for.
    Plain,
    /// The node groups (`classifier-groups`).
    Classifier,
    /// An external node classifier program (`external-nodes`).
    Exec,
}

/// The node groups file when `classifier-groups` is not set.
pub const DEFAULT_CLASSIFIER_GROUPS: &str = "classifier-groups.json";
/// `ca.autosign`: `true`, `false`, a list of certname globs, or the path
/// of an autosign policy executable or of an `autosign.conf` file.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawAutosign {
    Flag(bool),
    Globs(Vec<String>),
    Policy(PathBuf),
}

/// `ca`: the Puppet CA the server runs.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawCa {
    dir: PathBuf,
    autosign: Option<RawAutosign>,
    autosign_timeout: Option<u64>,
    /// Seconds or Puppet's duration text; read by hand so that any bad
    /// value is an error naming the key.
    cert_ttl: Option<serde_json::Value>,
    server_names: Option<Vec<String>>,
}

/// The Puppet CA's settings (`ca`).
#[derive(Clone, Debug)]
pub struct CaSettings {
    /// The CA directory (Puppet Server's `cadir` layout).
    pub dir: PathBuf,
    /// Which CSRs are signed as they come.
    pub autosign: Autosign,
    /// How long node certificates are valid, in seconds (Puppet's
    /// `ca_ttl`).
    pub cert_ttl: i64,
    /// The names on the server certificate the CA makes when `ssl-cert`
    /// and `ssl-key` do not exist yet: the first is its CN, all are SANs.
    pub server_names: Vec<String>,
}

/// A duration in the config: a number of seconds, or Puppet's text
/// (`5m`, `unlimited`).
fn duration(value: &serde_json::Value) -> Option<Timeout> {
    match value {
        serde_json::Value::Number(n) => n.as_u64().map(Timeout::Seconds),
        serde_json::Value::String(t) => Timeout::parse(t),
        _ => None,
    }
}

/// `ca.cert-ttl` in seconds: Puppet's duration (a number of seconds, or
/// digits with `s`, `m`, `h`, `d` or `y`), 1 second to 100 years.
fn cert_ttl(value: &serde_json::Value) -> Option<i64> {
    let Timeout::Seconds(secs) = duration(value)? else {
        return None;
    };
    (1..=100 * 365 * 86400)
        .contains(&secs)
        .then(|| i64::try_from(secs).ok())
        .flatten()
}

/// The names the server's certificate gets by default: the machine's
/// host name, `localhost`, `127.0.0.1`, and `host` when it is another
/// address.
fn default_server_names(host: &str) -> Vec<String> {
    let mut names = Vec::new();
    if let Ok(h) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
        let h = h.trim().to_ascii_lowercase();
        if !h.is_empty() {
            names.push(h);
        }
    }
    for n in ["localhost", "127.0.0.1", host] {
        if n != "0.0.0.0" && n != "::" && !names.iter().any(|x| x == n) {
            names.push(n.to_string());
        }
    }
    names
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Raw {
    ca: Option<RawCa>,
    host: Option<String>,
    port: Option<u16>,
    ssl_cert: Option<PathBuf>,
    ssl_key: Option<PathBuf>,
    ssl_ca_cert: Option<PathBuf>,
    ssl_ca_crls: Option<PathBuf>,
    allowlist: Option<Vec<String>>,
    concurrency: Option<usize>,
    cache_dir: Option<PathBuf>,
    loglevel: Option<String>,
    inventory: Option<PathBuf>,
    modulepath: Option<PathList>,
    environmentpath: Option<PathList>,
    default_environment: Option<String>,
    environment_timeout: Option<Ttl>,
    store: Option<String>,
    tokens_file: Option<PathBuf>,
    request_size_limit: Option<u64>,
    request_timeout: Option<u64>,
    file_server_uri: Option<String>,
    file_cache_ttl: Option<u64>,
    max_output: Option<u64>,
    max_connections: Option<usize>,
    routes: Option<Routes>,
    classifier_groups: Option<PathBuf>,
    external_nodes: Option<PathBuf>,
    puppetdb_url: Option<UrlList>,
    puppetdb_cacert: Option<PathBuf>,
    puppetdb_cert: Option<PathBuf>,
    puppetdb_key: Option<PathBuf>,
}

/// `puppetdb-url`: one URL or a list (tried in turn).
#[derive(Deserialize)]
#[serde(untagged)]
enum UrlList {
    One(String),
    Many(Vec<String>),
}

/// The checked configuration.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// The file it came from (relative paths in it are relative to its directory).
    pub path: PathBuf,
    pub host: String,
    pub port: u16,
    pub ssl_cert: PathBuf,
    pub ssl_key: PathBuf,
    pub ssl_ca_cert: PathBuf,
    pub ssl_ca_crls: Option<PathBuf>,
    /// Certificate names (CN or DNS SAN) let in; `None` lets in any certificate from the CA.
    pub allowlist: Option<Vec<String>>,
    pub concurrency: usize,
    pub cache_dir: PathBuf,
    pub loglevel: String,
    pub inventory: Option<PathBuf>,
    pub modulepath: Vec<PathBuf>,
    /// Directories holding Puppet environments (`<dir>/<name>/manifests`,
    /// `modules`, `hiera.yaml`), searched in order.
    pub environmentpath: Vec<PathBuf>,
    /// The environment of a node that asks for none, or for one that does
    /// not exist (`default-environment`, Puppet's `production`).
    pub default_environment: String,
    /// How long a loaded environment (its environment.conf and code) is
    /// reused when its environment.conf sets no `environment_timeout`
    /// (0: read again for every compile).
    pub environment_timeout: Timeout,
    /// A database URL: `sqlite://FILE` or `postgres://...`.
    pub store: String,
    pub tokens_file: Option<PathBuf>,
    pub request_size_limit: u64,
    pub request_timeout: Duration,
    /// Where files named by `uri` come from when the modulepath lacks them
    /// (ACE's puppetserver base URL, `https://host:port`).
    pub file_server_uri: Option<String>,
    /// How long an unused fetched file stays in the cache.
    pub file_cache_ttl: Duration,
    /// Bytes of each output stream a node's result keeps (`max-output`).
    pub max_output: usize,
    /// Connections open at once; at the cap the oldest idle one is closed
    /// for a new one (or the new one is refused when none is idle).
    pub max_connections: usize,
    /// Where nodes' classifications come from.
    pub node_terminus: NodeTerminusKind,
    /// The node groups file (PE's format), read at start and rewritten by
    /// the classifier API.
    pub classifier_groups: PathBuf,
    /// The external node classifier program (`exec` terminus).
    pub external_nodes: Option<PathBuf>,
    /// The Puppet CA this server runs (`/puppet-ca/v1`), when configured.
    pub ca: Option<CaSettings>,
    /// Where facts are found and saved (`routes: facts`).
    pub facts_route: Route,
    /// Where catalogs come from (`routes: catalog`).
    pub catalog_route: Route,
    /// Where reports are saved (`routes: report`).
    pub report_route: Route,
    /// The PuppetDB of the `puppetdb` termini (`puppetdb-url`, with
    /// `puppetdb-cacert`, `-cert`, `-key`, by default the server's own).
    pub puppetdb: Option<crate::query::puppetdb::Config>,
}

impl ServerConfig {
    /// Reads and checks a configuration file.
    pub fn load(path: &Path) -> Result<ServerConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Checks configuration text; `path` names it in errors and anchors relative paths.
    pub fn parse(text: &str, path: &Path) -> Result<ServerConfig, ConfigError> {
        let shown = path.display().to_string();
        let raw: Raw = crate::yaml::from_str(if text.trim().is_empty() { "{}" } else { text })
            .map_err(|e| yaml_error(&shown, e))?;
        let bad = |key: &'static str, message: String| ConfigError::Value {
            path: shown.clone(),
            key,
            message,
        };
        let base = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        let anchored = |p: PathBuf| if p.is_relative() { base.join(p) } else { p };
        let ca_dir = raw.ca.as_ref().map(|c| anchored(c.dir.clone()));
        // With a CA, the TLS files default to the CA directory's (made on
        // first start).
        let required = |key: &'static str, v: Option<PathBuf>| {
            let default = ca_dir.as_ref().map(|d| {
                d.join(match key {
                    "ssl-cert" => "server_crt.pem",
                    "ssl-key" => "server_key.pem",
                    _ => "ca_crt.pem",
                })
            });
            v.map(anchored).or(default).ok_or_else(|| {
                bad(
                    key,
                    "is required (unless `ca` is set): the server only speaks HTTPS with client certificates".into(),
                )
            })
        };

        let host = raw.host.unwrap_or_else(|| "127.0.0.1".into());
        if host.is_empty() || (host.parse::<IpAddr>().is_err() && host != "localhost") {
            return Err(bad(
                "host",
                format!("'{host}' is not an IP address (or localhost)"),
            ));
        }
        let concurrency = raw
            .concurrency
            .unwrap_or_else(crate::run::default_concurrency);
        let most = super::http::limits::MAX_CONCURRENCY;
        if concurrency == 0 || concurrency as u64 > most {
            return Err(bad("concurrency", format!("must be from 1 to {most}")));
        }
        let max_connections = raw.max_connections.unwrap_or(DEFAULT_MAX_CONNECTIONS);
        if !(1..=MAX_MAX_CONNECTIONS).contains(&max_connections) {
            return Err(bad(
                "max-connections",
                format!("must be from 1 to {MAX_MAX_CONNECTIONS}"),
            ));
        }
        let loglevel = raw.loglevel.unwrap_or_else(|| DEFAULT_LOGLEVEL.into());
        if !["error", "warn", "info", "debug", "trace"].contains(&loglevel.as_str()) {
            return Err(bad(
                "loglevel",
                format!("'{loglevel}' is not one of error, warn, info, debug, trace"),
            ));
        }
        let request_size_limit = raw.request_size_limit.unwrap_or(DEFAULT_REQUEST_SIZE_LIMIT);
        if request_size_limit < 1024 {
            return Err(bad(
                "request-size-limit",
                "must be at least 1024 bytes".into(),
            ));
        }
        let request_timeout = raw.request_timeout.unwrap_or(DEFAULT_REQUEST_TIMEOUT);
        if request_timeout == 0 {
            return Err(bad("request-timeout", "must be at least 1 second".into()));
        }
        let file_cache_ttl = raw.file_cache_ttl.unwrap_or(DEFAULT_FILE_CACHE_TTL);
        if file_cache_ttl == 0 {
            return Err(bad("file-cache-ttl", "must be at least 1 second".into()));
        }
        let max_output = match raw.max_output {
            None => crate::run::capture::DEFAULT_MAX_OUTPUT,
            Some(n) => {
                crate::run::capture::check_size(n).map_err(|e| bad("max-output", e.to_string()))?
            }
        };
        if let Some(uri) = &raw.file_server_uri {
            super::files::client::parse_uri(uri)
                .map_err(|e| bad("file-server-uri", e.to_string()))?;
        }
        let cache_dir = raw
            .cache_dir
            .map(anchored)
            .unwrap_or_else(|| crate::transport::ssh::options::home().join(".cache/ferry"));
        let store = match raw.store {
            Some(s) if s.starts_with("sqlite:") || s.starts_with("postgres") => s,
            Some(s) => {
                return Err(bad(
                    "store",
                    format!(
                        "'{}' is not a sqlite:// or postgres:// URL",
                        crate::store::redact_url(&s)
                    ),
                ));
            }
            None => crate::store::default_url(&cache_dir),
        };
        let paths = |list: PathList| -> Vec<PathBuf> {
            match list {
                PathList::Joined(s) => s
                    .split(':')
                    .filter(|p| !p.is_empty())
                    .map(|p| anchored(PathBuf::from(p)))
                    .collect(),
                PathList::List(list) => list.into_iter().map(anchored).collect(),
            }
        };
        let modulepath = raw.modulepath.map(paths).unwrap_or_default();
        let environmentpath = match raw.environmentpath.map(paths) {
            None => vec![PathBuf::from(DEFAULT_ENVIRONMENTPATH)],
            Some(list) if list.is_empty() => {
                return Err(bad(
                    "environmentpath",
                    "must name at least one directory".into(),
                ));
            }
            Some(list) => list,
        };
        let default_environment = raw
            .default_environment
            .unwrap_or_else(|| DEFAULT_ENVIRONMENT.to_string());
        check_name(&default_environment).map_err(|e| bad("default-environment", e.to_string()))?;
        let environment_timeout = match raw.environment_timeout {
            None => Timeout::Seconds(0),
            Some(Ttl::Seconds(n)) => Timeout::Seconds(n),
            Some(Ttl::Text(t)) => Timeout::parse(&t).ok_or_else(|| {
                bad(
                    "environment-timeout",
                    format!(
                        "'{t}' is not a number of seconds, a duration such as 5m, or unlimited"
                    ),
                )
            })?,
        };
        if let Some(list) = &raw.allowlist
            && list.iter().any(|n| n.trim().is_empty())
        {
            return Err(bad("allowlist", "names must not be empty".into()));
        }
        let groups_given = raw.classifier_groups.is_some();
        let classifier_groups = raw
            .classifier_groups
            .map(anchored)
            .unwrap_or_else(|| cache_dir.join(DEFAULT_CLASSIFIER_GROUPS));
        let external_nodes = raw.external_nodes.map(anchored);
        let (node_route, facts_route, catalog_route, report_route) = match raw.routes {
            None => (None, None, None, None),
            Some(r) => (r.node, r.facts, r.catalog, r.report),
        };
        if let Some(n) = &node_route
            && (n.cache.is_some() || n.ttl.is_some())
        {
            return Err(bad(
                "routes",
                "node: takes only a terminus (the node indirection has no cache)".into(),
            ));
        }
        let route = |model: &ModelRoutes, raw: Option<RawRoute>| {
            model.check(raw).map_err(|(key, message)| bad(key, message))
        };
        let facts_route = route(&FACTS_ROUTES, facts_route)?;
        let catalog_route = route(&CATALOG_ROUTES, catalog_route)?;
        let report_route = route(&REPORT_ROUTES, report_route)?;
        let node_terminus = match node_route.and_then(|n| n.terminus) {
            None if groups_given => NodeTerminusKind::Classifier,
            None if external_nodes.is_some() => NodeTerminusKind::Exec,
            None => NodeTerminusKind::Plain,
            Some(t) => match t.as_str() {
                "plain" => NodeTerminusKind::Plain,
                "classifier" => NodeTerminusKind::Classifier,
                "exec" => NodeTerminusKind::Exec,
                other => {
                    return Err(bad(
                        "routes",
                        format!("node: terminus '{other}' is not one of plain, classifier, exec"),
                    ));
                }
            },
        };
        if node_terminus == NodeTerminusKind::Exec && external_nodes.is_none() {
            return Err(bad(
                "routes",
                "node: terminus exec needs external-nodes (the classifier program)".into(),
            ));
        }
        let ssl_cert = required("ssl-cert", raw.ssl_cert)?;
        let ssl_key = required("ssl-key", raw.ssl_key)?;
        let ssl_ca_cert = required("ssl-ca-cert", raw.ssl_ca_cert)?;
        let puppetdb = match raw.puppetdb_url {
            None => None,
            Some(urls) => {
                let urls = match urls {
                    UrlList::One(u) => vec![u],
                    UrlList::Many(list) => list,
                };
                if urls.is_empty() {
                    return Err(bad("puppetdb-url", "must name at least one URL".into()));
                }
                for u in &urls {
                    crate::query::puppetdb::check_url(u)
                        .map_err(|message| bad("puppetdb-url", message))?;
                }
                let mut c = crate::query::puppetdb::Config::new(urls);
                c.cacert = Some(
                    raw.puppetdb_cacert
                        .map(anchored)
                        .unwrap_or_else(|| ssl_ca_cert.clone()),
                );
                c.cert = Some(
                    raw.puppetdb_cert
                        .map(anchored)
                        .unwrap_or_else(|| ssl_cert.clone()),
                );
                c.key = Some(
                    raw.puppetdb_key
                        .map(anchored)
                        .unwrap_or_else(|| ssl_key.clone()),
                );
                Some(c)
            }
        };
        for (route, key) in [
            (&facts_route, FACTS_ROUTES.keys),
            (&report_route, REPORT_ROUTES.keys),
        ] {
            for (kind, key) in [(Some(route.terminus), key[0]), (route.cache, key[1])] {
                if kind == Some(TerminusKind::PuppetDb) && puppetdb.is_none() {
                    return Err(bad(key, "puppetdb needs puppetdb-url".into()));
                }
            }
        }
        let ca = match raw.ca {
            None => None,
            Some(c) => {
                let autosign = match c.autosign {
                    None | Some(RawAutosign::Flag(false)) => Autosign::Never,
                    Some(RawAutosign::Flag(true)) => Autosign::Always,
                    Some(RawAutosign::Globs(globs)) => {
                        if globs.iter().any(|g| g.trim().is_empty()) {
                            return Err(bad("ca.autosign", "globs must not be empty".into()));
                        }
                        Autosign::Matching(globs)
                    }
                    Some(RawAutosign::Policy(program)) => {
                        use std::os::unix::fs::PermissionsExt;
                        let program = anchored(program);
                        let file = std::fs::metadata(&program).ok().filter(|m| m.is_file());
                        let Some(file) = file else {
                            return Err(bad(
                                "ca.autosign",
                                format!(
                                    "{} is not a file (an autosign.conf or an autosign policy program; or give true, false or a list of globs)",
                                    program.display()
                                ),
                            ));
                        };
                        if file.permissions().mode() & 0o111 == 0 {
                            crate::server::ca::autosign_conf::check(&program)
                                .map_err(|e| bad("ca.autosign", e.to_string()))?;
                            if c.autosign_timeout.is_some() {
                                return Err(bad(
                                    "ca.autosign-timeout",
                                    "is for an autosign policy program, not an autosign.conf"
                                        .into(),
                                ));
                            }
                            Autosign::Listed(program)
                        } else {
                            let timeout = match c.autosign_timeout {
                                None => crate::server::ca::policy::DEFAULT_POLICY_TIMEOUT,
                                Some(0) => {
                                    return Err(bad(
                                        "ca.autosign-timeout",
                                        "must be at least 1 second".into(),
                                    ));
                                }
                                Some(secs) => std::time::Duration::from_secs(secs),
                            };
                            Autosign::Policy { program, timeout }
                        }
                    }
                };
                let cert_ttl = match c.cert_ttl {
                    None => crate::server::ca::CERT_TTL_SECS,
                    Some(ttl) => cert_ttl(&ttl).ok_or_else(|| {
                        bad(
                            "ca.cert-ttl",
                            "must be a duration of 1 second to 100 years: seconds (3600), or a number with s, m, h, d or y (30d, 5y)".into(),
                        )
                    })?,
                };
                let server_names = c
                    .server_names
                    .unwrap_or_else(|| default_server_names(&host));
                match server_names.first() {
                    None => {
                        return Err(bad("ca.server-names", "must name at least one name".into()));
                    }
                    Some(first) => {
                        check_certname(first).map_err(|e| bad("ca.server-names", e.to_string()))?
                    }
                }
                Some(CaSettings {
                    dir: anchored(c.dir),
                    autosign,
                    cert_ttl,
                    server_names,
                })
            }
        };
        Ok(ServerConfig {
            ca,
            path: path.to_path_buf(),
            host,
            port: raw.port.unwrap_or(DEFAULT_PORT),
            ssl_cert,
            ssl_key,
            ssl_ca_cert,
            ssl_ca_crls: raw.ssl_ca_crls.map(anchored),
            allowlist: raw.allowlist,
            concurrency,
            cache_dir,
            loglevel,
            inventory: raw.inventory.map(anchored),
            modulepath,
            environmentpath,
            default_environment,
            environment_timeout,
            store,
            tokens_file: raw.tokens_file.map(anchored),
            request_size_limit,
            request_timeout: Duration::from_secs(request_timeout),
            file_server_uri: raw.file_server_uri,
            file_cache_ttl: Duration::from_secs(file_cache_ttl),
            max_output,
            max_connections,
            node_terminus,
            classifier_groups,
            external_nodes,
            facts_route,
            catalog_route,
            report_route,
            puppetdb,
        })
    }

    /// An error about a value of this file.
    pub fn error(&self, key: &'static str, message: impl Into<String>) -> ConfigError {
        ConfigError::Value {
            path: self.path.display().to_string(),
            key,
            message: message.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ca_makes_the_tls_files_optional_and_checks_its_keys() {
        let path = Path::new("/etc/ferry/server.yaml");
        let c = ServerConfig::parse(
            "ca:\n  dir: ca\n  autosign: ['*.lab']\n  server-names: [puppet.lab]\n",
            path,
        )
        .expect("config");
        let ca = c.ca.expect("ca");
        assert_eq!(ca.dir, Path::new("/etc/ferry/ca"));
        assert_eq!(ca.autosign, Autosign::Matching(vec!["*.lab".into()]));
        assert_eq!(c.ssl_ca_cert, Path::new("/etc/ferry/ca/ca_crt.pem"));
        assert_eq!(c.ssl_cert, Path::new("/etc/ferry/ca/server_crt.pem"));
        let c = ServerConfig::parse("ca: {dir: /x, autosign: true}\n", path).expect("config");
        assert_eq!(c.ca.expect("ca").autosign, Autosign::Always);
        let c = ServerConfig::parse(
            "ca: {dir: /x, autosign: /bin/true, autosign-timeout: 5}\n",
            path,
        )
        .expect("config");
        assert_eq!(
            c.ca.expect("ca").autosign,
            Autosign::Policy {
                program: "/bin/true".into(),
                timeout: Duration::from_secs(5)
            }
        );
        for (text, key) in [
            ("ca: {dir: /x, autosign: ['']}\n", "ca.autosign"),
            ("ca: {dir: /x, server-names: []}\n", "ca.server-names"),
            ("ca: {dir: /x, server-names: [Upper]}\n", "ca.server-names"),
            (
                "ca: {dir: /x, autosign: /nonexistent/policy}\n",
                "ca.autosign",
            ),
            (
                "ca: {dir: /x, autosign: /bin/true, autosign-timeout: 0}\n",
                "ca.autosign-timeout",
            ),
        ] {
            let e = ServerConfig::parse(text, path).expect_err(text).to_string();
            assert!(e.contains(key), "{text}: {e}");
        }
        let e = ServerConfig::parse("ca: {dir: /x, wat: 1}\n", path).expect_err("unknown");
        assert!(e.to_string().contains("wat"), "{e}");
        let e = ServerConfig::parse("port: 1\n", path).expect_err("no tls");
        assert!(e.to_string().contains("ssl-cert"), "{e}");
    }

    #[test]
    fn cert_ttl_is_puppets_duration() {
        let path = Path::new("/etc/ferry/server.yaml");
        let ttl = |v: &str| {
            ServerConfig::parse(&format!("ca: {{dir: /x, cert-ttl: {v}}}\n"), path)
                .map(|c| c.ca.expect("ca").cert_ttl)
                .map_err(|e| e.to_string())
        };
        let default = ServerConfig::parse("ca: {dir: /x}\n", path).expect("config");
        assert_eq!(default.ca.expect("ca").cert_ttl, 5 * 365 * 86400);
        for (text, secs) in [
            ("3600", 3600),
            ("'3600'", 3600),
            ("30s", 30),
            ("15m", 900),
            ("2h", 7200),
            ("30d", 30 * 86400),
            ("5y", 5 * 365 * 86400),
        ] {
            assert_eq!(ttl(text), Ok(secs), "{text}");
        }
        for text in ["0", "-1", "5w", "1.5d", "unlimited", "101y", "[]", "''"] {
            let e = ttl(text).expect_err(text);
            assert!(e.contains("ca.cert-ttl: must be a duration"), "{text}: {e}");
        }
    }

    #[test]
    fn an_autosign_file_that_is_not_executable_is_an_autosign_conf() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("server.yaml");
        let conf = dir.path().join("autosign.conf");
        std::fs::write(&conf, "# lab\n*.lab\n").expect("write");
        let c =
            ServerConfig::parse("ca: {dir: ca, autosign: autosign.conf}\n", &path).expect("config");
        assert_eq!(c.ca.expect("ca").autosign, Autosign::Listed(conf.clone()));
        std::fs::write(&conf, "# lab\n*.lab\nweb 1\n").expect("write");
        let e = ServerConfig::parse("ca: {dir: ca, autosign: autosign.conf}\n", &path)
            .expect_err("a bad line")
            .to_string();
        let want = format!(
            "ca.autosign: {}:3: 'web 1': an entry has no spaces",
            conf.display()
        );
        assert!(e.contains(&want), "{e}");
        std::fs::write(&conf, "*.lab\n").expect("write");
        let e = ServerConfig::parse(
            "ca: {dir: ca, autosign: autosign.conf, autosign-timeout: 5}\n",
            &path,
        )
        .expect_err("a timeout for a file")
        .to_string();
        assert!(e.contains("ca.autosign-timeout"), "{e}");
    }

    #[test]
    fn routes_choose_termini_and_a_bad_one_names_its_key() {
        let path = Path::new("/etc/ferry/server.yaml");
        let tls = "ssl-cert: c\nssl-key: k\nssl-ca-cert: ca\n";
        let parse = |extra: &str| ServerConfig::parse(&format!("{tls}{extra}"), path);
        let c = parse("").expect("defaults");
        assert_eq!(c.facts_route.terminus, TerminusKind::Store);
        assert_eq!(c.facts_route.cache, None);
        assert_eq!(c.catalog_route.terminus, TerminusKind::Compiler);
        assert_eq!(c.report_route.terminus, TerminusKind::Store);
        let c = parse(
            "routes:\n  facts: {terminus: puppetdb, cache: yaml, ttl: 3600}\n  catalog: {cache: store, ttl: 5m}\n  report: {terminus: yaml}\npuppetdb-url: https://pdb:8081\n",
        )
        .expect("routes");
        assert_eq!(
            c.facts_route,
            Route {
                terminus: TerminusKind::PuppetDb,
                cache: Some(TerminusKind::Yaml),
                ttl: Some(Duration::from_secs(3600)),
            }
        );
        assert_eq!(c.catalog_route.cache, Some(TerminusKind::Store));
        assert_eq!(c.catalog_route.ttl, Some(Duration::from_secs(300)));
        assert_eq!(c.report_route.terminus, TerminusKind::Yaml);
        let pdb = c.puppetdb.expect("puppetdb");
        assert_eq!(pdb.server_urls, vec!["https://pdb:8081".to_string()]);
        assert_eq!(pdb.cert.as_deref(), Some(Path::new("/etc/ferry/c")));
        let c = parse("routes: {facts: {cache: yaml, ttl: unlimited}}\n").expect("unlimited");
        assert_eq!(c.facts_route.ttl, None);
        for (extra, key, words) in [
            (
                "routes: {facts: {terminus: json}}\n",
                "routes.facts.terminus",
                "'json' is not one of yaml, store, puppetdb",
            ),
            (
                "routes: {facts: {cache: memory}}\n",
                "routes.facts.cache",
                "not one of",
            ),
            (
                "routes: {facts: {cache: store}}\n",
                "routes.facts.cache",
                "the terminus itself",
            ),
            (
                "routes: {facts: {cache: yaml, ttl: -1}}\n",
                "routes.facts.ttl",
                "number of seconds",
            ),
            (
                "routes: {facts: {cache: yaml, ttl: soon}}\n",
                "routes.facts.ttl",
                "number of seconds",
            ),
            (
                "routes: {facts: {cache: yaml, ttl: 0}}\n",
                "routes.facts.ttl",
                "at least 1",
            ),
            (
                "routes: {facts: {ttl: 60}}\n",
                "routes.facts.ttl",
                "needs a cache",
            ),
            (
                "routes: {catalog: {terminus: store}}\n",
                "routes.catalog.terminus",
                "not one of compiler",
            ),
            (
                "routes: {catalog: {cache: yaml}}\n",
                "routes.catalog.cache",
                "not one of store",
            ),
            (
                "routes: {report: {terminus: compiler}}\n",
                "routes.report.terminus",
                "not one of",
            ),
            (
                "routes: {report: {cache: yaml}}\n",
                "routes.report.cache",
                "no cache",
            ),
            (
                "routes: {report: {terminus: puppetdb}}\n",
                "routes.report.terminus",
                "puppetdb-url",
            ),
            (
                "routes: {node: {terminus: ldap}}\n",
                "routes",
                "node: terminus 'ldap'",
            ),
            (
                "routes: {node: {terminus: plain, cache: yaml}}\n",
                "routes",
                "node: takes only a terminus",
            ),
            (
                "routes: {fact: {terminus: yaml}}\n",
                "fact",
                "unknown field",
            ),
            ("puppetdb-url: ftp://x\n", "puppetdb-url", "https://"),
            ("puppetdb-url: []\n", "puppetdb-url", "at least one"),
        ] {
            let e = parse(extra).expect_err(extra).to_string();
            assert!(
                e.contains(&format!("{key}:")) || e.contains(key),
                "{extra}: {e}"
            );
            assert!(e.contains(words), "{extra}: {e}");
        }
    }
}
