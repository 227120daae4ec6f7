//! The server's indirector against the real thing: Puppet 7 itself (the
//! `puppet` Ruby library and `puppet agent -t`) and a real PuppetDB 7
//! (one per test binary, `common/puppetdb.rs`, started only by the test
//! that needs it; this binary's `main` stops it).
//!
//! - `yaml_facts_files_are_puppets_own`: a facts file Puppet's yaml
//!   terminus wrote is read by ferry's, and one ferry wrote is read back
//!   by Puppet's, values, timestamp and expiration alike.
//! - `agent_facts_and_report_go_to_yaml`: a real agent run against
//!   `ferry serve` with `facts: {terminus: yaml}` and `report: {terminus:
//!   yaml}` leaves `<cache-dir>/yaml/facts/<certname>.yaml` and
//!   `<cache-dir>/reports/<certname>/<time>.yaml`, which Puppet loads;
//!   with `catalog: {cache: store}` its catalog is kept in the store.
//! - `agent_facts_and_report_reach_puppetdb`: with facts (cached in yaml)
//!   and reports routed to PuppetDB over HTTPS with a client certificate,
//!   PuppetDB's `/pdb/query/v4/nodes/<certname>/facts` and `/reports`
//!   return what the agent sent, and `/pdb/query/v4/facts/trusted` the
//!   node's trusted facts, which the terminus sends with them as Puppet's
//!   does.
//!
//! - `catalog_get_reads_the_cache`: with `catalog: {terminus: compiler,
//!   cache: store, ttl: 600}`, `GET /puppet/v3/catalog/:certname` gives
//!   the cached catalog while it is fresh (the environment's
//!   `config_version` script counts compiles, so the catalog's `version`
//!   says which compile made it), recompiles once it has expired or when
//!   another environment is asked for, uses the node's stored facts or
//!   those in its query; `POST` always compiles and refills the cache; a
//!   node asking for another node's catalog is refused.
//!
//! Without the `puppet` command the Puppet tests pass with a message.

#[path = "common/agent.rs"]
mod agent;
#[path = "common/pg.rs"]
mod pg;
#[path = "common/puppetdb.rs"]
mod puppetdb;
#[path = "common/tls.rs"]
mod tls;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use agent::{Agent, have_puppet};
use ferry::server::indirector::Facts;
use ferry::server::indirector::yaml::{facts_document, read_facts, write_atomic};
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::{Value, json};
use tls::{Background, Client, TestServer};

type Outcome = Result<(), Failed>;

fn environments() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/environments")
}

/// A `ferry serve` of its own, serving `tests/environments` with `extra`
/// config lines.
fn serve(extra: &str) -> Background {
    let extra = format!(
        "environmentpath: {}\nloglevel: warn\n{extra}",
        environments().display()
    );
    TestServer::in_background(move |_| extra)
}

/// Writes an environment `name` under `path` whose `config_version`
/// counts its compiles (`<name>-<n>`) and whose catalog holds one notify
/// naming the node and its `color` fact.
fn counting_environment(path: &Path, name: &str) {
    let dir = path.join(name);
    let write = |p: &str, text: String| {
        let file = dir.join(p);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(&file, text).expect("write");
    };
    write("environment.conf", "config_version = bin/version\n".into());
    write(
        "bin/version",
        format!(
            "#!/bin/sh\nn=$(($(cat count 2>/dev/null || echo 0) + 1))\necho $n > count\necho {name}-$n\n"
        ),
    );
    write(
        "manifests/site.pp",
        "notify { \"hello ${trusted['certname']} ${facts['color']}\": }\n".into(),
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        dir.join("bin/version"),
        std::fs::Permissions::from_mode(0o755),
    )
    .expect("chmod");
}

