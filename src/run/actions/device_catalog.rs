//! A catalog applied to a network device (`ferry apply`, ACE's
//! `execute_catalog`, on a target with `transport: network`): the catalog
//! is compiled with the device's facts (the device facts action's, under
//! the inventory's) or given; then each device resource, in catalog order,
//! is turned into the configuration it wants
//! ([`crate::transport::network::resources`]) and converged through the
//! device's CLI session, in the order the catalog's relationships give
//! ([`crate::apply::graph::order`]; a resource whose dependency failed is
//! skipped, as Puppet skips it): the running configuration is read once, each
//! resource's change (missing lines, lines to remove) is pushed in
//! configuration mode and read back and checked, as `device configure`
//! does; with noop nothing is pushed. A compile for a device has the device
//! types built in ([`crate::lang::eval::device_types`]); a resource with a
//! parameter its type does not have (a catalog from a file, a module's
//! type with more attributes) fails alone, and one with none of the tags
//! `--tags` asked for is skipped silently, as on a host. Containers
//! (classes, stages) are not applied; any other resource type fails
//! alone. The run is reported in
//! Puppet's report format, with Puppet's metrics
//! ([`crate::apply::report::metrics`]); a line the device rejects fails its
//! resource with the device's message, and the others still converge. A
//! resource's lines are left out of its events when its parameters were
//! `Sensitive`.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};

use super::apply::{ApplyJob, CatalogSource, compile, failed, rfc3339, uuid};
use super::device::{self, DeviceJob};
use crate::apply::catalog::Resource;
use crate::apply::graph::{self, Step};
use crate::apply::report::{self, Event, Log, Report, ResourceStatus, RunStatus, Statuses};
use crate::apply::{ApplyCatalog, is_tagged};
use crate::inventory::Target;
use crate::lang::eval::device_types;
use crate::run::events::Sink;
use crate::run::result::{Outcome, Output};
use crate::transport::TransportError;
use crate::transport::command::nonce;
use crate::transport::network::Network;
use crate::transport::network::config::{self, Node};
use crate::transport::network::resources;

/// What became of one resource.
enum Converged {
    /// Already as wanted.
    InSync,
    /// Out of sync; nothing pushed (noop). The change, as a diff.
    Noop(String),
    /// Pushed and checked. The change, as a diff.
    Changed(String),
    /// Why it could not be brought in sync.
    Failed(String),
    /// Not applied: these resources upstream of it (catalog indices) failed.
    Skipped(Vec<usize>),
    /// Not applied, silently: it has none of the tags `--tags` asked for.
    Untagged,
}

/// The device's facts (the device facts action's) under the inventory's,
/// or the failed outcome saying why there are none.
async fn device_facts(
    target: &Target,
    dev: &Network,
) -> Result<Result<serde_json::Map<String, Value>, Outcome>, TransportError> {
    let mut facts = match device::run(target, dev, &DeviceJob::Facts).await? {
        Outcome::Ok(Output::Task(Value::Object(map))) => map,
        other => {
            let why = other
                .error()
                .map(|e| e.msg.into_owned())
                .unwrap_or_else(|| "the device gave no facts".into());
            return Ok(Err(failed(
                "ferry/apply-facts",
                format!("could not gather facts: {why}"),
            )));
        }
    };
    for (k, v) in &target.facts {
        facts.insert(k.clone(), v.clone());
    }
    Ok(Ok(facts))
}

