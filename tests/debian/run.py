#!/usr/bin/env python3
"""Run the Debian module corpus with Puppet 7 and ferry and compare them.

  run.py puppet [FACTSET...]      compile every case with Puppet 7 (one Ruby
                                  process, puppet_compile.rb) -> WORK/puppet.jsonl
  run.py ferry [--ferry BIN]      compile every case with ferry -> WORK/ferry.jsonl
                                  (`--jobs` processes of `ferry catalog compile
                                  --batch`; --per-process: one process per case)
  run.py compare [--docs]         normalize both, write results.jsonl and
                                  summary.md (per-module table, top causes);
                                  --docs also updates docs/CATALOG.md
  run.py slice                    pick the CI slice from results.jsonl, record
                                  its expected outputs in slice/ and slice.txt
  run.py replay --ferry BIN       run ferry on the slice only and check it
                                  against slice/ (no Puppet needed; CI)
  run.py show ID...               both sides of a case's first difference

WORK is $CORPUS_WORK or $CARGO_TARGET_DIR/debian or target/debian: raw
catalogs are large and stay out of the repository. Cases are cases.jsonl
(generate.py) times the fact sets in facts/ (make_facts.py); a case's id
is NAME@FACTSET. Catalogs and errors are normalized as
tests/catalog/compare.py does.
"""

import argparse
import collections
import concurrent.futures
import hashlib
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "catalog"))
import compare  # noqa: E402  (Puppet's catalog and error normalization)

MODULES = "/usr/share/puppet/modules"
NODE = "node1.example.com"
CASES = os.path.join(HERE, "cases.jsonl")
FACTS = os.path.join(HERE, "facts")
RESULTS = os.path.join(HERE, "results.jsonl")
SUMMARY = os.path.join(HERE, "summary.md")
SLICE_DIR = os.path.join(HERE, "slice")
SLICE_LIST = os.path.join(HERE, "slice.txt")
VERDICTS = ("agree", "both-fail-same", "differ", "both-fail-differ", "ferry-fails",
            "puppet-fails-ferry-compiles")


def work_dir():
    d = os.environ.get("CORPUS_WORK") or os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "debian")
    os.makedirs(d, exist_ok=True)
    return d


def load_cases():
    with open(CASES) as f:
        return [json.loads(line) for line in f]


def fact_sets():
    return sorted(f[:-5] for f in os.listdir(FACTS) if f.endswith(".json"))


def all_ids(cases):
    return [("%s@%s" % (c["name"], fs), c, fs) for fs in fact_sets() for c in cases]


# ---------------------------------------------------------------- running

def run_puppet(args):
    out = os.path.join(work_dir(), "puppet.jsonl")
    cmd = ["nice", "-n", "10", "ruby", os.path.join(HERE, "puppet_compile.rb"), CASES, FACTS,
           MODULES, out, *args.factsets]
    print(" ".join(cmd), file=sys.stderr)
    return subprocess.call(cmd)


def ferry_one(ferry, code, factset):
    p = subprocess.run(["nice", "-n", "10", ferry, "catalog", "compile", "-e", code, "--modulepath",
                        MODULES, "--facts", os.path.join(FACTS, factset + ".json"), "--node", NODE,
                        "--format", "json"], capture_output=True, text=True, timeout=300)
    if p.returncode == 0:
        try:
            return {"status": "ok", "catalog": json.loads(p.stdout)}
        except ValueError:
            return {"status": "err", "message": "ferry printed invalid JSON"}
    lines = p.stderr.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("Error: ")]
    text = "\n".join(lines[starts[-1]:]) if starts else (p.stderr.strip() or "ferry failed")
    return {"status": "err", "message": re.sub(r"^Error: ", "", text)}


def ferry_batch(ferry, chunk):
    """{id: raw result} of one `ferry catalog compile --batch -` process
    compiling every (id, case, factset) of chunk; cases it did not answer
    (it died or hung) are left out."""
    lines = "".join(json.dumps({"code": c["code"], "facts_file": os.path.join(FACTS, fs + ".json"),
                                "node": NODE}) + "\n" for _, c, fs in chunk)
    try:
        p = subprocess.run(["nice", "-n", "10", ferry, "catalog", "compile", "--batch", "-",
                            "--modulepath", MODULES], input=lines, capture_output=True, text=True,
                           timeout=60 + 5 * len(chunk))
        stdout = p.stdout
    except subprocess.TimeoutExpired as e:
        stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
    out = {}
    for text in stdout.splitlines():
        try:
            answer = json.loads(text)
        except ValueError:
            break
        cid = chunk[answer["line"] - 1][0]
        if "catalog" in answer:
            out[cid] = {"status": "ok", "catalog": answer["catalog"]}
        else:
            out[cid] = {"status": "err", "message": answer["error"]}
    return out


