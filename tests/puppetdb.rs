//! PuppetDB queries, as Bolt users write them, against a real PuppetDB 7
//! (one per test binary, `common/puppetdb.rs`, started only when a test
//! needs it) and over stored facts without one.
//!
//! Data cases: each `tests/cases/query/NAME.query` (PQL text, or PuppetDB's
//! AST as a JSON array) sits next to `NAME.rows.json` (the rows, as real
//! PuppetDB 7 answered them for the nodes in `facts.json`) or `NAME.error`
//! (text ferry's error contains). Each case is two tests: `stored::NAME`
//! evaluates it with ferry over `facts.json`; `puppetdb::NAME` sends it to
//! the real PuppetDB fed the same facts, so the expected rows stay true to
//! PuppetDB. Rows are compared with timestamps blanked, and as a set when
//! the query has no `order by`.
//!
//! The other tests run the `ferry` binary in a Bolt project whose
//! `puppetdb` is the real one over HTTPS with a client certificate:
//! `puppetdb_query` and `puppetdb_fact` in a `.pp` plan, a bad query
//! (PuppetDB's message passed through as `bolt/puppetdb-error`), the
//! inventory's `puppetdb` plugin, `--query`, a PuppetDB that is down or
//! never answers (a clear error within the timeouts), and a wrong CA.

#[path = "common/pg.rs"]
mod pg;
#[path = "common/puppetdb.rs"]
mod puppetdb;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases/query")
}

/// `facts.json`: certname → {environment, facts}.
fn facts_file() -> Vec<(String, String, Value)> {
    let text = std::fs::read_to_string(cases_dir().join("facts.json")).expect("facts.json");
    let v: serde_json::Map<String, Value> = serde_json::from_str(&text).expect("facts.json");
    v.into_iter()
        .map(|(c, n)| {
            (
                c,
                n["environment"]
                    .as_str()
                    .unwrap_or("production")
                    .to_string(),
                n["facts"].clone(),
            )
        })
        .collect()
}

/// The shared PuppetDB, fed `facts.json` once.
fn fed() -> Arc<puppetdb::PuppetDb> {
    static FED: OnceLock<()> = OnceLock::new();
    let db = puppetdb::shared();
    FED.get_or_init(|| db.replace_facts(&facts_file()));
    db
}

/// Rows as compared: timestamps blanked; sorted unless `ordered`.
fn normal(rows: &[Value], ordered: bool) -> Vec<Value> {
    let mut out: Vec<Value> = rows
        .iter()
        .map(|r| {
            let mut r = r.clone();
            if let Value::Object(m) = &mut r {
                for k in ["timestamp", "facts_timestamp"] {
                    if m.contains_key(k) {
                        m.insert(k.into(), Value::Null);
                    }
                }
            }
            r
        })
        .collect();
    if !ordered {
        out.sort_by_key(|r| r.to_string());
    }
    out
}

struct Case {
    query: Value,
    ordered: bool,
    rows: Option<Vec<Value>>,
    error: Option<String>,
}

fn load_case(name: &str) -> Case {
    let dir = cases_dir();
    let text = std::fs::read_to_string(dir.join(format!("{name}.query"))).expect("query");
    let text = text.trim_end();
    let rows = std::fs::read_to_string(dir.join(format!("{name}.rows.json")))
        .ok()
        .map(|t| serde_json::from_str(&t).expect("rows.json"));
    let error = std::fs::read_to_string(dir.join(format!("{name}.error")))
        .ok()
        .map(|t| t.trim_end().to_string());
    Case {
        query: ferry::query::from_text(text),
        ordered: text.contains("order by") || text.contains("order_by"),
        rows,
        error,
    }
}

