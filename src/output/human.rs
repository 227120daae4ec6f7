//! The human printer: a progress bar while targets run (only on a
//! terminal), a block per finished target, and a closing summary. With
//! `--stream`, output lines are printed live, prefixed with the target name;
//! a line longer than [`MAX_LINE`] is printed in pieces, so a target that
//! never prints a newline cannot make the printer hold its output.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;

use super::{Shared, write_out};
use crate::run::{Event, Output, Sink, TargetResult};

/// The longest piece of a line held back while waiting for its newline.
pub const MAX_LINE: usize = 64 * 1024;

pub struct HumanPrinter {
    out: Shared,
    stream: bool,
    bar: Mutex<Option<ProgressBar>>,
    partial: Mutex<HashMap<String, Vec<u8>>>,
}

impl HumanPrinter {
    pub fn new(out: Box<dyn Write + Send>, stream: bool) -> Self {
        HumanPrinter {
            out: Mutex::new(out),
            stream,
            bar: Mutex::new(None),
            partial: Mutex::new(HashMap::new()),
        }
    }

    fn print(&self, text: &str) {
        let bar = self.bar.lock().ok().and_then(|b| b.clone());
        match bar {
            Some(bar) => bar.suspend(|| write_out(&self.out, text)),
            None => write_out(&self.out, text),
        }
    }

    fn live(&self, target: &str, data: &[u8]) {
        let Ok(mut partial) = self.partial.lock() else {
            return;
        };
        let buf = partial.entry(target.to_string()).or_default();
        buf.extend_from_slice(data);
        let mut lines = String::new();
        let mut from = 0;
        while let Some(at) = buf[from..].iter().position(|&b| b == b'\n') {
            let end = from + at + 1;
            let line = String::from_utf8_lossy(&buf[from..end]);
            lines.push_str(&format!("[{target}] {line}"));
            from = end;
        }
        while buf.len() - from >= MAX_LINE {
            // At a character boundary where one is near, so that no
            // character is split across two printed pieces.
            let end = (from + MAX_LINE - 3..=from + MAX_LINE)
                .rev()
                .find(|&i| buf.get(i).is_none_or(|b| b & 0xC0 != 0x80))
                .unwrap_or(from + MAX_LINE);
            let piece = String::from_utf8_lossy(&buf[from..end]);
            lines.push_str(&format!("[{target}] {piece}\n"));
            from = end;
        }
        buf.drain(..from);
        drop(partial);
        if !lines.is_empty() {
            self.print(&lines);
        }
    }
}

fn indent(text: &str) -> String {
    text.trim_end()
        .lines()
        .map(|l| format!("    {l}\n"))
        .collect()
}

/// The block printed for one finished target.
pub fn block(result: &TargetResult, with_output: bool) -> String {
    let mut s = String::new();
    let verb = if result.ok() { "Finished" } else { "Failed" };
    s.push_str(&format!("{verb} on {}:\n", result.target));
    match result.outcome.output().filter(|_| with_output) {
        Some(Output::Command(c)) => {
            streams(&mut s, Some(&c.stdout), Some(&c.stderr));
            let lost: Vec<String> = c
                .truncated
                .streams()
                .map(|(stream, n)| format!("{n} bytes of {stream}"))
                .collect();
            truncated(&mut s, &lost);
        }
        Some(Output::Task(value)) => task_value(&mut s, value),
        Some(Output::Transfer { message, .. }) => s.push_str(&indent(message)),
        Some(Output::Apply(report)) => apply_report(&mut s, report),
        None => {}
    }
    if let Some(e) = result.outcome.error() {
        s.push_str(&format!("  Error ({}): {}\n", e.kind, e.msg));
    }
    s
}

/// An apply: each resource that changed, would change or failed, with
/// its events' messages, then the counts.
fn apply_report(s: &mut String, report: &crate::apply::Report) {
    for r in &report.resource_statuses.0 {
        let state = if r.failed {
            "failed"
        } else if r.skipped {
            "skipped"
        } else if r.changed {
            "changed"
        } else if r.events.iter().any(|e| e.status == "noop") {
            "noop"
        } else {
            continue;
        };
        s.push_str(&format!("  {state}: {}\n", r.resource));
        for e in &r.events {
            s.push_str(&format!(
                "    {}: {}\n",
                e.property.as_deref().unwrap_or(&e.name),
                e.message
            ));
        }
    }
    for l in report
        .logs
        .iter()
        .filter(|l| l.level == "err" && l.source == "Puppet")
    {
        s.push_str(&format!("  error: {}\n", l.message));
    }
    s.push_str(&format!("  {}\n", report.summary_line()));
}

