//! A PuppetDB client: queries sent to `/pdb/query/v4` as Bolt sends them
//! (`POST`, `{"query": ...}`, the query as PQL text or AST passed through
//! unchanged), and commands (`replace_facts`, `store_report`) submitted to
//! `/pdb/cmd/v1` as Puppet's PuppetDB termini submit them, over HTTPS checked against `cacert` only (no system roots),
//! with the client certificate `cert`/`key` or, when there is none, the
//! token read from the file `token` in `X-Authentication`. Each server URL
//! in `server_urls` is tried in turn when one cannot be reached or answers
//! 5xx (Bolt's failover); a 400 is the query's own error, PuppetDB's
//! message passed through. Connecting is bounded by `connect_timeout`,
//! the whole answer by `read_timeout`, and its size by [`MAX_ANSWER_BYTES`].
//!
//! The client is synchronous to its callers (the inventory plugin, plan
//! functions on the plan's own thread, the CLI): each request runs hyper's
//! client (hyper-util, hyper-rustls, the server's file client's crates) on
//! a small runtime of its own.

use std::collections::BTreeMap;
use std::error::Error as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::Value;

/// The largest answer taken from PuppetDB.
pub const MAX_ANSWER_BYTES: usize = 256 << 20;

/// Bolt's `puppetdb` settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub server_urls: Vec<String>,
    pub cacert: Option<PathBuf>,
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    /// A file holding the token (PE RBAC), sent when there is no `cert`.
    pub token: Option<PathBuf>,
    pub connect_timeout: Duration,
    pub read_timeout: Duration,
}

/// Bolt's default for both timeouts (its HTTP client's): 60 seconds.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

impl Config {
    pub fn new(server_urls: Vec<String>) -> Config {
        Config {
            server_urls,
            cacert: None,
            cert: None,
            key: None,
            token: None,
            connect_timeout: DEFAULT_TIMEOUT,
            read_timeout: DEFAULT_TIMEOUT,
        }
    }
}

/// Why PuppetDB gave no answer. The messages are Bolt's where Bolt has
/// one; the kind of all of them is Bolt's `bolt/puppetdb-error`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PuppetDbError {
    #[error("PuppetDB configuration: {0}")]
    Config(String),
    /// PuppetDB refused the query (400): its message.
    #[error("Failed to query PuppetDB: {0}")]
    Query(String),
    #[error("Failed to connect to all PuppetDB server_urls: {urls} (last: {last})")]
    Unreachable { urls: String, last: String },
    #[error("Unable to parse response as JSON: {0}")]
    BadAnswer(String),
    #[error("PuppetDB instance '{0}' has not been configured, unable to connect")]
    UnknownInstance(String),
    /// PuppetDB refused a command (4xx): its message.
    #[error("PuppetDB refused the {command} command: {message}")]
    Command { command: String, message: String },
}

/// Checks a PuppetDB URL (`https://host:port/prefix`); why not, naming it.
pub fn check_url(url: &str) -> Result<(), String> {
    parse_url(url).map(|_| ())
}

/// A URL split: `https://host:port/prefix`.
#[derive(Debug, Clone)]
struct Url {
    tls: bool,
    host: String,
    port: u16,
    prefix: String,
}

fn parse_url(url: &str) -> Result<Url, String> {
    let (tls, rest) = if let Some(r) = url.strip_prefix("https://") {
        (true, r)
    } else if let Some(r) = url.strip_prefix("http://") {
        (false, r)
    } else {
        return Err(format!(
            "server_urls: '{url}' is not an https:// or http:// URL"
        ));
    };
    let (authority, prefix) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
        None => (rest, ""),
    };
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, after) = v6
            .split_once(']')
            .ok_or_else(|| format!("server_urls: '{url}' has an unclosed ["))?;
        (h, after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if host.is_empty() || host.contains(['@', '?', '#', '/']) {
        return Err(format!("server_urls: '{url}' has no usable host"));
    }
    let port = match port {
        Some(p) => p
            .parse()
            .map_err(|_| format!("server_urls: '{url}' has a bad port"))?,
        None => 8081,
    };
    Ok(Url {
        tls,
        host: host.to_string(),
        port,
        prefix: prefix.to_string(),
    })
}

/// A configured PuppetDB, ready to query.
pub struct PuppetDb {
    urls: Vec<(String, Url)>,
    tls: Option<Arc<rustls::ClientConfig>>,
    token: Option<String>,
    connect_timeout: Duration,
    read_timeout: Duration,
}

