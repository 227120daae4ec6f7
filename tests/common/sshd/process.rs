//! Daemon processes: spawning them from a long-lived keeper thread with
//! `PR_SET_PDEATHSIG`, signalling and reaping whole process trees, and the
//! `atexit` hook that cleans up daemons, network namespaces and temporary
//! directories that statics leave behind.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::{Mutex, MutexGuard, Once, OnceLock, TryLockError, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use super::jump::delete_netns;
use super::util::{fail, lock};

/// How long [`Sshd::stop`] waits after SIGTERM before it uses SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(2);

type SpawnRequest = (Command, mpsc::Sender<io::Result<Child>>);

/// Spawns a daemon from a thread that lives as long as the process, with
/// PR_SET_PDEATHSIG set to SIGKILL: the kernel sends that signal when the
/// spawning *thread* exits, so spawning from short-lived test threads would
/// kill shared daemons too early.
pub(super) fn spawn_daemon(mut cmd: Command) -> io::Result<Child> {
    static KEEPER: OnceLock<mpsc::Sender<SpawnRequest>> = OnceLock::new();
    let keeper = KEEPER.get_or_init(|| {
        let (requests, incoming) = mpsc::channel::<SpawnRequest>();
        thread::Builder::new()
            .name("ferry-sshd-keeper".into())
            .spawn(move || {
                for (mut cmd, reply) in incoming {
                    let _ = reply.send(cmd.spawn());
                }
            })
            .unwrap_or_else(|e| fail(format!("cannot start the keeper thread: {e}")));
        requests
    });
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the hook runs between fork and exec and only makes
    // async-signal-safe system calls; it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(io::Error::last_os_error());
            }
            // The parent may have died before prctl() took effect.
            if libc::getppid() != parent {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
    let (reply, response) = mpsc::channel();
    keeper
        .send((cmd, reply))
        .map_err(|_| io::Error::other("keeper thread is gone"))?;
    response
        .recv()
        .map_err(|_| io::Error::other("keeper thread is gone"))?
}

/// Ends a daemon we spawned and reaps it. `kill`: SIGKILL the whole tree at
/// once. Otherwise SIGTERM the tree, then SIGKILL what is left after
/// [`STOP_GRACE`].
pub(super) fn terminate_child(child: &mut Child, kill: bool) {
    // Until it is reaped, the pid cannot be reused, so signalling it is safe.
    if !matches!(child.try_wait(), Ok(None)) {
        return;
    }
    let root = child.id();
    if kill {
        signal_tree(root, libc::SIGKILL);
    } else {
        let tree = signal_tree(root, libc::SIGTERM);
        let deadline = Instant::now() + STOP_GRACE;
        while Instant::now() < deadline && tree.iter().any(ProcessId::is_alive) {
            thread::sleep(Duration::from_millis(10));
        }
        for process in tree.iter().filter(|p| p.is_alive()) {
            process.signal(libc::SIGKILL);
        }
    }
    let _ = child.wait();
}

/// A process identified by pid and start time, so a recycled pid is not
/// mistaken for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct ProcessId {
    pub(super) pid: u32,
    start: u64,
}

impl ProcessId {
    /// The first child of `parent` found in /proc, if it has one.
    pub(super) fn first_child_of(parent: u32) -> Option<ProcessId> {
        process_tree(parent).get(1).copied()
    }

    pub(super) fn is_alive(&self) -> bool {
        read_stat(self.pid).is_some_and(|(_, start, state)| start == self.start && state != 'Z')
    }

    fn signal(&self, signal: i32) {
        if read_stat(self.pid).is_some_and(|(_, start, _)| start == self.start) {
            // SAFETY: kill(2) has no memory-safety preconditions.
            unsafe { libc::kill(self.pid as i32, signal) };
        }
    }
}

/// (parent pid, start time, state) of a process, from /proc/<pid>/stat.
fn read_stat(pid: u32) -> Option<(u32, u64, char)> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid ... starttime(22nd field)"; comm may contain spaces.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    let ppid = fields.get(1)?.parse().ok()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((ppid, start, state))
}

/// `root` and all its descendants.
fn process_tree(root: u32) -> Vec<ProcessId> {
    let mut children: HashMap<u32, Vec<ProcessId>> = HashMap::new();
    let mut root_id = None;
    if let Ok(entries) = fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
                continue;
            };
            let Some((ppid, start, _)) = read_stat(pid) else {
                continue;
            };
            let id = ProcessId { pid, start };
            if pid == root {
                root_id = Some(id);
            }
            children.entry(ppid).or_default().push(id);
        }
    }
    let mut tree: Vec<ProcessId> = root_id.into_iter().collect();
    let mut next = 0;
    while next < tree.len() {
        if let Some(kids) = children.get(&tree[next].pid) {
            tree.extend(kids);
        }
        next += 1;
    }
    tree
}

/// Sends `signal` to `root` and all its descendants. They are SIGSTOPped
/// first, so none can fork or be reparented (escaping the tree) in between;
/// they are SIGCONTinued afterwards so that they can act on the signal.
fn signal_tree(root: u32, signal: i32) -> Vec<ProcessId> {
    let mut frozen: Vec<ProcessId> = Vec::new();
    let mut seen: HashSet<ProcessId> = HashSet::new();
    loop {
        let fresh: Vec<ProcessId> = process_tree(root)
            .into_iter()
            .filter(|p| seen.insert(*p))
            .collect();
        if fresh.is_empty() {
            break;
        }
        for process in &fresh {
            process.signal(libc::SIGSTOP);
        }
        frozen.extend(fresh);
    }
    for process in &frozen {
        process.signal(signal);
        if signal != libc::SIGKILL {
            process.signal(libc::SIGCONT);
        }
    }
    frozen
}

/// What the exit hook cleans up: daemon pids (not yet reaped), temp dirs and
/// network namespaces.
pub(super) struct ExitRegistry {
    pub(super) daemons: Vec<u32>,
    pub(super) dirs: Vec<PathBuf>,
    pub(super) netns: Vec<String>,
}

static EXIT_REGISTRY: Mutex<ExitRegistry> = Mutex::new(ExitRegistry {
    daemons: Vec::new(),
    dirs: Vec::new(),
    netns: Vec::new(),
});

pub(super) fn exit_registry() -> MutexGuard<'static, ExitRegistry> {
    lock(&EXIT_REGISTRY)
}

pub(super) fn unregister_daemon(pid: u32) {
    exit_registry().daemons.retain(|&p| p != pid);
}

/// Registers (once) an `atexit` hook that cleans up what statics leave behind.
pub(super) fn install_exit_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        extern "C" fn cleanup_at_exit() {
            let _ = std::panic::catch_unwind(|| {
                let registry = match EXIT_REGISTRY.try_lock() {
                    Ok(registry) => registry,
                    Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
                    Err(TryLockError::WouldBlock) => return,
                };
                for &pid in &registry.daemons {
                    signal_tree(pid, libc::SIGKILL);
                }
                for name in &registry.netns {
                    delete_netns(name);
                }
                for dir in &registry.dirs {
                    let _ = fs::remove_dir_all(dir);
                }
            });
        }
        // SAFETY: registering a function that never unwinds (catch_unwind).
        let rc = unsafe { libc::atexit(cleanup_at_exit) };
        assert_eq!(rc, 0, "sshd fixture: atexit() failed");
    });
}
