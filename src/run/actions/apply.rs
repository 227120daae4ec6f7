//! Applying a catalog on one target: for a manifest, the target's facts
//! (the built-in facts task, under the inventory's facts), trusted facts
//! as ACE makes them and a compile on a blocking thread; then the catalog
//! is prepared (`apply::Prepared`), its program run in one round trip on
//! stdin of `sh -s` (as the run-as user when there is one), and the lines
//! it prints read back as they arrive into Puppet's report. An apply is
//! reported successful only when the program reported its own end.
//! `source` files are read here, from the modulepath and the local file
//! system, so the pure core does no I/O. A caller that finds catalogs its
//! own way (the server's deploy jobs: classification, environment
//! negotiation, its catalog indirection) gives a [`CatalogProvider`]: it
//! gets the gathered facts and gives the catalog with the modulepath its
//! `puppet:///modules` sources come from, or a typed failure, plus the
//! notices the node's events show.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value};

use crate::apply::events::{self, Line};
use crate::apply::report::RunInfo;
use crate::apply::types::{SourceError, Sources};
use crate::apply::{ApplyCatalog, ApplyError, ApplyOptions, Prepared};
use crate::catalog::Modulepath;
use crate::catalog::{CompileOptions, CompileRequest, ManifestSource};
use crate::inventory::Target;
use crate::run::events::{Discard, Event, Sink};
use crate::run::result::{Outcome, Output};
use crate::transport::command::nonce;
use crate::transport::{Command, Stream, Transport, TransportError};

/// Where each target's catalog comes from.
#[derive(Debug, Clone)]
pub enum CatalogSource {
    /// One catalog for every target (`--catalog FILE`).
    Fixed(Arc<ApplyCatalog>),
    /// Compiled per target from its facts.
    Compile {
        manifest: ManifestSource,
        modulepath: Modulepath,
        environment: Option<PathBuf>,
        options: CompileOptions,
        /// The built-in facts task.
        facts_task: Arc<crate::task::Prepared>,
    },
    /// Given per target by a provider from its facts.
    Provided {
        provider: Arc<dyn CatalogProvider>,
        /// The built-in facts task.
        facts_task: Arc<crate::task::Prepared>,
    },
}

/// A note for a target's events from a [`CatalogProvider`] (see
/// [`Event::Notice`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    /// Puppet's log level: `notice`, `warning`, `err`.
    pub level: &'static str,
    /// What happened, as a kind (`ferry/environment-switch`...).
    pub code: &'static str,
    pub message: String,
}

/// Why a provider has no catalog for a target: the node fails with this
/// kind and message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ProvideError {
    /// The failure's kind (`ferry/classification-conflict`...).
    pub kind: String,
    pub message: String,
}

/// A catalog a provider found for a target.
#[derive(Debug)]
pub struct ProvidedCatalog {
    pub catalog: ApplyCatalog,
    /// Where its `puppet:///modules/M/P` sources are found (its
    /// environment's modulepath).
    pub modulepath: Modulepath,
}

/// What a provider gives for one target: its notices (events, in order)
/// and its catalog or why there is none.
#[derive(Debug)]
pub struct Provision {
    pub notices: Vec<Notice>,
    pub catalog: Result<ProvidedCatalog, ProvideError>,
}

impl Provision {
    /// Tells the sink the provider's notices, as the target's events.
    pub fn announce(&self, target: &str, sink: &dyn Sink) {
        for n in &self.notices {
            sink.event(&Event::Notice {
                target,
                level: n.level,
                code: n.code,
                message: &n.message,
            });
        }
    }
}

/// Finds each target's catalog from the facts gathered on it (the server's
/// deploy jobs implement it; it also keeps the facts where it wants them).
#[async_trait::async_trait]
pub trait CatalogProvider: Send + Sync + std::fmt::Debug {
    /// What the run's `object` names.
    fn describe(&self) -> String;
    /// The target's catalog; `device` when the target is a network
    /// device (its catalog needs the device types).
    async fn catalog(&self, target: &Target, facts: Map<String, Value>, device: bool) -> Provision;
}

