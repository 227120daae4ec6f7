//! Network devices against real FRR routers (tests/common/sshd/routers.rs):
//! two routers, each FRR in its own network namespace behind an sshd whose
//! logins run vtysh, joined by a veth pair. One pair serves every test of
//! this binary.

mod common;

use std::io::Write;
use std::process::Stdio;
use std::sync::OnceLock;

use common::sshd::{self, KeyType, LINK_IFACE, RouterPair, client_keys};

/// The routers every test of this binary shares.
fn routers() -> &'static RouterPair {
    static PAIR: OnceLock<RouterPair> = OnceLock::new();
    PAIR.get_or_init(RouterPair::start)
}

#[test]
fn fixture_logins_drop_into_vtysh_on_each_router() {
    let pair = routers();
    for r in pair.routers() {
        let brief = r.vtysh(&["show interface brief"]);
        assert!(
            brief
                .lines()
                .any(|l| l.starts_with(LINK_IFACE) && l.contains(" up ")),
            "{}: {brief}",
            r.name()
        );
        let mut ssh = sshd::openssh_command(
            &r.host().to_string(),
            r.port(),
            "root",
            &client_keys().path(KeyType::Ed25519),
            pair.known_hosts_path(),
        )
        .arg("-tt")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ssh");
        ssh.stdin
            .take()
            .expect("stdin")
            .write_all(b"show version\nexit\n")
            .expect("write");
        let out = ssh.wait_with_output().expect("ssh output");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains(&format!("{}# ", r.name())) && text.contains("FRRouting"),
            "{}: {text}\n{}",
            r.name(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
