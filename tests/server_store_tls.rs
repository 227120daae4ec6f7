//! The job store over TLS to a real PostgreSQL cluster that accepts TLS
//! connections only (`hostssl` in pg_hba.conf, the test PKI's server
//! certificate): `sslmode` in the store URL is honoured — `disable` cannot
//! get in, `prefer` (the default) and `require` encrypt, `verify-ca` and
//! `verify-full` check the server's certificate against `sslrootcert`, and
//! a certificate from another CA is refused.

#[path = "common/pg.rs"]
mod pg;
#[path = "common/tls.rs"]
mod tls;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use ferry::store::Store;
use sqlx::Connection;
use tls::Pki;

/// A file the `postgres` user owns, with `mode`.
fn install(path: &Path, contents: &str, mode: u32) {
    std::fs::write(path, contents).expect("write");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
    let status = Command::new("chown")
        .arg("postgres:postgres")
        .arg(path)
        .status()
        .expect("chown");
    assert!(status.success(), "chown {}", path.display());
}

/// Turns TLS on (the PKI's server certificate) and allows TCP clients over
/// TLS only, then reloads the cluster.
async fn tls_only(plain_url: &str, pki: &Pki) {
    let mut conn = sqlx::PgConnection::connect(plain_url)
        .await
        .expect("connect without TLS before it is required");
    let (data,): (String,) = sqlx::query_as("SHOW data_directory")
        .fetch_one(&mut conn)
        .await
        .expect("data_directory");
    let data = Path::new(&data);
    let cert = std::fs::read_to_string(pki.path("server.pem")).expect("cert");
    let key = std::fs::read_to_string(pki.path("server.key")).expect("key");
    install(&data.join("server.crt"), &cert, 0o644);
    install(&data.join("server.key"), &key, 0o600);
    install(
        &data.join("pg_hba.conf"),
        "local all all trust\nhostssl all all 127.0.0.1/32 trust\n",
        0o600,
    );
    sqlx::raw_sql("ALTER SYSTEM SET ssl = on")
        .execute(&mut conn)
        .await
        .expect("ssl = on");
    let (reloaded,): (bool,) = sqlx::query_as("SELECT pg_reload_conf()")
        .fetch_one(&mut conn)
        .await
        .expect("reload");
    assert!(reloaded);
    let _ = conn.close().await;
    // The reload is asynchronous: wait until a plain connection is refused.
    for _ in 0..100 {
        if sqlx::PgConnection::connect(plain_url).await.is_err() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("the cluster still takes connections without TLS");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_store_over_tls_honours_sslmode() {
    let pg = tokio::task::spawn_blocking(pg::Pg::start)
        .await
        .expect("pg");
    let pki = Pki::new();
    let plain = pg.database("ferry_tls");
    tls_only(&plain, &pki).await;
    let base = plain
        .strip_suffix("?sslmode=disable")
        .expect("pg.rs gives ?sslmode=disable")
        .to_string();
    let ca = pki.path("ca.pem").display().to_string();
    let other = pki.path("other-ca.pem");
    let other_ca = rcgen::generate_simple_self_signed(vec!["other-ca".to_string()])
        .expect("other CA")
        .cert
        .pem();
    std::fs::write(&other, other_ca).expect("write");
    let other = other.display().to_string();
    let localhost = base.replace("127.0.0.1", "localhost");

    for (url, opens) in [
        (format!("{base}?sslmode=disable"), false),
        (base.clone(), true),
        (format!("{base}?sslmode=prefer"), true),
        (format!("{base}?sslmode=require"), true),
        (format!("{base}?sslmode=verify-ca&sslrootcert={ca}"), true),
        (format!("{base}?sslmode=verify-full&sslrootcert={ca}"), true),
        (
            format!("{localhost}?sslmode=verify-full&sslrootcert={ca}"),
            true,
        ),
        (
            format!("{base}?sslmode=verify-ca&sslrootcert={other}"),
            false,
        ),
        (
            format!("{base}?sslmode=verify-full&sslrootcert={other}"),
            false,
        ),
    ] {
        let opened = Store::open(&url).await;
        assert_eq!(opened.is_ok(), opens, "{url}: {:?}", opened.err());
        if let Ok(store) = opened {
            store.recover().await.expect("a query over TLS");
        }
    }
    drop(pg);
}