fn stored_case(name: &str) -> Result<(), Failed> {
    let case = load_case(name);
    let nodes: Vec<ferry::query::NodeFacts> = facts_file()
        .into_iter()
        .map(|(certname, env, facts)| ferry::query::NodeFacts {
            certname,
            environment: Some(env),
            facts: facts.as_object().cloned().unwrap_or_default(),
        })
        .collect();
    let got = ferry::query::parse(&case.query).map(|q| q.evaluate(&nodes));
    match (got, case.rows, case.error) {
        (Ok(rows), Some(want), _) => {
            let (got, want) = (normal(&rows, case.ordered), normal(&want, case.ordered));
            if got != want {
                return Err(format!(
                    "rows differ\n got: {}\nwant: {}",
                    serde_json::to_string_pretty(&got).unwrap_or_default(),
                    serde_json::to_string_pretty(&want).unwrap_or_default()
                )
                .into());
            }
            Ok(())
        }
        (Err(e), None, Some(want)) if e.to_string().contains(&want) => Ok(()),
        (Err(e), _, _) => Err(format!("error: {e}").into()),
        (Ok(rows), _, _) => Err(format!("expected an error, got rows {rows:?}").into()),
    }
}

fn puppetdb_case(name: &str) -> Result<(), Failed> {
    let case = load_case(name);
    let db = fed();
    match (db.query(&case.query), case.rows) {
        (Ok(rows), Some(want)) => {
            let (got, want) = (normal(&rows, case.ordered), normal(&want, case.ordered));
            if got != want {
                return Err(format!(
                    "PuppetDB answers otherwise now\n got: {got:?}\nwant: {want:?}"
                )
                .into());
            }
            Ok(())
        }
        (Err(e), None) if e.starts_with("400") => Ok(()),
        (other, _) => Err(format!("PuppetDB answered {other:?}").into()),
    }
}

/// A Bolt project: `bolt-project.yaml` with `extra` (its `puppetdb`), a
/// module `q` with `plans`, and an `inventory.yaml`.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new(puppetdb: &str, inventory: &str, plans: &[(&str, &str)]) -> Project {
        let dir = tempfile::Builder::new()
            .prefix("ferry-pdb-project-")
            .tempdir()
            .expect("temp dir");
        let d = dir.path();
        std::fs::write(
            d.join("bolt-project.yaml"),
            format!("name: pdbtest\n{puppetdb}"),
        )
        .expect("project");
        std::fs::write(d.join("inventory.yaml"), inventory).expect("inventory");
        std::fs::create_dir_all(d.join("modules/q/plans")).expect("plans dir");
        std::fs::create_dir_all(d.join("home")).expect("home");
        for (name, code) in plans {
            std::fs::write(d.join(format!("modules/q/plans/{name}.pp")), code).expect("plan");
        }
        Project { dir }
    }

    /// Runs ferry in the project: (exit code, stdout, stderr).
    fn ferry(&self, args: &[&str]) -> (i32, String, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_ferry"))
            .args(args)
            .arg("--project")
            .arg(self.dir.path())
            .current_dir(self.dir.path())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.dir.path().join("home"))
            .output()
            .expect("run ferry");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

/// The project's `puppetdb` for the real PuppetDB over HTTPS.
fn pdb_config(db: &puppetdb::PuppetDb) -> String {
    format!(
        "puppetdb:\n  server_urls: ['{}']\n  cacert: {}\n  cert: {}\n  key: {}\n  connect_timeout: 5\n  read_timeout: 30\n",
        db.https_url,
        db.cacert.display(),
        db.cert.display(),
        db.key.display()
    )
}

fn json(text: &str) -> Result<Value, Failed> {
    serde_json::from_str(text).map_err(|e| format!("not JSON ({e}): {text}").into())
}

fn check(ok: bool, what: String) -> Result<(), Failed> {
    if ok { Ok(()) } else { Err(what.into()) }
}

const QUERY_PLAN: &str = r#"plan q::facts() {
  $rows = puppetdb_query('inventory[certname, facts.os.family] { facts.os.family = "Debian" order by certname }')
  $ast = puppetdb_query(['from', 'nodes', ['extract', ['certname'], ['~', 'certname', '^web']], ['order_by', [['certname', 'asc']]]])
  $f = puppetdb_fact(['web2.example.com', 'nosuch.example.com'])
  return { 'rows' => $rows, 'ast' => $ast.map |$r| { $r['certname'] }, 'family' => $f['web2.example.com']['os']['family'], 'missing' => $f['nosuch.example.com'] }
}
"#;

