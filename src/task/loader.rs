//! Finding tasks. A task `mod::name` is the file `<module>/tasks/<name>.<ext>`
//! in the first modulepath directory that has the module, with optional
//! metadata in `<name>.json`; `mod` alone means `mod::init`. The built-in
//! module `ferry` is the project's `tasks/` folder, embedded in the binary.
//! Names follow Bolt's rules, so no name can reach outside its module.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use include_dir::{Dir, include_dir};
use sha2::{Digest, Sha256};

use super::TaskError;
use super::metadata::Metadata;

static BUILTIN: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/tasks");

/// The name of the built-in module.
pub const BUILTIN_MODULE: &str = "ferry";

/// A file a task needs on the target, identified by its content.
#[derive(Clone, Debug)]
pub struct TaskFile {
    /// Where it goes under the install dir: `<module>/tasks/<file>` or
    /// `<module>/files/...`.
    pub relative: String,
    pub sha256: String,
    pub bytes: std::sync::Arc<[u8]>,
}

/// A task found on the modulepath, with its metadata.
#[derive(Clone, Debug)]
pub struct Task {
    pub name: String,
    pub module: String,
    pub metadata: Metadata,
    /// Executable files by file name (`init.sh`), one per implementation.
    pub executables: BTreeMap<String, TaskFile>,
    /// Where the metadata came from, for messages.
    pub source: String,
}

/// Reads tasks from a modulepath and the built-in module.
#[derive(Clone, Debug)]
pub struct Loader {
    pub modulepath: Vec<PathBuf>,
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

/// The bytes of a file in the built-in module's `tasks/` folder, by its
/// name there (`info.sh`), if there is one.
pub fn builtin_file(name: &str) -> Option<&'static [u8]> {
    BUILTIN.get_file(name).map(|f| f.contents())
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn file(relative: String, bytes: Vec<u8>) -> TaskFile {
    TaskFile {
        sha256: sha256_hex(&bytes),
        bytes: bytes.into(),
        relative,
    }
}

impl Loader {
    pub fn new(modulepath: Vec<PathBuf>) -> Loader {
        Loader { modulepath }
    }

    fn module_dir(&self, module: &str) -> Option<PathBuf> {
        self.modulepath
            .iter()
            .map(|dir| dir.join(module))
            .find(|d| d.join("tasks").is_dir())
    }

    /// Finds and reads a task.
    pub fn load(&self, name: &str) -> Result<Task, TaskError> {
        let (module, task) = split_name(name)?;
        let full = format!("{module}::{task}");
        if let Some(dir) = self.module_dir(&module) {
            return self.load_from_dir(&dir, &module, &task, &full);
        }
        if module == BUILTIN_MODULE {
            return load_builtin(&task, &full);
        }
        Err(TaskError::NotFound(full, self.modulepath_text()))
    }

    fn modulepath_text(&self) -> String {
        let dirs: Vec<String> = self
            .modulepath
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        if dirs.is_empty() {
            "empty".into()
        } else {
            dirs.join(":")
        }
    }

    fn load_from_dir(
        &self,
        dir: &Path,
        module: &str,
        task: &str,
        full: &str,
    ) -> Result<Task, TaskError> {
        let tasks = dir.join("tasks");
        let meta_path = tasks.join(format!("{task}.json"));
        let metadata = if meta_path.is_file() {
            let text = std::fs::read_to_string(&meta_path)
                .map_err(|e| TaskError::Io(format!("{}: {e}", meta_path.display())))?;
            Metadata::parse(&text, &meta_path.display().to_string())?
        } else {
            Metadata::default()
        };
        let entries = std::fs::read_dir(&tasks)
            .map_err(|e| TaskError::Io(format!("{}: {e}", tasks.display())))?;
        let mut executables = BTreeMap::new();
        for entry in entries.flatten() {
            let file_name = entry.file_name().to_string_lossy().into_owned();
            let stem = file_name.split('.').next().unwrap_or_default();
            if stem != task
                || file_name.ends_with(".json")
                || file_name.ends_with(".md")
                || !entry.path().is_file()
            {
                continue;
            }
            let bytes = std::fs::read(entry.path())
                .map_err(|e| TaskError::Io(format!("{}: {e}", entry.path().display())))?;
            executables.insert(
                file_name.clone(),
                file(format!("{module}/tasks/{file_name}"), bytes),
            );
        }
        if executables.is_empty() {
            return Err(TaskError::NotFound(
                full.to_string(),
                self.modulepath_text(),
            ));
        }
        Ok(Task {
            name: full.to_string(),
            module: module.to_string(),
            metadata,
            executables,
            source: meta_path.display().to_string(),
        })
    }

