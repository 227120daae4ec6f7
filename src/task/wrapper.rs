//! The wrapper: the POSIX shell script that runs a task on a target.
//!
//! One wrapper is one round trip. It finds the task's files — in the
//! install dir the target's long-lived shell kept from an earlier run, or
//! copied afresh from the content-addressed cache — checks every copy's
//! sha256, and only then runs the task; when a cached file is missing or
//! altered it runs nothing, makes the dirs the files go in, and reports
//! which (exit status [`CACHE_MISS`], a [`MISS_MARKER`] line). On the
//! common paths it starts no process but the task: checks go through the
//! shell's checksum service, a missing cache is found with `test`, and a
//! `#!/bin/sh` task that cannot tell the difference is read into the
//! wrapper's own subshell instead of exec'ing a new shell.
//!
//! Every path in a wrapper is ferry's own or a validated module-relative
//! name. Parameters never reach a command line: `PT_` assignments (each
//! value quoted by ferry) come through stdin up to a one-time token line,
//! or, in the long-lived shell, whose stdin the script itself is, as part
//! of the script; then the JSON object for the task's own stdin.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::loader::TaskFile;
use super::metadata::InputMethod;
use crate::transport::command::{RUN_AS_READY, elevation, join, quote};
use crate::transport::{RunAs, TransportError};

/// The wrapper's exit status when files are missing from the cache.
pub const CACHE_MISS: i32 = 97;
/// Starts the line that lists the missing files: `<marker> <cache> <sha>...`.
pub const MISS_MARKER: &str = "ferry-cache-miss";

fn terr(msg: impl Into<String>) -> TransportError {
    TransportError::Command(msg.into())
}

/// One word for the wrapper, quoted for a POSIX shell.
fn q(word: &str) -> Result<String, TransportError> {
    quote(word).map_err(|e| terr(e.to_string()))
}

/// A path inside the install dir (`$d`), as a shell word.
fn in_d(rel: &str) -> Result<String, TransportError> {
    Ok(format!("\"$d\"/{}", q(rel)?))
}

/// Everything one run's wrapper is made of.
#[derive(Clone, Copy)]
pub struct Layout<'a> {
    pub files: &'a [&'a TaskFile],
    pub exe: &'a TaskFile,
    pub method: InputMethod,
    /// The cache dir: absolute, or relative to `$HOME`.
    pub cache: &'a str,
    pub installdir: &'a str,
    /// The install dir belongs to the target's long-lived shell and is
    /// reused by later runs of the same files; nothing runs after the task.
    pub reuse: bool,
    /// Remove the install dir after the run (when it is not reused).
    pub cleanup: bool,
    pub run_as: Option<&'a RunAs>,
    pub params: &'a Map<String, Value>,
    pub token: &'a str,
    /// After a miss in a reused install dir, when every file can pass
    /// through the shell ([`deliverable`]): the sha256s the cache lacks.
    /// The wrapper then writes those cache files and every install copy
    /// itself, from the bytes in its text, before its checks.
    pub deliver: Option<&'a BTreeSet<String>>,
}

/// The most task file bytes a wrapper carries in its text.
const DELIVER_MAX: usize = 1 << 20;

/// Whether these files can be written by the wrapper itself: text a shell
/// word can hold (UTF-8, no NUL), up to [`DELIVER_MAX`] bytes in all.
pub fn deliverable(files: &[&TaskFile]) -> bool {
    files.iter().map(|f| f.bytes.len()).sum::<usize>() <= DELIVER_MAX
        && files
            .iter()
            .all(|f| !f.bytes.contains(&0) && std::str::from_utf8(&f.bytes).is_ok())
}

/// A wrapper script and the stdin it reads.
pub struct Wrapper {
    pub script: String,
    pub stdin: Vec<u8>,
}

pub fn basename(relative: &str) -> &str {
    relative.rsplit('/').next().unwrap_or(relative)
}

/// Whether a module-relative path is plain enough to appear in the wrapper.
fn plain_path(p: &str) -> bool {
    !p.is_empty()
        && p.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'))
        && p.split('/')
            .all(|seg| !seg.is_empty() && seg != "." && seg != "..")
}