const BAD_PLAN: &str = r#"plan q::bad() {
  return puppetdb_query('nodes[certname] { bogus = 1 }')
}
"#;

fn plan_functions_query_puppetdb() -> Result<(), Failed> {
    let db = fed();
    let p = Project::new(
        &pdb_config(&db),
        "{}\n",
        &[("facts", QUERY_PLAN), ("bad", BAD_PLAN)],
    );
    let (code, out, err) = p.ferry(&["plan", "run", "q::facts", "--format", "json"]);
    check(code == 0, format!("exit {code}: {out}{err}"))?;
    let v = json(&out)?;
    let want = serde_json::json!({
        "rows": [
            {"certname": "db1.example.com", "facts.os.family": "Debian"},
            {"certname": "web1.example.com", "facts.os.family": "Debian"}
        ],
        "ast": ["web1.example.com", "web2.example.com"],
        "family": "RedHat",
        "missing": {}
    });
    check(v == want, format!("got {v}\nwant {want}"))?;
    // A query PuppetDB refuses: its message, as Bolt's puppetdb-error.
    let (code, out, err) = p.ferry(&["plan", "run", "q::bad", "--format", "json"]);
    check(code == 1, format!("exit {code}: {out}{err}"))?;
    let v = json(&out)?;
    check(
        v["kind"] == "bolt/puppetdb-error"
            && v["msg"].as_str().is_some_and(|m| {
                m.starts_with("Failed to query PuppetDB: ")
                    && m.contains("'bogus' is not a queryable object for nodes")
            }),
        format!("got {v}"),
    )
}

fn plan_functions_over_stored_facts() -> Result<(), Failed> {
    let inventory = "targets:\n  - name: web1.example.com\n    facts: {os: {family: Debian}}\n  - name: web2.example.com\n    facts: {os: {family: RedHat}}\n";
    let p = Project::new("", inventory, &[("facts", QUERY_PLAN), ("bad", BAD_PLAN)]);
    let (code, out, err) = p.ferry(&["plan", "run", "q::facts", "--format", "json"]);
    check(code == 0, format!("exit {code}: {out}{err}"))?;
    let v = json(&out)?;
    let want = serde_json::json!({
        "rows": [{"certname": "web1.example.com", "facts.os.family": "Debian"}],
        "ast": ["web1.example.com", "web2.example.com"],
        "family": "RedHat",
        "missing": {}
    });
    check(v == want, format!("got {v}\nwant {want}"))?;
    let (code, out, _) = p.ferry(&["plan", "run", "q::bad", "--format", "json"]);
    let v = json(&out)?;
    check(
        code == 1
            && v["kind"] == "bolt/puppetdb-error"
            && v["msg"].as_str().is_some_and(|m| {
                m.contains("'bogus' is not a queryable object for nodes")
                    && m.contains("at character 19")
            }),
        format!("exit {code}: {v}"),
    )
}

