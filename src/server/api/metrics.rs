//! Counters and durations in Prometheus' text format (`GET /metrics`),
//! recorded through the `metrics` facade into a Prometheus recorder of the
//! server's own (`metrics-exporter-prometheus`, no global recorder, so two
//! servers in one process keep separate figures): requests by endpoint and
//! status, request durations as a histogram, jobs started and finished by
//! final state, targets run by status and their durations, module files
//! served, uptime. Endpoints are labelled by their action name, never by
//! raw path, so ids do not multiply the series.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use metrics::{counter, describe_counter, describe_gauge, describe_histogram, gauge, histogram};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusRecorder};

use crate::server::AppState;
use crate::server::http::auth::action_for;

/// The upper bounds of the duration histograms' buckets, in seconds.
const BUCKETS: [f64; 12] = [
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

const REQUESTS: &str = "ferry_http_requests_total";
const REQUEST_SECONDS: &str = "ferry_http_request_duration_seconds";
const JOBS_STARTED: &str = "ferry_jobs_started_total";
const JOBS_FINISHED: &str = "ferry_jobs_finished_total";
const TARGETS: &str = "ferry_targets_total";
const TARGET_SECONDS: &str = "ferry_target_duration_seconds";
const FILES_SERVED: &str = "ferry_files_served_total";
const UPTIME: &str = "ferry_uptime_seconds";

/// The server's metrics.
pub struct Metrics {
    recorder: PrometheusRecorder,
    /// The same count as `ferry_files_served_total`, readable (for tests).
    files_served: AtomicU64,
    started: Instant,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let builder = PrometheusBuilder::new();
        let recorder = match builder
            .set_buckets_for_metric(Matcher::Suffix("_duration_seconds".into()), &BUCKETS)
        {
            Ok(builder) => builder.build_recorder(),
            // Only an empty bucket list is refused.
            Err(_) => PrometheusBuilder::new().build_recorder(),
        };
        let metrics = Metrics {
            recorder,
            files_served: AtomicU64::new(0),
            started: Instant::now(),
        };
        metrics.with(|| {
            describe_gauge!(UPTIME, "Seconds since the server started.");
            describe_counter!(REQUESTS, "HTTP requests by endpoint and status.");
            describe_histogram!(REQUEST_SECONDS, "Time to answer a request.");
            describe_counter!(
                JOBS_STARTED,
                "Jobs started (bolt-server calls and orchestrator jobs)."
            );
            describe_counter!(
                FILES_SERVED,
                "Module files served by /puppet/v3/file_content."
            );
            describe_counter!(JOBS_FINISHED, "Jobs finished, by final state.");
            describe_counter!(TARGETS, "Targets run, by result status.");
            describe_histogram!(TARGET_SECONDS, "Time from a target's start to its result.");
            // Shown from the start, at zero.
            counter!(JOBS_STARTED).absolute(0);
            counter!(FILES_SERVED).absolute(0);
            let _ = histogram!(TARGET_SECONDS);
        });
        metrics
    }

    /// Runs `f` with this server's recorder behind the `metrics` macros.
    fn with<R>(&self, f: impl FnOnce() -> R) -> R {
        metrics::with_local_recorder(&self.recorder, f)
    }

    pub fn request(&self, route: &str, status: u16, took: Duration) {
        let route = route.to_string();
        self.with(|| {
            counter!(REQUESTS, "endpoint" => route.clone(), "code" => status.to_string())
                .increment(1);
            histogram!(REQUEST_SECONDS, "endpoint" => route).record(took.as_secs_f64());
        });
    }

    pub fn job_started(&self) {
        self.with(|| counter!(JOBS_STARTED).increment(1));
    }

    /// One module file served from `/puppet/v3/file_content/...`.
    pub fn file_served(&self) {
        self.files_served.fetch_add(1, Ordering::Relaxed);
        self.with(|| counter!(FILES_SERVED).increment(1));
    }

    /// How many module files were served.
    pub fn files_served(&self) -> u64 {
        self.files_served.load(Ordering::Relaxed)
    }

    pub fn job_finished(&self, state: &str) {
        let state = state.to_string();
        self.with(|| counter!(JOBS_FINISHED, "state" => state).increment(1));
    }

    pub fn target_finished(&self, status: &str, took: Duration) {
        let status = status.to_string();
        self.with(|| {
            counter!(TARGETS, "status" => status).increment(1);
            histogram!(TARGET_SECONDS).record(took.as_secs_f64());
        });
    }

    /// Moves recorded durations into their histograms, so that samples do
    /// not pile up between scrapes.
    pub fn upkeep(&self) {
        self.recorder.handle().run_upkeep();
    }

    /// Everything in Prometheus' text exposition format.
    pub fn render(&self) -> String {
        let uptime = self.started.elapsed().as_secs_f64();
        self.with(|| gauge!(UPTIME).set(uptime));
        self.recorder.handle().render()
    }

    /// Runs [`Metrics::upkeep`] every few seconds while `state` lives.
    pub fn spawn_upkeep(state: &Arc<AppState>) {
        let state = Arc::downgrade(state);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(5));
            loop {
                tick.tick().await;
                let Some(state) = state.upgrade() else { return };
                state.metrics.upkeep();
            }
        });
    }
}

/// The middleware that counts every request (refused ones too).
pub async fn track(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let route = action_for(req.method(), req.uri().path()).unwrap_or("other");
    let started = Instant::now();
    let response = next.run(req).await;
    state
        .metrics
        .request(route, response.status().as_u16(), started.elapsed());
    response
}

/// Prometheus metrics.
#[utoipa::path(get, path = "/metrics",
    responses((status = 200, description = "Prometheus' text format", content_type = "text/plain", body = String)))]
pub async fn metrics(State(state): State<Arc<AppState>>) -> Response {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(),
    )
        .into_response()
}