/// A catalog response's version and its notify's title.
fn version_and_notify(r: &tls::Resp) -> Result<(String, String), Failed> {
    check(r.status == 200, || format!("{} {}", r.status, r.text()))?;
    let doc = r.json();
    let notify = doc["resources"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["type"] == "Notify"))
        .and_then(|r| r["title"].as_str())
        .unwrap_or_default()
        .to_string();
    Ok((
        doc["version"].as_str().unwrap_or_default().to_string(),
        notify,
    ))
}

fn catalog_get_reads_the_cache() -> Outcome {
    let s = TestServer::in_background(|dir| {
        let envs = dir.join("environments");
        counting_environment(&envs, "production");
        counting_environment(&envs, "other");
        format!(
            "environmentpath: {}\nenvironment-timeout: 0\nloglevel: warn\nroutes:\n  catalog: {{terminus: compiler, cache: store, ttl: 600}}\n",
            envs.display()
        )
    });
    let node = tls::Client::new(&s.pki, Some(&s.pki.node("c1.test")));
    let get = |path: &str| s.rt.block_on(node.get(s.addr, path));
    let send = |method: &str, path: &str, body: String| {
        s.rt.block_on(node.send(s.addr, method, path, Some(body.into_bytes())))
            .map_err(|e| e.to_string())
    };
    let url = "/puppet/v3/catalog/c1.test?environment=production";
    // The node's stored facts are used when the query has none.
    let put = send(
        "PUT",
        "/puppet/v3/facts/c1.test",
        json!({"name": "c1.test", "values": {"color": "blue"}}).to_string(),
    )?;
    check(put.status == 200, || format!("PUT facts: {}", put.text()))?;
    let want = |v: &str, n: &str| (v.to_string(), n.to_string());
    let first = version_and_notify(&get(url))?;
    check(first == want("production-1", "hello c1.test blue"), || {
        format!("a miss compiles: {first:?}")
    })?;
    let second = version_and_notify(&get(url))?;
    check(second == first, || {
        format!("a hit is the cached one: {second:?}")
    })?;
    // Facts in the query are saved; a fresh cached catalog is still used.
    let facts = json!({"name": "c1.test", "values": {"color": "red"}}).to_string();
    let with_facts = format!(
        "{url}&facts_format=application%2Fjson&facts={}",
        percent_encoding::utf8_percent_encode(&facts, percent_encoding::NON_ALPHANUMERIC)
    );
    let third = version_and_notify(&get(&with_facts))?;
    check(third == first, || {
        format!("still the cached one: {third:?}")
    })?;
    let stored =
        s.rt.block_on(s.state.store.facts("c1.test"))
            .map_err(|e| e.to_string())?
            .ok_or("no stored facts")?;
    check(stored.facts["values"]["color"] == "red", || {
        format!("the query's facts were not saved: {}", stored.facts)
    })?;
    // Expired: recompiled (with the saved facts) and cached again.
    let cached =
        s.rt.block_on(s.state.store.catalog("c1.test"))
            .map_err(|e| e.to_string())?
            .ok_or("nothing cached")?;
    s.rt.block_on(s.state.store.save_catalog(
        "c1.test",
        &cached.environment,
        Some("2000-01-01T00:00:00.000000000+00:00"),
        &cached.catalog,
    ))
    .map_err(|e| e.to_string())?;
    let fourth = version_and_notify(&get(url))?;
    check(fourth == want("production-2", "hello c1.test red"), || {
        format!("an expired entry is recompiled: {fourth:?}")
    })?;
    let refilled =
        s.rt.block_on(s.state.store.catalog("c1.test"))
            .map_err(|e| e.to_string())?
            .ok_or("nothing cached")?;
    check(
        refilled
            .expiration
            .as_deref()
            .is_some_and(|e| e > "2026-01-01"),
        || format!("cache not refilled: {:?}", refilled.expiration),
    )?;
    check(version_and_notify(&get(url))? == fourth, || {
        "the refilled entry is not used".into()
    })?;
    // Another environment (the plain node terminus leaves it to the
    // node) is a miss.
    let other = version_and_notify(&get("/puppet/v3/catalog/c1.test?environment=other"))?;
    check(other.0 == "other-1", || {
        format!("another environment: {other:?}")
    })?;
    // POST always compiles, and refills the cache.
    let form = format!(
        "facts_format=application%2Fjson&environment=production&facts={}",
        percent_encoding::utf8_percent_encode(&facts, percent_encoding::NON_ALPHANUMERIC)
    );
    let posted = version_and_notify(&send("POST", "/puppet/v3/catalog/c1.test", form)?)?;
    check(posted.0 == "production-3", || format!("POST: {posted:?}"))?;
    let after = version_and_notify(&get(url))?;
    check(after == posted, || format!("after POST: {after:?}"))?;
    // Another node's catalog is refused, cached or not.
    let refused = get("/puppet/v3/catalog/c2.test?environment=production");
    check(refused.status == 403, || {
        format!(
            "another node's catalog: {} {}",
            refused.status,
            refused.text()
        )
    })
}