fn inventory_plugin_makes_targets_from_puppetdb() -> Result<(), Failed> {
    let db = fed();
    let inventory = r#"groups:
  - name: debian
    targets:
      - _plugin: puppetdb
        query: 'inventory[certname] { facts.os.family = "Debian" }'
        target_mapping:
          name: certname
          uri: facts.networking.ip
          facts:
            family: facts.os.family
            first_interface: facts.networking.interfaces.0
          vars:
            role: facts.role
"#;
    let p = Project::new(&pdb_config(&db), inventory, &[]);
    let (code, out, err) = p.ferry(&[
        "inventory",
        "show",
        "-t",
        "debian",
        "--detail",
        "--format",
        "json",
    ]);
    check(code == 0, format!("exit {code}: {out}{err}"))?;
    let v = json(&out)?;
    let mut targets: Vec<&Value> = v["targets"]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    targets.sort_by_key(|t| t["name"].to_string());
    let summary: Vec<(String, String, String, String, String)> = targets
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap_or("").into(),
                t["uri"].as_str().unwrap_or("").into(),
                t["facts"]["family"].as_str().unwrap_or("").into(),
                t["facts"]["first_interface"].as_str().unwrap_or("").into(),
                t["vars"]["role"].as_str().unwrap_or("").into(),
            )
        })
        .collect();
    let want = vec![
        (
            "db1.example.com".to_string(),
            "127.0.0.3".to_string(),
            "Debian".to_string(),
            "lo".to_string(),
            "db".to_string(),
        ),
        (
            "web1.example.com".into(),
            "127.0.0.1".into(),
            "Debian".into(),
            "lo".into(),
            "web".into(),
        ),
    ];
    check(summary == want, format!("got {summary:?}\nfrom {v}"))?;
    // A mapping key at the top is Bolt's error, with its position.
    let bad = "targets:\n  - _plugin: puppetdb\n    query: 'nodes[certname] {}'\n    uri: facts.networking.ip\n";
    let p = Project::new(&pdb_config(&db), bad, &[]);
    let (code, out, err) = p.ferry(&["inventory", "show", "-t", "all"]);
    check(
        code != 0
            && err.contains(
                "PuppetDB plugin expects keys [\"uri\"] to be set under 'target_mapping'",
            )
            && err.contains("inventory.yaml:4:5"),
        format!("exit {code}: {out}{err}"),
    )
}

const INSTANCES_PLAN: &str = r#"plan q::instances() {
  $stored = puppetdb_query('inventory[certname] { facts.os.family = "Debian" order by certname }')
  $main = puppetdb_query('inventory[certname] { facts.os.family = "Debian" order by certname }', 'main')
  $plain = puppetdb_query(['from', 'nodes', ['extract', ['certname'], ['=', 'certname', 'web2.example.com']]], 'plain')
  $f = puppetdb_fact(['web2.example.com'], 'main')
  $unknown = catch_errors() || { puppetdb_query('nodes[certname] {}', 'nosuch') }
  return {
    'stored' => $stored.map |$r| { $r['certname'] },
    'main' => $main.map |$r| { $r['certname'] },
    'plain' => $plain.map |$r| { $r['certname'] },
    'family' => $f['web2.example.com']['os']['family'],
    'unknown' => [$unknown.kind, $unknown.message],
  }
}
"#;

