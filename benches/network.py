#!/usr/bin/env python3
"""The NETWORK benchmark: N real FRR routers, each in its own network
namespace behind an sshd whose logins drop straight into vtysh (the way
tests/common/sshd/routers.rs builds them), and two operations on all of
them, side by side in one run:

  * show   — `show running-config` from every device,
  * check  — an idempotent configuration check: a ~40-line configuration
             (interface, static routes, prefix lists, a route map, BGP with
             neighbours and an address family) that every device already
             holds, compared with its running configuration; nothing to push,

by

  * ferry    — `ferry command run 'show running-config'` and
               `ferry device configure DESIRED` (`transport: network`,
               `platform: frr`),
  * ansible  — ansible-playbook with ansible.netcommon's network_cli
               connection (libssh), `ansible.netcommon.cli_command` and
               `ansible.netcommon.cli_config` (`ansible_network_os:
               cisco.ios.ios`: the `ansible` package has no FRR collection
               any more, and IOS's terminal and cliconf plugins are the ones
               whose prompts, paging command and config mode FRR's vtysh
               copies).

Every round runs both tools on both operations, in a rotating order; each
run is checked (every device's configuration in the output; every device
reported unchanged) and measured as fleet.py measures: wall time, client CPU
of the tool's whole process tree (children's rusage, daemonised helpers such
as ansible-connection included), the routers' CPU (sshd, vtysh, FRR's
daemons). Paired ratios per round go to the table.

Usage:
  python3 benches/network.py --routers 20 --repeat 5
  python3 benches/network.py -n 3 -r 1 --only ferry     # quick check

Needs root, Debian's frr (zebra, staticd, bgpd, vtysh), OpenSSH's sshd, `ip`.
Routers get 10.253.x.y/30 addresses on veth pairs to their namespaces; all of
it (namespaces, links, daemons) is removed at the end, on failure and on
Ctrl-C too. Ansible (`ansible`, `ansible-pylibssh` from PyPI) is installed
into benches/.venv on first use (`--no-install` skips that).
"""

from __future__ import annotations

import argparse
import atexit
import ctypes
import datetime
import json
import os
import platform
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
if BENCH_DIR not in sys.path:
    sys.path.insert(0, BENCH_DIR)
import fleet  # noqa: E402
from fleet import REPO, VENV, VENV_BIN, Result, log, measure, median, tail  # noqa: E402

TOOLS = ["ferry", "ansible"]
OPS = ["show", "check"]
FRR_DIR = "/usr/lib/frr"
VTYSH = "/usr/bin/vtysh"
DAEMONS = ("zebra", "staticd", "bgpd")
NETNS_PREFIX = "ferry-netbench-"
# The routers' /30s: 10.253.0.0/16, away from the tests' 10.251.0.0/16.
SUBNET = (10, 253)
ASN = 65100
# What the Ansible side installs (benches/.venv), and which plugins it drives.
ANSIBLE_PACKAGES = ("ansible", "ansible-pylibssh")
ANSIBLE_NETWORK_OS = "cisco.ios.ios"


# --------------------------------------------------------------------------
# The routers' configuration: a common part (the desired configuration the
# check compares) plus each router's own hostname and router id
# --------------------------------------------------------------------------

def common_config() -> str:
    """The configuration every router holds, as vtysh prints it in
    `show running-config` (one-space indentation)."""
    lines = []
    for k in range(8):
        lines.append(f"ip route 198.51.{100 + k}.0/24 Null0")
    lines.append("!")
    lines.append("interface lo")
    lines.append(" description loopback managed by the benchmark")
    lines.append("exit")
    lines.append("!")
    lines.append("router bgp %d" % ASN)
    lines.append(" no bgp ebgp-requires-policy")
    for k in range(1, 7):
        lines.append(f" neighbor 203.0.113.{k} remote-as {65200 + k}")
        lines.append(f" neighbor 203.0.113.{k} description upstream-{k}")
    lines.append(" !")
    lines.append(" address-family ipv4 unicast")
    for k in range(4):
        lines.append(f"  network 198.51.{100 + k}.0/24")
    for k in range(1, 7):
        lines.append(f"  neighbor 203.0.113.{k} route-map EXPORT out")
    lines.append(" exit-address-family")
    lines.append("exit")
    lines.append("!")
    for k in range(4):
        lines.append(f"ip prefix-list LOCAL seq {5 * (k + 1)} permit 198.51.{100 + k}.0/24")
    lines.append("!")
    lines.append("route-map EXPORT permit 10")
    lines.append(" match ip address prefix-list LOCAL")
    lines.append("exit")
    lines.append("!")
    return "\n".join(lines) + "\n"


