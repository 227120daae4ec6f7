//! Node classification and environment negotiation with a stock Puppet 7
//! agent (Debian's `puppet` package) against `ferry serve`: `puppet agent
//! -t` with throwaway confdir, vardir and ssldir, as in server_agent.rs.
//! One server for the binary classifies with `tests/classify/groups.json`
//! (PE's format) and serves `tests/classify/environments`; a second,
//! started only by its test, classifies with the external node classifier
//! `tests/classify/enc.sh`. Checked: a first run gets its group's class,
//! parameter and inherited variables; a server-specified environment
//! switches the agent (Puppet's own words) and converges; an
//! agent-specified group keeps the agent's environment, or gives the
//! server's when the agent's does not exist; strict environment mode
//! fails the run; a classification that flaps between two environments
//! fails after Puppet's retries; a classification conflict fails the run
//! naming the groups; the exec ENC; the classifier API's CRUD, its 400s
//! naming the field with nothing stored, and that a node's certificate
//! cannot reach it. Without the `puppet` command the agent tests are
//! skipped with a message.

#[path = "common/agent.rs"]
mod agent;
#[path = "common/tls.rs"]
mod tls;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use agent::{Agent, have_puppet};
use ferry::server::AppState;
use serde_json::{Value, json};
use tls::{Client, Pki, TestServer};

struct Fixture {
    addr: std::net::SocketAddr,
    state: Arc<AppState>,
    rt: tokio::runtime::Handle,
    pki: Pki,
    dir: PathBuf,
    _keep: tempfile::TempDir,
}

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/classify")
}

/// A server on a thread of its own for the test process's life; `extra`
/// is its config beyond TLS, host, port and cache-dir.
fn start(extra: impl FnOnce(&Path) -> String + Send + 'static) -> Fixture {
    let server = TestServer::in_background(extra);
    Fixture {
        addr: server.addr,
        state: server.state,
        rt: server.rt,
        pki: server.pki,
        dir: server.dir.path().to_path_buf(),
        _keep: server.dir,
    }
}

fn common_config() -> String {
    format!(
        "allowlist: [client-ok]\nenvironmentpath: {}\nmodulepath: {}\nloglevel: warn\n",
        data().join("environments").display(),
        data().join("modules").display()
    )
}

/// A bearer token that may read the classifier, not change it.
const READER_TOKEN: &str = "classifier-reader-token";

/// The server that classifies with the node groups.
fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        start(|dir| {
            let groups = dir.join("groups.json");
            std::fs::copy(data().join("groups.json"), &groups).expect("copy groups");
            let tokens = dir.join("tokens.yaml");
            let hash = |t: &str| hex::encode(<sha2::Sha256 as sha2::Digest>::digest(t.as_bytes()));
            std::fs::write(
                &tokens,
                format!(
                    "tokens:\n  - name: reader\n    sha256: {}\n    actions: [classifier:read]\n",
                    hash(READER_TOKEN)
                ),
            )
            .expect("tokens");
            format!(
                "{}classifier-groups: {}\ntokens-file: {}\n",
                common_config(),
                groups.display(),
                tokens.display()
            )
        })
    })
}

/// The server that classifies with the external node classifier.
fn enc_fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        start(|_| {
            format!(
                "{}routes:\n  node: {{terminus: exec}}\nexternal-nodes: {}\n",
                common_config(),
                data().join("enc.sh").display()
            )
        })
    })
}

/// `puppet agent -t` as `certname` against `f`, in throwaway directories
/// with a certificate from `f`'s PKI, with `puppet.conf` text and extra
/// arguments.
fn agent(f: &Fixture, certname: &str, conf: &str, args: &[&str]) -> agent::Run {
    Agent::with_cert(certname, &f.pki).run(f.addr.port(), Some(conf), args)
}

fn report_environments(f: &Fixture, certname: &str) -> Vec<String> {
    f.rt.block_on(f.state.store.reports(certname))
        .expect("reports")
        .into_iter()
        .map(|r| r.environment)
        .collect()
}

