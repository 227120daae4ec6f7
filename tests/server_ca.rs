//! ferry's Puppet CA: a stock Puppet 7 agent (Debian's `puppet`) with an
//! EMPTY ssldir bootstraps against `ferry serve` — it downloads the CA
//! certificate and CRL, submits a CSR, waits (`--waitforcert 0` exits)
//! until `ferry ca sign` (the real binary) signs it, then gets its
//! certificate and a catalog; an autosigned name gets both at once;
//! `ferry ca revoke` makes the server refuse the node's next connection.
//! Over HTTPS: bad CSRs are 400s saying why, a client without a
//! certificate reaches the CA's endpoints and nothing else. And existing
//! Puppet CA material (an RSA CA whose key is PKCS#1, as Puppet Server
//! writes it, made here with `openssl`) signs and revokes, checked with
//! `openssl verify`. One in-process server for the binary, whose CA and
//! TLS files it makes itself on first start (`ca:` in its config, no
//! `ssl-*` keys). The `certificate_status` API signs, revokes and deletes
//! for the operator (an allowlisted certificate, a `ca:admin` token) and
//! refuses a node's certificate; an agent asking for `--dns_alt_names`
//! waits (even on the autosign list) until `ferry ca sign
//! --allow-dns-alt-names`, and gets the names in its certificate; a
//! second server autosigns through a policy script that gets the CSR on
//! stdin. A third server autosigns the names its `autosign.conf` lists
//! (Puppet Server's rules; the file read again for each CSR) and signs
//! certificates valid for its `ca.cert-ttl` (30 days), through the API
//! and `ferry ca sign` alike; a bad line in that file stops `ferry serve`
//! naming the file and line. Without `puppet` (or `openssl`) those tests are skipped with a
//! message.

#[path = "common/agent.rs"]
mod agent;
#[path = "common/tls.rs"]
mod tls;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use agent::Agent;
use tls::{Client, ClientCert, TestServer};

struct Fixture {
    addr: std::net::SocketAddr,
    rt: tokio::runtime::Handle,
    /// The server's config file (`ferry ca --config`).
    config: PathBuf,
    ca_dir: PathBuf,
    /// The CA certificate, as the server made it.
    ca_pem: String,
    _dir: tempfile::TempDir,
}

/// A token with `ca:admin`, and one without it.
const CA_TOKEN: &str = "ca-admin-token";
const OTHER_TOKEN: &str = "classifier-reader-token";

/// The shared server: autosign for `auto-*.test`; a tokens file.
fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        start("autosign: ['auto-*.test']", |dir| {
            let hash = |t: &str| hex::encode(<sha2::Sha256 as sha2::Digest>::digest(t.as_bytes()));
            std::fs::write(
                dir.join("tokens.yaml"),
                format!(
                    "tokens:\n  - name: ca\n    sha256: {}\n    actions: [ca:admin]\n  - name: other\n    sha256: {}\n    actions: [classifier:read]\n",
                    hash(CA_TOKEN),
                    hash(OTHER_TOKEN)
                ),
            )
            .expect("tokens");
            "tokens-file: tokens.yaml\n".to_string()
        })
    })
}

/// A server whose autosign is a policy executable (`policy` in its
/// directory: it keeps what it read on stdin in `policy-stdin-<name>`,
/// approves names starting `yes-`, refuses others saying why on stderr).
fn policy_fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        start("autosign: policy\n  autosign-timeout: 20", |dir| {
            use std::os::unix::fs::PermissionsExt;
            let script = dir.join("policy");
            std::fs::write(
                &script,
                format!(
                    "#!/bin/sh\ncat > {dir}/policy-stdin-\"$1\"\ncase \"$1\" in\n  yes-*) exit 0 ;;\n  *) echo \"not approving $1\" >&2; exit 7 ;;\nesac\n",
                    dir = dir.display()
                ),
            )
            .expect("policy");
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
                .expect("chmod");
            String::new()
        })
    })
}

/// A server whose autosign is an `autosign.conf` (`*.lab.test`,
/// `exact.test`) and whose certificates are valid for 30 days.
fn conf_fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        start("autosign: autosign.conf\n  cert-ttl: 30d", |dir| {
            std::fs::write(
                dir.join("autosign.conf"),
                "# the lab\n*.lab.test\n\nexact.test\n",
            )
            .expect("autosign.conf");
            String::new()
        })
    })
}

