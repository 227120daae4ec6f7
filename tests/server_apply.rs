//! Puppet runs in the service, end to end against the shared sshd: ACE's
//! `/execute_catalog` compiles a node's catalog from an environment of the
//! server's environmentpath (its manifests, its modules, its hiera data,
//! the node's facts and certname), applies it, answers ACE's summary and
//! stores the Puppet report; a second run changes nothing, noop changes
//! nothing, a manifest that does not compile and a target that cannot be
//! reached answer as ACE does. The orchestrator's deploy command runs the
//! same on a scope of the inventory as a job, and the job's report gives
//! each node's run. ACE's bad requests are a case file,
//! `tests/cases/api/execute_catalog_bad_requests.yaml`. Deploy jobs over
//! classified nodes are case files too, `tests/cases/deploy/NAME.yaml`
//! (one test each, `deploy_NAME`: environments from node groups or an
//! ENC, switches, strict mode, conflicts, each node's events, report and
//! stored facts), and a job's `scope.query` runs over stored facts.

mod common;
#[path = "common/jobs.rs"]
mod jobs;
#[path = "common/tls.rs"]
mod tls;

use std::path::{Path, PathBuf};

use common::sshd::{KeyType, Sshd, client_keys};
use jobs::{fixture, inventory_of, kinds, stream, target_line};
use serde_json::{Value, json};
use tls::{Client, Pki, TestServer, ssh_target};

fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("ferry-server-apply-")
        .tempdir()
        .expect("temp dir")
}

/// An environmentpath under `dir` whose environments write into `out`:
/// `production` (a file per node from its certname, environment and a
/// fact, and a class from the environment's modules with a parameter from
/// its hiera data), `development` (one file naming its environment) and
/// `broken` (a manifest that does not parse).
fn environments(dir: &Path, out: &Path) -> PathBuf {
    let envs = dir.join("code/environments");
    let out = out.display();
    let files = [
        (
            "production/manifests/site.pp",
            format!(
                "file {{ \"{out}/${{trusted['certname']}}.txt\":\n  ensure => file,\n  content => \"hello ${{trusted['certname']}} in ${{environment}} on ${{facts['kernel']}}\\n\",\n}}\nclass {{ 'demo': dir => '{out}' }}\n"
            ),
        ),
        (
            "production/modules/demo/manifests/init.pp",
            "class demo(String $dir, String $greeting) {\n  file { \"${dir}/demo-${trusted['certname']}.txt\": content => \"${greeting}\\n\" }\n}\n".into(),
        ),
        (
            "production/hiera.yaml",
            "version: 5\nhierarchy:\n  - name: common\n    path: common.yaml\n".into(),
        ),
        (
            "production/data/common.yaml",
            "demo::greeting: from hiera\n".into(),
        ),
        (
            "development/manifests/site.pp",
            format!(
                "file {{ \"{out}/dev-${{trusted['certname']}}.txt\": content => \"${{environment}}\\n\" }}\n"
            ),
        ),
        ("broken/manifests/site.pp", "file { 'x': ensure =>\n".into()),
    ];
    for (path, text) in files {
        let path = envs.join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
    }
    envs
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| format!("<{e}>"))
}

/// The tests apply to one machine, which takes one apply at a time
/// (ferry's apply lock refuses a second): they take turns.
static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// What each test starts from: its turn, the shared sshd, a PKI, a scratch
/// directory with [`environments`] writing into its `out`.
struct Setup {
    _turn: tokio::sync::MutexGuard<'static, ()>,
    sshd: &'static Sshd,
    pki: Pki,
    dir: tempfile::TempDir,
    out: PathBuf,
    envs: PathBuf,
}

async fn setup() -> Setup {
    let dir = scratch();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).expect("mkdir");
    let envs = environments(dir.path(), &out);
    Setup {
        _turn: TURN.lock().await,
        sshd: fixture().await,
        pki: Pki::new(),
        dir,
        out,
        envs,
    }
}

