//! The JSON writer: Bolt's `{"items":[...],"target_count":N,"elapsed_time":S}`,
//! with each item written the moment its target finishes, so a CI job can
//! read results as they come.

use std::io::Write;
use std::sync::Mutex;

use super::{Shared, write_out};
use crate::run::events::{Event, Sink};

pub struct JsonWriter {
    out: Shared,
    written: Mutex<usize>,
}

impl JsonWriter {
    pub fn new(out: Box<dyn Write + Send>) -> Self {
        JsonWriter {
            out: Mutex::new(out),
            written: Mutex::new(0),
        }
    }
}

impl Sink for JsonWriter {
    fn event(&self, event: &Event<'_>) {
        match event {
            Event::RunStarted { .. } => write_out(&self.out, "{\"items\":["),
            Event::TargetFinished(result) => {
                let Ok(mut n) = self.written.lock() else {
                    return;
                };
                let item = serde_json::to_string(result).unwrap_or_else(|_| "null".into());
                let sep = if *n == 0 { "\n" } else { ",\n" };
                *n += 1;
                write_out(&self.out, &format!("{sep}{item}"));
            }
            Event::RunFinished(summary) => write_out(
                &self.out,
                &format!(
                    "\n],\"target_count\":{},\"elapsed_time\":{}}}\n",
                    summary.results.len(),
                    summary.elapsed.as_secs()
                ),
            ),
            Event::TargetStarted { .. }
            | Event::Output { .. }
            | Event::Resource { .. }
            | Event::Notice { .. } => {}
        }
    }
}
