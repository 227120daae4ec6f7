//! YAML plans as data, against the real binary and the shared sshd.
//!
//! - `tests/plans/cases/NAME.yaml` (test `case::NAME`): runs of
//!   `ferry plan run` in one scratch directory, each step `plan` (name),
//!   `params` (name=value words), `args` (more arguments) — or with
//!   `show: true`, `ferry plan show PLAN ARGS` — then checks:
//!   `status`, `value` (stdout's JSON document, exactly), `json` (JSON
//!   pointer → exact value), `json_contains` (pointer → substring),
//!   `stdout_contains`, `stderr_contains`, `output_lacks` (neither stream),
//!   `files` (scratch path → substring of its text) and `absent`. The
//!   inventory has targets `t` and `u` (root) and `n` (a user with
//!   password-less sudo) on the shared sshd, and a group `pair` of `t` and
//!   `u`; `{scratch}` in a string is the scratch directory.
//! - `tests/plans/modules/bad/plans/NAME.yaml` (test `error::NAME`): a plan
//!   that must be refused before anything runs; its first line is
//!   `# error: LINE:COL: MESSAGE` — the start of the error after the
//!   file's path — checked on stderr (human output, exit 1) and as Bolt's
//!   JSON error on stdout with `--format json`.
//! - Two tests on their own sshd: one connection per target for a whole
//!   plan, and a task copy altered between steps.
//!
//! The fixture modules (`tests/plans/modules`) are written from Bolt's
//! YAML plan documentation and its spec fixtures (spec/fixtures/modules/yaml).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::ferry::{Run, Scratch, key_line, one_target};
use common::sshd::{self, KeyType, Sshd, client_keys};
use libtest_mimic::{Arguments, Failed, Trial};
use serde::Deserialize;
use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/plans")
}

