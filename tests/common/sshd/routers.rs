//! [`RouterPair`]: two FRR routers for the network-device tests. Each router
//! is a private network namespace holding FRR's zebra, staticd and bgpd
//! (Debian's `frr` package, run in the foreground with every path under the
//! router's own directory: `-f`, `-i`, `-z`, `--vty_socket`; no TCP vty) and
//! an sshd whose every login runs the router's CLI (`ForceCommand`), as a
//! router's management plane drops a user into it: `vtysh` (privileged from
//! the start) for every user but [`VTY_USER`], who gets zebra's own vty
//! (through `telnet` to 127.0.0.1 in the namespace), which starts in user
//! mode and needs `enable` with [`ENABLE_PASSWORD`]. The sshd
//! listens on the namespace side of a veth pair to the root namespace (the
//! management link, from [`Netns`]); the two routers are joined by a second
//! veth pair, `eth1` on both sides, up and unaddressed: configuring it is the
//! tests' job (a second pair, `eth2`, is the device catalog tests'). Host keys are pinned in one known_hosts file for both.

use std::net::Ipv4Addr;
use std::os::unix::fs::chown;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use tempfile::TempDir;

use super::builder::SshdBuilder;
use super::daemon::Sshd;
use super::jump::{NETNS_PREFIX, Netns, free_subnet, remove_stale_netns};
use super::machine::{ensure_environment, with_lock};
use super::process::{exit_registry, spawn_daemon, terminate_child};
use super::util::{fail, run, set_mode, temp_dir, write_file};

/// FRR's daemons, in start order (zebra first: the others register with it).
const DAEMONS: [&str; 3] = ["zebra", "staticd", "bgpd"];
/// Where Debian installs them.
const FRR_DIR: &str = "/usr/lib/frr";
/// The CLI every login on a router runs.
pub const VTYSH: &str = "/usr/bin/vtysh";
/// The port each router's sshd listens on (its management address).
pub const ROUTER_SSH_PORT: u16 = 22;
/// The interface joining the two routers, on both sides.
pub const LINK_IFACE: &str = "eth1";
/// A second link between them, for the device catalog tests (so that they
/// and the tests that configure the first link do not see each other's
/// lines).
pub const CATALOG_IFACE: &str = "eth2";
/// The login whose CLI is zebra's vty: user mode first, then `enable`.
pub const VTY_USER: &str = super::NOPW_USER;
/// zebra's enable password.
pub const ENABLE_PASSWORD: &str = "en-Secret-4711";
/// Where zebra's vty listens, in the router's namespace.
const VTY_PORT: u16 = 2601;
/// How long FRR's daemons may take to open their vty sockets.
const READY_TIMEOUT: Duration = Duration::from_secs(15);

/// One FRR router: its namespace, daemons and CLI over SSH.
#[derive(Debug)]
pub struct Router {
    name: String,
    sshd: Sshd,
    daemons: Vec<Child>,
    dir: TempDir,
    // Last: the namespace outlives what runs in it.
    netns: Netns,
}

impl Router {
    fn start(name: &str, netns: Netns) -> Router {
        let dir = temp_dir("frr");
        let root = dir.path();
        set_mode(root, 0o755);
        // The daemons drop to the frr user and write their pid files and
        // sockets here; vtysh reads vtysh.conf (the prompt's hostname) from
        // etc/, and saves the integrated configuration there.
        let frr = frr_ids();
        chown(root, Some(frr.0), Some(frr.1))
            .unwrap_or_else(|e| fail(format!("chown {}: {e}", root.display())));
        let etc = root.join("etc");
        std::fs::create_dir_all(&etc).unwrap_or_else(|e| fail(format!("mkdir etc: {e}")));
        // One configuration file for all daemons, which `write memory`
        // writes (Debian's default).
        write_file(
            &etc.join("vtysh.conf"),
            &format!("hostname {name}\nservice integrated-vtysh-config\n"),
            0o644,
        );
        let conf = root.join("frr.conf");
        write_file(
            &conf,
            &format!(
                "hostname {name}\nservice password-encryption\nenable password {ENABLE_PASSWORD}\nline vty\n no login\n"
            ),
            0o640,
        );
        chown(&conf, Some(frr.0), Some(frr.1))
            .unwrap_or_else(|e| fail(format!("chown {}: {e}", conf.display())));
        let cli = root.join("cli.sh");
        write_file(
            &cli,
            &format!(
                "#!/bin/sh\n# The router's CLI for an SSH login (sshd's ForceCommand).\nif [ \"$(id -un)\" = {VTY_USER} ]; then exec telnet 127.0.0.1 {VTY_PORT}; fi\nexec {VTYSH} --vty_socket {} --config_dir {}\n",
                root.display(),
                etc.display()
            ),
            0o755,
        );
        let mut router = Router {
            name: name.to_string(),
            sshd: SshdBuilder {
                listen: vec![netns.ns_addr],
                fixed_port: Some(ROUTER_SSH_PORT),
                netns: Some(netns.name.clone()),
                ..SshdBuilder::default()
            }
            .config(format!("ForceCommand {}", cli.display()))
            .start(),
            daemons: Vec::new(),
            dir,
            netns,
        };
        for daemon in DAEMONS {
            router.start_daemon(daemon);
        }
        router
    }

