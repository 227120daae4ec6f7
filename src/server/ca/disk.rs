//! How the CA directory is written: every file is replaced atomically (a
//! temporary file in the same directory, synced, then renamed over the
//! old one, so a reader sees the old or the new file and never half of
//! one), with the mode it must have from the start (the CA key `0600`);
//! and every change to the directory (a CSR, a signature, the serial, the
//! CRL) is made under one exclusive lock (`flock` on `.lock`), so `ferry
//! serve` signing a CSR and `ferry ca sign` never hand out one serial
//! twice.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::Path;

use super::CaError;

/// Mode of the CA key and the server's key.
pub const KEY_MODE: u32 = 0o600;
/// Mode of certificates, the CRL and other public files.
pub const PUBLIC_MODE: u32 = 0o644;
/// Mode of the directories the CA makes.
pub const DIR_MODE: u32 = 0o750;

pub(super) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CaError + '_ {
    move |source| CaError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Replaces `path` with `bytes`, created with `mode`.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> Result<(), CaError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // tempfile creates the file 0600; it is widened (if at all) before
    // anything is written.
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}.tmp-"))
        .tempfile_in(dir)
        .map_err(io(path))?;
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(mode))
        .map_err(io(path))?;
    tmp.write_all(bytes).map_err(io(path))?;
    tmp.as_file().sync_all().map_err(io(path))?;
    tmp.persist(path).map_err(|e| CaError::Io {
        path: path.display().to_string(),
        source: e.error,
    })?;
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Makes a directory (and its parents) with [`DIR_MODE`].
pub fn make_dir(path: &Path) -> Result<(), CaError> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(path)
        .map_err(io(path))
}

/// A file's bytes, `None` when it does not exist.
pub fn read_optional(path: &Path) -> Result<Option<Vec<u8>>, CaError> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(path)(e)),
    }
}

/// Removes a file; `false` when there was none.
pub fn remove(path: &Path) -> Result<bool, CaError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io(path)(e)),
    }
}

/// The CA directory's exclusive lock, held until dropped (closing the
/// file releases it).
pub struct Lock(#[allow(dead_code)] File);

impl Lock {
    /// Waits for the lock on `<dir>/.lock`.
    pub fn take(dir: &Path) -> Result<Lock, CaError> {
        let path = dir.join(".lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io(&path))?;
        file.lock().map_err(io(&path))?;
        Ok(Lock(file))
    }
}
