//! A job's events as server-sent events
//! (`GET /orchestrator/v1/jobs/{id}/events/stream?start=N`): first the
//! stored events from `start`, then live ones as they are recorded, ending
//! after `job_finished` (or at once, after what is stored, when the job
//! has already ended: a `start` past its last event). The subscription is taken before the store is
//! read and events are only broadcast after they are written, so nothing
//! falls between the two; a subscriber that lags re-reads the store.

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::{Path, RawQuery, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use tokio::sync::{broadcast, mpsc};

use crate::server::AppState;
use crate::server::http::errors::ApiError;
use crate::server::http::limits;
use crate::store::{EventKind, EventRecord};

/// Stored events are replayed this many at a time, so a stream whose
/// client does not read holds at most a page (and its channel) in memory.
const PAGE: i64 = 64;

fn sse_event(e: &EventRecord) -> Event {
    Event::default()
        .event(e.kind.as_str())
        .id(e.id.to_string())
        .data(e.to_json().to_string())
}

/// A job's events as server-sent events, ending after `job_finished`.
#[utoipa::path(get, path = "/orchestrator/v1/jobs/{id}/events/stream",
    params(("id" = i64, Path, description = "The job's id (its name)"), ("start" = Option<i64>, Query, description = "The first event's id")),
    responses((status = 200, description = "event: <type>, id: <n>, data: <event JSON>", content_type = "text/event-stream", body = String)))]
pub async fn stream(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let id: i64 = id
        .parse()
        .map_err(|_| ApiError::not_found(format!("no job '{id}'")))?;
    let start = limits::query_number(&query, "start", 0, limits::MAX_POSITION)?
        .unwrap_or(1)
        .max(1);
    let live = state.hub.subscribe();
    if state.store.job(id).await?.is_none() {
        return Err(ApiError::not_found(format!("no job {id}")));
    }
    let (tx, rx) = mpsc::channel::<Event>(64);
    tokio::spawn(feed(Arc::clone(&state), id, start, live, tx));
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|e| (Ok::<_, Infallible>(e), rx))
    });
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response())
}

/// Sends stored then live events of `job` until `job_finished` or the
/// client goes away.
async fn feed(
    state: Arc<AppState>,
    job: i64,
    start: i64,
    mut live: broadcast::Receiver<crate::server::runner::JobEvent>,
    tx: mpsc::Sender<Event>,
) {
    let mut next = start;
    // Replays stored events from `next`; true once job_finished was sent.
    async fn replay(
        state: &AppState,
        job: i64,
        next: &mut i64,
        tx: &mpsc::Sender<Event>,
    ) -> Option<bool> {
        loop {
            let events = match state.store.events_page(job, *next, PAGE).await {
                Ok(events) => events,
                Err(e) => {
                    tracing::error!(job, "event stream: {e}");
                    return None;
                }
            };
            for e in &events {
                tx.send(sse_event(e)).await.ok()?;
                *next = e.id + 1;
                if e.kind == EventKind::JobFinished {
                    return Some(true);
                }
            }
            if events.len() < PAGE as usize {
                break;
            }
        }
        Some(false)
    }
    match replay(&state, job, &mut next, &tx).await {
        Some(false) => {}
        _ => return,
    }
    // A job that has ended has nothing more to send (a `start` past its
    // `job_finished` replays nothing): the stream ends. Whatever it wrote
    // before ending is in the store, so one more replay sends it.
    match state.store.job(job).await {
        Ok(Some(record)) if !record.is_done() => {}
        Ok(_) => {
            let _ = replay(&state, job, &mut next, &tx).await;
            return;
        }
        Err(e) => {
            tracing::error!(job, "event stream: {e}");
            return;
        }
    }
    loop {
        let received = tokio::select! {
            r = live.recv() => r,
            // The client went away: stop following the job.
            _ = tx.closed() => return,
        };
        match received {
            Ok(ev) if ev.job == job && ev.event.id >= next => {
                if ev.event.id > next {
                    // Something was missed: the store has it.
                    match replay(&state, job, &mut next, &tx).await {
                        Some(false) => continue,
                        _ => return,
                    }
                }
                if tx.send(sse_event(&ev.event)).await.is_err() {
                    return;
                }
                next = ev.event.id + 1;
                if ev.event.kind == EventKind::JobFinished {
                    return;
                }
            }
            Ok(_) => {}
            Err(broadcast::error::RecvError::Lagged(_)) => {
                match replay(&state, job, &mut next, &tx).await {
                    Some(false) => {}
                    _ => return,
                }
            }
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}