/// A server in a thread of its own, with `ca:` `autosign` lines; `prepare`
/// runs in its directory before it starts and gives more config lines.
fn start(autosign: &str, prepare: impl FnOnce(&Path) -> String + Send + 'static) -> Fixture {
    let autosign = autosign.to_string();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("ferry-serve".into())
        .spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let dir = tempfile::Builder::new()
                    .prefix("ferry-ca-server-")
                    .tempdir()
                    .expect("dir");
                let extra = prepare(dir.path());
                let environments =
                    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/environments");
                let server = TestServer::start_with_tls(
                    "",
                    dir.path(),
                    &format!(
                        "{extra}environmentpath: {}\nloglevel: warn\nca:\n  dir: ca\n  {autosign}\n  server-names: [localhost, 127.0.0.1]\n",
                        environments.display()
                    ),
                )
                .await;
                let ca_dir = dir.path().join("ca");
                let ca_pem =
                    std::fs::read_to_string(ca_dir.join("ca_crt.pem")).expect("the CA made");
                let _ = tx.send(Fixture {
                    addr: server.addr,
                    rt: tokio::runtime::Handle::current(),
                    config: dir.path().join("server.yaml"),
                    ca_dir,
                    ca_pem,
                    _dir: dir,
                });
                std::future::pending::<()>().await;
                drop(server);
            });
        })
        .expect("server thread");
    rx.recv().expect("the server started")
}

fn have(program: &str) -> bool {
    let found = Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
        || Command::new(program)
            .arg("version")
            .output()
            .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("skipped: no `{program}` command (scripts/test.sh installs it)");
    }
    found
}

/// `ferry ca ARGS --config <the fixture's>`: (exit code, stdout+stderr).
fn ferry_ca(args: &[&str]) -> (i32, String) {
    let f = fixture();
    let out = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .arg("ca")
        .args(args)
        .arg("--config")
        .arg(&f.config)
        .output()
        .expect("run ferry ca");
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// `puppet agent -t` against the fixture, as it is configured.
fn run_agent(agent: &Agent, args: &[&str]) -> agent::Run {
    agent.run(fixture().addr.port(), None, args)
}

/// The agent's certificate and key, once it has them.
fn cert(agent: &Agent) -> ClientCert {
    let read = |p: String| std::fs::read_to_string(agent.path(&p)).expect(&p);
    ClientCert {
        cert_pem: read(format!("ssl/certs/{}.pem", agent.certname)),
        key_pem: read(format!("ssl/private_keys/{}.pem", agent.certname)),
    }
}

fn anonymous() -> Client {
    Client::trusting(&fixture().ca_pem, None)
}

fn send(client: &Client, method: &str, path: &str, body: Option<Vec<u8>>) -> tls::Resp {
    send_at(fixture(), client, method, path, body)
}

fn send_at(
    f: &Fixture,
    client: &Client,
    method: &str,
    path: &str,
    body: Option<Vec<u8>>,
) -> tls::Resp {
    f.rt.block_on(client.send(f.addr, method, path, body))
        .expect("request")
}

/// The shared server's operator: a certificate for `client-ok` (on its
/// allowlist), signed by its CA.
fn operator() -> Client {
    static CERT: OnceLock<ClientCert> = OnceLock::new();
    let f = fixture();
    let cert = CERT.get_or_init(|| {
        let ca = ferry::server::ca::Ca::open(&f.ca_dir).expect("the CA");
        let (cert_pem, key_pem) = ca.issue(&["client-ok".to_string()]).expect("issue");
        ClientCert { cert_pem, key_pem }
    });
    Client::trusting(&f.ca_pem, Some(cert))
}

/// `certificate_status` of `name` as the operator sees it.
fn status_of(name: &str) -> tls::Resp {
    send(
        &operator(),
        "GET",
        &format!("/puppet-ca/v1/certificate_status/{name}"),
        None,
    )
}

fn put_state(name: &str, body: &str) -> tls::Resp {
    send(
        &operator(),
        "PUT",
        &format!("/puppet-ca/v1/certificate_status/{name}"),
        Some(body.as_bytes().to_vec()),
    )
}

/// A CSR for `cn` (rcgen, ECDSA), PEM.
fn csr(cn: &str) -> String {
    let key = rcgen::KeyPair::generate().expect("key");
    let mut params = rcgen::CertificateParams::default();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, cn);
    params
        .serialize_request(&key)
        .expect("csr")
        .pem()
        .expect("pem")
}