/// Runs Ruby with Puppet loaded and its directories under `dir`
/// (`clientyamldir` is `<dir>/yaml`, Puppet's yamldir layout); its
/// standard output.
fn puppet_ruby(dir: &Path, code: &str) -> Result<String, Failed> {
    let d = |p: &str| dir.join(p).display().to_string();
    let script = format!(
        "require 'puppet'\nrequire 'json'\nPuppet.initialize_settings(['--vardir', '{}', '--confdir', '{}', '--codedir', '{}', '--logdir', '{}', '--rundir', '{}', '--clientyamldir', '{}'])\n{code}",
        d("puppet/var"),
        d("puppet/conf"),
        d("puppet/code"),
        d("puppet/log"),
        d("puppet/run"),
        d("yaml"),
    );
    let out = Command::new("ruby")
        .arg("-e")
        .arg(script)
        .output()
        .map_err(|e| format!("ruby: {e}"))?;
    if !out.status.success() {
        return Err(format!("ruby failed: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Puppet's yaml facts terminus reading `name` under `dir`: its JSON.
fn puppet_reads_facts(dir: &Path, name: &str) -> Result<Value, Failed> {
    let out = puppet_ruby(
        dir,
        &format!(
            "Puppet::Node::Facts.indirection.terminus_class = :yaml\nf = Puppet::Node::Facts.indirection.find('{name}')\nputs JSON.generate({{'name' => f.name, 'values' => f.values, 'timestamp' => f.timestamp.utc.iso8601(9), 'expiration' => f.expiration && f.expiration.utc.iso8601(9)}})\n"
        ),
    )?;
    serde_json::from_str(out.trim()).map_err(|e| format!("{e}: {out}").into())
}

fn check(ok: bool, what: impl FnOnce() -> String) -> Outcome {
    if ok { Ok(()) } else { Err(what().into()) }
}

fn yaml_facts_files_are_puppets_own() -> Outcome {
    if !have_puppet() {
        return Ok(());
    }
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let values = json!({
        "a": 1, "f": 1.5, "t": true, "n": null, "yes": "yes", "no": "n", "num": "123",
        "oct": "0755", "multi": "one\ntwo", "colon": "a: b", "empty": "", "list": [1, "2", []],
        "os": {"family": "Debian", "release": {"major": "12"}}, "unicode": "héllo",
    });
    // Puppet writes; ferry reads. (Puppet makes only the last directory.)
    std::fs::create_dir_all(dir.path().join("yaml")).map_err(|e| e.to_string())?;
    puppet_ruby(
        dir.path(),
        &format!(
            "f = Puppet::Node::Facts.new('by.puppet', JSON.parse('{}'))\nf.expiration = Time.at(1900000000).utc\nPuppet::Node::Facts.indirection.terminus_class = :yaml\nPuppet::Node::Facts.indirection.save(f)\n",
            values
                .to_string()
                .replace('\\', "\\\\")
                .replace('\'', "\\'")
        ),
    )?;
    let path = dir.path().join("yaml/facts/by.puppet.yaml");
    let read = read_facts(&path)
        .map_err(|e| e.to_string())?
        .ok_or("ferry found no facts file Puppet wrote")?;
    check(read.name == "by.puppet", || format!("name {}", read.name))?;
    check(Value::Object(read.values.clone()) == values, || {
        format!("values {:?}", read.values)
    })?;
    check(
        read.expiration
            .as_deref()
            .is_some_and(|e| e.starts_with("2030-03-17T17:46:40")),
        || format!("expiration {:?}", read.expiration),
    )?;
    // ferry writes; Puppet reads.
    let facts = Facts {
        name: "by.ferry".into(),
        values: values.as_object().cloned().unwrap_or_default(),
        timestamp: "2026-01-02T03:04:05.123456789+00:00".into(),
        expiration: Some("2026-01-02T04:04:05.000000000+00:00".into()),
        environment: None,
    };
    write_atomic(
        &dir.path().join("yaml/facts/by.ferry.yaml"),
        &facts_document(&facts),
    )
    .map_err(|e| e.to_string())?;
    let back = puppet_reads_facts(dir.path(), "by.ferry")?;
    check(back["values"] == values, || format!("Puppet read {back}"))?;
    check(
        back["timestamp"] == "2026-01-02T03:04:05.123456789Z",
        || format!("Puppet read {back}"),
    )?;
    check(
        back["expiration"] == "2026-01-02T04:04:05.000000000Z",
        || format!("Puppet read {back}"),
    )
}

/// A real agent run for `certname` against `s`; fails unless it applied.
fn agent_run(s: &Background, certname: &str) -> Result<Agent, Failed> {
    let agent = Agent::with_cert(certname, &s.pki);
    let run = agent.run(s.addr.port(), Some(""), &[]);
    check(run.code == 2, || format!("agent run:\n{}", run.output))?;
    Ok(agent)
}

fn agent_facts_and_report_go_to_yaml() -> Outcome {
    if !have_puppet() {
        return Ok(());
    }
    let s = serve(
        "routes:\n  facts: {terminus: yaml}\n  report: {terminus: yaml}\n  catalog: {cache: store}\n",
    );
    agent_run(&s, "yaml1.test")?;
    let cache = s.dir.path();
    let facts = read_facts(&cache.join("yaml/facts/yaml1.test.yaml"))
        .map_err(|e| e.to_string())?
        .ok_or("no facts file")?;
    check(facts.values.contains_key("ferry_plugin_fact"), || {
        format!("facts {:?}", facts.values.keys().collect::<Vec<_>>())
    })?;
    let by_puppet = puppet_reads_facts(cache, "yaml1.test")?;
    check(by_puppet["name"] == "yaml1.test", || by_puppet.to_string())?;
    // Nothing went to the store.
    let stored =
        s.rt.block_on(s.state.store.facts("yaml1.test"))
            .map_err(|e| e.to_string())?;
    check(stored.is_none(), || "facts went to the store too".into())?;
    // The compiled catalog was kept in its cache, the store.
    let catalog =
        s.rt.block_on(s.state.store.catalog("yaml1.test"))
            .map_err(|e| e.to_string())?
            .ok_or("no catalog in the store")?;
    let doc: serde_json::Value =
        serde_json::from_str(&catalog.catalog).map_err(|e| e.to_string())?;
    check(
        doc["name"] == "yaml1.test" && catalog.expiration.is_some(),
        || format!("stored catalog: {:?}", catalog.expiration),
    )?;
    let reports: Vec<PathBuf> = std::fs::read_dir(cache.join("reports/yaml1.test"))
        .map_err(|e| format!("no report directory: {e}"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    check(reports.len() == 1, || format!("reports {reports:?}"))?;
    let name = reports[0]
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    check(
        name.len() == 17
            && name.ends_with(".yaml")
            && name[..12].bytes().all(|b| b.is_ascii_digit()),
        || format!("report file {name}"),
    )?;
    let out = puppet_ruby(
        cache,
        &format!(
            "r = Puppet::Util::Yaml.safe_load_file('{}', [Puppet::Transaction::Report, Symbol])\nputs [r.host, r.status, r.resource_statuses.size > 0].join(' ')\n",
            reports[0].display()
        ),
    )?;
    check(out.trim() == "yaml1.test changed true", || {
        format!("Puppet read the report as: {out}")
    })
}

/// Waits up to a minute for `rows` of a PuppetDB query to be non-empty.
fn rows_of(db: &puppetdb::PuppetDb, path: &str) -> Result<Vec<Value>, Failed> {
    let started = Instant::now();
    loop {
        if let Ok((200, body)) = db.http("GET", path, "")
            && let Ok(Value::Array(rows)) = serde_json::from_str::<Value>(&body)
            && !rows.is_empty()
        {
            return Ok(rows);
        }
        if started.elapsed() > Duration::from_secs(60) {
            return Err(format!("PuppetDB has nothing at {path}:\n{}", db.log()).into());
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn agent_facts_and_report_reach_puppetdb() -> Outcome {
    if !have_puppet() {
        return Ok(());
    }
    let db = puppetdb::shared();
    let s = serve(&format!(
        "routes:\n  facts: {{terminus: puppetdb, cache: yaml, ttl: 600}}\n  report: {{terminus: puppetdb}}\npuppetdb-url: {}\npuppetdb-cacert: {}\npuppetdb-cert: {}\npuppetdb-key: {}\n",
        db.https_url,
        db.cacert.display(),
        db.cert.display(),
        db.key.display()
    ));
    agent_run(&s, "pdb1.test")?;
    let facts = rows_of(&db, "/pdb/query/v4/nodes/pdb1.test/facts")?;
    let fact = |name: &str| {
        facts
            .iter()
            .find(|r| r["name"] == name)
            .map(|r| r["value"].clone())
    };
    check(fact("ferry_plugin_fact") == Some(json!("synced")), || {
        format!("facts in PuppetDB: {facts:?}")
    })?;
    check(
        facts.iter().all(|r| r["environment"] == "production"),
        || format!("facts in PuppetDB: {facts:?}"),
    )?;
    // The node's trusted facts went with them, as Puppet's terminus
    // sends them.
    let trusted = rows_of(
        &db,
        "/pdb/query/v4/facts/trusted?query=%5B%22%3D%22%2C%22certname%22%2C%22pdb1.test%22%5D",
    )?;
    check(
        trusted[0]["value"]
            == json!({"authenticated": "remote", "certname": "pdb1.test", "domain": "test",
                "extensions": {}, "external": {}, "hostname": "pdb1"}),
        || format!("trusted in PuppetDB: {trusted:?}"),
    )?;
    let reports = rows_of(
        &db,
        "/pdb/query/v4/reports?query=%5B%22%3D%22%2C%22certname%22%2C%22pdb1.test%22%5D",
    )?;
    let r = &reports[0];
    check(
        r["status"] == "changed" && r["environment"] == "production",
        || format!("report in PuppetDB: {r}"),
    )?;
    check(
        r["resource_events"]["data"]
            .as_array()
            .is_some_and(|e| !e.is_empty())
            || r["resource_events"]["href"].is_string(),
        || format!("report in PuppetDB: {r}"),
    )?;
    // The facts were cached in yaml as they were saved.
    let cached = read_facts(&s.dir.path().join("yaml/facts/pdb1.test.yaml"))
        .map_err(|e| e.to_string())?
        .ok_or("no yaml cache entry")?;
    check(cached.expiration.is_some(), || {
        "the cache entry has no expiration".into()
    })
}

/// A job's `scope.query` with the facts terminus `puppetdb` is PuppetDB's
/// to answer: the PQL goes to `/pdb/query/v4` unchanged, the inventory's
/// own facts are not laid over PuppetDB's, and a node PuppetDB selects
/// that the inventory does not have is skipped, which the job's
/// description says.
fn job_scope_query_goes_to_puppetdb() -> Outcome {
    if !have_puppet() {
        return Ok(());
    }
    let db = puppetdb::shared();
    let pdb = format!(
        "routes:\n  facts: {{terminus: puppetdb}}\npuppetdb-url: {}\npuppetdb-cacert: {}\npuppetdb-cert: {}\npuppetdb-key: {}\nenvironmentpath: {}\nloglevel: warn\n",
        db.https_url,
        db.cacert.display(),
        db.cert.display(),
        db.key.display(),
        environments().display()
    );
    // The inventory's targets cannot be reached: only the job's scope
    // counts. scope-db.test's inventory fact says web; PuppetDB's, db.
    let s = TestServer::in_background(move |dir| {
        let inventory = dir.join("inventory.yaml");
        std::fs::write(
            &inventory,
            "config:\n  ssh:\n    connect-timeout: 2\n    host-key-check: false\ntargets:\n  - name: scope-web.test\n    uri: ssh://root@127.0.0.1:1\n  - name: scope-db.test\n    uri: ssh://root@127.0.0.1:1\n    facts: {role: web}\n",
        )
        .expect("inventory");
        format!("{pdb}inventory: {}\n", inventory.display())
    });
    for (name, role) in [
        ("scope-web.test", "web"),
        ("scope-db.test", "db"),
        ("scope-elsewhere.test", "web"),
    ] {
        let mut values = serde_json::Map::new();
        values.insert("role".into(), json!(role));
        let facts = Facts::new(name, values, Some("production".into()));
        s.rt.block_on(s.state.indirector.facts.save(&facts))
            .map_err(|e| e.to_string())?;
        rows_of(&db, &format!("/pdb/query/v4/nodes/{name}/facts"))?;
    }
    let client = Client::new(&s.pki, Some(&s.pki.client));
    let (status, job) = s.rt.block_on(async {
        let r = client
            .post(
                s.addr,
                "/orchestrator/v1/command/command",
                &json!({"command": "true", "description": "web",
                    "scope": {"query": "inventory[certname] { facts.role = \"web\" }"}}),
            )
            .await;
        (r.status, r.json())
    });
    check(status == 202, || format!("{status} {job}"))?;
    let name = job["job"]["name"].as_str().unwrap_or_default().to_string();
    let (nodes, shown) = s.rt.block_on(async {
        let nodes = client
            .get(s.addr, &format!("/orchestrator/v1/jobs/{name}/nodes"))
            .await
            .json();
        let shown = client
            .get(s.addr, &format!("/orchestrator/v1/jobs/{name}"))
            .await
            .json();
        (nodes, shown)
    });
    let names: Vec<&str> = nodes["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n["name"].as_str())
        .collect();
    check(names == ["scope-web.test"], || format!("job nodes {nodes}"))?;
    check(
        shown["description"]
            == "web (scope.query also selected 1 node(s) not in the server's inventory, skipped: scope-elsewhere.test)",
        || format!("job {shown}"),
    )
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = vec![
        Trial::test(
            "yaml_facts_files_are_puppets_own",
            yaml_facts_files_are_puppets_own,
        ),
        Trial::test(
            "agent_facts_and_report_go_to_yaml",
            agent_facts_and_report_go_to_yaml,
        ),
        Trial::test(
            "agent_facts_and_report_reach_puppetdb",
            agent_facts_and_report_reach_puppetdb,
        ),
        Trial::test(
            "job_scope_query_goes_to_puppetdb",
            job_scope_query_goes_to_puppetdb,
        ),
    ];
    trials.push(Trial::test(
        "catalog_get_reads_the_cache",
        catalog_get_reads_the_cache,
    ));
    let conclusion = libtest_mimic::run(&args, trials);
    puppetdb::shutdown();
    conclusion.exit();
}
