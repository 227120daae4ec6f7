//! Running a task on one target, in as few round trips as the cache allows.
//!
//! Task files live on the target in a content-addressed cache,
//! `<cache-dir>/<sha256>/<file>` (default `~/.cache/ferry/tasks`). Every run
//! is one command — a small POSIX shell wrapper — that copies each file from
//! the cache into a private install dir, checks the copy's sha256, and only
//! then runs the task from there; a file altered in the cache is never
//! executed. When a file is missing or altered the wrapper runs nothing and
//! says which, ferry sends those files, and runs the wrapper again. A
//! second run of an unchanged task therefore sends no file bytes.
//!
//! Where the transport keeps a long-lived shell on the target (SSH, see
//! `transport::ssh::shell`), the wrapper runs there and the install dir is
//! one per set of files inside that shell's private directory, kept for
//! the connection: later runs (a plan's steps) check the copies already
//! there — through the shell's checksum service, with no process started —
//! and copy again only when a check fails. Elsewhere, and with
//! `--no-cleanup`, every run gets a fresh install dir, removed afterwards
//! unless asked to keep it.
//!
//! Parameters never appear on the command line: the wrapper reads them
//! from stdin — first `PT_` assignments (each value quoted by ferry) up to a
//! one-time token line, then the JSON object for the task's own stdin.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::Prepared;
use super::loader::{TaskFile, sha256_hex};
use super::metadata::InputMethod;
use crate::events::{Discard, Sink};
use crate::executor::actions::run_collect;
use crate::executor::result::Status;
use crate::inventory::Target;
use crate::transport::command::{RUN_AS_READY, elevation, join, nonce, quote};
use crate::transport::{Command, RunAs, Transport, TransportError};

/// The wrapper's exit status when files are missing from the cache.
const CACHE_MISS: i32 = 97;
const MISS_MARKER: &str = "ferry-cache-miss";
const DEFAULT_CACHE: &str = ".cache/ferry/tasks";

fn terr(msg: impl Into<String>) -> TransportError {
    TransportError::Command(msg.into())
}

/// The executable for this target: the first implementation whose
/// requirements the target's features meet, else the task's only file.
pub fn choose_executable<'a>(
    prepared: &'a Prepared,
    target: &Target,
) -> Result<(&'a TaskFile, InputMethod), TransportError> {
    let task = &prepared.task;
    let meta = &task.metadata;
    let mut features: BTreeSet<String> = target.features.clone();
    features.insert("shell".into());
    let (name, method) = if meta.implementations.is_empty() {
        if task.executables.len() != 1 {
            let names: Vec<&String> = task.executables.keys().collect();
            return Err(terr(format!(
                "task {} has several files ({names:?}) and no implementations in its metadata",
                task.name
            )));
        }
        let name = task.executables.keys().next().cloned().unwrap_or_default();
        (name, meta.input_method)
    } else {
        let chosen = meta
            .implementations
            .iter()
            .find(|i| i.requirements.iter().all(|r| features.contains(r)))
            .ok_or_else(|| {
                terr(format!(
                    "no implementation of task {} suits this target (features: {features:?})",
                    task.name
                ))
            })?;
        (
            chosen.name.clone(),
            chosen.input_method.or(meta.input_method),
        )
    };
    let file = task.executables.get(&name).ok_or_else(|| {
        terr(format!(
            "task {}: implementation {name} is not in the module's tasks folder",
            task.name
        ))
    })?;
    let default = if name.ends_with(".ps1") {
        InputMethod::Powershell
    } else {
        InputMethod::Both
    };
    Ok((file, method.unwrap_or(default)))
}

fn basename(relative: &str) -> &str {
    relative.rsplit('/').next().unwrap_or(relative)
}

/// The elevated part: reads the `PT_` assignments up to the token, then
/// runs the task with the rest of stdin.
fn inner_script(announce: bool) -> String {
    let ready = if announce {
        format!("printf '%s\\n' '{RUN_AS_READY}' >&2\n")
    } else {
        String::new()
    };
    format!(
        "{ready}tok=$1; exe=$2; frag=\nwhile IFS= read -r line; do [ \"$line\" = \"$tok\" ] && break; frag=\"$frag$line\n\"; done\neval \"$frag\"\n\"$exe\"\n"
    )
}

