//! The one POSIX `sh` program that applies a catalog on a target. It is
//! pure text, made here from the ordered steps and each resource's type
//! ([`super::types`]); the transport only runs it (on stdin of `sh -s`,
//! never on a command line). The program checks and converges each
//! resource in order and reports what happened as it happens, one line
//! per fact, read back by [`super::events`]:
//!
//! ```text
//! TOKEN <TAB> STEP <TAB> WHAT <TAB> FIELD ...
//! ```
//!
//! `TOKEN` is fresh for every run, so nothing a resource prints (exec
//! output is captured and re-emitted as `out` lines) can pass for a line
//! of the program. Before a resource runs, the program checks whether a
//! resource upstream of it failed (the `_F` list) and skips it if so.
//! Refresh events are counted per step (`_c<N>` for changes made, `_o<N>`
//! for changes noop held back) and handed to the resources they notify.
//! The last line is `TOKEN - end`: without it the apply did not finish.
//!
//! The whole program is one brace group, so the shell parses all of it
//! before it runs any of it: a connection that drops while the program is
//! sent runs nothing, never the first half of a command. Before any step
//! the program takes the target's apply lock for its user (a directory in
//! the target's `tmpdir`, [`lock_path`], that holds the owner's pid): while
//! another apply holds it, it reports `TOKEN - busy PID UID` and changes
//! nothing; a lock of that name another user made (a shared `/tmp`) is
//! never trusted: `TOKEN - foreign UID OWNER` (root takes it over). Large file contents are not in
//! the program but in the target's content-addressed cache (the one task
//! files use), checked by sha256 before use; when a content some file
//! still needs is not there intact, the program reports `TOKEN - need
//! CACHE SHA...` before any step and stops, and the executor sends those
//! contents and runs it again.

use std::fmt::Write as _;

use super::graph::Step;
use super::types::{Kind, Refresh};

/// The fields of a line, separated by tabs.
pub const SEP: char = '\t';

/// Settings for a whole program.
#[derive(Debug, Clone)]
pub struct ProgramOptions {
    /// The target's content cache and the contents that come from it.
    pub cache: Option<CacheUse>,
    /// The directory of the target's apply lock ([`lock_path`]).
    pub tmpdir: Option<String>,
    /// Paths whose state the program reads up front ([`prefetch`]): the
    /// step, the path, whether its checksum is wanted too.
    pub prefetch: Vec<(usize, String, bool)>,
}

/// File contents the program takes from the target's cache.
#[derive(Debug, Clone)]
pub struct CacheUse {
    /// The cache directory: absolute, or relative to the home directory.
    pub dir: String,
    /// Each content's sha256 with the paths that should hold it, each
    /// with the step whose prefetched checksum is its own, if any.
    pub contents: Vec<(String, Holders)>,
}

/// The paths that should hold a cached content, each with the step whose
/// prefetched checksum is its own, if any.
pub type Holders = Vec<(String, Option<usize>)>;

/// The path of the target's apply lock for the user `uid` (the user the
/// program runs as): `ferry-apply-UID.lock` in the target's `tmpdir`
/// (`/tmp` unless the inventory says otherwise). A lock there that this
/// user does not own was not made by ferry for it: a user other than root
/// refuses to apply, root removes it and takes the lock.
pub fn lock_path(tmpdir: Option<&str>, uid: &str) -> String {
    format!(
        "{}/ferry-apply-{uid}.lock",
        tmpdir.unwrap_or("/tmp").trim_end_matches('/')
    )
}

/// The file name of a content in its cache directory (`CACHE/SHA/NAME`).
pub const CACHE_FILE: &str = "content";

/// A step ready for the program: its position, its type's parsed
/// parameters and whether it runs in noop.
pub struct Planned<'a> {
    /// Has a tag `--tags` asked for: an untagged step does nothing.
    pub tagged: bool,
    pub number: usize,
    pub step: &'a Step,
    pub kind: &'a Kind,
    pub noop: bool,
    /// Step numbers of the resources upstream of this one.
    pub upstream: Vec<usize>,
    /// Step numbers of the resources whose changes refresh this one.
    pub refreshed_by: Vec<usize>,
}

/// Quotes a string for the shell. Strings holding a NUL byte cannot be
/// passed to a shell at all; types refuse them when they read parameters.
pub fn q(s: &str) -> String {
    crate::transport::command::quote(s).unwrap_or_else(|_| "''".into())
}