/// Bolt's `puppetdb-instances`: two named instances of the real PuppetDB
/// (HTTPS with client certificates, and its plain HTTP port), no default
/// one (so queries without an instance read the stored facts), in the
/// plan functions and the inventory plugin; an unknown instance is Bolt's
/// error.
fn named_puppetdb_instances() -> Result<(), Failed> {
    let db = fed();
    let main = pdb_config(&db)
        .replace("puppetdb:\n", "  main:\n")
        .replace("\n  ", "\n    ");
    let config = format!(
        "puppetdb-instances:\n{main}  plain:\n    server_urls: ['http://127.0.0.1:{}']\n",
        db.http_port
    );
    let inventory = r#"targets:
  - name: local.example.com
    facts: {os: {family: Debian}}
groups:
  - name: redhat
    targets:
      - _plugin: puppetdb
        instance: plain
        query: 'inventory[certname] { facts.os.family = "RedHat" }'
"#;
    let p = Project::new(&config, inventory, &[("instances", INSTANCES_PLAN)]);
    let (code, out, err) = p.ferry(&["plan", "run", "q::instances", "--format", "json"]);
    check(code == 0, format!("exit {code}: {out}{err}"))?;
    let v = json(&out)?;
    let want = serde_json::json!({
        "stored": ["local.example.com"],
        "main": ["db1.example.com", "web1.example.com"],
        "plain": ["web2.example.com"],
        "family": "RedHat",
        "unknown": ["bolt/puppetdb-error", "PuppetDB instance 'nosuch' has not been configured, unable to connect"],
    });
    check(v == want, format!("got {v}\nwant {want}"))?;
    // Bolt's --puppetdb: a named instance is the default one.
    let (code, out, err) = p.ferry(&[
        "plan",
        "run",
        "q::instances",
        "--puppetdb",
        "plain",
        "--format",
        "json",
    ]);
    check(code == 0, format!("exit {code}: {out}{err}"))?;
    let v = json(&out)?;
    check(
        v["stored"] == serde_json::json!(["db1.example.com", "web1.example.com"]),
        format!("got {v}"),
    )?;
    let (code, out, err) = p.ferry(&["plan", "run", "q::instances", "--puppetdb", "nosuch"]);
    check(
        code == 1
            && err.contains(
                "--puppetdb: PuppetDB instance 'nosuch' has not been configured, unable to connect",
            ),
        format!("exit {code}: {out}{err}"),
    )?;
    let (code, out, err) = p.ferry(&["inventory", "show", "-t", "redhat", "--format", "json"]);
    check(code == 0, format!("exit {code}: {out}{err}"))?;
    let v = json(&out)?;
    check(
        v["targets"] == serde_json::json!(["web2.example.com"]),
        format!("got {v}"),
    )?;
    // The plugin naming an instance the project does not configure.
    let bad = inventory.replace("instance: plain", "instance: nosuch");
    let p = Project::new(&config, &bad, &[]);
    let (code, out, err) = p.ferry(&["inventory", "show", "-t", "all"]);
    check(
        code == 1
            && err.contains("inventory.yaml:7:9: plugin puppetdb: PuppetDB instance 'nosuch' has not been configured, unable to connect"),
        format!("exit {code}: {out}{err}"),
    )
}

const APPLY_PLAN: &str = r#"plan q::applydb() {
  $known = apply([], '_puppetdb' => 'main') { }
  $unknown = catch_errors() || { apply([], '_puppetdb' => 'nosuch') { } }
  return [$known.count, $unknown.kind, $unknown.message]
}
"#;

/// Bolt's default PuppetDB beside named ones: the `puppetdb` section is
/// the default (asked when a query names no instance), `--puppetdb NAME`
/// makes a named one the default instead; `apply`'s `_puppetdb` names an
/// instance too. What Bolt refuses, with the key named: a `default` key
/// in `puppetdb` (Bolt's default is chosen with `--puppetdb`), and the
/// puppetdb plugin configured under `plugins`.
fn default_and_named_puppetdb_instances() -> Result<(), Failed> {
    let db = fed();
    let main = pdb_config(&db)
        .replace("puppetdb:\n", "  main:\n")
        .replace("\n  ", "\n    ");
    let plain = format!("['http://127.0.0.1:{}']", db.http_port);
    let config = format!(
        "puppetdb:\n  server_urls: {plain}\npuppetdb-instances:\n{main}  plain:\n    server_urls: {plain}\n"
    );
    let inventory = "targets:\n  - name: local.example.com\n    facts: {os: {family: Debian}}\n";
    let plans = [("instances", INSTANCES_PLAN), ("applydb", APPLY_PLAN)];
    let p = Project::new(&config, inventory, &plans);
    let debian = serde_json::json!(["db1.example.com", "web1.example.com"]);
    for extra in [&[][..], &["--puppetdb", "main"][..]] {
        let mut args = vec!["plan", "run", "q::instances", "--format", "json"];
        args.extend_from_slice(extra);
        let (code, out, err) = p.ferry(&args);
        check(code == 0, format!("{extra:?}: exit {code}: {out}{err}"))?;
        let v = json(&out)?;
        check(v["stored"] == debian, format!("{extra:?}: got {v}"))?;
    }
    let (code, out, err) = p.ferry(&["plan", "run", "q::applydb", "--format", "json"]);
    check(code == 0, format!("exit {code}: {out}{err}"))?;
    let v = json(&out)?;
    let want = serde_json::json!([
        0,
        "bolt/puppetdb-error",
        "PuppetDB instance 'nosuch' has not been configured, unable to connect"
    ]);
    check(v == want, format!("got {v}\nwant {want}"))?;
    for (bad, say) in [
        (
            format!("puppetdb:\n  server_urls: {plain}\n  default: main\n"),
            "bolt-project.yaml:4:3: invalid configuration: Unknown option 'default' in puppetdb: the default PuppetDB is the 'puppetdb' section itself; to make a named instance of 'puppetdb-instances' the default, pass --puppetdb NAME",
        ),
        (
            format!("plugins:\n  puppetdb:\n    server_urls: {plain}\n"),
            "bolt-project.yaml:3:3: invalid configuration: Configuration for the PuppetDB plugin must be in the 'puppetdb' config section, not 'plugins'",
        ),
    ] {
        let p = Project::new(&bad, inventory, &[]);
        let (code, out, err) = p.ferry(&["inventory", "show", "-t", "all"]);
        check(
            code == 1 && err.contains(say),
            format!("exit {code}: {out}{err}"),
        )?;
    }
    Ok(())
}

