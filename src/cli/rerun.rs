//! `--rerun`: the targets of the last run and how each ended, kept in
//! the project's rerun file (Bolt's `.rerun.json`, or its `rerunfile`;
//! none with `save-rerun: false`), or outside a project in
//! `.ferry/rerun.json` in the working directory. The format is Bolt's.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use ferry::run::{Status, Summary};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Rerun {
    Failure,
    Success,
    All,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    target: String,
    status: Status,
}

pub fn path() -> PathBuf {
    match super::project() {
        Some(p) => p.rerun_file(),
        None => Path::new(".ferry").join("rerun.json"),
    }
}

/// Records how each target of a run ended. A failure to write is a warning.
pub fn save(summary: &Summary) {
    let entries: Vec<Entry> = summary
        .results
        .iter()
        .map(|r| Entry {
            target: r.target.clone(),
            status: r.status(),
        })
        .collect();
    // A new file with a random name (created exclusively, never through a
    // link someone left there), renamed over the record when complete.
    if super::project().is_some_and(|p| !p.save_rerun) {
        return;
    }
    let write = || -> std::io::Result<()> {
        let file = path();
        let dir = match file.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&dir)?;
        let mut tmp = tempfile::Builder::new()
            .prefix("rerun.")
            .suffix(".tmp")
            .tempfile_in(&dir)?;
        std::io::Write::write_all(&mut tmp, &serde_json::to_vec_pretty(&entries)?)?;
        tmp.persist(&file).map(drop).map_err(|e| e.error)
    };
    if let Err(e) = write() {
        tracing::warn!("cannot record this run in {}: {e}", path().display());
    }
}

/// The target names of the last run that ended as asked.
pub fn load(which: Rerun) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(path()).with_context(|| {
        format!(
            "--rerun needs a previous run ({} is missing)",
            path().display()
        )
    })?;
    let entries: Vec<Entry> = serde_json::from_str(&text)
        .with_context(|| format!("{} is not valid", path().display()))?;
    Ok(entries
        .into_iter()
        .filter(|e| match which {
            Rerun::All => true,
            Rerun::Failure => e.status == Status::Failure,
            Rerun::Success => e.status == Status::Success,
        })
        .map(|e| e.target)
        .collect())
}
