//! The SQLite store's files are private to the server's user: the database
//! is created `0600` before SQLite opens it (so it is never readable by
//! others, whatever the umask), and SQLite gives its `-wal`, `-shm` and
//! `-journal` companions the database file's mode. A database (or
//! companion) left with a wider mode by an older server is narrowed to
//! `0600` at open.

use std::fs::OpenOptions;
use std::io::ErrorKind;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The mode of the database file and its companions.
pub const FILE_MODE: u32 = 0o600;

/// The file a `sqlite:` URL names, or `None` for an in-memory database.
pub fn sqlite_path(url: &str) -> Option<PathBuf> {
    let rest = url.strip_prefix("sqlite:")?;
    let rest = rest.strip_prefix("//").unwrap_or(rest);
    let path = rest.split('?').next().unwrap_or(rest);
    if path.is_empty() || path == ":memory:" {
        return None;
    }
    Some(PathBuf::from(path))
}

/// Creates the database file `0600` when it does not exist yet, and
/// narrows it and any companion file to `0600` when they are wider.
pub fn prepare(path: &Path) -> std::io::Result<()> {
    match OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(FILE_MODE)
        .open(path)
    {
        Ok(_) => {}
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let mut names = vec![path.to_path_buf()];
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        names.push(PathBuf::from(name));
    }
    for name in names {
        let meta = match std::fs::symlink_metadata(&name) {
            Ok(meta) => meta,
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        if meta.is_file() && meta.permissions().mode() & 0o777 != FILE_MODE {
            std::fs::set_permissions(&name, std::fs::Permissions::from_mode(FILE_MODE))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_their_file() {
        assert_eq!(
            sqlite_path("sqlite:///var/lib/ferry.db?mode=rwc"),
            Some(PathBuf::from("/var/lib/ferry.db"))
        );
        assert_eq!(sqlite_path("sqlite:rel.db"), Some(PathBuf::from("rel.db")));
        assert_eq!(sqlite_path("sqlite::memory:"), None);
        assert_eq!(sqlite_path("postgres://x/y"), None);
    }

    #[test]
    fn files_are_private_from_creation_and_narrowed_later() {
        let dir = tempfile::tempdir().expect("dir");
        let db = dir.path().join("new.db");
        prepare(&db).expect("prepare");
        let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode(&db), 0o600);
        let old = dir.path().join("old.db");
        std::fs::write(&old, "").expect("write");
        std::fs::write(dir.path().join("old.db-wal"), "").expect("write");
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        prepare(&old).expect("prepare");
        assert_eq!(mode(&old), 0o600);
        assert_eq!(mode(&dir.path().join("old.db-wal")), 0o600);
    }
}