#[test]
fn an_agent_with_an_empty_ssldir_waits_is_signed_runs_and_is_refused_once_revoked() {
    if !have("puppet") {
        return;
    }
    let agent = Agent::empty("node1.test");
    let first = run_agent(&agent, &["--waitforcert", "0"]);
    assert_eq!(first.code, 1, "{}", first.output);
    assert!(
        first
            .output
            .contains("Couldn't fetch certificate from CA server; you might still need to sign this agent's certificate (node1.test)."),
        "{}",
        first.output
    );
    // The agent kept the CA's certificate and CRL it downloaded.
    assert_eq!(
        std::fs::read_to_string(agent.path("ssl/certs/ca.pem")).expect("ca.pem"),
        fixture().ca_pem
    );
    assert!(agent.path("ssl/crl.pem").is_file());

    let (code, list) = ferry_ca(&["list"]);
    assert_eq!(code, 0, "{list}");
    assert!(list.contains("Requested Certificates:"), "{list}");
    assert!(list.contains("node1.test"), "{list}");
    // Its pending CSR is served back; its certificate is not there yet.
    let pending = send(
        &anonymous(),
        "GET",
        "/puppet-ca/v1/certificate_request/node1.test",
        None,
    );
    assert_eq!(pending.status, 200);
    assert!(
        pending
            .text()
            .starts_with("-----BEGIN CERTIFICATE REQUEST-----")
    );
    let unsigned = send(
        &anonymous(),
        "GET",
        "/puppet-ca/v1/certificate/node1.test",
        None,
    );
    assert_eq!(unsigned.status, 404, "{}", unsigned.text());
    assert_eq!(
        unsigned.json()["message"],
        "Not Found: Could not find certificate node1.test"
    );

    let (code, signed) = ferry_ca(&["sign", "node1.test"]);
    assert_eq!(code, 0, "{signed}");
    assert!(
        signed.contains("Successfully signed certificate request for node1.test"),
        "{signed}"
    );
    let (code, signed_again) = ferry_ca(&["sign", "node1.test"]);
    assert_eq!(code, 1, "nothing pending any more: {signed_again}");

    let second = run_agent(&agent, &[]);
    assert_eq!(second.code, 2, "changes applied:\n{}", second.output);
    assert!(
        second
            .output
            .contains("Downloaded certificate for node1.test"),
        "{}",
        second.output
    );
    assert_eq!(
        std::fs::read_to_string(agent.path("out/production.txt")).expect("the catalog's file"),
        "environment=production plugin_fact=synced certname=node1.test\n"
    );
    let (_, all) = ferry_ca(&["list", "--all"]);
    assert!(all.contains("Signed Certificates:"), "{all}");

    // Its certificate is a node's: the Puppet endpoints for itself only.
    let node = Client::trusting(&fixture().ca_pem, Some(&cert(&agent)));
    let own = send(&node, "GET", "/puppet/v3/node/node1.test", None);
    assert_eq!(own.status, 200, "{}", own.text());
    assert_eq!(
        send(&node, "POST", "/check", Some(b"{}".to_vec())).status,
        403
    );

    let (code, revoked) = ferry_ca(&["revoke", "node1.test"]);
    assert_eq!(code, 0, "{revoked}");
    let (_, all) = ferry_ca(&["list", "--all"]);
    assert!(all.contains("Revoked Certificates:"), "{all}");
    // The running server read the new CRL: the handshake is refused.
    let f = fixture();
    let refused =
        f.rt.block_on(node.send(f.addr, "GET", "/puppet/v3/node/node1.test", None));
    assert!(
        refused.is_err(),
        "a revoked certificate got in: {refused:?}"
    );
    let third = run_agent(&agent, &[]);
    assert_ne!(third.code, 0, "{}", third.output);
    assert!(
        third.output.contains("certificate revoked"),
        "{}",
        third.output
    );

    // Cleaned, the name may ask again (and waits again).
    let (code, cleaned) = ferry_ca(&["clean", "node1.test"]);
    assert_eq!(code, 0, "{cleaned}");
    let again = send(
        &anonymous(),
        "PUT",
        "/puppet-ca/v1/certificate_request/node1.test",
        Some(csr("node1.test").into_bytes()),
    );
    assert_eq!(again.status, 200, "{}", again.text());
}

