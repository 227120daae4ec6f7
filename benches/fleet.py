#!/usr/bin/env python3
"""Side-by-side fleet benchmark: ferry vs. parallel-ssh, pyinfra, Ansible, OpenSSH.

Starts N sshd targets on loopback (a few sshd processes, each listening on many
127.x.y.z addresses), then runs the same trivial command and the same 1 MiB
upload on all N targets with every tool, measuring for each run:

  * wall time,
  * client CPU (user+sys of the tool's whole process tree, reaped descendants
    included, daemonised leftovers included via PR_SET_CHILD_SUBREAPER),
  * target CPU (all fleet sshd processes and everything they spawned),
  * peak client memory (largest single process ru_maxrss, and a sampled peak of
    the summed PSS of the whole tree),
  * how many targets actually succeeded (uploads: checked on every target).

`--ops tasks` runs ten tasks in a row instead (ferry task run x10, one ferry
plan run, a pyinfra deploy, an ansible-playbook); see benches/tasks.py.

Usage:
  python3 benches/fleet.py --targets 200 --concurrency 50 [--only ferry,pssh]

Only loopback traffic. Everything it starts is stopped on exit.
"""

from __future__ import annotations

import argparse
import base64
import ctypes
import datetime
import hashlib
import json
import os
import platform
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, asdict

if __name__ == "__main__":
    # Op modules (tasks.py) do `from fleet import ...`: let them get this very
    # module, not a second copy with its own globals (LAUNCHER).
    sys.modules.setdefault("fleet", sys.modules["__main__"])

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH_DIR)
VENV = os.path.join(BENCH_DIR, ".venv")
VENV_BIN = os.path.join(VENV, "bin")
SSHD = "/usr/sbin/sshd"
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
PR_SET_CHILD_SUBREAPER = 36
# sshd (OpenSSH 9.2) refuses more than MAX_LISTEN_SOCKS = 16 listen sockets per
# process ("Too many listen sockets. Enlarge MAX_LISTEN_SOCKS"), so with
# --shared-sshd the fleet is split over ceil(N / 16) sshd listeners.
MAX_LISTEN_SOCKS = 16
UPLOAD_SIZE = int(os.environ.get("FERRY_BENCH_UPLOAD_SIZE", 1 << 20))
LAUNCHER: str | None = None  # compiled peers/rusage.c, see build_launcher()

# The TASKS benchmark's ops (benches/tasks.py), one per kind of work a step
# does: shell builtins only, or mkdir and cat as processes. `--ops tasks`
# runs both.
TASK_OPS = ("tasks-builtins", "tasks-procs", "tasks-pplan")
# What `--ops tasks` means: the two ten-task ops (tasks-pplan, the
# Puppet-language plan against pyinfra, is asked for by name).
TASKS_DEFAULT = ("tasks-builtins", "tasks-procs")
ALL_TOOLS = [
    "ferry",
    "ferry-plan",  # --ops tasks only: one `ferry plan run` (see tasks.py)
    "pssh",
    "pssh-scp",
    "pyinfra",
    "ansible",
    "openssh",
    "openssh-defkex",
]
PY_PEERS = {"parallel-ssh": "pssh", "pyinfra": "pyinfra", "ansible-core": "ansible"}