struct Wrapper {
    script: String,
    stdin: Vec<u8>,
}

/// The wrapper script: as few processes as possible on the fast path
/// (mkdir, one cp per destination folder, one sha256sum, the task, rm).
/// Every path in it is ferry's own or a validated module-relative name;
/// no parameter value is part of it.
/// Whether a module-relative path is plain enough to appear in the wrapper.
fn plain_path(p: &str) -> bool {
    !p.is_empty()
        && p.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'))
        && p.split('/')
            .all(|seg| !seg.is_empty() && seg != "." && seg != "..")
}

fn script(layout: &Layout<'_>, cache_expr: &str, cleanup: bool) -> Result<String, TransportError> {
    let q = |s: &str| quote(s).map_err(|e| terr(e.to_string()));
    let Layout {
        files,
        exe,
        reuse,
        run_as,
        token,
        ..
    } = *layout;
    let installdir = &q(layout.installdir)?;
    if let Some(bad) = files.iter().find(|f| !plain_path(&f.relative)) {
        return Err(terr(format!(
            "task file '{}': names may only hold letters, digits, '.', '_', '-' and '/'",
            bad.relative
        )));
    }
    // The run-as user must read the install dir; nothing in it is secret.
    let mode = if run_as.is_some() { "755" } else { "700" };
    let mut dirs: Vec<String> = Vec::new();
    for f in files {
        let mut at = String::new();
        for seg in f
            .relative
            .split('/')
            .rev()
            .skip(1)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
        {
            at = if at.is_empty() {
                seg.to_string()
            } else {
                format!("{at}/{seg}")
            };
            if !dirs.contains(&at) {
                dirs.push(at.clone());
            }
        }
    }
    let mut s = format!("c={cache_expr}\nd={installdir}\nok=\n");
    let mut mkdir = format!("mkdir -m {mode} \"$d\"");
    for d in &dirs {
        mkdir.push_str(&format!(" \"$d\"/{}", q(d)?));
    }
    let mut prepare = format!("{mkdir} || exit 125\n");
    // Fast path: copy, then check every copy in one sha256sum.
    let mut by_dir: Vec<(String, Vec<String>)> = Vec::new();
    for f in files {
        let dir = f
            .relative
            .rsplit_once('/')
            .map(|(d, _)| d.to_string())
            .unwrap_or_default();
        let src = format!("\"$c\"/{}/{}", q(&f.sha256)?, q(basename(&f.relative))?);
        match by_dir.iter_mut().find(|(d, _)| *d == dir) {
            Some((_, srcs)) => srcs.push(src),
            None => by_dir.push((dir, vec![src])),
        }
    }
    let copies: Vec<String> = by_dir
        .iter()
        .map(|(dir, srcs)| Ok(format!("cp {} \"$d\"/{}/", srcs.join(" "), q(dir)?)))
        .collect::<Result<_, TransportError>>()?;
    let mut sums = String::new();
    for f in files {
        sums.push_str(&format!("{}  $d/{}\n", f.sha256, f.relative));
    }
    prepare.push_str(&format!(
        "if command -v sha256sum >/dev/null 2>&1 && {{ {}; }} 2>/dev/null; then sha256sum -c >/dev/null 2>&1 <<FERRY_SUMS && ok=1\n{sums}FERRY_SUMS\nfi\n",
        copies.join(" && ")
    ));
    if reuse {
        // The install dir outlives this run (it is the session's): check the
        // copies already there with the shell's `ferry_sha256_check` (see
        // transport::ssh::shell), and copy afresh only when that fails.
        let mut check = String::from("ferry_sha256_check");
        for f in files {
            check.push_str(&format!(" {} \"$d\"/{}", f.sha256, q(&f.relative)?));
        }
        s.push_str(&format!(
            "if [ -d \"$d\" ] && {check}; then ok=1\nelse\n[ ! -d \"$d\" ] || rm -rf \"$d\"\n{prepare}fi\n"
        ));
    } else {
        s.push_str(&prepare);
    }
    // Slow path (a miss, or no sha256sum): find exactly which files to send.
    s.push_str("if [ -z \"$ok\" ]; then\n  h() { if command -v sha256sum >/dev/null 2>&1; then sha256sum \"$1\"; elif command -v shasum >/dev/null 2>&1; then shasum -a 256 \"$1\"; else openssl dgst -sha256 -r \"$1\"; fi | cut -d' ' -f1; }\n  m=\n");
    for f in files {
        let (sha, rel, base) = (q(&f.sha256)?, q(&f.relative)?, q(basename(&f.relative))?);
        s.push_str(&format!("  cp \"$c\"/{sha}/{base} \"$d\"/{rel} 2>/dev/null && [ \"$(h \"$d\"/{rel})\" = {sha} ] || m=\"$m {}\"\n", f.sha256));
    }
    s.push_str(&format!(
        "  if [ -n \"$m\" ]; then rm -rf \"$d\"\n    set --; for x in $m; do set -- \"$@\" \"$c/$x\"; done\n    mkdir -p \"$@\" || exit 125\n    echo \"{MISS_MARKER} $c$m\"; exit {CACHE_MISS}; fi\nfi\n"
    ));
    let exe_path = format!("\"$d\"/{}", q(&exe.relative)?);
    let exec_bits = if run_as.is_some() { "a+rx" } else { "u+x" };
    s.push_str(&format!(
        "[ -x {exe_path} ] || chmod {exec_bits} {exe_path}\n"
    ));
    match run_as {
        Some(r) => {
            let mut run = elevation(r);
            run.extend([
                "sh".to_string(),
                "-c".to_string(),
                inner_script(true),
                "ferry-task".to_string(),
                token.to_string(),
            ]);
            s.push_str(&format!(
                "{} {exe_path}\nrc=$?\n",
                join(&run).map_err(|e| terr(e.to_string()))?
            ));
        }
        None => {
            // No elevation: read the assignments and run the task in this shell.
            s.push_str(&format!("tok={}; frag=\nwhile IFS= read -r line; do [ \"$line\" = \"$tok\" ] && break; frag=\"$frag$line\n\"; done\neval \"$frag\"\n{exe_path}\nrc=$?\n", q(token)?));
        }
    }
    if cleanup && !reuse {
        s.push_str("rm -rf \"$d\"\n");
    }
    s.push_str("exit $rc\n");
    Ok(s)
}