#[test]
fn a_name_on_the_autosign_list_gets_its_certificate_and_catalog_at_once() {
    if !have("puppet") {
        return;
    }
    let agent = Agent::empty("auto-1.test");
    let run = run_agent(&agent, &["--waitforcert", "0"]);
    assert_eq!(run.code, 2, "{}", run.output);
    assert!(agent.path("ssl/certs/auto-1.test.pem").is_file());
    assert!(agent.path("out/production.txt").is_file());
    let (_, list) = ferry_ca(&["list"]);
    assert!(!list.contains("auto-1.test"), "nothing pending: {list}");
}

#[test]
fn bad_certificate_requests_are_400s_saying_why() {
    let client = anonymous();
    let put = |name: &str, body: Vec<u8>| {
        send(
            &client,
            "PUT",
            &format!("/puppet-ca/v1/certificate_request/{name}"),
            Some(body),
        )
    };
    let other = put("mine.test", csr("other.test").into_bytes());
    assert_eq!(other.status, 400, "{}", other.text());
    assert_eq!(
        other.json()["message"],
        "Instance name \"other.test\" does not match requested key \"mine.test\""
    );
    let garbage = put("mine.test", b"not a certificate request".to_vec());
    assert_eq!(garbage.status, 400, "{}", garbage.text());
    assert!(
        garbage.json()["msg"]
            .as_str()
            .is_some_and(|m| m.contains("not a PEM certificate request")),
        "{}",
        garbage.text()
    );
    let broken = put(
        "mine.test",
        b"-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n".to_vec(),
    );
    assert_eq!(broken.status, 400, "{}", broken.text());
    let upper = put("Mine.test", csr("Mine.test").into_bytes());
    assert_eq!(upper.status, 400, "{}", upper.text());
    assert_eq!(upper.json()["details"]["field"], "certname");
    let huge = put("mine.test", vec![b'A'; 70 * 1024]);
    assert_eq!(huge.status, 413, "{}", huge.text());
    // Nothing of these was kept.
    let (_, list) = ferry_ca(&["list"]);
    assert!(!list.contains("mine.test"), "{list}");
    assert!(!fixture().ca_dir.join("requests/mine.test.pem").exists());

    // A second CSR for a pending name with another key is refused; the
    // same one again is fine.
    let first = csr("twice.test");
    assert_eq!(put("twice.test", first.clone().into_bytes()).status, 200);
    assert_eq!(put("twice.test", first.into_bytes()).status, 200);
    let second = put("twice.test", csr("twice.test").into_bytes());
    assert_eq!(second.status, 400, "{}", second.text());
}

#[test]
fn a_client_without_a_certificate_reaches_the_ca_endpoints_and_nothing_else() {
    let client = anonymous();
    let ca = send(&client, "GET", "/puppet-ca/v1/certificate/ca", None);
    assert_eq!(ca.status, 200);
    assert_eq!(ca.text(), fixture().ca_pem);
    let crl = send(
        &client,
        "GET",
        "/puppet-ca/v1/certificate_revocation_list/ca",
        None,
    );
    assert_eq!(crl.status, 200);
    assert!(
        crl.text().starts_with("-----BEGIN X509 CRL-----"),
        "{}",
        crl.text()
    );
    for (method, path) in [
        ("GET", "/puppet/v3/node/anon.test"),
        ("POST", "/puppet/v3/catalog/anon.test"),
        ("GET", "/puppet/v3/environments"),
        ("GET", "/status/v1/simple"),
        ("POST", "/check"),
        ("GET", "/orchestrator/v1/jobs"),
        ("GET", "/metrics"),
        ("GET", "/puppet/v3/file_content/modules/greet/x"),
        ("DELETE", "/puppet-ca/v1/certificate_request/anon.test"),
        ("GET", "/puppet-ca/v1/certificate_status/anon.test"),
    ] {
        let r = send(&client, method, path, Some(Vec::new()));
        assert_eq!(r.status, 401, "{method} {path}: {}", r.text());
    }
}

