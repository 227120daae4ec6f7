//! Connecting over SSH to real OpenSSH servers: every authentication
//! method, every host-key-check mode with a right, an unknown and a wrong
//! key, host certificates against @cert-authority lines (an sshd presenting
//! a certificate made by ssh-keygen), the user's ssh_config, and a ProxyJump chain into a network
//! namespace that only the jump host can reach.

mod common;

use std::process::Command;

use common::ferry::{Scratch, key_line, one_target};
use common::sshd::{
    self, JumpPair, KEY_PASSPHRASE, KeyType, NOPW_USER, PW_USER, Sshd, USER_PASSWORD, client_keys,
};

/// `ferry command run CMD -t TARGETS -i INV --format json`.
fn run_cmd(s: &Scratch, inv: &std::path::Path, cmd: &str, targets: &str) -> common::ferry::Run {
    s.ferry(&[
        "command",
        "run",
        cmd,
        "-t",
        targets,
        "-i",
        inv.to_str().unwrap(),
        "--format",
        "json",
    ])
}

fn run_id(s: &Scratch, inv: &std::path::Path) -> common::ferry::Run {
    run_cmd(s, inv, "id -un", "all")
}

/// The issue code of the only result's error.
fn issue(run: &common::ferry::Run) -> serde_json::Value {
    run.only()["value"]["_error"]["issue_code"].clone()
}

#[test]
fn key_auth_with_every_key_type() {
    let sshd = sshd::shared();
    for kind in [KeyType::Ed25519, KeyType::Ecdsa, KeyType::Rsa] {
        let s = Scratch::new();
        let inv = s.inventory(&one_target(
            sshd,
            "t",
            NOPW_USER,
            &key_line(&client_keys().path(kind)),
        ));
        let run = run_id(&s, &inv);
        assert_eq!(run.code, 0, "{kind:?}: {run:?}");
        assert_eq!(run.only()["value"]["stdout"], format!("{NOPW_USER}\n"));
    }
}

#[test]
fn encrypted_key_with_passphrase_from_config_or_environment() {
    let sshd = sshd::shared();
    let key = key_line(&client_keys().encrypted_path());
    let s = Scratch::new();
    let inv = s.inventory(&one_target(
        sshd,
        "t",
        "root",
        &format!("{key}        private-key-passphrase: {KEY_PASSPHRASE}\n"),
    ));
    let run = run_id(&s, &inv);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.all_text().contains(KEY_PASSPHRASE));

    let inv = s.inventory(&one_target(sshd, "t", "root", &key));
    let run = s.ferry_env(
        &[
            "command",
            "run",
            "true",
            "-t",
            "all",
            "-i",
            inv.to_str().unwrap(),
            "--format",
            "json",
        ],
        &[("FERRY_SSH_KEY_PASSPHRASE", KEY_PASSPHRASE)],
    );
    assert_eq!(run.code, 0, "{run:?}");

    // Without the passphrase: an auth error that says what to do.
    let run = run_id(&s, &inv);
    assert_eq!(run.code, 2);
    let err = &run.only()["value"]["_error"];
    assert_eq!(err["issue_code"], "AUTH_ERROR", "{err}");
    assert!(err["msg"].as_str().unwrap().contains("encrypted"), "{err}");
}

#[test]
fn password_auth_and_wrong_password() {
    let sshd = sshd::shared();
    let s = Scratch::new();
    let inv = s.inventory(&one_target(
        sshd,
        "t",
        PW_USER,
        &format!("        password: {USER_PASSWORD}\n"),
    ));
    let run = run_id(&s, &inv);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.only()["value"]["stdout"], format!("{PW_USER}\n"));
    assert!(!run.all_text().contains(USER_PASSWORD));

    let inv = s.inventory(&one_target(
        sshd,
        "t",
        PW_USER,
        "        password: not-the-password\n",
    ));
    let run = run_id(&s, &inv);
    assert_eq!(run.code, 2, "{run:?}");
    let err = &run.only()["value"]["_error"];
    assert_eq!(err["kind"], "ferry/connect-error");
    assert_eq!(err["issue_code"], "AUTH_ERROR");
    assert!(!run.all_text().contains("not-the-password"));
}

