#!/usr/bin/env python3
"""Catalog compile speed: ferry against Puppet 7, side by side in one run.

Compiles the same manifests with `ferry catalog compile` and with
`puppet catalog compile` (both as the one-shot commands a user runs, facts
from tests/catalog/facts.json) and prints wall time and CPU (user+sys of
the whole process tree) per catalog, and the ratio. The manifests are the
corpus cases Puppet compiles without error, plus a generated one with
1,000 resources (classes, a defined type, relationships).

  python3 benches/catalog.py [--ferry target/dist/ferry] [--cases N] [--repeat R]

With --debian it measures the Debian module corpus (tests/debian) instead:
ferry compiles every case (`ferry catalog compile -e CODE`, one process per
catalog, as run.py does), Puppet warm in-process is the per-case time
puppet_compile.rb recorded in WORK/puppet.jsonl (one Ruby process compiling
every case after the first; its wall and CPU time), ferry warm in-process
is one `ferry catalog compile --batch` process compiling every case (its
whole wall and CPU time divided by the cases), and a cold `puppet catalog
compile` process runs on a sample of --cold N cases spread over the
modules and fact sets.
It prints the side-by-side table and writes --json (benches/results/).

  python3 benches/catalog.py --debian [--ferry target/dist/ferry] [--cold 24]
      [--sample K] [--json benches/results/catalog-debian.json]
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


# ------------------------------------------------------- the Debian corpus

DEBIAN = os.path.join(ROOT, "tests", "debian")


def debian_cases():
    """(id, code, factset, module) of every corpus case, run.py's order."""
    with open(os.path.join(DEBIAN, "cases.jsonl")) as f:
        cases = [json.loads(line) for line in f]
    sets = sorted(f[:-5] for f in os.listdir(os.path.join(DEBIAN, "facts")) if f.endswith(".json"))
    return [("%s@%s" % (c["name"], fs), c["code"], fs, c["module"]) for fs in sets for c in cases]


def debian_ferry(ferry, code, factset):
    return [ferry, "catalog", "compile", "-e", code, "--modulepath", "/usr/share/puppet/modules",
            "--facts", os.path.join(DEBIAN, "facts", factset + ".json"), "--node", "node1.example.com",
            "--format", "json"]


def debian_ferry_batch(ferry, cases):
    """One `ferry catalog compile --batch` process compiling every case
    (ferry warm in-process, as Puppet's corpus process): (answers that
    compiled, wall seconds, CPU seconds) of the whole process."""
    lines = "".join(json.dumps({"code": code, "node": "node1.example.com",
                                "facts_file": os.path.join(DEBIAN, "facts", fs + ".json")}) + "\n"
                    for _, code, fs, _ in cases)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    p = subprocess.run([ferry, "catalog", "compile", "--batch", "-", "--modulepath",
                        "/usr/share/puppet/modules"], input=lines, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    answers = [json.loads(line) for line in p.stdout.splitlines()]
    if len(answers) != len(cases):
        sys.exit("ferry --batch answered %d of %d cases" % (len(answers), len(cases)))
    return sum(1 for a in answers if "catalog" in a), wall, cpu


def debian_puppet_cold(code, factset, tmp):
    """A cold `puppet catalog compile` of one corpus case (its own confdir)."""
    conf, var = os.path.join(tmp, "conf"), os.path.join(tmp, "var")
    os.makedirs(os.path.join(var, "yaml", "facts"), exist_ok=True)
    os.makedirs(os.path.join(tmp, "env", "production"), exist_ok=True)
    os.makedirs(conf, exist_ok=True)
    with open(os.path.join(DEBIAN, "facts", factset + ".json")) as f:
        facts = json.load(f)
    with open(os.path.join(var, "yaml", "facts", "node1.example.com.yaml"), "w") as f:
        f.write("--- !ruby/object:Puppet::Node::Facts\nname: node1.example.com\nvalues: %s\n"
                % json.dumps(facts))
    manifest = os.path.join(tmp, "site.pp")
    with open(manifest, "w") as f:
        f.write(code + "\n")
    return ["puppet", "catalog", "compile", "node1.example.com", "--color=false", "--confdir", conf,
            "--vardir", var, "--codedir", os.path.join(tmp, "code"), "--environmentpath",
            os.path.join(tmp, "env"), "--manifest", manifest, "--modulepath", "/usr/share/puppet/modules",
            "--facts_terminus", "yaml", "--render-as", "json"]


def spread(items, n):
    """n items spread evenly over a list (deterministic)."""
    if n <= 0 or n >= len(items):
        return list(items)
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]


