//! The JSON helper block the shell tasks share (package.sh, service.sh):
//! identical in every task that carries it, and escaping arbitrary
//! (including non-UTF-8 and control-character) strings. The facts task has
//! no shell helpers (its one awk program prints the whole document); its
//! awk escaping must give the same answers for the same strings.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::process::Command;

use serde_json::{Value, json};

use crate::{Shell, run_task, run_with_stdin, shells, shells_and_awks, task_path};

const HELPERS_BEGIN: &str = "# --- ferry json helpers: begin";
const HELPERS_END: &str = "# --- ferry json helpers: end ---\n";

fn helpers_of(file: &str) -> String {
    let text = std::fs::read_to_string(task_path(file)).unwrap();
    let start = text.find(HELPERS_BEGIN).expect("helpers begin marker");
    let end = text.find(HELPERS_END).expect("helpers end marker") + HELPERS_END.len();
    text[start..end].to_string()
}

#[test]
fn json_helpers_are_identical_in_every_task() {
    assert_eq!(
        helpers_of("service.sh"),
        helpers_of("package.sh"),
        "service.sh helpers drifted from package.sh's"
    );
    assert_eq!(
        helpers_of("resources.sh"),
        helpers_of("package.sh"),
        "resources.sh helpers drifted from package.sh's"
    );
}

/// Runs `json_str "$1"` from the tasks' helper block under `shell`.
fn json_str(shell: &Shell, arg: &OsStr) -> String {
    let script = format!("{}\njson_str \"$1\"", helpers_of("package.sh"));
    let mut cmd = Command::new(&shell.argv[0]);
    cmd.args(&shell.argv[1..])
        .arg("-c")
        .arg(script)
        .arg("sh")
        .arg(arg);
    if let Some(path) = &shell.path {
        cmd.env("PATH", path);
    }
    // The escaping must not depend on the caller's locale.
    cmd.env("LC_ALL", "C.UTF-8");
    let run = run_with_stdin(cmd, "");
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.stdout
}

/// Valid strings that must come back unchanged.
fn valid_strings() -> Vec<String> {
    let long: String = "ab\"\\\u{1}é".repeat(500);
    vec![
        String::new(),
        "plain".into(),
        "with space (parens) @ 1.2".into(),
        "\"quoted\"".into(),
        "back\\slash \\\\ \\n not a newline".into(),
        "line1\nline2\n\n".into(),
        "\ttab\rcr".into(),
        "\u{1}\u{2}\u{8}\u{b}\u{c}\u{1b}[31m\u{1f}\u{7f}".into(),
        "UTF-8: héllo wörld ✓ 日本語 😀 \u{10ffff}".into(),
        "'single' `back` $HOME $(id) ; | & < > * ? [ ] { } ~ # !".into(),
        "%s %d %% \\u0041".into(),
        long,
    ]
}

/// Strings and the exact JSON text they must become.
const EXACT: &[(&str, &str)] = &[
    ("a\"b", r#""a\"b""#),
    ("a\\b", r#""a\\b""#),
    ("\n\t\r", r#""\n\t\r""#),
    ("\u{1}\u{1f}\u{7f}", r#""\u0001\u001f\u007f""#),
    ("é✓😀", "\"é✓😀\""),
];

/// Invalid UTF-8: every byte of a broken sequence becomes U+FFFD.
const INVALID: &[(&[u8], &str)] = &[
    (b"\xff\xfe", "\u{fffd}\u{fffd}"),
    (b"a\xc3", "a\u{fffd}"),
    (b"\xe2\x9c x", "\u{fffd}\u{fffd} x"),
    (b"\xc0\xaf", "\u{fffd}\u{fffd}"),
    (b"\xe0\x80\x80", "\u{fffd}\u{fffd}\u{fffd}"),
    (b"\xed\xa0\x80", "\u{fffd}\u{fffd}\u{fffd}"),
    (b"\xf4\x90\x80\x80", "\u{fffd}\u{fffd}\u{fffd}\u{fffd}"),
    (b"ok \xf0\x9f\x98\x80 \x80", "ok \u{1f600} \u{fffd}"),
];

#[test]
fn json_escaping_handles_nasty_strings() {
    let valid = valid_strings();
    for shell in shells() {
        for s in &valid {
            let out = json_str(&shell, OsStr::new(s));
            let back: String = serde_json::from_str(&out)
                .unwrap_or_else(|e| panic!("{}: {out:?} is not a JSON string: {e}", shell.name));
            assert_eq!(&back, s, "{}", shell.name);
            assert!(
                !out.bytes().any(|b| b < 0x20),
                "raw control byte in {out:?}"
            );
        }
        for (s, want) in EXACT {
            assert_eq!(json_str(&shell, OsStr::new(s)), *want, "{}", shell.name);
        }
        for (bytes, want) in INVALID {
            let out = json_str(&shell, OsStr::from_bytes(bytes));
            let back: String = serde_json::from_str(&out)
                .unwrap_or_else(|e| panic!("{}: {out:?} ({bytes:?}) is not JSON: {e}", shell.name));
            assert_eq!(&back, want, "{}: {bytes:?}", shell.name);
        }
    }
}

/// Runs the facts task on a root whose os-release PRETTY_NAME is `value`
/// and returns os.distro.description (what the task's awk made of it).
fn facts_description(shell: &Shell, value: &[u8]) -> Value {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("etc")).unwrap();
    let mut text = b"ID=x\nPRETTY_NAME=\"".to_vec();
    text.extend_from_slice(value);
    text.extend_from_slice(b"\"\n");
    std::fs::write(root.path().join("etc/os-release"), text).unwrap();
    let dir = root.path().display().to_string();
    let f = run_task(shell, "facts.sh", json!({}), &[("FERRY_FACTS_ROOT", &dir)]).ok();
    f["os"]["distro"]["description"].clone()
}

/// The facts task's awk escaping gives the helpers' answers, for every
/// string an os-release line can hold (no newline), under every awk.
#[test]
fn json_escaping_in_the_facts_awk_matches_the_helpers() {
    let valid = valid_strings();
    for shell in shells_and_awks() {
        let who = shell.name;
        for s in valid.iter().filter(|s| !s.contains('\n')) {
            let want = if s.is_empty() { Value::Null } else { json!(s) };
            assert_eq!(
                facts_description(&shell, s.as_bytes()),
                want,
                "{who}: {s:?}"
            );
        }
        for (s, want) in EXACT.iter().filter(|(s, _)| !s.contains('\n')) {
            let want: Value = serde_json::from_str(want).unwrap();
            assert_eq!(
                facts_description(&shell, s.as_bytes()),
                want,
                "{who}: {s:?}"
            );
        }
        for (bytes, want) in INVALID {
            let got = facts_description(&shell, bytes);
            assert_eq!(got, json!(want), "{who}: {bytes:?}");
        }
    }
}
