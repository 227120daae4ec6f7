//! `ferry apply` against real Puppet 7, as data: every case under
//! tests/apply/puppet/NAME holds a catalog real Puppet compiled and the
//! reports real Puppet wrote applying it (tests/apply/puppet/README.md,
//! record.py). Each case is one test, `puppet::NAME`: ferry applies the
//! same catalog over SSH to a throwaway copy of this machine's root (a
//! sandboxed sshd), to a fresh root, again on the result, and with
//! `--noop` to another fresh root; each report must agree with Puppet's
//! on status, every resource status and event (property, status, values,
//! message, name), the logs in order, and the counting metrics, and the
//! root must end as Puppet left it (state.txt). Times, uuids and versions
//! are not compared. A case whose directory holds a `pending` file (what
//! ferry does not apply yet) is listed as ignored; `--include-ignored`
//! runs it.

mod common;

use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::{Value, json};

use common::ferry::{Scratch, key_line, one_target};
use common::sshd::{KeyType, Sshd, client_keys};

/// The root every recorded manifest manages.
const ROOT: &str = "/tmp/ferry-puppet-case";

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/apply/puppet")
}

/// What of a report is compared: everything Puppet decides, nothing that
/// depends on the clock or the machine.
fn normalize(report: &Value) -> Value {
    let mut resources = serde_json::Map::new();
    if let Some(statuses) = report["resource_statuses"].as_object() {
        for (name, s) in statuses {
            let events: Vec<Value> = s["events"]
                .as_array()
                .map(|evs| {
                    evs.iter()
                        .map(|e| {
                            json!({
                                "property": e["property"],
                                "status": e["status"],
                                "previous_value": e["previous_value"],
                                "desired_value": e["desired_value"],
                                "message": e["message"],
                                "name": e["name"],
                            })
                        })
                        .collect()
                })
                .unwrap_or_default();
            resources.insert(
                name.clone(),
                json!({
                    "containment_path": s["containment_path"],
                    "failed": s["failed"],
                    "skipped": s["skipped"],
                    "changed": s["changed"],
                    "out_of_sync": s["out_of_sync"],
                    "change_count": s["change_count"],
                    "out_of_sync_count": s["out_of_sync_count"],
                    "events": events,
                }),
            );
        }
    }
    let logs: Vec<Value> = report["logs"]
        .as_array()
        .map(|logs| {
            logs.iter()
                .filter(|l| {
                    !l["message"]
                        .as_str()
                        .is_some_and(|m| m.starts_with("Applied catalog in"))
                })
                .map(|l| json!([l["level"], l["source"], l["message"]]))
                .collect()
        })
        .unwrap_or_default();
    let metric = |name: &str| -> Value {
        report["metrics"][name]["values"]
            .as_array()
            .map(|vals| vals.iter().map(|v| json!([v[0], v[2]])).collect())
            .unwrap_or(Value::Null)
    };
    json!({
        "status": report["status"],
        "noop": report["noop"],
        "noop_pending": report["noop_pending"],
        "transaction_completed": report["transaction_completed"],
        "resources": resources,
        "logs": logs,
        "metrics": {
            "resources": metric("resources"),
            "events": metric("events"),
            "changes": metric("changes"),
        },
    })
}

