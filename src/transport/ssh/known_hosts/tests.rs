//! Unit tests of `known_hosts` reading, host key and certificate checks,
//! and `learn`, against keys and certificates made by the real `ssh-keygen`.

use super::parse::HmacSha1;
use super::*;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use hmac::{KeyInit, Mac};
use std::process::Command;
use tempfile::TempDir;

/// Make an ed25519 key pair with ssh-keygen in `dir`; returns the private key path.
fn keygen(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    let status = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
        .arg(&path)
        .status()
        .unwrap();
    assert!(status.success());
    path
}

fn pub_line(private: &Path) -> String {
    fs::read_to_string(private.with_extension("pub"))
        .unwrap()
        .trim()
        .to_string()
}

/// "ssh-ed25519 AAAA..." without the comment.
fn key_text(private: &Path) -> String {
    let line = pub_line(private);
    let mut parts = line.split(' ');
    format!("{} {}", parts.next().unwrap(), parts.next().unwrap())
}

fn public(private: &Path) -> PublicKey {
    PublicKey::from_openssh(&pub_line(private)).unwrap()
}

fn plain(private: &Path) -> PublicKeyOrCertificate {
    public(private).into()
}

/// Sign `private`.pub as a host certificate with `ca`; returns the cert.
fn host_cert(ca: &Path, private: &Path, principals: Option<&str>, validity: &str) -> Certificate {
    let mut cmd = Command::new("ssh-keygen");
    cmd.args(["-q", "-s"])
        .arg(ca)
        .args(["-I", "test-host", "-h", "-V", validity]);
    if let Some(p) = principals {
        cmd.args(["-n", p]);
    }
    let status = cmd.arg(private.with_extension("pub")).status().unwrap();
    assert!(status.success());
    let mut cert_path = private.as_os_str().to_owned();
    cert_path.push("-cert.pub");
    Certificate::read_file(Path::new(&cert_path)).unwrap()
}

fn known_from(dir: &Path, text: &str) -> (KnownHosts, PathBuf) {
    let path = dir.join("known_hosts");
    fs::write(&path, text).unwrap();
    (KnownHosts::load(std::slice::from_ref(&path)).unwrap(), path)
}

fn hash_line_ourselves(name: &str, salt: &[u8]) -> String {
    let mut mac = HmacSha1::new_from_slice(salt).unwrap();
    mac.update(name.as_bytes());
    let hash = mac.finalize().into_bytes();
    format!("|1|{}|{}", BASE64.encode(salt), BASE64.encode(hash))
}

struct Keys {
    dir: TempDir,
    a: PathBuf,
    b: PathBuf,
    ca: PathBuf,
    other_ca: PathBuf,
}

fn keys() -> Keys {
    let dir = TempDir::new().unwrap();
    let a = keygen(dir.path(), "host_a");
    let b = keygen(dir.path(), "host_b");
    let ca = keygen(dir.path(), "ca");
    let other_ca = keygen(dir.path(), "other_ca");
    Keys {
        dir,
        a,
        b,
        ca,
        other_ca,
    }
}

fn mismatch(path: &Path, line: usize) -> Verdict {
    Verdict::Mismatch {
        file: path.to_path_buf(),
        line,
    }
}

fn revoked(path: &Path, line: usize) -> Verdict {
    Verdict::Revoked {
        file: path.to_path_buf(),
        line,
    }
}

