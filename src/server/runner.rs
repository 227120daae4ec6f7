//! Running a job: the shared executor with one more [`Sink`], the store.
//! The sink turns executor events into job events and hands them, in order,
//! to a writer task that writes each one (with the node's state and result)
//! in a transaction and only then broadcasts it to event-stream subscribers.
//! A job ends with `job_finished`, always its last event: the work runs in
//! a task of its own under a supervisor, so a panic inside it still ends
//! the job (`failed`, with an event), never leaving it `running`. Results
//! are scrubbed of server paths before they are stored or returned.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use super::AppState;
use super::scrub::Scrub;
use crate::inventory::Target;
use crate::run::events::{Event, Sink};
use crate::run::{self, Action, Outcome as RunOutcome, RunOptions, Stop, Summary, TargetResult};
use crate::store::{EventKind, EventRecord, JobRecord, JobState, NodeState};

/// One event of one job, as broadcast to stream subscribers.
#[derive(Clone, Debug)]
pub struct JobEvent {
    pub job: i64,
    pub event: EventRecord,
}

/// What a job runs.
pub struct JobSpec {
    pub kind: String,
    pub owner: String,
    pub description: String,
    /// The request with secrets redacted (stored).
    pub request: Value,
    pub targets: Vec<Target>,
    pub action: Action,
    pub options: RunOptions,
    /// Server paths to take out of results before they are stored or returned.
    pub scrub: Scrub,
}

enum Msg {
    Started(String),
    /// An event that changes no state: kind, node, message, details.
    Plain(EventKind, Option<String>, String, Value),
    /// A resource event: node, details.
    Resource(String, String, Value),
    Finished(TargetResult),
}

/// The store's sink: forwards events to the job's writer task. A plan
/// job's sink (`steps`) records each step's start too (`task_start`,
/// `command_start`...).
struct StoreSink {
    tx: Tx,
    steps: bool,
}

/// Where a sink sends: the job's writer, or the writer while the job's
/// work lives (see [`Recorder::weak`]).
enum Tx {
    Strong(mpsc::UnboundedSender<Msg>),
    Weak(mpsc::WeakUnboundedSender<Msg>),
}

impl Tx {
    fn send(&self, msg: Msg) {
        match self {
            Tx::Strong(tx) => {
                let _ = tx.send(msg);
            }
            Tx::Weak(weak) => {
                if let Some(tx) = weak.upgrade() {
                    let _ = tx.send(msg);
                }
            }
        }
    }
}

/// The event kind of a plan step's start, by the executor's action name.
fn step_kind(action: &str) -> Option<EventKind> {
    Some(match action {
        "task" => EventKind::TaskStart,
        "command" => EventKind::CommandStart,
        "script" => EventKind::ScriptStart,
        "upload" => EventKind::UploadStart,
        "download" => EventKind::DownloadStart,
        "apply" => EventKind::ApplyStart,
        _ => return None,
    })
}

impl Sink for StoreSink {
    fn event(&self, event: &Event<'_>) {
        let msg = match event {
            Event::RunStarted {
                action,
                object,
                target_count,
            } if self.steps => {
                let Some(kind) = step_kind(action) else {
                    return;
                };
                let plural = if *target_count == 1 { "" } else { "s" };
                Msg::Plain(
                    kind,
                    None,
                    format!("Started {action} '{object}' on {target_count} target{plural}"),
                    json!({ "action": action, "object": object, "target_count": target_count }),
                )
            }
            Event::TargetStarted { target } => Msg::Started((*target).to_string()),
            Event::TargetFinished(result) => Msg::Finished((*result).clone()),
            Event::Resource {
                target,
                resource,
                property,
                status,
                message,
            } => Msg::Resource(
                (*target).to_string(),
                format!("{resource}: {message}"),
                json!({
                    "resource": resource,
                    "property": property,
                    "status": status,
                    "message": message,
                }),
            ),
            Event::Notice {
                target,
                level,
                code,
                message,
            } => Msg::Plain(
                EventKind::NodeMessage,
                Some((*target).to_string()),
                (*message).to_string(),
                json!({ "level": level, "code": code, "message": message }),
            ),
            _ => return,
        };
        self.tx.send(msg);
    }
}

