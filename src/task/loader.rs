//! Finding tasks. A task `mod::name` is found in the first modulepath
//! directory that has the module, with optional metadata in
//! `<module>/tasks/<name>.json`; `mod` alone means `mod::init`, and is named
//! `mod` as Bolt names it. Its executables are, as Puppet's task loader has
//! them, the files its metadata's `implementations` name (any file in the
//! module's `tasks` folder), or else the one file `<name>.<ext>` there.
//! Files listed under `files` are `<module>/<mount>/<path>` with a mount of
//! `files`, `lib`, `scripts` or `tasks`, from any module on the modulepath;
//! a folder ends in `/`. The built-in module `ferry` is the project's
//! `tasks/` folder, embedded in the binary. Names follow Bolt's rules, so
//! no name can reach outside its module.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use include_dir::{Dir, include_dir};
use sha2::{Digest, Sha256};

use super::TaskError;
use super::metadata::Metadata;
use crate::lang::modulepath::Modulepath;

static BUILTIN: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/tasks");

/// The name of the built-in module.
pub const BUILTIN_MODULE: &str = "ferry";

/// The module folders a `files` entry may name (Puppet's mount points).
pub const MOUNTS: [&str; 4] = ["files", "lib", "scripts", "tasks"];

/// A file a task needs on the target, identified by its content.
#[derive(Clone, Debug)]
pub struct TaskFile {
    /// Where it goes under the install dir: `<module>/tasks/<file>` or
    /// `<module>/files/...`.
    pub relative: String,
    pub sha256: String,
    pub bytes: std::sync::Arc<[u8]>,
    /// Where it was read from (`None` for the built-in module's files).
    pub origin: Option<PathBuf>,
}

/// A task found on the modulepath, with its metadata.
#[derive(Clone, Debug)]
pub struct Task {
    /// Bolt's name: `mod::task`, or `mod` for `mod::init`.
    pub name: String,
    pub module: String,
    pub metadata: Metadata,
    /// Executable files by file name (`init.sh`), one per implementation.
    pub executables: BTreeMap<String, TaskFile>,
    /// Where the metadata came from, for messages.
    pub source: String,
    /// The module's folder (`None` for the built-in module).
    pub module_dir: Option<PathBuf>,
}

/// Reads tasks from a modulepath and the built-in module.
#[derive(Clone, Debug)]
pub struct Loader {
    pub modulepath: Modulepath,
}

/// Whether a module or task name follows Bolt's rules.
pub fn valid_segment(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Splits `mod::task` (or `mod`, meaning `mod::init`) after checking it.
pub fn split_name(name: &str) -> Result<(String, String), TaskError> {
    let (module, task) = match name.split_once("::") {
        Some((m, t)) => (m, t),
        None => (name, "init"),
    };
    if !valid_segment(module) || !valid_segment(task) {
        return Err(TaskError::BadName(name.to_string()));
    }
    Ok((module.to_string(), task.to_string()))
}

/// Bolt's name of task `task` of `module`: `module` alone for `init`.
pub fn bolt_name(module: &str, task: &str) -> String {
    if task == "init" {
        module.to_string()
    } else {
        format!("{module}::{task}")
    }
}

/// The bytes of a file in the built-in module's `tasks/` folder, by its
/// name there (`info.sh`), if there is one.
pub fn builtin_file(name: &str) -> Option<&'static [u8]> {
    BUILTIN.get_file(name).map(|f| f.contents())
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn file(relative: String, bytes: Vec<u8>, origin: Option<PathBuf>) -> TaskFile {
    TaskFile {
        sha256: sha256_hex(&bytes),
        bytes: bytes.into(),
        relative,
        origin,
    }
}

/// The task a file in a `tasks` folder belongs to when no metadata names
/// it: its name up to the first dot (`init.sh` → `init`); metadata and
/// documentation are no task's executable.
fn file_stem(file_name: &str) -> Option<&str> {
    if file_name.ends_with(".json") || file_name.ends_with(".md") || file_name.starts_with('.') {
        return None;
    }
    file_name.split('.').next()
}

/// A task being loaded: its module, its name in the module, Bolt's name
/// for it and where its metadata is.
#[derive(Clone, Copy)]
struct Naming<'a> {
    module: &'a str,
    task: &'a str,
    full: &'a str,
    source: &'a str,
}

