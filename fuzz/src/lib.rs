//! The fuzzing entry points, one per kind of input ferry reads, shared by
//! the cargo-fuzz targets (`fuzz/fuzz_targets/*.rs`, one line each) and by
//! the corpus replay test (`tests/fuzz_corpus.rs`, which includes this file
//! with `#[path]`). Each takes arbitrary bytes and hands them to the same
//! function ferry uses for that input; any input must end in a value or an
//! error, never a panic, a hang or unbounded memory.
//!
//! Inputs ferry reads from a file (plans, known_hosts, ssh_config, task
//! metadata) are written to a scratch file first, so that the real loading
//! path runs.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use ferry::catalog::{CompileRequest, ManifestSource, compile as compile_catalog};
use ferry::inventory::{Inventory, Target, plugin};
use serde_json::{Map, Value, json};

/// A fuzzing entry point: any bytes in, nothing out.
pub type Entry = fn(&[u8]);

/// Every target by name, for the replay test.
pub const TARGETS: &[(&str, Entry)] = &[
    ("pql", pql),
    ("inventory", inventory),
    ("plan", plan),
    ("api_body", api_body),
    ("known_hosts", known_hosts),
    ("ssh_config", ssh_config),
    ("task_metadata", task_metadata),
    ("task_output", task_output),
    ("parse", parse),
    ("compile", compile),
    ("template", template),
];

/// A directory of this process for scratch files, and a per-thread prefix,
/// so that the replay test's threads do not share files.
fn scratch_dir() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static DIR: PathBuf = {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let dir = std::env::temp_dir()
                .join(format!("ferry-fuzz-{}", std::process::id()))
                .join(n.to_string());
            std::fs::create_dir_all(&dir).expect("scratch directory");
            dir
        };
    }
    DIR.with(Clone::clone)
}

/// Removes this thread's scratch directory (and the process's, once empty).
pub fn remove_scratch() {
    let dir = scratch_dir();
    let _ = std::fs::remove_dir_all(&dir);
    if let Some(parent) = dir.parent() {
        let _ = std::fs::remove_dir(parent);
    }
}

/// Writes `data` to the scratch file `name` and returns its path.
fn scratch_file(name: &str, data: &[u8]) -> PathBuf {
    let path = scratch_dir().join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("scratch directory");
    }
    std::fs::write(&path, data).expect("scratch file");
    path
}

/// Plugin values for `_plugin: env_var` references, the same every run.
struct FixedEnv;

impl plugin::Env for FixedEnv {
    fn var(&self, name: &str) -> Option<String> {
        match name {
            "" => None,
            "EMPTY" => Some(String::new()),
            n if n.starts_with("NO") => None,
            n => Some(format!("value-of-{n}")),
        }
    }
}

const PQL_INVENTORY: &str = r#"
groups:
  - name: web
    targets:
      - uri: web1.example.com
        facts: {os: {family: Debian, release: {major: "12"}}, role: web, cores: 4}
      - name: web2
        uri: 192.0.2.7:2222
        facts: {os: {family: RedHat}, role: web, cores: 16.5, tags: [a, b]}
  - name: db
    targets: [db1, "ssh://root@db2:22"]
    facts: {role: db, memory: null, ok: true}
"#;

/// PQL (`scope.query` of an orchestrator job, `--query`, `puppetdb_query`):
/// read (as PuppetDB's AST when it is a JSON array), tested against every
/// target of a small inventory with nested facts as the server does, and
/// evaluated over all of them.
pub fn pql(data: &[u8]) {
    use std::sync::OnceLock;
    static TARGETS: OnceLock<Vec<Target>> = OnceLock::new();
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let targets = TARGETS.get_or_init(|| {
        Inventory::parse(PQL_INVENTORY, Path::new("pql.yaml"), &FixedEnv)
            .expect("the PQL inventory is valid")
            .targets
    });
    if let Ok(query) = ferry::query::parse(&ferry::query::from_text(text)) {
        for t in targets {
            let _ = query.selects(&t.name, &t.facts);
        }
        let nodes: Vec<ferry::query::NodeFacts> = targets
            .iter()
            .map(|t| ferry::query::NodeFacts {
                certname: t.name.clone(),
                environment: None,
                facts: t.facts.clone(),
            })
            .collect();
        let _ = query.evaluate(&nodes);
    }
}

/// An inventory file: read, plugins resolved, resolved into targets; then
/// every target's transport options checked (as the CLI does before
/// connecting), a few `-t` selections, and the redacted config shown.
pub fn inventory(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(inv) = Inventory::parse(text, Path::new("inventory.yaml"), &FixedEnv) else {
        return;
    };
    let _ = ferry::transport::check_options(&inv.targets, &Default::default());
    let mut specs = vec!["all".to_string(), "localhost".to_string(), "*".to_string()];
    specs.extend(inv.groups.keys().take(3).cloned());
    specs.extend(inv.targets.iter().take(3).map(|t| t.name.clone()));
    for spec in &specs {
        let _ = inv.select(spec);
    }
    for t in inv.targets.iter().take(8) {
        let _ = t.config.redacted_json();
        let _ = t.host();
        let _ = t.address();
    }
}