/// An apply, as the executor runs it on each target.
#[derive(Debug, Clone)]
pub struct ApplyJob {
    pub source: CatalogSource,
    pub options: ApplyOptions,
    /// Where `puppet:///modules/M/P` sources are found.
    pub modulepath: Modulepath,
    /// Prepared catalogs shared by the targets whose catalogs and settings
    /// are the same.
    pub prepared: PreparedCache,
    /// Who hears each target's facts and report as they are made.
    pub observer: Option<Arc<dyn Observer>>,
}

/// What a caller hears of each target's apply as it goes: the facts
/// gathered for its compile and the report of its run (the server saves
/// them through its indirections). It cannot stop the apply.
#[async_trait::async_trait]
pub trait Observer: Send + Sync + std::fmt::Debug {
    async fn facts(&self, target: &str, facts: &Map<String, Value>);
    async fn report(&self, target: &str, report: &crate::apply::report::Report);
}

/// A catalog ready to apply and its program.
#[derive(Debug)]
pub struct Ready {
    pub prepared: Prepared,
    pub program: crate::apply::program::Program,
}

/// Prepared catalogs by the target settings they depend on (content
/// cache, tmpdir) and, for compiled catalogs, by what the catalog holds:
/// a catalog is ordered, read and written out once per run for all the
/// targets it is the same for (a fixed catalog: all of them; a manifest:
/// those whose facts do not change what it declares), rather than once per
/// target. Its identity (certname, version, uuid) stays each target's own.
#[derive(Debug, Clone, Default)]
pub struct PreparedCache(Arc<std::sync::Mutex<Vec<PreparedEntry>>>);

struct PreparedEntry {
    settings: (Option<String>, Option<String>),
    /// The compiled catalog it was prepared from (none for a fixed one).
    compiled: Option<ApplyCatalog>,
    ready: Arc<Ready>,
}

impl std::fmt::Debug for PreparedEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedEntry")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// How many different prepared catalogs a run keeps: past it, targets
/// whose catalogs all differ are prepared each on their own.
const PREPARED_MAX: usize = 8;

/// Whether two compiled catalogs declare the same thing, whatever node
/// they were compiled for.
fn same_content(a: &ApplyCatalog, b: &ApplyCatalog) -> bool {
    a.environment == b.environment && a.contains == b.contains && a.resources == b.resources
}

impl PreparedCache {
    /// The prepared catalog for these settings and (for a compiled
    /// catalog) this content, made by `make` when there is none yet.
    fn get_or_make(
        &self,
        options: &ApplyOptions,
        compiled: Option<&ApplyCatalog>,
        make: impl FnOnce() -> Result<Arc<Ready>, ApplyError>,
    ) -> Result<Arc<Ready>, ApplyError> {
        let settings = (options.content_cache.clone(), options.tmpdir.clone());
        let Ok(mut entries) = self.0.lock() else {
            return make();
        };
        let found = entries.iter().find(|e| {
            e.settings == settings
                && match (&e.compiled, compiled) {
                    (None, None) => true,
                    (Some(a), Some(b)) => same_content(a, b),
                    _ => false,
                }
        });
        if let Some(e) = found {
            return Ok(Arc::clone(&e.ready));
        }
        let ready = make()?;
        if entries.len() < PREPARED_MAX {
            entries.push(PreparedEntry {
                settings,
                compiled: compiled.cloned(),
                ready: Arc::clone(&ready),
            });
        }
        Ok(ready)
    }
}

impl ApplyJob {
    /// What the result's `object` names.
    pub fn object(&self) -> String {
        match &self.source {
            CatalogSource::Fixed(c) => format!("catalog for {}", c.name),
            CatalogSource::Compile {
                manifest: ManifestSource::File(p),
                ..
            } => p.display().to_string(),
            CatalogSource::Compile { .. } => "inline code".into(),
            CatalogSource::Provided { provider, .. } => provider.describe(),
        }
    }
}

/// Reads `source` parameters on the controller.
struct FsSources<'a> {
    modulepath: &'a Modulepath,
    environment: &'a str,
}