const CERTNAME: &str = "web-1.example.com";
const UUID: &str = "6f1e3c1a-1d2b-4c3d-8e4f-5a6b7c8d9e0f";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn execute_catalog_compiles_applies_and_stores_the_report() {
    let s = setup().await;
    let server = TestServer::start(
        &s.pki,
        s.dir.path(),
        &format!("environmentpath: {}\n", s.envs.display()),
    )
    .await;
    let client = Client::new(&s.pki, Some(&s.pki.client));
    let mut target = ssh_target(
        s.sshd.host(),
        s.sshd.port(),
        "root",
        &client_keys().path(KeyType::Ed25519),
        s.sshd.known_hosts_path(),
    );
    target["remote-transport"] = json!("ssh");
    let body = json!({"target": target, "compiler": {
        "certname": CERTNAME, "environment": "production", "enforce_environment": true,
        "transaction_uuid": UUID, "job_id": "42",
        "noop": false, "debug": false, "trace": false, "evaltrace": false}});
    let run = |body: Value| {
        let client = &client;
        async move { client.post(server.addr, "/execute_catalog", &body).await }
    };

    // The first run: ACE's answer, and the files it made.
    let r = run(body.clone()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let a = r.json();
    assert_eq!(a["certname"], CERTNAME, "{a}");
    assert_eq!(a["status"], "changed", "{a}");
    assert_eq!(a["result"]["transaction_uuid"], UUID);
    assert_eq!(a["result"]["environment"], "production");
    assert_eq!(a["result"]["job_id"], "42");
    assert!(a["result"]["time"].is_string(), "{a}");
    assert_eq!(a["result"]["metrics"]["changed"], 2, "{a}");
    assert_eq!(a["result"]["metrics"]["failed"], 0, "{a}");
    assert!(a["result"]["metrics"]["total"].as_u64() >= Some(2), "{a}");
    assert_eq!(
        read(&s.out.join(format!("{CERTNAME}.txt"))),
        format!("hello {CERTNAME} in production on Linux\n")
    );
    assert_eq!(
        read(&s.out.join(format!("demo-{CERTNAME}.txt"))),
        "from hiera\n"
    );

    // The run is a stored job whose node result is the Puppet report,
    // with no server path and no secret in it.
    let listed = client.get(server.addr, "/orchestrator/v1/jobs").await;
    assert!(!listed.text().contains("PRIVATE KEY"), "{}", listed.text());
    let job = &listed.json()["items"][0];
    assert_eq!(job["type"], "ace/execute_catalog", "{job}");
    assert_eq!(job["state"], "finished", "{job}");
    let name = job["name"].as_str().expect("name").to_string();
    let nodes = client
        .get(server.addr, &format!("/orchestrator/v1/jobs/{name}/nodes"))
        .await;
    let text = nodes.text();
    assert!(!text.contains(&s.envs.display().to_string()), "{text}");
    let node = &nodes.json()["items"][0];
    assert_eq!(node["name"], CERTNAME, "{node}");
    assert_eq!(node["state"], "finished", "{node}");
    let report = &node["result"]["report"];
    assert_eq!(report["host"], CERTNAME, "{report}");
    assert_eq!(report["status"], "changed");
    assert_eq!(report["transaction_uuid"], UUID, "{report}");
    assert_eq!(report["job_id"], "42", "{report}");
    assert_eq!(report["report_format"], 12);
    assert_eq!(report["environment"], "production");
    let file = format!("File[{}/{CERTNAME}.txt]", s.out.display());
    let status = &report["resource_statuses"][&file];
    assert_eq!(status["changed"], true, "{report}");
    assert_eq!(
        status["file"], "<environmentpath>/production/manifests/site.pp",
        "{status}"
    );
    let summary = client
        .get(server.addr, &format!("/orchestrator/v1/jobs/{name}/report"))
        .await
        .json();
    assert_eq!(summary["report"][0]["node"], CERTNAME, "{summary}");
    assert_eq!(summary["report"][0]["report"]["host"], CERTNAME);

    // Run again: nothing changes. An empty environment is production
    // when it is not enforced.
    let a = run(body.clone()).await.json();
    assert_eq!(a["status"], "unchanged", "{a}");
    assert_eq!(a["result"]["metrics"]["changed"], 0, "{a}");
    let mut default_env = body.clone();
    default_env["compiler"]["environment"] = json!("");
    default_env["compiler"]["enforce_environment"] = json!(false);
    let a = run(default_env).await.json();
    assert_eq!(a["status"], "unchanged", "{a}");
    assert_eq!(a["result"]["environment"], "production", "{a}");

    // Another environment, named in the catalog and $environment.
    let mut dev = body.clone();
    dev["compiler"]["environment"] = json!("development");
    let a = run(dev).await.json();
    assert_eq!(a["status"], "changed", "{a}");
    assert_eq!(a["result"]["environment"], "development", "{a}");
    assert_eq!(
        read(&s.out.join(format!("dev-{CERTNAME}.txt"))),
        "development\n"
    );

    // noop changes nothing.
    std::fs::remove_file(s.out.join(format!("{CERTNAME}.txt"))).expect("rm");
    let mut noop = body.clone();
    noop["compiler"]["noop"] = json!(true);
    let a = run(noop).await.json();
    assert_ne!(a["status"], "failed", "{a}");
    assert!(!s.out.join(format!("{CERTNAME}.txt")).exists());

    // A manifest that does not compile: the run failed (ACE answers 200).
    let mut broken = body.clone();
    broken["compiler"]["environment"] = json!("broken");
    let r = run(broken).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(
        !r.text().contains(&s.envs.display().to_string()),
        "{}",
        r.text()
    );
    let a = r.json();
    assert_eq!(a["status"], "failed", "{a}");
    assert!(a["result"]["_error"]["msg"].is_string(), "{a}");

    // A target that cannot be reached: ACE's processing_exception.
    let mut down = body;
    down["target"]["port"] = json!(1);
    let r = run(down).await;
    assert_eq!(r.status, 500, "{}", r.text());
    let a = r.json();
    assert_eq!(a["certname"], CERTNAME);
    assert_eq!(a["status"], "failure");
    assert_eq!(
        a["result"]["_error"]["kind"], "puppetlabs/ace/processing_exception",
        "{a}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deploy_job_runs_puppet_on_its_scope_and_reports_each_node() {
    let s = setup().await;
    let targets = format!(
        "{}{}",
        target_line("web1", "root", s.sshd.host(), s.sshd.port()),
        target_line("web2", "root", s.sshd.host(), s.sshd.port()),
    );
    let inv = inventory_of(
        s.dir.path(),
        s.sshd.known_hosts_path(),
        s.sshd.host(),
        &targets,
    );
    let server = TestServer::start(
        &s.pki,
        s.dir.path(),
        &format!(
            "inventory: {}\nenvironmentpath: [{}]\n",
            inv.display(),
            s.envs.display()
        ),
    )
    .await;
    let client = Client::new(&s.pki, Some(&s.pki.client));
    let addr = server.addr;
    let deploy = |body: Value| {
        let client = &client;
        async move {
            client
                .post(addr, "/orchestrator/v1/command/deploy", &body)
                .await
        }
    };

    let r = deploy(
        json!({"environment": "production", "scope": {"node_group": "web"},
        "description": "deploy test", "concurrency": 1, "enforce_environment": true}),
    )
    .await;
    assert_eq!(r.status, 202, "{}", r.text());
    let job = r.json()["job"]["name"].as_str().expect("name").to_string();
    let events = stream(&client, addr, &job).await;
    let k = kinds(&events);
    assert_eq!(k.last(), Some(&"job_finished"), "{k:?}");
    assert_eq!(
        k.iter().filter(|k| **k == "node_finished").count(),
        2,
        "{k:?}"
    );
    // Each node's resource events arrive live, before it finishes.
    for node in ["web1", "web2"] {
        let title = format!("File[{}/{node}.txt]", s.out.display());
        let at = |kind: &str, pred: &dyn Fn(&Value) -> bool| {
            events
                .iter()
                .position(|(k, e)| k == kind && e["details"]["node"] == node && pred(e))
        };
        let live = at("resource_event", &|e| {
            e["details"]["resource"] == title.as_str()
        })
        .unwrap_or_else(|| panic!("no live event for {title}: {events:?}"));
        let done = at("node_finished", &|_| true).expect("node_finished");
        assert!(live < done, "{k:?}");
        let e = &events[live].1;
        assert_eq!(e["details"]["status"], "success", "{e}");
        assert_eq!(e["details"]["property"], "ensure", "{e}");
        let content = format!("hello {node} in production on Linux\n");
        let sha = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(content.as_bytes()));
        assert_eq!(
            e["details"]["message"],
            format!("defined content as '{{sha256}}{sha}'"),
            "{e}"
        );
    }
    let finished = events
        .iter()
        .find(|(k, _)| k == "node_finished")
        .map(|(_, e)| e)
        .expect("node_finished");
    // The reports carry the job's id, as an orchestrated agent run's do.
    assert_eq!(
        finished["details"]["result"]["report"]["job_id"],
        job.as_str(),
        "{finished}"
    );
    assert_eq!(
        finished["details"]["result"]["report"]["status"], "changed",
        "{finished}"
    );
    for node in ["web1", "web2"] {
        assert_eq!(
            read(&s.out.join(format!("{node}.txt"))),
            format!("hello {node} in production on Linux\n")
        );
    }
    // Each node's facts and report went through the indirections (the
    // default routes: the store).
    for node in ["web1", "web2"] {
        let facts = server.state.store.facts(node).await.expect("facts");
        let facts = facts.unwrap_or_else(|| panic!("no facts saved for {node}"));
        assert_eq!(facts.environment, "production");
        assert!(facts.facts["values"]["os"].is_object(), "{}", facts.facts);
        let reports = server.state.store.reports(node).await.expect("reports");
        assert_eq!(reports.len(), 1, "{node}");
        assert_eq!(reports[0].status, "changed");
        assert_eq!(reports[0].report["job_id"], job.as_str());
    }
    let j = client
        .get(addr, &format!("/orchestrator/v1/jobs/{job}"))
        .await
        .json();
    assert_eq!(j["type"], "deploy", "{j}");
    assert_eq!(j["state"], "finished", "{j}");
    assert_eq!(j["description"], "deploy test");

    let r = client
        .get(addr, &format!("/orchestrator/v1/jobs/{job}/report"))
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let report = r.json();
    let items = report["report"].as_array().cloned().unwrap_or_default();
    assert_eq!(items.len(), 2, "{report}");
    for (item, node) in items.iter().zip(["web1", "web2"]) {
        assert_eq!(item["node"], node, "{item}");
        assert_eq!(item["state"], "finished", "{item}");
        assert!(item["timestamp"].is_string(), "{item}");
        assert_eq!(item["report"]["host"], node, "{item}");
        let title = format!("{}/{node}.txt", s.out.display());
        let event = item["events"]
            .as_array()
            .and_then(|es| es.iter().find(|e| e["resource_title"] == title.as_str()))
            .unwrap_or_else(|| panic!("no event for {title}: {item}"));
        assert_eq!(event["resource_type"], "File", "{event}");
        assert_eq!(event["status"], "success", "{event}");
        assert_eq!(event["property"], "ensure", "{event}");
        assert_eq!(event["old_value"], "absent", "{event}");
    }

    // A noop run on a node that converged and one that cannot be reached.
    let r = deploy(
        json!({"environment": "production", "scope": {"nodes": ["web1", "down"]},
        "noop": true}),
    )
    .await;
    assert_eq!(r.status, 202, "{}", r.text());
    let job = r.json()["job"]["name"].as_str().expect("name").to_string();
    let k = kinds(&stream(&client, addr, &job).await).join(",");
    assert!(
        k.contains("node_errored") && k.ends_with("job_finished"),
        "{k}"
    );
    let report = client
        .get(addr, &format!("/orchestrator/v1/jobs/{job}/report"))
        .await
        .json();
    let item = |name: &str| {
        report["report"]
            .as_array()
            .and_then(|items| items.iter().find(|i| i["node"] == name))
            .cloned()
            .unwrap_or_else(|| panic!("{name} not in {report}"))
    };
    let web1 = item("web1");
    assert_eq!(web1["report"]["noop"], true, "{web1}");
    assert_eq!(web1["report"]["status"], "unchanged", "{web1}");
    let down = item("down");
    assert_eq!(down["state"], "failed", "{down}");
    assert!(
        down["report"].is_null() && down["error"]["msg"].is_string(),
        "{down}"
    );

    // Bad requests name their field.
    for (body, field) in [
        (
            json!({"environment": "production", "scope": {"nodes": ["web1"]}, "noop": true, "no_noop": true}),
            "no_noop",
        ),
        (
            json!({"environment": "", "scope": {"nodes": ["web1"]}}),
            "environment",
        ),
        (
            json!({"environment": "qa", "scope": {"nodes": ["web1"]}}),
            "environment",
        ),
        (
            json!({"environment": "production", "scope": {"nodes": ["web9"]}}),
            "scope.nodes[0]",
        ),
        (
            json!({"environment": "production", "scope": {"nodes": ["web1"]}, "concurrency": 0}),
            "concurrency",
        ),
        (
            json!({"environment": "production", "scope": {"nodes": ["web1"]}, "timeout": 604801}),
            "timeout",
        ),
    ] {
        let r = deploy(body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {}", r.text());
        assert_eq!(r.json()["details"]["field"], field, "{body}: {}", r.text());
    }
    let r = client.get(addr, "/orchestrator/v1/jobs/999/report").await;
    assert_eq!(r.status, 404, "{}", r.text());
    server.stop().await;
}

/// A deploy case, `tests/cases/deploy/NAME.yaml`: a server classifying
/// with `server` (`groups`: `tests/classify/deploy-groups.json`; `enc`:
/// the exec terminus with `tests/classify/enc.sh`) over
/// `tests/classify/environments`, a deploy `job`, and for each node its
/// state, its report's environment and `notify` titles, its error's kind
/// and text, and its `node_message` events (each containing the text
/// given, in order).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct DeployCase {
    server: String,
    job: Value,
    nodes: std::collections::BTreeMap<String, DeployNode>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct DeployNode {
    state: String,
    environment: Option<String>,
    #[serde(default)]
    notify: Vec<String>,
    error: Option<String>,
    #[serde(default)]
    error_contains: Vec<String>,
    messages: Vec<String>,
}

/// The deploy cases' nodes, all on the shared sshd.
const DEPLOY_NODES: [&str; 5] = [
    "deploy-prod",
    "deploy-dev",
    "deploy-free",
    "deploy-conflict",
    "deploy-enc",
];

fn classify_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/classify")
}

async fn deploy_case(name: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cases/deploy")
        .join(format!("{name}.yaml"));
    let text = std::fs::read_to_string(&path).expect("case file");
    let case: DeployCase = serde_saphyr::from_str(&text).expect("case");
    let s = setup().await;
    let targets: String = DEPLOY_NODES
        .iter()
        .map(|n| target_line(n, "root", s.sshd.host(), s.sshd.port()))
        .collect();
    let inv = inventory_of(
        s.dir.path(),
        s.sshd.known_hosts_path(),
        s.sshd.host(),
        &targets,
    );
    let data = classify_data();
    let node_terminus = match case.server.as_str() {
        "groups" => {
            let groups = s.dir.path().join("groups.json");
            std::fs::copy(data.join("deploy-groups.json"), &groups).expect("groups");
            format!("classifier-groups: {}\n", groups.display())
        }
        "enc" => format!(
            "routes:\n  node: {{terminus: exec}}\nexternal-nodes: {}\n",
            data.join("enc.sh").display()
        ),
        other => panic!("{name}: unknown server {other}"),
    };
    let server = TestServer::start(
        &s.pki,
        s.dir.path(),
        &format!(
            "inventory: {}\nenvironmentpath: {}\nmodulepath: {}\n{node_terminus}",
            inv.display(),
            data.join("environments").display(),
            data.join("modules").display()
        ),
    )
    .await;
    let client = Client::new(&s.pki, Some(&s.pki.client));
    let mut body = case.job.clone();
    body["concurrency"] = json!(1);
    let r = client
        .post(server.addr, "/orchestrator/v1/command/deploy", &body)
        .await;
    assert_eq!(r.status, 202, "{name}: {}", r.text());
    let job = r.json()["job"]["name"].as_str().expect("name").to_string();
    let events = stream(&client, server.addr, &job).await;
    let report = client
        .get(server.addr, &format!("/orchestrator/v1/jobs/{job}/report"))
        .await
        .json();
    let items = report["report"].as_array().cloned().unwrap_or_default();
    assert_eq!(items.len(), case.nodes.len(), "{name}: {report}");
    for (node, want) in &case.nodes {
        let item = items
            .iter()
            .find(|i| i["node"] == node.as_str())
            .unwrap_or_else(|| panic!("{name}: {node} not in {report}"));
        let at = format!("{name}: {node}: {item}");
        assert_eq!(item["state"], want.state.as_str(), "{at}");
        if let Some(env) = &want.environment {
            assert_eq!(item["report"]["environment"], env.as_str(), "{at}");
        }
        for title in &want.notify {
            let key = format!("Notify[{title}]");
            assert!(
                item["report"]["resource_statuses"].get(&key).is_some(),
                "{name}: {node} has no {key}: {item}"
            );
        }
        if let Some(kind) = &want.error {
            assert_eq!(item["error"]["kind"], kind.as_str(), "{at}");
            assert!(item["report"].is_null(), "{at}");
        }
        let msg = item["error"]["msg"].as_str().unwrap_or_default();
        for words in &want.error_contains {
            assert!(
                msg.contains(words.as_str()),
                "{name}: {node}: {words}: {msg}"
            );
        }
        let messages: Vec<&str> = events
            .iter()
            .filter(|(k, e)| k == "node_message" && e["details"]["node"] == node.as_str())
            .map(|(_, e)| e["message"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(
            messages.len(),
            want.messages.len(),
            "{name}: {node}: {messages:?}"
        );
        for (got, words) in messages.iter().zip(&want.messages) {
            assert!(got.contains(words.as_str()), "{name}: {node}: {got}");
        }
        // The facts went through the facts indirection, in the environment
        // the node ran in (or the job's, for a node that did not run).
        let facts = server.state.store.facts(node).await.expect("facts");
        let facts = facts.unwrap_or_else(|| panic!("{name}: no facts saved for {node}"));
        let env = want
            .environment
            .as_deref()
            .or(case.job["environment"].as_str())
            .unwrap_or_default();
        assert_eq!(facts.environment, env, "{name}: {node}");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deploy_two_environments_switch() {
    deploy_case("two_environments_switch").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deploy_strict_environment_fails_one_node() {
    deploy_case("strict_environment_fails_one_node").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deploy_agent_specified_keeps_the_jobs_environment() {
    deploy_case("agent_specified_keeps_the_jobs_environment").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deploy_classification_conflict_fails_one_node() {
    deploy_case("classification_conflict_fails_one_node").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deploy_exec_enc_classifies() {
    deploy_case("exec_enc_classifies").await;
}

/// A job's `scope.query` runs over the facts the facts indirection has
/// stored (store and yaml termini alike), the inventory's own facts laid
/// over them: a node selected by its stored facts, one by its inventory
/// facts over stored ones that do not match, one by its inventory facts
/// alone; a node whose stored facts do not match is left out, and a node
/// only the store knows is skipped, which the job's description says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scope_query_runs_over_stored_facts() {
    let s = setup().await;
    let with_facts = |name: &str, facts: &str| {
        format!(
            "{}        facts: {{{facts}}}\n",
            target_line(name, "root", s.sshd.host(), s.sshd.port())
        )
    };
    let targets = [
        with_facts("stored-web", ""),
        with_facts("inventory-over-stored", "role: web"),
        with_facts("inventory-only", "role: web"),
        with_facts("stored-db", ""),
    ]
    .concat();
    let inv = inventory_of(
        s.dir.path(),
        s.sshd.known_hosts_path(),
        s.sshd.host(),
        &targets,
    );
    let stored = [
        ("stored-web", json!({"role": "web", "kernel": "Linux"})),
        ("inventory-over-stored", json!({"role": "db"})),
        ("stored-db", json!({"role": "db"})),
        ("elsewhere.test", json!({"role": "web"})),
    ];
    for terminus in ["store", "yaml"] {
        let dir = s.dir.path().join(terminus);
        std::fs::create_dir_all(&dir).expect("mkdir");
        let server = TestServer::start(
            &s.pki,
            &dir,
            &format!(
                "inventory: {}\nroutes:\n  facts: {{terminus: {terminus}}}\n",
                inv.display()
            ),
        )
        .await;
        for (name, values) in &stored {
            let facts = ferry::server::indirector::Facts::new(
                name,
                values.as_object().cloned().unwrap_or_default(),
                Some("production".into()),
            );
            server
                .state
                .indirector
                .facts
                .save(&facts)
                .await
                .expect("save");
        }
        let client = Client::new(&s.pki, Some(&s.pki.client));
        let r = client
            .post(
                server.addr,
                "/orchestrator/v1/command/command",
                &json!({"command": "true", "description": "web servers",
                    "scope": {"query": "nodes[certname] { facts.role = \"web\" }"}}),
            )
            .await;
        assert_eq!(r.status, 202, "{terminus}: {}", r.text());
        let job = r.json()["job"]["name"].as_str().expect("name").to_string();
        stream(&client, server.addr, &job).await;
        let nodes = jobs::nodes(&client, server.addr, &job).await;
        let mut names: Vec<&str> = nodes.iter().filter_map(|n| n["name"].as_str()).collect();
        names.sort();
        assert_eq!(
            names,
            vec!["inventory-only", "inventory-over-stored", "stored-web"],
            "{terminus}"
        );
        let j = client
            .get(server.addr, &format!("/orchestrator/v1/jobs/{job}"))
            .await
            .json();
        assert_eq!(
            j["description"],
            "web servers (scope.query also selected 1 node(s) not in the server's inventory, skipped: elsewhere.test)",
            "{terminus}"
        );
        // A query nothing in the inventory matches, and one that is not PQL.
        for (query, status) in [
            ("nodes[certname] { facts.role = \"mail\" }", 400),
            ("nodes[certname] {", 400),
        ] {
            let r = client
                .post(
                    server.addr,
                    "/orchestrator/v1/command/command",
                    &json!({"command": "true", "scope": {"query": query}}),
                )
                .await;
            assert_eq!(r.status, status, "{terminus}: {query}: {}", r.text());
            assert_eq!(r.json()["details"]["field"], "scope.query", "{query}");
        }
        server.stop().await;
    }
}