/// The event kind and node state for a finished target: a command or task
/// that ran and failed is `node_failed`; one that could not run (no
/// connection, a failed transfer, no implementation for the target) is
/// `node_errored`.
fn classify(outcome: &RunOutcome) -> (EventKind, NodeState, &'static str) {
    match outcome {
        RunOutcome::Ok(_) => (EventKind::NodeFinished, NodeState::Finished, "Finished"),
        RunOutcome::Failed(_) => (EventKind::NodeFailed, NodeState::Failed, "Failed"),
        RunOutcome::Errored(_) => (EventKind::NodeErrored, NodeState::Failed, "Errored"),
    }
}

/// Writes one job's events in order; returns the next free event id.
async fn writer(
    state: Arc<AppState>,
    job: i64,
    mut rx: mpsc::UnboundedReceiver<Msg>,
    scrub: Scrub,
) -> i64 {
    let mut next_id = 1;
    let mut started: HashMap<String, Instant> = HashMap::new();
    while let Some(msg) = rx.recv().await {
        let outcome = match msg {
            Msg::Started(node) => {
                started.insert(node.clone(), Instant::now());
                let event = EventRecord::new(
                    next_id,
                    EventKind::NodeRunning,
                    Some(&node),
                    &format!("Started running on {node}"),
                    json!({}),
                );
                state.store.node_started(job, &event).await.map(|()| event)
            }
            Msg::Plain(kind, node, message, mut details) => {
                // A node's message may name server files (a broken
                // environment): shown by their neutral names.
                let message = if kind == EventKind::NodeMessage {
                    let text = scrub.text(&message);
                    details["message"] = json!(text);
                    text
                } else {
                    message
                };
                let event = EventRecord::new(next_id, kind, node.as_deref(), &message, details);
                state.store.add_event(job, &event).await.map(|()| event)
            }
            Msg::Resource(node, message, details) => {
                let event = EventRecord::new(
                    next_id,
                    EventKind::ResourceEvent,
                    Some(&node),
                    &message,
                    details,
                );
                state.store.add_event(job, &event).await.map(|()| event)
            }
            Msg::Finished(mut result) => {
                scrub.result(&mut result);
                let (kind, node_state, verb) = classify(&result.outcome);
                let took = started
                    .remove(&result.target)
                    .map(|s| s.elapsed())
                    .unwrap_or_default();
                state
                    .metrics
                    .target_finished(if result.ok() { "success" } else { "failure" }, took);
                let event = EventRecord::new(
                    next_id,
                    kind,
                    Some(&result.target),
                    &format!("{verb} on {}", result.target),
                    json!({ "result": result.outcome, "duration": took.as_secs_f64() }),
                );
                let value = serde_json::to_value(&result).unwrap_or(Value::Null);
                state
                    .store
                    .node_finished(job, node_state, &value, &event)
                    .await
                    .map(|()| event)
            }
        };
        match outcome {
            Ok(event) => {
                next_id += 1;
                let _ = state.hub.send(JobEvent { job, event });
            }
            Err(e) => tracing::error!(job, "cannot record an event: {e}"),
        }
    }
    next_id
}

/// How a job ended, as its handle reports it.
#[derive(Debug)]
pub enum Outcome {
    /// It ran to the end (some targets may have failed).
    Finished(Summary),
    /// It was stopped before it finished.
    Stopped,
    /// Its runner failed (a panic or a store error): the job is `failed`.
    Failed(String),
    /// A plan job ran to its end: `ok` when the plan returned a value
    /// (not an error).
    Plan { ok: bool },
}

/// What a job's work gives back when it ends.
pub enum Done {
    /// A run over targets.
    Run(Summary),
    /// A plan, which succeeded or failed.
    Plan { ok: bool },
}

/// What a job's work records through: the executor's sink, and events of
/// its own (a plan's start, messages and end).
#[derive(Clone)]
pub struct Recorder {
    tx: mpsc::UnboundedSender<Msg>,
    stop: Stop,
}

impl Recorder {
    /// A sink for one run of the executor; `steps` records each run's
    /// start as a plan step event.
    pub fn sink(&self, steps: bool) -> Arc<dyn Sink> {
        Arc::new(StoreSink {
            tx: Tx::Strong(self.tx.clone()),
            steps,
        })
    }

    /// Records an event that changes no node's state, in order with the
    /// executor's.
    pub fn record(&self, kind: EventKind, message: &str, details: Value) {
        let _ = self
            .tx
            .send(Msg::Plain(kind, None, message.to_string(), details));
    }

    /// A recorder that records only while this one (the job's work) lives:
    /// for work that may outlive its job, such as a Puppet-language plan's
    /// evaluation thread after the job was stopped, so the job's events
    /// end when the job does.
    pub fn weak(&self) -> WeakRecorder {
        WeakRecorder(self.tx.downgrade(), self.stop.clone())
    }

