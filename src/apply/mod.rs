//! Applying a catalog to a target with nothing installed on it, with
//! Puppet 7's semantics. Everything here is pure: a catalog
//! ([`catalog`]) is put in order ([`graph`]), each resource's parameters
//! are read by its type ([`types`]), and one POSIX sh program is written
//! for the whole run ([`program`]). The executor (`run::actions::apply`)
//! sends that program to the target and feeds the lines it prints back
//! through [`events`] into Puppet's report ([`report`]). A catalog Puppet
//! would refuse to apply (a bad parameter value, a dependency cycle, a
//! relationship to a missing resource) is refused here, before anything
//! runs on the target.

pub mod catalog;
pub mod events;
pub mod graph;
pub mod program;
pub mod report;
pub mod types;

pub use catalog::{ApplyCatalog, CatalogError};
pub use report::Report;

use types::{Kind, ParamError, Sources};

/// Why a catalog cannot be applied at all.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ApplyError {
    #[error("Failed to apply catalog: {0}")]
    Param(#[from] ParamError),
    #[error("Failed to apply catalog: {0}")]
    Graph(#[from] graph::GraphError),
}

/// How a catalog is applied.
#[derive(Debug, Clone, Default)]
pub struct ApplyOptions {
    /// Change nothing; report what would change (`--noop`).
    pub noop: bool,
    /// Apply only resources with one of these tags (`--tags`); empty: all.
    pub tags: Vec<String>,
    /// The target's content cache directory (absolute, or relative to the
    /// home directory): file contents larger than [`INLINE_MAX`] come from
    /// there. `None`: every content travels inside the program.
    pub content_cache: Option<String>,
    /// The target's directory for temporary files, where the apply lock
    /// is (`None`: `/tmp`).
    pub tmpdir: Option<String>,
    /// The run's transaction UUID when the caller gives one (ACE's
    /// `compiler.transaction_uuid`); else a fresh one.
    pub transaction_uuid: Option<String>,
    /// The job this run belongs to (the report's `job_id`).
    pub job_id: Option<String>,
}

impl ApplyOptions {
    /// The tags `--tags` asked for, as resources' tags are compared with
    /// them: trimmed, lower case.
    pub fn wanted_tags(&self) -> Vec<String> {
        self.tags
            .iter()
            .map(|t| t.trim().to_ascii_lowercase())
            .collect()
    }
}

/// Whether a resource tagged `tags` is applied when `--tags` asked for
/// `wanted` ([`ApplyOptions::wanted_tags`]): every one is when it asked
/// for none.
pub fn is_tagged(wanted: &[String], tags: &[String]) -> bool {
    wanted.is_empty() || tags.iter().any(|t| wanted.contains(t))
}

/// Whether a content goes through the target's cache.
fn cacheable(c: &types::file::Content) -> bool {
    !c.sensitive && c.bytes.len() > INLINE_MAX
}

/// The largest file content that travels inside the program when the
/// target has a content cache; Sensitive contents always do (they are
/// never left in a cache).
pub const INLINE_MAX: usize = 8 * 1024;

/// A catalog ready to run: its steps in order, each resource's type, and
/// the program.
#[derive(Debug)]
pub struct Prepared {
    pub catalog: ApplyCatalog,
    pub order: graph::Order,
    /// The type of each step's resource, by step number.
    pub kinds: Vec<Kind>,
    /// Whether each step's resource has a tag `--tags` asked for (all
    /// do when it asked for none); the others are skipped.
    pub tagged: Vec<bool>,
    pub options: ApplyOptions,
}

impl Prepared {
    /// Orders the catalog and reads every applied resource's parameters.
    pub fn new(
        catalog: ApplyCatalog,
        options: ApplyOptions,
        sources: &dyn Sources,
    ) -> Result<Prepared, ApplyError> {
        // concat_files generate their files before the catalog is ordered.
        let (catalog, mut generated) = types::concat::expand(catalog, sources)?;
        let order = graph::order(&catalog, &|r| !types::applies(r))?;
        let mut kinds = order
            .steps
            .iter()
            .map(|s| match generated.remove(&s.resource) {
                Some(kind) => Ok(kind),
                None => Kind::parse(&catalog.resources[s.resource], sources),
            })
            .collect::<Result<Vec<_>, _>>()?;
        // Each path's state is read up front once, for the first step that
        // manages it.
        let mut seen = std::collections::HashSet::new();
        for kind in &mut kinds {
            let file = match kind {
                Kind::File(f) => Some(&mut **f),
                Kind::Concat(types::concat::Concat::Generated(f, _)) => Some(&mut **f),
                _ => None,
            };
            if let Some(f) = file {
                f.prefetch = !f.path.contains('\n') && seen.insert(f.path.clone());
            }
        }
        if options.content_cache.is_some() {
            for kind in &mut kinds {
                if let Kind::File(f) = kind {
                    let children = f.recursion.as_mut().map(|r| r.children.iter_mut());
                    for file in children.into_iter().flatten() {
                        file.cached = file.content.as_ref().is_some_and(cacheable);
                    }
                    f.cached = f.content.as_ref().is_some_and(cacheable);
                }
            }
        }
        let wanted = options.wanted_tags();
        let tagged = order
            .steps
            .iter()
            .map(|s| is_tagged(&wanted, &catalog.resources[s.resource].tags))
            .collect();
        Ok(Prepared {
            catalog,
            order,
            kinds,
            tagged,
            options,
        })
    }

    /// The program for this catalog (its text needs the run's token).
    pub fn program(&self) -> program::Program {
        let step_of: std::collections::HashMap<usize, usize> = self
            .order
            .steps
            .iter()
            .enumerate()
            .map(|(n, s)| (s.resource, n))
            .collect();
        let planned: Vec<program::Planned<'_>> = self
            .order
            .steps
            .iter()
            .zip(&self.kinds)
            .enumerate()
            .map(|(n, (step, kind))| {
                let r = &self.catalog.resources[step.resource];
                let noop = self.options.noop
                    || matches!(r.param("noop"), Some(serde_json::Value::Bool(true)))
                    || r.param("noop").and_then(|v| v.as_str()) == Some("true");
                program::Planned {
                    tagged: self.tagged.get(n).copied().unwrap_or(true),
                    number: n,
                    step,
                    kind,
                    noop,
                    upstream: step
                        .upstream
                        .iter()
                        .filter_map(|u| step_of.get(u).copied())
                        .collect(),
                    refreshed_by: step
                        .refreshed_by
                        .iter()
                        .filter_map(|u| step_of.get(u).copied())
                        .collect(),
                }
            })
            .collect();
        program::build(
            &planned,
            &program::ProgramOptions {
                prefetch: self
                    .kinds
                    .iter()
                    .zip(&self.tagged)
                    .enumerate()
                    .filter_map(|(n, (k, tagged))| {
                        let f = match k {
                            Kind::File(f) => f,
                            Kind::Concat(types::concat::Concat::Generated(f, _)) => f,
                            _ => return None,
                        };
                        (*tagged && f.prefetch).then(|| {
                            let body = f.content.is_some() || !f.local_sources.is_empty();
                            (
                                n,
                                f.path.clone(),
                                body && f.ensure != Some(types::file::Ensure::Absent),
                            )
                        })
                    })
                    .collect(),
                tmpdir: self.options.tmpdir.clone(),
                cache: self.options.content_cache.as_ref().map(|dir| {
                    let mut contents: Vec<(String, program::Holders)> = Vec::new();
                    for (sha, path, _, step) in self.cached_contents() {
                        let at = (path.to_string(), step);
                        match contents.iter_mut().find(|(s, _)| s == sha) {
                            Some((_, paths)) => paths.push(at),
                            None => contents.push((sha.to_string(), vec![at])),
                        }
                    }
                    program::CacheUse {
                        dir: dir.clone(),
                        contents,
                    }
                }),
            },
        )
    }

    /// The contents that come from the target's cache: sha256, the path
    /// that wants it, the bytes, and the step whose prefetched checksum is
    /// that path's (a file of its own; not a recursive copy's).
    pub fn cached_contents(&self) -> impl Iterator<Item = (&str, &str, &[u8], Option<usize>)> {
        let wanted = !self.options.noop;
        let tagged = self.tagged.iter().copied().chain(std::iter::repeat(true));
        self.kinds
            .iter()
            .zip(tagged)
            .enumerate()
            .filter(move |(_, (_, t))| *t && wanted)
            .filter_map(|(n, (k, _))| match k {
                Kind::File(f) => Some((n, &**f)),
                _ => None,
            })
            .flat_map(|(n, f)| {
                let children = f.recursion.iter().flat_map(|r| r.children.iter());
                std::iter::once((Some(n), f)).chain(children.map(|c| (None, c)))
            })
            .filter(|(_, f)| f.cached)
            .filter_map(|(n, f)| {
                f.content.as_ref().map(|c| {
                    (
                        c.sha256.as_str(),
                        f.path.as_str(),
                        c.bytes.as_slice(),
                        n.filter(|_| f.prefetch),
                    )
                })
            })
    }

    /// The bytes of a cached content, by sha256.
    pub fn cached_content(&self, sha: &str) -> Option<&[u8]> {
        self.cached_contents()
            .find(|(s, _, _, _)| *s == sha)
            .map(|(_, _, b, _)| b)
    }

    /// The steps as the report builder takes them, with their timings.
    pub fn report_steps(&self, timing: &[(Option<f64>, String)]) -> Vec<report::StepInput<'_>> {
        self.order
            .steps
            .iter()
            .zip(&self.kinds)
            .enumerate()
            .map(|(n, (step, kind))| {
                let (seconds, time) = timing.get(n).cloned().unwrap_or((None, String::new()));
                report::StepInput {
                    tagged: self.tagged.get(n).copied().unwrap_or(true),
                    resource: &self.catalog.resources[step.resource],
                    kind,
                    containers: step
                        .containers
                        .iter()
                        .map(|&c| &self.catalog.resources[c])
                        .collect(),
                    seconds,
                    time,
                    generated_by: match kind {
                        Kind::Concat(types::concat::Concat::Generated(_, by)) => Some(by.as_str()),
                        _ => None,
                    },
                }
            })
            .collect()
    }
}