/// A command's (or a task's) stdout and stderr, under a heading for stderr.
fn streams(s: &mut String, stdout: Option<&str>, stderr: Option<&str>) {
    for (text, heading) in [(stdout, ""), (stderr, "  STDERR:\n")] {
        if let Some(text) = text.filter(|t| !t.trim().is_empty()) {
            s.push_str(heading);
            s.push_str(&indent(text));
        }
    }
}

fn truncated(s: &mut String, lost: &[String]) {
    if !lost.is_empty() {
        s.push_str(&format!(
            "  Output truncated (--max-output): {} omitted\n",
            lost.join(", ")
        ));
    }
}

/// A task's value: its text, or its structured result as JSON without the
/// error (printed below).
fn task_value(s: &mut String, value: &Value) {
    let text = |key: &str| value.get(key).and_then(Value::as_str);
    streams(s, text("stdout"), text("stderr"));
    if let Some(output) = text("_output") {
        s.push_str(&indent(output));
    } else if value.get("stdout").is_none()
        && let Some(map) = value.as_object()
    {
        let mut shown = map.clone();
        shown.remove("_error");
        if !shown.is_empty() {
            s.push_str(&indent(
                &serde_json::to_string_pretty(&shown).unwrap_or_default(),
            ));
        }
    }
    let cut = value.get("truncated").and_then(Value::as_object);
    if let Some(cut) = cut.filter(|c| c.values().all(Value::is_u64)) {
        let lost: Vec<String> = cut
            .iter()
            .map(|(stream, n)| format!("{n} bytes of {stream}"))
            .collect();
        truncated(s, &lost);
    }
}

impl Sink for HumanPrinter {
    fn event(&self, event: &Event<'_>) {
        match event {
            Event::RunStarted {
                action,
                object,
                target_count,
            } => {
                self.print(&format!(
                    "Started {action} '{object}' on {target_count} target(s)\n"
                ));
                if std::io::stderr().is_terminal() && *target_count > 1 {
                    let bar = ProgressBar::new(*target_count as u64);
                    if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}") {
                        bar.set_style(style);
                    }
                    if let Ok(mut b) = self.bar.lock() {
                        *b = Some(bar);
                    }
                }
            }
            Event::TargetStarted { .. } => {}
            Event::Resource {
                target,
                resource,
                message,
                ..
            } => {
                if self.stream {
                    self.print(&format!("[{target}] {resource}: {message}\n"));
                }
            }
            Event::Notice {
                target, message, ..
            } => {
                if self.stream {
                    self.print(&format!("[{target}] {message}\n"));
                }
            }
            Event::Output { target, data, .. } => {
                if self.stream {
                    self.live(target, data);
                }
            }
            Event::TargetFinished(result) => {
                if self.stream {
                    // Flush a last line that had no newline.
                    let rest = self
                        .partial
                        .lock()
                        .ok()
                        .and_then(|mut p| p.remove(&result.target));
                    if let Some(rest) = rest.filter(|r| !r.is_empty()) {
                        self.print(&format!(
                            "[{}] {}\n",
                            result.target,
                            String::from_utf8_lossy(&rest)
                        ));
                    }
                }
                self.print(&block(result, !self.stream));
                if let Some(bar) = self.bar.lock().ok().and_then(|b| b.clone()) {
                    bar.inc(1);
                }
            }
            Event::RunFinished(summary) => {
                if let Some(bar) = self.bar.lock().ok().and_then(|mut b| b.take()) {
                    bar.finish_and_clear();
                }
                let ok: Vec<&str> = summary.succeeded().map(|r| r.target.as_str()).collect();
                let failed: Vec<&str> = summary.failed().map(|r| r.target.as_str()).collect();
                let mut s = String::new();
                if !ok.is_empty() {
                    s.push_str(&format!(
                        "Successful on {} target(s): {}\n",
                        ok.len(),
                        ok.join(",")
                    ));
                }
                if !failed.is_empty() {
                    s.push_str(&format!(
                        "Failed on {} target(s): {}\n",
                        failed.len(),
                        failed.join(",")
                    ));
                }
                s.push_str(&format!(
                    "Ran on {} target(s) in {:.2} sec\n",
                    summary.results.len(),
                    summary.elapsed.as_secs_f64()
                ));
                self.print(&s);
            }
        }
    }
}
