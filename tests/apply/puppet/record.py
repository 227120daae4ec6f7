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
  state.txt      the root directory after the first apply

`puppet apply --catalog` cannot resolve puppet:///modules/M/P sources (a
deserialized catalog's environment is a "remote" one, without modules):
the catalog applied is the recorded one with such sources rewritten to the
local path of the module file, WORK/NAME/modules/M/files/P.
  exitcodes.txt  exit codes of the runs above, and of `puppet apply
                 manifest.pp --detailed-exitcodes` runs for comparison

Reports are Puppet's own: the `store` report processor writes YAML, which
Puppet's classes load back (Puppet::Transaction::Report) and whose
`to_data_hash` is dumped as JSON (pretty, keys in Puppet's order).

Every manifest names its root with the literal ROOT_LITERAL below; the
recorder substitutes $FERRY_PUPPET_ROOT for it when that is set (it must
be under /tmp). The root is emptied and re-created (mode 0755, root:root)
before each fresh apply. Nothing outside /tmp is touched. Must run as root
(owner/group cases) with puppet installed.

Usage: record.py [CASE...]      (default: every case)
"""

import fcntl
import grp
import hashlib
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT_LITERAL = "/tmp/ferry-puppet-case"
ROOT = os.environ.get("FERRY_PUPPET_ROOT", ROOT_LITERAL)
WORK = "/tmp/ferry-puppet-record"  # stable: the catalog's file paths point here
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


def fresh_root():
    shutil.rmtree(ROOT, ignore_errors=True)
    if os.path.lexists(ROOT):
        os.unlink(ROOT)
    os.mkdir(ROOT, 0o755)
    os.chmod(ROOT, 0o755)


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
        return var

    def common(self, var):
        return ["--color=false", "--confdir", os.path.join(self.work, "conf"),
                "--vardir", var, "--codedir", os.path.join(self.work, "code"),
                "--environmentpath", os.path.join(self.work, "code", "environments"),
                "--modulepath", self.modulepath, "--certname", NODE,
                "--facts_terminus", "yaml"]

    def run(self, cmd, log):
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
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

    def apply(self, label, var, extra=()):
        """puppet apply --catalog; returns (exit code, report JSON text)."""
        reports = os.path.join(self.work, "reports-" + label)
        shutil.rmtree(reports, ignore_errors=True)
        os.makedirs(reports)
        cmd = (["puppet", "apply", "--catalog", self.catalog, "--reports", "store",
                "--reportdir", reports, "--detailed-exitcodes"]
               + self.common(var) + self.args + list(extra))
        p = self.run(cmd, "apply-" + label)
        stored = [os.path.join(d, f) for d, _, fs in os.walk(reports) for f in fs]
        if len(stored) != 1:
            sys.exit("%s: apply %s wrote %d reports:\n%s%s"
                     % (self.name, label, len(stored), p.stdout, p.stderr))
        conv = subprocess.run(["ruby", "-e", TO_JSON, stored[0],
                               os.path.join(self.work, "conf"), var],
                              capture_output=True, text=True, check=True)
        return p.returncode, conv.stdout

    def apply_manifest(self, label, var, extra=()):
        """puppet apply MANIFEST --detailed-exitcodes: its exit code only."""
        cmd = (["puppet", "apply", self.manifest, "--detailed-exitcodes"]
               + self.common(var) + self.args + list(extra))
        return self.run(cmd, "manifest-" + label).returncode

    def write(self, name, text):
        with open(os.path.join(self.src, name), "w") as f:
            f.write(text)

    def record(self):
        self.setup()
        self.compile()
        codes = []

        fresh_root()
        var = self.vardir("main")
        rc, report = self.apply("first", var)
        self.write("report.json", report)
        self.write("state.txt", state_of(ROOT))
        codes.append(("catalog_first", rc))
        rc, report = self.apply("second", var)
        self.write("report2.json", report)
        codes.append(("catalog_second", rc))

        fresh_root()
        rc, report = self.apply("noop", self.vardir("noop"), ["--noop"])
        self.write("noop.json", report)
        codes.append(("catalog_noop", rc))

        fresh_root()
        var = self.vardir("manifest")
        codes.append(("manifest_first", self.apply_manifest("first", var)))
        codes.append(("manifest_second", self.apply_manifest("second", var)))
        fresh_root()
        codes.append(("manifest_noop",
                      self.apply_manifest("noop", self.vardir("manifest-noop"), ["--noop"])))
        self.write("exitcodes.txt", "".join("%s %d\n" % c for c in codes))
        shutil.rmtree(ROOT, ignore_errors=True)
        print("%-20s %s" % (self.name, " ".join("%s=%d" % c for c in codes)))


def main():
    if os.geteuid() != 0:
        sys.exit("record.py must run as root (owner and group cases)")
    check_root()
    os.umask(0o022)
    names = sys.argv[1:] or sorted(
        d for d in os.listdir(HERE) if os.path.exists(os.path.join(HERE, d, "manifest.pp")))
    os.makedirs(WORK, exist_ok=True)
    with open(os.path.join(WORK, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for name in names:
            Case(name).record()


if __name__ == "__main__":
    main()
