//! Data-driven inventory tests. Each `tests/inventory/NAME.yaml` sits next
//! to what it must give: `NAME.expected.json` (the selected targets, fully
//! resolved: for each, Bolt's `inventory show --detail` object, secrets
//! redacted, and `host`, where ferry connects) or `NAME.error` (the exact
//! error). A first line `# select: SPEC` chooses the targets (default
//! `all`); a line `# cli: KEY=JSON` lays a command-line setting under the
//! inventory (`# cli: ssh.user="me"`). Files the yaml plugin reads live in
//! `tests/inventory/parts/`.
//! `FERRY_BLESS=1 cargo test --test inventory` rewrites missing expectations.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ferry::inventory::Inventory;
use ferry::inventory::plugin::Env;

struct TestEnv(HashMap<&'static str, &'static str>);

impl Env for TestEnv {
    fn var(&self, name: &str) -> Option<String> {
        self.0.get(name).map(|v| v.to_string())
    }
}

fn env() -> TestEnv {
    TestEnv(HashMap::from([
        ("FERRY_TEST_PASSWORD", "sentinel-secret-4711"),
        ("FERRY_TEST_JSON", r#"{"threads": 4, "tags": ["a", "b"]}"#),
        ("FERRY_TEST_PARTIAL", "parts/partial.yaml"),
    ]))
}

fn outcome(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let spec = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("# select: "))
        .unwrap_or("all")
        .to_string();
    let cli: Vec<(String, serde_json::Value)> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# cli: "))
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| {
            (
                k.to_string(),
                serde_json::from_str(v).expect("# cli: KEY=JSON"),
            )
        })
        .collect();
    let mut inventory = match Inventory::parse(&text, path, &env()) {
        Ok(i) => i,
        Err(e) => return format!("{e}\n"),
    };
    inventory.set_command_line(cli);
    let targets = match inventory.select(&spec) {
        Ok(t) => t,
        Err(e) => return format!("{e}\n"),
    };
    let items: Vec<serde_json::Value> = targets
        .iter()
        .map(|t| {
            let mut detail = t.detail();
            detail["host"] = t.host().into();
            detail
        })
        .collect();
    serde_json::to_string_pretty(&items).unwrap() + "\n"
}

#[test]
fn inventory_cases() {
    let dir = Path::new("tests/inventory");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    cases.sort();
    assert!(
        cases.len() >= 10,
        "expected the inventory cases in {}",
        dir.display()
    );
    let bless = std::env::var_os("FERRY_BLESS").is_some();
    let mut failures = Vec::new();
    for case in &cases {
        let got = outcome(case);
        let error_file = case.with_extension("error");
        let json_file = case.with_extension("expected.json");
        let expected_file = if error_file.exists() {
            error_file
        } else {
            json_file.clone()
        };
        match std::fs::read_to_string(&expected_file) {
            Ok(want) if want == got => {}
            Ok(want) => failures.push(format!(
                "{}:\n--- want\n{want}--- got\n{got}",
                case.display()
            )),
            Err(_) if bless => {
                let file = if got.starts_with('[') {
                    json_file
                } else {
                    case.with_extension("error")
                };
                std::fs::write(file, &got).unwrap();
            }
            Err(_) => failures.push(format!("{}: no expectation; got:\n{got}", case.display())),
        }
        assert!(
            !got.contains("sentinel-secret-4711"),
            "{}: a secret leaked",
            case.display()
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
