#!/usr/bin/env python3
"""Record real Puppet 7 apply material for ferry's apply tests.

For every case directory NAME/ holding a manifest.pp this compiles the
manifest with Debian's Puppet (`puppet catalog compile`), applies the
compiled catalog with `puppet apply --catalog` to a fresh root directory,
applies it again on the resulting state, applies it with --noop to another
fresh root, and writes next to the manifest:

  catalog.json   the compiled catalog (Puppet's JSON, pretty-printed)
  report.json    report of the first apply (fresh root)
  report2.json   report of the second apply (same state, same vardir)
  noop.json      report of a --noop apply (fresh root, fresh vardir)
  state.txt      the root directory after the first apply, or the output
                 of the case's `state_cmd` there

`puppet apply --catalog` cannot resolve puppet:///modules/M/P sources (a
deserialized catalog's environment is a "remote" one, without modules):
the catalog applied is the recorded one with such sources rewritten to the
local path of the module file, WORK/NAME/modules/M/files/P.
  exitcodes.txt  exit codes of the runs above, and of `puppet apply
                 manifest.pp --detailed-exitcodes` runs for comparison

Reports are Puppet's own: the `store` report processor writes YAML, which
Puppet's classes load back (Puppet::Transaction::Report) and whose
`to_data_hash` is dumped as JSON (pretty, keys in Puppet's order).

Every Puppet apply runs in a throwaway copy of this machine (class
Sandbox: new mount, PID, UTS and IPC namespaces, an overlayfs whose lower
layer is the host's `/`, pivot_root into it), so cases may add users,
install packages and start services without changing the host. Each
sequence gets a fresh sandbox: first + second apply, noop, manifest first +
second, manifest noop. In it the recorder creates the root and runs the
case's `setup_cmd` (if any) before the first apply; `state_cmd` (if any)
runs after the first apply and its stdout is state.txt.

Every manifest names its root with the literal ROOT_LITERAL below; the
recorder substitutes $FERRY_PUPPET_ROOT for it when that is set (it must
be under /tmp). The root is re-created (mode 0755, root:root) in each
sandbox. On the host only WORK and SANDBOXES (under /tmp) are written.
Must run as root, with puppet installed.

Usage: record.py [CASE...]      (default: every case)
       record.py --state ROOT     (internal: print ROOT's state listing)
"""

import fcntl
import grp
import hashlib
import json
import os
import pwd
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT_LITERAL = "/tmp/ferry-puppet-case"
ROOT = os.environ.get("FERRY_PUPPET_ROOT", ROOT_LITERAL)
WORK = "/tmp/ferry-puppet-record"  # stable: the catalog's file paths point here
SANDBOXES = "/tmp/ferry-puppet-sandbox"  # overlay upper/work layers, removed after use
NODE = "node1"
SYSTEM_MODULES = "/usr/share/puppet/modules"  # Debian's host_core, stdlib...

# Load a stored YAML report with Puppet's own classes and print its data
# hash as pretty JSON.
TO_JSON = r"""
require 'puppet'
require 'json'
Puppet.initialize_settings(['--confdir', ARGV[1], '--vardir', ARGV[2]])
report = Puppet::Util::Yaml.safe_load_file(ARGV[0], [Puppet::Transaction::Report, Symbol])
puts JSON.pretty_generate(report.to_data_hash)
"""


def check_root():
    real = os.path.realpath(ROOT)
    if not real.startswith("/tmp/") or real.count("/") < 2:
        sys.exit("refusing root %r: it must be a directory under /tmp" % ROOT)


# PID 1 of a sandbox, as tests/common/sshd/sandbox.rs does it: mount the
# overlay (lower /, upper and work in BOX), a fresh /proc, the host's /dev
# and /sys, pivot_root into it, then exec the reaper below.
SANDBOX_INIT = r"""set -eu
box=$1
shift
mount -t overlay ferry-sandbox -o "lowerdir=/,upperdir=$box/upper,workdir=$box/work" "$box/root"
mount -t proc -o nosuid,nodev,noexec proc "$box/root/proc"
mount --rbind /dev "$box/root/dev"
mount -t tmpfs -o nosuid,nodev,mode=1777 shm "$box/root/dev/shm"
mount --rbind /sys "$box/root/sys"
cd "$box/root"
pivot_root . .
umount -l .
cd /
exec "$@"
"""

# The sandbox's init once it is set up: reaps every orphan (daemons that
# services start and stop), so a stopped daemon does not linger as a zombie.
REAPER = """
import os, time
while True:
    try:
        os.wait()
    except ChildProcessError:
        time.sleep(0.05)
"""
REAPER_MARK = "ferry-sandbox-reaper"