#[test]
fn a_first_run_gets_its_groups_class_parameter_and_variables() {
    if !have_puppet() {
        return;
    }
    let f = fixture();
    let run = agent(f, "first.test", "", &[]);
    assert_eq!(run.code, 2, "{}", run.output);
    assert!(
        run.says("role::web port=8080 environment=production tier=gold"),
        "{}",
        run.output
    );
    assert!(run.says("site production for first.test"), "{}", run.output);
    assert!(!run.says("doesn't match"), "{}", run.output);
    assert_eq!(report_environments(f, "first.test"), vec!["production"]);
}

#[test]
fn a_server_specified_environment_switches_the_agent_and_converges() {
    if !have_puppet() {
        return;
    }
    let f = fixture();
    let run = agent(f, "switch.test", "[agent]\nenvironment = production\n", &[]);
    assert_eq!(run.code, 2, "{}", run.output);
    assert!(
        run.says(
            "Local environment: 'production' doesn't match server specified node environment 'dev', switching agent to 'dev'."
        ),
        "{}",
        run.output
    );
    // Classes from the child group, the variable inherited from its parent.
    assert!(
        run.says("role::web port=9090 environment=dev tier=silver"),
        "{}",
        run.output
    );
    assert!(run.says("site dev for switch.test"), "{}", run.output);
    assert_eq!(report_environments(f, "switch.test"), vec!["dev"]);
}

#[test]
fn an_agent_specified_group_keeps_the_agents_environment_if_the_server_has_it() {
    if !have_puppet() {
        return;
    }
    let f = fixture();
    let run = agent(f, "choice.test", "", &["--environment", "dev"]);
    assert_eq!(run.code, 2, "{}", run.output);
    assert!(
        run.says("role::web port=7070 environment=dev tier=free"),
        "{}",
        run.output
    );
    assert!(!run.says("doesn't match"), "{}", run.output);
    assert_eq!(report_environments(f, "choice.test"), vec!["dev"]);

    // An environment the server does not have: the server-specified one.
    let run = agent(f, "nosuch.test", "", &["--environment", "nosuch"]);
    assert_eq!(run.code, 2, "{}", run.output);
    for words in [
        "Environment 'nosuch' not found on server, skipping initial pluginsync.",
        "Local environment: 'nosuch' doesn't match server specified environment 'production', restarting agent run with environment 'production'",
        "role::web port=7070 environment=production tier=free",
    ] {
        assert!(run.says(words), "{words}\n{}", run.output);
    }
    assert_eq!(report_environments(f, "nosuch.test"), vec!["production"]);
}

#[test]
fn strict_environment_mode_fails_instead_of_switching() {
    if !have_puppet() {
        return;
    }
    let f = fixture();
    let run = agent(
        f,
        "strict.test",
        "",
        &["--environment", "production", "--strict_environment_mode"],
    );
    assert_eq!(run.code, 1, "{}", run.output);
    assert!(
        run.says(
            "Not using catalog because its environment 'dev' does not match agent specified environment 'production' and strict_environment_mode is set"
        ),
        "{}",
        run.output
    );
    assert!(!run.says("role::web"), "nothing applied:\n{}", run.output);
}

#[test]
fn a_classification_that_flaps_fails_after_the_agents_retries() {
    if !have_puppet() {
        return;
    }
    let f = fixture();
    let run = agent(f, "flap.test", "", &["--environment", "flip"]);
    assert_eq!(run.code, 1, "{}", run.output);
    assert!(
        run.says("Catalog environment didn't stabilize after 4 fetches, aborting run"),
        "{}",
        run.output
    );
    for words in [
        "Local environment: 'flip' doesn't match server specified environment 'flop', restarting agent run with environment 'flop'",
        "Local environment: 'flop' doesn't match server specified environment 'flip', restarting agent run with environment 'flip'",
    ] {
        assert!(run.says(words), "{words}\n{}", run.output);
    }
    assert_eq!(
        run.output.matches("restarting agent run").count(),
        4,
        "one first fetch and 4 retries:\n{}",
        run.output
    );
}

#[test]
fn a_classification_conflict_fails_the_run_naming_the_groups() {
    if !have_puppet() {
        return;
    }
    let f = fixture();
    let run = agent(f, "conflict.test", "", &[]);
    assert_eq!(run.code, 1, "{}", run.output);
    for words in [
        "Error 500 on SERVER",
        "Classification conflict for node 'conflict.test'",
        "class role::web parameter port is 1 from group 'Web port A' but 2 from group 'Web port B'",
    ] {
        assert!(run.says(words), "{words}\n{}", run.output);
    }
    assert!(report_environments(f, "conflict.test").len() <= 1);
}