impl FsSources<'_> {
    /// The path of a `puppet:///modules/M/P` source on the modulepath,
    /// file or directory.
    fn locate(&self, uri: &str) -> Result<PathBuf, SourceError> {
        let Some(rest) = uri.strip_prefix("puppet:///modules/") else {
            return Err(SourceError::Unsupported(uri.into()));
        };
        let (module, file) = rest.split_once('/').unwrap_or((rest, ""));
        if file.split('/').any(|s| s == "..") || module.is_empty() || module.contains("..") {
            return Err(SourceError::NotFound(uri.into()));
        }
        let file = file.trim_end_matches('/');
        self.modulepath
            .candidates(module)
            .map(|m| m.join("files").join(file))
            .find(|p| p.exists())
            .ok_or_else(|| SourceError::NotFound(uri.into()))
    }
}

fn io_error(uri: &str, e: std::io::Error) -> SourceError {
    match e.kind() {
        std::io::ErrorKind::NotFound => SourceError::NotFound(uri.into()),
        _ => SourceError::Io {
            uri: uri.into(),
            message: e.to_string(),
        },
    }
}

impl Sources for FsSources<'_> {
    fn read(&self, uri: &str) -> Result<Vec<u8>, SourceError> {
        let path = self.locate(uri)?;
        if !path.is_file() {
            return Err(SourceError::NotFound(uri.into()));
        }
        std::fs::read(&path).map_err(|e| io_error(uri, e))
    }

    fn tree(&self, uri: &str) -> Result<Option<Vec<(String, bool)>>, SourceError> {
        let root = self.locate(uri)?;
        if !root.is_dir() {
            return Ok(None);
        }
        let mut entries = Vec::new();
        let mut todo = vec![root.clone()];
        while let Some(dir) = todo.pop() {
            for entry in std::fs::read_dir(&dir).map_err(|e| io_error(uri, e))? {
                let entry = entry.map_err(|e| io_error(uri, e))?;
                let path = entry.path();
                let rel = path
                    .strip_prefix(&root)
                    .map_err(|e| SourceError::Io {
                        uri: uri.into(),
                        message: e.to_string(),
                    })?
                    .to_str()
                    .ok_or_else(|| SourceError::Io {
                        uri: uri.into(),
                        message: format!("{} is not UTF-8", path.display()),
                    })?
                    .to_string();
                // A link is copied as what it points to; a linked
                // directory is not descended into (no link loop can make
                // this walk endless).
                let is_dir = path.is_dir();
                let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
                if is_dir && !is_link {
                    todo.push(path);
                }
                entries.push((rel, is_dir));
            }
        }
        entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        Ok(Some(entries))
    }

    fn environment(&self) -> &str {
        self.environment
    }
}

pub(super) fn failed(kind: &str, msg: String) -> Outcome {
    Outcome::Failed(Output::Task(serde_json::json!({
        "_error": {"kind": kind, "msg": msg, "details": {}}
    })))
}

/// RFC 3339 with nanoseconds, as Puppet's reports write times.
pub(super) fn rfc3339(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.9f+00:00").to_string()
}

/// The target's facts from the facts task, under its inventory facts.
async fn gather_facts(
    target: &Target,
    t: &dyn Transport,
    task: &Arc<crate::task::Prepared>,
    max_output: usize,
) -> Result<Result<Map<String, Value>, String>, TransportError> {
    let outcome = super::task::run(target, t, task, &Discard, max_output).await?;
    let mut facts = match outcome {
        Outcome::Ok(Output::Task(Value::Object(map))) => map,
        other => {
            let why = other
                .error()
                .map(|e| e.msg.into_owned())
                .unwrap_or_else(|| "the facts task gave no facts".into());
            return Ok(Err(format!("could not gather facts: {why}")));
        }
    };
    for (k, v) in &target.facts {
        facts.insert(k.clone(), v.clone());
    }
    Ok(Ok(facts))
}