impl std::fmt::Debug for PuppetDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PuppetDb")
            .field(
                "urls",
                &self.urls.iter().map(|(u, _)| u).collect::<Vec<_>>(),
            )
            .field("token", &self.token.as_ref().map(|_| "[redacted]"))
            .finish()
    }
}

fn certs(path: &PathBuf, key: &str) -> Result<Vec<CertificateDer<'static>>, PuppetDbError> {
    let found: Vec<_> = CertificateDer::pem_file_iter(path)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| {
            PuppetDbError::Config(format!(
                "{key}: no readable certificate in {}: {e}",
                path.display()
            ))
        })?;
    if found.is_empty() {
        return Err(PuppetDbError::Config(format!(
            "{key}: no certificate in {}",
            path.display()
        )));
    }
    Ok(found)
}

impl PuppetDb {
    /// Reads the certificates, key and token the configuration names.
    pub fn new(config: &Config) -> Result<PuppetDb, PuppetDbError> {
        if config.server_urls.is_empty() {
            return Err(PuppetDbError::Config("server_urls is empty".into()));
        }
        let urls = config
            .server_urls
            .iter()
            .map(|u| parse_url(u).map(|p| (u.clone(), p)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(PuppetDbError::Config)?;
        let tls = if urls.iter().any(|(_, u)| u.tls) {
            let cacert = config.cacert.as_ref().ok_or_else(|| {
                PuppetDbError::Config("cacert is needed for https:// server_urls".into())
            })?;
            let mut roots = rustls::RootCertStore::empty();
            for ca in certs(cacert, "cacert")? {
                roots
                    .add(ca)
                    .map_err(|e| PuppetDbError::Config(format!("cacert: not a usable CA: {e}")))?;
            }
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let builder = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .map_err(|e| PuppetDbError::Config(e.to_string()))?
                .with_root_certificates(roots);
            let tls = match (&config.cert, &config.key) {
                (Some(cert), Some(key)) => {
                    let chain = certs(cert, "cert")?;
                    let key = PrivateKeyDer::from_pem_file(key).map_err(|_| {
                        PuppetDbError::Config(format!(
                            "key: no readable private key in {}",
                            key.display()
                        ))
                    })?;
                    builder
                        .with_client_auth_cert(chain, key)
                        .map_err(|e| PuppetDbError::Config(format!("key does not fit cert: {e}")))?
                }
                (None, None) => builder.with_no_client_auth(),
                _ => {
                    return Err(PuppetDbError::Config(
                        "cert and key must be given together".into(),
                    ));
                }
            };
            Some(Arc::new(tls))
        } else {
            None
        };
        let token = match (&config.token, &config.cert) {
            (Some(path), None) => {
                let text = std::fs::read_to_string(path).map_err(|e| {
                    PuppetDbError::Config(format!("token: cannot read {}: {e}", path.display()))
                })?;
                Some(text.trim().to_string()).filter(|t| !t.is_empty())
            }
            _ => None,
        };
        if token.as_ref().is_some_and(|t| t.contains(['\r', '\n'])) {
            return Err(PuppetDbError::Config(
                "token: the file holds more than one line".into(),
            ));
        }
        Ok(PuppetDb {
            urls,
            tls,
            token,
            connect_timeout: config.connect_timeout,
            read_timeout: config.read_timeout,
        })
    }

    /// Sends a query (PQL text or AST) to `/pdb/query/v4` and returns its
    /// rows.
    pub fn query(&self, query: &Value) -> Result<Vec<Value>, PuppetDbError> {
        self.query_at("", query)
    }

    /// Sends a query to `/pdb/query/v4/<entity>` (`entity` empty: the root).
    pub fn query_at(&self, entity: &str, query: &Value) -> Result<Vec<Value>, PuppetDbError> {
        let path = if entity.is_empty() {
            "/pdb/query/v4".to_string()
        } else {
            format!("/pdb/query/v4/{entity}")
        };
        let body = serde_json::json!({ "query": query }).to_string();
        let answer = self.post(&path, body.as_bytes())?;
        match serde_json::from_slice::<Value>(&answer) {
            Ok(Value::Array(rows)) => Ok(rows),
            _ => Err(PuppetDbError::BadAnswer(
                String::from_utf8_lossy(&answer).chars().take(500).collect(),
            )),
        }
    }

    /// The facts of each of `certnames` PuppetDB knows (Bolt's
    /// `facts_for_node`: the `inventory` entity).
    pub fn facts_for(
        &self,
        certnames: &[String],
    ) -> Result<serde_json::Map<String, Value>, PuppetDbError> {
        if certnames.is_empty() {
            return Ok(serde_json::Map::new());
        }
        let mut or = vec![Value::from("or")];
        or.extend(
            certnames
                .iter()
                .map(|c| serde_json::json!(["=", "certname", c])),
        );
        let rows = self.query_at("inventory", &Value::Array(or))?;
        Ok(rows
            .into_iter()
            .filter_map(|r| {
                let name = r.get("certname")?.as_str()?.to_string();
                Some((name, r.get("facts").cloned().unwrap_or(Value::Null)))
            })
            .collect())
    }

    /// Submits a command to `/pdb/cmd/v1` (`command`, `version` and
    /// `certname` in the query string, `payload` the body). PuppetDB
    /// queues it and answers at once; it is stored a moment later.
    pub fn submit(
        &self,
        command: &str,
        version: u32,
        certname: &str,
        payload: &Value,
    ) -> Result<(), PuppetDbError> {
        let enc = |s: &str| {
            percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
        };
        let path = format!(
            "/pdb/cmd/v1?command={}&version={version}&certname={}",
            enc(command),
            enc(certname)
        );
        match self.post(&path, payload.to_string().as_bytes()) {
            Ok(_) => Ok(()),
            Err(PuppetDbError::Query(message)) => Err(PuppetDbError::Command {
                command: command.to_string(),
                message,
            }),
            Err(e) => Err(e),
        }
    }

    /// `POST` to each server URL in turn until one answers.
    fn post(&self, path: &str, body: &[u8]) -> Result<Vec<u8>, PuppetDbError> {
        let mut last = String::new();
        for (text, url) in &self.urls {
            match self.post_one(url, path, body) {
                Ok((200, answer)) => return Ok(answer),
                Ok((400..=499, answer)) => {
                    return Err(PuppetDbError::Query(
                        String::from_utf8_lossy(&answer).trim().to_string(),
                    ));
                }
                Ok((status, answer)) => {
                    last = format!(
                        "{text} answered {status}: {}",
                        String::from_utf8_lossy(&answer)
                            .trim()
                            .chars()
                            .take(300)
                            .collect::<String>()
                    );
                }
                Err(e) => last = format!("{text}: {e}"),
            }
            tracing::warn!("PuppetDB request failed: {last}");
        }
        Err(PuppetDbError::Unreachable {
            urls: self
                .urls
                .iter()
                .map(|(t, _)| t.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            last,
        })
    }

    /// One `POST` to one server URL, through hyper's client on a runtime
    /// of its own (on a thread of its own, so that callers on a runtime's
    /// thread may call it too): the status and the body.
    fn post_one(&self, url: &Url, path: &str, body: &[u8]) -> Result<(u16, Vec<u8>), String> {
        let scheme = if url.tls { "https" } else { "http" };
        let host = if url.host.contains(':') {
            format!("[{}]", url.host)
        } else {
            url.host.clone()
        };
        let uri = format!("{scheme}://{host}:{}{}{path}", url.port, url.prefix);
        let mut request = hyper::Request::post(&uri)
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .header(hyper::header::ACCEPT, "application/json");
        if let Some(t) = &self.token {
            request = request.header("X-Authentication", t.as_str());
        }
        let request = request
            .body(http_body_util::Full::new(
                hyper::body::Bytes::copy_from_slice(body),
            ))
            .map_err(|e| format!("bad request for {uri}: {e}"))?;
        let mut http = hyper_util::client::legacy::connect::HttpConnector::new();
        http.set_connect_timeout(Some(self.connect_timeout));
        http.enforce_http(false);
        let builder = hyper_rustls::HttpsConnectorBuilder::new();
        let connector = match (&self.tls, url.tls) {
            (Some(tls), true) => builder.with_tls_config((**tls).clone()).https_only(),
            // No TLS configuration is made for plain http:// URLs; this
            // one only serves the http:// scheme.
            _ => builder
                .with_tls_config(
                    rustls::ClientConfig::builder_with_provider(Arc::new(
                        rustls::crypto::ring::default_provider(),
                    ))
                    .with_safe_default_protocol_versions()
                    .map_err(|e| e.to_string())?
                    .with_root_certificates(rustls::RootCertStore::empty())
                    .with_no_client_auth(),
                )
                .https_or_http(),
        }
        .enable_http1()
        .wrap_connector(http);
        let client =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .build(connector);
        let (connect_timeout, read_timeout) = (self.connect_timeout, self.read_timeout);
        let exchange = async move {
            let response = client.request(request).await.map_err(|e| {
                let chain = error_chain(&e);
                if chain.contains("timed out") || chain.contains("timeout") {
                    format!(
                        "connecting timed out after {}s (connect_timeout)",
                        connect_timeout.as_secs_f64()
                    )
                } else if e.is_connect() {
                    // hyper's text leads with its own wording.
                    let cause = e.source().map(error_chain).unwrap_or(chain);
                    format!("cannot connect: {cause}")
                } else {
                    chain
                }
            })?;
            let status = response.status().as_u16();
            let body = http_body_util::BodyExt::collect(http_body_util::Limited::new(
                response.into_body(),
                MAX_ANSWER_BYTES,
            ))
            .await
            .map_err(|e| {
                if e.is::<http_body_util::LengthLimitError>() {
                    format!("the answer is larger than {} MiB", MAX_ANSWER_BYTES >> 20)
                } else {
                    e.to_string()
                }
            })?;
            Ok::<_, String>((status, body.to_bytes().to_vec()))
        };
        let timed_out = format!(
            "no answer within {}s (read_timeout)",
            read_timeout.as_secs_f64()
        );
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .map_err(|e| format!("cannot start a runtime: {e}"))?;
                    runtime.block_on(async {
                        tokio::time::timeout(connect_timeout + read_timeout, exchange)
                            .await
                            .unwrap_or(Err(timed_out))
                    })
                })
                .join()
                .unwrap_or_else(|_| Err("the PuppetDB request's thread failed".into()))
        })
    }
}