def run_ferry_cases(ferry, items, jobs, per_process=False):
    """{id: raw result} of ferry on (id, case, factset) items: `jobs`
    batch processes (one `ferry catalog compile` per case with
    per_process, or for the cases a batch left unanswered)."""
    out = {}
    if not per_process:
        chunks = [items[i::jobs] for i in range(jobs)]
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            for res in pool.map(lambda ch: ferry_batch(ferry, ch), chunks):
                out.update(res)
    rest = [it for it in items if it[0] not in out]
    if rest and not per_process:
        print("ferry: %d cases unanswered by --batch, one process each" % len(rest),
              file=sys.stderr)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futs = {pool.submit(ferry_one, ferry, c["code"], fs): cid for cid, c, fs in rest}
        for fut in concurrent.futures.as_completed(futs):
            cid = futs[fut]
            try:
                out[cid] = fut.result()
            except subprocess.TimeoutExpired:
                out[cid] = {"status": "err", "message": "ferry timed out"}
    return out


def run_ferry(args):
    items = all_ids(load_cases())
    res = run_ferry_cases(args.ferry, items, args.jobs, args.per_process)
    with open(os.path.join(work_dir(), "ferry.jsonl"), "w") as f:
        for cid, _, fs in items:
            f.write(json.dumps(dict(res[cid], id=cid, facts=fs)) + "\n")
    print("ferry: %d cases" % len(items), file=sys.stderr)
    return 0


# ---------------------------------------------------------- comparing

def normalized(raw):
    """('ok', normalized catalog) or ('err', normalized message)."""
    if raw is None:
        return ("missing", None)
    if raw["status"] == "ok":
        return ("ok", compare.normalize(raw["catalog"]))
    return ("err", compare.normalize_error(raw["message"]))


def digest(norm):
    return hashlib.sha256(json.dumps(norm, sort_keys=True).encode()).hexdigest()[:16]


def first_difference(a, b, path=""):
    """Path of the first place two normalized catalogs differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a:
                return "%s/%s (only ferry)" % (path, k)
            if k not in b:
                return "%s/%s (only puppet)" % (path, k)
            if a[k] != b[k]:
                return first_difference(a[k], b[k], "%s/%s" % (path, k))
    if isinstance(a, list) and isinstance(b, list):
        if path == "/resources":
            return first_difference({r["ref"]: r for r in a}, {r["ref"]: r for r in b}, path)
        if path in ("/edges", "/classes", "/tags") or path.endswith("/tags"):
            only_p = sorted(set(a) - set(b))
            only_f = sorted(set(b) - set(a))
            return "%s (only puppet %s, only ferry %s)" % (path, only_p[:2], only_f[:2])
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return first_difference(x, y, "%s/%d" % (path, i))
        return "%s (length %d vs %d)" % (path, len(a), len(b))
    return path


def generalize(msg):
    """A failure message with its specifics removed, for grouping."""
    m = msg.split("\n")[0]
    m = re.sub(r" on node \S+", "", m)
    m = re.sub(r" ?\((?:file: [^)]*|line: \d+[^)]*)\)", "", m)
    while True:
        n = re.sub(r"^(?:Evaluation Error: )?Error while evaluating a [A-Za-z ]+?, ", "", m)
        if n == m:
            break
        m = n
    m = re.sub(r"^Evaluation Error: ", "", m)
    m = re.sub(r"\b([A-Z][A-Za-z0-9_]*(?:::[A-Za-z0-9_]+)*)\[[^\]]*\]", r"\1[..]", m)
    m = re.sub(r"got '[^']*'", "got '..'", m)
    m = re.sub(r"\b\d+\b", "N", m)
    return m[:160]


def diff_cause(path):
    """The first difference's path without titles: /resources/Type[..]/parameters/p."""
    p = re.sub(r"/resources/([A-Za-z0-9_:]+)\[.*?\](?=/|$| )", r"/resources/\1[..]", path)
    p = re.sub(r"\((only \w+)\)$", r"(\1)", p)
    p = re.sub(r"\(only puppet .*", "(sets differ)", p)
    return "catalogs differ at " + re.sub(r"/\d+", "/N", p)