/// The catalog of `manifest` for `target` with `facts` (trusted facts as
/// ACE makes them), compiled on a blocking thread; a compile error as its
/// message.
pub(super) async fn compile(
    target: &Target,
    facts: Map<String, Value>,
    manifest: &ManifestSource,
    modulepath: &Modulepath,
    environment: &Option<PathBuf>,
    options: &CompileOptions,
) -> Result<Result<ApplyCatalog, String>, TransportError> {
    let request = CompileRequest {
        manifest: manifest.clone(),
        modulepath: modulepath.clone(),
        facts,
        node: target.name.clone(),
        environment: environment.clone(),
    };
    let options = CompileOptions {
        trusted_authenticated: Some("remote".into()),
        ..options.clone()
    };
    let compiled = tokio::task::spawn_blocking(move || {
        crate::catalog::compile_with_options(&request, &crate::lang::loader::FsLoader, &options)
    })
    .await
    .map_err(|e| TransportError::Command(format!("the compiler stopped: {e}")))?;
    Ok(compiled
        .map(ApplyCatalog::from_compiled)
        .map_err(|e| e.to_string()))
}

/// Runs an apply on a connected target.
pub async fn run(
    target: &Target,
    t: &dyn Transport,
    job: &Arc<ApplyJob>,
    sink: &dyn Sink,
    max_output: usize,
) -> Result<Outcome, TransportError> {
    let settings = t.posix();
    let mut options = job.options.clone();
    // A run-as program runs in another user's home: its contents travel
    // inside the program.
    let cache_dir = settings
        .cache_dir
        .clone()
        .unwrap_or_else(|| super::task::DEFAULT_CACHE.to_string());
    options.content_cache = settings.run_as.is_none().then(|| cache_dir.clone());
    options.tmpdir = settings.tmpdir.clone();
    let prepare = |catalog: ApplyCatalog, options: ApplyOptions, modulepath: &Modulepath| {
        let environment = catalog.environment.clone();
        let sources = FsSources {
            modulepath,
            environment: &environment,
        };
        Prepared::new(catalog, options, &sources).map(|prepared| {
            let program = prepared.program();
            Arc::new(Ready { prepared, program })
        })
    };
    // A compiled catalog keeps its own identity for the report.
    let mut own_catalog = None;
    let ready = match &job.source {
        // One catalog for every target: prepared once per set of target
        // settings it depends on, and shared.
        CatalogSource::Fixed(c) => job.prepared.get_or_make(&options, None, || {
            prepare((**c).clone(), options.clone(), &job.modulepath)
        }),
        CatalogSource::Compile {
            manifest,
            modulepath,
            environment,
            options: compile_options,
            facts_task,
        } => {
            let facts = match gather_facts(target, t, facts_task, max_output).await? {
                Ok(f) => f,
                Err(msg) => return Ok(failed("ferry/apply-facts", msg)),
            };
            if let Some(o) = &job.observer {
                o.facts(&target.name, &facts).await;
            }
            let compiled = compile(
                target,
                facts,
                manifest,
                modulepath,
                environment,
                compile_options,
            )
            .await?;
            match compiled {
                Ok(catalog) => {
                    let ready = job.prepared.get_or_make(&options, Some(&catalog), || {
                        prepare(catalog.clone(), options.clone(), &job.modulepath)
                    });
                    own_catalog = Some(catalog);
                    ready
                }
                Err(msg) => return Ok(failed("ferry/apply-compile", msg)),
            }
        }
        CatalogSource::Provided {
            provider,
            facts_task,
        } => {
            let facts = match gather_facts(target, t, facts_task, max_output).await? {
                Ok(f) => f,
                Err(msg) => return Ok(failed("ferry/apply-facts", msg)),
            };
            let provision = provider.catalog(target, facts, false).await;
            provision.announce(&target.name, sink);
            match provision.catalog {
                Ok(ProvidedCatalog {
                    catalog,
                    modulepath,
                }) => {
                    // Catalogs of different environments never share a
                    // prepared one (`same_content` compares environments).
                    let ready = job.prepared.get_or_make(&options, Some(&catalog), || {
                        prepare(catalog.clone(), options.clone(), &modulepath)
                    });
                    own_catalog = Some(catalog);
                    ready
                }
                Err(e) => return Ok(failed(&e.kind, e.message)),
            }
        }
    };
    let ready = match ready {
        Ok(r) => r,
        Err(e) => return Ok(failed("ferry/apply-catalog", e.to_string())),
    };
    let prepared = &ready.prepared;
    let token = format!("ferry{}", nonce(&target.name));
    let command = Command::argv(["sh", "-s"])
        .with_stdin(ready.program.text(&token).into_bytes())
        .with_run_as(settings.run_as.clone());

    let started_wall = chrono::Utc::now();
    let started = Instant::now();
    let mut live = |line: &Line| live_event(prepared, &target.name, line, sink);
    let mut run = execute(t, &command, &token, &mut live).await;
    let need = run.lines.iter().find_map(|(_, l)| match l {
        Line::Need { cache, shas } => Some((cache.clone(), shas.clone())),
        _ => None,
    });
    if let Some((cache, shas)) = need {
        if let Err(e) = send_contents(t, prepared, &cache_dir, &cache, &shas).await {
            return Ok(failed("ferry/apply-contents", e.to_string()));
        }
        run = execute(t, &command, &token, &mut live).await;
        if run
            .lines
            .iter()
            .any(|(_, l)| matches!(l, Line::Need { .. }))
        {
            return Ok(failed(
                "ferry/apply-contents",
                "file contents sent to the target's cache still fail their sha256 check there"
                    .into(),
            ));
        }
    }
    let lock =
        |uid: &str| crate::apply::program::lock_path(prepared.options.tmpdir.as_deref(), uid);
    for (_, line) in &run.lines {
        match line {
            Line::Busy { pid, uid } => {
                let holder = pid.map(|p| format!(" (process {p})")).unwrap_or_default();
                return Ok(failed(
                    "ferry/apply-busy",
                    format!(
                        "another apply is running on this target{holder}: refused (its lock is {})",
                        lock(uid)
                    ),
                ));
            }
            Line::Foreign { uid, owner } => {
                let owner = match owner.as_str() {
                    "-" => "another user".to_string(),
                    o => format!("user id {o}"),
                };
                return Ok(failed(
                    "ferry/apply-lock",
                    format!(
                        "the apply lock {} belongs to {owner}, not to the user the apply runs as (user id {uid}): ferry did not make it and will not trust it; refused (remove it, or set a tmpdir only that user can write)",
                        lock(uid)
                    ),
                ));
            }
            _ => {}
        }
    }
    let Execution {
        lines,
        done,
        protocol_error,
        stderr_tail,
    } = run;
    let finished = lines.iter().any(|(_, l)| *l == Line::End);
    let error = match (&done, finished, &protocol_error) {
        (_, _, Some(p)) => Some(p.clone()),
        (Err(e), _, _) => Some(format!("The apply did not finish: {e}")),
        (Ok(_), false, _) => Some(format!(
            "The apply did not finish: the program on the target stopped before its end: {}",
            String::from_utf8_lossy(&stderr_tail).trim()
        )),
        (Ok(_), true, _) => None,
    };
    // Each step ran from the end of the one before to its own end.
    let n = prepared.order.steps.len();
    let mut timing: Vec<(Option<f64>, String)> = vec![(None, rfc3339(started_wall)); n];
    let mut last = started;
    for (at, line) in &lines {
        if let Line::Done { step } = line
            && let Some(slot) = timing.get_mut(*step)
        {
            let offset = last.duration_since(started);
            let start = started_wall + chrono::Duration::from_std(offset).unwrap_or_default();
            *slot = (Some(at.duration_since(last).as_secs_f64()), rfc3339(start));
            last = *at;
        }
    }
    let steps = prepared.report_steps(&timing);
    let only_lines: Vec<Line> = lines.into_iter().map(|(_, l)| l).collect();
    let info = RunInfo {
        host: &target.name,
        catalog: own_catalog.as_ref().unwrap_or(&prepared.catalog),
        transaction_uuid: &prepared
            .options
            .transaction_uuid
            .clone()
            .unwrap_or_else(|| uuid(&token)),
        job_id: prepared.options.job_id.as_deref(),
        noop: job.options.noop,
        time: rfc3339(started_wall),
        seconds: started.elapsed().as_secs_f64(),
        finished: finished && protocol_error.is_none(),
        error,
        now: rfc3339(chrono::Utc::now()),
        tags: job.options.wanted_tags(),
    };
    let report = crate::apply::report::build(&info, &steps, &only_lines);
    if let Some(o) = &job.observer {
        o.report(&target.name, &report).await;
    }
    Ok(
        if report.status == crate::apply::report::RunStatus::Failed {
            Outcome::Failed(Output::Apply(Box::new(report)))
        } else {
            Outcome::Ok(Output::Apply(Box::new(report)))
        },
    )
}