def router_config(name: str, index: int) -> str:
    """A router's startup configuration (frr.conf)."""
    rid = f"192.0.2.{index + 1}"
    common = common_config().replace(
        f"router bgp {ASN}\n", f"router bgp {ASN}\n bgp router-id {rid}\n")
    return f"hostname {name}\n!\n" + common + "line vty\n no login\n!\n"


# --------------------------------------------------------------------------
# The routers
# --------------------------------------------------------------------------

def run(argv, check=True):
    r = subprocess.run(argv, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {r.stderr.strip() or r.stdout.strip()}")
    return r.stdout


def process_rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Routers:
    """N routers; quacks like fleet.Fleet for fleet.measure (n, dir, pids,
    wait_idle, cpu_ticks)."""

    def __init__(self, n: int, workdir: str):
        self.n = n
        self.dir = workdir
        self.names = [f"r{i + 1}" for i in range(n)]
        self.netns: list[str] = []
        self.veths: list[str] = []
        self.addrs: list[str] = []
        # FRR's daemons (they start no children), then the sshds under a
        # subreaper supervisor (fleet.py --supervise): a vtysh whose sshd
        # session ended first is re-parented to it, not to the harness, so
        # its CPU counts for the routers, never as a tool's leftover.
        self.procs: list[subprocess.Popen] = []
        self.sshd_argv: list[list[str]] = []
        self.supervisor: subprocess.Popen | None = None
        self.sshd_pids: list[int] = []
        self.key = os.path.join(workdir, "id_ed25519")
        self.host_key = os.path.join(workdir, "ssh_host_ed25519_key")
        self.known_hosts = os.path.join(workdir, "known_hosts")
        self.home = os.path.join(workdir, "home")

    @property
    def pids(self):
        """Every router process that is not a session: FRR's daemons, the
        supervisor, the sshd listeners."""
        return ([p.pid for p in self.procs] + self.sshd_pids
                + ([self.supervisor.pid] if self.supervisor else []))

    def free_subnets(self):
        used = run(["ip", "-4", "-o", "addr", "show"])
        out = []
        for k in range(16384):
            base = (SUBNET[0] << 24) | (SUBNET[1] << 16) | (4 * k)
            host = ".".join(str((base + 1) >> s & 255) for s in (24, 16, 8, 0))
            ns = ".".join(str((base + 2) >> s & 255) for s in (24, 16, 8, 0))
            if f"inet {host}/" not in used:
                out.append((host, ns))
            if len(out) == self.n:
                return out
        raise RuntimeError("no free /30s left in 10.253.0.0/16")

    def setup(self):
        for path, comment in ((self.host_key, "netbench-router"), (self.key, "netbench-client")):
            run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", path])
        host_pub = open(self.host_key + ".pub").read().split()
        os.makedirs(self.home, exist_ok=True)
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        frr = pwd.getpwnam("frr")
        pid = os.getpid()
        subnets = self.free_subnets()
        with open(self.known_hosts, "w") as kh:
            for i, (name, (host_addr, ns_addr)) in enumerate(zip(self.names, subnets)):
                ns = f"{NETNS_PREFIX}{pid}-{i}"
                veth_host, veth_ns = f"fnb{pid % 100000}h{i}", f"fnb{pid % 100000}n{i}"
                run(["ip", "netns", "add", ns])
                self.netns.append(ns)
                run(["ip", "link", "add", veth_host, "type", "veth", "peer", "name", veth_ns,
                     "netns", ns])
                self.veths.append(veth_host)
                for argv in (["ip", "addr", "add", f"{host_addr}/30", "dev", veth_host],
                             ["ip", "link", "set", veth_host, "up"],
                             ["ip", "-n", ns, "addr", "add", f"{ns_addr}/30", "dev", veth_ns],
                             ["ip", "-n", ns, "link", "set", veth_ns, "up"],
                             ["ip", "-n", ns, "link", "set", "lo", "up"]):
                    run(argv)
                self.addrs.append(ns_addr)
                kh.write(f"{ns_addr} {host_pub[0]} {host_pub[1]}\n")
                self.start_router(i, name, ns, ns_addr, frr)
        spec = os.path.join(self.dir, "supervisor.json")
        with open(spec, "w") as f:
            json.dump(self.sshd_argv, f)
        self.supervisor = subprocess.Popen(
            [sys.executable, os.path.join(BENCH_DIR, "fleet.py"), "--supervise", spec],
            stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 30
        while not os.path.exists(spec + ".pids"):
            if self.supervisor.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the supervisor did not start the routers' sshds")
            time.sleep(0.05)
        with open(spec + ".pids") as f:
            self.sshd_pids = json.load(f)
        self.wait_ready()

    def start_router(self, i, name, ns, addr, frr):
        root = os.path.join(self.dir, name)
        etc = os.path.join(root, "etc")
        os.makedirs(etc)
        os.chmod(root, 0o755)
        os.chown(root, frr.pw_uid, frr.pw_gid)
        with open(os.path.join(etc, "vtysh.conf"), "w") as f:
            f.write(f"hostname {name}\nservice integrated-vtysh-config\n")
        conf = os.path.join(root, "frr.conf")
        with open(conf, "w") as f:
            f.write(router_config(name, i))
        os.chown(conf, frr.pw_uid, frr.pw_gid)
        cli = os.path.join(root, "cli.sh")
        with open(cli, "w") as f:
            f.write(f"#!/bin/sh\n# The router's CLI for every SSH login (sshd's ForceCommand).\n"
                    f"exec {VTYSH} --vty_socket {root} --config_dir {etc}\n")
        os.chmod(cli, 0o755)
        for daemon in DAEMONS:
            argv = ["ip", "netns", "exec", ns, os.path.join(FRR_DIR, daemon),
                    "-u", "frr", "-g", "frr", "-A", "127.0.0.1", "-P", "0",
                    "--vty_socket", root, "-z", os.path.join(root, "zserv.api"),
                    "-i", os.path.join(root, f"{daemon}.pid"), "-f", conf,
                    f"--log=file:{os.path.join(root, daemon + '.log')}"]
            self.procs.append(subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                               stdout=subprocess.DEVNULL,
                                               stderr=subprocess.DEVNULL,
                                               start_new_session=True))
            ready = [os.path.join(root, f"{daemon}.vty")]
            if daemon == "zebra":
                ready.append(os.path.join(root, "zserv.api"))
            deadline = time.monotonic() + 20
            while not all(os.path.exists(p) for p in ready):
                if time.monotonic() > deadline or self.procs[-1].poll() is not None:
                    log_text = open(os.path.join(root, f"{daemon}.log")).read()[-2000:] \
                        if os.path.exists(os.path.join(root, f"{daemon}.log")) else ""
                    raise RuntimeError(f"{name}: {daemon} did not start: {log_text}")
                time.sleep(0.02)
        cfg = os.path.join(root, "sshd_config")
        with open(cfg, "w") as f:
            f.write(f"""ListenAddress {addr}:22
HostKey {self.host_key}
PidFile {root}/sshd.pid
AuthorizedKeysFile {self.key}.pub
StrictModes no
PermitRootLogin yes
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
UseDNS no
PrintMotd no
PrintLastLog no
LogLevel ERROR
MaxStartups 1000:30:1000
SetEnv HOME={self.home}
ForceCommand {cli}
""")
        self.sshd_argv.append(["ip", "netns", "exec", ns, "/usr/sbin/sshd", "-D", "-f", cfg,
                               "-E", os.path.join(root, "sshd.log")])

    def wait_ready(self, timeout=30.0):
        pending = set(self.addrs)
        deadline = time.monotonic() + timeout
        while pending and time.monotonic() < deadline:
            dead = [p.args for p in self.procs if p.poll() is not None]
            if dead or self.supervisor.poll() is not None:
                raise RuntimeError(f"a router process exited: {dead[:1]}; see {self.dir}/r*/*.log")
            for a in list(pending):
                try:
                    with socket.create_connection((a, 22), timeout=2) as s:
                        if s.recv(64).startswith(b"SSH-2.0-"):
                            pending.discard(a)
                except OSError:
                    pass
            if pending:
                time.sleep(0.1)
        if pending:
            raise RuntimeError(f"{len(pending)} routers never answered, e.g. {sorted(pending)[:3]}")
        self.wait_idle()

    def vtysh(self, i: int, *commands: str) -> str:
        root = os.path.join(self.dir, self.names[i])
        argv = ["ip", "netns", "exec", self.netns[i], VTYSH, "--vty_socket", root,
                "--config_dir", os.path.join(root, "etc")]
        for c in commands:
            argv += ["-c", c]
        return run(argv)

    def memory_kib(self) -> dict:
        """RSS of the routers' resident processes, by program."""
        out: dict[str, int] = {}
        for i, p in enumerate(self.procs):
            name = os.path.basename(p.args[4]) if len(p.args) > 4 else "?"
            out[name] = out.get(name, 0) + process_rss_kib(p.pid)
        out["sshd"] = sum(process_rss_kib(pid) for pid in self.sshd_pids)
        return out

    def cpu_ticks(self) -> int:
        total = 0
        for pid in self.pids:
            st = fleet.read_stat(pid)
            if st:
                total += st[1] + st[2]
        return total

    def wait_idle(self, timeout=60.0) -> bool:
        """Until the supervisor has nothing but its sshd listeners left (every
        session and orphan reaped, so their CPU is in cutime/cstime)."""
        deadline = time.monotonic() + timeout
        base = set(self.sshd_pids)
        while time.monotonic() < deadline:
            table = fleet.process_table()
            if set(fleet.descendants([self.supervisor.pid], table)) <= base:
                return True
            time.sleep(0.05)
        return False

    def stop(self):
        sup = self.supervisor
        if sup is not None:
            if sup.poll() is None:
                sup.terminate()
            try:
                sup.wait(timeout=15)
            except subprocess.TimeoutExpired:
                sup.kill()
                sup.wait()
            self.supervisor = None
            self.sshd_pids = []
        for p in self.procs:
            if p.poll() is None:
                try:
                    p.terminate()
                except ProcessLookupError:
                    pass
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs = []
        for ns in self.netns:
            pids = run(["ip", "netns", "pids", ns], check=False).split()
            for q in pids:
                try:
                    os.kill(int(q), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            run(["ip", "netns", "del", ns], check=False)
        self.netns = []
        for v in self.veths:
            if os.path.exists(f"/sys/class/net/{v}"):
                run(["ip", "link", "del", v], check=False)
        self.veths = []


def remove_stale():
    """Namespaces and links a killed earlier run left behind."""
    for line in run(["ip", "netns", "list"], check=False).splitlines():
        name = line.split()[0] if line.split() else ""
        if not name.startswith(NETNS_PREFIX):
            continue
        owner = name[len(NETNS_PREFIX):].split("-")[0]
        if owner.isdigit() and not os.path.exists(f"/proc/{owner}"):
            for q in run(["ip", "netns", "pids", name], check=False).split():
                try:
                    os.kill(int(q), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            run(["ip", "netns", "del", name], check=False)


# --------------------------------------------------------------------------
# The tools' inputs
# --------------------------------------------------------------------------

def write_inputs(routers: Routers, workdir: str) -> dict:
    desired = os.path.join(workdir, "desired.conf")
    with open(desired, "w") as f:
        f.write(common_config())
    # The control: one line more than every router holds, checked (never
    # pushed) before anything is measured, so that "nothing to change" is
    # known to be a comparison that can find something.
    control = os.path.join(workdir, "control.conf")
    with open(control, "w") as f:
        f.write(common_config().replace(" no bgp ebgp-requires-policy\n",
                                        " no bgp ebgp-requires-policy\n"
                                        " neighbor 203.0.113.7 remote-as 65207\n"))
    inv = os.path.join(workdir, "inventory.yaml")
    with open(inv, "w") as f:
        f.write("groups:\n  - name: routers\n    targets:\n")
        for name, addr in zip(routers.names, routers.addrs):
            f.write(f"      - name: {name}\n        uri: {addr}\n")
        f.write(f"""    config:
      transport: network
      network:
        platform: frr
        user: root
        private-key: {routers.key}
        known-hosts-file: {routers.known_hosts}
        host-key-check: true
        load-config: false
""")
    hosts = os.path.join(workdir, "hosts.ini")
    with open(hosts, "w") as f:
        f.write("[routers]\n")
        for name, addr in zip(routers.names, routers.addrs):
            f.write(f"{name} ansible_host={addr}\n")
        f.write(f"""[routers:vars]
ansible_connection=ansible.netcommon.network_cli
ansible_network_os={ANSIBLE_NETWORK_OS}
ansible_network_cli_ssh_type=libssh
ansible_user=root
ansible_ssh_private_key_file={routers.key}
ansible_host_key_checking=true
ansible_python_interpreter={os.path.join(VENV_BIN, 'python')}
""")
    show = os.path.join(workdir, "show.yml")
    with open(show, "w") as f:
        f.write("""- hosts: routers
  gather_facts: false
  tasks:
    - name: show running-config
      ansible.netcommon.cli_command:
        command: show running-config
""")
    check = os.path.join(workdir, "check.yml")
    with open(check, "w") as f:
        f.write(f"""- hosts: routers
  gather_facts: false
  tasks:
    - name: the configuration every router already holds
      ansible.netcommon.cli_config:
        config: "{{{{ lookup('file', '{desired}') }}}}"
""")
    with open(os.path.join(workdir, "control.yml"), "w") as f:
        f.write(f"""- hosts: routers
  gather_facts: false
  tasks:
    - name: one line more than every router holds (check mode)
      ansible.netcommon.cli_config:
        config: "{{{{ lookup('file', '{control}') }}}}"
""")
    # Ansible's libssh reads ~/.ssh/known_hosts, ~ from the password
    # database (not $HOME), and the plugin has no option naming another
    # file: Ansible runs in a mount namespace of its own where a copy of
    # /etc/passwd that gives this user this home is bind-mounted on the
    # real one (argv_for).
    ahome = os.path.join(workdir, "ansible-home")
    os.makedirs(os.path.join(ahome, ".ssh"), mode=0o700)
    shutil.copy(routers.known_hosts, os.path.join(ahome, ".ssh", "known_hosts"))
    passwd = os.path.join(workdir, "passwd")
    me = os.getuid()
    with open("/etc/passwd") as src, open(passwd, "w") as dst:
        for line in src:
            f = line.rstrip("\n").split(":")
            if len(f) == 7 and f[2] == str(me):
                f[5] = ahome
                line = ":".join(f) + "\n"
            dst.write(line)
    os.chmod(passwd, 0o644)
    return {"passwd": passwd, "desired": desired, "control": control,
            "control.yml": os.path.join(workdir, "control.yml"), "inventory": inv,
            "hosts": hosts, "show": show,
            "check": check, "ansible_home": ahome}


def ansible_env(inputs: dict, workdir: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    env.update({
        "HOME": inputs["ansible_home"],
        "PATH": VENV_BIN + os.pathsep + env.get("PATH", ""),
        "ANSIBLE_HOST_KEY_CHECKING": "True",
        "ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json",
        "ANSIBLE_LOCAL_TEMP": os.path.join(workdir, "ansible-tmp"),
        "ANSIBLE_PERSISTENT_CONTROL_PATH_DIR": os.path.join(workdir, "ansible-pc"),
        "ANSIBLE_RETRY_FILES_ENABLED": "False",
        "ANSIBLE_NOCOLOR": "1",
    })
    return env


def argv_for(tool: str, op: str, ferry: str, inputs: dict, n: int) -> list[str]:
    """`op` is show, check, or control (check mode, one line missing)."""
    if tool == "ferry":
        common = ["-t", "routers", "-i", inputs["inventory"], "--format", "json",
                  "--concurrency", str(n)]
        if op == "show":
            return [ferry, "command", "run", "show running-config", *common]
        if op == "control":
            return [ferry, "device", "configure", inputs["control"], "--noop", *common]
        return [ferry, "device", "configure", inputs["desired"], *common]
    playbook = [inputs["control.yml"], "--check"] if op == "control" else [inputs[op]]
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c",
            'mount --bind "$0" /etc/passwd && exec "$@"', inputs["passwd"],
            os.path.join(VENV_BIN, "ansible-playbook"), "-i", inputs["hosts"], "-f", str(n),
            *playbook]


# --------------------------------------------------------------------------
# Checking what each tool did
# --------------------------------------------------------------------------

def has_config(text: str) -> bool:
    return f"router bgp {ASN}" in text and "route-map EXPORT permit 10" in text


def verify_ferry(op: str, out: str, names) -> tuple[int, list[str]]:
    try:
        doc = json.loads(out)
    except ValueError:
        return 0, [f"no JSON: {out[:200]}"]
    good, errors = set(), []
    for item in doc.get("items", []):
        name, value = item.get("target"), item.get("value") or {}
        if item.get("status") != "success":
            errors.append(f"{name}: {json.dumps(value)[:200]}")
        elif op == "show" and has_config(str(value.get("stdout", ""))):
            good.add(name)
        elif op == "check" and value.get("changed") is False and value.get("lines") == 0:
            good.add(name)
        elif op == "control" and value.get("lines") == 1:
            good.add(name)
        else:
            errors.append(f"{name}: unexpected {json.dumps(value)[:300]}")
    return len(good & set(names)), errors[:5]


def verify_ansible(op: str, out: str, names) -> tuple[int, list[str]]:
    start = out.find("{")
    try:
        doc = json.loads(out[start:]) if start >= 0 else {}
    except ValueError:
        return 0, [f"no JSON: {out[:300]}"]
    good, errors = set(), []
    for play in doc.get("plays", []):
        for task in play.get("tasks", []):
            for host, res in task.get("hosts", {}).items():
                if res.get("failed") or res.get("unreachable"):
                    errors.append(f"{host}: {str(res.get('msg', res))[:300]}")
                elif op == "show" and has_config(str(res.get("stdout", ""))):
                    good.add(host)
                elif op == "check" and res.get("changed") is False:
                    good.add(host)
                elif op == "control" and res.get("changed") is True:
                    good.add(host)
                else:
                    errors.append(f"{host}: unexpected {json.dumps(res)[:300]}")
    return len(good & set(names)), errors[:5]


# --------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------

TITLES = {"show": "`show running-config` from every router",
          "check": "idempotent configuration check on every router (nothing to change)"}


def table(rows: list[Result], op: str, n: int, rounds: int) -> str:
    base = next((r for r in rows if r.tool == "ferry" and r.op == op), None)
    out = (f"**{TITLES[op]}** (N={n}; medians of {rounds} round(s))\n\n"
           "| tool | ok/N | wall s | client CPU ms/router | router CPU ms/router | "
           "max RSS MiB (1 proc) | peak tree PSS MiB | wall vs ferry | client CPU vs ferry |\n"
           "|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        if r.op != op:
            continue
        wall = f"{r.wall_s / base.wall_s:.1f}×" if base and base.wall_s else "–"
        cpu = (f"{r.client_cpu_s / base.client_cpu_s:.1f}×"
               if base and base.client_cpu_s else "–")
        out += (f"| {r.tool} | {r.success}/{r.targets} | {r.wall_s:.2f} | "
                f"{r.client_ms_per_target:.1f} | {r.target_ms_per_target:.1f} | "
                f"{r.max_rss_kib / 1024:.1f} | {r.peak_tree_pss_kib / 1024:.1f} | {wall} | {cpu} |\n")
    return out


def combine(runs: list[Result]) -> Result:
    r = Result(tool=runs[0].tool, op=runs[0].op, targets=runs[0].targets)
    for name in ("wall_s", "client_cpu_s", "client_user_s", "client_sys_s", "target_cpu_s"):
        setattr(r, name, median([getattr(x, name) for x in runs]))
    r.max_rss_kib = max(x.max_rss_kib for x in runs)
    r.peak_tree_pss_kib = max(x.peak_tree_pss_kib for x in runs)
    worst = min(runs, key=lambda x: (x.ok, x.success))
    r.ok, r.success, r.exit_code, r.errors = worst.ok, worst.success, worst.exit_code, worst.errors
    r.note = "".join(dict.fromkeys(x.note for x in runs))
    return r


def paired(runs: dict, op: str) -> dict:
    """Per round: Ansible's wall time and client CPU over ferry's."""
    f, a = runs.get(("ferry", op), []), runs.get(("ansible", op), [])
    pairs = [(x, y) for x, y in zip(f, a) if x.ok and y.ok and x.wall_s and x.client_cpu_s]
    wall = [y.wall_s / x.wall_s for x, y in pairs]
    cpu = [y.client_cpu_s / x.client_cpu_s for x, y in pairs]
    return {"wall": wall, "cpu": cpu,
            "wall_median": median(wall) if wall else None,
            "cpu_median": median(cpu) if cpu else None}


def tool_version(argv, env=None) -> str:
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)
        return (r.stdout or r.stderr).strip().splitlines()[0]
    except Exception as e:  # noqa: BLE001
        return f"unknown ({e})"


def ensure_ansible():
    py = os.path.join(VENV_BIN, "python")
    if not os.path.exists(py):
        log("creating benches/.venv")
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
    missing = [p for p in ANSIBLE_PACKAGES
               if subprocess.run([py, "-m", "pip", "show", "-q", p],
                                 capture_output=True).returncode != 0]
    if missing:
        log(f"pip install {' '.join(missing)}")
        subprocess.run([py, "-m", "pip", "install", "-q", *missing], check=False)


def default_ferry() -> str:
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(REPO, "target")
    return os.path.join(target, "dist", "ferry")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--routers", "-n", type=int, default=20)
    ap.add_argument("--repeat", "-r", type=int, default=5)
    ap.add_argument("--only", help=f"comma-separated subset of: {','.join(TOOLS)}")
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--ferry", default=default_ferry())
    ap.add_argument("--json", default=os.path.join(BENCH_DIR, "results", "network.json"))
    ap.add_argument("--keep", action="store_true", help="keep the temp dir")
    ap.add_argument("--no-install", action="store_true")
    ap.add_argument("--hold", action="store_true",
                    help="set the routers up, print the inputs' paths, measure nothing and "
                         "wait for Ctrl-C (for profiling a tool by hand)")
    a = ap.parse_args()
    tools = TOOLS if not a.only else [t for t in a.only.split(",") if t]
    ops = [o for o in a.ops.split(",") if o]
    if any(t not in TOOLS for t in tools) or any(o not in OPS for o in ops):
        ap.error(f"tools: {TOOLS}; ops: {OPS}")
    if not 1 <= a.routers <= 200 or a.repeat < 1:
        ap.error("1-200 routers, at least one round")
    if os.geteuid() != 0:
        ap.error("needs root (network namespaces, FRR, sshd)")
    for exe in [os.path.join(FRR_DIR, d) for d in DAEMONS] + [VTYSH, "/usr/sbin/sshd"]:
        if not os.access(exe, os.X_OK):
            ap.error(f"{exe} is missing (apt-get install frr openssh-server)")
    if "ferry" in tools and not os.access(a.ferry, os.X_OK):
        ap.error(f"no ferry at {a.ferry}: cargo build --profile dist (or --ferry PATH)")
    if "ansible" in tools and not a.no_install:
        ensure_ansible()

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(fleet.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        log("warning: PR_SET_CHILD_SUBREAPER failed; ansible-connection won't be counted")
    workdir = tempfile.mkdtemp(prefix="ferry-netbench-")
    os.chmod(workdir, 0o755)  # FRR's daemons run as frr and write under it
    fleet.LAUNCHER = fleet.build_launcher(workdir)
    remove_stale()
    routers = Routers(a.routers, workdir)
    atexit.register(routers.stop)

    def on_signal(signum, _frame):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    runs: dict[tuple[str, str], list[Result]] = {}
    doc: dict = {}
    try:
        log(f"starting {a.routers} FRR routers in {workdir}")
        t0 = time.perf_counter()
        routers.setup()
        log(f"routers up in {time.perf_counter() - t0:.1f} s")
        memory = routers.memory_kib()
        log("router memory (RSS, all routers): " +
            ", ".join(f"{k} {v / 1024:.0f} MiB" for k, v in memory.items()))
        # The desired configuration must be what every router already has.
        held = routers.vtysh(0, "show running-config")
        if not has_config(held):
            raise RuntimeError(f"r1 did not load its configuration:\n{held}")
        inputs = write_inputs(routers, workdir)
        env = ansible_env(inputs, workdir)
        if a.hold:
            for k, v in inputs.items():
                log(f"{k}: {v}")
            log("holding the routers; Ctrl-C ends")
            while True:
                time.sleep(3600)
        versions = {"ferry": tool_version([a.ferry, "--version"]),
                    "ansible": tool_version([os.path.join(VENV_BIN, "ansible"), "--version"], env),
                    "frr": tool_version([os.path.join(FRR_DIR, "zebra"), "--version"]),
                    "python": platform.python_version()}
        pkgs = subprocess.run([os.path.join(VENV_BIN, "python"), "-m", "pip", "list",
                               "--format", "json"], capture_output=True, text=True)
        try:
            versions["pip"] = {p["name"]: p["version"] for p in json.loads(pkgs.stdout)
                               if p["name"] in (*ANSIBLE_PACKAGES, "ansible-core", "paramiko")}
        except ValueError:
            pass
        log(f"versions: {versions}")

        def one(tool: str, op: str, warm: bool = False) -> Result:
            argv = argv_for(tool, op, a.ferry, inputs, a.routers)
            res, out, err = measure(routers, tool, op, argv,
                                    env=env if tool == "ansible" else None, cwd=workdir,
                                    timeout=600.0)
            check = verify_ferry if tool == "ferry" else verify_ansible
            res.success, errors = check(op, out, routers.names)
            res.ok = res.success == a.routers
            res.errors = errors or tail(err)
            status = "ok" if res.ok else "FAILED"
            log(f"{'warm-up ' if warm else ''}{tool:8} {op:6} {status} "
                f"{res.success}/{a.routers}  wall {res.wall_s:.2f} s  client CPU "
                f"{res.client_cpu_s * 1000:.0f} ms  routers {res.target_cpu_s * 1000:.0f} ms"
                + (f"  {res.errors[:2]}" if not res.ok else ""))
            return res

        # A warm-up run of each (Python's bytecode caches, the page cache),
        # which also checks both tools do the work before anything counts.
        for tool in tools:
            for op in ops:
                one(tool, op, warm=True)
            control = one(tool, "control", warm=True)
            if not control.ok:
                raise RuntimeError(f"{tool} did not find the one missing line on every router: "
                                   f"{control.errors}")
        for rnd in range(a.repeat):
            order = tools[rnd % len(tools):] + tools[:rnd % len(tools)]
            for op in ops:
                for tool in order:
                    runs.setdefault((tool, op), []).append(one(tool, op))
        rows = [combine(runs[(t, o)]) for o in ops for t in tools if (t, o) in runs]
        text = ""
        for op in ops:
            text += table(rows, op, a.routers, a.repeat) + "\n"
            p = paired(runs, op)
            if p["wall"]:
                text += ("Paired per round, Ansible ÷ ferry: wall "
                         + ", ".join(f"{x:.1f}" for x in p["wall"])
                         + f" (median **{p['wall_median']:.1f}×**); client CPU "
                         + ", ".join(f"{x:.1f}" for x in p["cpu"])
                         + f" (median **{p['cpu_median']:.1f}×**)\n\n")
        print(text)
        doc = {
            "benchmark": "network",
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "host": {"cpus": os.cpu_count(), "kernel": platform.release()},
            "routers": a.routers, "rounds": a.repeat, "versions": versions,
            "router_memory_kib": memory,
            "ansible": {"connection": "ansible.netcommon.network_cli", "ssh_type": "libssh",
                        "network_os": ANSIBLE_NETWORK_OS,
                        "modules": ["ansible.netcommon.cli_command",
                                    "ansible.netcommon.cli_config"]},
            "desired_lines": sum(1 for l in common_config().splitlines()
                                 if l.strip() and l.strip() != "!" and l.strip() != "exit"
                                 and not l.strip().startswith("exit-")),
            "results": [dict(asdict(r), client_ms_per_router=r.client_ms_per_target,
                             router_ms_per_router=r.target_ms_per_target) for r in rows],
            "rounds_raw": {f"{t}/{o}": [asdict(x) for x in v] for (t, o), v in runs.items()},
            "paired": {op: paired(runs, op) for op in ops},
            "markdown": text,
        }
        os.makedirs(os.path.dirname(a.json), exist_ok=True)
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=1)
        log(f"wrote {a.json}")
        return 0 if all(r.ok for r in rows) else 1
    finally:
        routers.stop()
        if a.keep:
            log(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
