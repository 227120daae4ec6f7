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

use sha2::{Digest, Sha256};

use super::client::FetchError;

/// Why a cached file cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("{0}")]
    BadName(&'static str),
    #[error("the file's contents do not match its sha256")]
    Mismatch,
    #[error("cannot fetch the file: {0}")]
    Fetch(#[from] FetchError),
    #[error("file cache: {0}")]
    Io(#[from] std::io::Error),
}

/// Runs file-system work on tokio's blocking pool, off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, CacheError> + Send + 'static,
) -> Result<T, CacheError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| CacheError::Io(std::io::Error::other(e)))?
}

/// The cached copy at `path` when it still matches `sha` (its time is
/// touched, for the purge); a copy that no longer matches is deleted.
fn cached(sha: &str, path: &Path) -> Result<Option<Vec<u8>>, CacheError> {
    match std::fs::read(path) {
        Ok(bytes) if sha256_hex(&bytes) == sha => {
            let file = std::fs::File::options().write(true).open(path)?;
            file.set_modified(SystemTime::now())?;
            Ok(Some(bytes))
        }
        Ok(_) => {
            tracing::warn!(
                "cached file {} does not match; fetching again",
                path.display()
            );
            std::fs::remove_file(path)?;
            Ok(None)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Keeps fetched `bytes` at `path` (in `dir`) when they match `sha`:
/// written to a temporary name, synced, read back and checked, renamed.
fn store(sha: &str, dir: &Path, path: &Path, bytes: Vec<u8>) -> Result<Vec<u8>, CacheError> {
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
        Fut: Future<Output = Result<Vec<u8>, FetchError>>,
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
        Fut: Future<Output = Result<Vec<u8>, FetchError>>,
    {
        let (sha, path) = (sha.to_string(), path.to_path_buf());
        let cached = {
            let (sha, path) = (sha.clone(), path.clone());
            blocking(move || cached(&sha, &path)).await?
        };
        if let Some(bytes) = cached {
            return Ok(bytes);
        }
        let bytes = fetch().await.map_err(CacheError::Fetch)?;
        let dir = path.parent().unwrap_or(&self.root).to_path_buf();
        blocking(move || store(&sha, &dir, &path, bytes)).await
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

    /// Purges every min(TTL, 1 hour) for as long as the runtime runs, on
    /// the blocking pool.
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
                match tokio::task::spawn_blocking(move || cache.purge()).await {
                    Ok(Ok(0)) => {}
                    Ok(Ok(n)) => tracing::info!("file cache: purged {n} unused file(s)"),
                    Ok(Err(e)) => tracing::warn!("file cache: purge failed: {e}"),
                    Err(e) => tracing::warn!("file cache: purge stopped: {e}"),
                }
            }
        });
    }
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
                Err(FetchError::Request("no fetch expected".into()))
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
}