def verdict(pup, fer):
    if pup[0] == "ok" and fer[0] == "ok":
        if pup[1] == fer[1]:
            return "agree", None, None
        path = first_difference(pup[1], fer[1])
        return "differ", path, diff_cause(path)
    if pup[0] == "err" and fer[0] == "err":
        if pup[1] == fer[1]:
            return "both-fail-same", None, None
        return "both-fail-differ", None, "different message: ferry: " + generalize(fer[1])
    if pup[0] == "ok":
        return "ferry-fails", None, "ferry fails: " + generalize(fer[1])
    return "puppet-fails-ferry-compiles", None, "ferry accepts: " + generalize(pup[1])


def read_raw(name):
    out = {}
    path = os.path.join(work_dir(), name)
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            out[r["id"]] = r
    return out


def compare_all(args):
    cases = load_cases()
    pup_raw, fer_raw = read_raw("puppet.jsonl"), read_raw("ferry.jsonl")
    rows = []
    for cid, c, fs in all_ids(cases):
        if cid not in pup_raw:
            continue
        pup, fer = normalized(pup_raw[cid]), normalized(fer_raw.get(cid))
        v, path, cause = verdict(pup, fer)
        row = {"id": cid, "module": c["module"], "kind": c["kind"], "verdict": v,
               "puppet": "ok:" + digest(pup[1]) if pup[0] == "ok" else "err",
               "ferry": "ok:" + digest(fer[1]) if fer[0] == "ok" else fer[0]}
        if pup[0] == "ok":
            row["resources"] = len(pup[1]["resources"])
        if pup[0] == "err":
            row["puppet_error"] = pup[1][:400]
        if fer[0] == "err" and v != "both-fail-same":
            row["ferry_error"] = fer[1][:400]
        if path:
            row["diff"] = path[:300]
        if cause:
            row["cause"] = cause
        row["puppet_ms"] = pup_raw[cid].get("ms")
        rows.append(row)
    with open(RESULTS, "w") as f:
        for r in rows:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    text = summary(rows)
    with open(SUMMARY, "w") as f:
        f.write(text)
    if args.docs:
        splice_docs(text)
    print(text)
    return 0


def splice_docs(text):
    """Put the summary into docs/CATALOG.md between its corpus markers."""
    path = os.path.join(ROOT, "docs", "CATALOG.md")
    begin, end = "<!-- debian-corpus:begin -->", "<!-- debian-corpus:end -->"
    with open(path) as f:
        doc = f.read()
    i, j = doc.find(begin), doc.find(end)
    if i < 0 or j < i:
        sys.exit("docs/CATALOG.md has no %s ... %s markers" % (begin, end))
    with open(path, "w") as f:
        f.write(doc[:i + len(begin)] + "\n" + text + doc[j:])


def summary(rows):
    good = ("agree", "both-fail-same")
    total = len(rows)
    ok = sum(r["verdict"] in good for r in rows)
    counts = collections.Counter(r["verdict"] for r in rows)
    per_fs = collections.defaultdict(lambda: [0, 0])
    for r in rows:
        fs = r["id"].split("@")[1]
        per_fs[fs][0] += 1
        per_fs[fs][1] += r["verdict"] in good
    out = ["Overall: **%d of %d cases agree (%.1f%%)**: %d identical catalogs, %d identical errors."
           % (ok, total, 100.0 * ok / max(total, 1), counts["agree"], counts["both-fail-same"]), ""]
    out.append("| verdict | cases |")
    out.append("|---|---|")
    for v in VERDICTS:
        out.append("| %s | %d |" % (v, counts[v]))
    out += ["", "| fact set | cases | agree | % |", "|---|---|---|---|"]
    for fs in sorted(per_fs):
        n, a = per_fs[fs]
        out.append("| %s | %d | %d | %.1f |" % (fs, n, a, 100.0 * a / n))
    out += ["", "Top 20 failure causes (cases; message specifics removed):", "",
            "| # | cases | cause |", "|---|---|---|"]
    causes = collections.Counter(r["cause"] for r in rows if r.get("cause"))
    for i, (cause, n) in enumerate(causes.most_common(20), 1):
        out.append("| %d | %d | %s |" % (i, n, cause.replace("|", "\\|")))
    out += ["", "Per module (cases = classes and defined types x 3 fact sets; agree = identical "
            "catalog or identical error):", "", "| module | cases | agree | % |", "|---|---|---|---|"]
    per_mod = collections.defaultdict(lambda: [0, 0])
    for r in rows:
        per_mod[r["module"]][0] += 1
        per_mod[r["module"]][1] += r["verdict"] in good
    for mod in sorted(per_mod):
        n, a = per_mod[mod]
        out.append("| %s | %d | %d | %.0f |" % (mod, n, a, 100.0 * a / n))
    return "\n".join(out) + "\n"