#[test]
fn existing_puppet_ca_material_signs_and_revokes() {
    if !have("openssl") {
        return;
    }
    let dir = tempfile::Builder::new()
        .prefix("ferry-puppet-cadir-")
        .tempdir()
        .expect("dir");
    let d = dir.path();
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(d)
            .output()
            .expect("openssl");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // An RSA CA as Puppet Server keeps one: a PKCS#1 key, ca_crt.pem,
    // signed/, serial.
    openssl(&["genrsa", "-traditional", "-out", "ca_key.pem", "2048"]);
    openssl(&[
        "req",
        "-x509",
        "-new",
        "-key",
        "ca_key.pem",
        "-out",
        "ca_crt.pem",
        "-days",
        "30",
        "-subj",
        "/CN=Puppet CA: puppet.test",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    ]);
    assert!(
        std::fs::read_to_string(d.join("ca_key.pem"))
            .expect("key")
            .starts_with("-----BEGIN RSA PRIVATE KEY-----")
    );
    std::fs::create_dir_all(d.join("requests")).expect("mkdir");
    std::fs::write(d.join("serial"), "0010\n").expect("serial");
    std::fs::write(d.join("requests/legacy.test.pem"), csr("legacy.test")).expect("csr");
    let ca = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_ferry"))
            .arg("ca")
            .args(args)
            .arg("--dir")
            .arg(d)
            .output()
            .expect("ferry ca");
        assert!(
            out.status.success(),
            "ferry ca {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(ca(&["list"]).contains("legacy.test"));
    ca(&["sign", "legacy.test"]);
    let verified = openssl(&["verify", "-CAfile", "ca_crt.pem", "signed/legacy.test.pem"]);
    assert!(verified.contains("OK"), "{verified}");
    let serial = openssl(&["x509", "-in", "signed/legacy.test.pem", "-noout", "-serial"]);
    assert_eq!(serial.trim(), "serial=10");
    assert_eq!(
        std::fs::read_to_string(d.join("serial"))
            .expect("serial")
            .trim(),
        "0011"
    );
    ca(&["revoke", "legacy.test"]);
    let crl = openssl(&[
        "crl",
        "-in",
        "ca_crl.pem",
        "-noout",
        "-text",
        "-CAfile",
        "ca_crt.pem",
    ]);
    assert!(crl.contains("Serial Number: 10"), "{crl}");
    let refused = Command::new("openssl")
        .args([
            "verify",
            "-crl_check",
            "-CAfile",
            "ca_crt.pem",
            "-CRLfile",
            "ca_crl.pem",
        ])
        .arg("signed/legacy.test.pem")
        .current_dir(d)
        .output()
        .expect("openssl");
    assert!(!refused.status.success(), "revoked, so not verified");
    // The key was never printed, and keeps its mode.
    let key = std::fs::read_to_string(d.join("ca_key.pem")).expect("key");
    assert!(!ca(&["list", "--all"]).contains(key.lines().nth(1).unwrap_or("-")));
}

#[test]
fn certificate_status_signs_revokes_and_deletes_for_the_operator_only() {
    if !have("puppet") {
        return;
    }
    let agent = Agent::empty("status1.test");
    let first = run_agent(&agent, &["--waitforcert", "0"]);
    assert_eq!(first.code, 1, "{}", first.output);

    let pending = status_of("status1.test");
    assert_eq!(pending.status, 200, "{}", pending.text());
    let j = pending.json();
    assert_eq!(j["name"], "status1.test");
    assert_eq!(j["state"], "requested");
    let fingerprint = j["fingerprint"].as_str().unwrap_or_default().to_string();
    assert_eq!(fingerprint.len(), 32 * 3 - 1, "{j}");
    assert_eq!(j["fingerprints"]["SHA256"], j["fingerprint"]);
    assert_eq!(j["fingerprints"]["default"], j["fingerprint"]);
    assert_eq!(
        j["fingerprints"]["SHA1"].as_str().map(str::len),
        Some(20 * 3 - 1)
    );
    assert_eq!(
        j["fingerprints"]["SHA512"].as_str().map(str::len),
        Some(64 * 3 - 1)
    );
    assert_eq!(j["dns_alt_names"], serde_json::json!([]));
    assert!(
        j.get("serial_number").is_none(),
        "a request has no serial: {j}"
    );
    // The list, filtered by state.
    let requested = send(
        &operator(),
        "GET",
        "/puppet-ca/v1/certificate_statuses/any?state=requested",
        None,
    );
    assert_eq!(requested.status, 200, "{}", requested.text());
    let names: Vec<String> = requested
        .json()
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            assert_eq!(e["state"], "requested", "{e}");
            e["name"].as_str().unwrap_or_default().to_string()
        })
        .collect();
    assert!(names.contains(&"status1.test".to_string()), "{names:?}");
    // A token with ca:admin reads it too; one without it may not.
    let token = send(
        &anonymous().with_bearer(CA_TOKEN),
        "GET",
        "/puppet-ca/v1/certificate_status/status1.test",
        None,
    );
    assert_eq!(token.status, 200, "{}", token.text());
    let other = send(
        &anonymous().with_bearer(OTHER_TOKEN),
        "GET",
        "/puppet-ca/v1/certificate_status/status1.test",
        None,
    );
    assert_eq!(other.status, 403, "{}", other.text());
    let bad_state = send(
        &operator(),
        "GET",
        "/puppet-ca/v1/certificate_statuses/any?state=lost",
        None,
    );
    assert_eq!(bad_state.status, 400, "{}", bad_state.text());
    assert_eq!(bad_state.json()["details"]["field"], "state");

    // Bad changes: a 400 naming the field, a 409 saying why, nothing changed.
    let odd = put_state("status1.test", r#"{"desired_state":"lost"}"#);
    assert_eq!(odd.status, 400, "{}", odd.text());
    assert_eq!(odd.json()["details"]["field"], "desired_state");
    let none = put_state("status1.test", r#"{}"#);
    assert_eq!(none.status, 400, "{}", none.text());
    let not_json = put_state("status1.test", "desired_state=signed");
    assert_eq!(not_json.status, 400, "{}", not_json.text());
    let early = put_state("status1.test", r#"{"desired_state":"revoked"}"#);
    assert_eq!(early.status, 409, "{}", early.text());
    assert_eq!(
        early.json()["message"],
        "Cannot revoke certificate for host status1.test without a signed certificate"
    );
    let unknown = put_state("nobody.test", r#"{"desired_state":"signed"}"#);
    assert_eq!(unknown.status, 404, "{}", unknown.text());
    assert_eq!(status_of("nobody.test").status, 404);

    // Signed through the API, the agent gets its certificate and runs.
    let signed = put_state("status1.test", r#"{"desired_state":"signed"}"#);
    assert_eq!(signed.status, 204, "{}", signed.text());
    let second = run_agent(&agent, &[]);
    assert_eq!(second.code, 2, "{}", second.output);
    assert!(
        second.says("Downloaded certificate for status1.test"),
        "{}",
        second.output
    );
    let j = status_of("status1.test").json();
    assert_eq!(j["state"], "signed", "{j}");
    assert!(j["serial_number"].as_u64().is_some_and(|n| n >= 2), "{j}");
    assert!(
        j["not_after"].as_str().is_some_and(|t| t.ends_with("UTC")),
        "{j}"
    );
    assert_ne!(j["fingerprint"].as_str(), Some(fingerprint.as_str()));
    let again = put_state("status1.test", r#"{"desired_state":"signed"}"#);
    assert_eq!(again.status, 409, "nothing to sign: {}", again.text());

    // The node's own certificate is not an operator's.
    let node = Client::trusting(&fixture().ca_pem, Some(&cert(&agent)));
    for (method, path, body) in [
        ("GET", "/puppet-ca/v1/certificate_status/status1.test", None),
        ("GET", "/puppet-ca/v1/certificate_statuses/x", None),
        (
            "PUT",
            "/puppet-ca/v1/certificate_status/status1.test",
            Some(br#"{"desired_state":"revoked"}"#.to_vec()),
        ),
        (
            "DELETE",
            "/puppet-ca/v1/certificate_status/status1.test",
            None,
        ),
    ] {
        let r = send(&node, method, path, body);
        assert_eq!(r.status, 403, "{method} {path}: {}", r.text());
    }

    // Revoked through the API: listed so, and the node is refused.
    let revoked = put_state("status1.test", r#"{"desired_state":"revoked"}"#);
    assert_eq!(revoked.status, 204, "{}", revoked.text());
    assert_eq!(status_of("status1.test").json()["state"], "revoked");
    let listed = send(
        &operator(),
        "GET",
        "/puppet-ca/v1/certificate_statuses/any?state=revoked",
        None,
    );
    assert!(
        listed
            .json()
            .as_array()
            .is_some_and(|l| l.iter().any(|e| e["name"] == "status1.test")),
        "{}",
        listed.text()
    );
    let third = run_agent(&agent, &[]);
    assert_ne!(third.code, 0, "{}", third.output);

    // Deleted: the CA knows nothing of the name, which may ask again.
    let deleted = send(
        &operator(),
        "DELETE",
        "/puppet-ca/v1/certificate_status/status1.test",
        None,
    );
    assert_eq!(deleted.status, 204, "{}", deleted.text());
    assert_eq!(status_of("status1.test").status, 404);
    assert!(!fixture().ca_dir.join("signed/status1.test.pem").exists());
}

#[test]
fn an_agent_asking_for_dns_alt_names_waits_for_the_operator_to_allow_them() {
    if !have("puppet") {
        return;
    }
    // On the autosign list, but alternative names hold it back.
    let agent = Agent::empty("auto-alt.test");
    let first = run_agent(
        &agent,
        &[
            "--waitforcert",
            "0",
            "--dns_alt_names",
            "puppet-alt.test,alt2.test",
        ],
    );
    assert_eq!(first.code, 1, "{}", first.output);
    let j = status_of("auto-alt.test").json();
    assert_eq!(j["state"], "requested", "{j}");
    assert_eq!(
        j["dns_alt_names"],
        serde_json::json!(["DNS:alt2.test", "DNS:auto-alt.test", "DNS:puppet-alt.test"])
    );
    let (code, _) = ferry_ca(&["list"]);
    assert_eq!(code, 0);
    let (_, list) = ferry_ca(&["list"]);
    assert!(
        list.contains(
            "(alt names: \"DNS:alt2.test\", \"DNS:auto-alt.test\", \"DNS:puppet-alt.test\")"
        ),
        "{list}"
    );
    let (code, refused) = ferry_ca(&["sign", "auto-alt.test"]);
    assert_eq!(code, 1, "{refused}");
    assert!(
        refused.contains("CSR 'auto-alt.test' contains subject alternative names (DNS:alt2.test, DNS:auto-alt.test, DNS:puppet-alt.test), which are disallowed"),
        "{refused}"
    );
    assert!(
        refused.contains("--allow-dns-alt-names auto-alt.test"),
        "{refused}"
    );
    let api = put_state("auto-alt.test", r#"{"desired_state":"signed"}"#);
    assert_eq!(api.status, 409, "{}", api.text());
    assert!(api.text().contains("disallowed"), "{}", api.text());

    let (code, signed) = ferry_ca(&["sign", "--allow-dns-alt-names", "auto-alt.test"]);
    assert_eq!(code, 0, "{signed}");
    let run = run_agent(&agent, &[]);
    assert_eq!(run.code, 2, "{}", run.output);
    // The names are in the certificate the agent holds.
    let pem = std::fs::read(agent.path("ssl/certs/auto-alt.test.pem")).expect("cert");
    let (_, block) = x509_parser::pem::parse_x509_pem(&pem).expect("pem");
    let (_, parsed) = x509_parser::parse_x509_certificate(&block.contents).expect("cert");
    let san = parsed
        .subject_alternative_name()
        .expect("ext")
        .expect("san");
    let mut names: Vec<String> = san
        .value
        .general_names
        .iter()
        .map(ToString::to_string)
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "DNSName(alt2.test)",
            "DNSName(auto-alt.test)",
            "DNSName(puppet-alt.test)"
        ]
    );
    assert_eq!(status_of("auto-alt.test").json()["state"], "signed");
}

#[test]
fn an_autosign_policy_executable_decides_with_the_csr_on_its_stdin() {
    if !have("puppet") {
        return;
    }
    let f = policy_fixture();
    let approved = Agent::empty("yes-1.test");
    let run = approved.run(f.addr.port(), None, &["--waitforcert", "0"]);
    assert_eq!(run.code, 2, "approved, signed and run: {}", run.output);
    assert!(approved.path("ssl/certs/yes-1.test.pem").is_file());
    let dir = f.ca_dir.parent().expect("server dir");
    let seen = std::fs::read_to_string(dir.join("policy-stdin-yes-1.test")).expect("stdin");
    assert!(
        seen.starts_with("-----BEGIN CERTIFICATE REQUEST-----"),
        "{seen}"
    );

    let refused = Agent::empty("no-1.test");
    let run = refused.run(f.addr.port(), None, &["--waitforcert", "0"]);
    assert_eq!(run.code, 1, "waits: {}", run.output);
    assert!(f.ca_dir.join("requests/no-1.test.pem").is_file());
    assert!(dir.join("policy-stdin-no-1.test").is_file(), "it was asked");
}

/// The validity of `name`'s certificate from `f`, in seconds, once
/// signed.
fn validity(f: &Fixture, name: &str) -> Option<i64> {
    let got = send_at(
        f,
        &Client::trusting(&f.ca_pem, None),
        "GET",
        &format!("/puppet-ca/v1/certificate/{name}"),
        None,
    );
    if got.status != 200 {
        return None;
    }
    let (_, pem) = x509_parser::pem::parse_x509_pem(&got.body).expect("pem");
    let cert = pem.parse_x509().expect("certificate");
    let v = cert.validity();
    Some(v.not_after.timestamp() - v.not_before.timestamp())
}

#[test]
fn an_autosign_conf_lists_names_and_cert_ttl_sets_their_validity() {
    let f = conf_fixture();
    let client = Client::trusting(&f.ca_pem, None);
    let submit = |name: &str| {
        let r = send_at(
            f,
            &client,
            "PUT",
            &format!("/puppet-ca/v1/certificate_request/{name}"),
            Some(csr(name).into_bytes()),
        );
        assert_eq!(r.status, 200, "{name}: {}", r.text());
    };
    // 30 days, and the day they are backdated by.
    let thirty_days = 31 * 86400;
    for name in ["web1.lab.test", "a.b.lab.test", "exact.test"] {
        submit(name);
        assert_eq!(
            validity(f, name),
            Some(thirty_days),
            "{name} signed at once"
        );
    }
    for name in ["other.test", "lab.test.evil", "x.exact.test"] {
        submit(name);
        assert_eq!(validity(f, name), None, "{name} waits");
        assert!(f.ca_dir.join(format!("requests/{name}.pem")).is_file());
    }
    // The file is read again for each CSR.
    let conf = f.ca_dir.parent().expect("dir").join("autosign.conf");
    std::fs::write(&conf, "*.lab.test\nlater.test\n").expect("edit");
    submit("later.test");
    assert_eq!(validity(f, "later.test"), Some(thirty_days));
    // `ferry ca sign --config` signs with the config's cert-ttl too.
    let out = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["ca", "sign", "other.test", "--config"])
        .arg(&f.config)
        .output()
        .expect("ferry ca sign");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(validity(f, "other.test"), Some(thirty_days));
}

#[test]
fn a_bad_autosign_conf_line_stops_the_server_naming_file_and_line() {
    let dir = tempfile::tempdir().expect("dir");
    let conf = dir.path().join("autosign.conf");
    std::fs::write(&conf, "# ok\n*.lab.test\nweb1.example.com # the web\n").expect("write");
    let config = dir.path().join("server.yaml");
    std::fs::write(
        &config,
        "host: 127.0.0.1\nport: 0\nca:\n  dir: ca\n  autosign: autosign.conf\n",
    )
    .expect("config");
    let out = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["serve", "--config"])
        .arg(&config)
        .output()
        .expect("ferry serve");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains(&format!("{}:3: ", conf.display()))
            && err.contains("a comment must be a line"),
        "{err}"
    );
    assert!(!dir.path().join("ca").exists(), "nothing was made: {err}");
}