#[test]
fn plain_keys_patterns_and_ports() {
    let k = keys();
    let ka = key_text(&k.a);
    let text = format!(
        "# comment line\n\
         \n\
         alpha.example.com,10.0.0.1 {ka} some comment\n\
         [beta.example.com]:2222 {ka}\n\
         *.wild.example.com,!bad.wild.example.com {ka}\n\
         node?.example.com {ka}\n\
         [gamma.example.com]:22 {ka}\n\
         [*.ports.example.com]:* {ka}\n\
         UPPER.example.com {ka}\n"
    );
    let (known, _) = known_from(k.dir.path(), &text);
    let a = plain(&k.a);
    let cases: &[(&str, u16, Verdict)] = &[
        ("alpha.example.com", 22, Verdict::Trusted),
        ("10.0.0.1", 22, Verdict::Trusted),
        ("ALPHA.example.COM", 22, Verdict::Trusted),
        ("alpha.example.com", 2222, Verdict::Unknown),
        ("beta.example.com", 2222, Verdict::Trusted),
        ("beta.example.com", 22, Verdict::Unknown),
        ("beta.example.com", 2200, Verdict::Unknown),
        ("x.wild.example.com", 22, Verdict::Trusted),
        ("bad.wild.example.com", 22, Verdict::Unknown),
        ("wild.example.com", 22, Verdict::Unknown),
        // `*.wild...` is matched against "[x.wild.example.com]:2022", as OpenSSH does.
        ("x.wild.example.com", 2022, Verdict::Unknown),
        ("node1.example.com", 22, Verdict::Trusted),
        ("node12.example.com", 22, Verdict::Unknown),
        // port 22 is looked up without brackets
        ("gamma.example.com", 22, Verdict::Unknown),
        ("a.ports.example.com", 8022, Verdict::Trusted),
        ("upper.example.com", 22, Verdict::Trusted),
        ("nowhere.example.com", 22, Verdict::Unknown),
    ];
    for (host, port, want) in cases {
        assert_eq!(&known.check(host, *port, &a), want, "{host}:{port}");
    }
}

#[test]
fn mismatch_and_unknown() {
    let k = keys();
    let ka = key_text(&k.a);
    let kb = key_text(&k.b);
    let text = format!("alpha {ka}\nbeta {kb}\nbeta {ka}\n[gamma]:2222 {kb}\n");
    let (known, path) = known_from(k.dir.path(), &text);
    let a = plain(&k.a);
    let b = plain(&k.b);
    assert_eq!(known.check("alpha", 22, &a), Verdict::Trusted);
    assert_eq!(known.check("alpha", 22, &b), mismatch(&path, 1));
    // any listed key matching is enough
    assert_eq!(known.check("beta", 22, &a), Verdict::Trusted);
    assert_eq!(known.check("beta", 22, &b), Verdict::Trusted);
    assert_eq!(known.check("gamma", 2222, &a), mismatch(&path, 4));
    assert_eq!(known.check("gamma", 22, &a), Verdict::Unknown);
    assert_eq!(known.check("delta", 22, &a), Verdict::Unknown);
}

#[test]
fn mismatch_prefers_a_line_of_the_same_algorithm() {
    let k = keys();
    let ka = key_text(&k.a);
    let rsa = keygen_rsa(k.dir.path());
    let text = format!("host {}\nhost {ka}\n", key_text(&rsa));
    let (known, path) = known_from(k.dir.path(), &text);
    assert_eq!(known.check("host", 22, &plain(&k.b)), mismatch(&path, 2));
}

fn keygen_rsa(dir: &Path) -> PathBuf {
    let path = dir.join("rsa_key");
    let status = Command::new("ssh-keygen")
        .args(["-q", "-t", "rsa", "-b", "2048", "-N", "", "-f"])
        .arg(&path)
        .status()
        .unwrap();
    assert!(status.success());
    path
}