#[test]
fn an_external_node_classifier_classifies_the_node() {
    if !have_puppet() {
        return;
    }
    let f = enc_fixture();
    let run = agent(f, "enc.test", "[agent]\nenvironment = production\n", &[]);
    assert_eq!(run.code, 2, "{}", run.output);
    for words in [
        "Local environment: 'production' doesn't match server specified node environment 'dev', switching agent to 'dev'.",
        "role::web port=6060 environment=dev tier=enc",
    ] {
        assert!(run.says(words), "{words}\n{}", run.output);
    }
    // The ENC exits 1 for a node it does not know: the run fails.
    let run = agent(f, "unknown.test", "", &[]);
    assert_eq!(run.code, 1, "{}", run.output);
    assert!(
        run.says(
            "Failed to find unknown.test via exec: the external node classifier exited with 1"
        ),
        "{}",
        run.output
    );
}

/// A request as an operator (`client-ok`, on the allowlist).
fn call(f: &Fixture, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let me = f.pki.node("client-ok");
    let client = Client::new(&f.pki, Some(&me));
    let r =
        f.rt.block_on(client.send(
            f.addr,
            method,
            path,
            body.map(|b| b.to_string().into_bytes()),
        ))
        .expect("request");
    let doc = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
    (r.status, doc)
}

fn groups_on_disk(f: &Fixture) -> Value {
    serde_json::from_str(&std::fs::read_to_string(f.dir.join("groups.json")).expect("groups file"))
        .expect("JSON")
}