    /// Set when the job is stopped: work that runs beyond the job's task
    /// (a plan's evaluation thread) watches it and ends by itself.
    pub fn stop(&self) -> &Stop {
        &self.stop
    }
}

/// See [`Recorder::weak`].
#[derive(Clone)]
pub struct WeakRecorder(mpsc::WeakUnboundedSender<Msg>, Stop);

impl WeakRecorder {
    /// [`Recorder::sink`], whose events are dropped once the job's work
    /// has ended.
    pub fn sink(&self, steps: bool) -> Arc<dyn Sink> {
        Arc::new(StoreSink {
            tx: Tx::Weak(self.0.clone()),
            steps,
        })
    }

    /// [`Recorder::record`] while the job's work lives.
    pub fn record(&self, kind: EventKind, message: &str, details: Value) {
        if let Some(tx) = self.0.upgrade() {
            Recorder {
                tx,
                stop: self.1.clone(),
            }
            .record(kind, message, details);
        }
    }
}

/// Records a job and starts it under a supervisor that always ends it
/// with `job_finished`, even when the work inside panics.
pub async fn launch(
    state: &Arc<AppState>,
    spec: JobSpec,
) -> Result<(JobRecord, JoinHandle<Outcome>), crate::store::StoreError> {
    let JobSpec {
        kind,
        owner,
        description,
        request,
        targets,
        action,
        options,
        scrub,
    } = spec;
    // Each node's result, stored and returned, keeps at most `max-output`
    // bytes of each stream, whatever the target prints.
    let mut options = options;
    options.overrides.max_output = Some(state.config.max_output);
    let names: Vec<String> = targets.iter().map(|t| t.name.clone()).collect();
    let record = state
        .store
        .create_job(&kind, &owner, &description, &request, &names)
        .await?;
    // A Puppet run started by a job reports that job's id, as an agent
    // run by the orchestrator does.
    let action = match action {
        Action::Apply(job) if job.options.job_id.is_none() => {
            let mut job = (*job).clone();
            job.options.job_id = Some(record.id.to_string());
            Action::Apply(Arc::new(job))
        }
        other => other,
    };
    let handle = start(state, record.id, scrub, move |sink| async move {
        run::run(targets, action, &options, sink).await
    });
    Ok((record, handle))
}

/// Runs `work` as the recorded job `job`: it gets the sink that writes the
/// job's events, runs in a task of its own, and whatever becomes of it
/// (done, stopped through the API, panicked) the job ends with
/// `job_finished`. The handle reports how it ended.
pub fn start<W, F>(state: &Arc<AppState>, job: i64, scrub: Scrub, work: W) -> JoinHandle<Outcome>
where
    W: FnOnce(Arc<dyn Sink>) -> F + Send + 'static,
    F: Future<Output = Summary> + Send + 'static,
{
    start_with(state, job, scrub, move |rec: Recorder| async move {
        let stop = rec.stop().clone();
        // A stopped run is cut off at once: the job ends `stopped`, and
        // this summary is never reported.
        Done::Run(stop.or(work(rec.sink(false))).await.unwrap_or_default())
    })
}

/// [`start`] for work that records events of its own (a plan job): it
/// gets the job's [`Recorder`] and says how it ended.
pub fn start_with<W, F>(
    state: &Arc<AppState>,
    job: i64,
    scrub: Scrub,
    work: W,
) -> JoinHandle<Outcome>
where
    W: FnOnce(Recorder) -> F + Send + 'static,
    F: Future<Output = Done> + Send + 'static,
{
    state.metrics.job_started();
    let (stop_tx, stop_rx) = watch::channel(false);
    state.stops().insert(job, stop_tx);
    tokio::spawn(supervise(Arc::clone(state), job, scrub, work, stop_rx))
}

/// How long the end of a job waits for its events to be written.
const WRITER_GRACE: Duration = Duration::from_secs(10);

