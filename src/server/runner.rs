//! Running a job: the shared executor with one more [`Sink`], the store.
//! The sink turns executor events into job events and hands them, in order,
//! to a writer task that writes each one (with the node's state and result)
//! in a transaction and only then broadcasts it to event-stream subscribers.
//! A job ends with `job_finished`, always its last event.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::AppState;
use crate::events::{Event, Sink};
use crate::executor::{self, Action, RunOptions, Summary, TargetResult};
use crate::inventory::Target;
use crate::store::{EventRecord, JobRecord};

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
}

enum Msg {
    Started(String),
    Finished(TargetResult),
}

/// The store's sink: forwards events to the job's writer task.
struct StoreSink(mpsc::UnboundedSender<Msg>);

impl Sink for StoreSink {
    fn event(&self, event: &Event<'_>) {
        let msg = match event {
            Event::TargetStarted { target } => Msg::Started((*target).to_string()),
            Event::TargetFinished(result) => Msg::Finished((*result).clone()),
            _ => return,
        };
        let _ = self.0.send(msg);
    }
}

/// The event kind and node state for a finished target: a command that ran
/// and failed is `node_failed`; one that could not run is `node_errored`.
fn classify(result: &TargetResult) -> (&'static str, &'static str) {
    if result.ok() {
        return ("node_finished", "finished");
    }
    let kind = result
        .error()
        .and_then(|e| e.get("kind"))
        .and_then(Value::as_str);
    if kind == Some("ferry/command-error") || result.value.get("exit_code").is_some() {
        ("node_failed", "failed")
    } else {
        ("node_errored", "failed")
    }
}

/// Writes one job's events in order; returns the next free event id.
async fn writer(state: Arc<AppState>, job: i64, mut rx: mpsc::UnboundedReceiver<Msg>) -> i64 {
    let mut next_id = 1;
    let mut started: HashMap<String, Instant> = HashMap::new();
    while let Some(msg) = rx.recv().await {
        let outcome = match msg {
            Msg::Started(node) => {
                started.insert(node.clone(), Instant::now());
                let event = EventRecord::new(
                    next_id,
                    "node_running",
                    Some(&node),
                    &format!("Started running on {node}"),
                    json!({}),
                );
                state.store.node_started(job, &event).await.map(|()| event)
            }
            Msg::Finished(result) => {
                let (kind, node_state) = classify(&result);
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
                    &format!("{} on {}", node_state_text(kind), result.target),
                    json!({ "result": result.value, "duration": took.as_secs_f64() }),
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

fn node_state_text(kind: &str) -> &'static str {
    match kind {
        "node_finished" => "Finished",
        "node_failed" => "Failed",
        _ => "Errored",
    }
}

/// Records a job and starts it. The handle yields the summary, or `None`
/// when the job was stopped.
pub async fn launch(
    state: &Arc<AppState>,
    spec: JobSpec,
) -> Result<(JobRecord, JoinHandle<Option<Summary>>), crate::store::StoreError> {
    // Each node's result, stored and returned, keeps at most `max-output`
    // bytes of each stream, whatever the target prints.
    let mut spec = spec;
    spec.options.overrides.max_output = Some(state.config.max_output);
    let names: Vec<String> = spec.targets.iter().map(|t| t.name.clone()).collect();
    let record = state
        .store
        .create_job(
            &spec.kind,
            &spec.owner,
            &spec.description,
            &spec.request,
            &names,
        )
        .await?;
    state.metrics.job_started();
    let (stop_tx, stop_rx) = oneshot::channel();
    state.stops().insert(record.id, stop_tx);
    let job = record.id;
    let state = Arc::clone(state);
    let handle = tokio::spawn(async move { run(state, job, spec, stop_rx).await });
    Ok((record, handle))
}

async fn run(
    state: Arc<AppState>,
    job: i64,
    spec: JobSpec,
    stop: oneshot::Receiver<()>,
) -> Option<Summary> {
    if let Err(e) = state.store.set_job_state(job, "running").await {
        tracing::error!(job, "cannot mark the job running: {e}");
    }
    let (tx, rx) = mpsc::unbounded_channel();
    let written = tokio::spawn(writer(Arc::clone(&state), job, rx));
    let sink: Arc<dyn Sink> = Arc::new(StoreSink(tx));
    let summary = tokio::select! {
        s = executor::run(spec.targets, spec.action, &spec.options, sink) => Some(s),
        _ = stop => None,
    };
    let next_id = written.await.unwrap_or(1);
    state.stops().remove(&job);
    let (job_state, node_state) = match &summary {
        None => ("stopped", "stopped"),
        Some(s) if s.all_ok() => ("finished", "failed"),
        Some(_) => ("failed", "failed"),
    };
    let message = match &summary {
        None => "The job was stopped".to_string(),
        Some(s) => format!(
            "The job {} ({} of {} targets succeeded)",
            job_state,
            s.succeeded().count(),
            s.results.len()
        ),
    };
    let event = EventRecord::new(
        next_id,
        "job_finished",
        None,
        &message,
        json!({ "state": job_state }),
    );
    match state
        .store
        .finish_job(job, job_state, node_state, &event)
        .await
    {
        Ok(()) => {
            let _ = state.hub.send(JobEvent { job, event });
        }
        Err(e) => tracing::error!(job, "cannot record the end of the job: {e}"),
    }
    state.metrics.job_finished(job_state);
    summary
}