    /// The files a task lists under `files` (module-relative: `mod/files/x`
    /// or a folder `mod/lib/`), read from the modulepath.
    pub fn support_files(
        &self,
        task: &Task,
        listed: &[String],
    ) -> Result<Vec<TaskFile>, TaskError> {
        let mut out = Vec::new();
        for entry in listed {
            let (module, rest) = entry.split_once('/').ok_or_else(|| TaskError::Metadata {
                path: task.source.clone(),
                message: format!("files entry '{entry}' must be <module>/<path>"),
            })?;
            let escapes =
                rest.split('/').any(|seg| seg == ".." || seg == ".") || rest.starts_with('/');
            if !valid_segment(module) || escapes || rest.is_empty() {
                return Err(TaskError::Metadata {
                    path: task.source.clone(),
                    message: format!("files entry '{entry}' must stay inside its module"),
                });
            }
            if module == BUILTIN_MODULE && self.module_dir(module).is_none() {
                collect_builtin(entry, rest, &mut out)?;
                continue;
            }
            let dir = self
                .modulepath
                .iter()
                .map(|d| d.join(module))
                .find(|d| d.is_dir())
                .ok_or_else(|| {
                    TaskError::NotFound(
                        format!("module {module} (for files entry '{entry}')"),
                        self.modulepath_text(),
                    )
                })?;
            collect_path(&dir.join(rest), entry.trim_end_matches('/'), &mut out)?;
        }
        Ok(out)
    }

    /// Every task on the modulepath and the built-in ones, by name.
    pub fn list(&self) -> Vec<Task> {
        let mut names = std::collections::BTreeSet::new();
        for (module, file_name) in module_entries(&self.modulepath, "tasks") {
            let stem = file_name.split('.').next().unwrap_or_default().to_string();
            names.insert(if stem == "init" {
                module.clone()
            } else {
                format!("{module}::{stem}")
            });
        }
        for f in BUILTIN.files() {
            let stem = f
                .path()
                .to_string_lossy()
                .split('.')
                .next()
                .unwrap_or_default()
                .to_string();
            names.insert(format!("{BUILTIN_MODULE}::{stem}"));
        }
        names
            .into_iter()
            .filter_map(|n| self.load(&n).ok())
            .filter(|t| !t.metadata.private)
            .collect()
    }
}

/// Every `(module, file name)` in the `<module>/<folder>/` directories of
/// the modulepath (`tasks`, `plans`): the discovery behind listing tasks
/// and plans. Unreadable directories are skipped.
pub fn module_entries(modulepath: &[PathBuf], folder: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for dir in modulepath {
        let Ok(modules) = std::fs::read_dir(dir) else {
            continue;
        };
        for m in modules.flatten() {
            let module = m.file_name().to_string_lossy().into_owned();
            let Ok(entries) = std::fs::read_dir(m.path().join(folder)) else {
                continue;
            };
            for e in entries.flatten() {
                out.push((module.clone(), e.file_name().to_string_lossy().into_owned()));
            }
        }
    }
    out
}

fn collect_path(path: &Path, relative: &str, out: &mut Vec<TaskFile>) -> Result<(), TaskError> {
    let err = |e: std::io::Error| TaskError::Io(format!("{}: {e}", path.display()));
    if path.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(path).map_err(err)?.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name().to_string_lossy().into_owned();
            collect_path(&e.path(), &format!("{relative}/{name}"), out)?;
        }
    } else {
        out.push(file(
            relative.to_string(),
            std::fs::read(path).map_err(err)?,
        ));
    }
    Ok(())
}

fn collect_builtin(entry: &str, rest: &str, out: &mut Vec<TaskFile>) -> Result<(), TaskError> {
    let trimmed = rest.trim_end_matches('/');
    let missing = || TaskError::NotFound(format!("built-in file '{entry}'"), "built in".into());
    // Built-in files live at the top of tasks/ (module `ferry`'s tasks dir).
    let inner = trimmed.strip_prefix("tasks/").unwrap_or(trimmed);
    if let Some(f) = BUILTIN.get_file(inner) {
        out.push(file(
            format!("{BUILTIN_MODULE}/{trimmed}"),
            f.contents().to_vec(),
        ));
        return Ok(());
    }
    let dir = BUILTIN.get_dir(inner).ok_or_else(missing)?;
    for f in dir.files() {
        let rel = f.path().to_string_lossy().into_owned();
        out.push(file(
            format!("{BUILTIN_MODULE}/tasks/{rel}"),
            f.contents().to_vec(),
        ));
    }
    Ok(())
}

fn load_builtin(task: &str, full: &str) -> Result<Task, TaskError> {
    let meta_name = format!("{task}.json");
    let metadata = match BUILTIN.get_file(&meta_name) {
        Some(f) => Metadata::parse(
            &String::from_utf8_lossy(f.contents()),
            &format!("<built-in>/{meta_name}"),
        )?,
        None => Metadata::default(),
    };
    let mut executables = BTreeMap::new();
    for f in BUILTIN.files() {
        let file_name = f.path().to_string_lossy().into_owned();
        let stem = file_name.split('.').next().unwrap_or_default();
        if stem == task && !file_name.ends_with(".json") && !file_name.ends_with(".md") {
            executables.insert(
                file_name.clone(),
                file(
                    format!("{BUILTIN_MODULE}/tasks/{file_name}"),
                    f.contents().to_vec(),
                ),
            );
        }
    }
    if executables.is_empty() {
        return Err(TaskError::NotFound(full.to_string(), "built in".into()));
    }
    Ok(Task {
        name: full.to_string(),
        module: BUILTIN_MODULE.to_string(),
        metadata,
        executables,
        source: format!("<built-in>/{meta_name}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