    fn start_daemon(&mut self, daemon: &str) {
        let root = self.dir.path();
        let path = |f: &str| root.join(f).display().to_string();
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.netns.name])
            .arg(Path::new(FRR_DIR).join(daemon))
            .args(["-u", "frr", "-g", "frr"])
            .args(match daemon {
                "zebra" => [
                    "-A".to_string(),
                    "127.0.0.1".into(),
                    "-P".into(),
                    VTY_PORT.to_string(),
                ],
                _ => [
                    "-A".to_string(),
                    "127.0.0.1".into(),
                    "-P".into(),
                    "0".into(),
                ],
            })
            .args(["--vty_socket", &root.display().to_string()])
            .args(["-z", &path("zserv.api")])
            .args(["-i", &path(&format!("{daemon}.pid"))])
            .args(["-f", &path("frr.conf")])
            .arg(format!("--log=file:{}", path(&format!("{daemon}.log"))))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let child =
            spawn_daemon(cmd).unwrap_or_else(|e| fail(format!("cannot start {daemon}: {e}")));
        exit_registry().daemons.push(child.id());
        self.daemons.push(child);
        // zebra's API socket, then the daemon's vty socket: the next daemon
        // registers with zebra, and vtysh connects to every vty socket.
        let mut ready: Vec<PathBuf> = vec![root.join(format!("{daemon}.vty"))];
        if daemon == "zebra" {
            ready.push(root.join("zserv.api"));
        }
        let deadline = Instant::now() + READY_TIMEOUT;
        while !ready.iter().all(|p| p.exists()) {
            if Instant::now() > deadline {
                let log =
                    std::fs::read_to_string(root.join(format!("{daemon}.log"))).unwrap_or_default();
                fail(format!("{} {daemon} did not start: {log}", self.name));
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// The router's name (also its prompt's hostname).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The management address its sshd listens on.
    pub fn host(&self) -> Ipv4Addr {
        self.netns.ns_addr
    }

    pub fn port(&self) -> u16 {
        ROUTER_SSH_PORT
    }

    /// The router's sshd.
    pub fn sshd(&self) -> &Sshd {
        &self.sshd
    }

    /// The router's network namespace.
    pub fn netns(&self) -> &str {
        &self.netns.name
    }

    /// Runs `commands` in vtysh on the router directly (not over SSH), for
    /// tests to check what a router holds: its output.
    pub fn vtysh(&self, commands: &[&str]) -> String {
        let root = self.dir.path();
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.netns.name, VTYSH])
            .args(["--vty_socket", &root.display().to_string()])
            .args(["--config_dir", &root.join("etc").display().to_string()]);
        for c in commands {
            cmd.args(["-c", c]);
        }
        let out = cmd
            .output()
            .unwrap_or_else(|e| fail(format!("cannot run vtysh: {e}")));
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
    }

    /// Stops (SIGSTOP) one of the router's FRR daemons until the guard is
    /// dropped: commands that need it hang, as on a device that stopped
    /// answering.
    pub fn pause(&self, daemon: &str) -> Paused {
        let pid_file = self.dir.path().join(format!("{daemon}.pid"));
        let pid = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|p| p.trim().parse::<i32>().ok())
            .unwrap_or_else(|| fail(format!("no pid in {}", pid_file.display())));
        // SAFETY: kill(2) has no memory-safety preconditions.
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        Paused(pid)
    }

    /// The startup configuration `write memory` saved, if any.
    pub fn startup_config(&self) -> Option<String> {
        std::fs::read_to_string(self.dir.path().join("etc/frr.conf")).ok()
    }

    /// The process ids of the vtysh sessions SSH logins run on the router.
    pub fn cli_sessions(&self) -> Vec<i32> {
        let pids =
            run(Command::new("ip").args(["netns", "pids", &self.netns.name])).unwrap_or_default();
        pids.split_whitespace()
            .filter_map(|p| p.parse::<i32>().ok())
            .filter(|pid| {
                std::fs::read_link(format!("/proc/{pid}/exe"))
                    .is_ok_and(|exe| exe == Path::new(VTYSH))
            })
            .collect()
    }
}

