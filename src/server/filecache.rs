//! Files fetched by URI from the file server (`file-server-uri`, ACE's
//! puppetserver) land in `<cache-dir>/tasks/<sha256>/<file>`: checked
//! against their sha256 on every use (a file that no longer matches is
//! deleted and fetched again), downloaded once per sha256 at a time,
//! written to a temporary name in the same directory, synced, and renamed
//! only once the checksum matches. A background task removes `<sha256>`
//! directories unused for longer than `file-cache-ttl`.

use std::collections::HashMap;
use std::future::Future;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use rustls::RootCertStore;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use sha2::{Digest, Sha256};

use super::config::{ConfigError, ServerConfig};

/// Why a cached file cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("{0}")]
    BadName(&'static str),
    #[error("the file's contents do not match its sha256")]
    Mismatch,
    #[error("cannot fetch the file: {0}")]
    Fetch(String),
    #[error("file cache: {0}")]
    Io(#[from] std::io::Error),
}

/// The cache of fetched files.
pub struct FileCache {
    root: PathBuf,
    ttl: Duration,
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

impl FileCache {
    /// A cache under `<cache_dir>/tasks`.
    pub fn new(cache_dir: &Path, ttl: Duration) -> FileCache {
        FileCache {
            root: cache_dir.join("tasks"),
            ttl,
            locks: Mutex::new(HashMap::new()),
        }
    }

    /// Where the file with `sha` and `filename` is kept, both checked.
    pub fn path(&self, sha: &str, filename: &str) -> Result<PathBuf, CacheError> {
        if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(CacheError::BadName("sha256 must be 64 hex digits"));
        }
        if filename.is_empty()
            || filename.contains(['/', '\\', '\0'])
            || filename == "."
            || filename == ".."
        {
            return Err(CacheError::BadName("not a valid file name"));
        }
        Ok(self.root.join(sha.to_ascii_lowercase()).join(filename))
    }

    fn lock_for(&self, sha: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut map = self.locks.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(map.entry(sha.to_string()).or_default())
    }

    fn release(&self, sha: &str, lock: Arc<tokio::sync::Mutex<()>>) {
        let mut map = self.locks.lock().unwrap_or_else(PoisonError::into_inner);
        // Only the map's reference and ours: nobody else waits on it.
        if Arc::strong_count(&lock) == 2 {
            map.remove(sha);
        }
    }

    /// The file's bytes: the cached copy if it still matches `sha`, else
    /// what `fetch` gives (once per sha256 at a time), stored if it matches.
    pub async fn get<F, Fut>(
        &self,
        sha: &str,
        filename: &str,
        fetch: F,
    ) -> Result<Vec<u8>, CacheError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Vec<u8>, String>>,
    {
        let path = self.path(sha, filename)?;
        let sha = sha.to_ascii_lowercase();
        let lock = self.lock_for(&sha);
        let result = {
            let _guard = lock.lock().await;
            self.get_locked(&sha, &path, fetch).await
        };
        self.release(&sha, lock);
        result
    }

    async fn get_locked<F, Fut>(
        &self,
        sha: &str,
        path: &Path,
        fetch: F,
    ) -> Result<Vec<u8>, CacheError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Vec<u8>, String>>,
    {
        match std::fs::read(path) {
            Ok(bytes) if sha256_hex(&bytes) == sha => {
                let file = std::fs::File::options().write(true).open(path)?;
                file.set_modified(SystemTime::now())?;
                return Ok(bytes);
            }
            Ok(_) => {
                tracing::warn!(
                    "cached file {} does not match; fetching again",
                    path.display()
                );
                std::fs::remove_file(path)?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e.into()),
        }
        let bytes = fetch().await.map_err(CacheError::Fetch)?;
        let dir = path.parent().unwrap_or(&self.root);
        std::fs::create_dir_all(dir)?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut temp = tempfile::Builder::new()
            .prefix(&format!("{name}.tmp-"))
            .tempfile_in(dir)?;
        temp.write_all(&bytes)?;
        temp.as_file().sync_all()?;
        let written = std::fs::read(temp.path())?;
        if sha256_hex(&written) != sha {
            drop(temp);
            let _ = std::fs::remove_dir(dir);
            return Err(CacheError::Mismatch);
        }
        temp.persist(path).map_err(|e| CacheError::Io(e.error))?;
        Ok(bytes)
    }

    /// Removes `<sha256>` directories whose newest entry is older than the
    /// TTL (skipping any in use); returns how many went.
    pub fn purge(&self) -> std::io::Result<usize> {
        let entries = match std::fs::read_dir(&self.root) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(e),
        };
        let now = SystemTime::now();
        let mut removed = 0;
        for entry in entries {
            let entry = entry?;
            let dir = entry.path();
            if !entry.file_type()?.is_dir() {
                continue;
            }
            let mut newest = entry.metadata()?.modified()?;
            for file in std::fs::read_dir(&dir)? {
                let m = file?.metadata()?.modified()?;
                newest = newest.max(m);
            }
            if now.duration_since(newest).unwrap_or_default() <= self.ttl {
                continue;
            }
            let sha = entry.file_name().to_string_lossy().into_owned();
            let lock = self.lock_for(&sha);
            if let Ok(_guard) = lock.try_lock() {
                std::fs::remove_dir_all(&dir)?;
                removed += 1;
            }
            self.release(&sha, lock);
        }
        Ok(removed)
    }

    /// Purges every min(TTL, 1 hour) for as long as the runtime runs.
    pub fn spawn_purger(self: &Arc<Self>) {
        let cache = Arc::downgrade(self);
        let every = self
            .ttl
            .min(Duration::from_secs(3600))
            .max(Duration::from_secs(1));
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.tick().await;
            loop {
                tick.tick().await;
                let Some(cache) = cache.upgrade() else { return };
                match cache.purge() {
                    Ok(0) => {}
                    Ok(n) => tracing::info!("file cache: purged {n} unused file(s)"),
                    Err(e) => tracing::warn!("file cache: purge failed: {e}"),
                }
            }
        });
    }
}

