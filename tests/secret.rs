//! Bolt's encrypted values against the real thing: keys made by `ferry
//! secret createkeys` are read by Ruby's OpenSSL, and values cross both
//! ways with the very calls Bolt's bundled pkcs7 plugin makes
//! (`OpenSSL::PKCS7.encrypt` with AES-256-CBC, `PKCS7#decrypt`, base64 in
//! `ENC[PKCS7,...]`). An inventory's `_plugin: pkcs7` reference resolves
//! to the plaintext, which never shows where a secret must not.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn ferry(dir: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(args)
        .current_dir(dir)
        .env_remove("BOLT_PROJECT")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs Ruby's OpenSSL as the pkcs7 plugin's tasks do.
fn ruby(dir: &Path, script: &str, arg: &str) -> String {
    let out = Command::new("ruby")
        .args(["-ropenssl", "-rbase64", "-e", script, arg])
        .current_dir(dir)
        .output()
        .expect("ruby (installed with puppet by scripts/test.sh)");
    assert!(out.status.success(), "ruby: {}", text(&out.stderr));
    text(&out.stdout)
}

const RUBY_DECRYPT: &str = r#"
cert = OpenSSL::X509::Certificate.new(File.read("k/public.pem"))
key = OpenSSL::PKey::RSA.new(File.read("k/private.pem"))
m = /\AENC\[PKCS7,(?<encoded>[\w\s+-=\\\/]+)\]\s*\z/.match(ARGV[0]) or abort "not ENC"
print OpenSSL::PKCS7.new(Base64.decode64(m[:encoded])).decrypt(key, cert)
"#;

const RUBY_ENCRYPT: &str = r#"
cert = OpenSSL::X509::Certificate.new(File.read("k/public.pem"))
raw = OpenSSL::PKCS7.encrypt([cert], ARGV[0], OpenSSL::Cipher.new("aes-256-cbc"), OpenSSL::PKCS7::BINARY).to_der
print "ENC[PKCS7,#{Base64.encode64(raw).strip}]"
"#;

#[test]
fn values_cross_with_rubys_openssl_and_resolve_in_inventories() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // Key paths and size from the project's plugins.pkcs7, as Bolt reads them.
    std::fs::write(
        dir.join("bolt-project.yaml"),
        "name: secrets\nplugins:\n  pkcs7:\n    keysize: 1024\n    private_key: k/private.pem\n    public_key: k/public.pem\n",
    )
    .unwrap();
    let out = ferry(dir, &["secret", "createkeys"], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("k/public.pem"));
    let mode = |p: &str| std::fs::metadata(dir.join(p)).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode("k/private.pem"), 0o600);
    let size = ruby(
        dir,
        r#"print OpenSSL::PKey::RSA.new(File.read("k/private.pem")).n.num_bits"#,
        "",
    );
    assert_eq!(size, "1024");

    // A key pair is not replaced without --force.
    let before = std::fs::read(dir.join("k/private.pem")).unwrap();
    let out = ferry(dir, &["secret", "createkeys"], None);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("Found existing key pair"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(std::fs::read(dir.join("k/private.pem")).unwrap(), before);

    // ferry encrypts (from standard input: nothing on a command line),
    // Ruby decrypts.
    let secret = "s3cr3t pässword 4711";
    let out = ferry(dir, &["secret", "encrypt", "-"], Some(secret));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let encrypted = text(&out.stdout).trim().to_string();
    assert!(encrypted.starts_with("ENC[PKCS7,"), "{encrypted}");
    assert_eq!(ruby(dir, RUBY_DECRYPT, &encrypted), secret);

    // Ruby encrypts, ferry decrypts.
    let from_ruby = ruby(dir, RUBY_ENCRYPT, "made by ruby");
    let out = ferry(dir, &["secret", "decrypt", &from_ruby], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "made by ruby\n");

    // In an inventory: the value resolves; as a password it is redacted.
    std::fs::write(
        dir.join("inventory.yaml"),
        format!(
            "targets:\n  - name: n1\n    vars:\n      token:\n        _plugin: pkcs7\n        encrypted_value: |\n          {}\n    config:\n      ssh:\n        password: {{_plugin: pkcs7, encrypted_value: '{}'}}\n",
            encrypted.replace('\n', "\n          "),
            from_ruby.replace('\n', "")
        ),
    )
    .unwrap();
    let out = ferry(
        dir,
        &[
            "inventory",
            "show",
            "--detail",
            "--format",
            "json",
            "-t",
            "n1",
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(shown["targets"][0]["vars"]["token"], secret);
    assert!(
        !text(&out.stdout).contains("made by ruby"),
        "{}",
        text(&out.stdout)
    );

    // Another key pair cannot open it; the error shows no plaintext.
    let out = ferry(dir, &["secret", "createkeys", "--force"], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = ferry(dir, &["secret", "decrypt", &encrypted], None);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("not encrypted for this key pair"), "{err}");
    assert!(!err.contains(secret));
    let out = ferry(dir, &["inventory", "show", "-t", "n1"], None);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("inventory.yaml:5:"),
        "{}",
        text(&out.stderr)
    );

    // Bad values: not ENC[PKCS7,...]; no value and no terminal.
    let out = ferry(dir, &["secret", "decrypt", "ENC[PKCS7,abc"], None);
    assert!(text(&out.stderr).contains("could not parse as an encrypted value"));
    let out = ferry(dir, &["secret", "encrypt"], None);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("Must specify a value to encrypt"));
}
