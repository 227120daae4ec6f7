//! Processes on this machine (where the test targets run): whether a
//! command is still running, and sleep lengths no other test uses, so
//! that a `sleep N` can be looked for afterwards.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// A whole number of seconds, as text, that no other call in this test
/// process (nor, most likely, any other) returns: for `sleep N` commands
/// whose process a test looks for later.
pub fn unique_seconds() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("{}", 4000 + (std::process::id() % 1000) * 16 + n % 16)
}

/// Whether a process one of whose arguments is exactly `arg` runs here.
pub fn running(arg: &str) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|e| {
        std::fs::read(e.path().join("cmdline"))
            .map(|c| c.split(|b| *b == 0).any(|w| w == arg.as_bytes()))
            .unwrap_or(false)
    })
}

/// Waits up to `limit` for a process with the argument `arg` to appear (a
/// command started in the background may not have run `exec` yet when
/// its starter returns).
#[allow(dead_code)]
pub fn appears_within(arg: &str, limit: Duration) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if running(arg) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    running(arg)
}

/// Waits up to `limit` for every process with the argument `arg` to end.
pub fn gone_within(arg: &str, limit: Duration) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if !running(arg) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}