fn modulepath() -> String {
    root().join("modules").display().to_string()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    steps: Vec<CaseStep>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseStep {
    plan: String,
    /// `ferry plan show PLAN` (every plan when PLAN is empty) instead of `plan run`.
    #[serde(default)]
    show: bool,
    #[serde(default)]
    params: Vec<String>,
    #[serde(default)]
    args: Vec<String>,
    status: Option<i32>,
    value: Option<Value>,
    #[serde(default)]
    json: BTreeMap<String, Value>,
    #[serde(default)]
    json_contains: BTreeMap<String, String>,
    #[serde(default)]
    stdout_contains: Vec<String>,
    #[serde(default)]
    stderr_contains: Vec<String>,
    #[serde(default)]
    output_lacks: Vec<String>,
    #[serde(default)]
    files: BTreeMap<String, String>,
    #[serde(default)]
    absent: Vec<String>,
}

/// The inventory every case runs with.
fn inventory(s: &Scratch) -> PathBuf {
    let sshd = sshd::shared();
    let key = client_keys().path(KeyType::Ed25519);
    let uri = |user: &str| format!("ssh://{user}@{}:{}", sshd.host(), sshd.port());
    s.inventory(&format!(
        "config:\n  ssh:\n    known-hosts-file: {}\n    load-config: false\n    private-key: {}\n\
         targets:\n  - name: t\n    uri: {}\n  - name: u\n    uri: {}\n  - name: n\n    uri: {}\n\
         groups:\n  - name: pair\n    targets: [t, u]\n",
        sshd.known_hosts_path().display(),
        key.display(),
        uri("root"),
        uri("root"),
        uri(sshd::NOPW_USER),
    ))
}

fn fill(text: &str, s: &Scratch) -> String {
    text.replace("{scratch}", &s.path().display().to_string())
        .replace("{nopw_user}", sshd::NOPW_USER)
}

fn fill_json(v: &Value, s: &Scratch) -> Value {
    match v {
        Value::String(t) => Value::String(fill(t, s)),
        Value::Array(items) => Value::Array(items.iter().map(|i| fill_json(i, s)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (fill(k, s), fill_json(v, s)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn plan_run(s: &Scratch, inv: &Path, plan: &str, words: &[String]) -> Run {
    let mp = modulepath();
    let mut args = vec!["plan", "run", plan];
    args.extend(words.iter().map(String::as_str));
    args.extend(["-i", inv.to_str().unwrap_or_default(), "--modulepath", &mp]);
    s.ferry(&args)
}

fn check_step(s: &Scratch, inv: &Path, step: &CaseStep) -> Result<(), String> {
    let mut words: Vec<String> = step.params.iter().map(|p| fill(p, s)).collect();
    words.extend(step.args.iter().map(|a| fill(a, s)));
    let run = if step.show {
        let mp = modulepath();
        let mut args = vec!["plan", "show"];
        if !step.plan.is_empty() {
            args.push(&step.plan);
        }
        args.extend(words.iter().map(String::as_str));
        args.extend(["--modulepath", &mp]);
        s.ferry(&args)
    } else {
        plan_run(s, inv, &step.plan, &words)
    };
    let shown = format!("{} {words:?} gave {run:?}", step.plan);
    if let Some(status) = step.status
        && run.code != status
    {
        return Err(format!("want exit status {status}\n{shown}"));
    }
    if step.value.is_some() || !step.json.is_empty() || !step.json_contains.is_empty() {
        let doc: Value = serde_json::from_str(&run.stdout)
            .map_err(|e| format!("stdout is not JSON ({e})\n{shown}"))?;
        if let Some(want) = &step.value {
            let want = fill_json(want, s);
            if doc != want {
                return Err(format!("want the value {want}\n{shown}"));
            }
        }
        for (pointer, want) in &step.json {
            let want = fill_json(want, s);
            let got = doc.pointer(pointer);
            if got != Some(&want) {
                return Err(format!("{pointer}: want {want}, got {got:?}\n{shown}"));
            }
        }
        for (pointer, part) in &step.json_contains {
            let part = fill(part, s);
            let got = doc.pointer(pointer).and_then(Value::as_str);
            if !got.is_some_and(|g| g.contains(&part)) {
                return Err(format!(
                    "{pointer}: want text holding {part:?}, got {got:?}\n{shown}"
                ));
            }
        }
    }
    for (what, text, parts) in [
        ("stdout", &run.stdout, &step.stdout_contains),
        ("stderr", &run.stderr, &step.stderr_contains),
    ] {
        for part in parts {
            let part = fill(part, s);
            if !text.contains(&part) {
                return Err(format!("{what} lacks {part:?}\n{shown}"));
            }
        }
    }
    for part in &step.output_lacks {
        let part = fill(part, s);
        if run.all_text().contains(&part) {
            return Err(format!("the output holds {part:?}\n{shown}"));
        }
    }
    for (path, part) in &step.files {
        let text = std::fs::read_to_string(s.path().join(path))
            .map_err(|e| format!("{path}: {e}\n{shown}"))?;
        if !text.contains(&fill(part, s)) {
            return Err(format!("{path} lacks {part:?}: {text:?}\n{shown}"));
        }
    }
    for path in &step.absent {
        if s.path().join(fill(path, s)).exists() {
            return Err(format!("{path} exists\n{shown}"));
        }
    }
    Ok(())
}

fn run_case(path: &Path) -> Result<(), Failed> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let case: Case = serde_saphyr::from_str(&text).map_err(|e| e.to_string())?;
    let s = Scratch::new();
    let inv = inventory(&s);
    for (i, step) in case.steps.iter().enumerate() {
        check_step(&s, &inv, step).map_err(|e| format!("step {}: {e}", i + 1))?;
    }
    Ok(())
}

/// A plan that must be refused: its first line says where and why.
fn error_case(name: &str, path: &Path) -> Result<(), Failed> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let want = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("# error: "))
        .ok_or("the first line must be `# error: LINE:COL: MESSAGE`")?;
    let s = Scratch::new();
    let inv = s.inventory("targets: [t]\n");
    let plan = format!("bad::{name}");
    let run = plan_run(&s, &inv, &plan, &[]);
    let want_text = format!("{}:{want}", path.display());
    if run.code != 1 || !run.stderr.contains(&want_text) {
        return Err(format!("want exit 1 and {want_text:?} on stderr, got {run:?}").into());
    }
    let run = plan_run(&s, &inv, &plan, &["--format".into(), "json".into()]);
    let doc: Value = serde_json::from_str(&run.stdout)
        .map_err(|e| format!("stdout is not JSON ({e}): {run:?}"))?;
    let line: u64 = want
        .split(':')
        .next()
        .and_then(|l| l.trim().parse().ok())
        .ok_or("no line in the expected error")?;
    let msg = want.splitn(3, ':').nth(2).unwrap_or("").trim();
    if run.code != 1
        || doc["kind"] != "bolt/invalid-plan"
        || doc["details"]["line"] != line
        || doc["details"]["file"] != path.display().to_string()
        || !doc["msg"].as_str().is_some_and(|m| m.starts_with(msg))
    {
        return Err(format!("want Bolt's invalid-plan error at line {line}, got {run:?}").into());
    }
    Ok(())
}

/// `ferry plan run NAME ARGS.. -i INV --modulepath <the task test modules>`.
fn demo_run(s: &Scratch, inv: &Path, name: &str, args: &[&str]) -> Run {
    let mp = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/tasks/modules")
        .display()
        .to_string();
    let mut all = vec!["plan", "run", name];
    all.extend(args);
    all.extend(["-i", inv.to_str().unwrap_or_default(), "--modulepath", &mp]);
    s.ferry(&all)
}

fn one_connection_per_target() -> Result<(), Failed> {
    let sshd = Sshd::builder().start();
    let s = Scratch::new();
    let inv = s.inventory(&one_target(
        &sshd,
        "t",
        "root",
        &key_line(&client_keys().path(KeyType::Ed25519)),
    ));
    let marker = s.path().join("marker");
    let marker_arg = format!("marker={}", marker.display());
    let run = demo_run(
        &s,
        &inv,
        "demo::deploy",
        &[
            "message=hello plan",
            &marker_arg,
            "-t",
            "t",
            "--format",
            "json",
        ],
    );
    if run.code != 0 {
        return Err(format!("{run:?}").into());
    }
    // The return value alone: the last step's results.
    let doc = run.json();
    if doc[0]["value"]["stdout"] != "present\n" || !marker.exists() {
        return Err(format!("{doc}").into());
    }
    let logins = sshd.log().matches("Accepted publickey for root").count();
    if logins != 1 {
        return Err(format!("{logins} logins for three steps:\n{}", sshd.log_tail(30)).into());
    }
    Ok(())
}

fn altered_copy_is_replaced() -> Result<(), Failed> {
    let sshd = Sshd::builder().start();
    let s = Scratch::new();
    let (inv, tmp, _) = s.private_target(&sshd);
    let pwned = s.path().join("pwned");
    let copies = format!("copies={}/ferry-*/*/demo/tasks/marker.sh", tmp.display());
    let pwned_arg = format!("pwned={}", pwned.display());
    let run = demo_run(
        &s,
        &inv,
        "demo::tamper",
        &[
            &copies,
            &pwned_arg,
            "-t",
            "t",
            "--format",
            "json",
            "--log-level",
            "info",
        ],
    );
    let doc = run.json();
    let altered = doc["altered"][0]["value"]["stdout"]
        .as_str()
        .unwrap_or_default();
    if run.code != 0 || !altered.contains("/demo/tasks/marker.sh") {
        return Err(format!("the step found no copy to alter: {run:?}").into());
    }
    if doc["second"][0]["value"]["ran"] != "original" || pwned.exists() {
        return Err(format!("the altered copy ran: {doc}").into());
    }
    // The second run took the file from the target's cache: no bytes sent.
    let sent: Vec<&str> = run.stderr.lines().filter(|l| l.contains("sent ")).collect();
    if sent.len() != 2 || !sent[1].contains("sent 0 bytes") {
        return Err(run.stderr.clone().into());
    }
    // The shell's directory went with the connection.
    if std::fs::read_dir(&tmp).map(Iterator::count).unwrap_or(1) != 0 {
        return Err(format!("{tmp:?} is not empty").into());
    }
    Ok(())
}

fn files_in(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter_map(|p| {
            Some((
                p.file_name()?.to_str()?.strip_suffix(".yaml")?.to_string(),
                p,
            ))
        })
        .collect();
    found.sort();
    found
}

fn main() {
    let args = Arguments::from_args();
    let mut trials: Vec<Trial> = files_in(&root().join("cases"))
        .into_iter()
        .map(|(name, path)| Trial::test(format!("case::{name}"), move || run_case(&path)))
        .collect();
    trials.extend(
        files_in(&root().join("modules/bad/plans"))
            .into_iter()
            .map(|(name, path)| {
                Trial::test(format!("error::{name}"), move || error_case(&name, &path))
            }),
    );
    trials.push(Trial::test(
        "sshd::a_plan_keeps_one_connection_per_target",
        one_connection_per_target,
    ));
    trials.push(Trial::test(
        "sshd::a_copy_altered_between_steps_is_replaced_and_never_run",
        altered_copy_is_replaced,
    ));
    libtest_mimic::run(&args, trials).exit();
}
