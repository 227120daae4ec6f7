//! Run events and the one sink trait they go through. The executor reports
//! everything that happens — a run starting, a target starting, output
//! arriving, a target finishing, the run ending — as [`Event`]s to a
//! [`Sink`]; the terminal printer, the JSON writer (the `output` module) and
//! the server's store and event stream are sinks. Sinks depend on this
//! module, never the reverse.

use super::result::{Summary, TargetResult};
use crate::transport::Stream;

#[derive(Debug)]
pub enum Event<'a> {
    RunStarted {
        action: &'a str,
        object: &'a str,
        target_count: usize,
    },
    TargetStarted {
        target: &'a str,
    },
    /// A chunk of a command's output, as it arrived.
    Output {
        target: &'a str,
        stream: Stream,
        data: &'a [u8],
    },
    /// A resource event of an apply, as the target reported it: `status`
    /// is Puppet's (`success`, `failure`, `noop`), or `skipped` for a
    /// resource skipped because of failed dependencies; `message` is the
    /// report's (secrets already redacted).
    Resource {
        target: &'a str,
        resource: &'a str,
        property: Option<&'a str>,
        status: &'a str,
        message: &'a str,
    },
    /// A note about a target's run from the layer that provides its
    /// catalog (a server's deploy job: an environment switch, a refused
    /// environment, a classification conflict): `level` is Puppet's log
    /// level (`notice`, `err`), `code` names what happened.
    Notice {
        target: &'a str,
        level: &'a str,
        code: &'a str,
        message: &'a str,
    },
    TargetFinished(&'a TargetResult),
    RunFinished(&'a Summary),
}

/// Receives events; called from many tasks at once.
pub trait Sink: Send + Sync {
    fn event(&self, event: &Event<'_>);
}

/// Sends every event to several sinks.
pub struct FanOut(pub Vec<Box<dyn Sink>>);

impl Sink for FanOut {
    fn event(&self, event: &Event<'_>) {
        for sink in &self.0 {
            sink.event(event);
        }
    }
}

/// A sink that drops everything.
pub struct Discard;

impl Sink for Discard {
    fn event(&self, _: &Event<'_>) {}
}