#[test]
fn keyboard_interactive_answers_the_password_prompt() {
    let sshd = Sshd::builder()
        .password_auth(false)
        .kbd_interactive_auth(true)
        .start();
    let s = Scratch::new();
    let inv = s.inventory(&one_target(
        &sshd,
        "t",
        PW_USER,
        &format!("        password: {USER_PASSWORD}\n"),
    ));
    let run = run_id(&s, &inv);
    assert_eq!(run.code, 0, "{run:?}\n{}", sshd.log_tail(20));
    assert_eq!(run.only()["value"]["stdout"], format!("{PW_USER}\n"));
}

#[test]
fn ssh_agent_keys_are_used_when_no_key_is_configured() {
    let sshd = sshd::shared();
    let s = Scratch::new();
    let sock = s.path().join("agent.sock");
    let agent = Command::new("ssh-agent")
        .arg("-D")
        .arg("-a")
        .arg(&sock)
        .spawn()
        .expect("ssh-agent");
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _agent = Kill(agent);
    for _ in 0..100 {
        if sock.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let added = Command::new("ssh-add")
        .arg(client_keys().path(KeyType::Ecdsa))
        .env("SSH_AUTH_SOCK", &sock)
        .output()
        .expect("ssh-add");
    assert!(added.status.success(), "{added:?}");
    let inv = s.inventory(&one_target(sshd, "t", "root", ""));
    let args = [
        "command",
        "run",
        "id -un",
        "-t",
        "all",
        "-i",
        inv.to_str().unwrap(),
        "--format",
        "json",
    ];
    let run = s.ferry_env(&args, &[("SSH_AUTH_SOCK", sock.to_str().unwrap())]);
    assert_eq!(run.code, 0, "{run:?}");
    // And without the agent there is nothing to offer.
    let run = s.ferry(&args);
    assert_eq!(
        run.only()["value"]["_error"]["issue_code"],
        "AUTH_ERROR",
        "{run:?}"
    );
}

fn with_known_hosts(sshd: &Sshd, known_hosts: &std::path::Path, check: &str) -> String {
    format!(
        "targets:\n  - name: t\n    uri: ssh://root@{}:{}\n    config:\n      ssh:\n        known-hosts-file: {}\n        host-key-check: {check}\n        load-config: false\n{}",
        sshd.host(),
        sshd.port(),
        known_hosts.display(),
        key_line(&client_keys().path(KeyType::Ed25519))
    )
}

#[test]
fn host_key_check_modes_with_right_unknown_and_wrong_keys() {
    let sshd = sshd::shared();
    let s = Scratch::new();
    let run_with = |kh: &std::path::Path, check: &str| {
        let inv = s.inventory(&with_known_hosts(sshd, kh, check));
        run_cmd(&s, &inv, "true", "t")
    };
    let unknown = s.path().join("unknown_kh");
    std::fs::write(&unknown, "").unwrap();

    // true (the default): right passes, unknown and wrong fail.
    assert_eq!(run_with(sshd.known_hosts_path(), "true").code, 0);
    assert_eq!(issue(&run_with(&unknown, "true")), "HOST_KEY_ERROR");
    let wrong = run_with(sshd.wrong_known_hosts_path(), "true");
    assert_eq!(issue(&wrong), "HOST_KEY_ERROR");
    assert!(wrong.stdout.contains("does not match"), "{wrong:?}");

    // accept-new: an unknown key is learned into the file, a wrong one still fails.
    assert_eq!(run_with(&unknown, "accept-new").code, 0);
    let learned = std::fs::read_to_string(&unknown).unwrap();
    assert!(
        learned.contains(&format!("[{}]:{}", sshd.host(), sshd.port())),
        "{learned}"
    );
    assert_eq!(
        run_with(&unknown, "true").code,
        0,
        "the learned key is trusted afterwards"
    );
    assert_eq!(
        issue(&run_with(sshd.wrong_known_hosts_path(), "accept-new")),
        "HOST_KEY_ERROR"
    );

    // false: no check at all.
    assert_eq!(run_with(sshd.wrong_known_hosts_path(), "false").code, 0);
    assert_eq!(run_with(&s.path().join("missing"), "false").code, 0);
}

/// An ECDSA host key signed by a fresh CA for `principal`, in `dir`;
/// returns (host key, certificate, CA public key line).
fn host_certificate(dir: &std::path::Path, ca: &str, principal: &str) -> (String, String, String) {
    let keygen = |args: &[&str]| {
        let out = Command::new("ssh-keygen").args(args).output().unwrap();
        assert!(out.status.success(), "ssh-keygen {args:?}: {out:?}");
    };
    let ca_key = dir.join(ca);
    if !ca_key.exists() {
        keygen(&[
            "-q",
            "-t",
            "ed25519",
            "-N",
            "",
            "-C",
            ca,
            "-f",
            ca_key.to_str().unwrap(),
        ]);
    }
    let host_key = dir.join(format!("host_{principal}"));
    keygen(&[
        "-q",
        "-t",
        "ecdsa",
        "-N",
        "",
        "-f",
        host_key.to_str().unwrap(),
    ]);
    let public = format!("{}.pub", host_key.display());
    keygen(&[
        "-q",
        "-s",
        ca_key.to_str().unwrap(),
        "-I",
        "ferry-test-host",
        "-h",
        "-n",
        principal,
        "-V",
        "-1d:+1d",
        &public,
    ]);
    let cert = format!("{}-cert.pub", host_key.display());
    let ca_line = std::fs::read_to_string(dir.join(format!("{ca}.pub"))).unwrap();
    (
        host_key.display().to_string(),
        cert,
        ca_line.trim().to_string(),
    )
}

#[test]
fn host_certificates_are_checked_against_cert_authority_lines() {
    let s = Scratch::new();
    let (key, cert, ca) = host_certificate(s.path(), "ca", "127.0.0.1");
    let (_, _, other_ca) = host_certificate(s.path(), "other_ca", "unused");
    let sshd = Sshd::builder()
        .config(format!("HostKey {key}"))
        .config(format!("HostCertificate {cert}"))
        .start();
    let run_with = |line: &str| {
        let kh = s.path().join("cert_known_hosts");
        std::fs::write(&kh, format!("{line}\n")).unwrap();
        let inv = s.inventory(&with_known_hosts(&sshd, &kh, "true"));
        run_cmd(&s, &inv, "true", "t")
    };
    let port = sshd.port();

    // Only the CA is known: the host's certificate is what gets it in.
    let ok = run_with(&format!("@cert-authority [127.0.0.1]:{port} {ca}"));
    assert_eq!(ok.code, 0, "{ok:?}");
    let ok = run_with(&format!("@cert-authority * {ca}"));
    assert_eq!(ok.code, 0, "wildcard host pattern: {ok:?}");

    // Another CA, a CA listed for other hosts, or a revoked CA: refused.
    let wrong = run_with(&format!("@cert-authority * {other_ca}"));
    assert_eq!(issue(&wrong), "HOST_KEY_ERROR", "{wrong:?}");
    assert!(
        wrong.stderr.contains("host certificate for [127.0.0.1]")
            && wrong.stderr.contains("signing CA"),
        "the certificate was presented and refused: {wrong:?}"
    );
    let elsewhere = run_with(&format!("@cert-authority *.example.com {ca}"));
    assert_eq!(issue(&elsewhere), "HOST_KEY_ERROR", "{elsewhere:?}");
    let revoked = run_with(&format!("@cert-authority * {ca}\n@revoked * {ca}"));
    assert_eq!(issue(&revoked), "HOST_KEY_ERROR", "{revoked:?}");
}

#[test]
fn a_host_certificate_for_another_name_is_refused() {
    let s = Scratch::new();
    let (key, cert, ca) = host_certificate(s.path(), "ca", "other.example.com");
    let sshd = Sshd::builder()
        .config(format!("HostKey {key}"))
        .config(format!("HostCertificate {cert}"))
        .start();
    let kh = s.path().join("cert_known_hosts");
    std::fs::write(&kh, format!("@cert-authority * {ca}\n")).unwrap();
    let inv = s.inventory(&with_known_hosts(&sshd, &kh, "true"));
    let run = run_cmd(&s, &inv, "true", "t");
    assert_eq!(
        run.only()["value"]["_error"]["issue_code"],
        "HOST_KEY_ERROR",
        "{run:?}"
    );
    assert!(run.stdout.contains("127.0.0.1"), "{run:?}");
}

#[test]
fn the_default_known_hosts_file_is_checked() {
    let sshd = sshd::shared();
    let s = Scratch::new();
    let inv = s.inventory(&format!(
        "targets: ['ssh://root@{}:{}']\nconfig:\n  ssh:\n{}",
        sshd.host(),
        sshd.port(),
        key_line(&client_keys().path(KeyType::Ed25519))
    ));
    let args = [
        "command",
        "run",
        "true",
        "-t",
        "all",
        "-i",
        inv.to_str().unwrap(),
        "--format",
        "json",
    ];
    let run = s.ferry(&args);
    assert_eq!(
        run.only()["value"]["_error"]["issue_code"],
        "HOST_KEY_ERROR",
        "{run:?}"
    );
    std::fs::copy(sshd.known_hosts_path(), s.home().join(".ssh/known_hosts")).unwrap();
    assert_eq!(s.ferry(&args).code, 0);
}

#[test]
fn ssh_config_supplies_host_port_user_key_and_known_hosts() {
    let sshd = sshd::shared();
    let s = Scratch::new();
    std::fs::write(
        s.home().join(".ssh/config"),
        format!(
            "Host other\n  User nobody\n\nHost web-alias\n  HostName {}\n  Port {}\n  User {NOPW_USER}\n  IdentityFile {}\n  UserKnownHostsFile {}\n",
            sshd.host(),
            sshd.port(),
            client_keys().path(KeyType::Rsa).display(),
            sshd.known_hosts_path().display()
        ),
    )
    .unwrap();
    let inv = s.inventory("targets: [web-alias]\n");
    let run = run_id(&s, &inv);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.only()["value"]["stdout"], format!("{NOPW_USER}\n"));

    // load-config: false ignores it.
    let inv = s.inventory(
        "targets: [web-alias]\nconfig:\n  ssh:\n    load-config: false\n    connect-timeout: 2\n",
    );
    assert_eq!(run_id(&s, &inv).code, 2);
}