#[test]
fn the_classifier_api_manages_groups_and_refuses_bad_ones() {
    let f = fixture();
    let (status, list) = call(f, "GET", "/classifier-api/v1/groups", None);
    assert_eq!(status, 200, "{list}");
    assert!(list.as_array().is_some_and(|l| l.len() >= 9), "{list}");

    // Create with an id of the client's, then classify with facts.
    let group = json!({"name": "API web", "parent": "web",
        "rule": ["and", ["=", ["fact", "os", "family"], "Debian"], ["~", "name", "^api-"]],
        "classes": {"role::web": {"port": 8443}}, "variables": {"zone": "b"}});
    let (status, doc) = call(f, "PUT", "/classifier-api/v1/groups/api-web", Some(group));
    assert_eq!(status, 201, "{doc}");
    assert_eq!(doc["id"], "api-web");
    assert!(
        groups_on_disk(f)
            .as_array()
            .is_some_and(|l| l.iter().any(|g| g["id"] == "api-web")),
        "written to the groups file"
    );
    // api-1.test is not in "Web servers" (its parent), so not in this one.
    let (status, doc) = call(
        f,
        "POST",
        "/classifier-api/v1/classified/nodes/api-1.test",
        Some(json!({"fact": {"os": {"family": "Debian"}}})),
    );
    assert_eq!(status, 200, "{doc}");
    assert_eq!(doc["classes"], json!({}), "{doc}");
    // Widen the parent through a delta update; now the child counts.
    let (status, doc) = call(
        f,
        "POST",
        "/classifier-api/v1/groups/web",
        Some(json!({"rule": ["or", ["=", "name", "first.test"], ["~", "name", "^api-"]]})),
    );
    assert_eq!(status, 200, "{doc}");
    assert_eq!(doc["classes"]["role::web"]["port"], 8080, "kept: {doc}");
    let (status, doc) = call(
        f,
        "POST",
        "/classifier-api/v1/classified/nodes/api-1.test",
        Some(json!({"fact": {"os": {"family": "Debian"}}, "trusted": {}})),
    );
    assert_eq!(status, 200, "{doc}");
    assert_eq!(doc["environment"], "production");
    assert_eq!(doc["classes"], json!({"role::web": {"port": 8443}}));
    assert_eq!(doc["parameters"], json!({"tier": "gold", "zone": "b"}));
    assert_eq!(
        doc["groups"],
        json!(["00000000-0000-4000-8000-000000000000", "web", "api-web"])
    );

    // Bad input: 400 naming the field, nothing stored.
    let before = groups_on_disk(f);
    for (method, path, body, field) in [
        (
            "PUT",
            "/classifier-api/v1/groups/bad",
            json!({"name": "Bad", "rule": ["=", "name"]}),
            "rule",
        ),
        (
            "PUT",
            "/classifier-api/v1/groups/bad",
            json!({"name": "Bad", "rule": ["or", ["=", "name", "a"], ["like", "name", "b"]]}),
            "rule[2]",
        ),
        (
            "PUT",
            "/classifier-api/v1/groups/bad",
            json!({"name": "Bad", "environment": "../etc"}),
            "environment",
        ),
        (
            "PUT",
            "/classifier-api/v1/groups/bad",
            json!({"name": "Bad", "environment": "a..b"}),
            "environment",
        ),
        (
            "PUT",
            "/classifier-api/v1/groups/bad",
            json!({"name": "Bad", "parent": "nope"}),
            "parent",
        ),
        (
            "POST",
            "/classifier-api/v1/groups/web",
            json!({"parent": "api-web"}),
            "parent",
        ),
        (
            "PUT",
            "/classifier-api/v1/groups/bad",
            json!({"name": "Bad", "classes": {"role::web": {"Port": 1}}}),
            "classes.role::web.Port",
        ),
        (
            "POST",
            "/classifier-api/v1/groups",
            json!({"name": "Bad", "variables": []}),
            "variables",
        ),
        (
            "POST",
            "/classifier-api/v1/classified/nodes/x.test",
            json!({"fact": []}),
            "fact",
        ),
    ] {
        let (status, doc) = call(f, method, path, Some(body.clone()));
        assert_eq!(status, 400, "{method} {path} {body}: {doc}");
        assert_eq!(doc["details"]["field"], field, "{body}: {doc}");
        assert!(
            doc["msg"].as_str().is_some_and(|m| m.starts_with(field)),
            "{doc}"
        );
    }
    assert_eq!(groups_on_disk(f), before, "nothing stored");
    let (status, _) = call(f, "GET", "/classifier-api/v1/groups/bad", None);
    assert_eq!(status, 404);

    // POST makes an id; a group with children is not deleted.
    let (status, doc) = call(
        f,
        "POST",
        "/classifier-api/v1/groups",
        Some(json!({"name": "API leaf", "parent": "api-web", "rule": ["=", "name", "api-2.test"]})),
    );
    assert_eq!(status, 303, "{doc}");
    let id = doc["id"].as_str().expect("an id").to_string();
    assert_eq!(id.len(), 36, "a UUID: {id}");
    let (status, doc) = call(f, "DELETE", "/classifier-api/v1/groups/api-web", None);
    assert_eq!(status, 422, "{doc}");
    assert_eq!(doc["kind"], "children-present");
    let (status, _) = call(
        f,
        "DELETE",
        &format!("/classifier-api/v1/groups/{id}"),
        None,
    );
    assert_eq!(status, 204);
    let (status, _) = call(f, "DELETE", "/classifier-api/v1/groups/api-web", None);
    assert_eq!(status, 204);
    let (status, _) = call(
        f,
        "POST",
        "/classifier-api/v1/groups/web",
        Some(json!({"rule": ["or", ["=", "name", "first.test"]]})),
    );
    assert_eq!(status, 200);

    // A conflict answers 500 with the claims.
    let (status, doc) = call(
        f,
        "POST",
        "/classifier-api/v1/classified/nodes/conflict.test",
        Some(json!({})),
    );
    assert_eq!(status, 500, "{doc}");
    assert_eq!(doc["kind"], "ferry/classification-conflict");
    let claims = &doc["details"]["classes"]["role::web"]["port"];
    assert_eq!(claims.as_array().map(Vec::len), Some(2), "{doc}");
}

