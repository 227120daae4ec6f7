//! Puppet's report (`report_format` 12), built from what the apply
//! program reported: one resource status per applied resource (with its
//! events, in Puppet's words from [`super::types`]), the logs Puppet
//! writes (event messages, command output, "Dependency ... has failures",
//! "Skipping because of failed dependencies", refresh notices), the
//! metrics (resources, time, changes, events) and the run's status:
//! `failed` if a resource failed or the program did not finish,
//! `changed` if anything changed, else `unchanged`. The shapes follow
//! reports real Puppet 7 wrote (tests/apply/puppet/).

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::Value;

use super::catalog::{ApplyCatalog, Resource};
use super::events::Line;
use super::graph::path_segment;
use super::types::{EventStatus, Kind};

/// The run's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Changed,
    Unchanged,
    Failed,
}

#[derive(Debug, Clone, Serialize)]
pub struct Log {
    pub level: &'static str,
    pub message: String,
    pub source: String,
    pub tags: Vec<String>,
    pub time: String,
    pub file: Option<String>,
    pub line: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Event {
    pub audited: bool,
    pub property: Option<String>,
    pub previous_value: Value,
    pub desired_value: Value,
    pub historical_value: Value,
    pub message: String,
    pub name: String,
    pub status: &'static str,
    pub time: String,
    pub redacted: Option<bool>,
    pub corrective_change: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct ResourceStatus {
    pub title: String,
    pub file: Option<String>,
    pub line: Option<u64>,
    pub resource: String,
    pub resource_type: String,
    pub provider_used: Option<&'static str>,
    pub containment_path: Vec<String>,
    pub evaluation_time: Option<f64>,
    pub tags: Vec<String>,
    pub time: String,
    pub failed: bool,
    pub failed_to_restart: bool,
    pub changed: bool,
    pub out_of_sync: bool,
    pub skipped: bool,
    pub change_count: u64,
    pub out_of_sync_count: u64,
    pub events: Vec<Event>,
    pub corrective_change: bool,
}

/// Resource statuses keyed by reference, in the order they were applied.
#[derive(Debug, Clone, Default)]
pub struct Statuses(pub Vec<ResourceStatus>);

impl Serialize for Statuses {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for r in &self.0 {
            m.serialize_entry(&r.resource, r)?;
        }
        m.end()
    }
}

/// One metric category: `{name, label, values: [[name, label, value]]}`.
#[derive(Debug, Clone)]
pub struct Metric {
    pub name: &'static str,
    pub label: &'static str,
    pub values: Vec<(String, String, Value)>,
}

impl Serialize for Metric {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("name", self.name)?;
        m.serialize_entry("label", self.label)?;
        m.serialize_entry("values", &self.values)?;
        m.end()
    }
}

#[derive(Debug, Clone)]
pub struct Metrics(pub Vec<Metric>);

impl Serialize for Metrics {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for metric in &self.0 {
            m.serialize_entry(metric.name, metric)?;
        }
        m.end()
    }
}

/// Puppet's report of one apply.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub host: String,
    pub time: String,
    pub configuration_version: Value,
    pub transaction_uuid: String,
    /// The orchestrator job the run belongs to (Puppet writes it only when
    /// there is one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
    pub report_format: u32,
    pub puppet_version: String,
    pub status: RunStatus,
    pub transaction_completed: bool,
    pub noop: bool,
    pub noop_pending: bool,
    pub environment: String,
    pub logs: Vec<Log>,
    pub metrics: Metrics,
    pub resource_statuses: Statuses,
    pub corrective_change: bool,
    pub catalog_uuid: Option<String>,
    pub cached_catalog_status: &'static str,
}

/// Counts for Bolt's `_output` line and the human summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub changed: usize,
    pub failed: usize,
    pub unchanged: usize,
    pub skipped: usize,
    pub noop: usize,
}

impl Report {
    pub fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for r in &self.resource_statuses.0 {
            if r.failed {
                c.failed += 1;
            } else if r.skipped {
                c.skipped += 1;
            } else if r.changed {
                c.changed += 1;
            } else if r.events.iter().any(|e| e.status == "noop") {
                c.noop += 1;
            } else {
                c.unchanged += 1;
            }
        }
        c
    }

    /// Bolt's ApplyResult `_output`.
    pub fn summary_line(&self) -> String {
        let c = self.counts();
        format!(
            "changed: {}, failed: {}, unchanged: {} skipped: {}, noop: {}",
            c.changed, c.failed, c.unchanged, c.skipped, c.noop
        )
    }
}

