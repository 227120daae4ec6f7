//! How `ferry plan run` tells a plan's progress, for YAML and
//! Puppet-language plans alike: Bolt's "Starting:"/"Finished:" lines for
//! the plan and each step, with timings, and messages on stdout (human
//! output); only messages, on stderr, with `--format json` (stdout holds
//! the plan's value alone).

use std::io::Write;
use std::time::Duration;

use ferry::plan::run::Reporter;

/// Bolt's duration text: `0.52 sec`, `3 min, 2 sec`, `1 hr, 0 min, 5 sec`.
fn duration(d: Duration) -> String {
    let secs = d.as_secs_f64();
    let (hrs, mins) = ((secs / 3600.0).floor(), ((secs % 3600.0) / 60.0).floor());
    if hrs > 0.0 {
        format!("{hrs} hr, {mins} min, {} sec", (secs % 60.0).round())
    } else if mins > 0.0 {
        format!("{mins} min, {} sec", (secs % 60.0).round())
    } else {
        format!("{} sec", (secs * 100.0).round() / 100.0)
    }
}

/// The human output's plan and step lines, and messages, on stdout (for
/// Puppet-language plans too).
pub(super) struct HumanReport;

impl HumanReport {
    fn line(&self, text: &str) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
    }
}

impl Reporter for HumanReport {
    fn plan_started(&self, plan: &str) {
        self.line(&format!("Starting: plan {plan}"));
    }
    fn plan_finished(&self, plan: &str, elapsed: Duration) {
        self.line(&format!("Finished: plan {plan} in {}", duration(elapsed)));
    }
    fn step_started(&self, description: &str, targets: &[String]) {
        let on = if targets.len() > 5 {
            format!("{} targets", targets.len())
        } else {
            targets.join(", ")
        };
        self.line(&format!("Starting: {description} on {on}"));
    }
    fn step_finished(&self, description: &str, failures: usize, elapsed: Duration) {
        let plural = if failures == 1 { "" } else { "s" };
        let secs = (elapsed.as_secs_f64() * 100.0).round() / 100.0;
        self.line(&format!(
            "Finished: {description} with {failures} failure{plural} in {secs} sec"
        ));
    }
    fn message(&self, text: &str) {
        self.line(text);
    }
    fn verbose(&self, text: &str) {
        tracing::info!("{text}");
    }
}

/// JSON output: only messages, on stderr (stdout holds the value alone).
pub(super) struct JsonReport;

impl Reporter for JsonReport {
    fn plan_started(&self, _: &str) {}
    fn plan_finished(&self, _: &str, _: Duration) {}
    fn step_started(&self, _: &str, _: &[String]) {}
    fn step_finished(&self, _: &str, _: usize, _: Duration) {}
    fn message(&self, text: &str) {
        eprintln!("{text}");
    }
    fn verbose(&self, text: &str) {
        tracing::info!("{text}");
    }
}
