//! The modulepath: where a module is found by its name. It is a list of
//! directories, each holding modules as subdirectories (`<dir>/<name>`),
//! searched in order; the first directory that has a module of a name
//! wins. A Bolt project with a name is one more module, rooted at the
//! project directory itself (its `plans/`, `tasks/`, `files/`,
//! `functions/`... sit beside `bolt-project.yaml`), and it comes before
//! every directory, as Bolt loads it: "projects take precedence over
//! installed modules of the same name". Every lookup by module name goes
//! through [`Modulepath::candidates`], so the project is never forgotten.

use std::fmt;
use std::path::{Path, PathBuf};

/// Directories of modules, and the project that is a module itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Modulepath {
    /// The Bolt project loaded as a module: its name and its directory
    /// (boxed: a modulepath travels inside other values, mostly without one).
    project: Option<Box<(String, PathBuf)>>,
    dirs: Vec<PathBuf>,
}

impl Modulepath {
    /// Directories only.
    pub fn new(dirs: Vec<PathBuf>) -> Modulepath {
        Modulepath {
            project: None,
            dirs,
        }
    }

    /// The same, with the Bolt project `name` at `root` loaded as a module
    /// ahead of the directories.
    pub fn with_project(mut self, name: &str, root: PathBuf) -> Modulepath {
        self.project = Some(Box::new((name.to_string(), root)));
        self
    }

    /// The directories, in order (without the project).
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// Adds a directory at the end, unless it is there already.
    pub fn push_dir(&mut self, dir: PathBuf) {
        if !self.dirs.contains(&dir) {
            self.dirs.push(dir);
        }
    }

    /// The project loaded as a module, if any: (name, directory).
    pub fn project(&self) -> Option<(&str, &Path)> {
        self.project.as_ref().map(|p| (p.0.as_str(), p.1.as_path()))
    }

    /// Nothing to search.
    pub fn is_empty(&self) -> bool {
        self.project.is_none() && self.dirs.is_empty()
    }

    /// Where module `name` would be, in precedence order: the project when
    /// it has that name, then `<dir>/<name>` for each directory. Whether
    /// each exists is the caller's question (a task needs `tasks/`, a
    /// class its manifest).
    pub fn candidates<'a>(&'a self, name: &'a str) -> impl Iterator<Item = PathBuf> + 'a {
        let project = self
            .project
            .iter()
            .filter(move |p| p.0 == name)
            .map(|p| p.1.clone());
        project.chain(self.dirs.iter().map(move |d| d.join(name)))
    }

    /// Every module with its directory, in precedence order (a name may
    /// appear more than once; the first is the one lookups find). Module
    /// directories are listed in name order within each modulepath entry;
    /// unreadable entries are skipped.
    pub fn modules(&self) -> Vec<(String, PathBuf)> {
        let mut out: Vec<(String, PathBuf)> = self.project.iter().map(|p| (**p).clone()).collect();
        for dir in &self.dirs {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            let mut found: Vec<(String, PathBuf)> = entries
                .flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_str()?.to_string();
                    Some((name, e.path()))
                })
                .collect();
            found.sort();
            out.extend(found);
        }
        out
    }

    /// The module a file belongs to, when it lies under one of the
    /// modules (`<dir>/<module>/...`, or the project's directory), with the
    /// rest of its path inside the module.
    pub fn module_of<'p>(&self, file: &'p Path) -> Option<(String, &'p Path)> {
        for dir in &self.dirs {
            if let Ok(rest) = file.strip_prefix(dir) {
                let mut comps = rest.components();
                let module = comps.next()?.as_os_str().to_str()?.to_string();
                return Some((module, comps.as_path()));
            }
        }
        let (name, root) = self.project.as_deref()?;
        let rest = file.strip_prefix(root).ok()?;
        Some((name.clone(), rest))
    }
}

impl From<Vec<PathBuf>> for Modulepath {
    fn from(dirs: Vec<PathBuf>) -> Modulepath {
        Modulepath::new(dirs)
    }
}

/// The directories joined with `:`, as Puppet prints a modulepath, after
/// the project's directory when there is one.
impl fmt::Display for Modulepath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let project = self.project.iter().map(|p| &p.1);
        for p in project.chain(self.dirs.iter()) {
            if !first {
                f.write_str(":")?;
            }
            first = false;
            write!(f, "{}", p.display())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_project_comes_first_and_only_for_its_own_name() {
        let mp = Modulepath::new(vec!["/m1".into(), "/m2".into()])
            .with_project("proj", "/work/proj".into());
        let found: Vec<PathBuf> = mp.candidates("proj").collect();
        assert_eq!(
            found,
            [
                PathBuf::from("/work/proj"),
                "/m1/proj".into(),
                "/m2/proj".into()
            ]
        );
        let other: Vec<PathBuf> = mp.candidates("stdlib").collect();
        assert_eq!(other, [PathBuf::from("/m1/stdlib"), "/m2/stdlib".into()]);
        assert_eq!(mp.to_string(), "/work/proj:/m1:/m2");
    }

    #[test]
    fn a_file_belongs_to_the_module_it_lies_in() {
        let mp = Modulepath::new(vec!["/m1".into()]).with_project("proj", "/work/proj".into());
        let (m, rest) = mp
            .module_of(Path::new("/m1/apt/manifests/init.pp"))
            .unwrap();
        assert_eq!((m.as_str(), rest), ("apt", Path::new("manifests/init.pp")));
        let (m, rest) = mp.module_of(Path::new("/work/proj/plans/x.pp")).unwrap();
        assert_eq!((m.as_str(), rest), ("proj", Path::new("plans/x.pp")));
        assert!(mp.module_of(Path::new("/elsewhere/x.pp")).is_none());
    }
}