/// Text as one single-quoted shell word (a `'` becomes `'\''`); the text
/// holds no NUL (the caller checked). The fast path for file contents,
/// which can be large: no per-character decisions.
pub fn single_quoted(text: &str) -> String {
    let mut s = String::with_capacity(text.len() + 2);
    s.push('\'');
    for (i, part) in text.split('\'').enumerate() {
        if i > 0 {
            s.push_str("'\\''");
        }
        s.push_str(part);
    }
    s.push('\'');
    s
}

/// A `printf` builtin call that writes exactly `bytes` to stdout: printf
/// is built into every POSIX shell, so the bytes never appear on a
/// command line. Text goes as one `%s` argument; bytes that are not UTF-8
/// or hold NUL go as octal escapes in the format.
pub fn printf_bytes(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) if !text.contains('\0') => format!("printf '%s' {}", single_quoted(text)),
        _ => {
            let mut fmt = String::with_capacity(bytes.len() * 2);
            for &b in bytes {
                match b {
                    b'%' => fmt.push_str("%%"),
                    b'\\' => fmt.push_str("\\\\"),
                    b'\'' => fmt.push_str("\\047"),
                    0x20..=0x7e => fmt.push(b as char),
                    _ => {
                        let _ = write!(fmt, "\\{b:03o}");
                    }
                }
            }
            format!("printf '{fmt}'")
        }
    }
}

/// The functions every program defines.
fn preamble() -> &'static str {
    "umask 022
