//! Behaviour tables as data: every `tests/cases/cli/NAME.yaml` runs the real
//! `ferry` binary, every `tests/cases/api/NAME.yaml` sends requests to an
//! in-process `ferry serve`, against the shared OpenSSH server where a case
//! names it. Each file is one test, `cli::NAME` or `api::NAME`
//! (`cargo test --test cases -- cli::NAME` runs one).
//!
//! A case is a list of `steps`, run in order in one scratch directory.
//! A CLI step may write `inventory` (YAML text) or `target` (one target on
//! the shared sshd: `name`, `user`, `ssh` options), then runs `args` and
//! checks `status`, `json` (JSON pointer → exact value on stdout's
//! document), `json_contains` (pointer → substring of the string there),
//! `json_types`, `items` (how many result items), `stdout_contains`,
//! `stderr_contains`, `output_lacks` (neither stream) and `absent` (paths
//! in the scratch dir that must not exist). `cwd` runs it in another
//! directory, `env` sets environment variables.
//! An API step is `get` or `post` (path) with a `body`, and checks
//! `status`, `json`, `json_contains`, `text_contains`, `text_lacks` and
//! `file_lacks` (a file of the server's directory → strings it must not hold).
//! In a body the string `{target}` is the shared sshd's target object (as
//! root with the ed25519 key), and `{"$target": {..}}` that object with the
//! given fields set (null removes one); the string `{port}` is the port number.
//!
//! Strings anywhere in a case may name `{host}`, `{port}`, `{key}`,
//! `{known_hosts}` (a path), `{known_hosts_content}`,
//! `{wrong_known_hosts_content}`, `{password}`, `{pw_user}`, `{nopw_user}`,
//! `{fixtures}` (this repository's `tests/` directory) and, in CLI args,
//! `{inventory}`.