#[test]
fn proxyjump_reaches_a_host_only_the_jump_host_can_reach() {
    let pair = JumpPair::start();
    let s = Scratch::new();
    let (jump_host, jump_port) = pair.jump();
    let (inner_host, inner_port) = pair.inner();
    let key = client_keys().path(KeyType::Ed25519);
    let yaml = format!(
        "config:\n  ssh:\n    user: root\n    private-key: {}\n    known-hosts-file: {}\n    load-config: false\n    connect-timeout: 5\ntargets:\n  - name: inner\n    uri: ssh://{inner_host}:{inner_port}\n    config:\n      ssh:\n        proxyjump: root@{jump_host}:{jump_port}\n  - name: direct\n    uri: ssh://{inner_host}:{inner_port}\n",
        key.display(),
        pair.known_hosts_path().display()
    );
    let inv = s.inventory(&yaml);
    let run = s.ferry(&[
        "command",
        "run",
        "hostname; echo inside",
        "-t",
        "all",
        "-i",
        inv.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(run.item("inner")["status"], "success", "{run:?}");
    assert!(
        run.item("inner")["value"]["stdout"]
            .as_str()
            .unwrap()
            .contains("inside")
    );
    // The inner host is not reachable without the jump.
    assert_eq!(
        run.item("direct")["value"]["_error"]["issue_code"],
        "CONNECT_ERROR",
        "{run:?}"
    );

    // A chain of two hops (the jump host twice) works too, and every hop's
    // host key is verified: with a known_hosts lacking the jump host, it fails.
    let chain = yaml.replace(
        &format!("proxyjump: root@{jump_host}:{jump_port}"),
        &format!("proxyjump: root@{jump_host}:{jump_port},root@{jump_host}:{jump_port}"),
    );
    let inv = s.inventory(&chain);
    let run = s.ferry(&[
        "command",
        "run",
        "echo chained",
        "-t",
        "inner",
        "-i",
        inv.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(run.only()["status"], "success", "{run:?}");
    let inner_only = s.path().join("inner_only");
    let inner_line: String = std::fs::read_to_string(pair.known_hosts_path())
        .unwrap()
        .lines()
        .filter(|l| l.starts_with(&format!("[127.0.0.1]:{inner_port}")))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(!inner_line.is_empty());
    std::fs::write(&inner_only, inner_line).unwrap();
    let inv = s.inventory(&chain.replace(
        &pair.known_hosts_path().display().to_string(),
        &inner_only.display().to_string(),
    ));
    let run = run_cmd(&s, &inv, "true", "inner");
    assert_eq!(
        run.only()["value"]["_error"]["issue_code"],
        "HOST_KEY_ERROR",
        "{run:?}"
    );
}