/// The file server: where it is and how to talk to it (the server's own
/// certificate, the peer checked against `ssl-ca-cert`).
pub struct FileServer {
    host: String,
    port: u16,
    base_path: String,
    tls: tokio_rustls::TlsConnector,
    timeout: Duration,
}

/// Splits `https://host[:port][/base]`.
pub fn parse_uri(uri: &str) -> Result<(String, u16, String), String> {
    let rest = uri
        .strip_prefix("https://")
        .ok_or("must be an https:// URL")?;
    let (authority, base) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
        None => (rest, ""),
    };
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, after) = v6.split_once(']').ok_or("has an unclosed [")?;
        (h, after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if host.is_empty() || host.contains(['@', '?', '#']) || base.contains(['?', '#']) {
        return Err("must be https://HOST[:PORT][/PATH]".into());
    }
    let port = match port {
        Some(p) => p.parse::<u16>().map_err(|_| "has a bad port")?,
        None => 443,
    };
    Ok((host.to_string(), port, base.to_string()))
}

impl FileServer {
    /// From the configuration, if it names a file server.
    pub fn from_config(cfg: &ServerConfig) -> Result<Option<FileServer>, ConfigError> {
        let Some(uri) = &cfg.file_server_uri else {
            return Ok(None);
        };
        let (host, port, base_path) =
            parse_uri(uri).map_err(|m| cfg.error("file-server-uri", m))?;
        let bad = |key: &'static str, what: &str| cfg.error(key, format!("no readable {what}"));
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&cfg.ssl_cert)
            .and_then(|it| it.collect::<Result<Vec<_>, _>>())
            .map_err(|_| bad("ssl-cert", "certificate"))?;
        let key = PrivateKeyDer::from_pem_file(&cfg.ssl_key)
            .map_err(|_| bad("ssl-key", "private key"))?;
        let mut roots = RootCertStore::empty();
        for ca in CertificateDer::pem_file_iter(&cfg.ssl_ca_cert)
            .and_then(|it| it.collect::<Result<Vec<_>, _>>())
            .map_err(|_| bad("ssl-ca-cert", "certificate"))?
        {
            roots
                .add(ca)
                .map_err(|e| cfg.error("ssl-ca-cert", format!("not a usable CA: {e}")))?;
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| cfg.error("ssl-cert", e.to_string()))?
            .with_root_certificates(roots)
            .with_client_auth_cert(certs, key)
            .map_err(|e| cfg.error("ssl-key", format!("does not fit ssl-cert: {e}")))?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Some(FileServer {
            host,
            port,
            base_path,
            tls: tokio_rustls::TlsConnector::from(Arc::new(config)),
            timeout: cfg.request_timeout,
        }))
    }

    /// `GET {file-server-uri}{path}?{params}`: the body of a 200 answer.
    pub async fn get(
        &self,
        path: &str,
        params: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<Vec<u8>, String> {
        match tokio::time::timeout(self.timeout, self.get_inner(path, params)).await {
            Ok(r) => r,
            Err(_) => Err("the file server did not answer in time".into()),
        }
    }

    async fn get_inner(
        &self,
        path: &str,
        params: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<Vec<u8>, String> {
        let mut target = format!("{}{}", self.base_path, path);
        if !params.is_empty() {
            let query: Vec<String> = params
                .iter()
                .map(|(k, v)| {
                    let v = match v {
                        serde_json::Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    format!("{}={}", encode(k), encode(&v))
                })
                .collect();
            target = format!("{target}?{}", query.join("&"));
        }
        let name = ServerName::try_from(self.host.clone())
            .map_err(|_| format!("{} is not a valid server name", self.host))?;
        let tcp = tokio::net::TcpStream::connect((self.host.as_str(), self.port))
            .await
            .map_err(|e| format!("cannot connect: {e}"))?;
        let host_header = if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        };
        let tls = self
            .tls
            .connect(name, tcp)
            .await
            .map_err(|e| format!("TLS: {e}"))?;
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tls))
                .await
                .map_err(|e| format!("HTTP: {e}"))?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("file server connection: {e}");
            }
        });
        let request = hyper::Request::get(target)
            .header(hyper::header::HOST, host_header)
            .header(hyper::header::ACCEPT, "application/octet-stream")
            .header(hyper::header::USER_AGENT, "ferry")
            .body(http_body_util::Empty::<hyper::body::Bytes>::new())
            .map_err(|e| format!("bad request: {e}"))?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| format!("cannot send: {e}"))?;
        if response.status() != hyper::StatusCode::OK {
            return Err(format!(
                "the file server answered {}",
                response.status().as_u16()
            ));
        }
        let body = http_body_util::BodyExt::collect(response.into_body())
            .await
            .map_err(|e| format!("cannot read the answer: {e}"))?;
        Ok(body.to_bytes().to_vec())
    }
}

