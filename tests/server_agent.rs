//! A stock Puppet 7 agent (Debian's `puppet` package) uses `ferry serve`
//! as its Puppet server: `puppet agent -t` with its own confdir, vardir
//! and ssldir (certificates made here: `certs/ca.pem`,
//! `certs/<certname>.pem`, `private_keys/<certname>.pem`, `crl.pem`, no
//! CSR round trip), never touching /etc/puppet. One in-process server
//! for the whole binary, on a thread of its own, serving
//! `tests/environments`. Checked: a first run applies a catalog from an
//! environment and its report is stored; pluginsync brings a module's
//! custom fact, which the catalog request then carries; an environment
//! the server does not have is switched to the server-specified one,
//! with Puppet's wording; an existing one is compiled with its
//! environment.conf; a node asking for another node's catalog is refused;
//! bad input is a 400 naming the field, with nothing stored. Without the
//! `puppet` command the tests are skipped with a message.

#[path = "common/agent.rs"]
mod agent;
#[path = "common/tls.rs"]
mod tls;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use agent::{Agent, have_puppet};
use serde_json::Value;
use tls::{Background, Client, TestServer};

fn environments() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/environments")
}

/// The one server, started on first use; it lives as long as the test
/// process.
fn fixture() -> &'static Background {
    static FIXTURE: OnceLock<Background> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        TestServer::in_background(|_| {
            format!(
                "allowlist: [client-ok]\nenvironmentpath: {}\nloglevel: warn\n",
                environments().display()
            )
        })
    })
}

/// An agent with a certificate from the fixture's PKI.
fn new_agent(certname: &str) -> Agent {
    Agent::with_cert(certname, &fixture().pki)
}

/// `puppet agent -t` against the fixture.
fn run_agent(agent: &Agent, conf: &str, args: &[&str]) -> agent::Run {
    agent.run(fixture().addr.port(), Some(conf), args)
}

fn reports(certname: &str) -> Vec<ferry::store::ReportRecord> {
    let f = fixture();
    f.rt.block_on(f.state.store.reports(certname))
        .expect("reports")
}

fn stored_facts(certname: &str) -> Option<Value> {
    let f = fixture();
    f.rt.block_on(f.state.store.facts(certname))
        .expect("facts")
        .map(|r| r.facts)
}

#[test]
fn first_run_applies_the_catalog_pluginsyncs_and_stores_the_report() {
    if !have_puppet() {
        return;
    }
    let agent = new_agent("agent1.test");
    let run = run_agent(&agent, "", &[]);
    assert_eq!(run.code, 2, "changes applied:\n{}", run.output);
    let written =
        std::fs::read_to_string(agent.path("out/production.txt")).expect("the file resource");
    // The custom fact came by pluginsync and was in the catalog request.
    assert_eq!(
        written,
        "environment=production plugin_fact=synced certname=agent1.test\n"
    );
    assert!(
        agent.path("var/lib/facter/ferry_plugin_fact.rb").is_file(),
        "plugins synced into the agent's libdir"
    );
    assert!(
        agent.path("var/facts.d/ferry_external.txt").is_file(),
        "pluginfacts synced"
    );
    assert!(
        run.output.contains("hello from production"),
        "{}",
        run.output
    );
    let facts = stored_facts("agent1.test").expect("facts kept");
    assert_eq!(facts["values"]["ferry_plugin_fact"], "synced");
    assert_eq!(facts["values"]["ferry_external_fact"], "synced");
    let stored = reports("agent1.test");
    assert_eq!(stored.len(), 1, "one report");
    let r = &stored[0];
    assert_eq!(
        (r.status.as_str(), r.environment.as_str()),
        ("changed", "production")
    );
    assert_eq!(r.report["host"], "agent1.test");

    // A second run leaves the file alone (a notify always changes) and
    // adds a report.
    let again = run_agent(&agent, "", &[]);
    assert_eq!(again.code, 2, "{}", again.output);
    assert!(
        !again.output.contains("production.txt]"),
        "{}",
        again.output
    );
    assert_eq!(reports("agent1.test").len(), 2);
}

