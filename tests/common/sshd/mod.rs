//! Real OpenSSH servers for integration tests.
//!
//! [`Sshd`] runs Debian's `/usr/sbin/sshd -D -e` on a free loopback port with
//! its own temporary directory: host keys, `sshd_config`, per-user
//! `authorized_keys`, known_hosts files for the client, the pid file and the
//! daemon's log. Client keys of every type (plus a passphrase-protected
//! ed25519 key) are generated once per test process ([`client_keys`]) and
//! authorized for `root`, [`NOPW_USER`] and [`PW_USER`]. Those two local
//! accounts, their password and their sudo rules are created on first use,
//! idempotently and under a lock file shared by test binaries that run in
//! parallel. [`shared`] gives every test of a binary the same daemon with the
//! default configuration; [`Fleet`] serves hundreds of targets from a handful
//! of daemons; [`JumpPair`] puts a jump host and an inner host into a private
//! network namespace for ProxyJump tests; [`RouterPair`] runs two FRR routers,
//! each in its own namespace with an sshd whose logins run vtysh, for the
//! network-device tests. [`SshdBuilder::sandboxed`] runs a
//! daemon in a throwaway copy of the machine's root ([`Sandbox`]), for tests
//! that create users, packages or files anywhere.
//!
//! Daemons are spawned from one thread that lives as long as the process, with
//! `PR_SET_PDEATHSIG`, so they die with the test process even if it is killed.
//! An `atexit` hook also kills the process tree of every daemon still running
//! (statics are never dropped) and removes the temporary directories. All of
//! this needs root. Setup failures panic with a message that includes the tail
//! of the daemon's log.

mod builder;
mod daemon;
mod fleet;
mod jump;
mod keys;
mod launch;
mod machine;
mod process;
mod routers;
mod sandbox;
mod util;

// Each test binary uses only part of the fixture (see `common/mod.rs`), so
// some of these re-exports go unused in any one of them.
#[allow(unused_imports)]
pub use self::{
    builder::SshdBuilder,
    daemon::{Sshd, openssh_command, shared},
    fleet::Fleet,
    jump::JumpPair,
    keys::{ClientKeys, KeyType, client_keys},
    routers::{CATALOG_IFACE, ENABLE_PASSWORD, LINK_IFACE, Router, RouterPair, VTY_USER},
    sandbox::Sandbox,
};

/// The OpenSSH daemon the fixture runs.
pub const SSHD_BIN: &str = "/usr/sbin/sshd";
/// The SFTP server configured as the `sftp` subsystem.
pub const SFTP_SERVER: &str = "/usr/lib/openssh/sftp-server";
/// Local user allowed to run anything with sudo without a password.
pub const NOPW_USER: &str = "ferry-nopw";
/// Local user allowed to run anything with sudo after typing [`USER_PASSWORD`].
pub const PW_USER: &str = "ferry-pw";
/// Login (and sudo) password of both [`NOPW_USER`] and [`PW_USER`].
pub const USER_PASSWORD: &str = "ferry-Test-pw-7";
/// Users whose `authorized_keys` hold every client key.
pub const LOGIN_USERS: [&str; 3] = ["root", NOPW_USER, PW_USER];
/// Passphrase of [`ClientKeys::encrypted_path`].
pub const KEY_PASSPHRASE: &str = "ferry test passphrase";
/// Port of the jump host in a [`JumpPair`] (on its veth address).
pub const JUMP_PORT: u16 = 2222;
/// Port of the inner host in a [`JumpPair`] (on the namespace's 127.0.0.1).
pub const INNER_PORT: u16 = 2200;
