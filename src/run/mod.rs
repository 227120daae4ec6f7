//! The executor: runs one action on many targets at once. It owns the
//! concurrency limit, the life of each target's connection (open once,
//! reused by every step, closed at the end), each target's typed
//! [`Outcome`] — it ran and succeeded, ran and failed, or could not run —
//! in a [`TargetResult`], and reporting everything as [`events`] to a
//! [`Sink`]. A target that fails never stops the others. The actions live
//! in [`actions`], bounded output capture in [`capture`].

pub mod actions;
pub mod capture;
pub mod events;
pub mod result;
pub mod stop;

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;

pub use actions::Action;
pub use events::{Discard, Event, FanOut, Sink};
pub use result::{CommandOutput, Outcome, Output, Status, Summary, TargetResult};
pub use stop::Stop;

use crate::inventory::Target;
use crate::transport::{self, Overrides, Transport, TransportError};
use std::collections::HashMap;

/// How a run is carried out.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub concurrency: usize,
    pub overrides: Overrides,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            concurrency: default_concurrency(),
            overrides: Overrides::default(),
        }
    }
}

/// The most targets worked on at once, whatever a caller asks for (tokio's
/// semaphore takes far more; past this, open files run out first).
pub const MAX_CONCURRENCY: usize = 10_000;

/// 100, or fewer when the open-file limit would not allow that many
/// connections (each target holds one socket, a jump chain one more per
/// hop). Reads the limit only; [`raise_open_file_limit`] is the caller's
/// choice, made once at start-up.
pub fn default_concurrency() -> usize {
    let usable = open_file_limit().saturating_sub(64) / 2;
    usable.clamp(1, 100) as usize
}

fn get_nofile() -> Option<libc::rlimit> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit with a pointer to a live rlimit struct.
    (unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0).then_some(lim)
}

/// The soft open-file limit (256 when it cannot be read).
pub fn open_file_limit() -> u64 {
    get_nofile().map_or(256, |l| l.rlim_cur)
}

/// Raises the soft open-file limit to the hard one (at most 2^20) and
/// returns the limit now in force. The CLI and the server call this once
/// at start-up, before they size their concurrency.
pub fn raise_open_file_limit() -> u64 {
    let Some(lim) = get_nofile() else {
        return 256;
    };
    if lim.rlim_cur >= lim.rlim_max {
        return lim.rlim_cur;
    }
    let raised = libc::rlimit {
        rlim_cur: lim.rlim_max.min(1 << 20),
        rlim_max: lim.rlim_max,
    };
    // SAFETY: setrlimit with a pointer to a live rlimit struct.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
        raised.rlim_cur
    } else {
        lim.rlim_cur
    }
}

/// Open connections kept across several runs (the steps of a plan), one
/// per target name (and per run-as user, when a step sets one: the user
/// is fixed when a connection opens). Closed by [`Connections::close_all`].
#[derive(Default)]
pub struct Connections {
    open: std::sync::Mutex<HashMap<String, Shared>>,
}

type Shared = Arc<tokio::sync::Mutex<Box<dyn Transport>>>;

impl Connections {
    fn get(&self, name: &str) -> Option<Shared> {
        self.open.lock().ok().and_then(|m| m.get(name).cloned())
    }

    fn put(&self, name: &str, t: Shared) {
        if let Ok(mut m) = self.open.lock() {
            m.insert(name.to_string(), t);
        }
    }

    fn forget(&self, name: &str) {
        if let Ok(mut m) = self.open.lock() {
            m.remove(name);
        }
    }

    /// Closes every kept connection.
    pub async fn close_all(&self) {
        let all: Vec<Shared> = self
            .open
            .lock()
            .map(|mut m| m.drain().map(|(_, t)| t).collect())
            .unwrap_or_default();
        // Together: each close waits for the target's shell to clean up.
        futures_util::future::join_all(all.iter().map(|t| async move {
            t.lock().await.close().await;
        }))
        .await;
    }
}

/// Runs `action` on every target, at most `concurrency` at a time, with a
/// connection per target that is closed at the end.
pub async fn run(
    targets: Vec<Target>,
    action: Action,
    options: &RunOptions,
    sink: Arc<dyn Sink>,
) -> Summary {
    run_on(targets, action, options, sink, None).await
}