/// An error with its causes, `a: b: c` (hyper's own message is terse).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// The PuppetDBs this process uses: set once, by the command line from the
/// Bolt project's `puppetdb` (the default one) and `puppetdb-instances`
/// (named ones), before anything queries.
static CONFIG: OnceLock<Instances> = OnceLock::new();
/// Each instance's client, made at its first query (`None`: the default).
static CLIENTS: OnceLock<Mutex<Clients>> = OnceLock::new();

type Clients = BTreeMap<Option<String>, Result<Arc<PuppetDb>, PuppetDbError>>;

/// The default PuppetDB, if any, and the named ones.
#[derive(Debug, Clone, Default)]
pub struct Instances {
    pub default: Option<Config>,
    pub named: BTreeMap<String, Config>,
}

/// Sets the PuppetDB every query of this process goes to (the first call
/// wins; the certificates are read at the first query).
pub fn install(config: Config) {
    install_instances(Instances {
        default: Some(config),
        named: BTreeMap::new(),
    });
}

/// Sets the default and the named PuppetDBs (the first call wins).
pub fn install_instances(instances: Instances) {
    let _ = CONFIG.set(instances);
}

fn client(name: Option<&str>, config: &Config) -> Result<Arc<PuppetDb>, PuppetDbError> {
    let clients = CLIENTS.get_or_init(|| Mutex::new(BTreeMap::new()));
    let mut clients = clients.lock().unwrap_or_else(|p| p.into_inner());
    clients
        .entry(name.map(str::to_string))
        .or_insert_with(|| PuppetDb::new(config).map(Arc::new))
        .clone()
}

