#!/usr/bin/env python3
"""The APPLY benchmark: one catalog of about 100 resources converged on N real
sshd targets, first run and converged re-run, by

  * ferry          — `ferry apply MANIFEST` (facts gathered, a catalog compiled
                     per target, applied over SSH with nothing on the target),
  * ferry-catalog  — `ferry apply --catalog FILE`, the catalog compiled once
                     beforehand by `ferry catalog compile`,
  * pyinfra        — a deploy file with the same operations,
  * ansible        — ansible-playbook with the same tasks (pipelining on),
  * puppet         — `puppet apply MANIFEST` run ON each target over ssh
                     (the agent way: Ruby, facter and the compiler there),
                     `xargs -P C`,

one tool after the other, each from the same pre-state, in one run.

The resources (default, file/exec only, what ferry applies today): 10
directories, 60 files with content (12 of them `source`d from the module
benches/apply/modules/benchapply), 5 links, 5 stale files removed, and 20
execs guarded by creates / unless / onlyif, 3 of them refreshonly and
refreshed by file changes. `--with-system-types` adds groups, users,
package checks and services (base provider).

Every target is its own sshd in its own mount namespace with a private tmpfs
(benches/fleet.py), so the managed root `<tmp>/dest/bench-apply` is the same
path on every target, one catalog fits all, and each target has its own
files. With `--with-system-types` each target also gets an overlay on /etc,
so users and groups are per target too. The harness checks the resulting
tree on every target after every run against what the catalog describes,
whatever the tool reported, and counts SSH connections and sessions per
target from the sshds' logs (LogLevel VERBOSE).

Usage:
  python3 benches/apply.py -n 50 -c 50 [--repeat 3] [--only ferry,pyinfra]
  python3 benches/apply.py --emit DIR      # write the manifest, deploy file,
                                           # playbook for a look, run nothing

The fleet, the measurement and the inventories are fleet.py's; this file
holds what is specific to applying a catalog.
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import hashlib
import json
import os
import platform
import random
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
if BENCH_DIR not in sys.path:
    sys.path.insert(0, BENCH_DIR)
import fleet  # noqa: E402
from fleet import ANSI, REPO, VENV_BIN, Result, log, measure, median, tail  # noqa: E402

APPLY_DIR = os.path.join(BENCH_DIR, "apply")
MODULEPATH = os.path.join(APPLY_DIR, "modules")
MODULE = "benchapply"
MODULE_FILES = os.path.join(MODULEPATH, MODULE, "files")
TOOLS = ["ferry", "ferry-catalog", "pyinfra", "ansible", "puppet"]
PHASES = ("first", "rerun")
# Files the system types change in /etc (restored between tools).
ETC_FILES = ("passwd", "group", "shadow", "gshadow", "subuid", "subgid")
# Ruby, facter and Puppet's compiler per target: give each run time.
TIMEOUT = 3600.0


# --------------------------------------------------------------------------
# The catalog, once, as data; every tool's input is rendered from it
# --------------------------------------------------------------------------

def content_for(rng: random.Random, path: str, size: int) -> str:
    """A config-file-like text of about `size` bytes. No braces, percent
    signs, quotes or backslashes: it goes verbatim into Puppet strings,
    Ansible's templated YAML and Python literals."""
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
             "india", "juliet", "kilo", "lima", "mike", "november", "oscar", "papa"]
    lines = [f"# {os.path.basename(path)}: managed, local changes are overwritten"]
    n = 0
    while sum(len(l) + 1 for l in lines) < size:
        if n % 9 == 0:
            lines.append(f"\n[{rng.choice(words)}-{n // 9}]")
        lines.append(f"{rng.choice(words)}_{n} = {rng.choice(words)}-{rng.randrange(1 << 32):08x}"
                     f" {rng.randrange(100000)}")
        n += 1
    return "\n".join(lines) + "\n"


