//! The one place the compiler touches the file system: reading manifests,
//! templates and data files, and locating modules on the modulepath.

use std::io;
use std::path::{Path, PathBuf};

use crate::lang::modulepath::Modulepath;

/// Read access to manifests, templates and data. Tests or embedders can
/// substitute an in-memory implementation.
pub trait Loader: Sync {
    fn read(&self, path: &Path) -> io::Result<String>;
    fn is_file(&self, path: &Path) -> bool;
    fn is_dir(&self, path: &Path) -> bool;
    /// Entries of a directory (full paths), sorted.
    fn list(&self, path: &Path) -> io::Result<Vec<PathBuf>>;
}

/// The real file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct FsLoader;

/// Refuse to read files bigger than this (keeps hostile input bounded).
const MAX_FILE: u64 = 32 * 1024 * 1024;

impl Loader for FsLoader {
    fn read(&self, path: &Path) -> io::Result<String> {
        let meta = std::fs::metadata(path)?;
        if meta.len() > MAX_FILE {
            return Err(io::Error::other("file too large"));
        }
        std::fs::read_to_string(path)
    }
    fn is_file(&self, path: &Path) -> bool {
        path.is_file()
    }
    fn is_dir(&self, path: &Path) -> bool {
        path.is_dir()
    }
    fn list(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(path)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        v.sort();
        Ok(v)
    }
}

/// Directory of module `name` on the modulepath, if any.
pub fn module_dir(loader: &dyn Loader, modulepath: &Modulepath, name: &str) -> Option<PathBuf> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    modulepath.candidates(name).find(|p| loader.is_dir(p))
}

/// File in a module subdirectory, for `module/rest` references such as
/// `template('mod/x.erb')` -> `<mod>/templates/x.erb`.
pub fn module_file(
    loader: &dyn Loader,
    modulepath: &Modulepath,
    subdir: &str,
    reference: &str,
) -> Option<PathBuf> {
    let (module, rest) = reference.split_once('/')?;
    if rest.split('/').any(|s| s == "..") {
        return None;
    }
    let p = module_dir(loader, modulepath, module)?
        .join(subdir)
        .join(rest);
    loader.is_file(&p).then_some(p)
}