#[test]
fn a_node_certificate_cannot_reach_the_classifier_and_a_token_needs_its_action() {
    let f = fixture();
    let me = f.pki.node("first.test");
    let client = Client::new(&f.pki, Some(&me));
    for (method, path) in [
        ("GET", "/classifier-api/v1/groups"),
        ("POST", "/classifier-api/v1/classified/nodes/first.test"),
        ("DELETE", "/classifier-api/v1/groups/web"),
    ] {
        let r =
            f.rt.block_on(client.send(f.addr, method, path, Some(b"{}".to_vec())))
                .expect("request");
        assert_eq!(r.status, 403, "{method} {path}: {}", r.text());
    }
    // A token with classifier:read reads; editing needs classifier:edit.
    let reader = Client::new(&f.pki, None).with_bearer(READER_TOKEN);
    let send = |method: &str, path: &str, body: &str| {
        f.rt.block_on(reader.send(f.addr, method, path, Some(body.as_bytes().to_vec())))
            .expect("request")
    };
    assert_eq!(send("GET", "/classifier-api/v1/groups/web", "").status, 200);
    let r = send(
        "POST",
        "/classifier-api/v1/classified/nodes/first.test",
        "{}",
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let r = send(
        "PUT",
        "/classifier-api/v1/groups/web",
        r#"{"name": "Web servers"}"#,
    );
    assert_eq!(r.status, 403, "{}", r.text());
    let r = send("DELETE", "/classifier-api/v1/groups/port-a", "");
    assert_eq!(r.status, 403, "{}", r.text());

    // Its own node object, classified.
    let r =
        f.rt.block_on(client.send(f.addr, "GET", "/puppet/v3/node/first.test", None))
            .expect("request");
    assert_eq!(r.status, 200, "{}", r.text());
    let node = r.json();
    assert_eq!(node["environment"], "production");
    assert_eq!(node["classes"]["role::web"]["port"], 8080);
    assert_eq!(node["parameters"]["tier"], "gold");
}

#[test]
fn node_terminus_keys_are_checked_and_a_bad_groups_file_stops_the_server() {
    use ferry::server::ServerConfig;
    use ferry::server::config::NodeTerminusKind;
    let f = fixture();
    let dir = tempfile::tempdir().expect("dir");
    let load = |extra: &str| {
        let path = dir.path().join("server.yaml");
        std::fs::write(
            &path,
            format!(
                "{}cache-dir: {}\n{extra}",
                f.pki.config_lines(),
                dir.path().display()
            ),
        )
        .expect("write");
        ServerConfig::load(&path)
    };
    let c = load("").expect("defaults");
    assert_eq!(c.node_terminus, NodeTerminusKind::Plain);
    assert_eq!(
        c.classifier_groups,
        dir.path().join("classifier-groups.json")
    );
    let c = load("classifier-groups: groups.json\n").expect("groups");
    assert_eq!(c.node_terminus, NodeTerminusKind::Classifier);
    assert_eq!(c.classifier_groups, dir.path().join("groups.json"));
    let c = load("external-nodes: enc.sh\n").expect("enc");
    assert_eq!(c.node_terminus, NodeTerminusKind::Exec);
    let c = load("routes:\n  node: {terminus: plain}\nclassifier-groups: g.json\n").expect("plain");
    assert_eq!(c.node_terminus, NodeTerminusKind::Plain);
    for (extra, words) in [
        (
            "routes:\n  node: {terminus: ldap}\n",
            "routes: node: terminus 'ldap'",
        ),
        (
            "routes:\n  node: {terminus: exec}\n",
            "routes: node: terminus exec needs external-nodes",
        ),
        (
            "routes:\n  node: {terminus: plain, colour: red}\n",
            "colour",
        ),
    ] {
        let e = load(extra).expect_err(extra).to_string();
        assert!(e.contains(words), "{extra}: {e}");
    }
    // A groups file with a bad rule stops the server at start, naming it.
    std::fs::write(
        dir.path().join("groups.json"),
        r#"[{"id": "a", "name": "Bad", "rule": ["and", ["=", "name"]]}]"#,
    )
    .expect("write");
    let config = load("classifier-groups: groups.json\n").expect("config");
    let e = match f.rt.block_on(AppState::new(config)) {
        Ok(_) => panic!("a bad groups file was accepted"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains("classifier-groups:") && e.contains("group 'Bad': rule[1]:"),
        "{e}"
    );
}

#[test]
fn pinned_nodes_get_their_groups_config_data_before_the_environments() {
    if !have_puppet() {
        return;
    }
    let f = fixture();
    let group = json!({
        "name": "Pinned data", "parent": "00000000-0000-4000-8000-000000000000",
        "classes": {"role::data": {}},
        "config_data": {"role::data": {"motd": "from the classifier"}}
    });
    let (status, _) = call(
        f,
        "PUT",
        "/classifier-api/v1/groups/pinned-data",
        Some(group),
    );
    assert_eq!(status, 201);
    // No rule yet: the node is not in the group.
    let before = agent(f, "pinned.test", "", &[]);
    assert!(!before.says("role::data"), "{}", before.output);

    let pin = json!({"nodes": ["pinned.test", "other.test"]});
    let (status, doc) = call(
        f,
        "POST",
        "/classifier-api/v1/groups/pinned-data/pin",
        Some(pin),
    );
    assert_eq!(status, 204, "{doc}");
    let (_, shown) = call(f, "GET", "/classifier-api/v1/groups/pinned-data", None);
    assert_eq!(
        shown["rule"],
        json!([
            "or",
            ["=", "name", "pinned.test"],
            ["=", "name", "other.test"]
        ])
    );
    let on_disk = groups_on_disk(f);
    assert!(
        on_disk.as_array().is_some_and(|l| l
            .iter()
            .any(|g| g["id"] == "pinned-data" && g["rule"] == shown["rule"])),
        "written: {on_disk}"
    );
    let (_, classified) = call(
        f,
        "POST",
        "/classifier-api/v1/classified/nodes/pinned.test",
        Some(json!({})),
    );
    assert_eq!(
        classified["config_data"],
        json!({"role::data": {"motd": "from the classifier"}})
    );
    let pinned = agent(f, "pinned.test", "", &[]);
    assert_eq!(pinned.code, 2, "{}", pinned.output);
    assert!(
        pinned.says("role::data motd=from the classifier source=the environment"),
        "{}",
        pinned.output
    );

    // Bad pin requests name the field and change nothing.
    for (body, field) in [
        (json!({}), "nodes"),
        (json!({"nodes": []}), "nodes"),
        (json!({"nodes": ["Bad Name"]}), "nodes[0]"),
        (json!({"nodes": ["a.test"], "extra": 1}), "extra"),
    ] {
        let (status, doc) = call(
            f,
            "POST",
            "/classifier-api/v1/groups/pinned-data/pin",
            Some(body.clone()),
        );
        assert_eq!(status, 400, "{body}: {doc}");
        assert_eq!(doc["details"]["field"], field, "{body}: {doc}");
    }
    let (status, _) = call(
        f,
        "POST",
        "/classifier-api/v1/groups/no-such-group/pin",
        Some(json!({"nodes": ["a.test"]})),
    );
    assert_eq!(status, 404);

    let unpin = json!({"nodes": ["pinned.test"]});
    let (status, doc) = call(
        f,
        "POST",
        "/classifier-api/v1/groups/pinned-data/unpin",
        Some(unpin),
    );
    assert_eq!(status, 204, "{doc}");
    let (_, shown) = call(f, "GET", "/classifier-api/v1/groups/pinned-data", None);
    assert_eq!(shown["rule"], json!(["or", ["=", "name", "other.test"]]));
    let after = agent(f, "pinned.test", "", &[]);
    assert!(!after.says("role::data"), "{}", after.output);
}

#[test]
fn pinning_takes_the_nodes_as_a_query_string_too() {
    let f = fixture();
    let group =
        json!({"name": "Pinned by query", "parent": "00000000-0000-4000-8000-000000000000"});
    let (status, _) = call(f, "PUT", "/classifier-api/v1/groups/by-query", Some(group));
    assert_eq!(status, 201);
    let rule =
        |f: &Fixture| call(f, "GET", "/classifier-api/v1/groups/by-query", None).1["rule"].clone();
    let pin = |path: &str, body: Option<Value>| call(f, "POST", path, body);
    // PE's query form: comma-separated (encoded), no body.
    let (status, doc) = pin(
        "/classifier-api/v1/groups/by-query/pin?nodes=a.test%2Cb.test",
        None,
    );
    assert_eq!(status, 204, "{doc}");
    assert_eq!(
        rule(f),
        json!(["or", ["=", "name", "a.test"], ["=", "name", "b.test"]])
    );
    // One node as a string in the body; the query and the body together.
    let (status, doc) = pin(
        "/classifier-api/v1/groups/by-query/pin?nodes=c.test",
        Some(json!({"nodes": "d.test"})),
    );
    assert_eq!(status, 204, "{doc}");
    let (status, doc) = pin(
        "/classifier-api/v1/groups/by-query/unpin?nodes=a.test,c.test",
        None,
    );
    assert_eq!(status, 204, "{doc}");
    assert_eq!(
        rule(f),
        json!(["or", ["=", "name", "b.test"], ["=", "name", "d.test"]])
    );
    // Bad ones name the field and change nothing.
    for (path, field) in [
        ("/classifier-api/v1/groups/by-query/pin?nodes=", "nodes[0]"),
        (
            "/classifier-api/v1/groups/by-query/pin?nodes=e.test,Bad",
            "nodes[1]",
        ),
        ("/classifier-api/v1/groups/by-query/pin?node=e.test", "node"),
        ("/classifier-api/v1/groups/by-query/pin", "nodes"),
    ] {
        let (status, doc) = pin(path, None);
        assert_eq!(status, 400, "{path}: {doc}");
        assert_eq!(doc["details"]["field"], field, "{path}: {doc}");
    }
    assert_eq!(
        rule(f),
        json!(["or", ["=", "name", "b.test"], ["=", "name", "d.test"]])
    );
}

#[test]
fn unpin_from_all_unpins_a_node_everywhere_and_says_from_where() {
    let f = fixture();
    for (id, name) in [
        ("everywhere-a", "Everywhere A"),
        ("everywhere-b", "Everywhere B"),
    ] {
        let group = json!({
            "name": name, "parent": "00000000-0000-4000-8000-000000000000",
            "environment": "dev",
            "rule": ["or", ["=", ["fact", "unpin_test_marker"], "db"], ["=", "name", "u1.test"], ["=", "name", "u2.test"]]
        });
        let (status, doc) = call(
            f,
            "PUT",
            &format!("/classifier-api/v1/groups/{id}"),
            Some(group),
        );
        assert_eq!(status, 201, "{doc}");
    }
    let (status, doc) = call(
        f,
        "POST",
        "/classifier-api/v1/commands/unpin-from-all",
        Some(json!({"nodes": ["u1.test", "nowhere.test"]})),
    );
    assert_eq!(status, 200, "{doc}");
    let from = |id: &str, name: &str| json!({"id": id, "name": name, "environment": "dev"});
    assert_eq!(
        doc,
        json!({"nodes": [{"name": "u1.test", "groups": [
            from("everywhere-a", "Everywhere A"),
            from("everywhere-b", "Everywhere B"),
        ]}]}),
        "only pinned nodes are listed"
    );
    for id in ["everywhere-a", "everywhere-b"] {
        let (_, shown) = call(f, "GET", &format!("/classifier-api/v1/groups/{id}"), None);
        assert_eq!(
            shown["rule"],
            json!([
                "or",
                ["=", ["fact", "unpin_test_marker"], "db"],
                ["=", "name", "u2.test"]
            ]),
            "the rule's own comparison stays"
        );
    }
    // One node as a string; a bad name is a 400 naming it.
    let (status, doc) = call(
        f,
        "POST",
        "/classifier-api/v1/commands/unpin-from-all",
        Some(json!({"nodes": "u2.test"})),
    );
    assert_eq!(status, 200, "{doc}");
    assert_eq!(doc["nodes"][0]["groups"].as_array().map(Vec::len), Some(2));
    let (status, doc) = call(
        f,
        "POST",
        "/classifier-api/v1/commands/unpin-from-all",
        Some(json!({"nodes": ["ok.test", "Not OK"]})),
    );
    assert_eq!(status, 400, "{doc}");
    assert_eq!(doc["details"]["field"], "nodes[1]");
    for id in ["everywhere-a", "everywhere-b"] {
        let (status, _) = call(
            f,
            "DELETE",
            &format!("/classifier-api/v1/groups/{id}"),
            None,
        );
        assert_eq!(status, 204);
    }
}