/// Applies the job's catalog to the device `dev`; the report goes to the
/// job's observer, as a host's does.
pub async fn run(
    target: &Target,
    dev: &Network,
    job: &Arc<ApplyJob>,
    sink: &dyn Sink,
) -> Result<Outcome, TransportError> {
    let started_wall = chrono::Utc::now();
    let started = Instant::now();
    let catalog = match &job.source {
        CatalogSource::Fixed(c) => (**c).clone(),
        CatalogSource::Compile {
            manifest,
            modulepath,
            environment,
            options,
            ..
        } => {
            let facts = match device_facts(target, dev).await? {
                Ok(f) => f,
                Err(refusal) => return Ok(refusal),
            };
            let options = crate::catalog::CompileOptions {
                device_types: true,
                ..options.clone()
            };
            match compile(target, facts, manifest, modulepath, environment, &options).await? {
                Ok(c) => c,
                Err(msg) => return Ok(failed("ferry/apply-compile", msg)),
            }
        }
        // The server's deploy jobs: classified and compiled there, with
        // the device types.
        CatalogSource::Provided { provider, .. } => {
            let facts = match device_facts(target, dev).await? {
                Ok(f) => f,
                Err(refusal) => return Ok(refusal),
            };
            let provision = provider.catalog(target, facts, true).await;
            provision.announce(&target.name, sink);
            match provision.catalog {
                Ok(p) => p.catalog,
                Err(e) => return Ok(failed(&e.kind, e.message)),
            }
        }
    };
    let noop = job.options.noop;
    let wanted_tags = job.options.wanted_tags();
    let platform = dev.cli_dialect().platform;
    let order = match graph::order(&catalog, &|_| false) {
        Ok(o) => o,
        Err(e) => return Ok(failed("ferry/apply-catalog", e.to_string())),
    };
    let mut running = match device::running(dev).await? {
        Ok(text) => config::parse(&text),
        Err(refusal) => return Ok(refusal),
    };
    let mut statuses = Vec::new();
    let mut logs = Vec::new();
    let mut type_time: Vec<(String, String, f64)> = Vec::new();
    // Resources that failed or were skipped, by catalog index.
    let mut failures: BTreeSet<usize> = BTreeSet::new();
    for step in &order.steps {
        let index = step.resource;
        let Some(resource) = catalog.resources.get(index) else {
            continue;
        };
        let path = containment(&catalog, step);
        let time = rfc3339(chrono::Utc::now());
        let began = Instant::now();
        let failed_upstream: Vec<usize> = step
            .upstream
            .iter()
            .copied()
            .filter(|u| failures.contains(u))
            .collect();
        let converged = if !is_tagged(&wanted_tags, &resource.tags) {
            Converged::Untagged
        } else if !failed_upstream.is_empty() {
            Converged::Skipped(failed_upstream)
        } else if let Some(why) = unknown_param(resource) {
            Converged::Failed(why)
        } else {
            match resources::desired(
                &resource.type_name,
                &resource.title,
                &resource.params,
                platform,
            ) {
                Err(e) => Converged::Failed(e.to_string()),
                Ok(desired) => converge(dev, &mut running, &desired, noop).await?,
            }
        };
        if matches!(converged, Converged::Failed(_) | Converged::Skipped(_)) {
            failures.insert(index);
        }
        if let Converged::Skipped(upstream) = &converged {
            let log = |level: &'static str, message: String| Log {
                level,
                message,
                source: format!("/{}", path.join("/")),
                tags: std::iter::once(level.to_string())
                    .chain(resource.tags.iter().cloned())
                    .collect(),
                time: time.clone(),
                file: resource.file.clone(),
                line: resource.line,
            };
            for u in upstream {
                if let Some(dep) = catalog.resources.get(*u) {
                    logs.push(log(
                        "notice",
                        format!("Dependency {} has failures: true", dep.reference()),
                    ));
                }
            }
            logs.push(log(
                "warning",
                "Skipping because of failed dependencies".into(),
            ));
        }
        let seconds = began.elapsed().as_secs_f64();
        let key = resource.type_key();
        match type_time.iter_mut().find(|(k, _, _)| *k == key) {
            Some(slot) => slot.2 += seconds,
            None => type_time.push((key, resource.type_name.clone(), seconds)),
        }
        let status = status(path, resource, converged, time, seconds);
        for e in &status.events {
            logs.push(Log {
                level: if e.status == "failure" {
                    "err"
                } else {
                    "notice"
                },
                message: e.message.clone(),
                source: format!(
                    "{}/{}",
                    source(&status),
                    e.property.as_deref().unwrap_or("")
                ),
                tags: {
                    let mut tags = vec![
                        if e.status == "failure" {
                            "err"
                        } else {
                            "notice"
                        }
                        .to_string(),
                    ];
                    tags.extend(resource.tags.iter().cloned());
                    tags
                },
                time: e.time.clone(),
                file: resource.file.clone(),
                line: resource.line,
            });
        }
        statuses.push(status);
    }
    let seconds = started.elapsed().as_secs_f64();
    let now = rfc3339(chrono::Utc::now());
    logs.push(Log {
        level: "notice",
        message: format!("Applied catalog in {seconds:.2} seconds"),
        source: "Puppet".into(),
        tags: vec!["notice".into()],
        time: now,
        file: None,
        line: None,
    });
    let any_failed = statuses.iter().any(|s| s.failed);
    let any_changed = statuses.iter().any(|s| s.changed);
    let noop_pending = statuses
        .iter()
        .any(|s| s.events.iter().any(|e| e.status == "noop"));
    let metrics = report::metrics(&statuses, &type_time, seconds, 0);
    let report = Report {
        host: target.name.clone(),
        time: rfc3339(started_wall),
        configuration_version: match catalog.version.parse::<u64>() {
            Ok(n) => Value::from(n),
            Err(_) => Value::String(catalog.version.clone()),
        },
        transaction_uuid: job
            .options
            .transaction_uuid
            .clone()
            .unwrap_or_else(|| uuid(&nonce(&target.name))),
        job_id: job.options.job_id.clone(),
        report_format: 12,
        puppet_version: format!("ferry {}", env!("CARGO_PKG_VERSION")),
        status: if any_failed {
            RunStatus::Failed
        } else if any_changed {
            RunStatus::Changed
        } else {
            RunStatus::Unchanged
        },
        transaction_completed: true,
        noop,
        noop_pending,
        environment: catalog.environment.clone(),
        logs,
        metrics,
        resource_statuses: Statuses(statuses),
        corrective_change: false,
        catalog_uuid: catalog.catalog_uuid.clone(),
        cached_catalog_status: "not_used",
    };
    if let Some(o) = &job.observer {
        o.report(&target.name, &report).await;
    }
    Ok(if any_failed {
        Outcome::Failed(Output::Apply(Box::new(report)))
    } else {
        Outcome::Ok(Output::Apply(Box::new(report)))
    })
}