def pct(values, q):
    v = sorted(values)
    if not v:
        return 0.0
    return v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]


def debian_main(args):
    work = os.environ.get("CORPUS_WORK") or os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "debian")
    warm, warm_cpu = {}, {}
    pj = os.path.join(work, "puppet.jsonl")
    if os.path.exists(pj):
        with open(pj) as f:
            first = True
            for line in f:
                r = json.loads(line)
                if not first and r.get("ms") is not None:  # the first case warms Ruby up
                    warm[r["id"]] = r["ms"]
                    if r.get("cpu_ms") is not None:
                        warm_cpu[r["id"]] = r["cpu_ms"]
                first = False
    cases = debian_cases()
    if args.sample:
        cases = spread(cases, args.sample)
    ferry_rows = []
    for i, (cid, code, fs, mod) in enumerate(cases):
        p, wall, cpu = run_measured(debian_ferry(args.ferry, code, fs))
        ferry_rows.append({"id": cid, "module": mod, "ok": p.returncode == 0,
                           "wall_ms": wall * 1000, "cpu_ms": cpu * 1000})
        if i % 500 == 0:
            print("ferry %d/%d" % (i, len(cases)), file=sys.stderr)
    batch_ok, batch_wall, batch_cpu = debian_ferry_batch(args.ferry, cases)
    print("ferry --batch: %d cases, %.1f s wall, %.1f s CPU" % (len(cases), batch_wall, batch_cpu),
          file=sys.stderr)
    cold_rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for cid, code, fs, mod in spread(cases, args.cold):
            p, wall, cpu = run_measured(debian_puppet_cold(code, fs, os.path.join(tmp, cid.replace(":", "_"))))
            cold_rows.append({"id": cid, "wall_ms": wall * 1000, "cpu_ms": cpu * 1000,
                              "ok": p.returncode == 0})
            print("puppet cold %-50s %7.0f ms" % (cid, wall * 1000), file=sys.stderr)
    fw = [r["wall_ms"] for r in ferry_rows]
    fc = [r["cpu_ms"] for r in ferry_rows]
    ww = [warm[r["id"]] for r in ferry_rows if r["id"] in warm]
    wc = [warm_cpu[r["id"]] for r in ferry_rows if r["id"] in warm_cpu]
    n = max(len(cases), 1)
    bw, bc = batch_wall * 1000 / n, batch_cpu * 1000 / n
    cw = [r["wall_ms"] for r in cold_rows]
    cc = [r["cpu_ms"] for r in cold_rows]
    cold_ids = {r["id"] for r in cold_rows}
    f_cold_w = [r["wall_ms"] for r in ferry_rows if r["id"] in cold_ids]
    f_cold_c = [r["cpu_ms"] for r in ferry_rows if r["id"] in cold_ids]
    mean = lambda v: sum(v) / max(len(v), 1)  # noqa: E731
    summary = {
        "cases": len(ferry_rows),
        "ferry_wall_ms": {"mean": mean(fw), "median": pct(fw, 0.5), "p95": pct(fw, 0.95), "max": max(fw, default=0)},
        "ferry_cpu_ms": {"mean": mean(fc), "median": pct(fc, 0.5), "p95": pct(fc, 0.95)},
        "puppet_warm_ms": {"cases": len(ww), "mean": mean(ww), "median": pct(ww, 0.5), "p95": pct(ww, 0.95)},
        "puppet_warm_cpu_ms": {"cases": len(wc), "mean": mean(wc)},
        "ferry_batch": {"cases": len(cases), "compiled": batch_ok, "wall_ms_per_catalog": bw,
                        "cpu_ms_per_catalog": bc},
        "puppet_cold": {"cases": len(cold_rows), "wall_ms_mean": mean(cw), "cpu_ms_mean": mean(cc),
                        "ferry_same_cases_wall_ms_mean": mean(f_cold_w),
                        "ferry_same_cases_cpu_ms_mean": mean(f_cold_c)},
    }
    summary["ratio_warm_wall"] = summary["puppet_warm_ms"]["mean"] / max(summary["ferry_wall_ms"]["mean"], 1e-9)
    summary["ratio_warm_batch_wall"] = mean(ww) / max(bw, 1e-9)
    summary["ratio_warm_batch_cpu"] = mean(wc) / max(bc, 1e-9) if wc else None
    summary["ratio_cold_wall"] = mean(cw) / max(mean(f_cold_w), 1e-9)
    summary["ratio_cold_cpu"] = mean(cc) / max(mean(f_cold_c), 1e-9)
    print("| measure | catalogs | ferry (process per catalog) | Puppet | Puppet / ferry |")
    print("|---|---|---|---|---|")
    print("| Puppet warm in-process, wall ms per catalog (mean) | %d | %.1f | %.1f | %.0f× |"
          % (len(ww), mean(fw), mean(ww), summary["ratio_warm_wall"]))
    print("| Puppet warm in-process, wall ms per catalog (median) | %d | %.1f | %.1f | %.0f× |"
          % (len(ww), pct(fw, 0.5), pct(ww, 0.5), pct(ww, 0.5) / max(pct(fw, 0.5), 1e-9)))
    print("| both warm in-process (ferry `--batch`), wall ms per catalog (mean) | %d | %.1f | %.1f | %.0f× |"
          % (len(ww), bw, mean(ww), summary["ratio_warm_batch_wall"]))
    if wc:
        print("| both warm in-process (ferry `--batch`), CPU ms per catalog (mean) | %d | %.1f | %.1f | %.0f× |"
              % (len(wc), bc, mean(wc), summary["ratio_warm_batch_cpu"]))
    print("| cold `puppet catalog compile`, wall ms per catalog (mean) | %d | %.1f | %.0f | %.0f× |"
          % (len(cold_rows), mean(f_cold_w), mean(cw), summary["ratio_cold_wall"]))
    print("| cold `puppet catalog compile`, CPU ms per catalog (mean) | %d | %.1f | %.0f | %.0f× |"
          % (len(cold_rows), mean(f_cold_c), mean(cc), summary["ratio_cold_cpu"]))
    print("\nferry over %d catalogs: wall mean %.1f ms, median %.1f, p95 %.1f, max %.1f; CPU mean %.1f ms"
          % (len(fw), mean(fw), pct(fw, 0.5), pct(fw, 0.95), max(fw, default=0), mean(fc)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": summary, "ferry": ferry_rows, "puppet_cold": cold_rows}, f, indent=1)
            f.write("\n")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--debian", action="store_true", help="measure the Debian module corpus")
    ap.add_argument("--cold", type=int, default=24, help="--debian: cases for the cold Puppet runs")
    ap.add_argument("--sample", type=int, default=0, help="--debian: ferry on K spread cases (0 = all)")
    ap.add_argument("--json", default=None, help="--debian: write the results JSON here")
    ap.add_argument("--ferry", default=os.path.join(ROOT, "target", "dist", "ferry"))
    ap.add_argument("--cases", type=int, default=20, help="corpus cases to include (0 = all)")
    ap.add_argument("--repeat", type=int, default=3, help="ferry runs per case (the best is kept)")
    args = ap.parse_args()
    if not os.path.exists(args.ferry):
        sys.exit("build ferry first: cargo build --profile dist")
    if args.debian:
        return debian_main(args)
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
    sys.exit(main())