/// One applied step, as the report builder needs it.
pub struct StepInput<'a> {
    pub resource: &'a Resource,
    pub kind: &'a Kind,
    /// Containers from the outermost in.
    pub containers: Vec<&'a Resource>,
    /// Seconds the step took, from the program's timing of its lines.
    pub seconds: Option<f64>,
    /// When it started (RFC 3339).
    pub time: String,
    /// Tagged with what `--tags` asked for (or no tags asked for).
    pub tagged: bool,
    /// The title of the resource that generated this one (a concat_file's
    /// file): Puppet puts it in a whit of that resource.
    pub generated_by: Option<&'a str>,
}

/// Everything about the run beyond the steps.
pub struct RunInfo<'a> {
    pub host: &'a str,
    pub catalog: &'a ApplyCatalog,
    pub transaction_uuid: &'a str,
    pub job_id: Option<&'a str>,
    pub noop: bool,
    /// When the run started (RFC 3339).
    pub time: String,
    /// Seconds the whole apply took.
    pub seconds: f64,
    /// The program reported its end.
    pub finished: bool,
    /// Why the run did not finish, when it did not.
    pub error: Option<String>,
    /// The current time, for log entries (RFC 3339).
    pub now: String,
    /// The tags `--tags` asked for, lower case (empty: all).
    pub tags: Vec<String>,
}

fn level_of(status: EventStatus) -> &'static str {
    match status {
        EventStatus::Failure => "err",
        _ => "notice",
    }
}

/// A log line of Puppet's own (source `Puppet`, no file or line).
fn puppet_log(level: &'static str, message: String, time: &str) -> Log {
    Log {
        level,
        message,
        source: "Puppet".into(),
        tags: vec![level.into()],
        time: time.to_string(),
        file: None,
        line: None,
    }
}

