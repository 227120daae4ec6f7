//! Launching the `sshd` process for a configuration already on disk and
//! waiting until it is ready (listening on every address and sending its
//! SSH banner), plus finding a port that is free on every listen address.

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use super::SSHD_BIN;
use super::builder::SshdBuilder;
use super::jump::enter_netns;
use super::process::{spawn_daemon, terminate_child};
use super::sandbox;
use super::util::fail;

/// How long a daemon may take to accept connections and send its banner.
const READY_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a launch failed; `port_taken` failures are retried on another port.
pub(super) struct LaunchError {
    pub(super) port_taken: bool,
    pub(super) message: String,
}

/// Spawns the daemon with the configuration already in `dir` and waits until
/// it is ready: its log reports listening on every address, and the first
/// address answers with an SSH banner. On failure the daemon is killed and
/// reaped.
pub(super) fn launch(spec: &SshdBuilder, dir: &Path, port: u16) -> Result<Child, LaunchError> {
    let log_path = dir.join("sshd.log");
    let log = File::create(&log_path).map_err(|e| LaunchError {
        port_taken: false,
        message: format!("cannot create {}: {e}", log_path.display()),
    })?;
    let log_clone = log.try_clone().map_err(|e| LaunchError {
        port_taken: false,
        message: format!("cannot duplicate the log file handle: {e}"),
    })?;
    let mut argv: Vec<OsString> = vec![
        SSHD_BIN.into(),
        "-D".into(),
        "-e".into(),
        "-f".into(),
        dir.join("sshd_config").into(),
    ];
    if spec.sandbox {
        argv = sandbox::wrap(dir, argv);
    }
    if let Some(ns) = &spec.netns {
        let prefix = ["ip", "netns", "exec", ns].map(OsString::from);
        argv.splice(0..0, prefix);
    }
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(log_clone)
        .stderr(log);
    let mut child = spawn_daemon(cmd).map_err(|e| LaunchError {
        port_taken: false,
        message: format!("cannot spawn {}: {e}", argv[0].to_string_lossy()),
    })?;
    match wait_ready(&mut child, spec, &log_path, port) {
        Ok(()) => Ok(child),
        Err(e) => {
            terminate_child(&mut child, true);
            Err(e)
        }
    }
}

fn wait_ready(
    child: &mut Child,
    spec: &SshdBuilder,
    log_path: &Path,
    port: u16,
) -> Result<(), LaunchError> {
    let deadline = Instant::now() + READY_TIMEOUT;
    let listening: Vec<String> = spec
        .listen
        .iter()
        .map(|addr| format!("Server listening on {addr} port {port}."))
        .collect();
    let mut last_problem = String::from("no \"Server listening\" line in the log yet");
    loop {
        let log = fs::read_to_string(log_path).unwrap_or_default();
        let port_taken = log.contains("Address already in use");
        match child.try_wait() {
            Ok(Some(status)) => {
                return Err(LaunchError {
                    port_taken,
                    message: format!("sshd exited ({status}) before it was ready"),
                });
            }
            Ok(None) => {}
            Err(e) => {
                return Err(LaunchError {
                    port_taken: false,
                    message: format!("cannot check the sshd process: {e}"),
                });
            }
        }
        if port_taken {
            return Err(LaunchError {
                port_taken,
                message: format!("port {port} already in use"),
            });
        }
        // The log lines prove that *our* daemon bound and listens on every
        // address (sshd logs them after listen()); the banner proves that its
        // accept loop serves connections (all sockets share that loop).
        if listening.iter().all(|line| log.contains(line)) {
            let first = SocketAddr::new(spec.listen[0].into(), port);
            match probe_banner(spec.netns.as_deref(), first) {
                Ok(()) => return Ok(()),
                Err(e) => last_problem = e,
            }
        }
        if Instant::now() >= deadline {
            return Err(LaunchError {
                port_taken: false,
                message: format!(
                    "sshd not ready after {} s ({last_problem})",
                    READY_TIMEOUT.as_secs()
                ),
            });
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// Connects to `addr` (inside network namespace `netns`, if given) and checks
/// that the server greets with `SSH-2.0-`.
fn probe_banner(netns: Option<&str>, addr: SocketAddr) -> Result<(), String> {
    let Some(netns) = netns else {
        return read_banner(addr);
    };
    let netns = netns.to_owned();
    // setns() moves only the calling thread, so probe from a throwaway thread.
    thread::spawn(move || {
        enter_netns(&netns)?;
        read_banner(addr)
    })
    .join()
    .unwrap_or_else(|_| Err("banner probe thread panicked".into()))
}

fn read_banner(addr: SocketAddr) -> Result<(), String> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(1))
        .map_err(|e| format!("connect to {addr}: {e}"))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(2)))
        .map_err(|e| format!("set_read_timeout: {e}"))?;
    let mut banner = Vec::new();
    let mut byte = [0u8; 1];
    while banner.len() < 255 && !banner.ends_with(b"\n") {
        match stream.read(&mut byte) {
            Ok(0) => break,
            Ok(_) => banner.push(byte[0]),
            Err(e) => return Err(format!("read banner from {addr}: {e}")),
        }
    }
    // Identify ourselves so that sshd logs a plain disconnect, not a protocol error.
    let _ = stream.write_all(b"SSH-2.0-ferry-fixture-probe\r\n");
    if banner.starts_with(b"SSH-2.0-") {
        Ok(())
    } else {
        Err(format!(
            "unexpected banner from {addr}: {:?}",
            String::from_utf8_lossy(&banner)
        ))
    }
}

/// Picks a port that is free on every address in `listen` (bind to port 0,
/// read the port, release it). The caller retries if someone takes it first.
pub(super) fn free_port(listen: &[Ipv4Addr]) -> u16 {
    for _ in 0..100 {
        let first = TcpListener::bind((listen[0], 0))
            .unwrap_or_else(|e| fail(format!("cannot bind {}:0: {e}", listen[0])));
        let port = first
            .local_addr()
            .unwrap_or_else(|e| fail(format!("local_addr: {e}")))
            .port();
        let others: io::Result<Vec<TcpListener>> = listen[1..]
            .iter()
            .map(|&addr| TcpListener::bind((addr, port)))
            .collect();
        if others.is_ok() {
            return port;
        }
    }
    fail(format!("no port is free on all of {listen:?}"))
}