#[test]
fn an_environment_the_server_lacks_is_switched_to_the_server_specified_one() {
    if !have_puppet() {
        return;
    }
    // Set in puppet.conf: the agent asks for its node first.
    let agent = new_agent("agent2.test");
    let run = run_agent(&agent, "[agent]\nenvironment = nosuch\n", &[]);
    assert_eq!(run.code, 2, "{}", run.output);
    assert!(
        run.output.contains(
            "Local environment: 'nosuch' doesn't match server specified node environment 'production', switching agent to 'production'."
        ),
        "{}",
        run.output
    );
    assert!(agent.path("out/production.txt").is_file());

    // Given on the command line: no node request; the catalog says it.
    let agent = new_agent("agent3.test");
    let run = run_agent(&agent, "", &["--environment", "nosuch"]);
    assert_eq!(run.code, 2, "{}", run.output);
    for words in [
        "Environment 'nosuch' not found on server, skipping initial pluginsync.",
        "Local environment: 'nosuch' doesn't match server specified environment 'production', restarting agent run with environment 'production'",
    ] {
        assert!(run.output.contains(words), "{words}\n{}", run.output);
    }
    let stored = reports("agent3.test");
    assert_eq!(
        stored.first().map(|r| r.environment.as_str()),
        Some("production")
    );
}

#[test]
fn an_existing_environment_compiles_with_its_environment_conf() {
    if !have_puppet() {
        return;
    }
    let agent = new_agent("agent4.test");
    let run = run_agent(&agent, "", &["--environment", "dev"]);
    assert_eq!(run.code, 2, "{}", run.output);
    assert_eq!(
        std::fs::read_to_string(agent.path("out/dev.txt")).expect("dev's file"),
        "environment=dev\n"
    );
    assert!(run.output.contains("hello from dev"), "{}", run.output);
    assert!(
        !run.output.contains("hello from production"),
        "{}",
        run.output
    );
    let stored = reports("agent4.test");
    let r = stored.first().expect("report");
    assert_eq!(r.environment, "dev");
    // config_version's output is the catalog's version.
    assert_eq!(r.report["configuration_version"], "dev-v1", "{}", r.report);
}

#[test]
fn a_node_may_not_have_another_nodes_catalog_and_bad_input_is_refused() {
    let f = fixture();
    let me = f.pki.node("agent5.test");
    let client = Client::new(&f.pki, Some(&me));
    let post = |path: &str, body: &str| {
        f.rt.block_on(client.send(f.addr, "POST", path, Some(body.as_bytes().to_vec())))
            .expect("POST")
    };
    let facts = "facts_format=application%2Fjson&facts=%257B%2522name%2522%253A%2522agent5.test%2522%252C%2522values%2522%253A%257B%257D%257D";
    let other = post("/puppet/v3/catalog/agent1.test", facts);
    assert_eq!(other.status, 403, "{}", other.text());
    assert_eq!(other.json()["kind"], "ferry/forbidden");
    let other =
        f.rt.block_on(client.send(f.addr, "GET", "/puppet/v3/node/agent1.test", None))
            .expect("GET");
    assert_eq!(other.status, 403, "{}", other.text());

    // Its own catalog, facts encoded twice as the agent sends them.
    let own = post(
        "/puppet/v3/catalog/agent5.test?environment=production",
        facts,
    );
    assert_eq!(own.status, 200, "{}", own.text());
    assert_eq!(own.json()["name"], "agent5.test");
    assert_eq!(own.json()["environment"], "production");

    // Bad input: 400 naming the field, with Puppet's `message` too.
    for (path, body, field) in [
        (
            "/puppet/v3/catalog/agent5.test",
            "facts_format=application%2Fjson&facts=not-json",
            "facts",
        ),
        (
            "/puppet/v3/catalog/agent5.test",
            "facts_format=application%2Fjson&facts=%5B%5D",
            "facts.values",
        ),
        (
            "/puppet/v3/catalog/agent5.test",
            "facts_format=yaml&facts=%7B%7D",
            "facts_format",
        ),
        (
            "/puppet/v3/catalog/agent5.test?environment=..%2Fdev",
            facts,
            "environment",
        ),
        (
            "/puppet/v3/catalog/agent5.test?environment=Prod",
            facts,
            "environment",
        ),
    ] {
        let r = post(path, body);
        assert_eq!(r.status, 400, "{path} {body}: {}", r.text());
        let doc = r.json();
        assert_eq!(doc["details"]["field"], field, "{doc}");
        assert!(
            doc["message"]
                .as_str()
                .is_some_and(|m| m.starts_with(field)),
            "{doc}"
        );
    }
    let report =
        f.rt.block_on(client.send(
            f.addr,
            "PUT",
            "/puppet/v3/report/agent5.test",
            Some(br#"{"host": "agent1.test", "transaction_uuid": "x"}"#.to_vec()),
        ))
        .expect("PUT");
    assert_eq!(report.status, 400, "{}", report.text());
    assert_eq!(report.json()["details"]["field"], "host");
    assert!(reports("agent5.test").is_empty(), "nothing stored");
    assert!(
        reports("agent1.test")
            .iter()
            .all(|r| r.transaction_uuid != "x")
    );
}