#[test]
fn hashed_entries_match_ssh_keygen_both_ways() {
    let k = keys();
    let ka = key_text(&k.a);
    let path = k.dir.path().join("known_hosts");

    // ssh-keygen -H hashes plain lines; we must match what it wrote.
    fs::write(
        &path,
        format!("hashed.example.com {ka}\n[hashed.example.com]:2222 {ka}\n"),
    )
    .unwrap();
    let status = Command::new("ssh-keygen")
        .args(["-q", "-H", "-f"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(status.status.success());
    let hashed = fs::read_to_string(&path).unwrap();
    assert!(hashed.lines().all(|l| l.starts_with("|1|")), "{hashed}");
    let known = KnownHosts::load(std::slice::from_ref(&path)).unwrap();
    let a = plain(&k.a);
    assert_eq!(known.check("hashed.example.com", 22, &a), Verdict::Trusted);
    assert_eq!(
        known.check("hashed.example.com", 2222, &a),
        Verdict::Trusted
    );
    assert_eq!(
        known.check("hashed.example.com", 2200, &a),
        Verdict::Unknown
    );
    assert_eq!(known.check("other.example.com", 22, &a), Verdict::Unknown);
    assert_eq!(
        known.check("hashed.example.com", 22, &plain(&k.b)),
        mismatch(&path, 1)
    );

    // Lines we hash ourselves must be found by ssh-keygen -F, and by us.
    let ours = k.dir.path().join("ours");
    let salt = [7u8; 20];
    fs::write(
        &ours,
        format!(
            "{} {ka}\n{} {ka}\n",
            hash_line_ourselves("mine.example.com", &salt),
            hash_line_ourselves("[mine.example.com]:2222", &salt)
        ),
    )
    .unwrap();
    for query in ["mine.example.com", "[mine.example.com]:2222"] {
        let out = Command::new("ssh-keygen")
            .args(["-F", query, "-f"])
            .arg(&ours)
            .output()
            .unwrap();
        assert!(out.status.success(), "ssh-keygen -F {query} found nothing");
    }
    let known = KnownHosts::load(&[ours]).unwrap();
    assert_eq!(known.check("mine.example.com", 22, &a), Verdict::Trusted);
    assert_eq!(known.check("mine.example.com", 2222, &a), Verdict::Trusted);
}

#[test]
fn revoked_takes_precedence() {
    let k = keys();
    let ka = key_text(&k.a);
    let text = format!(
        "alpha {ka}\n@revoked * {ka}\n@revoked beta {}\n",
        key_text(&k.b)
    );
    let (known, path) = known_from(k.dir.path(), &text);
    assert_eq!(known.check("alpha", 22, &plain(&k.a)), revoked(&path, 2));
    assert_eq!(known.check("other", 2222, &plain(&k.a)), revoked(&path, 2));
    // @revoked lines only apply to the hosts they name
    assert_eq!(known.check("beta", 22, &plain(&k.b)), revoked(&path, 3));
    assert_eq!(known.check("alpha", 22, &plain(&k.b)), mismatch(&path, 1));
}

#[test]
fn cert_authority() {
    let k = keys();
    let ca = key_text(&k.ca);
    let valid = host_cert(&k.ca, &k.a, Some("web.example.com,alias"), "-5m:+1h");
    let no_principals = host_cert(&k.ca, &k.b, None, "-5m:+1h");
    let text = format!(
        "@cert-authority *.example.com,alias {ca}\n\
         @cert-authority [*.example.com]:2222 {ca}\n\
         @cert-authority other.org {}\n",
        key_text(&k.other_ca)
    );
    let (known, _) = known_from(k.dir.path(), &text);
    let cert = PublicKeyOrCertificate::Certificate(valid.clone());
    let cases: &[(&str, u16, Verdict)] = &[
        ("web.example.com", 22, Verdict::Trusted),
        ("web.example.com", 2222, Verdict::Trusted),
        ("alias", 22, Verdict::Trusted),
        // CA listed, principal wrong: falls back to the plain key, which is unknown
        ("db.example.com", 22, Verdict::Unknown),
        // CA not listed for this port / host
        ("web.example.com", 2200, Verdict::Unknown),
        ("web.other.org", 22, Verdict::Unknown),
    ];
    for (host, port, want) in cases {
        assert_eq!(&known.check(host, *port, &cert), want, "{host}:{port}");
    }
    // Empty principal list: accepted for any host under the CA (OpenSSH behaviour).
    let any = PublicKeyOrCertificate::Certificate(no_principals);
    assert_eq!(known.check("db.example.com", 22, &any), Verdict::Trusted);

    // The plain key inside a certificate is still checked as a plain key.
    let (known_plain, path) = known_from(
        k.dir.path(),
        &format!("db.example.com {}\n", key_text(&k.b)),
    );
    assert_eq!(
        known_plain.check("db.example.com", 22, &cert),
        mismatch(&path, 1)
    );
    assert_eq!(
        known_plain.check(
            "db.example.com",
            22,
            &PublicKeyOrCertificate::Certificate(host_cert(&k.ca, &k.b, Some("nope"), "-5m:+1h"))
        ),
        Verdict::Trusted
    );
}

#[test]
fn cert_authority_validity_window_and_type() {
    let k = keys();
    let ca = key_text(&k.ca);
    let (known, path) = known_from(
        k.dir.path(),
        &format!(
            "@cert-authority *.example.com {ca}\nweb.example.com {}\n",
            key_text(&k.b)
        ),
    );
    let expired = host_cert(&k.ca, &k.a, Some("web.example.com"), "20000101:20010101");
    let future = host_cert(&k.ca, &k.a, Some("web.example.com"), "+1d:+2d");
    for cert in [expired.clone(), future] {
        let cert = PublicKeyOrCertificate::Certificate(cert);
        // Rejected certificate: judged by its plain key, which is not b's.
        assert_eq!(
            known.check("web.example.com", 22, &cert),
            mismatch(&path, 2)
        );
        assert_eq!(known.check("api.example.com", 22, &cert), Verdict::Unknown);
    }
    // The same expired certificate checked at a time inside its window is trusted.
    let inside = 978_000_000; // 2000-12-28
    assert_eq!(
        known.check_at(
            "web.example.com",
            22,
            &PublicKeyOrCertificate::Certificate(expired),
            inside
        ),
        Verdict::Trusted
    );

    // A user certificate is never a host certificate.
    let status = Command::new("ssh-keygen")
        .args(["-q", "-s"])
        .arg(&k.ca)
        .args(["-I", "user", "-n", "api.example.com", "-V", "-5m:+1h"])
        .arg(k.other_ca.with_extension("pub"))
        .status()
        .unwrap();
    assert!(status.success());
    let mut cert_path = k.other_ca.as_os_str().to_owned();
    cert_path.push("-cert.pub");
    let user = Certificate::read_file(Path::new(&cert_path)).unwrap();
    assert_eq!(
        known.check(
            "api.example.com",
            22,
            &PublicKeyOrCertificate::Certificate(user)
        ),
        Verdict::Unknown
    );
}

#[test]
fn revoked_ca_rejects_its_certificates() {
    let k = keys();
    let ca = key_text(&k.ca);
    let cert = host_cert(&k.ca, &k.a, Some("web.example.com"), "-5m:+1h");
    let (known, path) = known_from(
        k.dir.path(),
        &format!("@cert-authority *.example.com {ca}\n@revoked * {ca}\n"),
    );
    assert_eq!(
        known.check(
            "web.example.com",
            22,
            &PublicKeyOrCertificate::Certificate(cert)
        ),
        revoked(&path, 2)
    );
}

#[test]
fn malformed_lines_are_skipped() {
    let k = keys();
    let ka = key_text(&k.a);
    let cases = [
        "justahost".to_string(),
        "host ssh-ed25519".to_string(),
        "host ssh-ed25519 !!!notbase64!!!".to_string(),
        "host ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIA==".to_string(),
        format!("@bogus host {ka}"),
        format!("@revoked {ka}"),
        format!("|1|bad|hash {ka}"),
        format!("|2|abc|def {ka}"),
        format!("host,,other {ka}"),
        format!("! {ka}"),
        format!(
            "|1|{}|{} {ka}",
            BASE64.encode([1u8; 20]),
            BASE64.encode([2u8; 5])
        ),
    ];
    let mut text = String::new();
    for bad in &cases {
        text.push_str(bad);
        text.push('\n');
    }
    text.push_str(&format!("good {ka}\r\n"));
    let path = k.dir.path().join("known_hosts");
    let mut bytes = text.into_bytes();
    bytes.extend_from_slice(b"\xff\xfe not utf8\n");
    fs::write(&path, bytes).unwrap();
    let known = KnownHosts::load(std::slice::from_ref(&path)).unwrap();
    assert_eq!(known.len(), 1, "only the good line survives");
    assert_eq!(known.check("good", 22, &plain(&k.a)), Verdict::Trusted);
    assert_eq!(known.check("host", 22, &plain(&k.a)), Verdict::Unknown);
}

#[test]
fn missing_file_is_empty_unreadable_is_error_and_files_combine() {
    let k = keys();
    let missing = k.dir.path().join("does-not-exist");
    assert!(
        KnownHosts::load(std::slice::from_ref(&missing))
            .unwrap()
            .is_empty()
    );
    // A directory cannot be read as a file.
    let err = KnownHosts::load(&[k.dir.path().to_path_buf()]).unwrap_err();
    assert!(matches!(err, KnownHostsError::Read { .. }), "{err}");

    let first = k.dir.path().join("first");
    let second = k.dir.path().join("second");
    fs::write(&first, format!("one {}\n", key_text(&k.a))).unwrap();
    fs::write(&second, format!("\ntwo {}\n", key_text(&k.b))).unwrap();
    let known = KnownHosts::load(&[first, missing, second.clone()]).unwrap();
    assert_eq!(known.check("one", 22, &plain(&k.a)), Verdict::Trusted);
    assert_eq!(known.check("two", 22, &plain(&k.a)), mismatch(&second, 2));
}

#[test]
fn learn_appends_then_trusts() {
    let k = keys();
    let path = k.dir.path().join("new/dir/known_hosts");
    learn(&path, "fresh.example.com", 22, &public(&k.a)).unwrap();
    learn(&path, "fresh.example.com", 2222, &public(&k.b)).unwrap();
    learn(&path, "::1", 2222, &public(&k.a)).unwrap();

    let text = fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], format!("fresh.example.com {}", key_text(&k.a)));
    assert_eq!(
        lines[1],
        format!("[fresh.example.com]:2222 {}", key_text(&k.b))
    );
    assert_eq!(lines[2], format!("[::1]:2222 {}", key_text(&k.a)));

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(path.parent().unwrap()), 0o700);
    }

    let known = KnownHosts::load(std::slice::from_ref(&path)).unwrap();
    assert_eq!(
        known.check("fresh.example.com", 22, &plain(&k.a)),
        Verdict::Trusted
    );
    assert_eq!(
        known.check("fresh.example.com", 2222, &plain(&k.b)),
        Verdict::Trusted
    );
    assert_eq!(known.check("::1", 2222, &plain(&k.a)), Verdict::Trusted);
    assert_eq!(
        known.check("fresh.example.com", 22, &plain(&k.b)),
        mismatch(&path, 1)
    );

    // ssh-keygen agrees with what we wrote.
    let out = Command::new("ssh-keygen")
        .args(["-F", "[fresh.example.com]:2222", "-f"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success());
}

#[test]
fn learn_adds_missing_newline_and_rejects_odd_hosts() {
    let k = keys();
    let path = k.dir.path().join("known_hosts");
    fs::write(&path, format!("old {}", key_text(&k.b))).unwrap();
    learn(&path, "new", 22, &public(&k.a)).unwrap();
    let known = KnownHosts::load(std::slice::from_ref(&path)).unwrap();
    assert_eq!(known.check("old", 22, &plain(&k.b)), Verdict::Trusted);
    assert_eq!(known.check("new", 22, &plain(&k.a)), Verdict::Trusted);

    for bad in [
        "", "a b", "a,b", "*", "h?", "!h", "|1|x", "@revoked", "#x", "a\nb", "[h]",
    ] {
        let err = learn(&path, bad, 22, &public(&k.a)).unwrap_err();
        assert!(
            matches!(err, KnownHostsError::InvalidHost { .. }),
            "{bad:?}"
        );
    }
}
