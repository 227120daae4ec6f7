#!/usr/bin/env python3
"""Compare ferry's catalog compiler with real Puppet 7 on the test corpus.

For every tests/catalog/cases/NAME.pp this compiles the manifest with
Puppet (`puppet catalog compile` with a yaml facts terminus in a throwaway
confdir/vardir) and with ferry, normalizes both catalogs (resources with
parameters, sorted tags, file/line; containment edges; classes) and reports
the agreement rate. Errors are compared by their Puppet-style message.

Usage:
  compare.py [--record] [--ferry-cmd CMD] [CASE...]

  --record     write Puppet's normalized result as the expected
               cases/NAME.json (or cases/NAME.err) used by `cargo test`.
  --ferry-cmd  command template for ferry; placeholders {manifest}
               {modulepath} {facts} {env} {node}. Default (also $FERRY_CMD):
               ferry catalog compile --manifest {manifest} --modulepath
               {modulepath} --facts {facts} --node {node} --environment {env}
               --format json
"""

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(ROOT, "cases")
SYSTEM_MODULES = "/usr/share/puppet/modules"  # Debian's stdlib, ntp...
MODULES = os.path.join(ROOT, "modules") + (
    ":" + SYSTEM_MODULES if os.path.isdir(SYSTEM_MODULES) else "")
FACTS = os.path.join(ROOT, "facts.json")
ENVPATH = os.path.join(ROOT, "env")
ENV = os.path.join(ENVPATH, "production")
NODE = "node1"
DEFAULT_FERRY = ("ferry catalog compile --manifest {manifest} --modulepath {modulepath} "
                 "--facts {facts} --node {node} --environment {env} --format json")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# The temp files stdlib's validate_cmd names in its messages (Ruby's
# Tempfile names: prefix, date, pid, random).
TEMPFILE = re.compile(r"(validate_cmd|validate_augeas)\d{8}-\d+-[0-9A-Za-z]+")


def rel(path):
    if path and path.startswith(ROOT + "/"):
        return path[len(ROOT) + 1:]
    return path


def normalize(cat):
    """Comparable form of a catalog (order-insensitive where Puppet is)."""
    resources = []
    for r in cat.get("resources", []):
        resources.append({
            "ref": "%s[%s]" % (r["type"], r["title"]),
            "tags": sorted(set(r.get("tags", []))),
            "file": rel(r.get("file")),
            "line": r.get("line"),
            "exported": r.get("exported", False),
            "parameters": r.get("parameters", {}),
        })
    resources.sort(key=lambda r: r["ref"])
    edges = sorted("%s -> %s" % (e["source"], e["target"]) for e in cat.get("edges", []))
    return {"resources": resources, "edges": edges, "classes": sorted(cat.get("classes", []))}


def normalize_error(text):
    text = ANSI.sub("", text).strip()
    text = re.sub(r"^Error: ", "", text)
    text = re.sub(r"^Could not call 'find' on 'catalog': ", "", text)
    text = TEMPFILE.sub(r"\1TEMPFILE", text)
    return text.replace(ROOT + "/", "")


def run_puppet(manifest, extra_args=()):
    with tempfile.TemporaryDirectory() as tmp:
        conf, var = os.path.join(tmp, "conf"), os.path.join(tmp, "var")
        os.makedirs(os.path.join(var, "yaml", "facts"))
        os.makedirs(conf)
        with open(FACTS) as f:
            facts = json.load(f)
        with open(os.path.join(var, "yaml", "facts", NODE + ".yaml"), "w") as f:
            f.write("--- !ruby/object:Puppet::Node::Facts\nname: %s\nvalues: %s\n"
                    % (NODE, json.dumps(facts)))
        cmd = ["puppet", "catalog", "compile", NODE, "--color=false",
               "--confdir", conf, "--vardir", var, "--codedir", os.path.join(tmp, "code"),
               "--environmentpath", ENVPATH, "--manifest", manifest,
               "--modulepath", MODULES, "--facts_terminus", "yaml", "--render-as", "json",
               *extra_args]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            return ("ok", normalize(json.loads(line)))
    errors = error_messages((p.stdout + p.stderr).splitlines())
    return ("err", normalize_error(errors[0]) if errors else "unknown puppet failure")