def die_with_parent():
    """In the child before exec: SIGKILL it when the recorder dies, so an
    interrupted recorder does not leave sandboxes behind (`unshare
    --kill-child` passes the kill on to the sandbox's PID 1)."""
    import ctypes
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


class Sandbox:
    """A throwaway copy of this machine; commands run in it via nsenter."""

    def __init__(self, label, log):
        self.box = os.path.join(SANDBOXES, label)
        shutil.rmtree(self.box, ignore_errors=True)
        for sub in ("upper", "work", "root"):
            os.makedirs(os.path.join(self.box, sub))
        os.chmod(os.path.join(self.box, "upper"), 0o755)
        os.chmod(os.path.join(self.box, "root"), 0o755)
        self.launcher = subprocess.Popen(
            ["unshare", "--mount", "--pid", "--uts", "--ipc", "--fork", "--kill-child",
             "--propagation", "private", "--", "/bin/sh", "-c", SANDBOX_INIT,
             "ferry-sandbox-init", self.box, "python3", "-c", REAPER, REAPER_MARK],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, preexec_fn=die_with_parent)
        self.init = None
        host_root = os.stat("/")
        deadline = time.time() + 10
        while time.time() < deadline:
            self.init = self.init or self._child()
            if self.init and self._ready(host_root):
                return
            if self.launcher.poll() is not None:
                break
            time.sleep(0.02)
        self.close()
        sys.exit("sandbox %s did not start" % label)

    def _child(self):
        try:
            with open("/proc/%d/task/%d/children" % ((self.launcher.pid,) * 2)) as f:
                pids = f.read().split()
        except OSError:
            return None
        return int(pids[0]) if pids else None

    def _ready(self, host_root):
        """Whether init has exec'd the reaper (so the overlay is mounted and
        is its root). The sh before it has the reaper's mark in its
        arguments too: argv[0] tells them apart. Until then a command
        entering the sandbox could write to the host's files."""
        try:
            with open("/proc/%d/cmdline" % self.init, "rb") as f:
                argv = f.read().split(b"\0")
            root = os.stat("/proc/%d/root/" % self.init)
        except OSError:
            return False
        return (argv[:1] == [b"python3"] and REAPER_MARK.encode() in argv
                and (root.st_dev, root.st_ino) != (host_root.st_dev, host_root.st_ino))

    def path(self, path):
        """Host path of an absolute path inside the sandbox."""
        return "/proc/%d/root%s" % (self.init, path)

    def argv(self, argv):
        return (["nsenter", "--target", str(self.init), "--mount", "--uts", "--ipc",
                 "--pid", "--root", "--wd", "--"] + list(argv))

    def sh(self, script, what):
        """Runs script with sh -c inside; its stdout. Exits on failure."""
        p = subprocess.run(self.argv(["/bin/sh", "-c", script]), capture_output=True,
                           text=True, timeout=300, stdin=subprocess.DEVNULL)
        if p.returncode != 0:
            sys.exit("%s failed (exit %d) in the sandbox:\n%s\n%s%s"
                     % (what, p.returncode, script, p.stdout, p.stderr))
        return p.stdout

    def close(self):
        if self.init:
            try:
                os.kill(self.init, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.launcher.wait(timeout=30)
        if self.init:
            deadline = time.time() + 10
            while os.path.exists("/proc/%d" % self.init) and time.time() < deadline:
                time.sleep(0.02)
        shutil.rmtree(self.box, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def state_of(root):
    """One line per path under root: path type mode owner group sha256|target|-."""
    lines = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [None] + sorted(dirnames + filenames):
            path = dirpath if name is None else os.path.join(dirpath, name)
            if name is None and dirpath != root:
                continue  # a directory is listed by its parent
            st = os.lstat(path)
            rel = os.path.relpath(path, root)
            try:
                owner = pwd.getpwuid(st.st_uid).pw_name
            except KeyError:
                owner = str(st.st_uid)
            try:
                group = grp.getgrgid(st.st_gid).gr_name
            except KeyError:
                group = str(st.st_gid)
            if stat.S_ISLNK(st.st_mode):
                kind, extra = "link", os.readlink(path)
            elif stat.S_ISDIR(st.st_mode):
                kind, extra = "directory", "-"
            elif stat.S_ISREG(st.st_mode):
                with open(path, "rb") as f:
                    kind, extra = "file", hashlib.sha256(f.read()).hexdigest()
            else:
                kind, extra = "other", "-"
            mode = "%04o" % stat.S_IMODE(st.st_mode)
            lines.append("%s %s %s %s %s %s" % (rel, kind, mode, owner, group, extra))
    return "".join(l + "\n" for l in sorted(lines))


class Case:
    def __init__(self, name):
        self.name = name
        self.src = os.path.join(HERE, name)
        self.work = os.path.join(WORK, name)
        args_file = os.path.join(self.src, "apply_args")
        self.args = []
        if os.path.exists(args_file):
            with open(args_file) as f:
                self.args = f.read().split()
        self.setup_cmd = self.optional("setup_cmd")
        self.state_cmd = self.optional("state_cmd")

    def optional(self, name):
        path = os.path.join(self.src, name)
        if not os.path.exists(path):
            return None
        with open(path) as f:
            return f.read()

    def in_case_dir(self, script):
        """setup_cmd and state_cmd run with the case directory as cwd."""
        return "cd %s || exit 1\n%s" % (shlex.quote(self.src), script)

    def sandbox(self, label):
        """A fresh sandbox with the root made and setup_cmd run in it."""
        with open(os.path.join(self.work, "sandbox-%s.log" % label), "w") as log:
            box = Sandbox("%s-%s" % (self.name, label), log)
        try:
            box.sh("rm -rf %s && mkdir -m 0755 %s && chown 0:0 %s"
                   % ((shlex.quote(ROOT),) * 3), "making the root")
            if self.setup_cmd is not None:
                box.sh(self.in_case_dir(self.setup_cmd), self.name + "/setup_cmd")
        except BaseException:
            box.close()
            raise
        return box

    def state(self, box):
        if self.state_cmd is not None:
            return box.sh(self.in_case_dir(self.state_cmd), self.name + "/state_cmd")
        return box.sh("python3 %s --state %s" % (shlex.quote(os.path.abspath(__file__)),
                                                 shlex.quote(ROOT)), "state listing")

    def setup(self):
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(os.path.join(self.work, "conf"))
        os.makedirs(os.path.join(self.work, "code", "environments", "production"))
        shutil.copytree(os.path.join(HERE, "modules"), os.path.join(self.work, "modules"))
        with open(os.path.join(self.src, "manifest.pp")) as f:
            text = f.read()
        self.manifest = os.path.join(self.work, "manifest.pp")
        with open(self.manifest, "w") as f:
            f.write(text.replace(ROOT_LITERAL, ROOT))
        self.modulepath = os.path.join(self.work, "modules")
        if os.path.isdir(SYSTEM_MODULES):
            self.modulepath += ":" + SYSTEM_MODULES

    def vardir(self, label):
        """A vardir holding the node's facts for the yaml facts terminus."""
        var = os.path.join(self.work, "var-" + label)
        shutil.rmtree(var, ignore_errors=True)
        os.makedirs(os.path.join(var, "yaml", "facts"))
        with open(os.path.join(HERE, "facts.json")) as f:
            facts = json.load(f)
        with open(os.path.join(var, "yaml", "facts", NODE + ".yaml"), "w") as f:
            f.write("--- !ruby/object:Puppet::Node::Facts\nname: %s\nvalues: %s\n"
                    % (NODE, json.dumps(facts)))
        # The yaml terminus never runs Puppet.initialize_facts, which gives
        # Facter itself the `puppetversion` fact on a real node; providers
        # that ask Facter for it (sysctl_runtime) need it. $vardir/lib/facter
        # is on the default factpath, where pluginsync puts module facts.
        os.makedirs(os.path.join(var, "lib", "facter"))
        with open(os.path.join(var, "lib", "facter", "puppetversion.rb"), "w") as f:
            f.write("Facter.add(:puppetversion) { setcode { Puppet.version.to_s } }\n")
        return var

    def common(self, var):
        return ["--color=false", "--confdir", os.path.join(self.work, "conf"),
                "--vardir", var, "--codedir", os.path.join(self.work, "code"),
                "--environmentpath", os.path.join(self.work, "code", "environments"),
                "--modulepath", self.modulepath, "--certname", NODE,
                "--facts_terminus", "yaml"]

    def run(self, cmd, log, box=None):
        if box is not None:
            cmd = box.argv(cmd)
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                           stdin=subprocess.DEVNULL)
        with open(os.path.join(self.work, log + ".log"), "w") as f:
            f.write("$ %s\n--- stdout\n%s--- stderr\n%s--- exit %d\n"
                    % (" ".join(cmd), p.stdout, p.stderr, p.returncode))
        return p

    def compile(self):
        var = self.vardir("compile")
        cmd = ["puppet", "catalog", "compile", NODE, "--manifest", self.manifest,
               "--render-as", "json"] + self.common(var)
        p = self.run(cmd, "compile")
        lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
        if p.returncode != 0 or not lines:
            sys.exit("%s: compile failed:\n%s%s" % (self.name, p.stdout, p.stderr))
        catalog = json.loads(lines[0])
        with open(os.path.join(self.src, "catalog.json"), "w") as f:
            f.write(json.dumps(catalog, indent=2, ensure_ascii=False) + "\n")
        # The catalog applied: the same, with puppet:///modules sources made
        # local paths, which `puppet apply --catalog` cannot resolve itself.
        for res in catalog.get("resources", []):
            params = res.get("parameters") or {}
            if "source" in params:
                params["source"] = self.localise(params["source"])
        self.catalog = os.path.join(self.work, "catalog.json")
        with open(self.catalog, "w") as f:
            f.write(json.dumps(catalog, indent=2, ensure_ascii=False) + "\n")

    def localise(self, source):
        """puppet:///modules/M/P -> WORK/NAME/modules/M/files/P (lists too)."""
        if isinstance(source, list):
            return [self.localise(s) for s in source]
        prefix = "puppet:///modules/"
        if isinstance(source, str) and source.startswith(prefix):
            module, _, rest = source[len(prefix):].partition("/")
            return os.path.join(self.work, "modules", module, "files", rest)
        return source

    def apply(self, label, var, box, extra=()):
        """puppet apply --catalog in box; returns (exit code, report JSON text)."""
        reports = os.path.join(self.work, "reports-" + label)
        shutil.rmtree(reports, ignore_errors=True)
        os.makedirs(reports)
        cmd = (["puppet", "apply", "--catalog", self.catalog, "--reports", "store",
                "--reportdir", reports, "--detailed-exitcodes"]
               + self.common(var) + self.args + list(extra))
        p = self.run(cmd, "apply-" + label, box)
        # The report was written inside the sandbox: copy it out.
        shutil.copytree(box.path(reports), reports, dirs_exist_ok=True)
        stored = [os.path.join(d, f) for d, _, fs in os.walk(reports) for f in fs]
        if len(stored) != 1:
            sys.exit("%s: apply %s wrote %d reports:\n%s%s"
                     % (self.name, label, len(stored), p.stdout, p.stderr))
        conv = subprocess.run(["ruby", "-e", TO_JSON, stored[0],
                               os.path.join(self.work, "conf"), var],
                              capture_output=True, text=True, check=True)
        return p.returncode, conv.stdout

    def apply_manifest(self, label, var, box, extra=()):
        """puppet apply MANIFEST --detailed-exitcodes in box: its exit code only."""
        cmd = (["puppet", "apply", self.manifest, "--detailed-exitcodes"]
               + self.common(var) + self.args + list(extra))
        return self.run(cmd, "manifest-" + label, box).returncode

    def write(self, name, text):
        with open(os.path.join(self.src, name), "w") as f:
            f.write(text)

    def record(self):
        self.setup()
        self.compile()
        codes = []

        var = self.vardir("main")
        with self.sandbox("main") as box:
            rc, report = self.apply("first", var, box)
            self.write("report.json", report)
            self.write("state.txt", self.state(box))
            codes.append(("catalog_first", rc))
            rc, report = self.apply("second", var, box)
            self.write("report2.json", report)
            codes.append(("catalog_second", rc))

        var = self.vardir("noop")
        with self.sandbox("noop") as box:
            rc, report = self.apply("noop", var, box, ["--noop"])
            self.write("noop.json", report)
            codes.append(("catalog_noop", rc))

        var = self.vardir("manifest")
        with self.sandbox("manifest") as box:
            codes.append(("manifest_first", self.apply_manifest("first", var, box)))
            codes.append(("manifest_second", self.apply_manifest("second", var, box)))
        var = self.vardir("manifest-noop")
        with self.sandbox("manifest-noop") as box:
            codes.append(("manifest_noop",
                          self.apply_manifest("noop", var, box, ["--noop"])))
        self.write("exitcodes.txt", "".join("%s %d\n" % c for c in codes))
        print("%-20s %s" % (self.name, " ".join("%s=%d" % c for c in codes)))


def main():
    if sys.argv[1:2] == ["--state"] and len(sys.argv) == 3:
        sys.stdout.write(state_of(sys.argv[2]))  # run inside a sandbox
        return
    if os.geteuid() != 0:
        sys.exit("record.py must run as root (owner and group cases)")
    check_root()
    os.umask(0o022)
    names = sys.argv[1:] or sorted(
        d for d in os.listdir(HERE) if os.path.exists(os.path.join(HERE, d, "manifest.pp")))
    os.makedirs(WORK, exist_ok=True)
    os.makedirs(SANDBOXES, exist_ok=True)
    with open(os.path.join(WORK, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for name in names:
            Case(name).record()


if __name__ == "__main__":
    main()