_F=
_e() { _l=$T; for _a; do _l=\"$_l\t$_a\"; done; printf '%s\\n' \"$_l\"; }
_fail() { _e \"$1\" fail \"$2\"; _F=\"$_F $1\"; }
_ev() { _n=$1; shift; _e \"$_n\" ev \"$@\"; case $2 in success) _c=$((_c + 1)); _pf= ;; noop) _o=$((_o + 1)) ;; failure) _F=\"$_F $_n\"; _pf= ;; esac; }
_pf= _NL='
'
_st() {
_ft=absent _fm= _fu= _fg= _fuid= _fgid=
if [ -n \"${2-}\" ] && [ -n \"$_pf\" ]; then eval \"_v=\\${_S$2-}\"
if [ -n \"$_v\" ]; then set -- $_v; [ \"$1\" = absent ] || { _ft=$1 _fm=$2 _fu=$3 _fg=$4 _fuid=$5 _fgid=$6; }; return 0; fi
fi
if [ -h \"$1\" ]; then _ft=link
elif [ -d \"$1\" ]; then _ft=directory
elif [ -f \"$1\" ]; then _ft=file
elif [ -e \"$1\" ]; then _ft=other
else return 0
fi
set -- $(stat -c '%a %U %G %u %g' -- \"$1\" 2>/dev/null)
_fm=$1 _fu=$2 _fg=$3 _fuid=$4 _fgid=$5
}
_sum() {
if [ -n \"${2-}\" ] && [ -n \"$_pf\" ]; then eval \"_h=\\${_H$2-}\"; [ -z \"$_h\" ] || return 0; fi
_h=$(sha256sum < \"$1\" 2>/dev/null) || _h=; _h=${_h%% *}
}
_out() { printf '%s\\n' \"$2\" | while IFS= read -r _l; do _e \"$1\" out \"$_l\"; done; }
_x() { _out=$(\"$@\" </dev/null 2>&1); _rc=$?; }
_xs() { _out=$( (eval \"$1\") </dev/null 2>&1); _rc=$?; }
"
}

/// Reads the state of every path in `paths` with one `stat`, and the
/// checksum of those that want content with one `sha256sum`, before the
/// first step: `_S<step>` holds what `_st` would find, `_H<step>` what
/// `_sum` would. Steps use them while `_pf` is set, that is until an
/// event changes something (or fails to); then every check reads the
/// target again. The tools print nothing for a path that does not exist,
/// so each line is matched to its path by the name at its end; paths
/// holding a newline are never prefetched (the caller leaves them out).
fn prefetch(paths: &[(usize, String, bool)]) -> String {
    if paths.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "_pre() {
_l=${_pl%%\"$_NL\"*}
case $_l in
*\"|$2\")
_pl=${_pl#\"$_l\"}; _pl=${_pl#\"$_NL\"}
_t=${_l%%|*}; _r=${_l#*|}
case $_t in \"regular file\"|\"regular empty file\") _t=file ;; directory) ;; \"symbolic link\") _t=link ;; *) _t=other ;; esac
_m=${_r%%|*}; _r=${_r#*|}; _u=${_r%%|*}; _r=${_r#*|}; _g=${_r%%|*}; _r=${_r#*|}; _ui=${_r%%|*}; _r=${_r#*|}; _gi=${_r%%|*}
eval \"_S$1=\\\"\\$_t \\$_m \\$_u \\$_g \\$_ui \\$_gi\\\"\" ;;
*) eval \"_S$1=absent\" ;;
esac
}
_preh() {
_l=${_pl%%\"$_NL\"*}
case $_l in *\"  $2\") _pl=${_pl#\"$_l\"}; _pl=${_pl#\"$_NL\"}; eval \"_H$1=\\${_l%% *}\" ;; esac
}
",
    );
    let all: Vec<String> = paths.iter().map(|(_, p, _)| q(p)).collect();
    let _ = writeln!(
        s,
        "_pl=$(stat -c '%F|%a|%U|%G|%u|%g|%n' -- {} 2>/dev/null) || :",
        all.join(" ")
    );
    for (n, p, _) in paths {
        let _ = writeln!(s, "_pre {n} {}", q(p));
    }
    let sums: Vec<&(usize, String, bool)> = paths.iter().filter(|(_, _, c)| *c).collect();
    if !sums.is_empty() {
        let list: Vec<String> = sums.iter().map(|(_, p, _)| q(p)).collect();
        let _ = writeln!(s, "_pl=$(sha256sum -- {} 2>/dev/null) || :", list.join(" "));
        for (n, p, _) in sums {
            let _ = writeln!(s, "_preh {n} {}", q(p));
        }
    }
    s.push_str("_pf=1\n");
    s
}

/// Takes the apply lock or reports who holds it and stops. A lock whose
/// owner is gone (or that never got a pid within a minute) is stale and
/// taken over; the lock is released when the program exits, however it
/// exits.
fn lock(dir: &str) -> String {
    format!(
        "_u=$(id -u)
_L={dir}/ferry-apply-$_u.lock
_lk() {{ mkdir -m 755 \"$_L\" 2>/dev/null && echo $$ >\"$_L/pid\"; }}
if ! _lk; then
if [ -z \"$(find \"$_L\" -prune -type d -user \"$_u\" 2>/dev/null)\" ]; then
_lo=$(ls -ldn \"$_L\" 2>/dev/null | awk '{{print $3}}')
if [ \"$_u\" != 0 ]; then _e - foreign \"$_u\" \"${{_lo:--}}\"; exit 0; fi
rm -rf -- \"$_L\"; _lk || {{ _e - busy - \"$_u\"; exit 0; }}
else
_lp=$(cat \"$_L/pid\" 2>/dev/null) || _lp=
if [ -n \"$_lp\" ] && {{ [ -d \"/proc/$_lp\" ] || kill -0 \"$_lp\" 2>/dev/null; }}; then _e - busy \"$_lp\" \"$_u\"; exit 0; fi
if [ -z \"$_lp\" ] && [ -z \"$(find \"$_L\" -prune -mmin +1 2>/dev/null)\" ]; then _e - busy - \"$_u\"; exit 0; fi
rm -rf -- \"$_L\"; _lk || {{ _e - busy - \"$_u\"; exit 0; }}
fi
fi
_ul() {{ [ \"$(cat \"$_L/pid\" 2>/dev/null)\" != $$ ] || rm -rf -- \"$_L\"; }}
trap _ul EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
",
        dir = q(dir.trim_end_matches('/'))
    )
}

/// The cache's shell variable `C`, the function that copies a content
/// out of it (checking the copy's sha256: a damaged entry is removed and
/// never used), and the check before any step that every content a path
/// still lacks is there intact.
fn cache_part(cache: &CacheUse) -> String {
    let dir = if cache.dir.starts_with('/') {
        q(&cache.dir)
    } else {
        format!("\"$HOME\"/{}", q(&cache.dir))
    };
    let mut s = format!(
        "C={dir}
_blob() {{ cp -- \"$C/$1/{CACHE_FILE}\" \"$2\" && _sum \"$2\" && [ \"$_h\" = \"$1\" ] || {{ rm -f -- \"$C/$1/{CACHE_FILE}\"; echo \"the cached content {{sha256}}$1 is missing or damaged; it was not used\" >&2; return 1; }}; }}
_need=
"
    );
    for (sha, paths) in &cache.contents {
        let checks: Vec<String> = paths
            .iter()
            .map(|(p, step)| {
                let step = step.map(|n| format!(" {n}")).unwrap_or_default();
                format!("_sum {}{step}; [ \"$_h\" = {sha} ] || _k=1", q(p))
            })
            .collect();
        let _ = writeln!(
            s,
            "_k=; {}\n\
             if [ -n \"$_k\" ]; then _sum \"$C/{sha}/{CACHE_FILE}\"; [ \"$_h\" = {sha} ] || {{ rm -f -- \"$C/{sha}/{CACHE_FILE}\"; _need=\"$_need {sha}\"; }}; fi",
            checks.join("; ")
        );
    }
    s.push_str(
        "if [ -n \"$_need\" ]; then for _q in $_need; do (umask 077; mkdir -p -- \"$C/$_q\"); done; _e - need \"$C\" $_need; exit 0; fi\n",
    );
    s
}

/// A program, but for the token of the run that sends it.
#[derive(Debug, Clone)]
pub struct Program {
    body: String,
}

impl Program {
    /// The program's text for a run whose lines start with `token`.
    pub fn text(&self, token: &str) -> String {
        let mut s = String::with_capacity(self.body.len() + token.len() + 8);
        s.push_str("{\nT=");
        s.push_str(token);
        s.push('\n');
        s.push_str(&self.body);
        s
    }
}

/// Writes the program for `steps`.
pub fn build(steps: &[Planned<'_>], opts: &ProgramOptions) -> Program {
    let mut s = preamble().to_string();
    s.push_str(&lock(opts.tmpdir.as_deref().unwrap_or("/tmp")));
    // The checksums read up front serve the cache check too.
    s.push_str(&prefetch(&opts.prefetch));
    if let Some(cache) = opts.cache.as_ref().filter(|c| !c.contents.is_empty()) {
        s.push_str(&cache_part(cache));
    }
    for p in steps {
        step(&mut s, p);
    }
    s.push_str("_e - end\n}\n");
    Program { body: s }
}

fn step(s: &mut String, p: &Planned<'_>) {
    let n = p.number;
    if !p.tagged {
        return;
    }
    let _ = writeln!(s, "# step {n}\n_c=0 _o=0");
    let body = {
        let mut b = String::new();
        p.kind.script(&mut b, n, p.noop);
        b
    };
    let refresh = p.kind.refresh(n);
    let refresh_text = match (&refresh, p.refreshed_by.is_empty()) {
        (_, true) | (Refresh::Nothing, _) => String::new(),
        (Refresh::Script { guard, body }, false) => {
            let sum_c: Vec<String> = p
                .refreshed_by
                .iter()
                .map(|k| format!("${{_c{k}:-0}}"))
                .collect();
            let sum_o: Vec<String> = p
                .refreshed_by
                .iter()
                .map(|k| format!("${{_o{k}:-0}}"))
                .collect();
            let mut r = format!(
                "_rc=$(({})) _ro=$(({}))\n",
                sum_c.join(" + "),
                sum_o.join(" + ")
            );
            if p.noop {
                let _ = writeln!(
                    r,
                    "if [ $((_rc + _ro)) -gt 0 ]; then _e {n} refresh-noop $((_rc + _ro)); _o=$((_o + 1)); fi"
                );
            } else {
                let _ = write!(
                    r,
                    "if [ \"$_rc\" -gt 0 ]; then\n_e {n} refresh $_rc\n_pf=\n{body}_c=$((_c + 1))\nelif [ \"$_ro\" -gt 0 ]; then _e {n} refresh-noop $_ro; _o=$((_o + 1))\nfi\n"
                );
            }
            match guard {
                Some(g) => format!("if {g}; then\n{r}fi\n"),
                None => r,
            }
        }
    };
    if p.upstream.is_empty() {
        s.push_str(&body);
        s.push_str(&refresh_text);
    } else {
        let list: Vec<String> = p.upstream.iter().map(|k| k.to_string()).collect();
        let _ = write!(
            s,
            "_bad=\nif [ -n \"$_F\" ]; then for _d in {}; do case \" $_F \" in *\" $_d \"*) _bad=\"$_bad $_d\" ;; esac; done; fi\n\
             if [ -n \"$_bad\" ]; then _e {n} skip $_bad\nelse\n{body}{refresh_text}fi\n",
            list.join(" ")
        );
    }
    let _ = writeln!(s, "_e {n} done\n_c{n}=$_c _o{n}=$_o");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printf_bytes_round_trips_text_and_binary() {
        for bytes in [
            b"hello\n".to_vec(),
            b"it's 100% \\ done".to_vec(),
            vec![0, 1, 2, 255, b'%', b'\\', b'\'', b'a', b'\n'],
            Vec::new(),
        ] {
            let cmd = printf_bytes(&bytes);
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(&cmd)
                .output()
                .expect("sh runs");
            assert_eq!(out.stdout, bytes, "{cmd}");
        }
    }

    /// `_blob` copies a cached content only when the copy has the sha256
    /// it is filed under; a damaged entry is removed, never used.
    #[test]
    fn a_damaged_cache_entry_is_removed_and_not_used() {
        use sha2::Digest;
        let dir = std::env::temp_dir().join(format!("ferry-blob-{}", std::process::id()));
        let good = b"the real content\n";
        let sha = hex::encode(sha2::Sha256::digest(good));
        std::fs::create_dir_all(dir.join(&sha)).expect("cache dir");
        let entry = dir.join(&sha).join(CACHE_FILE);
        let cache = CacheUse {
            dir: dir.display().to_string(),
            contents: Vec::new(),
        };
        let script = format!(
            "T=tok\n{}{}_blob {sha} \"$1\"; echo rc=$?",
            preamble(),
            cache_part(&cache)
        );
        let run = |dest: &std::path::Path| {
            let out = std::process::Command::new("sh")
                .args(["-c", &script, "sh"])
                .arg(dest)
                .output()
                .expect("sh runs");
            (
                String::from_utf8_lossy(&out.stdout).into_owned(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        };
        std::fs::write(&entry, good).expect("entry");
        let dest = dir.join("dest");
        assert_eq!(run(&dest).0, "rc=0\n");
        assert_eq!(std::fs::read(&dest).expect("copied"), good);
        std::fs::write(&entry, b"tampered\n").expect("entry");
        let (out, err) = run(&dir.join("dest2"));
        assert_eq!(out, "rc=1\n");
        assert!(err.contains("missing or damaged"), "{err}");
        assert!(!entry.exists(), "the damaged entry was kept");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// What `_st` and `_sum` give from the prefetched state is what they
    /// give reading the target, for every kind of path, a missing one
    /// between others and a name with spaces and a `|`.
    #[test]
    fn prefetched_state_is_what_a_live_check_finds() {
        let dir = std::env::temp_dir().join(format!("ferry-prefetch-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub dir")).expect("dir");
        std::fs::write(dir.join("a file"), b"one\n").expect("file");
        std::fs::write(dir.join("odd|name"), b"").expect("file");
        std::os::unix::fs::symlink("a file", dir.join("link")).expect("link");
        let names = [
            "a file", "missing", "sub dir", "link", "odd|name", "gone too",
        ];
        let paths: Vec<(usize, String, bool)> = names
            .iter()
            .enumerate()
            .map(|(n, name)| (n, dir.join(name).display().to_string(), true))
            .collect();
        let mut script = format!(
            "T=tok\n{}{}for _i in 0 1 2 3 4 5; do eval \"echo S$_i=\\$_S$_i\"; done; echo \"H0=$_H0\"\n",
            preamble(),
            prefetch(&paths)
        );
        for (n, p, _) in &paths {
            let p = q(p);
            script.push_str(&format!(
                "_st {p} {n}; _a=\"$_ft $_fm $_fu $_fg $_fuid $_fgid\"; _sum {p} {n}; _a=\"$_a $_h\"\n\
                 _k=$_pf; _pf=; _st {p}; _b=\"$_ft $_fm $_fu $_fg $_fuid $_fgid\"; _sum {p}; _b=\"$_b $_h\"; _pf=$_k\n\
                 echo \"{n}: $_a\"; [ \"$_a\" = \"$_b\" ] || echo \"{n} differs: live $_b\"\n"
            ));
        }
        let out = std::process::Command::new("sh")
            .args(["-c", &script])
            .output()
            .expect("sh runs");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(!text.contains("differs"), "{text}");
        assert!(text.contains("0: file 644"), "{text}");
        assert!(text.contains("1: absent"), "{text}");
        assert!(text.contains("2: directory"), "{text}");
        assert!(text.contains("3: link"), "{text}");
        // The prefetched values were there (not a fallback to live checks).
        use sha2::Digest;
        let sha = hex::encode(sha2::Sha256::digest(b"one\n"));
        for expected in [
            "S0=file 644".to_string(),
            "S1=absent".into(),
            "S2=directory".into(),
            "S3=link".into(),
            "S4=file".into(),
            "S5=absent".into(),
            format!("H0={sha}"),
        ] {
            assert!(text.contains(&expected), "{expected}: {text}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