/// Brings the device to one resource's `desired` configuration from
/// `running` (kept up to date with what the device reads back).
async fn converge(
    dev: &Network,
    running: &mut Vec<Node>,
    desired: &resources::Desired,
    noop: bool,
) -> Result<Converged, TransportError> {
    let change = resources::change(running, desired);
    if change.is_empty() {
        return Ok(Converged::InSync);
    }
    let diff = change.to_string();
    if noop {
        return Ok(Converged::Noop(diff));
    }
    let refusal = device::push(dev, &change).await?;
    // Read back whatever happened: a rejected line may follow taken ones.
    let after = match device::running(dev).await? {
        Ok(text) => config::parse(&text),
        Err(refusal) => {
            return Ok(Converged::Failed(message(&refusal)));
        }
    };
    *running = after;
    if let Some(refusal) = refusal {
        return Ok(Converged::Failed(message(&refusal)));
    }
    let left = resources::change(running, desired);
    if !left.is_empty() {
        return Ok(Converged::Failed(format!(
            "the device's running configuration is still not as wanted:\n{left}"
        )));
    }
    Ok(Converged::Changed(diff))
}

/// A parameter the resource's device type does not have (a catalog from a
/// file, or one whose type a module declared with more attributes than
/// ferry converges), as the resource's failure.
fn unknown_param(resource: &Resource) -> Option<String> {
    let t = device_types::find(&resource.type_name.to_ascii_lowercase())?;
    let param = resource.params.keys().find(|p| !t.accepts(p))?;
    Some(format!(
        "no parameter named '{param}' ({} takes {})",
        t.name,
        t.attribute_list()
    ))
}

