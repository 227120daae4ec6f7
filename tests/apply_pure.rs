//! The apply core without a target, as data: each `tests/apply/pure/NAME.yaml`
//! holds catalog resources, what the program written for them must (and
//! must not) contain, the lines a target printed running it, and the
//! report's expected resource statuses, events and logs. Each case is one
//! test, `pure::NAME`. No SSH, no shell: only `apply::Prepared`, the
//! program text, `apply::events` and `apply::report`.
//!
//! A case file:
//!
//! ```yaml
//! noop: false                 # optional, as --noop
//! resources:                  # Puppet's catalog resources
//!   - {type: File, title: /tmp/x, parameters: {content: "hi\n"}}
//! edges: []                   # optional containment edges {source, target}
//! program: ["printf", "mv -f"]   # substrings, in this order
//! program_lacks: ["rm -rf"]   # substrings that must not appear
//! target:                     # what the target printed, fields joined by tabs
//!   - [0, ev, ensure, success, absent]
//!   - [0, done]
//!   - ["-", end]
//! status: changed             # the report's status
//! resources_expected:         # per resource: fields that must match
//!   File[/tmp/x]: {changed: true, events: [{property: ensure, message: "..."}]}
//! logs: [[notice, "..."]]     # optional: every log's level and message, in order
//! ```

use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::{Value, json};

use ferry::apply::report::RunInfo;
use ferry::apply::types::{SourceError, Sources};
use ferry::apply::{ApplyCatalog, ApplyOptions, Prepared, events};

const TOKEN: &str = "tok";

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/apply/pure")
}

/// `puppet:///modules/M/P` from the recorded cases' modules.
struct TestSources;

impl Sources for TestSources {
    fn read(&self, uri: &str) -> Result<Vec<u8>, SourceError> {
        let rest = uri
            .strip_prefix("puppet:///modules/")
            .ok_or_else(|| SourceError::Unsupported(uri.into()))?;
        let (module, file) = rest
            .split_once('/')
            .ok_or_else(|| SourceError::NotFound(uri.into()))?;
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/apply/puppet/modules")
            .join(module)
            .join("files")
            .join(file);
        std::fs::read(path).map_err(|_| SourceError::NotFound(uri.into()))
    }

    fn tree(&self, uri: &str) -> Result<Option<Vec<(String, bool)>>, SourceError> {
        let rest = uri
            .strip_prefix("puppet:///modules/")
            .ok_or_else(|| SourceError::Unsupported(uri.into()))?;
        let (module, dir) = rest.split_once('/').unwrap_or((rest, ""));
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/apply/puppet/modules")
            .join(module)
            .join("files")
            .join(dir);
        if !root.is_dir() {
            return Ok(None);
        }
        let mut entries = Vec::new();
        let mut todo = vec![root.clone()];
        while let Some(d) = todo.pop() {
            for e in std::fs::read_dir(&d).map_err(|_| SourceError::NotFound(uri.into()))? {
                let p = e.map_err(|_| SourceError::NotFound(uri.into()))?.path();
                let rel = p.strip_prefix(&root).unwrap_or(&p).display().to_string();
                if p.is_dir() {
                    todo.push(p.clone());
                }
                entries.push((rel, p.is_dir()));
            }
        }
        entries.sort();
        Ok(Some(entries))
    }

    fn environment(&self) -> &str {
        "production"
    }
}

/// Whether every key of `expected` has the same value in `actual`
/// (objects compared key by key, arrays element by element).
fn matches(expected: &Value, actual: &Value, at: &str, problems: &mut Vec<String>) {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, ev) in e {
                matches(
                    ev,
                    a.get(k).unwrap_or(&Value::Null),
                    &format!("{at}/{k}"),
                    problems,
                );
            }
        }
        (Value::Array(e), Value::Array(a)) if e.len() == a.len() => {
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                matches(ev, av, &format!("{at}/{i}"), problems);
            }
        }
        (e, a) if e == a => {}
        // YAML numbers and strings: 0640 written as a string stays one.
        (e, a) => problems.push(format!("{at}:\n    expected: {e}\n    actual:   {a}")),
    }
}

