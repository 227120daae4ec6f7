//! Editing a text file on the target, for the types that manage pieces
//! of one (`file_line`, `ini_setting`, `ini_subsetting`, `sysctl`): the
//! type's `awk` program reads the file as it is now (so each step sees
//! what earlier steps of the run wrote), decides whether the resource is
//! in sync and, when it is not and the run may change things, writes the
//! new content to a temporary file beside it. The first line it prints is
//! its verdict for the type's script. The new file then replaces the old
//! one with `mv` (atomic), after taking its mode and, as root, its owner;
//! a link is followed to the file it names, as Ruby's `File.open` does.
//!
//! Every value reaches `awk` through its environment (`ENVIRON`, which
//! takes no escapes), never in the program text, and `awk` runs in the C
//! locale: bytes are bytes, whatever the file holds.

use std::fmt::Write as _;

use crate::apply::program::q;

/// Shell that sets `_p` to the file `path` names (a link followed),
/// `_src` to what to read (`/dev/null` when there is no file), `_nl` to 1
/// when the file ends with a newline, and `_t` to the temporary path.
pub fn locate(out: &mut String, path: &str) {
    let p = q(path);
    let _ = writeln!(
        out,
        "_p={p}\nif [ -h \"$_p\" ]; then _p=$(readlink -f -- \"$_p\") || _p={p}; fi\n\
         _src=$_p; [ -f \"$_p\" ] || _src=/dev/null\n\
         _nl=$(tail -c 1 -- \"$_src\" | wc -l); _nl=$((_nl + 0))\n\
         _t=\"$_p.ferrytmp.$$\""
    );
}

/// Shell that runs `program` on the file with `env` (name, value) and
/// leaves its first line of output in `_r` (`err ...` when awk failed).
/// Besides `env`, the program sees `NL` (1: the last line has a newline),
/// `OUT` (where to write new content) and `NOOP` (1: write nothing).
pub fn run_awk(out: &mut String, program: &str, env: &[(&str, String)], noop: bool) {
    let mut vars = String::new();
    for (k, v) in env {
        let _ = write!(vars, "{k}={} ", q(v));
    }
    let _ = writeln!(
        out,
        "_r=$(umask 077; {vars}NL=$_nl OUT=\"$_t\" NOOP={} LC_ALL=C awk {} < \"$_src\" 2>&1) || {{ rm -f -- \"$_t\"; _r=\"err $_r\"; }}\n\
         _r=${{_r%%\"\n\"*}}",
        u8::from(noop),
        q(program)
    );
}

/// A command that puts the new content `$_t` in place of `$_p`, keeping
/// the mode and (as root) the owner of the file there, or giving a new
/// file `new_mode`; `_err` holds what failed.
pub fn commit(new_mode: &str) -> String {
    format!(
        "_err=$({{ if [ -e \"$_p\" ]; then _st \"$_p\"; chmod \"$_fm\" \"$_t\" && {{ [ \"$(id -u)\" != 0 ] || chown \"$_fuid:$_fgid\" \"$_t\"; }}; else chmod {new_mode} \"$_t\"; fi && mv -f -- \"$_t\" \"$_p\"; }} 2>&1) || {{ rm -f -- \"$_t\"; false; }}"
    )
}

/// [`commit`] for types whose new files get mode 0644 (Ruby's
/// `File.open` under Puppet's umask 022).
pub fn commit_644() -> String {
    commit("644")
}

/// awk functions every editing program may use: `emit(s)` writes `s`
/// to the new file unless in noop; `puts(s)` writes it as Ruby's
/// `IO#puts` does (a newline added unless it ends with one); `sline(i)`
/// is line `i` of the input with its newline as Ruby's `readlines` gives
/// it; `chomp(s)` drops one `\r` at the end (the input lines have lost
/// their `\n` already). Lines are `L[1..N]`. `done(v)` prints the
/// verdict `v` and ends; `written(v)` also closes the new file (made even
/// when empty).
pub const AWK_LIB: &str = r#"
function emit(s) { if (!NOOP) printf "%s", s > OUT }
function puts(s) { emit(s); if (substr(s, length(s)) != "\n") emit("\n") }
function sline(i) { return (i < N || NL) ? L[i] "\n" : L[i] }
function chomp(s) { if (substr(s, length(s)) == "\r") return substr(s, 1, length(s) - 1); return s }
function done(verdict) { print verdict; exit }
function written(verdict) { if (!NOOP) { emit(""); close(OUT) } print verdict; exit }
{ L[++N] = $0 }
BEGIN { NOOP = ENVIRON["NOOP"] + 0; NL = ENVIRON["NL"] + 0; OUT = ENVIRON["OUT"] }
"#;

/// A test step: writes a resource's script for the file at the path.
#[cfg(test)]
pub type StepScript<'a> = dyn Fn(&mut String, &str) + 'a;

/// [`run_steps`] with one step per item, each writing `script(item, path)`.
#[cfg(test)]
pub fn run_each<T>(
    content: Option<&[u8]>,
    items: &[T],
    script: impl Fn(&T, &str, &mut String),
) -> (Vec<String>, Option<Vec<u8>>) {
    let steps: Vec<Box<StepScript<'_>>> = items
        .iter()
        .map(|item| {
            let script = &script;
            Box::new(move |out: &mut String, path: &str| script(item, path, out))
                as Box<StepScript<'_>>
        })
        .collect();
    let refs: Vec<&StepScript<'_>> = steps.iter().map(|b| b.as_ref()).collect();
    run_steps(content, &refs)
}

/// Runs step scripts against a file holding `content` with this
/// machine's sh and awk, as the program would: what each step reported
/// (`ev PROPERTY STATUS PREVIOUS DETAIL` or `fail MESSAGE`, the file's
/// path shown as `PATH`) and the file after.
#[cfg(test)]
pub fn run_steps(content: Option<&[u8]>, steps: &[&StepScript]) -> (Vec<String>, Option<Vec<u8>>) {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "ferry-edit-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("f");
    if let Some(c) = content {
        std::fs::write(&path, c).expect("write");
    }
    let path_text = path.display().to_string();
    let mut s = String::from(
        "_st() { set -- $(stat -c '%a %U %G %u %g' -- \"$1\"); _fm=$1 _fuid=$4 _fgid=$5; }\n\
         _ev() { echo \"ev $2 $3 $4 $5\"; }\n_fail() { echo \"fail $2\"; }\n",
    );
    for step in steps {
        step(&mut s, &path_text);
    }
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(&s)
        .output()
        .expect("sh");
    let after = std::fs::read(&path).ok();
    let _ = std::fs::remove_dir_all(&dir);
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.replace(&path_text, "PATH").trim_end().to_string())
        .collect();
    (lines, after)
}