/// Builds the report from the program's lines, grouped by step.
pub fn build(info: &RunInfo<'_>, steps: &[StepInput<'_>], lines: &[Line]) -> Report {
    // Each step's lines; a step that generated resources (a directory
    // copied recursively) announced each with a `gen` line, and the lines
    // after it are that resource's.
    let mut by_step: HashMap<usize, Vec<&Line>> = HashMap::new();
    let mut generated: HashMap<usize, Vec<(String, Vec<&Line>)>> = HashMap::new();
    for l in lines {
        let step = match l {
            Line::Event { step, .. }
            | Line::Fail { step, .. }
            | Line::Out { step, .. }
            | Line::Skip { step, .. }
            | Line::Refresh { step, .. }
            | Line::RefreshNoop { step, .. }
            | Line::RefreshFailed { step, .. }
            | Line::Notice { step, .. }
            | Line::Done { step } => *step,
            Line::Gen { step, rel } => {
                generated
                    .entry(*step)
                    .or_default()
                    .push((rel.clone(), Vec::new()));
                continue;
            }
            Line::End | Line::Need { .. } | Line::Busy { .. } | Line::Foreign { .. } => continue,
        };
        match generated.get_mut(&step).and_then(|g| g.last_mut()) {
            Some((_, mine)) => mine.push(l),
            None => by_step.entry(step).or_default().push(l),
        }
    }
    // The generated resources, sorted by path, follow their step, each
    // reported as a resource of its own (Puppet's order and shape).
    let mut arena: Vec<(Resource, Kind)> = Vec::new();
    let mut plan: Vec<(usize, Option<usize>)> = Vec::new();
    for (n, s) in steps.iter().enumerate() {
        plan.push((n, None));
        let (Some(gens), Kind::File(parent)) = (generated.get_mut(&n), s.kind) else {
            continue;
        };
        gens.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        for (k, (rel, _)) in gens.iter().enumerate() {
            let child = parent.generated(rel);
            arena.push((
                Resource::made("File", child.path.clone(), s.resource.tags.clone()),
                Kind::File(Box::new(child)),
            ));
            plan.push((n, Some(k)));
        }
    }
    let mut expanded: Vec<StepInput<'_>> = Vec::with_capacity(plan.len());
    let mut segments: Vec<&[&Line]> = Vec::with_capacity(plan.len());
    // For the last resource a step generated: that step's place.
    let mut group_end: Vec<Option<usize>> = Vec::with_capacity(plan.len());
    let mut made = arena.iter();
    let mut parent_at = 0;
    for (i, (n, k)) in plan.iter().enumerate() {
        let s = &steps[*n];
        let (resource, kind, lines) = match k {
            None => {
                parent_at = i;
                (
                    s.resource,
                    s.kind,
                    by_step.get(n).map(Vec::as_slice).unwrap_or_default(),
                )
            }
            Some(k) => {
                let Some((r, kind)) = made.next() else { break };
                let lines = generated
                    .get(n)
                    .and_then(|g| g.get(*k))
                    .map(|(_, l)| l.as_slice())
                    .unwrap_or_default();
                (r, kind, lines)
            }
        };
        let last_generated = k.is_some() && plan.get(i + 1).is_none_or(|(m, _)| m != n);
        group_end.push(last_generated.then_some(parent_at));
        segments.push(lines);
        expanded.push(StepInput {
            resource,
            kind,
            containers: s.containers.clone(),
            seconds: if k.is_some() { None } else { s.seconds },
            time: s.time.clone(),
            tagged: s.tagged,
            generated_by: if k.is_some() { None } else { s.generated_by },
        });
    }
    let original = steps;
    let steps = expanded.as_slice();
    let mut logs = Vec::new();
    let mut statuses = Vec::new();
    let mut notified: BTreeSet<usize> = BTreeSet::new();
    let mut type_time: Vec<(String, String, f64)> = Vec::new();
    let mut any_failed = !info.finished;
    let mut any_changed = false;
    let mut noop_pending = false;
    let mut restarted = 0u64;
    let mut unsupported: Vec<String> = Vec::new();
    // Where each step's logs end, for the containers' refresh notices.
    let mut ends: Vec<usize> = Vec::with_capacity(steps.len());
    // Events each step passes to its container: (changes, noop events,
    // whether the step failed or was skipped for a failure).
    let mut passed_up: Vec<(usize, usize, bool)> = Vec::with_capacity(steps.len());
    for (n, s) in steps.iter().enumerate() {
        let r = s.resource;
        let path: Vec<String> = s
            .containers
            .iter()
            .map(|c| path_segment(c))
            .chain(std::iter::once(r.reference()))
            .collect();
        let source = format!("/{}", path.join("/"));
        let log = |level: &'static str, message: String, source: String, extra: &[&str]| Log {
            level,
            message,
            source,
            tags: std::iter::once(level.to_string())
                .chain(r.tags.iter().cloned())
                .chain(extra.iter().map(|s| s.to_string()))
                .collect(),
            time: s.time.clone(),
            file: r.file.clone(),
            line: r.line,
        };
        let mut status = ResourceStatus {
            title: r.title.clone(),
            file: r.file.clone(),
            line: r.line,
            resource: r.reference(),
            resource_type: r.type_name.clone(),
            provider_used: s.kind.provider(),
            containment_path: path.clone(),
            evaluation_time: s.seconds,
            tags: r.tags.clone(),
            time: s.time.clone(),
            failed: false,
            failed_to_restart: false,
            changed: false,
            out_of_sync: false,
            skipped: false,
            change_count: 0,
            out_of_sync_count: 0,
            events: Vec::new(),
            corrective_change: false,
        };
        let mine = segments.get(n).copied().unwrap_or_default();
        let mut pending_out: Vec<String> = Vec::new();
        let mut refresh_noop = 0usize;
        if !s.tagged {
            // Not tagged with what --tags asked for: skipped, silently.
            status.skipped = true;
        }
        for l in mine {
            match l {
                Line::Out { text, .. } => pending_out.push(text.clone()),
                Line::Event {
                    property,
                    status: st,
                    previous,
                    detail,
                    ..
                } => {
                    let text = s.kind.describe(property, *st, previous, detail);
                    // A command's output comes before its event, at the
                    // exec's level (notice), tagged with the property.
                    for o in pending_out.drain(..) {
                        logs.push(log(
                            "notice",
                            o,
                            format!("{source}/{property}"),
                            &[property],
                        ));
                    }
                    if *st == EventStatus::Failure {
                        match s.kind {
                            Kind::Exec(e) => {
                                logs.push(puppet_log("err", e.failure_text(detail), &s.time))
                            }
                            Kind::File(f) if f.mode_error.is_some() => {
                                logs.push(puppet_log("err", detail.clone(), &s.time))
                            }
                            _ => {}
                        }
                    }
                    if *st == EventStatus::Success
                        && let Kind::Notify(nt) = s.kind
                    {
                        let shown = if nt.sensitive {
                            "Sensitive [value redacted]".to_string()
                        } else {
                            nt.message.clone()
                        };
                        if nt.withpath {
                            logs.push(log("notice", shown, format!("{source}/{property}"), &[]));
                        } else {
                            logs.push(puppet_log("notice", shown, &s.time));
                        }
                    }
                    logs.push(log(
                        level_of(*st),
                        text.message.clone(),
                        format!("{source}/{property}"),
                        &[],
                    ));
                    status.out_of_sync = true;
                    status.out_of_sync_count += 1;
                    match st {
                        EventStatus::Success => {
                            status.changed = true;
                            status.change_count += 1;
                        }
                        EventStatus::Failure => status.failed = true,
                        EventStatus::Noop => noop_pending = true,
                    }
                    status.events.push(Event {
                        audited: false,
                        property: Some(property.clone()),
                        name: s.kind.event_name(&r.type_key(), property, &text.desired),
                        previous_value: text.previous,
                        desired_value: text.desired,
                        historical_value: Value::Null,
                        message: text.message,
                        status: st.as_str(),
                        time: s.time.clone(),
                        redacted: text.redacted.then_some(true),
                        corrective_change: false,
                    });
                }
                Line::Fail { code, .. } => {
                    status.failed = true;
                    match s.kind {
                        // Set aside to the end and failed without an
                        // event, as Puppet does a resource it has no
                        // provider for; the reason is logged at the end.
                        Kind::Unsupported(_) => {
                            let ty = r.type_key();
                            if !unsupported.contains(&ty) {
                                unsupported.push(ty);
                            }
                        }
                        // Puppet's "Could not evaluate": an err log and a
                        // failure event named resource_error.
                        kind => {
                            let message = kind.failure(code);
                            logs.push(log(
                                "err",
                                format!("Could not evaluate: {message}"),
                                source.clone(),
                                &[],
                            ));
                            status.out_of_sync = true;
                            status.out_of_sync_count += 1;
                            status.events.push(Event {
                                audited: false,
                                property: None,
                                previous_value: Value::Null,
                                desired_value: Value::Null,
                                historical_value: Value::Null,
                                message,
                                name: "resource_error".into(),
                                status: "failure",
                                time: s.time.clone(),
                                redacted: Some(false),
                                corrective_change: false,
                            });
                        }
                    }
                }
                Line::Skip { failed, .. } => {
                    status.skipped = true;
                    for f in failed {
                        if notified.insert(*f)
                            && let Some(dep) = original.get(*f)
                        {
                            logs.push(log(
                                "notice",
                                format!(
                                    "Dependency {} has failures: true",
                                    dep.resource.reference()
                                ),
                                source.clone(),
                                &[],
                            ));
                        }
                    }
                    logs.push(log(
                        "warning",
                        "Skipping because of failed dependencies".into(),
                        source.clone(),
                        &[],
                    ));
                }
                Line::Refresh { events, .. } => {
                    let message = format!("Triggered 'refresh' from {events} {}", plural(*events));
                    logs.push(log("notice", message.clone(), source.clone(), &[]));
                    status.changed = true;
                    status.out_of_sync = true;
                    status.change_count += 1;
                    status.out_of_sync_count += 1;
                    restarted += 1;
                    status.events.push(Event {
                        audited: false,
                        property: None,
                        previous_value: Value::Null,
                        desired_value: Value::Null,
                        historical_value: Value::Null,
                        message,
                        name: "refresh".into(),
                        status: "success",
                        time: s.time.clone(),
                        redacted: Some(false),
                        corrective_change: false,
                    });
                }
                Line::RefreshNoop { events, .. } => {
                    refresh_noop = 1;
                    logs.push(log(
                        "notice",
                        format!(
                            "Would have triggered 'refresh' from {events} {}",
                            plural(*events)
                        ),
                        source.clone(),
                        &[],
                    ));
                }
                Line::RefreshFailed {
                    status: code,
                    detail: output,
                    ..
                } => {
                    for o in pending_out.drain(..) {
                        logs.push(log("notice", o, format!("{source}/returns"), &["returns"]));
                    }
                    let detail = s.kind.refresh_failure(code, output);
                    let message = format!("Failed to call refresh: {detail}");
                    // The refresh was triggered: its event and notice
                    // come first, then the failure.
                    if let Some(ev) = status.events.last_mut().filter(|e| e.name == "refresh") {
                        ev.status = "failure";
                        ev.name = "resource_error".into();
                        ev.message = message.clone();
                        status.changed = false;
                        status.change_count = status.change_count.saturating_sub(1);
                        restarted = restarted.saturating_sub(1);
                    }
                    status.failed = true;
                    status.failed_to_restart = true;
                    logs.push(log("err", message, source.clone(), &[]));
                    logs.push(log("err", detail, source.clone(), &[]));
                }
                Line::Notice { text, .. } => {
                    logs.push(log("notice", text.clone(), source.clone(), &[]))
                }
                Line::Done { .. }
                | Line::End
                | Line::Need { .. }
                | Line::Busy { .. }
                | Line::Foreign { .. }
                | Line::Gen { .. } => {}
            }
        }
        // Output of a refresh that succeeded (logoutput => true).
        for o in pending_out.drain(..) {
            logs.push(log("notice", o, format!("{source}/returns"), &["returns"]));
        }
        if mine.is_empty() && !info.finished {
            // The program stopped before it reached this step.
            status.skipped = true;
        }
        any_failed |= status.failed;
        any_changed |= status.changed;
        passed_up.push((
            status
                .events
                .iter()
                .filter(|e| e.status == "success")
                .count(),
            status.events.iter().filter(|e| e.status == "noop").count() + refresh_noop,
            status.failed || (status.skipped && s.tagged),
        ));
        // A directory whose own and generated resources' events are all
        // noop would have refreshed (Puppet's whit for it says so).
        if let Some(Some(first)) = group_end.get(n) {
            let group: Vec<&ResourceStatus> = statuses[*first..]
                .iter()
                .chain(std::iter::once(&status))
                .collect();
            let events = group.iter().flat_map(|g| g.events.iter());
            let noops = events.clone().filter(|e| e.status == "noop").count();
            let clean = group.iter().all(|g| !g.failed) && events.count() == noops;
            if noops > 0 && clean {
                let parent = &steps[*first].resource;
                logs.push(Log {
                    level: "notice",
                    message: format!(
                        "Would have triggered 'refresh' from {noops} {}",
                        plural(noops)
                    ),
                    source: parent.title.clone(),
                    tags: ["notice", "whit"]
                        .into_iter()
                        .map(String::from)
                        .chain(parent.tags.iter().cloned())
                        .collect(),
                    time: info.now.clone(),
                    file: None,
                    line: None,
                });
            }
        }
        // A generated resource's whit (Puppet's completed marker of the
        // resource that generated it) receives its events: "Would have
        // triggered" when all are noop, and one more event passed to the
        // container either way.
        if let (Some(by), Some(last)) = (s.generated_by, passed_up.last_mut()) {
            let (changes, noops, bad) = *last;
            if changes == 0 && noops > 0 && !bad {
                logs.push(Log {
                    level: "notice",
                    message: format!(
                        "Would have triggered 'refresh' from {noops} {}",
                        plural(noops)
                    ),
                    source: by.to_string(),
                    tags: ["notice", "whit"]
                        .into_iter()
                        .map(String::from)
                        .chain(r.tags.iter().cloned())
                        .collect(),
                    time: info.now.clone(),
                    file: None,
                    line: None,
                });
            }
            if !bad {
                *last = (
                    changes + usize::from(changes > 0),
                    noops + usize::from(changes == 0 && noops > 0),
                    bad,
                );
            }
        }
        // The group passes one event to its container (its whit's), not
        // its members' events.
        if let Some(Some(first)) = group_end.get(n) {
            let members = &mut passed_up[*first..];
            let (changes, noops, bad) = members
                .iter()
                .fold((0, 0, false), |a, m| (a.0 + m.0, a.1 + m.1, a.2 || m.2));
            let own = (
                usize::from(changes > 0),
                usize::from(changes == 0 && noops > 0),
                bad,
            );
            for m in members.iter_mut() {
                *m = (0, 0, m.2);
            }
            if let Some(m) = members.first_mut() {
                *m = own;
            }
        }
        ends.push(logs.len());
        if let Some(t) = s.seconds {
            let key = r.type_key();
            match type_time.iter_mut().find(|(k, _, _)| *k == key) {
                Some(e) => e.2 += t,
                None => type_time.push((key, r.type_name.clone(), t)),
            }
        }
        statuses.push(status);
    }
    let notices = container_notices(steps, &passed_up, &info.tags, &info.now);
    for (at, notice) in notices.into_iter().rev() {
        let pos = ends.get(at).copied().unwrap_or(logs.len()).min(logs.len());
        logs.insert(pos, notice);
    }
    for ty in &unsupported {
        logs.push(puppet_log(
            "err",
            format!("Could not find a suitable provider for {ty}"),
            &info.now,
        ));
    }
    if let Some(e) = &info.error {
        logs.push(Log {
            level: "err",
            message: e.clone(),
            source: "Puppet".into(),
            tags: vec!["err".into()],
            time: info.now.clone(),
            file: None,
            line: None,
        });
    }
    logs.push(Log {
        level: "notice",
        message: format!("Applied catalog in {:.2} seconds", info.seconds),
        source: "Puppet".into(),
        tags: vec!["notice".into()],
        time: info.now.clone(),
        file: None,
        line: None,
    });
    let metrics = metrics(&statuses, &type_time, info.seconds, restarted);
    Report {
        host: info.host.to_string(),
        time: info.time.clone(),
        configuration_version: match info.catalog.version.parse::<u64>() {
            Ok(n) => Value::from(n),
            Err(_) => Value::String(info.catalog.version.clone()),
        },
        transaction_uuid: info.transaction_uuid.to_string(),
        job_id: info.job_id.map(String::from),
        report_format: 12,
        puppet_version: format!("ferry {}", env!("CARGO_PKG_VERSION")),
        status: if any_failed {
            RunStatus::Failed
        } else if any_changed {
            RunStatus::Changed
        } else {
            RunStatus::Unchanged
        },
        transaction_completed: info.finished,
        noop: info.noop,
        noop_pending,
        environment: info.catalog.environment.clone(),
        logs,
        metrics,
        resource_statuses: Statuses(statuses),
        corrective_change: false,
        catalog_uuid: info.catalog.catalog_uuid.clone(),
        cached_catalog_status: "not_used",
    }
}

