//! The server's node groups: loaded from the `classifier-groups` file (a
//! JSON array in PE's format) at start, changed through the classifier
//! API. A change is checked as a whole set first (a bad group, an unknown
//! parent or a cycle changes nothing), then written to a temporary file
//! in the same directory, synced, and renamed over the file, and only
//! then made the set classification uses: a crash leaves the old file or
//! the new one, never half of one. File-system work: call it off the
//! async threads.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use serde_json::Value;

use super::group::{GroupError, GroupSet};

/// Why the groups file cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: cannot read: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}:{column}: not JSON: {message}")]
    Json {
        path: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{path}: {source}")]
    Invalid {
        path: String,
        #[source]
        source: GroupError,
    },
    #[error("cannot write the node groups file: {0}")]
    Write(#[source] std::io::Error),
    /// The change is not valid; nothing was stored.
    #[error(transparent)]
    Rejected(GroupError),
}

/// The node groups and the file they are kept in.
pub struct GroupStore {
    path: PathBuf,
    current: RwLock<Arc<GroupSet>>,
    /// One change at a time (read, check, write, swap).
    writing: Mutex<()>,
}

impl GroupStore {
    /// Loads `path`; a file that does not exist yet is only the root group.
    pub fn load(path: &Path) -> Result<GroupStore, StoreError> {
        let shown = path.display().to_string();
        let set = match std::fs::read_to_string(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => GroupSet::new(Vec::new()),
            Err(source) => {
                return Err(StoreError::Read {
                    path: shown,
                    source,
                });
            }
            Ok(text) => {
                let value: Value = serde_json::from_str(&text).map_err(|e| StoreError::Json {
                    path: shown.clone(),
                    line: e.line(),
                    column: e.column(),
                    message: e.to_string(),
                })?;
                GroupSet::from_json(&value)
            }
        }
        .map_err(|source| StoreError::Invalid {
            path: shown,
            source,
        })?;
        Ok(GroupStore {
            path: path.to_path_buf(),
            current: RwLock::new(Arc::new(set)),
            writing: Mutex::new(()),
        })
    }

    /// The groups now.
    pub fn get(&self) -> Arc<GroupSet> {
        Arc::clone(&self.current.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Makes a change: `change` gets the groups now and returns the whole
    /// new list (or why not, which stores nothing); the new set is checked,
    /// written and then used. Returns the set stored and `change`'s value.
    pub fn change<T, E>(
        &self,
        change: impl FnOnce(&GroupSet) -> Result<(Vec<super::group::Group>, T), E>,
    ) -> Result<Result<T, E>, StoreError> {
        let _one = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
        let now = self.get();
        let (groups, out) = match change(&now) {
            Ok(v) => v,
            Err(e) => return Ok(Err(e)),
        };
        let next = GroupSet::new(groups).map_err(StoreError::Rejected)?;
        self.write(&next)?;
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(next);
        Ok(Ok(out))
    }

    fn write(&self, set: &GroupSet) -> Result<(), StoreError> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let text = serde_json::to_string_pretty(&set.to_json())
            .map_err(|e| StoreError::Write(std::io::Error::other(e)))?;
        let mut tmp = tempfile::Builder::new()
            .prefix(".groups-")
            .tempfile_in(dir)
            .map_err(StoreError::Write)?;
        tmp.write_all(text.as_bytes()).map_err(StoreError::Write)?;
        tmp.write_all(b"\n").map_err(StoreError::Write)?;
        tmp.as_file().sync_all().map_err(StoreError::Write)?;
        tmp.persist(&self.path)
            .map_err(|e| StoreError::Write(e.error))?;
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::classifier::group::Group;
    use serde_json::json;

    #[test]
    fn changes_are_checked_whole_and_written_atomically() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("groups.json");
        let store = GroupStore::load(&path).expect("a missing file is the root only");
        assert_eq!(store.get().groups().len(), 1);
        let add = |doc: Value| {
            store.change(|set| {
                let mut groups = set.groups().to_vec();
                groups.push(Group::from_json(&doc, None).map_err(|e| e.field)?);
                Ok::<_, String>((groups, ()))
            })
        };
        add(json!({"id": "a", "name": "A", "classes": {"ntp": {}}}))
            .expect("stored")
            .expect("valid");
        let on_disk: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("written")).expect("JSON");
        assert_eq!(on_disk.as_array().map(Vec::len), Some(2));
        // A cycle is refused whole; the file and the set stay as they were.
        let e = store
            .change(|set| {
                let mut groups = set.groups().to_vec();
                for g in groups.iter_mut().filter(|g| g.id == "a") {
                    g.parent = "b".into();
                }
                groups.push(
                    Group::from_json(&json!({"id": "b", "name": "B", "parent": "a"}), None)
                        .map_err(|e| e.field)?,
                );
                Ok::<_, String>((groups, ()))
            })
            .expect_err("a cycle");
        assert!(
            matches!(&e, StoreError::Rejected(g) if g.field == "parent"),
            "{e}"
        );
        assert_eq!(store.get().groups().len(), 2);
        let again: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("kept")).expect("JSON");
        assert_eq!(again, on_disk);
        // A bad field in the change itself stores nothing either.
        assert_eq!(
            add(json!({"id": "c", "name": "C", "environment": "a/../b"})).expect("no write"),
            Err("environment".to_string())
        );
        let reloaded = GroupStore::load(&path).expect("reload");
        assert!(reloaded.get().get("a").is_some());
        assert!(reloaded.get().get("c").is_none());
        let leftovers = std::fs::read_dir(dir.path()).expect("dir").count();
        assert_eq!(leftovers, 1, "no temporary files left");
    }

    #[test]
    fn a_bad_file_names_its_place() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("groups.json");
        std::fs::write(&path, "[{\"id\": \"a\",\n \"name\": }]").expect("write");
        let e = GroupStore::load(&path).err().expect("bad JSON").to_string();
        assert!(e.contains("groups.json:2:"), "{e}");
        std::fs::write(
            &path,
            r#"[{"id": "a", "name": "A", "rule": ["=", "name"]}]"#,
        )
        .expect("write");
        let e = GroupStore::load(&path).err().expect("bad rule").to_string();
        assert!(e.contains("group 'A': rule:"), "{e}");
    }
}