/// What one run of the program on the target gave.
struct Execution {
    /// The program's lines, with when each arrived.
    lines: Vec<(Instant, Line)>,
    done: Result<(), TransportError>,
    protocol_error: Option<String>,
    stderr_tail: Vec<u8>,
}

/// Passes a resource event on to the sink as it arrives.
fn live_event(prepared: &Prepared, target: &str, line: &Line, sink: &dyn Sink) {
    let (step, property, status, message) = match line {
        Line::Event {
            step,
            property,
            status,
            previous,
            detail,
        } => {
            let Some(kind) = prepared.kinds.get(*step) else {
                return;
            };
            let text = kind.describe(property, *status, previous, detail);
            (
                *step,
                Some(property.as_str()),
                status.as_str(),
                text.message,
            )
        }
        Line::Fail { step, code } => {
            let Some(kind) = prepared.kinds.get(*step) else {
                return;
            };
            (*step, None, "failure", kind.failure(code))
        }
        Line::Skip { step, .. } => (
            *step,
            None,
            "skipped",
            "Skipping because of failed dependencies".to_string(),
        ),
        _ => return,
    };
    let Some(resource) = prepared
        .order
        .steps
        .get(step)
        .and_then(|s| prepared.catalog.resources.get(s.resource))
    else {
        return;
    };
    sink.event(&Event::Resource {
        target,
        resource: &resource.reference(),
        property,
        status,
        message: &message,
    });
}