fn run(path: &Path) -> Result<(), Failed> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let case: Value = serde_saphyr::from_str(&text).map_err(|e| e.to_string())?;
    let catalog_json = json!({
        "name": "node1",
        "version": 1,
        "environment": "production",
        "resources": case["resources"],
        "edges": case.get("edges").cloned().unwrap_or(json!([])),
    });
    let catalog =
        ApplyCatalog::from_json(&catalog_json.to_string(), "case").map_err(|e| e.to_string())?;
    let noop = case["noop"].as_bool().unwrap_or(false);
    let options = ApplyOptions {
        noop,
        ..Default::default()
    };
    let prepared = Prepared::new(catalog, options, &TestSources).map_err(|e| e.to_string())?;
    let program = prepared.program().text(TOKEN);
    let mut problems = Vec::new();

    // The program: what it must hold, in order, and what it must not.
    let mut from = 0;
    for want in case["program"].as_array().into_iter().flatten() {
        let want = want.as_str().unwrap_or_default();
        match program[from..].find(want) {
            Some(at) => from += at + want.len(),
            None => problems.push(format!(
                "the program lacks (after what came before) {want:?}"
            )),
        }
    }
    for unwanted in case["program_lacks"].as_array().into_iter().flatten() {
        let unwanted = unwanted.as_str().unwrap_or_default();
        if program.contains(unwanted) {
            problems.push(format!("the program holds {unwanted:?}"));
        }
    }

    // The target's lines, read as the executor reads them.
    let mut lines = Vec::new();
    for fields in case["target"].as_array().into_iter().flatten() {
        let fields: Vec<String> = fields
            .as_array()
            .into_iter()
            .flatten()
            .map(|f| match f {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect();
        let line = format!("{TOKEN}\t{}", fields.join("\t"));
        match events::parse(TOKEN, &line) {
            Some(Ok(l)) => lines.push(l),
            Some(Err(e)) => return Err(format!("target line {line:?}: {e}").into()),
            None => return Err(format!("target line {line:?} is not the program's").into()),
        }
    }
    let finished = lines.contains(&events::Line::End);
    let n = prepared.order.steps.len();
    let timing = vec![(Some(0.0), "2026-01-01T00:00:00.000000000+00:00".to_string()); n];
    let steps = prepared.report_steps(&timing);
    let info = RunInfo {
        host: "node1",
        catalog: &prepared.catalog,
        transaction_uuid: "00000000-0000-4000-8000-000000000000",
        job_id: None,
        noop,
        time: "2026-01-01T00:00:00.000000000+00:00".into(),
        seconds: 0.0,
        finished,
        error: (!finished).then(|| "The apply did not finish".to_string()),
        now: "2026-01-01T00:00:00.000000000+00:00".into(),
        tags: Vec::new(),
    };
    let report = serde_json::to_value(ferry::apply::report::build(&info, &steps, &lines))
        .map_err(|e| e.to_string())?;

    if let Some(status) = case.get("status") {
        matches(status, &report["status"], "/status", &mut problems);
    }
    if let Some(expected) = case["resources_expected"].as_object() {
        for (name, want) in expected {
            matches(
                want,
                &report["resource_statuses"][name],
                &format!("/resource_statuses/{name}"),
                &mut problems,
            );
        }
    }
    if let Some(logs) = case.get("logs") {
        let actual: Vec<Value> = report["logs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|l| {
                !l["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("Applied catalog in"))
            })
            .map(|l| json!([l["level"], l["message"]]))
            .collect();
        matches(logs, &Value::Array(actual), "/logs", &mut problems);
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{}\n--- program:\n{program}", problems.join("\n")).into())
    }
}

fn main() {
    let args = Arguments::from_args();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(cases_dir())
        .expect("tests/apply/pure")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    paths.sort();
    let trials = paths
        .into_iter()
        .map(|path| {
            let name = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            Trial::test(format!("pure::{name}"), move || run(&path))
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