/// Picks a task's executables from the file names of its module's `tasks`
/// folder: the ones its implementations name, else the one file named
/// after the task. `read` gives a file's contents and origin by name.
fn executables(
    names: &[String],
    meta: &Metadata,
    at: &Naming<'_>,
    not_found: impl Fn() -> TaskError,
    read: impl Fn(&str) -> Result<(Vec<u8>, Option<PathBuf>), TaskError>,
) -> Result<BTreeMap<String, TaskFile>, TaskError> {
    let Naming {
        module,
        task,
        full,
        source,
    } = *at;
    let mut out = BTreeMap::new();
    let chosen: Vec<&str> = if meta.declares_implementations() {
        if meta.implementations.is_empty() {
            return Err(TaskError::Metadata {
                path: source.to_string(),
                message: format!("task {full} lists no implementations"),
            });
        }
        let mut chosen = Vec::new();
        for i in &meta.implementations {
            let present = !i.name.contains('/') && names.contains(&i.name);
            if !present {
                return Err(TaskError::Metadata {
                    path: source.to_string(),
                    message: format!(
                        "cannot find implementation {} for task {full} in the module's tasks folder",
                        i.name
                    ),
                });
            }
            chosen.push(i.name.as_str());
        }
        chosen
    } else {
        let found: Vec<&str> = names
            .iter()
            .map(String::as_str)
            .filter(|n| file_stem(n) == Some(task))
            .collect();
        match found.len() {
            0 => return Err(not_found()),
            1 => found,
            _ => {
                return Err(TaskError::Metadata {
                    path: source.to_string(),
                    message: format!(
                        "several executables were found for task {full} ({}); define 'implementations' in its metadata to choose between them",
                        found.join(", ")
                    ),
                });
            }
        }
    };
    for name in chosen {
        let (bytes, origin) = read(name)?;
        out.insert(
            name.to_string(),
            file(format!("{module}/tasks/{name}"), bytes, origin),
        );
    }
    Ok(out)
}

impl Loader {
    pub fn new(modulepath: impl Into<Modulepath>) -> Loader {
        Loader {
            modulepath: modulepath.into(),
        }
    }

    fn module_dir(&self, module: &str) -> Option<PathBuf> {
        self.modulepath
            .candidates(module)
            .find(|d| d.join("tasks").is_dir())
    }

    /// Finds and reads a task.
    pub fn load(&self, name: &str) -> Result<Task, TaskError> {
        let (module, task) = split_name(name)?;
        if let Some(dir) = self.module_dir(&module) {
            return self.load_from_dir(&dir, &module, &task);
        }
        if module == BUILTIN_MODULE {
            return load_builtin(&task);
        }
        Err(TaskError::NotFound(
            bolt_name(&module, &task),
            self.modulepath_text(),
        ))
    }

    fn modulepath_text(&self) -> String {
        if self.modulepath.is_empty() {
            "empty".into()
        } else {
            self.modulepath.to_string()
        }
    }