impl Drop for Router {
    fn drop(&mut self) {
        for child in &mut self.daemons {
            terminate_child(child, true);
        }
    }
}

/// A daemon stopped by [`Router::pause`]; dropping it lets it go on.
#[derive(Debug)]
pub struct Paused(i32);

impl Drop for Paused {
    fn drop(&mut self) {
        // SAFETY: kill(2) has no memory-safety preconditions.
        unsafe { libc::kill(self.0, libc::SIGCONT) };
    }
}

/// Two routers joined by a veth pair ([`LINK_IFACE`] on both sides).
#[derive(Debug)]
pub struct RouterPair {
    routers: [Router; 2],
    known_hosts: PathBuf,
}

impl RouterPair {
    /// Creates both namespaces, the link between them, and starts FRR and
    /// sshd in each. Panics on failure.
    pub fn start() -> RouterPair {
        ensure_environment();
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let pid = std::process::id();
        let netns = |i: usize| {
            let n = COUNTER.fetch_add(1, Ordering::SeqCst);
            with_lock("netns", || {
                remove_stale_netns();
                let (host_addr, ns_addr) = free_subnet();
                Netns::create(
                    format!("{NETNS_PREFIX}{pid}-rt{n}"),
                    format!("frh{pid}x{n}"),
                    format!("frn{pid}x{i}"),
                    host_addr,
                    ns_addr,
                )
            })
        };
        let (ns1, ns2) = (netns(1), netns(2));
        let link: [&[&str]; 6] = [
            &[
                "link", "add", "name", LINK_IFACE, "netns", &ns1.name, "type", "veth", "peer",
                "name", LINK_IFACE, "netns", &ns2.name,
            ],
            &["-n", &ns1.name, "link", "set", LINK_IFACE, "up"],
            &["-n", &ns2.name, "link", "set", LINK_IFACE, "up"],
            &[
                "link",
                "add",
                "name",
                CATALOG_IFACE,
                "netns",
                &ns1.name,
                "type",
                "veth",
                "peer",
                "name",
                CATALOG_IFACE,
                "netns",
                &ns2.name,
            ],
            &["-n", &ns1.name, "link", "set", CATALOG_IFACE, "up"],
            &["-n", &ns2.name, "link", "set", CATALOG_IFACE, "up"],
        ];
        for args in link {
            if let Err(e) = run(Command::new("ip").args(args)) {
                fail(format!("cannot link the routers: {e}"));
            }
        }
        let routers = [Router::start("r1", ns1), Router::start("r2", ns2)];
        let known_hosts = routers[0].dir.path().join("known_hosts_routers");
        write_file(
            &known_hosts,
            &(routers[0].sshd.known_hosts_lines() + &routers[1].sshd.known_hosts_lines()),
            0o644,
        );
        RouterPair {
            routers,
            known_hosts,
        }
    }

    pub fn routers(&self) -> &[Router; 2] {
        &self.routers
    }

    /// known_hosts with both routers' host keys.
    pub fn known_hosts_path(&self) -> &Path {
        &self.known_hosts
    }
}

/// The frr user's and group's ids.
fn frr_ids() -> (u32, u32) {
    let id = |flag: &str| {
        run(Command::new("id").args([flag, "frr"]))
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok())
            .unwrap_or_else(|| {
                fail("no frr user: install the frr package (scripts/test.sh)".into())
            })
    };
    (id("-u"), id("-g"))
}