/// The configured PuppetDB, if one is: `None` means queries run over the
/// stored facts.
pub fn configured() -> Option<Result<Arc<PuppetDb>, PuppetDbError>> {
    let config = CONFIG.get()?.default.as_ref()?;
    Some(client(None, config))
}

/// The PuppetDB a query names (`None`: the default one, if configured).
/// A name the project does not configure is Bolt's error.
pub fn named(name: Option<&str>) -> Option<Result<Arc<PuppetDb>, PuppetDbError>> {
    let Some(name) = name else {
        return configured();
    };
    match CONFIG.get().and_then(|c| c.named.get(name)) {
        Some(config) => Some(client(Some(name), config)),
        None => Some(Err(PuppetDbError::UnknownInstance(name.to_string()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_with_puppetdbs_default_port() {
        let u = parse_url("https://pdb.example.com").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.tls),
            ("pdb.example.com", 8081, true)
        );
        let u = parse_url("http://[::1]:8080/prefix/").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.prefix.as_str()),
            ("::1", 8080, "/prefix")
        );
        assert!(parse_url("ftp://x").is_err());
        assert!(parse_url("https://x:99999").is_err());
    }

    use std::io::{Read, Write};

    /// A one-request HTTP server answering `answer`; gives back what it read.
    fn fake(answer: &'static str) -> (u16, std::thread::JoinHandle<String>) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let h = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            s.set_read_timeout(Some(Duration::from_millis(500)))
                .unwrap();
            let mut got = Vec::new();
            let mut buf = [0u8; 4096];
            while let Ok(n) = s.read(&mut buf) {
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&got);
                if text.contains("\r\n\r\n") && text.ends_with('}') {
                    break;
                }
            }
            s.write_all(answer.as_bytes()).unwrap();
            String::from_utf8_lossy(&got).into_owned()
        });
        (port, h)
    }

    #[test]
    fn a_query_is_posted_with_the_token_and_fails_over_to_the_next_url() {
        let dir = tempfile::tempdir().unwrap();
        let token = dir.path().join("token");
        std::fs::write(&token, "tok-123\n").unwrap();
        let (down, down_h) = fake("HTTP/1.1 503 Unavailable\r\nContent-Length: 4\r\n\r\nbusy");
        let (up, up_h) = fake(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n16\r\n[{\"certname\": \"web1\"}]\r\n0\r\n\r\n",
        );
        let mut c = Config::new(vec![
            format!("http://127.0.0.1:{down}"),
            format!("http://127.0.0.1:{up}/prefix"),
        ]);
        c.token = Some(token);
        let db = PuppetDb::new(&c).unwrap();
        let rows = db.query(&Value::from("nodes[certname] {}")).unwrap();
        assert_eq!(rows, vec![serde_json::json!({"certname": "web1"})]);
        let first = down_h.join().unwrap();
        assert!(
            first.starts_with("POST /pdb/query/v4 HTTP/1.1\r\n"),
            "{first}"
        );
        let second = up_h.join().unwrap();
        assert!(
            second.starts_with("POST /prefix/pdb/query/v4 HTTP/1.1\r\n"),
            "{second}"
        );
        assert!(
            second
                .to_ascii_lowercase()
                .contains("\r\nx-authentication: tok-123\r\n"),
            "{second}"
        );
        assert!(
            second.ends_with(r#"{"query":"nodes[certname] {}"}"#),
            "{second}"
        );
    }

    #[test]
    fn a_refused_query_is_puppetdbs_message_and_no_failover() {
        let (port, h) =
            fake("HTTP/1.1 400 Bad Request\r\nContent-Length: 25\r\n\r\nPQL parse error at line 1");
        let c = Config::new(vec![
            format!("http://127.0.0.1:{port}"),
            "http://127.0.0.1:1".into(),
        ]);
        let err = PuppetDb::new(&c)
            .unwrap()
            .query(&Value::from("x"))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Failed to query PuppetDB: PQL parse error at line 1"
        );
        h.join().unwrap();
    }

    #[test]
    fn a_command_is_posted_to_the_command_api_and_a_refusal_names_it() {
        let (port, h) = fake("HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\n{\"uuid\": \"1\"}");
        let db = PuppetDb::new(&Config::new(vec![format!("http://127.0.0.1:{port}")])).unwrap();
        db.submit(
            "replace_facts",
            5,
            "web 1",
            &serde_json::json!({"certname": "web 1"}),
        )
        .unwrap();
        let got = h.join().unwrap();
        assert!(
            got.starts_with(
                "POST /pdb/cmd/v1?command=replace%5Ffacts&version=5&certname=web%201 HTTP/1.1\r\n"
            ),
            "{got}"
        );
        assert!(got.ends_with(r#"{"certname":"web 1"}"#), "{got}");
        let (port, h) = fake("HTTP/1.1 400 Bad Request\r\nContent-Length: 11\r\n\r\nbad payload");
        let db = PuppetDb::new(&Config::new(vec![format!("http://127.0.0.1:{port}")])).unwrap();
        let err = db
            .submit("store_report", 8, "web1", &serde_json::json!({}))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "PuppetDB refused the store_report command: bad payload"
        );
        h.join().unwrap();
    }

    #[test]
    fn the_token_never_shows_in_debug() {
        let dir = tempfile::tempdir().unwrap();
        let token = dir.path().join("token");
        std::fs::write(&token, "s3cret-token\n").unwrap();
        let mut c = Config::new(vec!["http://127.0.0.1:1".into()]);
        c.token = Some(token);
        let db = PuppetDb::new(&c).unwrap();
        assert!(!format!("{db:?}").contains("s3cret"));
    }
}