/// Runs the program once, reading its lines as they arrive (each one also
/// to `on_line`).
async fn execute(
    t: &dyn Transport,
    command: &Command,
    token: &str,
    on_line: &mut (dyn FnMut(&Line) + Send),
) -> Execution {
    let mut pending: Vec<u8> = Vec::new();
    let mut lines: Vec<(Instant, Line)> = Vec::new();
    let mut protocol_error: Option<String> = None;
    let mut stderr_tail: Vec<u8> = Vec::new();
    let mut feed = |stream: Stream, data: &[u8]| match stream {
        Stream::Stdout => {
            pending.extend_from_slice(data);
            while let Some(nl) = pending.iter().position(|&b| b == b'\n') {
                let raw: Vec<u8> = pending.drain(..=nl).collect();
                let text = String::from_utf8_lossy(&raw[..raw.len() - 1]).into_owned();
                match events::parse(token, &text) {
                    Some(Ok(line)) => {
                        on_line(&line);
                        lines.push((Instant::now(), line));
                    }
                    Some(Err(e)) => {
                        protocol_error.get_or_insert(e.to_string());
                    }
                    None => {}
                }
            }
        }
        Stream::Stderr => {
            if stderr_tail.len() < 8192 {
                stderr_tail.extend_from_slice(data);
            }
        }
    };
    let done = t.run(command, &mut feed).await.map(|_| ());
    Execution {
        lines,
        done,
        protocol_error,
        stderr_tail,
    }
}