    fn load_from_dir(&self, dir: &Path, module: &str, task: &str) -> Result<Task, TaskError> {
        let full = bolt_name(module, task);
        let tasks = dir.join("tasks");
        let meta_path = tasks.join(format!("{task}.json"));
        let source = meta_path.display().to_string();
        let metadata = if meta_path.is_file() {
            let text = std::fs::read_to_string(&meta_path)
                .map_err(|e| TaskError::Io(format!("{}: {e}", meta_path.display())))?;
            Metadata::parse(&text, &source)?
        } else {
            Metadata::default()
        };
        let entries = std::fs::read_dir(&tasks)
            .map_err(|e| TaskError::Io(format!("{}: {e}", tasks.display())))?;
        let mut names: Vec<String> = entries
            .flatten()
            .filter(|e| e.path().is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let at = Naming {
            module,
            task,
            full: &full,
            source: &source,
        };
        let executables = executables(
            &names,
            &metadata,
            &at,
            || TaskError::NotFound(full.clone(), self.modulepath_text()),
            |name| {
                let path = tasks.join(name);
                let bytes = std::fs::read(&path)
                    .map_err(|e| TaskError::Io(format!("{}: {e}", path.display())))?;
                Ok((bytes, Some(path)))
            },
        )?;
        Ok(Task {
            name: full.clone(),
            module: module.to_string(),
            metadata,
            executables,
            source,
            module_dir: Some(dir.to_path_buf()),
        })
    }

    /// The files the metadata's top-level `files` lists, which every
    /// implementation gets.
    pub fn shared_files(&self, task: &Task) -> Result<Vec<TaskFile>, TaskError> {
        self.support_files(task, &task.metadata.files)
    }

    /// Each implementation's own `files` (in the metadata's order), or why
    /// they cannot be read: an implementation that a target never chooses
    /// does not stop the others.
    pub fn implementation_files(&self, task: &Task) -> Vec<Result<Vec<TaskFile>, TaskError>> {
        task.metadata
            .implementations
            .iter()
            .map(|i| self.support_files(task, &i.files))
            .collect()
    }

    /// The files `listed` names (`<module>/<mount>/<path>`, a folder ending
    /// in `/`), read from the modulepath, as Puppet's task loader checks
    /// them.
    pub fn support_files(
        &self,
        task: &Task,
        listed: &[String],
    ) -> Result<Vec<TaskFile>, TaskError> {
        let mut out: Vec<TaskFile> = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for entry in listed {
            if !seen.insert(entry.as_str()) {
                continue;
            }
            let bad = |message: String| TaskError::Metadata {
                path: task.source.clone(),
                message,
            };
            let mut parts = entry.splitn(3, '/');
            let module = parts.next().unwrap_or_default();
            let mount = parts.next().unwrap_or_default();
            let rest = parts.next().unwrap_or_default();
            if !valid_segment(module) {
                return Err(bad(format!(
                    "files entry '{entry}' must start with a module name (<module>/<mount>/<path>)"
                )));
            }
            let builtin = module == BUILTIN_MODULE && self.module_dir(module).is_none();
            let dir = if builtin {
                None
            } else {
                Some(
                    self.modulepath
                        .candidates(module)
                        .find(|d| d.is_dir())
                        .ok_or_else(|| {
                            bad(format!(
                                "could not find module {module} containing task file {rest} (files entry '{entry}'; modulepath: {})",
                                self.modulepath_text()
                            ))
                        })?,
                )
            };
            if !MOUNTS.contains(&mount) {
                return Err(bad(format!(
                    "files entry '{entry}': files must be in one of the module folders {} (Puppet's mount points)",
                    MOUNTS.join(", ")
                )));
            }
            let escapes = rest.split('/').any(|seg| seg == ".." || seg == ".")
                || rest.starts_with('/')
                || rest.contains("//");
            if escapes {
                return Err(bad(format!(
                    "files entry '{entry}' must stay inside its module (no relative paths)"
                )));
            }
            let before = out.len();
            match dir {
                None => collect_builtin(entry, mount, rest, &mut out).map_err(bad)?,
                Some(dir) => collect_entry(&dir, entry, mount, rest, &mut out).map_err(bad)?,
            }
            // A file listed twice (a folder and a file inside it) goes once.
            let mut i = before;
            while i < out.len() {
                if out[..before].iter().any(|f| f.relative == out[i].relative) {
                    out.remove(i);
                } else {
                    i += 1;
                }
            }
        }
        Ok(out)
    }

    /// Every task on the modulepath and the built-in ones, by name; tasks
    /// that cannot be read are left out (with a warning), private ones too.
    pub fn list(&self) -> Vec<Task> {
        self.names()
            .into_iter()
            .filter_map(|n| match self.load(&n) {
                Ok(t) => Some(t),
                Err(e) => {
                    tracing::warn!("task {n} is not listed: {e}");
                    None
                }
            })
            .filter(|t| !t.metadata.private)
            .collect()
    }

    /// The names of every task on the modulepath and built in: one per
    /// metadata file or executable's name.
    fn names(&self) -> std::collections::BTreeSet<String> {
        let mut names = std::collections::BTreeSet::new();
        for (module, file_name) in module_entries(&self.modulepath, "tasks") {
            if !valid_segment(&module) {
                continue;
            }
            let stem = match file_name.strip_suffix(".json") {
                Some(stem) => stem,
                None => match file_stem(&file_name) {
                    Some(stem) => stem,
                    None => continue,
                },
            };
            if valid_segment(stem) {
                names.insert(bolt_name(&module, stem));
            }
        }
        for f in BUILTIN.files() {
            let file_name = f.path().to_string_lossy();
            if let Some(stem) = file_stem(&file_name).filter(|s| valid_segment(s)) {
                names.insert(format!("{BUILTIN_MODULE}::{stem}"));
            }
        }
        names
    }
}

/// Every `(module, file name)` in the `<module>/<folder>/` directories of
/// the modulepath (`tasks`, `plans`), the project's first: the discovery
/// behind listing tasks and plans. Unreadable directories are skipped.
pub fn module_entries(modulepath: &Modulepath, folder: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (module, dir) in modulepath.modules() {
        let Ok(entries) = std::fs::read_dir(dir.join(folder)) else {
            continue;
        };
        for e in entries.flatten() {
            out.push((module.clone(), e.file_name().to_string_lossy().into_owned()));
        }
    }
    out
}

/// Reads one `files` entry of module folder `dir`: a file, or every file
/// under a folder (an entry ending in `/`), as Puppet's loader does.
fn collect_entry(
    dir: &Path,
    entry: &str,
    mount: &str,
    rest: &str,
    out: &mut Vec<TaskFile>,
) -> Result<(), String> {
    let path = dir.join(mount).join(rest);
    let shown = format!("{}/{mount}/{rest}", dir.display());
    // "x.rb/" names no file: a file listed as a folder is not on disk.
    let meta = std::fs::metadata(&path)
        .ok()
        .filter(|m| !entry.ends_with('/') || m.is_dir())
        .ok_or_else(|| format!("could not find {shown} on disk (files entry '{entry}')"))?;
    if meta.is_dir() {
        if !entry.ends_with('/') {
            return Err(format!(
                "folders listed in task metadata must end in '/': {entry}"
            ));
        }
        return collect_dir(&path, entry.trim_end_matches('/'), out);
    }
    let bytes = std::fs::read(&path).map_err(|e| format!("{shown}: {e}"))?;
    out.push(file(entry.to_string(), bytes, Some(path)));
    Ok(())
}

/// Every file under `path` (hidden ones left out, as Ruby's glob does),
/// named `<relative>/<sub path>`, in name order.
fn collect_dir(path: &Path, relative: &str, out: &mut Vec<TaskFile>) -> Result<(), String> {
    let err = |e: std::io::Error| format!("{}: {e}", path.display());
    let mut entries: Vec<_> = std::fs::read_dir(path).map_err(err)?.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let sub = e.path();
        let rel = if relative.is_empty() {
            name
        } else {
            format!("{relative}/{name}")
        };
        if sub.is_dir() {
            collect_dir(&sub, &rel, out)?;
        } else if sub.is_file() {
            let bytes = std::fs::read(&sub).map_err(|e| format!("{}: {e}", sub.display()))?;
            out.push(file(rel, bytes, Some(sub)));
        }
    }
    Ok(())
}