def cached(name):
    base = os.path.join(CASES, name)
    if os.path.exists(base + ".json"):
        with open(base + ".json") as f:
            return ("ok", json.load(f))
    with open(base + ".err") as f:
        return ("err", f.read().strip())


def run_ferry(template, manifest):
    cmd = template.format(manifest=shlex.quote(manifest), modulepath=shlex.quote(MODULES),
                          facts=shlex.quote(FACTS), env=shlex.quote(ENV), node=NODE)
    p = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=120)
    if p.returncode == 0:
        try:
            return ("ok", normalize(json.loads(p.stdout)))
        except ValueError:
            return ("err", "ferry printed invalid JSON")
    lines = p.stderr.splitlines()
    # blank lines inside a message are kept, as on Puppet's side
    errors = error_messages(lines) or [l for l in lines if l.strip()]
    return ("err", normalize_error(errors[-1]) if errors else "ferry failed")


LOG_PREFIX = re.compile(r"^(Error|Warning|Notice|Info|Debug): ")


def error_messages(lines):
    """The "Error: " messages of a log, each with its continuation lines
    (a template error's Filepath/Line/Detail lines, parameter lists)."""
    out = []
    for line in lines:
        if line.startswith("Error: "):
            out.append(line)
        elif out and not LOG_PREFIX.match(line) and not line.startswith("{"):
            out[-1] += "\n" + line
    return out


def diff(a, b):
    """Short description of the first differences between two results."""
    if a[0] != b[0]:
        return "puppet %s, ferry %s: %s" % (a[0], b[0], str(b[1])[:300])
    if a[0] == "err":
        return "puppet: %s\n      ferry:  %s" % (a[1], b[1])
    out = []
    pr = {r["ref"]: r for r in a[1]["resources"]}
    fr = {r["ref"]: r for r in b[1]["resources"]}
    for k in sorted(set(pr) | set(fr)):
        if pr.get(k) != fr.get(k):
            out.append("%s: puppet=%s ferry=%s" % (k, json.dumps(pr.get(k)), json.dumps(fr.get(k))))
    if a[1]["edges"] != b[1]["edges"]:
        out.append("edges: only puppet=%s only ferry=%s" % (
            sorted(set(a[1]["edges"]) - set(b[1]["edges"])), sorted(set(b[1]["edges"]) - set(a[1]["edges"]))))
    if a[1]["classes"] != b[1]["classes"]:
        out.append("classes: puppet=%s ferry=%s" % (a[1]["classes"], b[1]["classes"]))
    return "\n      ".join(out[:8])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--record", action="store_true")
    ap.add_argument("--cached", action="store_true",
                    help="use the recorded NAME.json/NAME.err instead of running puppet")
    ap.add_argument("--ferry-cmd", default=os.environ.get("FERRY_CMD", DEFAULT_FERRY))
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args()
    names = args.cases or sorted(f[:-3] for f in os.listdir(CASES) if f.endswith(".pp"))
    agree = 0
    for name in names:
        manifest = os.path.join(CASES, name + ".pp")
        pup = cached(name) if args.cached else run_puppet(manifest)
        if args.record:
            for ext in (".json", ".err"):
                try:
                    os.remove(os.path.join(CASES, name + ext))
                except FileNotFoundError:
                    pass
            if pup[0] == "ok":
                with open(os.path.join(CASES, name + ".json"), "w") as f:
                    json.dump(pup[1], f, indent=1, sort_keys=True)
                    f.write("\n")
            else:
                with open(os.path.join(CASES, name + ".err"), "w") as f:
                    f.write(pup[1] + "\n")
        fer = run_ferry(args.ferry_cmd, manifest)
        if pup == fer:
            agree += 1
            print("agree    %s" % name)
        else:
            print("DIFFER   %s\n      %s" % (name, diff(pup, fer)))
    total = len(names)
    print("\nagreement: %d/%d cases (%.1f%%)" % (agree, total, 100.0 * agree / max(total, 1)))
    return 0 if agree == total else 1


if __name__ == "__main__":
    sys.exit(main())