fn message(refusal: &Outcome) -> String {
    refusal
        .error()
        .map(|e| e.msg.into_owned())
        .unwrap_or_else(|| "the device refused the change".into())
}

/// Where Puppet's logs say an event came from: the containment path.
fn source(status: &ResourceStatus) -> String {
    let mut path = String::new();
    for p in &status.containment_path {
        path.push('/');
        path.push_str(p);
    }
    path
}

/// Puppet's containment path of a step: its containers (a class by its
/// name), then the resource itself.
fn containment(catalog: &ApplyCatalog, step: &Step) -> Vec<String> {
    step.containers
        .iter()
        .filter_map(|c| catalog.resources.get(*c))
        .map(graph::path_segment)
        .chain(
            catalog
                .resources
                .get(step.resource)
                .map(Resource::reference),
        )
        .collect()
}

/// The resource's status in the report, with its one event (if any).
fn status(
    containment_path: Vec<String>,
    resource: &Resource,
    converged: Converged,
    time: String,
    seconds: f64,
) -> ResourceStatus {
    let hidden = !resource.sensitive.is_empty();
    let shown = |diff: &str| {
        if hidden {
            "[redacted]".to_string()
        } else {
            diff.trim_end().to_string()
        }
    };
    let event = |status: &'static str, message: String, desired: Value| Event {
        audited: false,
        property: Some("config".into()),
        previous_value: Value::Null,
        desired_value: desired,
        historical_value: Value::Null,
        message,
        name: "config_changed".into(),
        status,
        time: time.clone(),
        redacted: hidden.then_some(true),
        corrective_change: false,
    };
    let (events, failed, changed, out_of_sync) = match &converged {
        Converged::InSync => (Vec::new(), false, false, false),
        Converged::Noop(diff) => (
            vec![event(
                "noop",
                format!("would change the configuration (noop):\n{}", shown(diff)),
                json!(shown(diff)),
            )],
            false,
            false,
            true,
        ),
        Converged::Changed(diff) => (
            vec![event(
                "success",
                format!("configuration changed:\n{}", shown(diff)),
                json!(shown(diff)),
            )],
            false,
            true,
            true,
        ),
        Converged::Failed(why) => (
            vec![event("failure", why.clone(), Value::Null)],
            true,
            false,
            true,
        ),
        Converged::Skipped(_) | Converged::Untagged => (Vec::new(), false, false, false),
    };
    ResourceStatus {
        title: resource.title.clone(),
        file: resource.file.clone(),
        line: resource.line,
        resource: resource.reference(),
        resource_type: resource.type_name.clone(),
        provider_used: Some("cli"),
        containment_path,
        evaluation_time: Some(seconds),
        tags: resource.tags.clone(),
        time,
        failed,
        failed_to_restart: false,
        changed,
        out_of_sync,
        skipped: matches!(converged, Converged::Skipped(_) | Converged::Untagged),
        change_count: u64::from(changed),
        out_of_sync_count: u64::from(out_of_sync),
        events,
        corrective_change: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compiler_and_the_device_know_the_same_types() {
        let compiled: Vec<&str> = device_types::TYPES.iter().map(|t| t.name).collect();
        assert_eq!(compiled, resources::TYPES);
    }

    #[test]
    fn a_parameter_the_type_lacks_fails_its_resource() {
        // netdev_stdlib's network_interface has `speed`; ferry does not set it.
        let r = Resource::with_params(
            "Network_interface",
            "eth2",
            &json!({"description": "x", "require": "Device_config[a]", "speed": "10g"}),
        );
        assert_eq!(
            unknown_param(&r).as_deref(),
            Some(
                "no parameter named 'speed' (network_interface takes name, description, enable, mtu)"
            )
        );
        let fine = Resource::with_params("Network_interface", "eth2", &json!({"mtu": 9000}));
        assert_eq!(unknown_param(&fine), None);
    }
}