mod common;
#[path = "common/tls.rs"]
mod tls;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::ferry::{Run, Scratch, one_target};
use common::sshd::{self, KeyType, client_keys};
use libtest_mimic::{Arguments, Failed, Trial};
use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CliCase {
    steps: Vec<CliStep>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CliTarget {
    name: String,
    user: String,
    #[serde(default)]
    ssh: BTreeMap<String, String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Checks {
    status: Option<i64>,
    #[serde(default)]
    json: BTreeMap<String, Value>,
    #[serde(default)]
    json_contains: BTreeMap<String, String>,
    #[serde(default)]
    json_types: BTreeMap<String, String>,
    items: Option<usize>,
    #[serde(default)]
    stdout_contains: Vec<String>,
    #[serde(default)]
    stderr_contains: Vec<String>,
    #[serde(default)]
    output_lacks: Vec<String>,
    #[serde(default)]
    absent: Vec<String>,
    #[serde(default)]
    text_contains: Vec<String>,
    #[serde(default)]
    text_lacks: Vec<String>,
    #[serde(default)]
    file_lacks: BTreeMap<String, Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CliStep {
    inventory: Option<String>,
    target: Option<CliTarget>,
    /// The directory ferry runs in (default: the scratch dir).
    cwd: Option<String>,
    /// Environment variables set for the run.
    #[serde(default)]
    env: BTreeMap<String, String>,
    args: Vec<String>,
    #[serde(flatten)]
    checks: Checks,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ApiCase {
    #[serde(default)]
    config: String,
    steps: Vec<ApiStep>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ApiStep {
    get: Option<String>,
    post: Option<String>,
    body: Option<Value>,
    #[serde(flatten)]
    checks: Checks,
}

/// The placeholders' values; the shared sshd is started only when a case
/// names one of its values.
fn placeholder(name: &str) -> Option<String> {
    let read = |p: &Path| std::fs::read_to_string(p).expect("fixture file");
    Some(match name {
        "password" => sshd::USER_PASSWORD.to_string(),
        "pw_user" => sshd::PW_USER.to_string(),
        "nopw_user" => sshd::NOPW_USER.to_string(),
        "key" => client_keys().path(KeyType::Ed25519).display().to_string(),
        "host" => sshd::shared().host().to_string(),
        "port" => sshd::shared().port().to_string(),
        "known_hosts" => sshd::shared().known_hosts_path().display().to_string(),
        "known_hosts_content" => read(sshd::shared().known_hosts_path()),
        "wrong_known_hosts_content" => read(sshd::shared().wrong_known_hosts_path()),
        "fixtures" => concat!(env!("CARGO_MANIFEST_DIR"), "/tests").to_string(),
        _ => return None,
    })
}

/// `text` with every `{name}` in `extra` or [`placeholder`] replaced.
fn fill(text: &str, extra: &[(&str, &str)]) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let value = after.find('}').and_then(|close| {
            let name = &after[..close];
            extra
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
                .or_else(|| placeholder(name))
                .map(|v| (v, close))
        });
        match value {
            Some((v, close)) => {
                out.push_str(&v);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Fills every string of a JSON value; `{target}` and `{"$target": ..}`
/// become target objects.
fn fill_json(value: &Value) -> Value {
    match value {
        Value::String(s) if s == "{target}" => shared_target(),
        Value::String(s) if s == "{port}" => Value::from(sshd::shared().port()),
        Value::String(s) => Value::String(fill(s, &[])),
        Value::Array(items) => Value::Array(items.iter().map(fill_json).collect()),
        Value::Object(map) => {
            if let (1, Some(Value::Object(changes))) = (map.len(), map.get("$target")) {
                let mut target = shared_target();
                for (k, v) in changes {
                    match v {
                        Value::Null => {
                            target.as_object_mut().map(|m| m.remove(k));
                        }
                        v => target[k] = fill_json(v),
                    }
                }
                return target;
            }
            Value::Object(map.iter().map(|(k, v)| (k.clone(), fill_json(v))).collect())
        }
        other => other.clone(),
    }
}

fn shared_target() -> Value {
    let sshd = sshd::shared();
    tls::ssh_target(
        sshd.host(),
        sshd.port(),
        "root",
        &client_keys().path(KeyType::Ed25519),
        sshd.known_hosts_path(),
    )
}

/// The type name a `json_types` check compares with.
fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Checks a step's JSON document; every failure names the pointer.
fn check_json(checks: &Checks, doc: &Value, shown: &str) -> Result<(), String> {
    for (pointer, want) in &checks.json {
        let want = fill_json(want);
        let got = doc.pointer(pointer);
        if got != Some(&want) {
            return Err(format!("{pointer}: want {want}, got {got:?}\n{shown}"));
        }
    }
    for (pointer, part) in &checks.json_contains {
        let part = fill(part, &[]);
        let got = doc.pointer(pointer).and_then(Value::as_str);
        if !got.is_some_and(|s| s.contains(&part)) {
            return Err(format!(
                "{pointer}: want a string containing {part:?}, got {got:?}\n{shown}"
            ));
        }
    }
    for (pointer, want) in &checks.json_types {
        let got = doc.pointer(pointer).map(type_name);
        if got != Some(want.as_str()) {
            return Err(format!("{pointer}: want a {want}, got {got:?}\n{shown}"));
        }
    }
    if let Some(n) = checks.items {
        let got = doc["items"].as_array().map(Vec::len);
        if got != Some(n) {
            return Err(format!("want {n} item(s), got {got:?}\n{shown}"));
        }
    }
    Ok(())
}

fn check_texts(
    what: &str,
    text: &str,
    contains: &[String],
    lacks: &[String],
    shown: &str,
) -> Result<(), String> {
    for part in contains {
        let part = fill(part, &[]);
        if !text.contains(&part) {
            return Err(format!("{what} lacks {part:?}\n{shown}"));
        }
    }
    for part in lacks {
        let part = fill(part, &[]);
        if text.contains(&part) {
            return Err(format!("{what} holds {part:?}\n{shown}"));
        }
    }
    Ok(())
}

fn cli_step(s: &Scratch, step: &CliStep) -> Result<(), String> {
    // Scratch::inventory always writes this file: a step without an
    // inventory of its own uses the one an earlier step wrote.
    let mut inventory = s.path().join("inventory.yaml");
    if let Some(yaml) = &step.inventory {
        inventory = s.inventory(&fill(yaml, &[]));
    }
    if let Some(t) = &step.target {
        let extra: String = t
            .ssh
            .iter()
            .map(|(k, v)| format!("        {k}: {}\n", fill(v, &[])))
            .collect();
        let sshd = sshd::shared();
        inventory = s.inventory(&one_target(sshd, &t.name, &fill(&t.user, &[]), &extra));
    }
    let inv = inventory.display().to_string();
    let args: Vec<String> = step
        .args
        .iter()
        .map(|a| fill(a, &[("inventory", &inv)]))
        .collect();
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let env: Vec<(String, String)> = step
        .env
        .iter()
        .map(|(k, v)| (k.clone(), fill(v, &[("inventory", &inv)])))
        .collect();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let cwd = step.cwd.as_ref().map(|c| PathBuf::from(fill(c, &[])));
    let run: Run = s.ferry_in(cwd.as_deref().unwrap_or(s.path()), &argv, &env);
    let shown = format!("{argv:?} gave {run:?}");
    let c = &step.checks;
    if let Some(status) = c.status
        && i64::from(run.code) != status
    {
        return Err(format!("want exit status {status}\n{shown}"));
    }
    if !c.json.is_empty()
        || !c.json_contains.is_empty()
        || !c.json_types.is_empty()
        || c.items.is_some()
    {
        let doc: Value = serde_json::from_str(&run.stdout)
            .map_err(|e| format!("stdout is not JSON ({e})\n{shown}"))?;
        check_json(c, &doc, &shown)?;
    }
    check_texts("stdout", &run.stdout, &c.stdout_contains, &[], &shown)?;
    check_texts("stderr", &run.stderr, &c.stderr_contains, &[], &shown)?;
    check_texts("output", &run.all_text(), &[], &c.output_lacks, &shown)?;
    for path in &c.absent {
        if s.path().join(path).exists() {
            return Err(format!("{path} exists\n{shown}"));
        }
    }
    Ok(())
}

fn cli_case(path: &Path) -> Result<(), Failed> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let case: CliCase = serde_saphyr::from_str(&text).map_err(|e| e.to_string())?;
    let s = Scratch::new();
    for (i, step) in case.steps.iter().enumerate() {
        cli_step(&s, step).map_err(|e| format!("step {}: {e}", i + 1))?;
    }
    Ok(())
}

async fn api_steps(case: &ApiCase, dir: &Path) -> Result<(), String> {
    let pki = tls::Pki::new();
    let server = tls::TestServer::start(&pki, dir, &fill(&case.config, &[])).await;
    let client = tls::Client::new(&pki, Some(&pki.client));
    let mut outcome = Ok(());
    for (i, step) in case.steps.iter().enumerate() {
        let resp = match (&step.get, &step.post) {
            (Some(path), None) => client.get(server.addr, path).await,
            (None, Some(path)) => {
                let body = step.body.as_ref().map(fill_json).unwrap_or(Value::Null);
                client.post(server.addr, path, &body).await
            }
            _ => {
                outcome = Err(format!("step {}: needs one of get, post", i + 1));
                break;
            }
        };
        let text = resp.text();
        let shown = format!("{} {}", resp.status, text);
        let c = &step.checks;
        let checked = (|| {
            if let Some(status) = c.status
                && i64::from(resp.status) != status
            {
                return Err(format!("want status {status}\n{shown}"));
            }
            if !c.json.is_empty() || !c.json_contains.is_empty() || !c.json_types.is_empty() {
                let doc: Value =
                    serde_json::from_str(&text).map_err(|e| format!("not JSON ({e})\n{shown}"))?;
                check_json(c, &doc, &shown)?;
            }
            check_texts("response", &text, &c.text_contains, &c.text_lacks, &shown)?;
            for (file, lacks) in &c.file_lacks {
                let bytes = std::fs::read(dir.join(file)).map_err(|e| format!("{file}: {e}"))?;
                check_texts(file, &String::from_utf8_lossy(&bytes), &[], lacks, file)?;
            }
            Ok(())
        })();
        if let Err(e) = checked {
            outcome = Err(format!("step {}: {e}", i + 1));
            break;
        }
    }
    server.stop().await;
    outcome
}

fn api_case(path: &Path) -> Result<(), Failed> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let case: ApiCase = serde_saphyr::from_str(&text).map_err(|e| e.to_string())?;
    let dir = tempfile::Builder::new()
        .prefix("ferry-api-case-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    // The sshd fixture blocks while it starts: start it outside the runtime.
    if text.contains("{target}") || text.contains("$target") {
        sshd::shared();
    }
    runtime.block_on(api_steps(&case, dir.path()))?;
    Ok(())
}

/// The case files of one folder, sorted, as (test name, path).
fn cases(kind: &str) -> Vec<(String, PathBuf)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cases")
        .join(kind);
    let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.strip_suffix(".yaml")?.to_string();
            Some((format!("{kind}::{name}"), p))
        })
        .collect();
    found.sort();
    found
}

/// How one kind of case file runs.
type Runner = fn(&Path) -> Result<(), Failed>;

fn main() {
    let args = Arguments::from_args();
    let runners: [(&str, Runner); 2] = [("cli", cli_case), ("api", api_case)];
    let trials = runners
        .into_iter()
        .flat_map(|(kind, run)| {
            cases(kind)
                .into_iter()
                .map(move |(name, path)| Trial::test(name, move || run(&path)))
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