/// Everything one run's wrapper is made of.
struct Layout<'a> {
    files: &'a [&'a TaskFile],
    exe: &'a TaskFile,
    method: InputMethod,
    cache: &'a str,
    installdir: &'a str,
    /// The install dir belongs to the target's long-lived shell and is
    /// reused by later runs of the same files.
    reuse: bool,
    run_as: Option<&'a RunAs>,
    params: &'a Map<String, Value>,
    token: &'a str,
}

fn build(prepared: &Prepared, layout: &Layout<'_>) -> Result<Wrapper, TransportError> {
    let Layout {
        method,
        cache,
        params,
        token,
        ..
    } = *layout;
    let q = |s: &str| quote(s).map_err(|e| terr(e.to_string()));
    let cache_expr = if cache.starts_with('/') {
        q(cache)?
    } else {
        format!("\"$HOME\"/{}", q(cache)?)
    };
    let s = script(layout, &cache_expr, prepared.cleanup)?;

    let mut stdin = Vec::new();
    if matches!(method, InputMethod::Environment | InputMethod::Both) {
        for (k, v) in params {
            let text = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            if text.contains(token) {
                return Err(terr(
                    "a parameter value contains the run's one-time token; run again",
                ));
            }
            stdin.extend(format!("export PT_{k}={}\n", q(&text)?).into_bytes());
        }
    }
    stdin.extend(format!("{token}\n").into_bytes());
    if matches!(
        method,
        InputMethod::Stdin | InputMethod::Both | InputMethod::Powershell
    ) {
        stdin.extend(serde_json::to_vec(params).map_err(|e| terr(e.to_string()))?);
    }
    Ok(Wrapper { script: s, stdin })
}

/// Sends the files the wrapper reported missing; returns the bytes sent.
async fn send_missing(
    t: &dyn Transport,
    files: &[&TaskFile],
    report: &str,
) -> Result<u64, TransportError> {
    let mut words = report.split_whitespace();
    let cache = words
        .next()
        .ok_or_else(|| terr("the target's cache report is empty"))?
        .to_string();
    let missing: BTreeSet<&str> = words.collect();
    let wanted: Vec<&&TaskFile> = files
        .iter()
        .filter(|f| missing.contains(f.sha256.as_str()))
        .collect();
    // The wrapper made the cache dirs of the files it reported missing.
    let mut sent = 0;
    for f in wanted {
        // Executable in the cache, so the copy the wrapper makes runs as is.
        let dest = format!("{cache}/{}/{}", f.sha256, basename(&f.relative));
        t.write_file(&f.bytes, &dest, 0o755).await?;
        sent += f.bytes.len() as u64;
    }
    Ok(sent)
}

