//! Small helpers shared by the fixture: running commands, temporary
//! directories (and removing those of dead test processes), writing files
//! with a mode, and panicking with the tail of a daemon's log.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard, PoisonError};

use tempfile::TempDir;

/// Log lines quoted in panic messages.
const LOG_TAIL_LINES: usize = 40;
/// Temporary directories created here are named `<prefix><kind>-<pid>-<random>`.
const TEMP_DIR_PREFIX: &str = "ferry-fixture-";

pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs a command to completion with stdin closed: its stdout, or a
/// description of the failure including its stderr.
pub(super) fn run(cmd: &mut Command) -> Result<String, String> {
    let output = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(format!(
            "{cmd:?} failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

/// A new temporary directory named after `kind` and this process.
pub(super) fn temp_dir(kind: &str) -> TempDir {
    tempfile::Builder::new()
        .prefix(&format!("{TEMP_DIR_PREFIX}{kind}-{}-", std::process::id()))
        .tempdir()
        .unwrap_or_else(|e| fail(format!("cannot create a temp dir: {e}")))
}

/// Removes temporary directories of test processes that died without
/// cleaning up (killed by a signal, so no drop and no exit hook ran).
pub(super) fn remove_stale_temp_dirs() {
    let Ok(entries) = fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(owner) = name
            .to_str()
            .and_then(|name| name.strip_prefix(TEMP_DIR_PREFIX))
            .and_then(|rest| rest.split('-').nth(1))
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{owner}")).exists() {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

pub(super) fn write_file(path: &Path, content: &str, mode: u32) {
    fs::write(path, content)
        .unwrap_or_else(|e| fail(format!("cannot write {}: {e}", path.display())));
    set_mode(path, mode);
}

pub(super) fn create_dir(path: &Path) {
    fs::create_dir_all(path)
        .unwrap_or_else(|e| fail(format!("cannot create {}: {e}", path.display())));
}

pub(super) fn set_mode(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
        .unwrap_or_else(|e| fail(format!("cannot chmod {}: {e}", path.display())));
}

pub(super) fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

pub(super) fn fail(message: String) -> ! {
    panic!("sshd fixture: {message}")
}

pub(super) fn fail_with_log(message: &str, dir: &Path) -> ! {
    let log_path = dir.join("sshd.log");
    let log = fs::read_to_string(&log_path).unwrap_or_default();
    panic!(
        "sshd fixture: {message}\n--- last {LOG_TAIL_LINES} lines of {} ---\n{}\n--- end of sshd log ---",
        log_path.display(),
        tail(&log, LOG_TAIL_LINES)
    )
}
