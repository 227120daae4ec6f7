//! [`JumpPair`]: a jump host and an inner host in a private network
//! namespace joined to the root namespace by a veth pair, for ProxyJump
//! tests; and the namespace plumbing (creating, entering, deleting, and
//! removing namespaces left behind by dead test processes).

use std::fs::File;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use super::builder::SshdBuilder;
use super::daemon::Sshd;
use super::machine::{ensure_environment, with_lock};
use super::process::exit_registry;
use super::util::{fail, run, write_file};
use super::{INNER_PORT, JUMP_PORT};

/// Network namespaces created here are named `<prefix><pid>-<n>`.
pub(super) const NETNS_PREFIX: &str = "ferry-test-";

/// A jump host and an inner host in a private network namespace.
///
/// The namespace is joined to the root namespace by a veth pair on a /30 from
/// 10.251.0.0/16. The jump daemon listens on the namespace side of the veth
/// ([`JUMP_PORT`]); the inner daemon listens only on the namespace's own
/// 127.0.0.1 ([`INNER_PORT`]), so it is reachable through the jump host and
/// not from the test process. Dropping it stops both daemons and deletes the
/// namespace and the veth pair.
#[derive(Debug)]
pub struct JumpPair {
    jump: Sshd,
    inner: Sshd,
    known_hosts: PathBuf,
    // Last: the namespace must outlive the daemons running in it.
    netns: Netns,
}

impl JumpPair {
    /// Creates the namespace and starts both daemons. Panics on failure,
    /// notably if the sandbox does not allow network namespaces.
    pub fn start() -> JumpPair {
        ensure_environment();
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let pid = std::process::id();
        let netns = with_lock("netns", || {
            remove_stale_netns();
            let (host_addr, ns_addr) = free_subnet();
            Netns::create(
                format!("{NETNS_PREFIX}{pid}-{n}"),
                format!("fjh{pid}x{n}"),
                format!("fjn{pid}x{n}"),
                host_addr,
                ns_addr,
            )
        });
        let in_netns = |listen: Ipv4Addr, port: u16| SshdBuilder {
            listen: vec![listen],
            fixed_port: Some(port),
            netns: Some(netns.name.clone()),
            ..SshdBuilder::default()
        };
        let jump = in_netns(netns.ns_addr, JUMP_PORT).start();
        let inner = in_netns(Ipv4Addr::LOCALHOST, INNER_PORT).start();
        let known_hosts = jump.dir().join("known_hosts_jump_pair");
        write_file(
            &known_hosts,
            &(jump.known_hosts_lines() + &inner.known_hosts_lines()),
            0o644,
        );
        JumpPair {
            jump,
            inner,
            known_hosts,
            netns,
        }
    }

    /// The jump host as reachable from the test process: (veth address, port).
    pub fn jump(&self) -> (&str, u16) {
        (self.jump.host(), self.jump.port())
    }

    /// The inner host as seen from the jump host: ("127.0.0.1", port).
    pub fn inner(&self) -> (&str, u16) {
        (self.inner.host(), self.inner.port())
    }

    /// The jump daemon.
    pub fn jump_sshd(&self) -> &Sshd {
        &self.jump
    }

    /// The inner daemon.
    pub fn inner_sshd(&self) -> &Sshd {
        &self.inner
    }

    /// known_hosts file with both hosts' keys (the inner one as `[127.0.0.1]:port`).
    pub fn known_hosts_path(&self) -> &Path {
        &self.known_hosts
    }

    /// Name of the network namespace.
    pub fn netns(&self) -> &str {
        &self.netns.name
    }

    /// Root-namespace end of the veth pair: (interface name, address).
    pub fn host_side(&self) -> (&str, Ipv4Addr) {
        (&self.netns.veth_host, self.netns.host_addr)
    }
}

/// A network namespace plus veth pair, deleted on drop.
#[derive(Debug)]
pub(super) struct Netns {
    pub(super) name: String,
    veth_host: String,
    host_addr: Ipv4Addr,
    pub(super) ns_addr: Ipv4Addr,
}

