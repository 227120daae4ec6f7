//! A stop signal for work that runs outside the executor's futures (a
//! Puppet-language plan evaluated on a thread of its own): whoever owns
//! the work [`Stop::trigger`]s it; the work checks [`Stop::is_set`] between
//! steps, races each step against [`Stop::wait`], and sleeps through
//! [`Stop::sleep`], so a stopped plan ends its running step and runs no
//! further one. A [`StopOnDrop`] triggers it when the future that awaited
//! the work is dropped (a job aborted, an interrupted command).

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

/// A stop signal, shared by clones; set once, never reset.
#[derive(Clone, Default)]
pub struct Stop(Arc<Inner>);

#[derive(Default)]
struct Inner {
    set: AtomicBool,
    notify: Notify,
}

impl Stop {
    /// Sets the signal and wakes every waiter.
    pub fn trigger(&self) {
        self.0.set.store(true, Ordering::SeqCst);
        self.0.notify.notify_waiters();
    }

    /// Whether the signal was set.
    pub fn is_set(&self) -> bool {
        self.0.set.load(Ordering::SeqCst)
    }

    /// Resolves once the signal is set.
    pub async fn wait(&self) {
        loop {
            let notified = self.0.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.is_set() {
                return;
            }
            notified.await;
        }
    }

    /// `work` to its end, or `None` when the signal is set first (the
    /// work is then dropped, cutting off what it was doing).
    pub async fn or<F: Future>(&self, work: F) -> Option<F::Output> {
        tokio::select! {
            biased;
            () = self.wait() => None,
            out = work => Some(out),
        }
    }

    /// Blocks this (non-runtime) thread for `period` on `handle`'s timer;
    /// false when the signal cut the sleep short.
    pub fn sleep(&self, handle: &tokio::runtime::Handle, period: Duration) -> bool {
        // The timer is made inside the runtime's context.
        handle
            .block_on(async { self.or(tokio::time::sleep(period)).await })
            .is_some()
    }

    /// A guard that sets this signal when dropped, unless disarmed.
    pub fn on_drop(&self) -> StopOnDrop {
        StopOnDrop(Some(self.clone()))
    }
}

/// See [`Stop::on_drop`].
pub struct StopOnDrop(Option<Stop>);

impl StopOnDrop {
    /// The work ended by itself: dropping the guard now sets nothing.
    pub fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        if let Some(s) = self.0.take() {
            s.trigger();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_set_signal_cuts_work_short_and_wakes_waiters() {
        let stop = Stop::default();
        assert!(!stop.is_set());
        let waiter = tokio::spawn({
            let stop = stop.clone();
            async move { stop.or(std::future::pending::<()>()).await }
        });
        tokio::task::yield_now().await;
        stop.trigger();
        assert_eq!(waiter.await.ok(), Some(None));
        assert!(stop.is_set());
        assert_eq!(stop.or(async { 1 }).await, None, "set before: nothing runs");
        assert_eq!(Stop::default().or(async { 1 }).await, Some(1));
    }

    #[test]
    fn a_guard_sets_the_signal_unless_disarmed() {
        let stop = Stop::default();
        stop.on_drop().disarm();
        assert!(!stop.is_set());
        drop(stop.on_drop());
        assert!(stop.is_set());
    }

    #[test]
    fn a_sleep_ends_when_the_signal_is_set() {
        let rt = tokio::runtime::Runtime::new().expect("runtime");
        let stop = Stop::default();
        let setter = stop.clone();
        let handle = rt.handle().clone();
        let t = std::thread::spawn(move || stop.sleep(&handle, Duration::from_secs(3600)));
        std::thread::sleep(Duration::from_millis(50));
        setter.trigger();
        assert_eq!(t.join().ok(), Some(false));
        assert!(Stop::default().sleep(rt.handle(), Duration::from_millis(1)));
    }
}