/// A `files` entry of the built-in module: its only folder is `tasks`.
fn collect_builtin(
    entry: &str,
    mount: &str,
    rest: &str,
    out: &mut Vec<TaskFile>,
) -> Result<(), String> {
    let missing = || format!("could not find built-in file '{entry}'");
    if mount != "tasks" {
        return Err(missing());
    }
    let inner = rest.trim_end_matches('/');
    if !entry.ends_with('/') {
        let f = BUILTIN.get_file(inner).ok_or_else(missing)?;
        out.push(file(entry.to_string(), f.contents().to_vec(), None));
        return Ok(());
    }
    let dir = if inner.is_empty() {
        &BUILTIN
    } else {
        BUILTIN.get_dir(inner).ok_or_else(missing)?
    };
    let mut files: Vec<_> = dir.files().collect();
    files.sort_by_key(|f| f.path());
    for f in files {
        let rel = f.path().to_string_lossy().into_owned();
        out.push(file(
            format!("{BUILTIN_MODULE}/tasks/{rel}"),
            f.contents().to_vec(),
            None,
        ));
    }
    Ok(())
}

fn load_builtin(task: &str) -> Result<Task, TaskError> {
    let full = format!("{BUILTIN_MODULE}::{task}");
    let meta_name = format!("{task}.json");
    let source = format!("<built-in>/{meta_name}");
    let metadata = match BUILTIN.get_file(&meta_name) {
        Some(f) => Metadata::parse(&String::from_utf8_lossy(f.contents()), &source)?,
        None => Metadata::default(),
    };
    let mut names: Vec<String> = BUILTIN
        .files()
        .map(|f| f.path().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let at = Naming {
        module: BUILTIN_MODULE,
        task,
        full: &full,
        source: &source,
    };
    let executables = executables(
        &names,
        &metadata,
        &at,
        || TaskError::NotFound(full.clone(), "built in".into()),
        |name| {
            BUILTIN
                .get_file(name)
                .map(|f| (f.contents().to_vec(), None))
                .ok_or_else(|| TaskError::NotFound(full.clone(), "built in".into()))
        },
    )?;
    Ok(Task {
        name: full.clone(),
        module: BUILTIN_MODULE.to_string(),
        metadata,
        executables,
        source,
        module_dir: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixture modules of tests/tasks/modules.
    fn fixtures() -> Loader {
        Loader::new(vec![
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tasks/modules"),
        ])
    }

    #[test]
    fn implementations_name_executables_by_file_name() {
        let l = fixtures();
        let t = l.load("impls").unwrap();
        assert_eq!(t.name, "impls");
        let names: Vec<&str> = t.executables.keys().map(String::as_str).collect();
        assert_eq!(names, ["agent.rb", "posix.sh", "windows.ps1"]);
        assert_eq!(t.executables["posix.sh"].relative, "impls/tasks/posix.sh");
        assert_eq!(l.load("impls::init").unwrap().name, "impls");
        let e = l.load("borrower::missing_impl").unwrap_err().to_string();
        assert!(
            e.contains("cannot find implementation not_there.sh for task borrower::missing_impl"),
            "{e}"
        );
        // Listed by Bolt's name, from the metadata file alone.
        let listed: Vec<String> = l.list().into_iter().map(|t| t.name).collect();
        assert!(listed.contains(&"impls".to_string()), "{listed:?}");
        assert!(!listed.iter().any(|n| n.ends_with("::init")), "{listed:?}");
    }

    #[test]
    fn files_come_from_any_module_through_puppets_mount_points() {
        let l = fixtures();
        let t = l.load("borrower").unwrap();
        let shared: Vec<String> = l
            .shared_files(&t)
            .unwrap()
            .into_iter()
            .map(|f| f.relative)
            .collect();
        assert_eq!(shared, ["lender/files/common.sh"]);
        let per = l.implementation_files(&t);
        // The agent implementation's helper module is absent: only it fails.
        let e = per[0].as_ref().unwrap_err().to_string();
        assert!(
            e.contains("could not find module absent_helper containing task file helper.rb"),
            "{e}"
        );
        let own: Vec<&str> = per[1]
            .as_ref()
            .unwrap()
            .iter()
            .map(|f| f.relative.as_str())
            .collect();
        assert_eq!(
            own,
            [
                "lender/lib/helpers/one.sh",
                "lender/lib/helpers/two.sh",
                "lender/files/sub/nested.txt",
                "borrower/tasks/borrow.sh"
            ]
        );
        for (task, want) in [
            (
                "bad_mount",
                "one of the module folders files, lib, scripts, tasks",
            ),
            ("folder_as_file", "must end in '/': lender/lib/helpers"),
            ("file_as_folder", "lender/files/common.sh/ on disk"),
            ("missing_file", "lender/files/nope.sh on disk"),
            (
                "missing_module",
                "could not find module nowhere containing task file x.sh",
            ),
        ] {
            let t = l.load(&format!("borrower::{task}")).unwrap();
            let e = l.shared_files(&t).unwrap_err().to_string();
            assert!(e.contains(want), "{task}: {e}");
        }
    }

    #[test]
    fn names_follow_bolts_rules() {
        assert_eq!(
            split_name("mymod").unwrap(),
            ("mymod".into(), "init".into())
        );
        assert_eq!(
            split_name("my_mod::do_it2").unwrap(),
            ("my_mod".into(), "do_it2".into())
        );
        for bad in [
            "",
            "Mod::x",
            "m::../../etc",
            "m::a/b",
            "m::",
            "::x",
            "1mod::x",
            "m::x.sh",
            "m::x::y",
        ] {
            assert!(split_name(bad).is_err(), "{bad}");
        }
    }
}