fn query_flag_selects_targets() -> Result<(), Failed> {
    let db = fed();
    let p = Project::new(&pdb_config(&db), "{}\n", &[]);
    let (code, out, err) = p.ferry(&[
        "inventory",
        "show",
        "--query",
        r#"inventory[certname] { facts.kernel = "Linux" and facts.processors.count >= 4 }"#,
        "--format",
        "json",
    ]);
    check(code == 0, format!("exit {code}: {out}{err}"))?;
    let v = json(&out)?;
    let mut names: Vec<&str> = v["targets"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    names.sort();
    check(
        names == ["db1.example.com", "web1.example.com"],
        format!("got {v}"),
    )?;
    // The AST form, and rows without certname (Bolt's error).
    let (code, out, err) = p.ferry(&[
        "inventory",
        "show",
        "-q",
        r#"["from", "facts", ["extract", ["name"], ["=", "name", "kernel"]]]"#,
    ]);
    check(
        code != 0 && err.contains("Query results did not contain a 'certname' field: got name"),
        format!("exit {code}: {out}{err}"),
    )?;
    let (code, out, err) = p.ferry(&["inventory", "show", "-q", "nodes[certname] {}", "-t", "x"]);
    check(
        code != 0 && err.contains("Only one targeting option can be specified"),
        format!("exit {code}: {out}{err}"),
    )
}

fn query_flag_over_inventory_facts() -> Result<(), Failed> {
    let inventory = "targets:\n  - name: a\n    facts: {role: web}\n  - name: b\n    facts: {role: db}\n  - name: c\n    facts: {role: web}\n";
    let p = Project::new("", inventory, &[]);
    let (code, out, err) = p.ferry(&[
        "inventory",
        "show",
        "--query",
        "inventory[certname] { facts.role = 'web' }",
        "--format",
        "json",
    ]);
    check(code == 0, format!("exit {code}: {out}{err}"))?;
    let v = json(&out)?;
    check(
        v["targets"] == serde_json::json!(["a", "c"]),
        format!("got {v}"),
    )?;
    let (code, _, err) = p.ferry(&[
        "inventory",
        "show",
        "--query",
        "inventory[certname] { facts.role = }",
    ]);
    check(
        code != 0 && err.contains("expected a value after facts.role =, found '}' at character 36"),
        format!("exit {code}: {err}"),
    )
}

fn puppetdb_down_is_a_clear_error_in_time() -> Result<(), Failed> {
    // Nothing listens: refused at once.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| e.to_string())?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, rcgen_ca()).map_err(|e| e.to_string())?;
    let cfg = |port: u16| {
        format!(
            "puppetdb:\n  server_urls: ['https://127.0.0.1:{port}']\n  cacert: {}\n  connect_timeout: 2\n  read_timeout: 2\n",
            ca.display()
        )
    };
    let p = Project::new(&cfg(closed.port()), "{}\n", &[("bad", BAD_PLAN)]);
    let started = Instant::now();
    let (code, out, err) = p.ferry(&["plan", "run", "q::bad", "--format", "json"]);
    let v = json(&out)?;
    check(
        code == 1
            && v["kind"] == "bolt/puppetdb-error"
            && v["msg"].as_str().is_some_and(|m| {
                m.contains("Failed to connect to all PuppetDB server_urls")
                    && m.contains("cannot connect")
            }),
        format!("exit {code}: {out}{err}"),
    )?;
    // Something accepts and never answers: read_timeout, not a hang.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let port = silent.local_addr().map_err(|e| e.to_string())?.port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in silent.incoming() {
            held.push(s);
        }
    });
    let p = Project::new(&cfg(port), "{}\n", &[]);
    let (code, out, err) = p.ferry(&["inventory", "show", "--query", "nodes[certname] {}"]);
    check(
        code != 0 && err.contains("read_timeout"),
        format!("exit {code}: {out}{err}"),
    )?;
    check(
        started.elapsed() < Duration::from_secs(20),
        format!("took {:?}", started.elapsed()),
    )
}

