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
use crate::transport::shell_fns::{FUNCTIONS, MKDIRS, SHA256_CHECK, VARIABLES};
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
    // transport::shell_fns); a fresh one by one sha256sum.
    let mut check = String::from(SHA256_CHECK);
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
            "unset c d f ok m x tok frag line {}\nunset -f h miss mk dirs_ok {}\n. {path}\n",
            VARIABLES.join(" "),
            FUNCTIONS.join(" ")
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
/// process: the wrapper's `mk` (through [`MKDIRS`], see
/// transport::shell_fns), which `dirs_ok` checks. On a miss ferry writes
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
        "dirs_ok() {{ {}; }}\nmk() {{ {MKDIRS} {} && dirs_ok || {{ echo \"ferry: cannot make $d or the task cache's dirs\" >&2; exit 125; }}; }}\n",
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
    use super::*;
    use crate::transport::shell_fns::{SESSION_DIR, definitions};
    use sha2::{Digest, Sha256};
    use std::io::Write;
    use std::path::Path;
    use std::process::{Command, Stdio};

    /// The shells every wrapper must work in: Debian's `/bin/sh` and
    /// busybox's (scripts/test.sh installs both).
    const SHELLS: [&[&str]; 2] = [&["dash"], &["busybox", "sh"]];

    const SECRET: &str = "s3cret-value-4711";

    /// A task that says hello, shows its stdin, and reports whether any
    /// process's command line holds its `secret` parameter (with builtins
    /// only, so that the check puts the value on no command line itself).
    const TASK: &[u8] = b"#!/bin/sh