/// Percent-encodes a query component.
fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sha(b: &[u8]) -> String {
        sha256_hex(b)
    }

    #[tokio::test]
    async fn stores_verifies_and_refetches() {
        let dir = tempfile::tempdir().expect("dir");
        let cache = FileCache::new(dir.path(), Duration::from_secs(60));
        let s = sha(b"abc");
        let got = cache
            .get(&s, "a.sh", || async { Ok(b"abc".to_vec()) })
            .await
            .expect("get");
        assert_eq!(got, b"abc");
        let path = dir.path().join("tasks").join(&s).join("a.sh");
        assert_eq!(std::fs::read(&path).expect("read"), b"abc");
        // Cached: no fetch.
        let got = cache
            .get(&s, "a.sh", || async {
                Err("no fetch expected".to_string())
            })
            .await
            .expect("cached");
        assert_eq!(got, b"abc");
        // Tampered: fetched again.
        std::fs::write(&path, b"evil").expect("tamper");
        let got = cache
            .get(&s, "a.sh", || async { Ok(b"abc".to_vec()) })
            .await
            .expect("refetch");
        assert_eq!(got, b"abc");
        for (sha, name) in [("xyz", "a"), (s.as_str(), ".."), (s.as_str(), "a/b")] {
            assert!(cache.path(sha, name).is_err(), "{sha} {name}");
        }
    }

    #[tokio::test]
    async fn a_mismatch_leaves_nothing_behind() {
        let dir = tempfile::tempdir().expect("dir");
        let cache = FileCache::new(dir.path(), Duration::from_secs(60));
        let s = sha(b"expected");
        let r = cache
            .get(&s, "a.sh", || async { Ok(b"other".to_vec()) })
            .await;
        assert!(matches!(r, Err(CacheError::Mismatch)), "{r:?}");
        assert!(!dir.path().join("tasks").join(&s).exists());
    }

    #[tokio::test]
    async fn purges_after_the_ttl() {
        let dir = tempfile::tempdir().expect("dir");
        let cache = FileCache::new(dir.path(), Duration::from_millis(200));
        let s = sha(b"x");
        cache
            .get(&s, "x", || async { Ok(b"x".to_vec()) })
            .await
            .expect("get");
        assert_eq!(cache.purge().expect("purge"), 0);
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(cache.purge().expect("purge"), 1);
        assert!(!dir.path().join("tasks").join(&s).exists());
    }

    #[tokio::test]
    async fn one_download_per_sha_at_a_time() {
        let dir = tempfile::tempdir().expect("dir");
        let cache = Arc::new(FileCache::new(dir.path(), Duration::from_secs(60)));
        let fetches = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let s = sha(b"slow");
        let mut handles = Vec::new();
        for _ in 0..4 {
            let (cache, fetches, s) = (Arc::clone(&cache), Arc::clone(&fetches), s.clone());
            handles.push(tokio::spawn(async move {
                cache
                    .get(&s, "slow", || async {
                        fetches.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        Ok(b"slow".to_vec())
                    })
                    .await
            }));
        }
        for h in handles {
            assert_eq!(h.await.expect("join").expect("get"), b"slow");
        }
        assert_eq!(fetches.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[test]
    fn uris_and_answers() {
        assert_eq!(
            parse_uri("https://puppet:8140").expect("uri"),
            ("puppet".into(), 8140, String::new())
        );
        assert_eq!(
            parse_uri("https://[::1]/base/").expect("uri"),
            ("::1".into(), 443, "/base".into())
        );
        assert!(parse_uri("http://puppet").is_err());
    }
}