# ------------------------------------------------------------- CI slice

def pick_slice(args):
    """About 60 cases: per module (round robin) agreeing ones with small
    catalogs or errors, over the three fact sets, plus ~12 known differences."""
    with open(RESULTS) as f:
        rows = [json.loads(line) for line in f]
    pup_raw = read_raw("puppet.jsonl")
    small = [r for r in rows if r.get("resources", 0) <= 60]
    by_mod = collections.defaultdict(list)
    for r in small:
        if r["verdict"] in ("agree", "both-fail-same"):
            by_mod[r["module"]].append(r)
    picked, fsets = [], fact_sets()
    round_ = 0
    sizes = collections.Counter(r["module"] for r in rows)
    order = sorted(by_mod, key=lambda m: (-sizes[m], m))  # the biggest modules first
    while len(picked) < args.agree and any(by_mod.values()):
        for mod in order:
            cands = by_mod[mod]
            if not cands or len(picked) >= args.agree:
                continue
            want_fs = fsets[(len(picked)) % len(fsets)]
            want_ok = round_ % 2 == 0
            best = next((r for r in cands if r["id"].endswith("@" + want_fs)
                         and (r["verdict"] == "agree") == want_ok), None) or cands[0]
            cands.remove(best)
            picked.append(best)
        round_ += 1
    # Cases asked for by name (representatives of fixed causes) join the
    # agreeing ones when they agree.
    by_id = {r["id"]: r for r in rows}
    for cid in args.with_ids:
        r = by_id.get(cid)
        if r is None:
            sys.exit("slice --with: no case %s" % cid)
        if r not in picked and r["verdict"] in ("agree", "both-fail-same"):
            picked.append(r)
    seen_causes = set()
    known = []
    for r in sorted((r for r in small if r["verdict"] not in ("agree", "both-fail-same")),
                    key=lambda r: (r["cause"], r["id"])):
        if r["cause"] not in seen_causes and len(known) < args.differ:
            seen_causes.add(r["cause"])
            known.append(r)
    if os.path.isdir(SLICE_DIR):
        for f in os.listdir(SLICE_DIR):
            os.remove(os.path.join(SLICE_DIR, f))
    os.makedirs(SLICE_DIR, exist_ok=True)
    lines = ["# The CI slice of the Debian module corpus (run.py slice; replayed by",
             "# tests/catalog_debian.rs). ID STATE [# cause]; STATE agree = ferry must",
             "# reproduce slice/ID.json or .err exactly; differ = known to differ: the",
             "# test fails when it starts agreeing, so this list stays true."]
    for r in sorted(picked + known, key=lambda r: r["id"]):
        pup = normalized(pup_raw[r["id"]])
        base = os.path.join(SLICE_DIR, r["id"])
        if pup[0] == "ok":
            with open(base + ".json", "w") as f:
                json.dump(pup[1], f, indent=1, sort_keys=True)
                f.write("\n")
        else:
            with open(base + ".err", "w") as f:
                f.write(pup[1] + "\n")
        state = "agree" if r["verdict"] in ("agree", "both-fail-same") else "differ"
        lines.append("%s %s%s" % (r["id"], state, "  # " + r["cause"] if state == "differ" else ""))
    with open(SLICE_LIST, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("slice: %d agreeing, %d known differing" % (len(picked), len(known)), file=sys.stderr)
    return 0


def replay(args):
    """ferry on the slice against the recorded expectations. Prints one line
    per case (ok / REGRESSED / NOW-AGREES / SKIPPED) and exits 1 on any
    regression or newly agreeing known difference."""
    cases = {c["name"]: c for c in load_cases()}
    entries = []
    with open(SLICE_LIST) as f:
        for line in f:
            line = line.split("#")[0].strip()
            if line:
                cid, state = line.split()
                entries.append((cid, state))
    items, skipped = [], 0
    for cid, _ in entries:
        name, fs = cid.rsplit("@", 1)
        c = cases[name]
        if not os.path.isdir(os.path.join(MODULES, c["module"])):
            skipped += 1
            continue
        items.append((cid, c, fs))
    res = run_ferry_cases(args.ferry, items, args.jobs, args.per_process)
    bad = 0
    for cid, state in entries:
        if cid not in res:
            print("SKIPPED     %s (module not installed)" % cid)
            continue
        base = os.path.join(SLICE_DIR, cid)
        if os.path.exists(base + ".json"):
            with open(base + ".json") as f:
                expected = ("ok", json.load(f))
        else:
            with open(base + ".err") as f:
                expected = ("err", f.read().rstrip("\n"))
        got = normalized(res[cid])
        agrees = got == expected
        if state == "agree" and not agrees:
            bad += 1
            detail = (first_difference(expected[1], got[1]) if got[0] == expected[0] == "ok"
                      else "expected %s, ferry %s" % (str(expected[1])[:300], str(got[1])[:300]))
            print("REGRESSED   %s: %s" % (cid, detail))
        elif state == "differ" and agrees:
            bad += 1
            print("NOW-AGREES  %s: mark it agree in tests/debian/slice.txt" % cid)
        else:
            print("ok          %s (%s)" % (cid, state))
    print("replayed %d of %d slice cases (%d skipped), %d wrong" % (len(res), len(entries), skipped, bad))
    return 1 if bad else 0


def show(args):
    """Print Puppet's and ferry's results for cases (the differing resource
    of a catalog, or both messages)."""
    pup_raw, fer_raw = read_raw("puppet.jsonl"), read_raw("ferry.jsonl")
    for cid in args.ids:
        pup, fer = normalized(pup_raw.get(cid)), normalized(fer_raw.get(cid))
        print("== %s: %s" % (cid, verdict(pup, fer)[0]))
        if pup[0] == fer[0] == "ok" and pup != fer:
            path = first_difference(pup[1], fer[1])
            print("   first difference: " + path)
            ref = path.split("/")[2] if path.startswith("/resources/") else None
            if ref:
                for side, norm in (("puppet", pup[1]), ("ferry ", fer[1])):
                    res = {r["ref"]: r for r in norm["resources"]}.get(ref.split(" (")[0])
                    print("   %s %s" % (side, json.dumps(res, sort_keys=True)))
        else:
            print("   puppet %s: %s" % (pup[0], str(pup[1])[:2000]))
            print("   ferry  %s: %s" % (fer[0], str(fer[1])[:2000]))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("puppet")
    p.add_argument("factsets", nargs="*")
    for name in ("ferry", "replay"):
        p = sub.add_parser(name)
        p.add_argument("--ferry", default=os.path.join(
            os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "debug", "ferry"))
        p.add_argument("--jobs", type=int, default=2)
        p.add_argument("--per-process", action="store_true",
                       help="one `ferry catalog compile` per case instead of --batch processes")
    p = sub.add_parser("compare")
    p.add_argument("--docs", action="store_true",
                   help="also put the tables into docs/CATALOG.md")
    p = sub.add_parser("show")
    p.add_argument("ids", nargs="+")
    p = sub.add_parser("slice")
    p.add_argument("--agree", type=int, default=50)
    p.add_argument("--differ", type=int, default=12)
    p.add_argument("--with", dest="with_ids", nargs="*", default=[],
                   help="IDs to include (when they agree), e.g. representatives of fixes")
    args = ap.parse_args()
    return {"puppet": run_puppet, "ferry": run_ferry, "compare": compare_all, "slice": pick_slice,
            "replay": replay, "show": show}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