/// Where two values differ, as JSON paths with both sides.
fn diff(expected: &Value, actual: &Value) -> String {
    fn walk(path: &str, e: &Value, a: &Value, out: &mut Vec<String>) {
        match (e, a) {
            (Value::Object(x), Value::Object(y)) => {
                for k in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                    let (ev, av) = (
                        x.get(k).unwrap_or(&Value::Null),
                        y.get(k).unwrap_or(&Value::Null),
                    );
                    walk(&format!("{path}/{k}"), ev, av, out);
                }
            }
            (Value::Array(x), Value::Array(y)) if path.ends_with("/logs") => {
                // Logs: the first place the sequences part, and the rest.
                let same = x.iter().zip(y).take_while(|(p, q)| p == q).count();
                if same < x.len().max(y.len()) {
                    out.push(format!(
                        "{path} from entry {same}:\n    puppet: {}\n    ferry:  {}",
                        x[same..]
                            .iter()
                            .map(|v| v.to_string())
                            .collect::<Vec<_>>()
                            .join("\n            "),
                        y[same..]
                            .iter()
                            .map(|v| v.to_string())
                            .collect::<Vec<_>>()
                            .join("\n            ")
                    ));
                }
            }
            _ if e != a => out.push(format!("{path}:\n    puppet: {e}\n    ferry:  {a}")),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk("", expected, actual, &mut out);
    out.join("\n") + "\n"
}

/// The state of the root as record.py writes it, read inside the sandbox.
fn state_of(sshd: &Sshd) -> String {
    let script = format!(
        "cd {ROOT} && find . | sort | while IFS= read -r p; do \
         r=${{p#./}}; set -- $(stat -c '%a %U %G' \"$p\"); m=$(printf %04o $((0$1))); \
         if [ -h \"$p\" ]; then echo \"$r link $m $2 $3 $(readlink \"$p\")\"; \
         elif [ -d \"$p\" ]; then echo \"$r directory $m $2 $3 -\"; \
         elif [ -f \"$p\" ]; then s=$(sha256sum < \"$p\"); echo \"$r file $m $2 $3 ${{s%% *}}\"; \
         else echo \"$r other $m $2 $3 -\"; fi; done"
    );
    let mut lines: Vec<String> = sshd
        .sandbox()
        .sh(&script)
        .lines()
        .map(String::from)
        .collect();
    lines.sort();
    lines.iter().map(|l| format!("{l}\n")).collect()
}

struct Case {
    name: String,
    dir: PathBuf,
}

impl Case {
    fn read(&self, file: &str) -> Option<String> {
        std::fs::read_to_string(self.dir.join(file)).ok()
    }

    fn expected(&self, file: &str) -> Option<Value> {
        self.read(file)
            .map(|t| serde_json::from_str(&t).unwrap_or_else(|e| panic!("{file}: {e}")))
    }

    fn run(&self) -> Result<(), Failed> {
        let Some(catalog) = self.read("catalog.json") else {
            return Err(format!("{}: no catalog.json (run record.py)", self.name).into());
        };
        let mut sshd = Sshd::builder().sandboxed().start();
        let scratch = Scratch::new();
        let catalog_path = scratch.path().join("catalog.json");
        std::fs::write(&catalog_path, catalog).map_err(|e| e.to_string())?;
        let inventory_of = |sshd: &Sshd| {
            scratch.inventory(&one_target(
                sshd,
                "node1",
                "root",
                &key_line(&client_keys().path(KeyType::Ed25519)),
            ))
        };
        let mut inventory = inventory_of(&sshd);
        let args: Vec<String> = self
            .read("apply_args")
            .map(|a| a.split_whitespace().map(String::from).collect())
            .unwrap_or_default();
        let modules = cases_dir().join("modules");
        // A fresh root, and what the case sets up outside it (run in the
        // case's directory, inside the sandbox).
        let setup = self.read("setup_cmd");
        let fresh = |sshd: &Sshd| {
            sshd.sandbox()
                .sh(&format!("rm -rf {ROOT} && mkdir -m 0755 {ROOT}"));
            if let Some(cmd) = &setup {
                sshd.sandbox()
                    .sh(&format!("cd '{}' && {cmd}", self.dir.display()));
            }
        };
        let apply = |inventory: &Path, label: &str, noop: bool| -> Result<Value, Failed> {
            let reports = scratch.path().join(format!("reports-{label}"));
            let mut argv: Vec<String> = vec![
                "apply".into(),
                "--catalog".into(),
                catalog_path.display().to_string(),
                "-t".into(),
                "node1".into(),
                "-i".into(),
                inventory.display().to_string(),
                "--modulepath".into(),
                modules.display().to_string(),
                "--report-dir".into(),
                reports.display().to_string(),
            ];
            argv.extend(args.iter().cloned());
            if noop {
                argv.push("--noop".into());
            }
            let refs: Vec<&str> = argv.iter().map(String::as_str).collect();
            let run = scratch.ferry(&refs);
            let text = std::fs::read_to_string(reports.join("node1.json")).map_err(|e| {
                format!("{label}: no report ({e}); ferry said:\n{}", run.all_text())
            })?;
            serde_json::from_str(&text).map_err(|e| format!("{label}: report: {e}").into())
        };
        let mut problems = String::new();
        let check =
            |problems: &mut String, label: &str, expected: Option<Value>, actual: &Value| {
                if let Some(expected) = expected {
                    let (e, a) = (normalize(&expected), normalize(actual));
                    if e != a {
                        problems.push_str(&format!(
                            "--- {label} differs from Puppet's:\n{}",
                            diff(&e, &a)
                        ));
                    }
                }
            };
        fresh(&sshd);
        let first = apply(&inventory, "first", false)?;
        check(
            &mut problems,
            "report.json",
            self.expected("report.json"),
            &first,
        );
        if let Some(state) = self.read("state.txt") {
            let actual = match self.read("state_cmd") {
                Some(cmd) => sshd
                    .sandbox()
                    .sh(&format!("cd '{}' && {cmd}", self.dir.display())),
                None => state_of(&sshd),
            };
            if actual != state {
                problems.push_str(&format!(
                    "--- state after the first apply differs:\npuppet:\n{state}ferry:\n{actual}"
                ));
            }
        }
        let second = apply(&inventory, "second", false)?;
        check(
            &mut problems,
            "report2.json",
            self.expected("report2.json"),
            &second,
        );
        // Noop on a fresh copy of the machine: the first apply changed
        // more than the root (users, packages, services).
        drop(sshd);
        sshd = Sshd::builder().sandboxed().start();
        inventory = inventory_of(&sshd);
        fresh(&sshd);
        let noop = apply(&inventory, "noop", true)?;
        check(
            &mut problems,
            "noop.json",
            self.expected("noop.json"),
            &noop,
        );
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.into())
        }
    }
}

fn main() {
    let args = Arguments::from_args();
    let mut names: Vec<String> = std::fs::read_dir(cases_dir())
        .expect("tests/apply/puppet")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("manifest.pp").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let trials = names
        .into_iter()
        .map(|name| {
            let case = Case {
                dir: cases_dir().join(&name),
                name: name.clone(),
            };
            // A case ferry cannot apply yet says why in `pending`; one
            // being recorded has no catalog yet.
            let pending = case.read("pending").or_else(|| {
                case.read("catalog.json")
                    .is_none()
                    .then(|| "not recorded yet".to_string())
            });
            Trial::test(format!("puppet::{name}"), move || case.run())
                .with_ignored_flag(pending.is_some())
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