fn a_wrong_ca_is_refused() -> Result<(), Failed> {
    let db = fed();
    let cfg = pdb_config(&db).replace(
        &db.cacert.display().to_string(),
        &db.other_ca.display().to_string(),
    );
    let p = Project::new(&cfg, "{}\n", &[]);
    let (code, out, err) = p.ferry(&["inventory", "show", "--query", "nodes[certname] {}"]);
    check(
        code != 0
            && err.contains("Failed to connect to all PuppetDB server_urls")
            && err.to_lowercase().contains("certificate"),
        format!("exit {code}: {out}{err}"),
    )
}

/// A CA certificate no server uses.
fn rcgen_ca() -> String {
    let key = rcgen::KeyPair::generate().expect("key");
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params.self_signed(&key).expect("ca").pem()
}

/// A named test.
type Check = fn() -> Result<(), Failed>;

fn main() {
    let args = Arguments::from_args();
    let mut names: Vec<String> = std::fs::read_dir(cases_dir())
        .expect("tests/cases/query")
        .filter_map(|e| {
            let p = e.ok()?.path();
            Some(p.file_name()?.to_str()?.strip_suffix(".query")?.to_string())
        })
        .collect();
    names.sort();
    let mut trials: Vec<Trial> = Vec::new();
    for n in &names {
        let a = n.clone();
        trials.push(Trial::test(format!("stored::{n}"), move || stored_case(&a)));
    }
    for n in &names {
        let a = n.clone();
        trials.push(Trial::test(format!("puppetdb::{n}"), move || {
            puppetdb_case(&a)
        }));
    }
    let named: [(&str, Check); 9] = [
        ("named_puppetdb_instances", named_puppetdb_instances),
        (
            "default_and_named_puppetdb_instances",
            default_and_named_puppetdb_instances,
        ),
        (
            "plan_functions_query_puppetdb",
            plan_functions_query_puppetdb,
        ),
        (
            "plan_functions_over_stored_facts",
            plan_functions_over_stored_facts,
        ),
        (
            "inventory_plugin_makes_targets_from_puppetdb",
            inventory_plugin_makes_targets_from_puppetdb,
        ),
        ("query_flag_selects_targets", query_flag_selects_targets),
        (
            "query_flag_over_inventory_facts",
            query_flag_over_inventory_facts,
        ),
        (
            "puppetdb_down_is_a_clear_error_in_time",
            puppetdb_down_is_a_clear_error_in_time,
        ),
        ("a_wrong_ca_is_refused", a_wrong_ca_is_refused),
    ];
    for (name, f) in named {
        trials.push(Trial::test(name, f));
    }
    let conclusion = libtest_mimic::run(&args, trials);
    puppetdb::shutdown();
    conclusion.exit();
}