def build_spec(root: str, system: bool = False) -> list[dict]:
    """The resources, in manifest order. Kinds: dir, file (content or
    source), link, absent, exec (creates / unless / onlyif / refresh),
    and with `system`: group, user, package, service."""
    rng = random.Random(12)
    spec: list[dict] = []
    dirs = [root, f"{root}/state"] + [f"{root}/app{i}" for i in range(8)]
    for d in dirs:
        spec.append({"kind": "dir", "path": d, "mode": "0755", "group": "root"})
    sources = sorted(os.listdir(MODULE_FILES))
    paths = [f"{root}/app{i}/conf{j}.conf" for i in range(8) for j in range(7)]
    paths += [f"{root}/{n}" for n in ("motd", "limits.conf", "environment", "hosts.allow")]
    for idx, path in enumerate(paths):
        mode, group = "0644", "root"
        if idx % 10 == 3:
            mode = "0600"
        elif idx % 10 == 7:
            mode, group = "0640", "daemon"
        f = {"kind": "file", "path": path, "mode": mode, "group": group}
        if idx % 5 == 2:  # 12 of the 60
            f["source"] = sources[(idx // 5) % len(sources)]
        else:
            size = 16384 if idx % 15 == 14 else rng.randrange(200, 2500)
            f["content"] = content_for(rng, path, size)
        spec.append(f)
    for k in range(5):
        spec.append({"kind": "link", "path": f"{root}/link{k}", "target": f"{root}/app{k}/conf0.conf"})
    for k in range(5):
        spec.append({"kind": "absent", "path": f"{root}/stale{k}.conf"})
    st = f"{root}/state"
    for k in range(8):
        spec.append({"kind": "exec", "title": f"build-{k}",
                     "command": f"/bin/sh -c 'echo built-{k} > {st}/built-{k}'",
                     "creates": f"{st}/built-{k}", "output": (f"state/built-{k}", f"built-{k}\n")})
    for k in range(5):
        spec.append({"kind": "exec", "title": f"append-{k}",
                     "command": f"/bin/sh -c 'echo line-{k} >> {st}/lines-{k}'",
                     "unless": f"/bin/grep -qx line-{k} {st}/lines-{k}",
                     "output": (f"state/lines-{k}", f"line-{k}\n")})
    for k in range(4):
        spec.append({"kind": "exec", "title": f"once-{k}",
                     "command": f"/bin/sh -c 'echo once-{k} > {st}/once-{k}'",
                     "onlyif": f"/usr/bin/test ! -e {st}/once-{k}",
                     "output": (f"state/once-{k}", f"once-{k}\n")})
    # Refreshed by file changes: two files subscribed, one file and one
    # sourced file subscribed, one file notifying. Each appends a line, so
    # a refresh too many (or one missing) shows in the tree.
    refresh = [("subscribe", [f"{root}/app0/conf1.conf", f"{root}/app0/conf2.conf"]),
               ("subscribe", [f"{root}/app1/conf1.conf", f"{root}/app1/conf0.conf"]),
               ("notify", [f"{root}/app2/conf1.conf"])]
    for k, (how, files) in enumerate(refresh):
        spec.append({"kind": "exec", "title": f"reload-{k}",
                     "command": f"/bin/sh -c 'echo reloaded >> {st}/reload-{k}'",
                     "refresh": files, "how": how, "output": (f"state/reload-{k}", "reloaded\n")})
    if system:
        for g in ("benchg0", "benchg1"):
            spec.append({"kind": "group", "name": g})
        for k in range(3):
            spec.append({"kind": "user", "name": f"benchu{k}", "group": f"benchg{k % 2}",
                         "home": f"{root}/home/u{k}", "shell": "/bin/sh"})
        for p in ("coreutils", "grep", "sed", "tar", "findutils"):
            spec.append({"kind": "package", "name": p})
        for k in range(3):
            flag = f"{st}/svc-{k}.running"
            spec.append({"kind": "service", "name": f"benchsvc{k}",
                         "status": f"/usr/bin/test -e {flag}",
                         "start": f"/bin/sh -c 'echo started > {flag}'",
                         "stop": f"/bin/rm -f {flag}",
                         "output": (f"state/svc-{k}.running", "started\n")})
    # Which files notify which exec (for the renderers).
    for r in spec:
        if r["kind"] == "exec" and "refresh" in r:
            for f in spec:
                if f.get("path") in r["refresh"]:
                    f.setdefault("notifies", []).append(r["title"])
    return spec


def counts(spec) -> str:
    kinds: dict[str, int] = {}
    for r in spec:
        k = r["kind"] + ("(source)" if "source" in r else "")
        kinds[k] = kinds.get(k, 0) + 1
    return ", ".join(f"{v} {k}" for k, v in kinds.items())


def source_path(name: str) -> str:
    return os.path.join(MODULE_FILES, name)


# -- Puppet -----------------------------------------------------------------

def pq(s: str) -> str:
    """A Puppet single-quoted string."""
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def puppet_manifest(spec, root: str) -> str:
    out = [f"# Generated by benches/apply.py: {len(spec)} resources ({counts(spec)}).",
           f"# Every path is under {root}, on each target's own tmpfs.", ""]

    def res(type_, title, attrs):
        w = max(len(k) for k, _ in attrs)
        body = "".join(f"  {k.ljust(w)} => {v},\n" for k, v in attrs)
        out.append(f"{type_} {{ {pq(title)}:\n{body}}}\n")

    by_title = {r["title"]: r for r in spec if r["kind"] == "exec"}
    for r in spec:
        k = r["kind"]
        if k == "dir":
            res("file", r["path"], [("ensure", "directory"), ("owner", "'root'"),
                                    ("group", pq(r["group"])), ("mode", pq(r["mode"]))])
        elif k == "file":
            a = [("ensure", "file"), ("owner", "'root'"), ("group", pq(r["group"])), ("mode", pq(r["mode"]))]
            if "source" in r:
                a.append(("source", pq(f"puppet:///modules/{MODULE}/{r['source']}")))
            else:
                a.append(("content", pq(r["content"])))
            notify = [t for t in r.get("notifies", ()) if by_title[t]["how"] == "notify"]
            if notify:
                a.append(("notify", "[" + ", ".join(f"Exec[{pq(t)}]" for t in notify) + "]"))
            res("file", r["path"], a)
        elif k == "link":
            res("file", r["path"], [("ensure", "link"), ("target", pq(r["target"]))])
        elif k == "absent":
            res("file", r["path"], [("ensure", "absent")])
        elif k == "exec":
            a = [("command", pq(r["command"]))]
            for g in ("creates", "unless", "onlyif"):
                if g in r:
                    a.append((g, pq(r[g])))
            a.append(("require", f"File[{pq(root + '/state')}]"))
            if "refresh" in r:
                a.append(("refreshonly", "true"))
                if r["how"] == "subscribe":
                    a.append(("subscribe", "[" + ", ".join(f"File[{pq(p)}]" for p in r["refresh"]) + "]"))
            res("exec", r["title"], a)
        elif k == "group":
            res("group", r["name"], [("ensure", "present")])
        elif k == "user":
            res("user", r["name"], [("ensure", "present"), ("gid", pq(r["group"])), ("home", pq(r["home"])),
                                    ("shell", pq(r["shell"])), ("managehome", "false")])
        elif k == "package":
            res("package", r["name"], [("ensure", "installed")])
        elif k == "service":
            res("service", r["name"], [("ensure", "running"), ("provider", "base"),
                                       ("status", pq(r["status"])), ("start", pq(r["start"])),
                                       ("stop", pq(r["stop"])),
                                       ("require", f"File[{pq(root + '/state')}]")])
    return "\n".join(out)


# -- pyinfra ----------------------------------------------------------------

def pyinfra_deploy(spec, root: str) -> str:
    """One operation per resource, in manifest order. Exec guards are
    shell (`test -e X || cmd`, `UNLESS || cmd`, `if ONLYIF; then cmd; fi`),
    one command per exec per run; refreshes are `_if=any_changed(...)`."""
    out = [f'"""Generated by benches/apply.py: {len(spec)} resources ({counts(spec)})."""',
           "from io import StringIO", "",
           "from pyinfra.operations import apt, files, server",
           "from pyinfra.operations.util import any_changed", ""]
    var = {}
    for i, r in enumerate(spec):
        k = r["kind"]
        if k == "dir":
            out.append(f"files.directory(name={r['path']!r}, path={r['path']!r}, user='root', "
                       f"group={r['group']!r}, mode={r['mode'][1:]!r})")
        elif k == "file":
            src = (repr(source_path(r["source"])) if "source" in r
                   else f"StringIO({r['content']!r})")
            lhs = ""
            if r.get("notifies"):
                var[r["path"]] = f"f{i}"
                lhs = f"f{i} = "
            out.append(f"{lhs}files.put(name={r['path']!r}, src={src}, dest={r['path']!r}, user='root', "
                       f"group={r['group']!r}, mode={r['mode'][1:]!r})")
        elif k == "link":
            out.append(f"files.link(name={r['path']!r}, path={r['path']!r}, target={r['target']!r})")
        elif k == "absent":
            out.append(f"files.file(name={r['path']!r}, path={r['path']!r}, present=False)")
        elif k == "exec":
            cmd = r["command"]
            if "creates" in r:
                cmd = f"test -e {r['creates']} || {cmd}"
            elif "unless" in r:
                cmd = f"{r['unless']} || {cmd}"
            elif "onlyif" in r:
                cmd = f"if {r['onlyif']}; then {cmd}; fi"
            extra = ""
            if "refresh" in r:
                extra = f", _if=any_changed({', '.join(var[p] for p in r['refresh'])})"
            out.append(f"server.shell(name={r['title']!r}, commands=[{cmd!r}]{extra})")
        elif k == "group":
            out.append(f"server.group(name={r['name']!r}, group={r['name']!r})")
        elif k == "user":
            out.append(f"server.user(name={r['name']!r}, user={r['name']!r}, group={r['group']!r}, "
                       f"home={r['home']!r}, shell={r['shell']!r}, create_home=False, ensure_home=False)")
        elif k == "package":
            out.append(f"apt.packages(name={r['name']!r}, packages=[{r['name']!r}])")
        elif k == "service":
            out.append(f"server.shell(name={r['name']!r}, commands=[{(r['status'] + ' || ' + r['start'])!r}])")
    return "\n".join(out) + "\n"


# -- Ansible ----------------------------------------------------------------

def ansible_playbook(spec, root: str) -> str:
    """As an Ansible user writes it: loops for the plain files, directories,
    links and removals; a task per file that notifies a handler; a task per
    exec (command + creates; shell + changed_when for unless / onlyif);
    refreshonly execs are handlers. Written as JSON (which is YAML)."""
    tasks: list[dict] = []
    handlers: list[dict] = []
    dirs = [r for r in spec if r["kind"] == "dir"]
    tasks.append({"name": "directories", "ansible.builtin.file": {
        "path": "{{ item.path }}", "state": "directory", "owner": "root",
        "group": "{{ item.group }}", "mode": "{{ item.mode }}"},
        "loop": [{"path": r["path"], "group": r["group"], "mode": r["mode"]} for r in dirs]})
    plain = [r for r in spec if r["kind"] == "file" and not r.get("notifies")]
    tasks.append({"name": "files with content", "ansible.builtin.copy": {
        "content": "{{ item.content }}", "dest": "{{ item.path }}", "owner": "root",
        "group": "{{ item.group }}", "mode": "{{ item.mode }}"},
        "loop": [{"path": r["path"], "content": r["content"], "group": r["group"], "mode": r["mode"]}
                 for r in plain if "content" in r],
        "loop_control": {"label": "{{ item.path }}"}})
    tasks.append({"name": "files from the module", "ansible.builtin.copy": {
        "src": "{{ item.src }}", "dest": "{{ item.path }}", "owner": "root",
        "group": "{{ item.group }}", "mode": "{{ item.mode }}"},
        "loop": [{"path": r["path"], "src": source_path(r["source"]), "group": r["group"], "mode": r["mode"]}
                 for r in plain if "source" in r]})
    for r in spec:
        if r["kind"] == "file" and r.get("notifies"):
            args = {"dest": r["path"], "owner": "root", "group": r["group"], "mode": r["mode"]}
            if "source" in r:
                args["src"] = source_path(r["source"])
            else:
                args["content"] = r["content"]
            tasks.append({"name": r["path"], "ansible.builtin.copy": args, "notify": r["notifies"]})
    tasks.append({"name": "links", "ansible.builtin.file": {
        "path": "{{ item.path }}", "src": "{{ item.target }}", "state": "link"},
        "loop": [{"path": r["path"], "target": r["target"]} for r in spec if r["kind"] == "link"]})
    tasks.append({"name": "stale files", "ansible.builtin.file": {"path": "{{ item }}", "state": "absent"},
                  "loop": [r["path"] for r in spec if r["kind"] == "absent"]})
    for r in spec:
        k = r["kind"]
        if k == "exec" and "refresh" in r:
            handlers.append({"name": r["title"], "ansible.builtin.command": r["command"]})
        elif k == "exec" and "creates" in r:
            tasks.append({"name": r["title"], "ansible.builtin.command": {
                "cmd": r["command"], "creates": r["creates"]}})
        elif k == "exec":
            if "unless" in r:
                sh = f"if {r['unless']}; then echo converged; else {r['command']}; fi"
            else:
                sh = f"if {r['onlyif']}; then {r['command']}; else echo converged; fi"
            tasks.append({"name": r["title"], "ansible.builtin.shell": sh, "register": "out",
                          "changed_when": "out.stdout != 'converged'"})
        elif k == "group":
            tasks.append({"name": r["name"], "ansible.builtin.group": {"name": r["name"]}})
        elif k == "user":
            tasks.append({"name": r["name"], "ansible.builtin.user": {
                "name": r["name"], "group": r["group"], "home": r["home"], "shell": r["shell"],
                "create_home": False}})
        elif k == "package":
            tasks.append({"name": r["name"], "ansible.builtin.apt": {"name": r["name"], "state": "present"}})
        elif k == "service":
            tasks.append({"name": r["name"], "ansible.builtin.shell":
                          f"if {r['status']}; then echo converged; else {r['start']}; fi",
                          "register": "out", "changed_when": "out.stdout != 'converged'"})
    play = [{"name": f"Generated by benches/apply.py: {len(spec)} resources ({counts(spec)})",
             "hosts": "all", "gather_facts": False, "tasks": tasks, "handlers": handlers}]
    return json.dumps(play, indent=1) + "\n"


# -- What every target must hold afterwards ------------------------------------

GIDS = {"root": 0, "daemon": 1}


def expected_tree(spec, root: str) -> dict:
    """relative path -> (type, mode, uid, gid, sha256-or-link-target); None
    fields are not checked (files made by execs: their mode is the umask's)."""
    def sha(b: bytes) -> str:
        return hashlib.sha256(b).hexdigest()
    want = {}
    for r in spec:
        rel = os.path.relpath(r["path"], root) if "path" in r else None
        if r["kind"] == "dir":
            want[rel] = ("dir", int(r["mode"], 8), 0, GIDS[r["group"]], None)
        elif r["kind"] == "file":
            data = (open(source_path(r["source"]), "rb").read() if "source" in r
                    else r["content"].encode())
            want[rel] = ("file", int(r["mode"], 8), 0, GIDS[r["group"]], sha(data))
        elif r["kind"] == "link":
            want[rel] = ("link", None, None, None, r["target"])
        if "output" in r:
            want[r["output"][0]] = ("file", None, None, None, sha(r["output"][1].encode()))
    return want


def tree(top: str) -> dict:
    """The same shape as expected_tree, read from disk (no symlink followed)."""
    out = {}

    def one(full, rel):
        st = os.lstat(full)
        if stat.S_ISLNK(st.st_mode):
            out[rel] = ("link", None, None, None, os.readlink(full))
        elif stat.S_ISDIR(st.st_mode):
            out[rel] = ("dir", stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, None)
        else:
            with open(full, "rb") as fh:
                digest = hashlib.sha256(fh.read()).hexdigest()
            out[rel] = ("file", stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, digest)
    one(top, ".")
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            one(full, os.path.relpath(full, top))
    return out


def tree_diff(want: dict, got: dict) -> list[str]:
    diffs = []
    for rel in sorted(set(want) | set(got)):
        if rel not in got:
            diffs.append(f"{rel} missing")
        elif rel not in want:
            diffs.append(f"{rel} unexpected ({got[rel][0]})")
        else:
            names = ("type", "mode", "uid", "gid", "content")
            for name, w, g in zip(names, want[rel], got[rel]):
                if w is not None and w != g:
                    shown = (oct(w), oct(g)) if name == "mode" else (str(w)[:16], str(g)[:16])
                    diffs.append(f"{rel} {name} {shown[1]}, want {shown[0]}")
                    break
    return diffs


# --------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------

@dataclass
class ApplyResult(Result):
    phase: str = ""
    conns_per_target: float = 0.0      # SSH connections accepted, per target
    sessions_per_target: float = 0.0   # session channels (exec/shell/subsystem)
    sessions_max: int = 0
    changes_per_target: float | None = None  # as the tool reported them
    verified: int = 0


class ApplyBench:
    def __init__(self, bench: fleet.Bench, system: bool):
        self.b = bench
        self.f = bench.f
        self.system = system
        self.root = os.path.join(self.f.dest_dir, "bench-apply")
        self.puppet_state = os.path.join(self.f.dest_dir, "puppet-state")
        self.ferry_cache = os.path.join(self.f.dest_dir, "ferry-cache")
        self.spec = build_spec(self.root, system)
        self.want = expected_tree(self.spec, self.root)
        d = self.f.dir
        self.manifest = os.path.join(d, "manifest.pp")
        self.deploy = os.path.join(d, "deploy.py")
        self.playbook = os.path.join(d, "playbook.yml")
        self.catalog = os.path.join(d, "catalog.json")
        for path, text in ((self.manifest, puppet_manifest(self.spec, self.root)),
                           (self.deploy, pyinfra_deploy(self.spec, self.root)),
                           (self.playbook, ansible_playbook(self.spec, self.root))):
            with open(path, "w") as fh:
                fh.write(text)
        self.inventory = self._ferry_inventory()
        self.log_offsets: dict[str, int] = {}
        self.notes: dict[str, str] = {}

    def _ferry_inventory(self) -> str:
        """fleet.py's ferry inventory, with ferry's task cache and tmpdir
        (where the apply lock is) on each target's own tmpfs: the fleet's
        targets share one HOME and one /tmp, and ferry applies one catalog
        at a time per machine."""
        path = os.path.join(self.f.dir, "inventory-apply.yaml")
        text = open(self.b.ferry_inv).read()
        marker = "    load-config: false\n"
        assert marker in text, "fleet.py's ferry inventory changed; update apply.py"
        with open(path, "w") as fh:
            fh.write(text.replace(marker, marker + f"    cache-dir: {self.ferry_cache}\n"
                                  f"    tmpdir: {self.f.dest_dir}\n", 1))
        return path

    # -- availability -----------------------------------------------------
    def available(self, tool: str) -> str | None:
        ferry = self.b.ferry
        if tool.startswith("ferry"):
            if not os.access(ferry, os.X_OK):
                return f"binary {ferry} not found (build with cargo build --profile dist)"
            if subprocess.run([ferry, "apply", "--help"], capture_output=True).returncode != 0:
                return "ferry has no `apply` subcommand"
            self.b.versions["ferry"] = fleet.tool_version([ferry, "--version"])
            if tool == "ferry-catalog" and not os.path.exists(self.catalog):
                t0 = time.perf_counter()
                r = subprocess.run([ferry, "catalog", "compile", "--manifest", self.manifest,
                                    "--modulepath", MODULEPATH, "--node", "bench"],
                                   capture_output=True, text=True)
                if r.returncode != 0:
                    return f"ferry catalog compile failed: {tail(r.stderr, r.stdout, n=3)}"
                with open(self.catalog, "w") as fh:
                    fh.write(r.stdout)
                self.notes["ferry-catalog"] = (f"catalog compiled once beforehand by `ferry catalog "
                                               f"compile` in {1000 * (time.perf_counter() - t0):.0f} ms "
                                               "(not in the figures)")
            return None
        if tool in ("pyinfra", "ansible"):
            return self.b.available(tool)
        if tool == "puppet":
            if not shutil.which("puppet"):
                return "puppet is not installed"
            self.b.versions["puppet"] = fleet.tool_version(["puppet", "--version"])
            self.b.versions.setdefault("openssh", fleet.tool_version(["ssh", "-V"]))
            return None
        return "unknown tool"

    # -- per-target state -------------------------------------------------
    def reset(self):
        """Every target back to the same pre-state: an empty managed root
        holding the stale files the catalog removes, no Puppet state, no
        ferry cache, /etc as the machine's."""
        for a in self.f.addrs:
            base = self.f.target_path(a, "")
            for d in (self.root, self.puppet_state, self.ferry_cache):
                shutil.rmtree(base + d, ignore_errors=True)
            os.makedirs(base + self.root)
            os.chmod(base + self.root, 0o755)
            for r in self.spec:
                if r["kind"] == "absent":
                    with open(base + r["path"], "w") as fh:
                        fh.write("stale\n")
            if self.system:
                for name in ETC_FILES:
                    if os.path.exists(f"/etc/{name}"):
                        shutil.copyfile(f"/etc/{name}", f"{base}/etc/{name}")

    def verify(self, res: ApplyResult) -> list[str]:
        """Compare the tree on every target with the catalog's; caps the
        tool's own success count."""
        good, bad = 0, []
        for a in self.f.addrs:
            try:
                got = tree(self.f.target_path(a, self.root))
            except OSError as e:
                bad.append(f"{a}: {e}")
                continue
            diffs = tree_diff(self.want, got)
            if self.system:
                diffs += self._verify_etc(a)
            if diffs:
                bad.append(f"{a}: {'; '.join(diffs[:3])}" + (f" (+{len(diffs) - 3})" if len(diffs) > 3 else ""))
            else:
                good += 1
        res.verified = good
        if good != res.success:
            res.note += f"tool reported {res.success} ok, tree verified on {good}; "
        res.success = min(res.success, good)
        if bad:
            res.errors = (res.errors + bad)[:8]
            log(f"  {res.tool} {res.phase}: {len(bad)} target(s) differ from the catalog, e.g. {bad[:2]}")
        return bad

    def _verify_etc(self, addr) -> list[str]:
        base = self.f.target_path(addr, "")
        with open(f"{base}/etc/passwd") as fh:
            users = {l.split(":")[0] for l in fh}
        with open(f"{base}/etc/group") as fh:
            groups = {l.split(":")[0] for l in fh}
        out = [f"user {r['name']} missing" for r in self.spec if r["kind"] == "user" and r["name"] not in users]
        out += [f"group {r['name']} missing" for r in self.spec if r["kind"] == "group" and r["name"] not in groups]
        return out

    # -- sshd logs: connections and sessions per target --------------------
    def _logs(self):
        for k, a in enumerate(self.f.addrs):
            yield a, os.path.join(self.f.dir, f"sshd.{k}.log")

    def mark_logs(self):
        for a, path in self._logs():
            try:
                self.log_offsets[a] = os.path.getsize(path)
            except OSError:
                self.log_offsets[a] = 0

    def count_sessions(self, res: ApplyResult):
        conns, sessions = [], []
        for a, path in self._logs():
            try:
                with open(path, "rb") as fh:
                    fh.seek(self.log_offsets.get(a, 0))
                    text = fh.read().decode("utf-8", "replace")
            except OSError:
                text = ""
            conns.append(len(re.findall(r"Accepted publickey for ", text)))
            sessions.append(len(re.findall(r"Starting session: ", text)))
        n = len(conns) or 1
        res.conns_per_target = sum(conns) / n
        res.sessions_per_target = sum(sessions) / n
        res.sessions_max = max(sessions, default=0)

    # -- the tools --------------------------------------------------------
    def run(self, tool: str, phase: str) -> ApplyResult:
        if phase == "first":
            self.reset()
        self.mark_logs()
        base, changes = getattr(self, "_" + tool.replace("-", "_"))(phase)
        res = ApplyResult(**asdict(base), phase=phase)
        self.count_sessions(res)
        if changes:
            res.changes_per_target = sum(changes) / len(changes)
        self.verify(res)
        res.ok = res.success == self.f.n and res.exit_code == 0
        if res.ok:
            res.errors = []
        return res

    def _ferry_common(self, tool, phase, source_args):
        argv = [self.b.ferry, "apply", *source_args, "--modulepath", MODULEPATH, "-t", "all",
                "-i", self.inventory, "--concurrency", str(self.b.c), "--format", "json"]
        res, out, err = measure(self.f, tool, phase, argv, env=self.b.base_env, cwd=self.f.dir,
                                timeout=TIMEOUT)
        changes, ok = [], 0
        try:
            items = json.loads(out)["items"]
        except (ValueError, KeyError, TypeError):
            items = []
            res.errors = tail(err, out)
        for it in items:
            m = re.search(r"changed: (\d+), failed: (\d+)", str((it.get("value") or {}).get("_output", "")))
            if it.get("status") == "success" and m and m.group(2) == "0":
                ok += 1
            elif len(res.errors) < 5:
                res.errors.append(f"{it.get('target')}: {json.dumps(it.get('value'))[:300]}")
            if m:
                changes.append(int(m.group(1)))
        res.success = ok
        return res, changes

    def _ferry(self, phase):
        return self._ferry_common("ferry", phase, [self.manifest])

    def _ferry_catalog(self, phase):
        return self._ferry_common("ferry-catalog", phase, ["--catalog", self.catalog])

    def _pyinfra(self, phase):
        argv = self.b.pyinfra_argv() + [self.deploy]
        res, out, err = measure(self.f, "pyinfra", phase, argv, env=self.b.pyinfra_env(),
                                cwd=self.f.dir, timeout=TIMEOUT)
        text = ANSI.sub("", out + err)
        # Per host and operation pyinfra prints "[host] Success" (changed)
        # or "[host] No changes"; failures "[host] Error: ...".
        changed: dict[str, int] = {a: 0 for a in self.f.addrs}
        failed = set()
        for host, what in re.findall(r"^\s*\[(127\.[0-9.]+)\]\s+(Success|No changes|Error)", text, re.M):
            if what == "Success":
                changed[host] = changed.get(host, 0) + 1
            elif what == "Error":
                failed.add(host)
        res.success = (self.f.n - len(failed)) if res.exit_code == 0 else 0
        if res.exit_code != 0 or failed:
            res.errors = [l for l in text.splitlines() if "rror" in l][:5] or tail(err, out)
        return res, list(changed.values())

    def _ansible(self, phase):
        exe = os.path.join(VENV_BIN, "ansible-playbook")
        argv = [exe, "-i", self.b.ansible_inv, "-f", str(self.b.c), self.playbook]
        res, out, err = measure(self.f, "ansible", phase, argv, env=self.b.ansible_env(),
                                cwd=self.f.dir, timeout=TIMEOUT)
        ok, changes = 0, []
        for m in re.finditer(r"^(\S+)\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)",
                             ANSI.sub("", out), re.M):
            changes.append(int(m.group(3)))
            if m.group(4) == "0" and m.group(5) == "0":
                ok += 1
        res.success = ok
        if ok != self.f.n:
            res.errors = [l for l in out.splitlines() if "FAILED" in l or "UNREACHABLE" in l][:5] or tail(err, out)
        res.note += "changes counted per task (a loop task is one); "
        return res, changes

    def _puppet(self, phase):
        s = self.puppet_state
        opts = ["-F", "/dev/null", "-o", "BatchMode=yes", "-o", f"UserKnownHostsFile={self.f.known_hosts}",
                "-o", "StrictHostKeyChecking=yes", "-o", "GlobalKnownHostsFile=/dev/null",
                "-o", "IdentitiesOnly=yes", "-i", self.f.key, "-o", "User=root",
                "-o", "KexAlgorithms=curve25519-sha256"]
        remote = ["puppet", "apply", "--color=false", f"--confdir={s}/etc", f"--vardir={s}/var",
                  f"--codedir={s}/code", f"--rundir={s}/run", f"--logdir={s}/log", f"--publicdir={s}/public",
                  f"--modulepath={MODULEPATH}", self.manifest]
        argv = ["xargs", "-P", str(self.b.c), "-I{}", "ssh", *opts, "-p", str(self.f.port), "{}", *remote]
        res, out, err = measure(self.f, "puppet", phase, argv, env=self.b.base_env, cwd=self.f.dir,
                                stdin_data="\n".join(self.f.addrs) + "\n", timeout=TIMEOUT)
        # Each target's outcome from its own last_run_summary.yaml.
        ok, changes = 0, []
        for a in self.f.addrs:
            summary = self._puppet_summary(self.f.target_path(a, s))
            if summary is None:
                if len(res.errors) < 5:
                    res.errors.append(f"{a}: no last_run_summary.yaml")
                continue
            changes.append(summary.get(("changes", "total"), 0))
            if summary.get(("resources", "failed"), 1) == 0 and summary.get(("events", "failure"), 0) == 0:
                ok += 1
            elif len(res.errors) < 5:
                res.errors.append(f"{a}: {summary}")
        res.success = ok
        if ok != self.f.n:
            res.errors += tail(err, out)
        res.note += "puppet runs on the target: its CPU is in the target column; "
        return res, changes

    @staticmethod
    def _puppet_summary(state: str) -> dict | None:
        for dirpath, _, files in os.walk(state):
            if "last_run_summary.yaml" in files:
                out, section = {}, None
                for line in open(os.path.join(dirpath, "last_run_summary.yaml")):
                    m = re.match(r"^(\w+):\s*$", line)
                    if m:
                        section = m.group(1)
                        continue
                    m = re.match(r"^\s+(\w+):\s*([0-9]+)\s*$", line)
                    if m and section:
                        out[(section, m.group(1))] = int(m.group(2))
                return out
        return None


# --------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------

def combine(rs: list[ApplyResult]) -> ApplyResult:
    if len(rs) == 1:
        return rs[0]
    base = fleet.combine(rs)
    r = ApplyResult(**asdict(base), phase=rs[0].phase)
    r.conns_per_target = median([x.conns_per_target for x in rs])
    r.sessions_per_target = median([x.sessions_per_target for x in rs])
    r.sessions_max = max(x.sessions_max for x in rs)
    ch = [x.changes_per_target for x in rs if x.changes_per_target is not None]
    r.changes_per_target = median(ch) if ch else None
    r.verified = min(x.verified for x in rs)
    return r


def ratio(x, ref):
    return f"{x / ref:.1f}×" if x and ref else "–"


def table(results: list[ApplyResult], phase: str, n: int, c: int, nres: int) -> str:
    rows = [r for r in results if r.phase == phase and not r.skipped]
    ref = next((r for r in rows if r.tool == "ferry"), None)
    title = {"first": "First run (fresh targets)", "rerun": "Converged re-run"}[phase]
    out = (f"**{title}** ({nres} resources, N={n}, concurrency={c})\n\n"
           "| tool | ok/N | wall s | client CPU ms/target | target CPU ms/target | max RSS MiB (1 proc) | "
           "SSH conns/target | sessions/target | changes/target | wall vs ferry | client CPU vs ferry |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        ch = "–" if r.changes_per_target is None else f"{r.changes_per_target:.1f}"
        out += (f"| {r.tool} | {r.success}/{r.targets} | {r.wall_s:.2f} | {r.client_ms_per_target:.2f} | "
                f"{r.target_ms_per_target:.1f} | {r.max_rss_kib / 1024:.1f} | {r.conns_per_target:.1f} | "
                f"{r.sessions_per_target:.1f} | {ch} | "
                f"{ratio(r.wall_s, ref.wall_s) if ref else '–'} | "
                f"{ratio(r.client_ms_per_target, ref.client_ms_per_target) if ref else '–'} |\n")
    return out


def paired(runs: dict, tools, phase) -> list[str]:
    lines = []
    for ref in ("ferry", "ferry-catalog"):
        base = runs.get((ref, phase), [])
        for tool in tools:
            mine = runs.get((tool, phase), [])
            if tool.startswith("ferry") or not mine or len(mine) != len(base):
                continue
            rs = [m.wall_s / b.wall_s for m, b in zip(mine, base) if b.wall_s and m.ok and b.ok]
            if rs:
                lines.append(f"- {phase}: {tool} wall ÷ {ref} wall, per round: "
                             f"{', '.join(f'{x:.2f}' for x in rs)} → median {median(rs):.2f}×")
    return lines


# --------------------------------------------------------------------------

def sshd_wrapper(workdir: str, dest: str, system: bool) -> str:
    """fleet.py starts `SSHD -D -f CFG -E LOG` inside each target's mount
    namespace, after mounting its tmpfs; this wrapper takes sshd's place to
    raise the log level (connections and sessions are counted from the
    logs) and, for the system types, to put an overlay on /etc."""
    path = os.path.join(workdir, "sshd-wrapper")
    overlay = ""
    if system:
        overlay = (f'mkdir -p {dest}/.etc-upper {dest}/.etc-work\n'
                   f'mount -t overlay bench-etc -o lowerdir=/etc,upperdir={dest}/.etc-upper,'
                   f'workdir={dest}/.etc-work /etc\n')
    with open(path, "w") as fh:
        fh.write(f"#!/bin/sh\nset -e\n{overlay}exec {fleet.SSHD} -o LogLevel=VERBOSE \"$@\"\n")
    os.chmod(path, 0o755)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--targets", "-n", type=int, default=50)
    ap.add_argument("--concurrency", "-c", type=int, default=50)
    ap.add_argument("--only", help=f"comma-separated subset of: {','.join(TOOLS)}")
    ap.add_argument("--repeat", "-r", type=int, default=1,
                    help="rounds (tool order rotating); the tables give medians and paired ratios")
    ap.add_argument("--once", default="ansible",
                    help="tools that run in the first round only (default: ansible, which takes "
                         "about 40 minutes per round at N=50); '' for none")
    ap.add_argument("--with-system-types", action="store_true",
                    help="add groups, users, package checks and services (base provider) to the catalog; "
                         "each target gets an overlay on /etc")
    ap.add_argument("--port", type=int, default=2222)
    ap.add_argument("--ferry", default=os.path.join(REPO, "target", "dist", "ferry"))
    ap.add_argument("--json", default=os.path.join(BENCH_DIR, "results", "apply.json"))
    ap.add_argument("--keep", action="store_true", help="keep the temp dir (logs, outputs, inputs)")
    ap.add_argument("--no-install", action="store_true", help="don't pip install missing peers")
    ap.add_argument("--emit", metavar="DIR", help="write manifest.pp, deploy.py and playbook.yml "
                    "(root /tmp/bench-apply) into DIR and exit")
    a = ap.parse_args()

    if a.emit:
        os.makedirs(a.emit, exist_ok=True)
        root = "/tmp/bench-apply"
        spec = build_spec(root, a.with_system_types)
        for name, text in (("manifest.pp", puppet_manifest(spec, root)), ("deploy.py", pyinfra_deploy(spec, root)),
                           ("playbook.yml", ansible_playbook(spec, root))):
            with open(os.path.join(a.emit, name), "w") as fh:
                fh.write(text)
        print(f"{len(spec)} resources: {counts(spec)}; written to {a.emit}")
        return 0

    tools = list(TOOLS) if not a.only else [t.strip() for t in a.only.split(",") if t.strip()]
    for t in tools:
        if t not in TOOLS:
            ap.error(f"unknown tool {t!r}; choose from {TOOLS}")
    if a.repeat < 1:
        ap.error("--repeat must be at least 1")
    if not a.no_install:
        fleet.ensure_venv(tools)

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(fleet.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        log("warning: PR_SET_CHILD_SUBREAPER failed; daemonised helpers won't be counted")
    workdir = tempfile.mkdtemp(prefix="ferry-apply-")
    fleet.LAUNCHER = fleet.build_launcher(workdir)
    f = fleet.Fleet(a.targets, a.port, workdir)
    fleet.SSHD = sshd_wrapper(workdir, f.dest_dir, a.with_system_types)

    def on_signal(signum, _frame):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    runs: dict[tuple[str, str], list[ApplyResult]] = {}
    skipped: list[ApplyResult] = []
    ab = None
    try:
        log(f"starting {a.targets} targets in {workdir}")
        t0 = time.monotonic()
        f.setup()
        log(f"fleet ready: {len(f.listener_pids)} sshd listeners, {time.monotonic() - t0:.1f}s")
        bench = fleet.Bench(f, a.concurrency, a.ferry)
        ab = ApplyBench(bench, a.with_system_types)
        log(f"catalog: {len(ab.spec)} resources ({counts(ab.spec)})")
        missing = {t: ab.available(t) for t in tools}
        for t, why in missing.items():
            if why:
                log(f"skip {t}: {why}")
                for ph in PHASES:
                    skipped.append(ApplyResult(tool=t, op=ph, phase=ph, skipped=why, targets=a.targets))
        present = [t for t in tools if not missing[t]]
        for rnd in range(a.repeat):
            order = present[rnd % len(present):] + present[:rnd % len(present)] if present else []
            once = {t.strip() for t in a.once.split(",") if t.strip()}
            for tool in order:
                if rnd > 0 and tool in once:
                    continue
                for ph in PHASES:
                    log(f"run {tool} {ph}" + (f" (round {rnd + 1}/{a.repeat})" if a.repeat > 1 else "") + " ...")
                    try:
                        r = ab.run(tool, ph)
                    except Exception as e:  # noqa: BLE001 - record, go on with the next tool
                        log(f"  {tool} {ph} crashed: {e!r}")
                        skipped.append(ApplyResult(tool=tool, op=ph, phase=ph, targets=a.targets,
                                                   skipped=f"harness error: {e!r}"))
                        break
                    runs.setdefault((tool, ph), []).append(r)
                    ch = "–" if r.changes_per_target is None else f"{r.changes_per_target:.1f}"
                    log(f"  {tool} {ph}: {r.success}/{r.targets} ok (verified {r.verified}), wall {r.wall_s:.2f}s, "
                        f"client {r.client_ms_per_target:.2f} ms/target, target {r.target_ms_per_target:.1f} "
                        f"ms/target, maxrss {r.max_rss_kib / 1024:.1f} MiB, conns {r.conns_per_target:.1f}, "
                        f"sessions {r.sessions_per_target:.1f}/target, changes {ch}/target"
                        + (f"  errors: {r.errors[:3]}" if r.errors and not r.ok else ""))
    except KeyboardInterrupt as e:
        log(f"interrupted: {e}")
    finally:
        f.stop()
        fleet.reap_leftovers(set())
        left = [p for p in fleet.process_table() if p != os.getpid() and fleet._cmdline(p).find(workdir) >= 0]
        for p in left:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if a.keep:
            log(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)

    results = [combine(runs[(t, ph)]) for t in tools for ph in PHASES if (t, ph) in runs] + skipped
    if not results or ab is None:
        return 1
    doc = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": {"cpus": os.cpu_count(), "kernel": platform.release(), "python": platform.python_version()},
        "targets": a.targets,
        "concurrency": a.concurrency,
        "repeat": a.repeat,
        "system_types": a.with_system_types,
        "resources": len(ab.spec),
        "catalog": counts(ab.spec),
        "versions": ab.b.versions,
        "notes": ab.notes,
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
    for ph in PHASES:
        print(table(results, ph, a.targets, a.concurrency, len(ab.spec)))
        if a.repeat > 1:
            print("\n".join(paired(runs, tools, ph)) + "\n")
    for r in skipped:
        if r.phase == "first":
            print(f"- {r.tool}: skipped ({r.skipped})")
    for t, note in ab.notes.items():
        print(f"- {t}: {note}")
    for tool, ph, note in sorted({(r.tool, r.phase, r.note) for r in results if r.note and not r.skipped}):
        print(f"- {tool} {ph}: {note.strip().rstrip(';')}")
    print(f"\nversions: {json.dumps(ab.b.versions)}")
    print(f"results written to {os.path.relpath(a.json)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
