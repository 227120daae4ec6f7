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
}

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
        let kinds = order
            .steps
            .iter()
            .map(|s| match generated.remove(&s.resource) {
                Some(kind) => Ok(kind),
                None => Kind::parse(&catalog.resources[s.resource], sources),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let wanted: Vec<String> = options
            .tags
            .iter()
            .map(|t| t.trim().to_ascii_lowercase())
            .collect();
        let tagged = order
            .steps
            .iter()
            .map(|s| {
                wanted.is_empty()
                    || catalog.resources[s.resource]
                        .tags
                        .iter()
                        .any(|t| wanted.contains(t))
            })
            .collect();
        Ok(Prepared {
            catalog,
            order,
            kinds,
            tagged,
            options,
        })
    }

    /// The program for this run, its lines marked with `token`.
    pub fn program(&self, token: &str) -> String {
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
                token: token.to_string(),
            },
        )
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
                }
            })
            .collect()
    }
}