/// Like [`run`], but keeps connections in `keep` for later runs (and uses
/// those already there).
pub async fn run_on(
    targets: Vec<Target>,
    action: Action,
    options: &RunOptions,
    sink: Arc<dyn Sink>,
    keep: Option<Arc<Connections>>,
) -> Summary {
    let started = Instant::now();
    let object = action.object();
    sink.event(&Event::RunStarted {
        action: action.name(),
        object: &object,
        target_count: targets.len(),
    });
    let action = Arc::new(action);
    let limit = Arc::new(Semaphore::new(
        options.concurrency.clamp(1, MAX_CONCURRENCY),
    ));
    let mut set = JoinSet::new();
    for target in targets {
        let (action, limit, sink, overrides, keep) = (
            Arc::clone(&action),
            Arc::clone(&limit),
            Arc::clone(&sink),
            options.overrides.clone(),
            keep.clone(),
        );
        set.spawn(async move {
            let _permit = limit.acquire_owned().await.ok();
            sink.event(&Event::TargetStarted {
                target: &target.name,
            });
            let result =
                on_target(&target, &action, &overrides, sink.as_ref(), keep.as_deref()).await;
            sink.event(&Event::TargetFinished(&result));
            result
        });
    }
    let mut summary = Summary::default();
    while let Some(joined) = set.join_next().await {
        match joined {
            Ok(result) => summary.results.push(result),
            Err(e) => tracing::error!("a target's task failed: {e}"),
        }
    }
    summary.elapsed = started.elapsed();
    sink.event(&Event::RunFinished(&summary));
    summary
}

/// The target's kept connection, or a new one (connected).
async fn connection(
    target: &Target,
    overrides: &Overrides,
    keep: Option<&Connections>,
) -> Result<Shared, TransportError> {
    if let Some(t) = keep.and_then(|k| k.get(&kept_as(target, overrides))) {
        return Ok(t);
    }
    let mut t = transport::for_target(target, overrides)?;
    t.connect().await?;
    let t: Shared = Arc::new(tokio::sync::Mutex::new(t));
    if let Some(k) = keep {
        k.put(&kept_as(target, overrides), Arc::clone(&t));
    }
    Ok(t)
}

/// The key a kept connection is found by: the target's name, and the
/// run-as user laid over its config, if any.
fn kept_as(target: &Target, overrides: &Overrides) -> String {
    match &overrides.run_as {
        Some(user) => format!("{}\0run-as={user}", target.name),
        None => target.name.clone(),
    }
}

async fn on_target(
    target: &Target,
    action: &Action,
    overrides: &Overrides,
    sink: &dyn Sink,
    keep: Option<&Connections>,
) -> TargetResult {
    let outcome = match connection(target, overrides, keep).await {
        Err(e) => Outcome::Errored(e),
        Ok(shared) => {
            let mut t = shared.lock().await;
            let max_output = overrides.max_output.unwrap_or(capture::DEFAULT_MAX_OUTPUT);
            let outcome = action.perform(target, t.as_ref(), sink, max_output).await;
            match keep {
                None => t.close().await,
                // A connection that broke is not kept for the next step.
                Some(k)
                    if matches!(
                        outcome,
                        Outcome::Errored(TransportError::Connect { .. })
                            | Outcome::Errored(TransportError::Command(_))
                    ) =>
                {
                    k.forget(&kept_as(target, overrides));
                    t.close().await;
                }
                Some(_) => {}
            }
            outcome
        }
    };
    if let Outcome::Errored(e) = &outcome {
        tracing::debug!(target_name = %target.name, "failed: {e}");
    }
    TargetResult {
        target: target.name.clone(),
        action: action.name().to_string(),
        object: action.object(),
        outcome,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizing_concurrency_leaves_the_open_file_limit_alone() {
        let Some(lim) = get_nofile() else { return };
        if lim.rlim_max < 1024 || lim.rlim_max > 1 << 20 {
            return;
        }
        // One below the hard limit, so that a raise would show.
        let lowered = libc::rlimit {
            rlim_cur: lim.rlim_max - 1,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: setrlimit with a pointer to a live rlimit struct.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lowered) } != 0 {
            return;
        }
        let n = default_concurrency();
        assert!((1..=100).contains(&n), "{n}");
        assert_eq!(open_file_limit(), lim.rlim_max - 1);
        assert_eq!(raise_open_file_limit(), lim.rlim_max);
        assert_eq!(open_file_limit(), lim.rlim_max);
    }
}
