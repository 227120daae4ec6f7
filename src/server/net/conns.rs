//! The cap on open connections (`max-connections`), so that clients that
//! open connections and do nothing cannot use up the server's file
//! descriptors. Each accepted connection takes a [`Slot`] and is idle
//! unless a request on it is being answered (a response body still being
//! sent, an event stream, counts as busy). At the cap, a new connection
//! closes the oldest idle one (one still in its TLS handshake, waiting
//! for request headers, or between keep-alive requests); when every
//! connection is busy, the new one is closed before its handshake. Idle
//! connections also end on their own: the handshake and the headers each
//! have `request-timeout`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::task::AbortHandle;

/// The open connections.
pub struct Conns {
    max: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    next: u64,
    /// By id, which grows with every connection: the first is the oldest.
    open: BTreeMap<u64, Entry>,
}

struct Entry {
    busy: Arc<AtomicUsize>,
    abort: Option<AbortHandle>,
}

/// One connection's place; dropping it frees the place.
pub struct Slot {
    conns: Arc<Conns>,
    id: u64,
    busy: Arc<AtomicUsize>,
}

/// A request being answered; dropping it makes the connection idle again
/// (when no other request is).
pub struct Busy(Arc<AtomicUsize>);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Conns {
    pub fn new(max: usize) -> Arc<Conns> {
        Arc::new(Conns {
            max: max.max(1),
            inner: Mutex::new(Inner::default()),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A place for a new connection: at the cap, the oldest idle
    /// connection is closed to make room; `None` when every one is busy.
    pub fn admit(self: &Arc<Self>) -> Option<Slot> {
        let mut inner = self.lock();
        while inner.open.len() >= self.max {
            let oldest_idle = inner
                .open
                .iter()
                .find(|(_, e)| e.abort.is_some() && e.busy.load(Ordering::SeqCst) == 0)
                .map(|(id, _)| *id)?;
            if let Some(entry) = inner.open.remove(&oldest_idle)
                && let Some(abort) = entry.abort
            {
                tracing::debug!("closing idle connection {oldest_idle}: at max-connections");
                abort.abort();
            }
        }
        let id = inner.next;
        inner.next += 1;
        let busy = Arc::new(AtomicUsize::new(0));
        inner.open.insert(
            id,
            Entry {
                busy: Arc::clone(&busy),
                abort: None,
            },
        );
        Some(Slot {
            conns: Arc::clone(self),
            id,
            busy,
        })
    }

    /// How many connections are open.
    pub fn len(&self) -> usize {
        self.lock().open.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Hands over connection `id`'s task, which a newer connection may
    /// abort while this one is idle.
    pub fn closable(&self, id: u64, abort: AbortHandle) {
        if let Some(entry) = self.lock().open.get_mut(&id) {
            entry.abort = Some(abort);
        }
    }
}

impl Slot {
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Marks a request as being answered until the guard is dropped.
    pub fn busy(&self) -> Busy {
        Busy::new(&self.busy)
    }

    /// The counter a connection's requests mark themselves busy with
    /// ([`Busy::new`]).
    pub fn counter(&self) -> Arc<AtomicUsize> {
        Arc::clone(&self.busy)
    }
}

impl Busy {
    pub fn new(counter: &Arc<AtomicUsize>) -> Busy {
        counter.fetch_add(1, Ordering::SeqCst);
        Busy(Arc::clone(counter))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.conns.lock().open.remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_oldest_idle_connection_makes_room() {
        let conns = Conns::new(2);
        let task = || tokio::spawn(std::future::pending::<()>());
        let a = conns.admit().expect("a");
        let ta = task();
        conns.closable(a.id(), ta.abort_handle());
        let b = conns.admit().expect("b");
        let tb = task();
        conns.closable(b.id(), tb.abort_handle());
        let busy_b = b.busy();
        // At the cap: a (idle, oldest) is closed for c.
        let c = conns.admit().expect("c");
        assert!(ta.await.expect_err("aborted").is_cancelled());
        assert_eq!(conns.len(), 2);
        // b is busy and c has no task yet: nothing can be closed.
        assert!(conns.admit().is_none());
        drop(busy_b);
        let tc = task();
        conns.closable(c.id(), tc.abort_handle());
        let _d = conns.admit().expect("d");
        assert!(tb.await.expect_err("aborted").is_cancelled());
        drop((a, b, c));
        assert_eq!(conns.len(), 1);
        tc.abort();
    }
}