/// Why file contents could not be put in the target's cache.
#[derive(Debug, thiserror::Error)]
enum ContentError {
    #[error("the target asked for a file content this catalog does not have: {0}")]
    Unknown(String),
    #[error("the target named {0:?} as its content cache, which is not the configured {1:?}")]
    WrongCache(String, String),
    #[error("could not send a file content to the target's cache: {0}")]
    Transport(#[from] TransportError),
}

/// Writes the contents the program asked for into the target's cache,
/// `CACHE/SHA/content` (the program made the directories). The cache the
/// target names must be the configured one.
async fn send_contents(
    t: &dyn Transport,
    prepared: &Prepared,
    configured: &str,
    cache: &str,
    shas: &[String],
) -> Result<(), ContentError> {
    let expected_tail = format!("/{}", configured.trim_start_matches("./"));
    let ok = if configured.starts_with('/') {
        cache == configured
    } else {
        cache.starts_with('/') && cache.ends_with(&expected_tail) && !cache.contains("/../")
    };
    if !ok {
        return Err(ContentError::WrongCache(cache.into(), configured.into()));
    }
    for sha in shas {
        let bytes = prepared
            .cached_content(sha)
            .ok_or_else(|| ContentError::Unknown(sha.clone()))?;
        let dest = format!("{cache}/{sha}/{}", crate::apply::program::CACHE_FILE);
        t.write_file(bytes, &dest, 0o600).await?;
    }
    Ok(())
}

/// A version 4 UUID made from the run's random token.
pub(super) fn uuid(token: &str) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(token.as_bytes());
    let mut b = [0u8; 16];
    b.copy_from_slice(&d[..16]);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex::encode(b);
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog(name: &str, message: &str) -> ApplyCatalog {
        let text = serde_json::json!({
            "name": name, "version": name, "environment": "production",
            "resources": [{"type": "Notify", "title": "hello", "tags": ["notify"],
                           "exported": false, "parameters": {"message": message}}],
            "edges": [], "classes": []
        });
        ApplyCatalog::from_json(&text.to_string(), "test.json").unwrap()
    }

    fn ready(c: &ApplyCatalog) -> Result<Arc<Ready>, ApplyError> {
        struct NoSources;
        impl Sources for NoSources {
            fn read(&self, uri: &str) -> Result<Vec<u8>, SourceError> {
                Err(SourceError::NotFound(uri.into()))
            }
            fn tree(&self, _: &str) -> Result<Option<Vec<(String, bool)>>, SourceError> {
                Ok(None)
            }
            fn environment(&self) -> &str {
                "production"
            }
        }
        let prepared = Prepared::new(c.clone(), ApplyOptions::default(), &NoSources)?;
        let program = prepared.program();
        Ok(Arc::new(Ready { prepared, program }))
    }

    #[test]
    fn targets_whose_catalogs_declare_the_same_share_one_prepared_catalog() {
        let cache = PreparedCache::default();
        let options = ApplyOptions::default();
        let (a, b) = (catalog("node1", "hi"), catalog("node2", "hi"));
        let first = cache.get_or_make(&options, Some(&a), || ready(&a)).unwrap();
        let second = cache
            .get_or_make(&options, Some(&b), || panic!("not made again"))
            .unwrap();
        assert!(Arc::ptr_eq(&first, &second));
    }

    #[test]
    fn a_catalog_that_differs_or_other_settings_get_their_own() {
        let cache = PreparedCache::default();
        let options = ApplyOptions::default();
        let (a, b) = (catalog("node1", "hi"), catalog("node2", "bye"));
        let first = cache.get_or_make(&options, Some(&a), || ready(&a)).unwrap();
        let other = cache.get_or_make(&options, Some(&b), || ready(&b)).unwrap();
        assert!(!Arc::ptr_eq(&first, &other));
        assert_eq!(other.prepared.catalog.name, "node2");
        // Another tmpdir, or a fixed catalog, is never served a compiled one.
        let elsewhere = ApplyOptions {
            tmpdir: Some("/var/tmp".into()),
            ..ApplyOptions::default()
        };
        let moved = cache
            .get_or_make(&elsewhere, Some(&a), || ready(&a))
            .unwrap();
        assert!(!Arc::ptr_eq(&first, &moved));
        let fixed = cache.get_or_make(&options, None, || ready(&a)).unwrap();
        assert!(!Arc::ptr_eq(&first, &fixed));
    }

    #[test]
    fn a_catalog_that_cannot_be_prepared_is_not_kept() {
        let cache = PreparedCache::default();
        let options = ApplyOptions::default();
        let a = catalog("node1", "hi");
        let failed = cache.get_or_make(&options, Some(&a), || {
            Err(ApplyError::from(crate::apply::graph::GraphError::Cycle {
                count: 1,
                cycles: "x".into(),
            }))
        });
        assert!(failed.is_err());
        let made = cache.get_or_make(&options, Some(&a), || ready(&a));
        assert!(made.is_ok());
    }
}