/// A YAML plan file: loaded (with positions, its embedded Puppet code
/// parsed), then its parameters checked with their defaults and every
/// value of its steps and its `return` computed with them.
pub fn plan(data: &[u8]) {
    let path = scratch_file("plan.yaml", data);
    let Ok(plan) = ferry::plan::load(&path, "fuzz::plan") else {
        return;
    };
    let Ok(vars) = ferry::plan::run::check_params(&plan, Map::new()) else {
        return;
    };
    let vars: ferry::plan::expr::Vars = vars
        .into_iter()
        .map(|(k, v)| (k, ferry::plan::Val::Data(v)))
        .collect();
    if let Some(ret) = &plan.returns {
        let _ = ret.eval(&vars);
    }
    for step in &plan.steps {
        let inner = match &step.kind {
            ferry::plan::StepKind::Parallel { steps } => steps.iter().collect(),
            _ => vec![step],
        };
        for s in inner {
            for e in s.exprs() {
                let _ = e.eval(&vars);
            }
        }
    }
}

/// An API request body: parsed as the server's `JsonBody` does, then each
/// piece the handlers take from it through the same public functions:
/// SSH target objects (typed, then turned into a checked ferry target with
/// its known_hosts content written), file references and their
/// `/puppet/v3/file_content` paths, a job scope's PQL query, a task and its
/// parameters (against the built-in tasks), and the redacted copy stored.
pub fn api_body(data: &[u8]) {
    use ferry::server::api::{targets, tasks};
    use ferry::server::http::body;
    let Ok(raw) = body::parse::<Value>(data) else {
        return;
    };
    let scratch = scratch_dir();
    let mut ssh_targets: Vec<&Value> = raw.get("target").into_iter().collect();
    if let Some(Value::Array(items)) = raw.get("targets") {
        ssh_targets.extend(items.iter().take(4));
    }
    for (i, t) in ssh_targets.into_iter().enumerate() {
        if let Ok(t) = body::typed::<targets::SshTarget>(t.clone()) {
            let _ = t.to_target("target", &scratch, i);
            let _ = t.without_run_as().to_target("targets", &scratch, i);
        }
    }
    let mut uris: Vec<&Value> = Vec::new();
    if let Some(s) = raw.get("script") {
        uris.extend(s.get("uri"));
    }
    if let Some(Value::Array(files)) = raw.get("files") {
        uris.extend(files.iter().take(4).filter_map(|f| f.get("uri")));
    }
    for u in uris {
        if let Ok(u) = body::typed::<targets::FileUri>(u.clone()) {
            let _ = targets::split_uri_path("uri.path", &u.path);
        }
    }
    if let Some(Value::String(q)) = raw.pointer("/scope/query") {
        pql(q.as_bytes());
    }
    let task = raw
        .get("task")
        .and_then(|t| t.as_str().or_else(|| t.get("name")?.as_str()));
    let mut secrets = Vec::new();
    if let Some(name) = task {
        let params = raw
            .get("params")
            .or_else(|| raw.get("parameters"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        if let Ok(prepared) = tasks::prepare(&[], "task", name, "params", params, false) {
            if let Some(Value::Array(files)) = raw.pointer("/task/files") {
                let _ = tasks::check_files(&prepared, files);
            }
            secrets = prepared.secrets;
        }
    }
    let _ = tasks::redact_secrets(&targets::redact(&raw), &secrets);
}

const HOST_KEY: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAtuQLpstBsjdADEkISpJD1ORqv1BPBuveLozoJwopTi";
/// `HOST_KEY` certified by the CA key in the seed corpus's `@cert-authority`
/// lines (`ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMqmZEx+tnRTRcfHGOUahHtGiPJo9GA9wWK3BtdqMCq9`)
/// for server.example.com and 192.0.2.1, valid until 2036.
const HOST_CERT: &str = "ssh-ed25519-cert-v01@openssh.com AAAAIHNzaC1lZDI1NTE5LWNlcnQtdjAxQG9wZW5zc2guY29tAAAAIA4hRLJ72zRC38PsbysiPrMQgoNbkuNsbx4DxShRfWs2AAAAIAtuQLpstBsjdADEkISpJD1ORqv1BPBuveLozoJwopTiAAAAAAAAAAAAAAACAAAACGZ1enpob3N0AAAAIwAAABJzZXJ2ZXIuZXhhbXBsZS5jb20AAAAJMTkyLjAuMi4xAAAAAGsDM90AAAAAfdCIXQAAAAAAAAAAAAAAAAAAADMAAAALc3NoLWVkMjU1MTkAAAAgyqZkTH62dFNFx8cY5RqEe0aI8mj0YD3BYrcG12owKr0AAABTAAAAC3NzaC1lZDI1NTE5AAAAQECoL26/e3jNZPZP1ofgpZ9j4EZLjO42SmboEXG0MAFgtgZux2BsVd4/rkVgsFnmqVusOtZvZhJ5DMcmoRj0pgA=";

/// A known_hosts file: loaded (malformed lines skipped), then a plain key
/// and a host certificate checked for a few names and ports.
pub fn known_hosts(data: &[u8]) {
    use ferry::transport::ssh::known_hosts::KnownHosts;
    use russh::keys::PublicKeyOrCertificate;
    use russh::keys::ssh_key::{Certificate, PublicKey};
    use std::sync::OnceLock;
    static KEYS: OnceLock<Vec<PublicKeyOrCertificate>> = OnceLock::new();
    let keys = KEYS.get_or_init(|| {
        vec![
            PublicKeyOrCertificate::PublicKey {
                key: PublicKey::from_openssh(HOST_KEY).expect("host key"),
                hash_alg: None,
            },
            PublicKeyOrCertificate::Certificate(
                Certificate::from_openssh(HOST_CERT).expect("host certificate"),
            ),
        ]
    });
    let path = scratch_file("known_hosts", data);
    let Ok(known) = KnownHosts::load(&[path]) else {
        return;
    };
    let _ = known.has_cert_authorities();
    for (host, port) in [
        ("server.example.com", 22),
        ("192.0.2.1", 2222),
        ("[::1]", 22),
        ("other", 22),
    ] {
        for key in keys {
            let _ = known.check(host, port, key);
        }
    }
}

/// An OpenSSH client config: resolved for a few host names, as the SSH
/// transport does when `load-config` is on.
pub fn ssh_config(data: &[u8]) {
    let path = scratch_file("ssh_config", data);
    for host in ["server.example.com", "web1", "192.0.2.1", "x"] {
        let _ = ferry::transport::ssh::ssh_config::resolve(&path, host);
    }
}

/// A task's metadata (`<name>.json`), loaded with the task the way the
/// loader finds it on a modulepath, then parameters checked against its
/// types (empty, and a few values of every kind), as `ferry task run` does.
pub fn task_metadata(data: &[u8]) {
    use ferry::task::{Loader, params};
    let dir = scratch_dir().join("modules");
    scratch_file("modules/fz/tasks/t.json", data);
    scratch_file("modules/fz/tasks/t.sh", b"#!/bin/sh\necho ok\n");
    let loader = Loader::new(vec![dir]);
    let Ok(task) = loader.load("fz::t") else {
        return;
    };
    let names: Vec<String> = task
        .metadata
        .parameters
        .iter()
        .flatten()
        .map(|(k, _)| k.clone())
        .take(4)
        .collect();
    let values = [
        json!("text"),
        json!(7),
        json!(-2.5),
        json!(true),
        json!(null),
        json!(["a", 1]),
        json!({"k": "v"}),
    ];
    let mut given = Map::new();
    for (i, n) in names.iter().enumerate() {
        given.insert(n.clone(), values[i % values.len()].clone());
    }
    let _ = params::prepare(task.clone(), Map::new(), false, &loader);
    let _ = params::prepare(task, given, true, &loader);
}

/// A task's output as a hostile target could print it: the first byte is
/// the exit code, the rest stdout and (after a NUL) stderr; a parameter
/// value is a secret to redact.
pub fn task_output(data: &[u8]) {
    let Some((&code, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let (stdout, stderr) = text.split_once('\0').unwrap_or((&text, ""));
    let secrets = ["hunter2".to_string(), "s".to_string()];
    let _ =
        ferry::run::actions::task::output::result(i32::from(code as i8), stdout, stderr, &secrets);
}

/// The Puppet lexer and parser on any UTF-8 text.
/// Parses on the compiler's thread (`catalog::on_compiler_thread`), where ferry parses every
/// manifest (a debug build needs more than a test thread's 2 MiB for the
/// deepest nesting the parser accepts).
pub fn parse(data: &[u8]) {
    if let Ok(src) = std::str::from_utf8(data) {
        let file: Arc<str> = Arc::from("fuzz.pp");
        if let Err(e) = ferry::catalog::on_compiler_thread(|| {
            let _ = ferry::lang::syntax::parser::parse(src, &file);
        }) {
            panic!("{e}");
        }
    }
}

fn compile_code(code: String) {
    let req = CompileRequest {
        manifest: ManifestSource::Code(code),
        modulepath: Default::default(),
        facts: Map::new(),
        node: "fuzz".into(),
        environment: None,
    };
    let _ = compile_catalog(&req);
}

/// The whole compiler on inline code (no modules, no facts).
pub fn compile(data: &[u8]) {
    if let Ok(src) = std::str::from_utf8(data) {
        compile_code(src.to_string());
    }
}

const VARS: &str = "$s = 'str' $n = 7 $f = 2.5 $a = ['b', 'a', 1, [2]] \
    $h = {'k' => 'v', 'n' => {'x' => true}} $u = undef $t = true\n";

/// The template engines: the input rendered as an ERB template (ferry's
/// Ruby-subset interpreter) and as an EPP template, with variables of every
/// kind in scope.
pub fn template(data: &[u8]) {
    if let Ok(src) = std::str::from_utf8(data) {
        let quoted = src.replace('\\', "\\\\").replace('\'', "\\'");
        for f in ["inline_template", "inline_epp"] {
            compile_code(format!("{VARS}$r = {f}('{quoted}')"));
        }
    }
}