echo \"hello $PT_name noop=${PT__noop-}\"
if [ -n \"${PT_secret-}\" ]; then
  for f in /proc/[0-9]*/cmdline; do
    l=$(tr '\\000' ' ' <\"$f\" 2>/dev/null)
    case $l in *\"$PT_secret\"*) echo \"LEAK in $f\";; esac
  done
  [ ${#PT_secret} -eq 17 ] && echo secret-arrived
fi
cat
";

    fn task_file(bytes: &[u8]) -> TaskFile {
        TaskFile {
            relative: "demo/tasks/t.sh".into(),
            sha256: hex::encode(Sha256::digest(bytes)),
            bytes: bytes.into(),
            origin: None,
        }
    }

    /// One task file ([`TASK`]) in a scratch dir with its cache and where
    /// its install dir goes.
    struct Site {
        dir: tempfile::TempDir,
        file: TaskFile,
        cache: String,
        inst: String,
    }

    struct Ran {
        code: i32,
        stdout: String,
        stderr: String,
    }

    impl Site {
        /// A site whose cache holds `cached` under the task's sha256.
        fn new(cached: Option<&[u8]>) -> Site {
            let dir = tempfile::Builder::new()
                .prefix("ferry-wrapper-")
                .tempdir()
                .expect("temp dir");
            let file = task_file(TASK);
            let cache = dir.path().join("c").display().to_string();
            let inst = dir.path().join("install").display().to_string();
            let site = Site {
                dir,
                file,
                cache,
                inst,
            };
            if let Some(bytes) = cached {
                site.cache_file(bytes);
            }
            site
        }

        fn cache_file(&self, bytes: &[u8]) {
            let dir = Path::new(&self.cache).join(&self.file.sha256);
            std::fs::create_dir_all(&dir).expect("cache dir");
            std::fs::write(dir.join(basename(&self.file.relative)), bytes).expect("cache file");
        }

        /// Runs the wrapper as ferry does: `sh -c SCRIPT` with its stdin,
        /// or, for a reused install dir, in a shell that defines the
        /// session's functions and reads the script as a subshell with a
        /// here-document.
        fn run(
            &self,
            shell: &[&str],
            pairs: &[(&str, Value)],
            reuse: bool,
            method: InputMethod,
        ) -> (Wrapper, Ran) {
            let params: Map<String, Value> = pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect();
            let layout = Layout {
                files: &[&self.file],
                exe: &self.file,
                method,
                cache: &self.cache,
                installdir: &self.inst,
                reuse,
                cleanup: true,
                run_as: None,
                params: &params,
                token: "ferry-token-0123456789",
                deliver: None,
            };
            let wrapper = build(&layout).expect("wrapper");
            let mut cmd = Command::new(shell[0]);
            cmd.args(&shell[1..]);
            let input = if reuse {
                let session = self.dir.path().join("session").display().to_string();
                cmd.arg("-s");
                let mut text = format!(
                    "{SESSION_DIR}={}\n{}(\n{}\n) <<'END-OF-STDIN'\n",
                    quote(&session).expect("quote"),
                    definitions(),
                    wrapper.script
                )
                .into_bytes();
                text.extend(&wrapper.stdin);
                text.extend(b"\nEND-OF-STDIN\n");
                text
            } else {
                cmd.arg("-c").arg(&wrapper.script);
                wrapper.stdin.clone()
            };
            let mut child = cmd
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| {
                    panic!("{shell:?}: {e} (scripts/test.sh installs dash and busybox)")
                });
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(&input)
                .expect("write stdin");
            let out = child.wait_with_output().expect("wait");
            let ran = Ran {
                code: out.status.code().unwrap_or(-1),
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            };
            (wrapper, ran)
        }

        /// A miss: nothing ran, and the one line names the cache and the
        /// missing file.
        fn assert_miss(&self, ran: &Ran, what: &str) {
            assert_eq!(ran.code, CACHE_MISS, "{what}: {}", ran.stderr);
            assert_eq!(
                ran.stdout,
                format!("{MISS_MARKER} {} {}\n", self.cache, self.file.sha256),
                "{what}"
            );
        }

        /// The task ran and said hello to `name` (with `noop`).
        fn assert_hello(&self, ran: &Ran, name: &str, noop: &str, what: &str) {
            assert_eq!(ran.code, 0, "{what}: {}", ran.stderr);
            let hello = format!("hello {name} noop={noop}\n");
            assert!(ran.stdout.starts_with(&hello), "{what}: {}", ran.stdout);
        }
    }

    #[test]
    fn a_cache_hit_runs_the_task_from_a_checked_copy() {
        for shell in SHELLS {
            let site = Site::new(Some(TASK));
            let p = [("name", Value::from("world"))];
            let (_, ran) = site.run(shell, &p, false, InputMethod::Both);
            site.assert_hello(&ran, "world", "", &format!("{shell:?}"));
            assert!(ran.stdout.contains("\"name\":\"world\""), "{}", ran.stdout);
            assert!(!Path::new(&site.inst).exists(), "{shell:?}: not removed");
        }
    }

    #[test]
    fn a_cache_miss_runs_nothing_and_names_the_missing_files() {
        for shell in SHELLS {
            let site = Site::new(None);
            for reuse in [false, true] {
                let p = [("name", Value::from("world"))];
                let (_, ran) = site.run(shell, &p, reuse, InputMethod::Both);
                site.assert_miss(&ran, &format!("{shell:?} reuse={reuse}"));
                assert!(
                    Path::new(&site.cache).join(&site.file.sha256).is_dir(),
                    "{shell:?} reuse={reuse}: the cache dir is made for the files to come"
                );
            }
        }
    }

    #[test]
    fn a_tampered_cache_file_is_a_miss_and_never_runs() {
        for shell in SHELLS {
            for reuse in [false, true] {
                let site = Site::new(Some(b"#!/bin/sh\necho tampered\n"));
                let p = [("name", Value::from("world"))];
                let (_, ran) = site.run(shell, &p, reuse, InputMethod::Both);
                site.assert_miss(&ran, &format!("{shell:?} reuse={reuse}"));
                // No altered copy is kept (a reused dir's folders are made
                // again, empty, for the files ferry sends next).
                let copy = Path::new(&site.inst).join(&site.file.relative);
                assert!(!copy.exists(), "{shell:?} reuse={reuse}");
            }
        }
    }

    #[test]
    fn a_reused_install_dir_is_checked_and_run_again() {
        for shell in SHELLS {
            let site = Site::new(Some(TASK));
            let copy = Path::new(&site.inst).join(&site.file.relative);
            let p = [("name", Value::from("again"))];
            for round in 0..2 {
                let (_, ran) = site.run(shell, &p, true, InputMethod::Both);
                site.assert_hello(&ran, "again", "", &format!("{shell:?} round {round}"));
                assert!(copy.is_file(), "{shell:?}: the copy is kept");
            }
            // The kept copy and the cache altered between runs: a miss.
            std::fs::write(&copy, "echo altered\n").expect("alter");
            site.cache_file(b"echo altered\n");
            let (_, ran) = site.run(shell, &p, true, InputMethod::Both);
            site.assert_miss(&ran, &format!("{shell:?} altered"));
        }
    }

    #[test]
    fn sensitive_parameters_are_on_no_command_line_and_in_no_output() {
        for shell in SHELLS {
            for reuse in [false, true] {
                let site = Site::new(Some(TASK));
                let p = [("name", Value::from("x")), ("secret", Value::from(SECRET))];
                let (wrapper, ran) = site.run(shell, &p, reuse, InputMethod::Environment);
                let what = format!("{shell:?} reuse={reuse}");
                site.assert_hello(&ran, "x", "", &what);
                if !reuse {
                    // `sh -c SCRIPT`: the script is a command line.
                    assert!(!wrapper.script.contains(SECRET), "{what}");
                }
                assert!(
                    ran.stdout.contains("secret-arrived"),
                    "{what}: {}",
                    ran.stdout
                );
                assert!(!ran.stdout.contains("LEAK"), "{what}: {}", ran.stdout);
                assert!(
                    !ran.stdout.contains(SECRET) && !ran.stderr.contains(SECRET),
                    "{what}"
                );
            }
        }
    }

    #[test]
    fn noop_reaches_the_task_on_stdin_and_in_its_environment() {
        for shell in SHELLS {
            for reuse in [false, true] {
                let site = Site::new(Some(TASK));
                let p = [("name", Value::from("n")), ("_noop", Value::Bool(true))];
                let (_, ran) = site.run(shell, &p, reuse, InputMethod::Both);
                let what = format!("{shell:?} reuse={reuse}");
                site.assert_hello(&ran, "n", "true", &what);
                assert!(
                    ran.stdout.contains("\"_noop\":true"),
                    "{what}: {}",
                    ran.stdout
                );
            }
        }
    }

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