/// Whether a task can be read into the wrapper's subshell (`.`) rather
/// than exec'd, with the same result: a `#!/bin/sh` script (the long-lived
/// shell is `/bin/sh` too) that never looks at `$0` or `$$`, the two
/// things that differ.
pub fn sourceable(bytes: &[u8]) -> bool {
    let Some(rest) = bytes.strip_prefix(b"#!/bin/sh") else {
        return false;
    };
    let shebang_ends = rest
        .iter()
        .position(|b| *b == b'\n')
        .is_some_and(|end| rest[..end].iter().all(|b| *b == b' ' || *b == b'\t'));
    let looks_at = |needle: &[u8]| rest.windows(needle.len()).any(|w| w == needle);
    shebang_ends
        && !rest.contains(&0)
        && !["$0", "${0", "$$", "${$", "#0", "#$"]
            .iter()
            .any(|n| looks_at(n.as_bytes()))
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

/// The folders under the install dir that hold files, parents first.
fn folders(files: &[&TaskFile]) -> Vec<String> {
    let mut dirs: Vec<String> = Vec::new();
    for f in files {
        let mut at = String::new();
        let segs: Vec<&str> = f.relative.split('/').collect();
        for seg in &segs[..segs.len().saturating_sub(1)] {
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
    dirs
}

/// The script. `exports` are the `PT_` assignments: in a reused install
/// dir (the long-lived shell, whose script text is its stdin, never a
/// command line) they are part of the script; elsewhere the script reads
/// them from its stdin, up to the token line.
fn script(layout: &Layout<'_>, cache_expr: &str, exports: &str) -> Result<String, TransportError> {
    let Layout {
        files,
        exe,
        reuse,
        run_as,
        token,
        ..
    } = *layout;
    if let Some(bad) = files.iter().find(|f| !plain_path(&f.relative)) {
        return Err(terr(format!(
            "task file '{}': names may only hold letters, digits, '.', '_', '-' and '/'",
            bad.relative
        )));
    }
    let installdir = q(layout.installdir)?;
    let dirs = folders(files);
    // A reused install dir is checked by the shell's checksum service (see
    // transport::ssh::shell); a fresh one by one sha256sum.
    let mut check = String::from("ferry_sha256_check");
    let mut sums = String::new();
    let mut copies: Vec<(String, Vec<String>)> = Vec::new();
    let mut missing = String::from("m=\n");
    let mut one_by_one = String::new();
    for f in files {
        let (sha, base) = (q(&f.sha256)?, q(basename(&f.relative))?);
        let (cached, copy) = (format!("\"$c\"/{sha}/{base}"), in_d(&f.relative)?);
        check.push_str(&format!(" {sha} {copy}"));
        sums.push_str(&format!("{}  $d/{}\n", f.sha256, f.relative));
        let dir = f.relative.rsplit_once('/').map_or("", |(d, _)| d);
        match copies.iter_mut().find(|(d, _)| d == dir) {
            Some((_, srcs)) => srcs.push(cached.clone()),
            None => copies.push((dir.to_string(), vec![cached.clone()])),
        }
        missing.push_str(&format!("[ -f {cached} ] || m=\"$m {sha}\"\n"));
        one_by_one.push_str(&format!(
            "  cp {cached} {copy} 2>/dev/null && [ \"$(h {copy})\" = {sha} ] || m=\"$m {sha}\"\n"
        ));
    }
    let copy = copies
        .iter()
        .map(|(dir, srcs)| Ok(format!("cp {} {}/", srcs.join(" "), in_d(dir)?)))
        .collect::<Result<Vec<_>, TransportError>>()?
        .join(" && ");
    // The check of fresh copies, and the here-document it reads, if any.
    let (verify, verify_doc) = if reuse {
        (check.clone(), String::new())
    } else {
        (
            "command -v sha256sum >/dev/null 2>&1 && sha256sum -c >/dev/null 2>&1 <<FERRY_SUMS"
                .to_string(),
            format!("{sums}FERRY_SUMS\n"),
        )
    };
    let mk = if reuse {
        mk_function(layout, &dirs)?
    } else {
        String::new()
    };
    let make_missing = if reuse {
        "mk".to_string()
    } else {
        "set --; for x in $m; do set -- \"$@\" \"$c/$x\"; done\n  mkdir -p \"$@\" || exit 125"
            .to_string()
    };
    let make_fresh = if reuse {
        "mk".to_string()
    } else {
        // The run-as user must read the install dir; nothing in it is secret.
        let mode = if run_as.is_some() { "755" } else { "700" };
        let mut mkdir = format!("mkdir -m {mode} \"$d\"");
        for d in &dirs {
            mkdir.push_str(&format!(" {}", in_d(d)?));
        }
        format!("{mkdir} || exit 125")
    };

    let mut s = format!("c={cache_expr}\nd={installdir}\nok=\n{mk}");
    if let Some(missing) = layout.deliver.filter(|_| reuse) {
        s.push_str(&deliver(files, missing)?);
    }
    if reuse {
        s.push_str(&format!("if [ -d \"$d\" ] && {check}; then ok=1; fi\n"));
    }
    s.push_str(&format!(
        "if [ -z \"$ok\" ]; then\nmiss() {{ {make_missing}\n  echo \"{MISS_MARKER} $c$m\"; exit {CACHE_MISS}; }}\n{missing}"
    ));
    if reuse {
        s.push_str("[ ! -d \"$d\" ] || rm -rf \"$d\"\n");
    }
    s.push_str(&format!(
        "[ -z \"$m\" ] || miss\n{make_fresh}\n{{ {copy}; }} 2>/dev/null && {verify} && ok=1\n{verify_doc}"
    ));
    // An altered cache file, or no sha256sum: find out which, file by file.
    s.push_str(&format!(
        "if [ -z \"$ok\" ]; then\n  h() {{ if command -v sha256sum >/dev/null 2>&1; then sha256sum \"$1\"; elif command -v shasum >/dev/null 2>&1; then shasum -a 256 \"$1\"; else openssl dgst -sha256 -r \"$1\"; fi | cut -d' ' -f1; }}\n{one_by_one}  if [ -n \"$m\" ]; then rm -rf \"$d\"; miss; fi\nfi\nfi\n"
    ));
    let exe_path = in_d(&exe.relative)?;
    let read_params = if reuse {
        exports.to_string()
    } else {
        format!(
            "tok={}; frag=\nwhile IFS= read -r line; do [ \"$line\" = \"$tok\" ] && break; frag=\"$frag$line\n\"; done\neval \"$frag\"\n",
            q(token)?
        )
    };
    if reuse && run_as.is_none() && sourceable(&exe.bytes) {
        // Nothing of the wrapper's is left for the task to see.
        let path = q(&format!("{}/{}", layout.installdir, exe.relative))?;
        s.push_str(&read_params);
        s.push_str(&format!(
            "unset c d f ok m x tok frag line FERRY_SESSION_DIR FERRY_SHA256_PID _n _ok _r _b _p\nunset -f h miss mk dirs_ok ferry_sha256_check ferry_mkdirs\n. {path}\n"
        ));
        return Ok(s);
    }
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
        None if reuse => {
            // Nothing runs after the task: it takes the subshell's place.
            s.push_str(&format!("{read_params}exec {exe_path}\n"));
            return Ok(s);
        }
        None => {
            s.push_str(&format!("{read_params}{exe_path}\nrc=$?\n"));
        }
    }
    if layout.cleanup && !reuse {
        s.push_str("rm -rf \"$d\"\n");
    }
    s.push_str("exit $rc\n");
    Ok(s)
}

/// In a reused install dir every dir a run needs — the shell's private
/// dir, the install dir and its folders, the cache's — is made by one
/// process: the wrapper's `mk` (through `ferry_mkdirs`, see
/// transport::ssh::shell), which `dirs_ok` checks. On a miss ferry writes
/// the install copies itself, so `mk` makes their folders too.
fn mk_function(layout: &Layout<'_>, dirs: &[String]) -> Result<String, TransportError> {
    let mut wanted = vec!["\"$d\"".to_string()];
    for d in dirs {
        wanted.push(in_d(d)?);
    }
    wanted.extend(cache_dirs(layout.cache)?);
    let mut test = Vec::new();
    for d in dirs
        .iter()
        .filter(|d| !dirs.iter().any(|o| o.starts_with(&format!("{d}/"))))
    {
        test.push(format!("[ -d {} ]", in_d(d)?));
    }
    for f in layout.files {
        let sha = format!("\"$c\"/{}", q(&f.sha256)?);
        if !wanted.contains(&sha) {
            test.push(format!("[ -d {sha} ]"));
            wanted.push(sha);
        }
    }
    Ok(format!(
        "dirs_ok() {{ {}; }}\nmk() {{ ferry_mkdirs {} && dirs_ok || {{ echo \"ferry: cannot make $d or the task cache's dirs\" >&2; exit 125; }}; }}\n",
        test.join(" && "),
        wanted.join(" ")
    ))
}

/// Writes the missing cache files and every install copy from the bytes
/// in the script (no process but `mk`, and that only for missing dirs).
fn deliver(files: &[&TaskFile], missing: &BTreeSet<String>) -> Result<String, TransportError> {
    let mut s = String::from("dirs_ok || mk\n");
    for f in files {
        let text = std::str::from_utf8(&f.bytes)
            .map_err(|_| terr(format!("task file {} is not text", f.relative)))?;
        s.push_str(&format!("f={}\n", q(text)?));
        if missing.contains(&f.sha256) {
            s.push_str(&format!(
                "printf '%s' \"$f\" >\"$c\"/{}/{} || exit 125\n",
                q(&f.sha256)?,
                q(basename(&f.relative))?
            ));
        }
        s.push_str(&format!(
            "printf '%s' \"$f\" >\"$d\"/{} || exit 125\n",
            q(&f.relative)?
        ));
    }
    s.push_str("f=\n");
    Ok(s)
}

/// Every dir of the cache path, outermost first, as shell words (`"$HOME"/`
/// in front of a relative path): made one by one, as `mkdir -p` would.
fn cache_dirs(cache: &str) -> Result<Vec<String>, TransportError> {
    let (base, rest) = match cache.strip_prefix('/') {
        Some(rest) => ("", rest),
        None => ("\"$HOME\"", cache),
    };
    let mut at = String::new();
    let mut out = Vec::new();
    for seg in rest.split('/').filter(|seg| !seg.is_empty()) {
        at = if at.is_empty() {
            seg.to_string()
        } else {
            format!("{at}/{seg}")
        };
        let word = q(&format!("/{at}"))?;
        out.push(format!("{base}{word}"));
    }
    Ok(out)
}

/// The wrapper for one run, and its stdin.
pub fn build(layout: &Layout<'_>) -> Result<Wrapper, TransportError> {
    let Layout {
        method,
        cache,
        params,
        token,
        ..
    } = *layout;
    let cache_expr = if cache.starts_with('/') {
        q(cache)?
    } else {
        format!("\"$HOME\"/{}", q(cache)?)
    };
    let mut exports = String::new();
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
            exports.push_str(&format!("export PT_{k}={}\n", q(&text)?));
        }
    }
    let script = script(layout, &cache_expr, &exports)?;
    let mut stdin = Vec::new();
    if !layout.reuse {
        stdin.extend(format!("{exports}{token}\n").into_bytes());
    }
    if matches!(
        method,
        InputMethod::Stdin | InputMethod::Both | InputMethod::Powershell
    ) {
        stdin.extend(serde_json::to_vec(params).map_err(|e| terr(e.to_string()))?);
    }
    Ok(Wrapper { script, stdin })
}

#[cfg(test)]
mod tests {
    use super::sourceable;

    #[test]
    fn only_plain_sh_scripts_that_cannot_tell_are_sourced() {
        assert!(sourceable(b"#!/bin/sh\necho \"$PT_name\"\n"));
        assert!(sourceable(b"#!/bin/sh \nset -e\nexit 3\n"));
        for no in [
            &b"#!/bin/bash\necho hi\n"[..],
            b"#!/bin/sh -e\necho hi\n",
            b"#!/usr/bin/env python3\nprint(1)\n",
            b"echo no shebang\n",
            b"#!/bin/sh\ncd \"$(dirname \"$0\")\"\n",
            b"#!/bin/sh\necho ${0##*/}\n",
            b"#!/bin/sh\ntmp=/tmp/x.$$\n",
            b"#!/bin/sh",
            b"#!/bin/shell\n",
        ] {
            assert!(!sourceable(no), "{}", String::from_utf8_lossy(no));
        }
    }
}