/// How long a stopped job's work may take to end by itself (a plan's
/// evaluation cutting off its step, closing its connections) before it
/// is aborted.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// Runs the job's work in a task of its own and ends the job whatever
/// becomes of that task: finished, stopped, or failed when it panicked.
async fn supervise<W, F>(
    state: Arc<AppState>,
    job: i64,
    scrub: Scrub,
    work: W,
    mut stop: watch::Receiver<bool>,
) -> Outcome
where
    W: FnOnce(Recorder) -> F + Send + 'static,
    F: Future<Output = Done> + Send + 'static,
{
    if let Err(e) = state.store.set_job_state(job, JobState::Running).await {
        tracing::error!(job, "cannot mark the job running: {e}");
    }
    let (tx, rx) = mpsc::unbounded_channel();
    let mut written = tokio::spawn(writer(Arc::clone(&state), job, rx, scrub.clone()));
    let signal = Stop::default();
    let mut work = tokio::spawn(work(Recorder {
        tx,
        stop: signal.clone(),
    }));
    let mut abandoned = false;
    // `stop` stays alive until the job is recorded as ended, so a stop that
    // comes meanwhile is taken by this job, not left unheard.
    let stopped = async {
        if stop.wait_for(|s| *s).await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    let outcome = tokio::select! {
        joined = &mut work => match joined {
            Ok(Done::Run(mut summary)) => {
                for r in &mut summary.results {
                    scrub.result(r);
                }
                Outcome::Finished(summary)
            }
            Ok(Done::Plan { ok }) => Outcome::Plan { ok },
            Err(e) => {
                tracing::error!(job, "the job's runner failed: {e}");
                Outcome::Failed(if e.is_panic() { "panicked".into() } else { e.to_string() })
            }
        },
        () = stopped => {
            signal.trigger();
            if tokio::time::timeout(STOP_GRACE, &mut work).await.is_err() {
                tracing::error!(job, "the stopped job's work did not end in time; aborted");
                abandoned = true;
                work.abort();
                // Aborted: its sink is dropped, so the writer can finish.
                let _ = work.await;
            }
            Outcome::Stopped
        }
    };
    // The writer drains what the work sent and returns the next event id.
    let next_id = match tokio::time::timeout(WRITER_GRACE, &mut written).await {
        Ok(Ok(next)) => Some(next),
        Ok(Err(e)) => {
            tracing::error!(job, "the job's event writer failed: {e}");
            None
        }
        Err(_) => {
            tracing::error!(job, "the job's event writer did not finish; abandoned");
            written.abort();
            None
        }
    };
    let next_id = match next_id {
        Some(n) => n,
        None => state.store.next_event_id(job).await.unwrap_or(i64::MAX),
    };
    let (job_state, node_state, message, details) = match &outcome {
        Outcome::Stopped => (
            JobState::Stopped,
            NodeState::Stopped,
            "The job was stopped".to_string(),
            if abandoned {
                json!({ "state": "stopped", "reason": "work-abandoned" })
            } else {
                json!({ "state": "stopped" })
            },
        ),
        Outcome::Finished(s) => {
            let job_state = if s.all_ok() {
                JobState::Finished
            } else {
                JobState::Failed
            };
            (
                job_state,
                NodeState::Failed,
                format!(
                    "The job {} ({} of {} targets succeeded)",
                    job_state,
                    s.succeeded().count(),
                    s.results.len()
                ),
                json!({ "state": job_state }),
            )
        }
        Outcome::Plan { ok } => {
            let job_state = if *ok {
                JobState::Finished
            } else {
                JobState::Failed
            };
            (
                job_state,
                NodeState::Failed,
                format!("The plan job {job_state}"),
                json!({ "state": job_state }),
            )
        }
        Outcome::Failed(_) => (
            JobState::Failed,
            NodeState::Failed,
            "The job failed: its runner stopped unexpectedly (see the server's log)".to_string(),
            json!({ "state": "failed", "reason": "runner-failed" }),
        ),
    };
    let event = EventRecord::new(next_id, EventKind::JobFinished, None, &message, details);
    end(&state, job, job_state, node_state, event).await;
    state.stops().remove(&job);
    drop(stop);
    outcome
}

/// Records the end of a job (retrying a failing store a few times) and
/// broadcasts `job_finished` when this call ended it.
pub async fn end(
    state: &AppState,
    job: i64,
    job_state: JobState,
    node_state: NodeState,
    event: EventRecord,
) {
    for attempt in 1..=3u32 {
        match state
            .store
            .finish_job(job, job_state, node_state, &event)
            .await
        {
            Ok(true) => {
                state.metrics.job_finished(job_state.as_str());
                let _ = state.hub.send(JobEvent { job, event });
                return;
            }
            Ok(false) => return,
            Err(e) => {
                tracing::error!(job, attempt, "cannot record the end of the job: {e}");
                tokio::time::sleep(Duration::from_millis(200 * u64::from(attempt))).await;
            }
        }
    }
}