impl Netns {
    pub(super) fn create(
        name: String,
        veth_host: String,
        veth_ns: String,
        host_addr: Ipv4Addr,
        ns_addr: Ipv4Addr,
    ) -> Netns {
        if let Err(e) = run(Command::new("ip").args(["netns", "add", &name])) {
            fail(format!(
                "cannot create a network namespace (is `ip netns` permitted in this sandbox?): {e}"
            ));
        }
        exit_registry().netns.push(name.clone());
        // From here on, dropping `netns` (also while panicking) cleans up.
        let netns = Netns {
            name,
            veth_host,
            host_addr,
            ns_addr,
        };
        let (ns, vh, vn) = (&netns.name, &netns.veth_host, veth_ns.as_str());
        let host_cidr = format!("{host_addr}/30");
        let ns_cidr = format!("{ns_addr}/30");
        let steps: [&[&str]; 6] = [
            &[
                "link", "add", vh, "type", "veth", "peer", "name", vn, "netns", ns,
            ],
            &["addr", "add", &host_cidr, "dev", vh],
            &["link", "set", vh, "up"],
            &["-n", ns, "addr", "add", &ns_cidr, "dev", vn],
            &["-n", ns, "link", "set", vn, "up"],
            &["-n", ns, "link", "set", "lo", "up"],
        ];
        for args in steps {
            if let Err(e) = run(Command::new("ip").args(args)) {
                fail(format!("network namespace setup failed: {e}"));
            }
        }
        netns
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        delete_netns(&self.name);
        // Deleting the namespace destroys the veth pair; make sure anyway.
        if Path::new("/sys/class/net").join(&self.veth_host).exists() {
            let _ = run(Command::new("ip").args(["link", "del", &self.veth_host]));
        }
        exit_registry().netns.retain(|n| *n != self.name);
    }
}

/// Kills whatever still runs in the namespace and deletes it.
pub(super) fn delete_netns(name: &str) {
    if let Ok(pids) = run(Command::new("ip").args(["netns", "pids", name])) {
        for pid in pids
            .split_whitespace()
            .filter_map(|p| p.parse::<i32>().ok())
        {
            // SAFETY: kill(2) has no memory-safety preconditions.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
    let _ = run(Command::new("ip").args(["netns", "del", name]));
}

/// Deletes namespaces left behind by test processes that no longer exist.
pub(super) fn remove_stale_netns() {
    let Ok(list) = run(Command::new("ip").args(["netns", "list"])) else {
        return;
    };
    for name in list
        .lines()
        .filter_map(|line| line.split_whitespace().next())
    {
        let Some(owner) = name
            .strip_prefix(NETNS_PREFIX)
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{owner}")).exists() {
            delete_netns(name);
        }
    }
}

/// The first 10.251.x.y/30 whose host address is unused: (host side, namespace side).
/// Must be called under the "netns" lock, until the address is assigned.
pub(super) fn free_subnet() -> (Ipv4Addr, Ipv4Addr) {
    let used = run(Command::new("ip").args(["-4", "-o", "addr", "show"]))
        .unwrap_or_else(|e| fail(format!("cannot list addresses: {e}")));
    for k in 0..16_384u32 {
        let base = u32::from(Ipv4Addr::new(10, 251, 0, 0)) + 4 * k;
        let host = Ipv4Addr::from(base + 1);
        if !used.contains(&format!("inet {host}/")) {
            return (host, Ipv4Addr::from(base + 2));
        }
    }
    fail("no free /30 left in 10.251.0.0/16".into())
}

pub(super) fn enter_netns(name: &str) -> Result<(), String> {
    let path = format!("/run/netns/{name}");
    let file = File::open(&path).map_err(|e| format!("open {path}: {e}"))?;
    // SAFETY: setns(2) on a namespace file descriptor we own; it only affects
    // the calling thread's network namespace.
    if unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(format!("setns({path}): {}", io::Error::last_os_error()));
    }
    Ok(())
}
