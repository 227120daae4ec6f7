//! Counters and durations in Prometheus' text format (`GET /metrics`):
//! requests by endpoint and status, request durations as a histogram, jobs
//! started and finished by final state, targets run by status and their
//! durations. Endpoints are labelled by their action name, never by raw
//! path, so ids do not multiply the series.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::server::AppState;
use crate::server::http::auth::action_for;

const BUCKETS: [f64; 12] = [
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

#[derive(Default)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        for (i, le) in BUCKETS.iter().enumerate() {
            if seconds <= *le {
                self.counts[i] += 1;
            }
        }
        self.count += 1;
        self.sum += seconds;
    }

    fn write(&self, out: &mut String, name: &str, labels: &str) {
        let sep = if labels.is_empty() { "" } else { "," };
        for (i, le) in BUCKETS.iter().enumerate() {
            let _ = writeln!(
                out,
                "{name}_bucket{{{labels}{sep}le=\"{le}\"}} {}",
                self.counts[i]
            );
        }
        let _ = writeln!(
            out,
            "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {}",
            self.count
        );
        let braced = if labels.is_empty() {
            String::new()
        } else {
            format!("{{{labels}}}")
        };
        let _ = writeln!(out, "{name}_sum{braced} {}", self.sum);
        let _ = writeln!(out, "{name}_count{braced} {}", self.count);
    }
}

#[derive(Default)]
struct Inner {
    requests: BTreeMap<(String, u16), u64>,
    durations: BTreeMap<String, Histogram>,
    jobs_finished: BTreeMap<String, u64>,
    targets: BTreeMap<String, u64>,
    target_seconds: Histogram,
}

/// The server's metrics.
#[derive(Default)]
pub struct Metrics {
    inner: Mutex<Inner>,
    jobs_started: AtomicU64,
    files_served: AtomicU64,
    started: Option<Instant>,
}

impl Metrics {
    pub fn new() -> Metrics {
        Metrics {
            started: Some(Instant::now()),
            ..Metrics::default()
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut Inner) -> R) -> R {
        f(&mut self.inner.lock().unwrap_or_else(PoisonError::into_inner))
    }

    pub fn request(&self, route: &str, status: u16, took: Duration) {
        self.with(|m| {
            *m.requests.entry((route.to_string(), status)).or_default() += 1;
            m.durations
                .entry(route.to_string())
                .or_default()
                .observe(took.as_secs_f64());
        });
    }

    pub fn job_started(&self) {
        self.jobs_started.fetch_add(1, Ordering::Relaxed);
    }

    /// One module file served from `/puppet/v3/file_content/...`.
    pub fn file_served(&self) {
        self.files_served.fetch_add(1, Ordering::Relaxed);
    }

    /// How many module files were served.
    pub fn files_served(&self) -> u64 {
        self.files_served.load(Ordering::Relaxed)
    }

    pub fn job_finished(&self, state: &str) {
        self.with(|m| *m.jobs_finished.entry(state.to_string()).or_default() += 1);
    }

    pub fn target_finished(&self, status: &str, took: Duration) {
        self.with(|m| {
            *m.targets.entry(status.to_string()).or_default() += 1;
            m.target_seconds.observe(took.as_secs_f64());
        });
    }

    /// Everything in Prometheus' text exposition format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let uptime = self
            .started
            .map(|s| s.elapsed().as_secs_f64())
            .unwrap_or(0.0);
        let _ = writeln!(
            out,
            "# HELP ferry_uptime_seconds Seconds since the server started."
        );
        let _ = writeln!(out, "# TYPE ferry_uptime_seconds gauge");
        let _ = writeln!(out, "ferry_uptime_seconds {uptime}");
        self.with(|m| {
            out.push_str("# HELP ferry_http_requests_total HTTP requests by endpoint and status.\n");
            out.push_str("# TYPE ferry_http_requests_total counter\n");
            for ((route, code), n) in &m.requests {
                let _ = writeln!(
                    out,
                    "ferry_http_requests_total{{endpoint=\"{route}\",code=\"{code}\"}} {n}"
                );
            }
            out.push_str("# HELP ferry_http_request_duration_seconds Time to answer a request.\n");
            out.push_str("# TYPE ferry_http_request_duration_seconds histogram\n");
            for (route, h) in &m.durations {
                h.write(
                    &mut out,
                    "ferry_http_request_duration_seconds",
                    &format!("endpoint=\"{route}\""),
                );
            }
            out.push_str("# HELP ferry_jobs_started_total Jobs started (bolt-server calls and orchestrator jobs).\n");
            out.push_str("# TYPE ferry_jobs_started_total counter\n");
            let _ = writeln!(
                out,
                "ferry_jobs_started_total {}",
                self.jobs_started.load(Ordering::Relaxed)
            );
            out.push_str("# HELP ferry_files_served_total Module files served by /puppet/v3/file_content.\n");
            out.push_str("# TYPE ferry_files_served_total counter\n");
            let _ = writeln!(
                out,
                "ferry_files_served_total {}",
                self.files_served.load(Ordering::Relaxed)
            );
            out.push_str("# HELP ferry_jobs_finished_total Jobs finished, by final state.\n");
            out.push_str("# TYPE ferry_jobs_finished_total counter\n");
            for (state, n) in &m.jobs_finished {
                let _ = writeln!(out, "ferry_jobs_finished_total{{state=\"{state}\"}} {n}");
            }
            out.push_str("# HELP ferry_targets_total Targets run, by result status.\n");
            out.push_str("# TYPE ferry_targets_total counter\n");
            for (status, n) in &m.targets {
                let _ = writeln!(out, "ferry_targets_total{{status=\"{status}\"}} {n}");
            }
            out.push_str("# HELP ferry_target_duration_seconds Time from a target's start to its result.\n");
            out.push_str("# TYPE ferry_target_duration_seconds histogram\n");
            m.target_seconds
                .write(&mut out, "ferry_target_duration_seconds", "");
        });
        out
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

/// `GET /metrics`.
pub async fn metrics(State(state): State<Arc<AppState>>) -> Response {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(),
    )
        .into_response()
}