def log(msg: str) -> None:
    print(f"[fleet {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# /proc helpers
# --------------------------------------------------------------------------

def read_stat(pid: int):
    """Return (ppid, utime+stime, cutime+cstime, rss_bytes) or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read().decode("latin-1")
    except OSError:
        return None
    rest = data[data.rfind(")") + 2:].split()
    # rest[0] is field 3 (state); field n is rest[n-3]
    ppid = int(rest[1])
    own = int(rest[11]) + int(rest[12])
    children = int(rest[13]) + int(rest[14])
    rss = int(rest[21]) * PAGE
    return ppid, own, children, rss


def all_pids():
    for name in os.listdir("/proc"):
        if name.isdigit():
            yield int(name)


def process_table():
    table = {}
    for pid in all_pids():
        st = read_stat(pid)
        if st is not None:
            table[pid] = st
    return table


def descendants(roots, table):
    kids = {}
    for pid, st in table.items():
        kids.setdefault(st[0], []).append(pid)
    out, stack = [], list(roots)
    while stack:
        p = stack.pop()
        for c in kids.get(p, ()):
            out.append(c)
            stack.append(c)
    return out


# --------------------------------------------------------------------------
# Fleet
# --------------------------------------------------------------------------

class Fleet:
    def __init__(self, n: int, port: int, workdir: str, real_home: bool = False,
                 per_sshd: int = 1):
        self.n = n
        self.real_home = real_home
        # per_sshd == 1: every target is its own sshd in its own mount
        # namespace with a private tmpfs on self.dest_dir, so uploads to the
        # "same" path land in N distinct files (and tools that skip unchanged
        # files can't see another target's copy). per_sshd > 1 packs up to
        # MAX_LISTEN_SOCKS addresses into one sshd sharing one filesystem.
        self.per_sshd = per_sshd
        self.dest_dir = os.path.join(workdir, "dest")
        self.target_pid: dict[str, int] = {}
        self.port = port
        self.dir = workdir
        self.addrs = [f"127.42.{i // 250}.{i % 250 + 1}" for i in range(n)]
        self.supervisor: subprocess.Popen | None = None
        self.listener_pids: list[int] = []
        self.key = os.path.join(workdir, "id_ed25519")
        self.host_key = os.path.join(workdir, "ssh_host_ed25519_key")
        self.known_hosts = os.path.join(workdir, "known_hosts")
        self.authorized_keys = os.path.join(workdir, "authorized_keys")

    @property
    def pids(self):
        """Every fleet process that is not a session: supervisor + listeners."""
        return ([self.supervisor.pid] if self.supervisor else []) + self.listener_pids

    def setup(self):
        for path, comment in ((self.host_key, "fleet-host"), (self.key, "fleet-client")):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", path],
                           check=True)
        shutil.copy(self.key + ".pub", self.authorized_keys)
        host_pub = open(self.host_key + ".pub").read().split()
        with open(self.known_hosts, "w") as f:
            for a in self.addrs:
                f.write(f"[{a}]:{self.port} {host_pub[0]} {host_pub[1]}\n")
        # root's ~/.bashrc on the dev machines runs `pyenv init` (~100 ms per
        # session); point HOME at an empty dir so the target shell is lean.
        self.home = os.path.join(self.dir, "home")
        os.makedirs(self.home, exist_ok=True)
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # privsep dir sshd insists on
        sftp = "/usr/lib/openssh/sftp-server"
        if not os.path.exists(sftp):
            sftp = "internal-sftp"
        os.makedirs(self.dest_dir, exist_ok=True)
        commands = []
        for idx in range(0, self.n, self.per_sshd):
            chunk = self.addrs[idx: idx + self.per_sshd]
            k = idx // self.per_sshd
            cfg = os.path.join(self.dir, f"sshd_config.{k}")
            with open(cfg, "w") as f:
                for a in chunk:
                    f.write(f"ListenAddress {a}:{self.port}\n")
                f.write(f"""HostKey {self.host_key}
PidFile {self.dir}/sshd.{k}.pid
AuthorizedKeysFile {self.authorized_keys}
StrictModes no
PermitRootLogin yes
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
UseDNS no
PrintMotd no
LogLevel ERROR
MaxStartups 1000:30:1000
MaxSessions 100
Subsystem sftp {sftp}
""")
                if not self.real_home:
                    f.write(f"SetEnv HOME={self.home}\n")
            argv = [SSHD, "-D", "-f", cfg, "-E", os.path.join(self.dir, f"sshd.{k}.log")]
            if self.per_sshd == 1:
                argv = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                        'mount -t tmpfs -o size=64m,mode=1777 fleet-dest "$0" && exec "$@"',
                        self.dest_dir, *argv]
            commands.append((chunk, argv))
        spec = os.path.join(self.dir, "supervisor.json")
        with open(spec, "w") as f:
            json.dump([argv for _, argv in commands], f)
        # The listeners run under a supervisor that is itself a subreaper: any
        # target-side process orphaned when its session ends is re-parented to
        # (and reaped by) the supervisor, so its CPU lands in the target
        # column, never in the client column.
        self.supervisor = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--supervise", spec],
            stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 30
        while not os.path.exists(spec + ".pids"):
            if self.supervisor.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("fleet supervisor failed to start the sshd listeners")
            time.sleep(0.05)
        with open(spec + ".pids") as f:
            self.listener_pids = json.load(f)
        for (chunk, _), pid in zip(commands, self.listener_pids):
            for a in chunk:
                self.target_pid[a] = pid
        self.wait_ready()

    def wait_ready(self, timeout=30.0):
        pending = set(self.addrs)
        deadline = time.monotonic() + timeout
        while pending and time.monotonic() < deadline:
            dead = [p for p in self.listener_pids if read_stat(p) is None or _state(p) == "Z"]
            if dead or self.supervisor.poll() is not None:
                raise RuntimeError(f"sshd listener exited; see {self.dir}/sshd.*.log")
            for a in list(pending):
                try:
                    with socket.create_connection((a, self.port), timeout=2) as s:
                        if s.recv(64).startswith(b"SSH-2.0-"):
                            pending.discard(a)
                except OSError:
                    pass
            if pending:
                time.sleep(0.1)
        if pending:
            raise RuntimeError(f"{len(pending)} targets never answered, e.g. {sorted(pending)[:3]}")
        self.wait_idle()

    def target_path(self, addr: str, path: str) -> str:
        """Path of `path` as seen by target `addr` (inside its mount namespace)."""
        return f"/proc/{self.target_pid[addr]}/root{path}"

    def cpu_ticks(self) -> int:
        """CPU of the supervisor, all sshd listeners and every reaped descendant
        (sessions, their children, orphans reaped by the supervisor), in ticks."""
        total = 0
        for pid in self.pids:
            st = read_stat(pid)
            if st:
                total += st[1] + st[2]
        return total

    def wait_idle(self, timeout=60.0) -> bool:
        """Wait until the fleet is back to supervisor + listeners only (every
        session and every orphan reaped, so its CPU is in cutime/cstime)."""
        deadline = time.monotonic() + timeout
        base = set(self.listener_pids)
        while time.monotonic() < deadline:
            table = process_table()
            if set(descendants([self.supervisor.pid], table)) <= base:
                return True
            time.sleep(0.05)
        return False

    def stop(self):
        """Stop the supervisor, which stops the listeners and reaps everything."""
        sup = self.supervisor
        if sup is None:
            return
        if sup.poll() is None:
            sup.terminate()
        try:
            sup.wait(timeout=15)
        except subprocess.TimeoutExpired:
            # Last resort: kill whatever is left of the fleet by pid.
            for p in descendants([sup.pid], process_table()):
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            sup.kill()
            sup.wait()
        self.supervisor = None
        self.listener_pids = []


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
        return data[data.rfind(")") + 2]
    except OSError:
        return "?"


def supervise(spec: str) -> int:
    """Fleet supervisor (runs as `fleet.py --supervise SPEC`): subreaper parent
    of every sshd listener; reaps sessions' orphans; on SIGTERM (or when the
    harness dies) terminates the listeners and waits for all descendants."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG: die with the harness

    class Stop(Exception):
        pass

    def on_signal(_s, _f):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise Stop()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    listeners = []
    try:
        with open(spec) as f:
            for argv in json.load(f):
                listeners.append(subprocess.Popen(argv, stdin=subprocess.DEVNULL).pid)
        with open(spec + ".pids.tmp", "w") as f:
            json.dump(listeners, f)
        os.rename(spec + ".pids.tmp", spec + ".pids")
        alive = set(listeners)
        while alive:
            pid, _ = os.waitpid(-1, 0)  # reaps sessions' orphans as well
            alive.discard(pid)
        return 1  # every listener died on its own
    except Stop:
        pass
    for pid in listeners:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 5
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return 0
        if pid == 0:
            if time.monotonic() > deadline:
                for p in descendants([os.getpid()], process_table()):
                    try:
                        os.kill(p, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                deadline = time.monotonic() + 5
            time.sleep(0.05)


# --------------------------------------------------------------------------
# Measurement
# --------------------------------------------------------------------------

@dataclass
class Result:
    tool: str
    op: str
    ok: bool = False
    skipped: str | None = None
    exit_code: int | None = None
    success: int = 0
    targets: int = 0
    wall_s: float = 0.0
    client_cpu_s: float = 0.0
    client_user_s: float = 0.0
    client_sys_s: float = 0.0
    target_cpu_s: float = 0.0
    max_rss_kib: int = 0          # largest single process in the tree
    peak_tree_pss_kib: int = 0    # sampled peak of the summed PSS of the tree
    note: str = ""
    errors: list = field(default_factory=list)

    @property
    def client_ms_per_target(self):
        return 1000 * self.client_cpu_s / self.targets if self.targets else 0.0

    @property
    def target_ms_per_target(self):
        return 1000 * self.target_cpu_s / self.targets if self.targets else 0.0


def pss_bytes(pid: int, fallback: int) -> int:
    """Proportional set size (shared pages split between sharers), so summing
    over a tree of forked workers doesn't count shared pages 50 times."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            for line in f:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return fallback


class RssSampler(threading.Thread):
    """Samples the summed PSS of the tool's process tree; keeps the peak.
    The sampling interval adapts (>= 3x the time a scan takes) so the
    sampler's own CPU stays small next to the tool's."""

    def __init__(self, root_pid: int, exclude: set[int], interval=0.1, include_root=True):
        super().__init__(daemon=True)
        self.root = root_pid
        self.include_root = include_root
        self.exclude = exclude
        self.interval = interval
        self.peak = 0
        self._halt = threading.Event()

    def run(self):
        me = os.getpid()
        while not self._halt.is_set():
            table = process_table()
            # The tool's tree, plus anything it daemonised (re-parented to us).
            roots = [self.root] + [p for p, st in table.items()
                                   if st[0] == me and p not in self.exclude and p != self.root]
            pids = set(roots) | set(descendants(roots, table))
            if not self.include_root:
                pids.discard(self.root)  # the rusage launcher itself
            t0 = time.perf_counter()
            total = sum(pss_bytes(p, table[p][3]) for p in pids if p in table)
            self.peak = max(self.peak, total)
            self._halt.wait(max(self.interval, 3 * (time.perf_counter() - t0)))

    def stop(self):
        self._halt.set()
        self.join()


def reap_leftovers(exclude: set[int]):
    """Terminate and reap processes the tool daemonised (re-parented to us as
    subreaper, e.g. ssh ControlPersist masters). Returns their summed rusage."""
    me = os.getpid()
    user = sys_ = 0.0
    maxrss = 0
    count = 0
    names = set()
    for _ in range(50):
        table = process_table()
        left = [p for p, st in table.items() if st[0] == me and p not in exclude]
        if not left:
            break
        names.update(_cmdline(p).split(" ")[0] for p in left)
        for p in left:
            try:
                os.kill(p, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for p in left:
            try:
                _, _, ru = os.wait4(p, 0)
            except ChildProcessError:
                continue
            count += 1
            user += ru.ru_utime
            sys_ += ru.ru_stime
            maxrss = max(maxrss, ru.ru_maxrss)
    return user, sys_, maxrss, f"{count} ({', '.join(sorted(n for n in names if n))})" if count else ""


def measure(fleet: Fleet, tool: str, op: str, argv, *, env=None, cwd=None, timeout=900.0,
            stdin_data: str | None = None):
    """Run argv, wait for it and its whole tree; returns (Result, stdout, stderr)."""
    res = Result(tool=tool, op=op, targets=fleet.n)
    out_path = os.path.join(fleet.dir, f"out.{tool}.{op}")
    err_path = os.path.join(fleet.dir, f"err.{tool}.{op}")
    if not fleet.wait_idle(60):
        res.note += "fleet not idle before run; "
    exclude = set(fleet.pids)
    t_before = fleet.cpu_ticks()
    ru_path = os.path.join(fleet.dir, f"rusage.{tool}.{op}.json")
    if LAUNCHER:
        argv = [LAUNCHER, ru_path, *argv]
    stdin = subprocess.PIPE if stdin_data is not None else subprocess.DEVNULL
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, stdout=out, stderr=err, stdin=stdin, env=env, cwd=cwd,
                             start_new_session=True)
        exclude.add(p.pid)
        sampler = RssSampler(p.pid, exclude, include_root=not LAUNCHER)
        sampler.start()
        if stdin_data is not None:
            p.stdin.write(stdin_data.encode())
            p.stdin.close()
        killer = threading.Timer(timeout, lambda: os.killpg(p.pid, signal.SIGKILL))
        killer.start()
        try:
            _, status, ru = os.wait4(p.pid, 0)
        except BaseException:  # Ctrl-C / SIGTERM: take the tool's whole group down too
            killer.cancel()
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.wait4(p.pid, 0)
            p.returncode = -9
            sampler.stop()
            reap_leftovers(set(fleet.pids))
            raise
        res.wall_s = time.perf_counter() - t0
        killer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)  # keep Popen from waiting again
        sampler.stop()
    lu, ls, lrss, nleft = reap_leftovers(set(fleet.pids))
    if nleft:
        res.note += f"{nleft} daemonised leftover process(es) terminated and counted as client; "
    if not fleet.wait_idle(60):
        res.note += "fleet sessions still alive after run; "
    t_after = fleet.cpu_ticks()
    res.exit_code = p.returncode
    utime, stime, maxrss = ru.ru_utime, ru.ru_stime, ru.ru_maxrss
    if LAUNCHER:
        try:
            with open(ru_path) as f:
                doc = json.load(f)
            utime, stime, maxrss = doc["utime"], doc["stime"], doc["maxrss_kib"]
        except (OSError, ValueError, KeyError):
            res.note += "launcher wrote no rusage; using the launcher's; "
    else:
        res.note += "no C launcher: max RSS includes the harness's pre-exec RSS; "
    res.client_user_s = utime + lu
    res.client_sys_s = stime + ls
    res.client_cpu_s = res.client_user_s + res.client_sys_s
    res.max_rss_kib = max(maxrss, lrss)
    res.peak_tree_pss_kib = sampler.peak // 1024
    res.target_cpu_s = (t_after - t_before) / CLK_TCK
    with open(out_path, "rb") as f:
        stdout = f.read().decode("utf-8", "replace")
    with open(err_path, "rb") as f:
        stderr = f.read().decode("utf-8", "replace")
    return res, stdout, stderr


# --------------------------------------------------------------------------
# Tools
# --------------------------------------------------------------------------

def build_launcher(workdir: str) -> str | None:
    src = os.path.join(BENCH_DIR, "peers", "rusage.c")
    exe = os.path.join(workdir, "rusage")
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        log("warning: no C compiler; tools are started from Python and their max RSS "
            "includes the harness's pre-exec RSS")
        return None
    r = subprocess.run([cc, "-O2", "-o", exe, src], capture_output=True, text=True)
    if r.returncode != 0:
        log(f"warning: building the rusage launcher failed: {r.stderr.strip()}")
        return None
    return exe


def ensure_venv(tools):
    need = [pkg for pkg, t in PY_PEERS.items() if any(x.startswith(t) for x in tools)]
    if not need:
        return
    py = os.path.join(VENV_BIN, "python")
    if not os.path.exists(py):
        log("creating benches/.venv")
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
    missing = []
    for pkg in need:
        r = subprocess.run([py, "-m", "pip", "show", "-q", pkg], capture_output=True)
        if r.returncode != 0:
            missing.append(pkg)
    if missing:
        log(f"pip install {' '.join(missing)}")
        subprocess.run([py, "-m", "pip", "install", "-q", *missing], check=False)


def tool_version(argv):
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        return (r.stdout or r.stderr).strip().splitlines()[0]
    except Exception as e:  # noqa: BLE001
        return f"unknown ({e})"


class Bench:
    def __init__(self, fleet: Fleet, concurrency: int, ferry_bin: str):
        self.f = fleet
        self.c = concurrency
        self.ferry = ferry_bin
        d = fleet.dir
        self.hosts_file = os.path.join(d, "hosts.txt")
        with open(self.hosts_file, "w") as fh:
            fh.write("\n".join(fleet.addrs) + "\n")
        self.src = os.path.join(d, "upload.bin")
        payload = os.urandom(UPLOAD_SIZE)
        self.src_sha = hashlib.sha256(payload).digest()
        with open(self.src, "wb") as fh:
            fh.write(payload)
        self.versions = {}
        self._write_ferry_inventory()
        self._write_pyinfra_inventory()
        self._write_ansible_inventory()
        self.base_env = dict(os.environ)
        self.base_env.pop("SSH_AUTH_SOCK", None)  # no agent: every tool uses the key file

    # -- inventories ------------------------------------------------------
    def _write_ferry_inventory(self):
        self.ferry_inv = os.path.join(self.f.dir, "inventory.yaml")
        with open(self.ferry_inv, "w") as fh:
            fh.write(f"""config:
  transport: ssh
  ssh:
    user: root
    private-key: {self.f.key}
    known-hosts-file: {self.f.known_hosts}
    host-key-check: true
    load-config: false
targets:
""")
            for a in self.f.addrs:
                fh.write(f"  - ssh://{a}:{self.f.port}\n")

    def _write_pyinfra_inventory(self):
        self.pyinfra_inv = os.path.join(self.f.dir, "pyinfra_inventory.py")
        data = {
            "ssh_port": self.f.port,
            "ssh_user": "root",
            "ssh_key": self.f.key,
            "ssh_known_hosts_file": self.f.known_hosts,
            "ssh_strict_host_key_checking": "yes",
            "ssh_allow_agent": False,
            "ssh_look_for_keys": False,
        }
        with open(self.pyinfra_inv, "w") as fh:
            fh.write(f"fleet = ({self.f.addrs!r}, {data!r})\n")

    def _write_ansible_inventory(self):
        self.ansible_inv = os.path.join(self.f.dir, "ansible_hosts.ini")
        with open(self.ansible_inv, "w") as fh:
            fh.write("[fleet]\n")
            for a in self.f.addrs:
                fh.write(f"{a}\n")
            fh.write(f"""
[fleet:vars]
ansible_port={self.f.port}
ansible_user=root
ansible_ssh_private_key_file={self.f.key}
ansible_ssh_common_args=-o UserKnownHostsFile={self.f.known_hosts} -o StrictHostKeyChecking=yes
ansible_python_interpreter=/usr/bin/python3
""")

    # -- runners ----------------------------------------------------------
    def available(self, tool):
        if tool == "ferry":
            if not os.access(self.ferry, os.X_OK):
                return f"binary {self.ferry} not found (build with cargo build --profile dist)"
            r = subprocess.run([self.ferry, "command", "run", "--help"], capture_output=True, text=True)
            if r.returncode != 0:
                return "ferry has no `command run` subcommand yet"
            self.versions["ferry"] = tool_version([self.ferry, "--version"])
            import hot_symbols
            found, listed = hot_symbols.coverage(self.ferry)
            if found < 0.9 * listed:
                log(f"warning: {self.ferry} has {found} of the {listed} functions in "
                    "benches/hot-symbols.txt: its hot code is spread out, and its memory "
                    "figures are higher than they should be (run benches/hot_symbols.py)")
            return None
        if tool == "ferry-plan":
            import tasks
            return tasks.plan_support(self, self.ferry)
        if tool.startswith("pssh"):
            py = os.path.join(VENV_BIN, "python")
            r = subprocess.run([py, "-c", "import pssh, ssh2, importlib.metadata as m; print(m.version('parallel-ssh'))"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                return "parallel-ssh not installed in benches/.venv"
            self.versions["parallel-ssh"] = r.stdout.strip()
            return None
        if tool == "pyinfra":
            exe = os.path.join(VENV_BIN, "pyinfra")
            if not os.path.exists(exe):
                return "pyinfra not installed in benches/.venv"
            self.versions["pyinfra"] = tool_version([exe, "--version"])
            return None
        if tool == "ansible":
            exe = os.path.join(VENV_BIN, "ansible")
            if not os.path.exists(exe):
                return "ansible-core not installed in benches/.venv"
            self.versions["ansible"] = tool_version([exe, "--version"])
            return None
        if tool.startswith("openssh"):
            if not shutil.which("ssh") or not shutil.which("xargs"):
                return "ssh or xargs not found"
            self.versions["openssh"] = tool_version(["ssh", "-V"])
            return None
        return "unknown tool"

    def run(self, tool, op):
        if op in TASK_OPS:
            import tasks
            res = tasks.run(self, tool, op)  # verifies every target itself
        elif tool == "ferry-plan":
            return None  # plans only exist for --ops tasks
        else:
            res = getattr(self, f"run_{tool.replace('-', '_')}")(op)
        if res is None:
            return None
        if op == "upload":
            self.verify_upload(res)
        res.ok = res.success == self.f.n and res.exit_code == 0
        if res.ok:
            res.errors = []
        return res

    def dest(self, tool):
        return os.path.join(self.f.dest_dir, f"bench-upload-{tool}")

    def verify_upload(self, res: Result):
        """Check the file each target actually received (via /proc/<sshd>/root),
        independently of what the tool reported; then delete it."""
        good = 0
        bad = []
        for a in self.f.addrs:
            path = self.f.target_path(a, self.dest(res.tool))
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
                if hashlib.sha256(data).digest() == self.src_sha:
                    good += 1
                else:
                    bad.append(f"{a}: content differs ({len(data)} bytes)")
                if self.f.per_sshd == 1:
                    os.unlink(path)
            except OSError as e:
                bad.append(f"{a}: {e.strerror}")
        if self.f.per_sshd > 1:
            res.note += "targets share one filesystem: upload check is per sshd, not per target; "
            good = self.f.n if good else 0
        if good != res.success:
            res.note += f"tool reported {res.success} ok, verified {good}; "
        res.success = min(res.success, good)
        if bad:
            res.errors = (res.errors + bad)[:8]

    def run_ferry(self, op):
        if op == "command":
            argv = [self.ferry, "command", "run", "echo ok"]
        else:
            argv = [self.ferry, "file", "upload", self.src, self.dest("ferry")]
        argv += ["-t", "all", "-i", self.ferry_inv, "--concurrency", str(self.c), "--format", "json"]
        res, out, err = measure(self.f, "ferry", op, argv, env=self.base_env, cwd=self.f.dir)
        res.success, note = count_ferry_json(out, res.exit_code, self.f.n, op)
        res.note += note
        if res.success != self.f.n:
            res.errors = tail(err, out)
        return res

    def _pssh(self, op, tool, mode_upload):
        py = os.path.join(VENV_BIN, "python")
        argv = [py, os.path.join(BENCH_DIR, "peers", "pssh_bench.py"),
                "--hosts-file", self.hosts_file, "--port", str(self.f.port), "--key", self.f.key,
                "--known-hosts", self.f.known_hosts, "--concurrency", str(self.c)]
        if op == "command":
            argv += ["--mode", "command", "--command", "echo ok"]
        else:
            argv += ["--mode", mode_upload, "--src", self.src, "--dest", self.dest(tool)]
        res, out, err = measure(self.f, tool, op, argv, env=self.base_env, cwd=self.f.dir)
        try:
            doc = json.loads(out.strip().splitlines()[-1])
            res.success = doc["ok"]
            res.errors = doc["errors"][:5]
        except Exception:  # noqa: BLE001
            res.errors = tail(err, out)
        return res

    def run_pssh(self, op):
        res = self._pssh(op, "pssh", "sftp")
        res.note += "upload via copy_file (SFTP); " if op == "upload" else ""
        return res

    def run_pssh_scp(self, op):
        if op == "command":
            return None  # identical to pssh for commands
        res = self._pssh(op, "pssh-scp", "scp")
        res.note += "upload via scp_send; "
        return res

    def pyinfra_argv(self):
        exe = os.path.join(VENV_BIN, "pyinfra")
        return [exe, self.pyinfra_inv, "-y", "--parallel", str(self.c), "--no-wait"]

    def pyinfra_env(self):
        return dict(self.base_env, PYINFRA_PROGRESS="off", NO_COLOR="1")

    def run_pyinfra(self, op):
        common = self.pyinfra_argv()
        if op == "command":
            argv = common + ["exec", "--", "echo", "ok"]
        else:
            argv = common + ["files.put", f"src={self.src}", f"dest={self.dest('pyinfra')}"]
        res, out, err = measure(self.f, "pyinfra", op, argv, env=self.pyinfra_env(), cwd=self.f.dir)
        res.success, res.errors = count_pyinfra(out + err, self.f.addrs, op)
        return res

    def ansible_env(self):
        home = os.path.join(self.f.dir, "ansible-home")
        os.makedirs(home, exist_ok=True)
        return dict(self.base_env,
                   ANSIBLE_HOME=home,
                   ANSIBLE_LOCAL_TEMP=os.path.join(home, "tmp"),
                   ANSIBLE_HOST_KEY_CHECKING="True",
                   ANSIBLE_PIPELINING="True",
                   ANSIBLE_NOCOLOR="1",
                   ANSIBLE_RETRY_FILES_ENABLED="False",
                   ANSIBLE_SSH_CONTROL_PATH_DIR=os.path.join(home, "cp"))

    def run_ansible(self, op):
        exe = os.path.join(VENV_BIN, "ansible")
        env = self.ansible_env()
        if op == "command":
            mod = ["-m", "command", "-a", "echo ok"]
        else:
            mod = ["-m", "copy", "-a", f"src={self.src} dest={self.dest('ansible')}"]
        argv = [exe, "all", "-i", self.ansible_inv, "-f", str(self.c), "-o", *mod]
        res, out, err = measure(self.f, "ansible", op, argv, env=env, cwd=self.f.dir)
        res.success, res.errors = count_ansible_oneline(out, op)
        if not res.errors and res.success != self.f.n:
            res.errors = tail(err, out)
        return res

    def _openssh(self, op, tool, kex):
        opts = ["-F", "/dev/null", "-o", "BatchMode=yes", "-o", f"UserKnownHostsFile={self.f.known_hosts}",
                "-o", "StrictHostKeyChecking=yes", "-o", "GlobalKnownHostsFile=/dev/null",
                "-o", "IdentitiesOnly=yes", "-i", self.f.key, "-o", "User=root"]
        if kex:
            opts += ["-o", f"KexAlgorithms={kex}"]
        if op == "command":
            argv = ["xargs", "-P", str(self.c), "-I{}", "ssh", *opts, "-p", str(self.f.port),
                    "{}", "echo ok"]
        else:
            argv = ["xargs", "-P", str(self.c), "-I{}", "scp", "-q", *opts, "-P", str(self.f.port),
                    self.src, f"{{}}:{self.dest(tool)}"]
        res, out, err = measure(self.f, tool, op, argv, env=self.base_env, cwd=self.f.dir,
                                stdin_data="\n".join(self.f.addrs) + "\n")
        if op == "command":
            res.success = sum(1 for line in out.splitlines() if line.strip() == "ok")
        else:
            # scp prints nothing on success (-q); xargs exits 0 only if every
            # invocation exited 0. On failure, each failing scp writes an error line.
            failed = len([l for l in err.splitlines() if l.strip()])
            res.success = self.f.n if res.exit_code == 0 else max(0, self.f.n - failed)
            res.note += "upload via scp (SFTP protocol); "
        if res.success != self.f.n:
            res.errors = tail(err, out)
        return res

    def run_openssh(self, op):
        res = self._openssh(op, "openssh", "curve25519-sha256")
        res.note += "KexAlgorithms=curve25519-sha256; "
        return res

    def run_openssh_defkex(self, op):
        res = self._openssh(op, "openssh-defkex", None)
        res.note += "default kex (sntrup761x25519); "
        return res


def tail(*texts, n=5):
    lines = []
    for t in texts:
        lines += [l for l in t.splitlines() if l.strip()]
    return lines[-n:]


def count_ferry_json(out: str, rc: int, n: int, op: str):
    """Count successful targets in ferry's --format json output (Bolt-style
    {"items": [{"target":..., "status": "success"}...]} or JSON lines)."""
    docs = []
    try:
        docs = [json.loads(out)]
    except ValueError:
        for line in out.splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    docs.append(json.loads(line))
                except ValueError:
                    pass
    items = []
    for d in docs:
        if isinstance(d, dict) and isinstance(d.get("items"), list):
            items += d["items"]
        elif isinstance(d, list):
            items += d
        elif isinstance(d, dict) and "status" in d:
            items.append(d)
    if items:
        def good(it):
            if not isinstance(it, dict) or it.get("status") != "success":
                return False
            value = it.get("value")
            if op == "command" and isinstance(value, dict) and "stdout" in value:
                return str(value["stdout"]).strip() == "ok"
            return True
        return sum(1 for it in items if good(it)), ""
    return (n if rc == 0 else 0), "success inferred from exit code (no per-target JSON items); "


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def count_pyinfra(text: str, addrs, op):
    text = ANSI.sub("", text)
    errors = [l for l in text.splitlines() if "Error" in l or "error" in l][:5]
    if op == "command":
        # exec prints each host's output as "[host] ok"; failures as "[host] Error..."
        ok_hosts = set(re.findall(r"\[(127\.[0-9.]+)\]\s+ok\s*$", text, re.M))
        return len(ok_hosts), errors
    # files.put: per-host "[host] Success" lines after the operation header.
    ok_hosts = set(re.findall(r"\[(127\.[0-9.]+)\]\s+(?:Success|No changes)", text))
    if not ok_hosts:
        # fall back to the results table: "| files.put ... | hosts | success | error |"
        m = re.search(r"Success\s*\|\s*Error.*?\n.*?\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)", text, re.S)
        if m:
            return int(m.group(2)), errors
    return len(ok_hosts), errors


def count_ansible_oneline(out: str, op):
    """Parse `ansible -o` output: one line per host,
    `HOST | CHANGED | rc=0 | (stdout) ok` or `HOST | CHANGED => {...}`."""
    ok_hosts, errors = set(), []
    for line in out.splitlines():
        m = re.match(r"^(\S+) \| (CHANGED|SUCCESS|FAILED!?|UNREACHABLE!?)\b(.*)$", line)
        if not m:
            continue
        host, state, rest = m.groups()
        if state in ("CHANGED", "SUCCESS") and (op != "command" or "(stdout) ok" in rest):
            ok_hosts.add(host)
        else:
            errors.append(line[:200])
    return len(ok_hosts), errors[:5]


# --------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------

def fmt_ratio(x, ref):
    if not ref or not x:
        return "–"
    return f"{x / ref:.1f}×"


def median(xs):
    xs = sorted(xs)
    mid = len(xs) // 2
    return xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2


def combine(runs: list[Result]) -> Result:
    """One row for the repeated runs of a tool and op: the median of each
    time, the largest memory, the worst success count."""
    if len(runs) == 1:
        return runs[0]
    r = Result(tool=runs[0].tool, op=runs[0].op, targets=runs[0].targets)
    for name in ("wall_s", "client_cpu_s", "client_user_s", "client_sys_s", "target_cpu_s"):
        setattr(r, name, median([getattr(x, name) for x in runs]))
    r.max_rss_kib = max(x.max_rss_kib for x in runs)
    r.peak_tree_pss_kib = max(x.peak_tree_pss_kib for x in runs)
    worst = min(runs, key=lambda x: (x.ok, x.success))
    r.ok, r.success, r.exit_code, r.errors = worst.ok, worst.success, worst.exit_code, worst.errors
    walls = ", ".join(f"{x.wall_s:.2f}" for x in runs)
    r.note = f"median of {len(runs)} runs (wall s: {walls}); " + "".join(
        dict.fromkeys(x.note for x in runs))
    return r


def reference(tools, op):
    """The ferry row the others are compared with: the plan for tasks."""
    if op in TASK_OPS and "ferry-plan" in tools:
        return "ferry-plan"
    return "ferry" if "ferry" in tools else None


def paired_ratios(runs: dict, tools, op) -> list[str]:
    """Per round, each tool's wall time over the reference ferry row's in the
    same round (the two ran minutes apart at most, so slow spells of a shared
    host hit both); the median of those is the figure to quote."""
    ref = reference(tools, op)
    base = runs.get((ref, op), [])
    lines = []
    for tool in tools:
        mine = runs.get((tool, op), [])
        if tool == ref or not mine or len(mine) != len(base):
            continue
        ratios = [m.wall_s / b.wall_s for m, b in zip(mine, base) if b.wall_s and m.ok and b.ok]
        if ratios:
            each = ", ".join(f"{x:.2f}" for x in ratios)
            lines.append(f"- {op}: {tool} wall ÷ {ref} wall, per round: {each} → median "
                         f"{median(ratios):.2f}×")
    return lines


def markdown_table(results: list[Result], op: str, n: int, c: int) -> str:
    rows = [r for r in results if r.op == op and r.skipped is None]
    ref = reference([r.tool for r in rows], op)
    base = next((r for r in rows if r.tool == ref), None)
    hdr = ("| tool | ok/N | wall s | client CPU ms/target | target CPU ms/target | "
           f"max RSS MiB (1 proc) | peak tree PSS MiB | CPU/target vs {ref} | wall vs {ref} |\n"
           "|---|---|---|---|---|---|---|---|---|\n")
    body = ""
    for r in rows:
        body += (f"| {r.tool} | {r.success}/{r.targets} | {r.wall_s:.2f} | {r.client_ms_per_target:.2f} | "
                 f"{r.target_ms_per_target:.2f} | {r.max_rss_kib / 1024:.1f} | {r.peak_tree_pss_kib / 1024:.1f} | "
                 f"{fmt_ratio(r.client_ms_per_target, base.client_ms_per_target) if base else '–'} | "
                 f"{fmt_ratio(r.wall_s, base.wall_s) if base else '–'} |\n")
    title = {"command": "`echo ok` on every target", "upload": "1 MiB upload to every target",
             "tasks-builtins": "Ten tasks in a row on every target, builtin work",
             "tasks-procs": "Ten tasks in a row on every target, mkdir and cat as processes",
             "tasks-pplan": "A ten-step Puppet-language plan on every target (run_task, run_command, "
                            "upload_file, parallelize) against a pyinfra deploy",
             }.get(op, op)
    return f"**{title}** (N={n}, concurrency={c})\n\n" + hdr + body


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--supervise":
        return supervise(sys.argv[2])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--targets", "-n", type=int, default=200)
    ap.add_argument("--concurrency", "-c", type=int, default=50)
    ap.add_argument("--only", help=f"comma-separated subset of: {','.join(ALL_TOOLS)}")
    ap.add_argument("--ops", default="command,upload",
                    help="comma-separated: command,upload,tasks (= tasks-builtins,tasks-procs: "
                         "see benches/tasks.py)")
    ap.add_argument("--port", type=int, default=2222)
    ap.add_argument("--ferry", default=os.path.join(REPO, "target", "dist", "ferry"))
    ap.add_argument("--json", default=os.path.join(BENCH_DIR, "results", "latest.json"))
    ap.add_argument("--shared-sshd", action="store_true",
                    help=f"pack up to {MAX_LISTEN_SOCKS} targets per sshd (one shared filesystem; "
                         "fine for --ops command, makes upload checks per-sshd only)")
    ap.add_argument("--real-home", action="store_true",
                    help="don't override HOME for target sessions (root's ~/.bashrc then runs on every session)")
    ap.add_argument("--repeat", "-r", type=int, default=1,
                    help="rounds: every tool runs every op once per round, in a rotating order; "
                         "the table gives medians and each tool's per-round ratio to ferry")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir (logs, outputs)")
    ap.add_argument("--no-install", action="store_true", help="don't pip install missing peers")
    a = ap.parse_args()

    tools = list(ALL_TOOLS) if not a.only else [t.strip() for t in a.only.split(",") if t.strip()]
    for t in tools:
        if t not in ALL_TOOLS:
            ap.error(f"unknown tool {t!r}; choose from {ALL_TOOLS}")
    ops = []
    for o in (o for o in a.ops.split(",") if o):
        if o not in ("command", "upload", "tasks", *TASK_OPS):
            ap.error(f"unknown op {o!r}")
        ops += [x for x in (TASKS_DEFAULT if o == "tasks" else (o,)) if x not in ops]
    if any(o in TASK_OPS for o in ops) and "ferry" in tools and "ferry-plan" not in tools:
        tools.insert(tools.index("ferry") + 1, "ferry-plan")  # both ferry rows
    if a.targets > 250 * 250:
        ap.error("too many targets")
    if a.repeat < 1:
        ap.error("--repeat must be at least 1")

    if not a.no_install:
        ensure_venv(tools)

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        log("warning: PR_SET_CHILD_SUBREAPER failed; daemonised helpers won't be counted")

    workdir = tempfile.mkdtemp(prefix="ferry-fleet-")
    global LAUNCHER
    LAUNCHER = build_launcher(workdir)
    fleet = Fleet(a.targets, a.port, workdir, a.real_home,
                  MAX_LISTEN_SOCKS if a.shared_sshd else 1)

    def on_signal(signum, _frame):
        # First Ctrl-C/SIGTERM aborts the run; further ones must not break cleanup.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    runs: dict[tuple[str, str], list[Result]] = {}
    skipped: list[Result] = []
    bench = None
    try:
        log(f"starting {a.targets} targets in {workdir}")
        t0 = time.monotonic()
        fleet.setup()
        log(f"fleet ready: {len(fleet.listener_pids)} sshd listeners, {time.monotonic() - t0:.1f}s")
        bench = Bench(fleet, a.concurrency, a.ferry)
        missing = {tool: bench.available(tool) for tool in tools}
        for tool, why in missing.items():
            for op in ops:
                if why and not (tool == "ferry-plan" and op not in TASK_OPS):
                    log(f"skip {tool} {op}: {why}")
                    skipped.append(Result(tool=tool, op=op, skipped=why, targets=a.targets))
        present = [t for t in tools if not missing[t]]
        for rnd in range(a.repeat):
            order = present[rnd % len(present):] + present[:rnd % len(present)] if present else []
            for tool, op in ((t, o) for t in order for o in ops):
                log(f"run {tool} {op}" + (f" (round {rnd + 1}/{a.repeat})" if a.repeat > 1 else "") + " ...")
                try:
                    r = bench.run(tool, op)
                except Exception as e:  # noqa: BLE001 - record and go on with the next tool
                    log(f"  {tool} {op} crashed: {e!r}")
                    skipped.append(Result(tool=tool, op=op, skipped=f"harness error: {e!r}",
                                          targets=a.targets))
                    continue
                if r is None:
                    continue
                runs.setdefault((tool, op), []).append(r)
                log(f"  {tool} {op}: {r.success}/{r.targets} ok, wall {r.wall_s:.2f}s, "
                    f"client {r.client_ms_per_target:.2f} ms/target, target {r.target_ms_per_target:.2f} ms/target, "
                    f"maxrss {r.max_rss_kib / 1024:.1f} MiB, tree PSS {r.peak_tree_pss_kib / 1024:.1f} MiB"
                    + (f"  errors: {r.errors}" if r.errors and not r.ok else ""))
    except KeyboardInterrupt as e:
        log(f"interrupted: {e}")
    finally:
        fleet.stop()
        reap_leftovers(set())
        left = [p for p in process_table() if p != os.getpid() and
                _cmdline(p).find(workdir) >= 0]
        if left:
            log(f"warning: processes still referencing {workdir}: {left}; killing")
            for p in left:
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        if a.keep:
            log(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)

    results = [combine(runs[(t, o)]) for t in tools for o in ops if (t, o) in runs] + skipped
    if not results:
        return 1
    doc = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": {"cpus": os.cpu_count(), "kernel": platform.release(), "python": platform.python_version()},
        "targets": a.targets,
        "concurrency": a.concurrency,
        "upload_bytes": UPLOAD_SIZE,
        "repeat": a.repeat,
        "versions": bench.versions if bench else {},
        "results": [dict(asdict(r), client_ms_per_target=r.client_ms_per_target,
                         target_ms_per_target=r.target_ms_per_target) for r in results],
        "runs": [dict(asdict(r), round=i + 1) for rs in runs.values() for i, r in enumerate(rs)]
        if a.repeat > 1 else [],
    }
    os.makedirs(os.path.dirname(a.json), exist_ok=True)
    with open(a.json, "w") as fh:
        json.dump(doc, fh, indent=2)
        fh.write("\n")
    print()
    for op in ops:
        print(markdown_table(results, op, a.targets, a.concurrency))
        if a.repeat > 1:
            print("\n".join(paired_ratios(runs, tools, op)) + "\n")
    for r in skipped:
        if r.op == next(o for o in ops if r.tool != "ferry-plan" or o in TASK_OPS):
            print(f"- {r.tool}: skipped ({r.skipped})")
    notes = sorted({(r.tool, r.op, r.note) for r in results if r.note and not r.skipped})
    for tool, op, note in notes:
        print(f"- {tool} {op}: {note.strip().rstrip(';')}")
    print(f"\nversions: {json.dumps(doc['versions'])}")
    print(f"results written to {os.path.relpath(a.json)}")
    return 0


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("latin-1")
    except OSError:
        return ""


if __name__ == "__main__":
    sys.exit(main())
