//! The human printer: a progress bar while targets run (only on a
//! terminal), a block per finished target, and a closing summary. With
//! `--stream`, output lines are printed live, prefixed with the target name;
//! a line longer than [`MAX_LINE`] is printed in pieces, so a target that
//! never prints a newline cannot make the printer hold its output.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressStyle};

use super::{Shared, write_out};
use crate::events::{Event, Sink};
use crate::executor::TargetResult;

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
    if with_output {
        for key in ["stdout", "stderr"] {
            if let Some(text) = result.value.get(key).and_then(|v| v.as_str())
                && !text.trim().is_empty()
            {
                if key == "stderr" {
                    s.push_str("  STDERR:\n");
                }
                s.push_str(&indent(text));
            }
        }
        if let Some(text) = result.value.get("_output").and_then(|v| v.as_str()) {
            s.push_str(&indent(text));
        } else if result.value.get("stdout").is_none() {
            // A task's structured result: show it as JSON, without the error (printed below).
            let mut shown = result.value.clone();
            if let Some(map) = shown.as_object_mut() {
                map.remove("_error");
                if !map.is_empty() {
                    s.push_str(&indent(
                        &serde_json::to_string_pretty(&shown).unwrap_or_default(),
                    ));
                }
            }
        }
    }
    let cut = result.value.get("truncated").and_then(|t| t.as_object());
    if let Some(cut) = cut.filter(|c| with_output && c.values().all(|n| n.is_u64())) {
        let lost: Vec<String> = cut
            .iter()
            .map(|(stream, n)| format!("{n} bytes of {stream}"))
            .collect();
        s.push_str(&format!(
            "  Output truncated (--max-output): {} omitted\n",
            lost.join(", ")
        ));
    }
    if let Some(msg) = result
        .error()
        .and_then(|e| e.get("msg"))
        .and_then(|m| m.as_str())
    {
        let kind = result
            .error()
            .and_then(|e| e.get("kind"))
            .and_then(|k| k.as_str())
            .unwrap_or("error");
        s.push_str(&format!("  Error ({kind}): {msg}\n"));
    }
    s
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
