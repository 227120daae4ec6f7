//! [`Fleet`]: hundreds of SSH targets served by a handful of daemons, each
//! listening on up to 16 loopback addresses and sharing one host key.

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::thread;

use tempfile::TempDir;

use super::builder::SshdBuilder;
use super::daemon::{HostKey, Sshd, known_hosts_lines};
use super::keys::{KeyType, generate_key};
use super::machine::ensure_environment;
use super::util::{set_mode, temp_dir, write_file};

/// sshd's `MAX_LISTEN_SOCKS`: one daemon listens on at most this many sockets.
const MAX_LISTEN_SOCKS: usize = 16;

/// Many SSH targets served by a few daemons: each daemon listens on up to 16
/// loopback addresses (127.100.x.y, sshd's MAX_LISTEN_SOCKS limit) on one
/// port, and all of them share one ed25519 host key.
#[derive(Debug)]
pub struct Fleet {
    sshds: Vec<Sshd>,
    targets: Vec<(String, u16)>,
    known_hosts: PathBuf,
    host_public_key: String,
    // Last: the daemons read the host key from here.
    dir: TempDir,
}

impl Fleet {
    /// Starts `n` targets (1..=64000). Panics on failure.
    pub fn start(n: usize) -> Fleet {
        assert!(
            (1..=64_000).contains(&n),
            "sshd fixture: Fleet::start({n}): n must be in 1..=64000"
        );
        ensure_environment();
        let dir = temp_dir("fleet");
        set_mode(dir.path(), 0o755);
        let key_path = dir.path().join("ssh_host_ed25519_key");
        let host_public_key = generate_key(KeyType::Ed25519, &key_path, "", "ferry-test-fleet");
        let host_key = HostKey {
            kind: KeyType::Ed25519,
            path: key_path,
            public: host_public_key.clone(),
        };
        let addrs: Vec<Ipv4Addr> = (0..n)
            .map(|i| Ipv4Addr::new(127, 100, (i / 250) as u8, (i % 250 + 1) as u8))
            .collect();
        let sshds: Vec<Sshd> = thread::scope(|scope| {
            let starting: Vec<_> = addrs
                .chunks(MAX_LISTEN_SOCKS)
                .map(|chunk| {
                    let builder = SshdBuilder {
                        listen: chunk.to_vec(),
                        host_keys: Some(vec![host_key.clone()]),
                        ..SshdBuilder::default()
                    };
                    scope.spawn(move || builder.start())
                })
                .collect();
            starting
                .into_iter()
                .map(|daemon| {
                    daemon
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect()
        });
        let targets: Vec<(String, u16)> = sshds
            .iter()
            .flat_map(|sshd| {
                sshd.listen_addrs()
                    .iter()
                    .map(move |addr| (addr.to_string(), sshd.port()))
            })
            .collect();
        let known_hosts = dir.path().join("known_hosts");
        let lines: String = targets
            .iter()
            .map(|(host, port)| known_hosts_lines(host, *port, std::slice::from_ref(&host_key)))
            .collect();
        write_file(&known_hosts, &lines, 0o644);
        Fleet {
            sshds,
            targets,
            known_hosts,
            host_public_key,
            dir,
        }
    }

    /// Every target as (address, port), in a stable order.
    pub fn targets(&self) -> &[(String, u16)] {
        &self.targets
    }

    /// Number of targets.
    pub fn len(&self) -> usize {
        self.targets.len()
    }

    /// Always false: a fleet has at least one target.
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    /// known_hosts file covering every target.
    pub fn known_hosts_path(&self) -> &Path {
        &self.known_hosts
    }

    /// The host public key all targets share, as `"ssh-ed25519 <base64>"`.
    pub fn host_public_key(&self) -> &str {
        &self.host_public_key
    }

    /// The daemons serving the targets (16 targets each).
    pub fn sshds(&self) -> &[Sshd] {
        &self.sshds
    }
}