/// A container (its completed marker) refreshes when events reach it:
/// silently when one of them is a change, with "Would have triggered
/// 'refresh' from N events" when all are noop events; either way it passes
/// one event to its own container. It receives nothing when something
/// inside it failed (the marker is skipped for failed dependencies) or,
/// with `--tags`, when it is not tagged. Notices come when the container
/// completes (after its last resource, innermost first); each is returned
/// with the step it follows.
fn container_notices(
    steps: &[StepInput<'_>],
    passed_up: &[(usize, usize, bool)],
    tags: &[String],
    now: &str,
) -> Vec<(usize, Log)> {
    struct Node {
        reference: String,
        last: usize,
        depth: usize,
        parent: Option<String>,
        changes: usize,
        noops: usize,
        blocked: bool,
    }
    let mut nodes: Vec<Node> = Vec::new();
    for (n, s) in steps.iter().enumerate() {
        let (changes, noops, bad) = passed_up.get(n).copied().unwrap_or_default();
        for (depth, c) in s.containers.iter().enumerate() {
            let reference = c.reference();
            let untagged = !tags.is_empty() && !c.tags.iter().any(|t| tags.contains(t));
            let parent = depth.checked_sub(1).map(|d| s.containers[d].reference());
            let node = match nodes.iter().position(|x| x.reference == reference) {
                Some(i) => &mut nodes[i],
                None => {
                    nodes.push(Node {
                        reference,
                        last: n,
                        depth,
                        parent,
                        changes: 0,
                        noops: 0,
                        blocked: untagged,
                    });
                    let last = nodes.len() - 1;
                    &mut nodes[last]
                }
            };
            node.last = n;
            node.blocked |= bad;
            if depth + 1 == s.containers.len() {
                node.changes += changes;
                node.noops += noops;
            }
        }
    }
    let mut order: Vec<usize> = (0..nodes.len()).collect();
    order.sort_by_key(|&i| (nodes[i].last, std::cmp::Reverse(nodes[i].depth)));
    let mut out = Vec::new();
    for i in order {
        let (changes, noops) = (nodes[i].changes, nodes[i].noops);
        if nodes[i].blocked || changes + noops == 0 {
            continue;
        }
        if let Some(p) = nodes[i].parent.clone()
            && let Some(x) = nodes.iter_mut().find(|x| x.reference == p)
        {
            if changes > 0 {
                x.changes += 1;
            } else {
                x.noops += 1;
            }
        }
        if changes > 0 {
            continue;
        }
        let reference = nodes[i].reference.clone();
        let tag = crate::apply::graph::parse_reference(&reference)
            .map(|(t, _)| t)
            .unwrap_or_default();
        out.push((
            nodes[i].last,
            Log {
                level: "notice",
                message: format!(
                    "Would have triggered 'refresh' from {noops} {}",
                    plural(noops)
                ),
                source: display_container(&reference),
                tags: vec!["notice".into(), tag],
                time: now.to_string(),
                file: None,
                line: None,
            },
        ));
    }
    out
}

/// `Class[main]` as Puppet's logs name a container: `Class[Main]`.
fn display_container(reference: &str) -> String {
    match crate::apply::graph::parse_reference(reference) {
        Some((t, title)) if t == "class" => {
            let fake = Resource::made("Class", title, Vec::new());
            format!("Class[{}]", path_segment(&fake))
        }
        _ => reference.to_string(),
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "event" } else { "events" }
}

/// Puppet's metrics of a run: resources, time (per type, then the run's),
/// changes and events.
pub fn metrics(
    statuses: &[ResourceStatus],
    type_time: &[(String, String, f64)],
    total: f64,
    restarted: u64,
) -> Metrics {
    let count =
        |f: &dyn Fn(&ResourceStatus) -> bool| statuses.iter().filter(|s| f(s)).count() as u64;
    let n = |name: &str, label: &str, v: u64| (name.to_string(), label.to_string(), Value::from(v));
    let events: Vec<&Event> = statuses.iter().flat_map(|s| s.events.iter()).collect();
    let ev_count = |st: &str| events.iter().filter(|e| e.status == st).count() as u64;
    let changes: u64 = statuses.iter().map(|s| s.change_count).sum();
    let mut time: Vec<(String, String, Value)> = type_time
        .iter()
        .map(|(k, label, t)| (k.clone(), label.clone(), Value::from(*t)))
        .collect();
    time.push(n("config_retrieval", "Config retrieval", 0));
    time.push((
        "transaction_evaluation".into(),
        "Transaction evaluation".into(),
        Value::from(total),
    ));
    time.push((
        "catalog_application".into(),
        "Catalog application".into(),
        Value::from(total),
    ));
    time.push(("total".into(), "Total".into(), Value::from(total)));
    let mut event_values = vec![
        n("total", "Total", events.len() as u64),
        n("failure", "Failure", ev_count("failure")),
        n("success", "Success", ev_count("success")),
    ];
    if ev_count("noop") > 0 {
        event_values.push(n("noop", "Noop", ev_count("noop")));
    }
    Metrics(vec![
        Metric {
            name: "resources",
            label: "Resources",
            values: vec![
                n("total", "Total", statuses.len() as u64),
                n("skipped", "Skipped", count(&|s| s.skipped)),
                n("failed", "Failed", count(&|s| s.failed)),
                n(
                    "failed_to_restart",
                    "Failed to restart",
                    count(&|s| s.failed_to_restart),
                ),
                n("restarted", "Restarted", restarted),
                n("changed", "Changed", count(&|s| s.changed)),
                n("out_of_sync", "Out of sync", count(&|s| s.out_of_sync)),
                n("scheduled", "Scheduled", 0),
                n("corrective_change", "Corrective change", 0),
            ],
        },
        Metric {
            name: "time",
            label: "Time",
            values: time,
        },
        Metric {
            name: "changes",
            label: "Changes",
            values: vec![n("total", "Total", changes)],
        },
        Metric {
            name: "events",
            label: "Events",
            values: event_values,
        },
    ])
}
