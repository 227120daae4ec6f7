//! The executor: runs one action on many targets at once. It owns the
//! concurrency limit, the life of each target's connection (open once,
//! reused by every step, closed at the end), turning each target's outcome —
//! success, failure or a transport error — into a [`TargetResult`], and
//! reporting everything to a [`Sink`]. A target that fails never stops the
//! others.

pub mod actions;
pub mod result;

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;

pub use actions::Action;
pub use result::{Status, Summary, TargetResult};

use crate::events::{Event, Sink};
use crate::inventory::Target;
use crate::transport::{self, Overrides};

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

/// 100, or fewer when the open-file limit would not allow that many
/// connections (each target holds one socket, a jump chain one more per hop).
pub fn default_concurrency() -> usize {
    let limit = open_file_limit();
    let usable = limit.saturating_sub(64) / 2;
    usable.clamp(1, 100) as usize
}

/// Raises the soft open-file limit to the hard one and returns it.
pub fn open_file_limit() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit with a pointer to a live rlimit struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 256;
        }
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: lim.rlim_max.min(1 << 20),
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim.rlim_cur = raised.rlim_cur;
            }
        }
    }
    lim.rlim_cur
}

/// Runs `action` on every target, at most `concurrency` at a time.
pub async fn run(
    targets: Vec<Target>,
    action: Action,
    options: &RunOptions,
    sink: Arc<dyn Sink>,
) -> Summary {
    let started = Instant::now();
    let object = action.object();
    sink.event(&Event::RunStarted {
        action: action.name(),
        object: &object,
        target_count: targets.len(),
    });
    let action = Arc::new(action);
    let limit = Arc::new(Semaphore::new(options.concurrency.max(1)));
    let mut set = JoinSet::new();
    for target in targets {
        let (action, limit, sink, overrides) = (
            Arc::clone(&action),
            Arc::clone(&limit),
            Arc::clone(&sink),
            options.overrides.clone(),
        );
        set.spawn(async move {
            let _permit = limit.acquire_owned().await.ok();
            sink.event(&Event::TargetStarted {
                target: &target.name,
            });
            let result = on_target(&target, &action, &overrides, sink.as_ref()).await;
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

async fn on_target(
    target: &Target,
    action: &Action,
    overrides: &Overrides,
    sink: &dyn Sink,
) -> TargetResult {
    let value = match transport::for_target(target, overrides) {
        Err(e) => Err(e),
        Ok(mut t) => {
            let value = match t.connect().await {
                Ok(()) => action.perform(target, t.as_ref(), sink).await,
                Err(e) => Err(e),
            };
            t.close().await;
            value
        }
    };
    let (status, value) = match value {
        Ok((status, value)) => (status, value),
        Err(e) => {
            tracing::debug!(target_name = %target.name, "failed: {e}");
            (Status::Failure, serde_json::Value::from(&e))
        }
    };
    TargetResult {
        target: target.name.clone(),
        action: action.name().to_string(),
        object: action.object(),
        status,
        value,
    }
}