/// Runs a prepared task on a connected target.
pub async fn run(
    target: &Target,
    t: &dyn Transport,
    prepared: &Arc<Prepared>,
    sink: &dyn Sink,
) -> Result<(Status, Value), TransportError> {
    let (exe, method) = choose_executable(prepared, target)?;
    let mut files: Vec<&TaskFile> = vec![exe];
    files.extend(prepared.support_files.iter());
    let settings = t.posix();
    let cache = settings
        .cache_dir
        .clone()
        .unwrap_or_else(|| DEFAULT_CACHE.to_string());
    let tmp = settings
        .tmpdir
        .clone()
        .unwrap_or_else(|| "/tmp".to_string());
    // In the target's long-lived shell (when the transport keeps one and
    // nothing asks to keep install dirs), each set of files gets one dir
    // for the whole connection; otherwise every run gets its own. Sensitive
    // parameters keep a channel of their own: in the shell they would pass
    // through a here-document, which some shells (bash before 5.1, /bin/sh
    // on RHEL 8) write to a temporary file.
    let session = settings
        .session_dir
        .as_deref()
        .filter(|_| prepared.cleanup && settings.run_as.is_none() && prepared.secrets.is_empty());
    let installdir = match session {
        Some(dir) => {
            let set: String = files
                .iter()
                .map(|f| format!("{} {}\n", f.sha256, f.relative))
                .collect();
            format!("{dir}/{}", &sha256_hex(set.as_bytes())[..16])
        }
        None => format!(
            "{}/ferry-task-{}",
            tmp.trim_end_matches('/'),
            nonce(&target.name)
        ),
    };
    let token = nonce(&target.name);
    let mut params = prepared.params.clone();
    params.insert("_task".into(), Value::String(prepared.task.name.clone()));
    if prepared.noop {
        params.insert("_noop".into(), Value::Bool(true));
    }
    if !prepared.support_files.is_empty() {
        params.insert("_installdir".into(), Value::String(installdir.clone()));
    }
    let layout = Layout {
        files: &files,
        exe,
        method,
        cache: &cache,
        installdir: &installdir,
        reuse: session.is_some(),
        run_as: settings.run_as.as_ref(),
        params: &params,
        token: &token,
    };
    let wrapper = build(prepared, &layout)?;
    let mut command = Command::shell(wrapper.script)
        .with_stdin(wrapper.stdin)
        .with_inline_run_as(settings.run_as.clone());
    if session.is_some() {
        command = command.in_session();
    }
    let mut sent = 0u64;
    for attempt in 0..2 {
        let (done, out) = run_collect(
            target,
            t,
            &command,
            if attempt == 0 {
                &Discard as &dyn Sink
            } else {
                sink
            },
        )
        .await?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let report = stdout.lines().find_map(|l| l.strip_prefix(MISS_MARKER));
        if let Some(report) = report.filter(|_| done.exit_code == CACHE_MISS) {
            if attempt == 1 {
                return Err(TransportError::File(format!(
                    "task files still fail their sha256 check on the target after sending them:{report}"
                )));
            }
            sent += send_missing(t, &files, report).await?;
            continue;
        }
        if attempt == 0 {
            // Output went to the discard sink while the cache was unknown; pass it on now.
            for (stream, data) in [
                (crate::transport::Stream::Stdout, &out.stdout),
                (crate::transport::Stream::Stderr, &out.stderr),
            ] {
                if !data.is_empty() {
                    sink.event(&crate::events::Event::Output {
                        target: &target.name,
                        stream,
                        data,
                    });
                }
            }
        }
        tracing::info!(target_name = %target.name, "task {}: sent {sent} bytes of task files", prepared.task.name);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        return Ok(super::output::result(
            done.exit_code,
            &stdout,
            &stderr,
            &prepared.secrets,
        ));
    }
    Err(terr("the task did not run"))
}
