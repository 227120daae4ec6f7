//! A bolt-server request's files (its known_hosts copies, script, upload
//! tree, laid-out task) live in a scratch directory of its own,
//! `<cache-dir>/requests/req-XXXX`, removed when the request ends. Both
//! directories are made `0700` as they are created (never widened and
//! narrowed later), so no other local user can reach anything inside;
//! known_hosts copies and scripts are created `0600`/`0700`. Upload trees
//! and task files keep the modes they are delivered with (the SSH
//! transport gives remote files their local file's mode), out of reach all
//! the same below the private scratch directory.

use std::fs::{DirBuilder, OpenOptions, Permissions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use crate::server::http::errors::ApiError;

/// The mode of scratch directories.
pub const DIR_MODE: u32 = 0o700;
/// The mode of private scratch files (known_hosts copies).
pub const FILE_MODE: u32 = 0o600;

/// `dir` and any missing parent, created with `mode`; an existing `dir`
/// this user owns that is wider than `mode` is narrowed.
pub fn dir_all(dir: &Path, mode: u32) -> std::io::Result<()> {
    DirBuilder::new().recursive(true).mode(mode).create(dir)?;
    let meta = std::fs::metadata(dir)?;
    if meta.permissions().mode() & 0o777 & !mode != 0 {
        std::fs::set_permissions(dir, Permissions::from_mode(mode))?;
    }
    Ok(())
}

/// A request's private directory. Dropped, it is removed on the blocking
/// pool (at once, outside a runtime).
pub struct RequestDir(Option<tempfile::TempDir>);

impl RequestDir {
    pub fn path(&self) -> &Path {
        self.0.as_ref().map_or(Path::new(""), |d| d.path())
    }
}

impl Drop for RequestDir {
    fn drop(&mut self) {
        let Some(dir) = self.0.take() else { return };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn_blocking(move || drop(dir))),
            Err(_) => drop(dir),
        }
    }
}

/// A new private directory for one request, made on the blocking pool.
pub async fn request_dir(cache_dir: &Path) -> Result<RequestDir, ApiError> {
    let dir = cache_dir.join("requests");
    super::blocking(move || {
        dir_all(&dir, DIR_MODE).map_err(ApiError::internal)?;
        tempfile::Builder::new()
            .prefix("req-")
            .permissions(Permissions::from_mode(DIR_MODE))
            .tempdir_in(&dir)
            .map(|d| RequestDir(Some(d)))
            .map_err(ApiError::internal)
    })
    .await
}

/// Writes a new file created with `mode` (at most: the umask may narrow
/// it, then it is set exactly), with its missing parents made with
/// `dir_mode`.
pub fn write(path: &Path, bytes: &[u8], mode: u32, dir_mode: u32) -> Result<(), ApiError> {
    if let Some(parent) = path.parent() {
        DirBuilder::new()
            .recursive(true)
            .mode(dir_mode)
            .create(parent)
            .map_err(ApiError::internal)?;
    }
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
        .map_err(ApiError::internal)?;
    file.write_all(bytes).map_err(ApiError::internal)?;
    file.set_permissions(Permissions::from_mode(mode))
        .map_err(ApiError::internal)
}

/// A private file: `0600`, in a private directory.
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<(), ApiError> {
    write(path, bytes, FILE_MODE, DIR_MODE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).expect("meta").permissions().mode() & 0o777
    }

    #[tokio::test]
    async fn request_dirs_and_private_files_are_private() {
        let cache = tempfile::tempdir().expect("dir");
        let dir = request_dir(cache.path()).await.expect("request dir");
        assert_eq!(mode(&cache.path().join("requests")), 0o700);
        assert_eq!(mode(dir.path()), 0o700);
        let kh = dir.path().join("known_hosts.0");
        write_private(&kh, b"x").expect("write");
        assert_eq!(mode(&kh), 0o600);
        let up = dir.path().join("upload/sub/a.txt");
        write(&up, b"a", 0o644, 0o755).expect("write");
        assert_eq!(mode(&up), 0o644);
        assert!(write_private(&kh, b"again").is_err(), "files are new");
    }
}
