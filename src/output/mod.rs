//! Printing a run: the human printer (a progress bar on a terminal, a block
//! per target, a closing summary, optional live lines) and the JSON writer
//! (Bolt's result format, items written as targets finish). Both are
//! [`crate::run::events::Sink`]s.

pub mod human;
pub mod json;

use std::io::Write;
use std::sync::Mutex;

/// Output format chosen with `--format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Human,
    Json,
}

/// A writer shared by concurrent tasks.
pub type Shared = Mutex<Box<dyn Write + Send>>;

pub(crate) fn write_out(out: &Shared, text: &str) {
    if let Ok(mut w) = out.lock() {
        // A closed stdout (e.g. `| head`) must not abort the run.
        let _ = w.write_all(text.as_bytes());
        let _ = w.flush();
    }
}
