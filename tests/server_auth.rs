//! The service refuses anyone it cannot authenticate, over real HTTPS with a
//! test CA: no certificate and a certificate from another CA are refused;
//! a certificate not on the allowlist (every one without an allowlist) is
//! only a node's and reaches only the Puppet agent endpoints for itself;
//! bearer tokens work only for the actions listed with their hash; an
//! allowlisted certificate works.

#[path = "common/tls.rs"]
mod tls;

use serde_json::json;
use sha2::{Digest, Sha256};
use tls::{Client, Pki, TestServer};

fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("ferry-server-auth-")
        .tempdir()
        .expect("temp dir")
}

fn assert_error_body(resp: &tls::Resp, status: u16, kind: &str) {
    assert_eq!(resp.status, status, "{}", resp.text());
    let body = resp.json();
    assert_eq!(body["kind"], kind, "{body}");
    assert!(
        body["msg"].is_string() && body["details"].is_object(),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificates_valid_missing_foreign_and_not_allowed() {
    let pki = Pki::new();
    let dir = scratch();
    let server = TestServer::start(&pki, dir.path(), "allowlist: [client-ok]\n").await;

    let ok = Client::new(&pki, Some(&pki.client))
        .post(server.addr, "/check", &json!({}))
        .await;
    assert_eq!(ok.status, 200);
    assert_eq!(ok.text(), "OK");

    // Without a certificate (and no tokens file) the handshake itself fails.
    let none = Client::new(&pki, None)
        .send(server.addr, "POST", "/check", None)
        .await;
    assert!(none.is_err(), "no certificate was let in: {none:?}");

    // A certificate from another CA, even with an allowed name, fails the handshake.
    let foreign = Client::new(&pki, Some(&pki.foreign))
        .send(server.addr, "POST", "/check", None)
        .await;
    assert!(
        foreign.is_err(),
        "a foreign certificate was let in: {foreign:?}"
    );

    // A valid certificate whose name is not on the allowlist: 403.
    let stranger = Client::new(&pki, Some(&pki.stranger))
        .post(server.addr, "/check", &json!({}))
        .await;
    assert_error_body(&stranger, 403, "ferry/forbidden");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowlist_matches_dns_names() {
    let pki = Pki::new();
    let dir = scratch();
    let server = TestServer::start(&pki, dir.path(), "allowlist: [ok.clients.test]\n").await;
    let ok = Client::new(&pki, Some(&pki.client))
        .get(server.addr, "/openapi.json")
        .await;
    assert_eq!(ok.status, 200);
    server.stop().await;
}

/// A certificate not on the allowlist (every certificate when there is
/// none) is only a node's: the Puppet agent endpoints for its own
/// certname, nothing else. ferry differs from ACE and bolt-server here,
/// which let any certificate from the CA run anything without an
/// allowlist.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_off_the_allowlist_is_only_a_nodes() {
    let pki = Pki::new();
    let dir = scratch();
    std::fs::create_dir_all(dir.path().join("envs/production")).expect("mkdir");
    for extra in [
        "# no allowlist\n".to_string(),
        "allowlist: [client-ok]\n".to_string(),
    ] {
        let server = TestServer::start(
            &pki,
            dir.path(),
            &format!(
                "{extra}environmentpath: {}\n",
                dir.path().join("envs").display()
            ),
        )
        .await;
        let node = Client::new(&pki, Some(&pki.stranger));
        let own = node.get(server.addr, "/puppet/v3/node/stranger").await;
        assert_eq!(own.status, 200, "{extra}: {}", own.text());
        assert_eq!(own.json()["environment"], "production");
        let envs = node.get(server.addr, "/puppet/v3/environments").await;
        assert_eq!(envs.status, 200, "{}", envs.text());
        let status = node.get(server.addr, "/status/v1/simple").await;
        assert_eq!((status.status, status.text().as_str()), (200, "running"));
        // Another node's node object or catalog: 403, nothing compiled.
        let other = node.get(server.addr, "/puppet/v3/node/client-ok").await;
        assert_error_body(&other, 403, "ferry/forbidden");
        assert!(
            other.text().contains("another node's node"),
            "{}",
            other.text()
        );
        let catalog = node
            .send(
                server.addr,
                "POST",
                "/puppet/v3/catalog/client-ok",
                Some(b"facts_format=application%2Fjson&facts=%7B%7D".to_vec()),
            )
            .await
            .expect("POST");
        assert_error_body(&catalog, 403, "ferry/forbidden");
        // Every executor, jobs and listing endpoint: 403.
        for (method, path) in [
            ("POST", "/check"),
            ("GET", "/metrics"),
            ("GET", "/openapi.json"),
            ("GET", "/tasks"),
            ("GET", "/orchestrator/v1/jobs"),
            ("POST", "/ssh/run_command"),
            ("POST", "/orchestrator/v1/command/deploy"),
            ("GET", "/puppet/v3/file_content/tasks/ferry/facts.sh"),
        ] {
            let r = node
                .send(server.addr, method, path, Some(b"{}".to_vec()))
                .await
                .expect("request");
            assert_error_body(&r, 403, "ferry/forbidden");
            assert!(
                r.text().contains("only a node's"),
                "{method} {path}: {}",
                r.text()
            );
        }
        // The operator's certificate (on the allowlist) reaches any node.
        let operator = Client::new(&pki, Some(&pki.client));
        let any = operator.get(server.addr, "/puppet/v3/node/stranger").await;
        let expected = if extra.contains("client-ok") {
            200
        } else {
            403
        };
        assert_eq!(any.status, expected, "{extra}: {}", any.text());
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bearer_tokens_with_and_without_the_action() {
    let pki = Pki::new();
    let dir = scratch();
    let hash = |t: &str| hex::encode(Sha256::digest(t.as_bytes()));
    let tokens = dir.path().join("tokens.yaml");
    std::fs::write(
        &tokens,
        format!(
            "tokens:\n  - name: health\n    sha256: {}\n    actions: [check]\n  - name: admin\n    sha256: {}\n    actions: ['*']\n",
            hash("health-token-1"),
            hash("admin-token-2")
        ),
    )
    .expect("write tokens");
    let server = TestServer::start(
        &pki,
        dir.path(),
        &format!(
            "tokens-file: {}\nallowlist: [client-ok]\n",
            tokens.display()
        ),
    )
    .await;
    let anon = Client::new(&pki, None);

    let ok = anon
        .clone()
        .with_bearer("health-token-1")
        .post(server.addr, "/check", &json!({}))
        .await;
    assert_eq!(ok.status, 200);

    let wrong_action = anon
        .clone()
        .with_bearer("health-token-1")
        .get(server.addr, "/orchestrator/v1/jobs")
        .await;
    assert_error_body(&wrong_action, 403, "ferry/forbidden");

    let unknown = anon
        .clone()
        .with_bearer("not-a-token")
        .post(server.addr, "/check", &json!({}))
        .await;
    assert_error_body(&unknown, 401, "ferry/unauthenticated");
    assert!(!unknown.text().contains("not-a-token"));

    // With a tokens file the handshake lets anonymous clients in, but the
    // request still needs a token.
    let nothing = anon.get(server.addr, "/metrics").await;
    assert_error_body(&nothing, 401, "ferry/unauthenticated");

    let admin = anon
        .clone()
        .with_bearer("admin-token-2")
        .get(server.addr, "/orchestrator/v1/jobs")
        .await;
    assert_eq!(admin.status, 200, "{}", admin.text());

    // Certificates still work alongside tokens, and unknown CAs still fail.
    let cert = Client::new(&pki, Some(&pki.client))
        .get(server.addr, "/metrics")
        .await;
    assert_eq!(cert.status, 200);
    assert!(
        cert.text()
            .contains("ferry_http_requests_total{endpoint=\"check\",code=\"200\"}")
    );
    assert!(cert.text().contains("code=\"401\""));
    let foreign = Client::new(&pki, Some(&pki.foreign))
        .send(server.addr, "GET", "/metrics", None)
        .await;
    assert!(foreign.is_err());
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revoked_certificates_are_refused_with_a_crl() {
    let pki = Pki::new();
    let dir = scratch();
    let extra = format!("ssl-ca-crls: {}\n", pki.path("crl.pem").display());
    let server = TestServer::start(&pki, dir.path(), &extra).await;
    let ok = Client::new(&pki, Some(&pki.client))
        .post(server.addr, "/check", &json!({}))
        .await;
    assert_eq!(ok.status, 200);
    let revoked = Client::new(&pki, Some(&pki.revoked))
        .send(server.addr, "POST", "/check", None)
        .await;
    assert!(
        revoked.is_err(),
        "a revoked certificate was let in: {revoked:?}"
    );
    server.stop().await;

    // Without the CRL the same certificate is fine.
    let dir = scratch();
    let server = TestServer::start(&pki, dir.path(), "allowlist: [client-ok, revoked]\n").await;
    let r = Client::new(&pki, Some(&pki.revoked))
        .post(server.addr, "/check", &json!({}))
        .await;
    assert_eq!(r.status, 200);
    server.stop().await;
}
