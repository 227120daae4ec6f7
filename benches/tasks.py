"""The TASKS benchmark (`python3 benches/fleet.py --ops tasks`): ten tasks in a
row on every target, with

  * ferry      — 10 consecutive `ferry task run benchmod::step n=<i> …`
                 invocations (a new process and new connections each time),
  * ferry-plan — ONE `ferry plan run benches/tasks/plan.yaml …` (a Bolt YAML
                 plan with 10 task steps), if the binary has `plan run`,
  * pyinfra    — one deploy file with 10 server.shell operations,
  * ansible    — ansible-playbook, one play with 10 shell tasks.

Every step i does the same work on every target with every tool: write
"value-<i>" to <dir>/step-<i>, read it back, print it. <dir> is on each
target's private tmpfs (fleet.Fleet.dest_dir), so the harness can read all ten
files on every target afterwards and checks them, whatever the tool reported.
Two ops do it two ways: tasks-builtins with shell builtins alone, and
tasks-procs with `mkdir -p` and `cat` as processes (step.sh, deploy.py and
playbook.yml spell both out); `--ops tasks` runs both. A third op,
tasks-pplan, is the Puppet-language plan benchmark (tasks_pplan.py).

This module holds only what is specific to the op; the fleet, the
measurement and the tool set-up (inventories, environments) are fleet.py's.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import fleet
from fleet import ANSI, BENCH_DIR, VENV_BIN, Result, log, measure, tail

TASKS_DIR = os.path.join(BENCH_DIR, "tasks")
MODULEPATH = os.path.join(TASKS_DIR, "modules")
PLAN = os.path.join(TASKS_DIR, "plan.yaml")
PLAYBOOK = os.path.join(TASKS_DIR, "playbook.yml")
DEPLOY = os.path.join(TASKS_DIR, "deploy.py")
TASK = "benchmod::step"
STEPS = 10
TOOLS = ("ferry", "ferry-plan", "pyinfra", "ansible")

# 10 ferry invocations in a row; each one's JSON goes to its own file.
FERRY_LOOP = r"""
f=$1 inv=$2 mp=$3 c=$4 d=$5 out=$6 steps=$7 rc=0 i=1
while [ "$i" -le "$steps" ]; do
  "$f" task run benchmod::step "n=$i" "dir=$d" "work=$8" -t all -i "$inv" --modulepath "$mp" \
    --concurrency "$c" --format json >"$out.$i" || rc=$?
  i=$((i + 1))
done
exit $rc
"""


def expected(i: int) -> str:
    return f"value-{i}\n"


def plan_support(bench, ferry: str) -> str | None:
    """None if `ferry plan run` exists, else why not."""
    if not os.access(ferry, os.X_OK):
        return f"binary {ferry} not found (build with cargo build --profile dist)"
    r = subprocess.run([ferry, "plan", "run", "--help"], capture_output=True, text=True)
    if r.returncode != 0:
        return "ferry has no `plan run` subcommand yet"
    bench.versions["ferry"] = fleet.tool_version([ferry, "--version"])
    return None


def _ferry_inventory(bench) -> str:
    """fleet.py's ferry inventory plus a task cache on each target's own tmpfs
    (the fleet shares one HOME, so the default ~/.cache/ferry/tasks would be
    one cache for all targets; on real hosts every host has its own)."""
    path = os.path.join(bench.f.dir, "inventory-tasks.yaml")
    if not os.path.exists(path):
        text = open(bench.ferry_inv).read()
        marker = "    load-config: false\n"
        assert marker in text, "fleet.py's ferry inventory changed; update tasks.py"
        text = text.replace(marker, marker + f"    cache-dir: {ferry_cache(bench)}\n", 1)
        with open(path, "w") as fh:
            fh.write(text)
    return path


def ferry_cache(bench) -> str:
    return os.path.join(bench.f.dest_dir, "ferry-task-cache")


def step_dir(bench, tool: str) -> str:
    return os.path.join(bench.f.dest_dir, f"bench-tasks-{tool}")


def clean(bench, tool: str):
    """Remove the tool's step files (and ferry's task cache: every ferry run
    starts cold, as on a fleet that has never seen the task) on every target."""
    for a in bench.f.addrs:
        for d in (step_dir(bench, tool), ferry_cache(bench)):
            shutil.rmtree(bench.f.target_path(a, d), ignore_errors=True)


def run(bench, tool: str, op: str) -> Result | None:
    """Runs op (one of fleet.TASK_OPS: tasks-<work>, where work is what
    each step's commands are made of, "builtins" or "procs") with tool."""
    if op == "tasks-pplan":
        import tasks_pplan
        return tasks_pplan.run(bench, tool)
    if tool not in TOOLS:
        return None  # pssh / openssh have no notion of tasks
    work = op.removeprefix("tasks-")
    clean(bench, tool)
    res = {"ferry": _ferry, "ferry-plan": _ferry_plan, "pyinfra": _pyinfra, "ansible": _ansible}[tool](bench, op, work)
    verify(bench, res)
    clean(bench, tool)
    res.note += f"{STEPS} steps; "
    return res


# -- per tool ---------------------------------------------------------------

def _ferry(bench, op: str, work: str) -> Result:
    f = bench.f
    out = os.path.join(f.dir, f"out.ferry.{op}.step")
    argv = ["sh", "-c", FERRY_LOOP, "sh", bench.ferry, _ferry_inventory(bench), MODULEPATH,
            str(bench.c), step_dir(bench, "ferry"), out, str(STEPS), work]
    res, _, err = measure(f, "ferry", op, argv, env=bench.base_env, cwd=f.dir)
    good = None
    for i in range(1, STEPS + 1):
        try:
            text = open(f"{out}.{i}").read()
        except OSError:
            text = ""
        ok = _ferry_step_ok(text, i)
        if ok is None:
            res.errors.append(f"step {i}: no per-target JSON items")
            ok = set()
        good = ok if good is None else good & ok
        if len(ok) != f.n and len(res.errors) < 5:
            res.errors += [f"step {i}: " + l for l in tail(text, n=2)]
    res.success = len(good or ())
    res.note += f"{STEPS} `ferry task run` invocations, one connection per target each; "
    if res.success != f.n:
        res.errors = (res.errors + tail(err))[:8]
    return res


def _ferry_step_ok(text: str, i: int) -> set[str] | None:
    """Targets whose item in one `ferry task run --format json` says success
    with the value the task prints for step i."""
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    items = doc.get("items") if isinstance(doc, dict) else None
    if not isinstance(items, list):
        return None
    want = {"_output": expected(i)}  # step.sh prints plain text
    return {str(it.get("target")) for it in items
            if isinstance(it, dict) and it.get("status") == "success" and it.get("value") == want}


def _ferry_plan(bench, op: str, work: str) -> Result:
    f = bench.f
    argv = [bench.ferry, "plan", "run", PLAN, "targets=all", f"dir={step_dir(bench, 'ferry-plan')}", f"work={work}",
            "-i", _ferry_inventory(bench), "--modulepath", MODULEPATH]
    help_text = subprocess.run([bench.ferry, "plan", "run", "--help"], capture_output=True, text=True).stdout
    if "--concurrency" in help_text:
        argv += ["--concurrency", str(bench.c)]
    else:
        bench.versions.setdefault("ferry-plan-note", "plan run has no --concurrency; default used")
    if "--format" in help_text:
        argv += ["--format", "json"]
    res, out, err = measure(f, "ferry-plan", op, argv, env=bench.base_env, cwd=f.dir)
    # --format json prints the plan's value alone; plan.yaml returns every
    # step's results: {"s1": [{target, status, value, ...}, ...], ...}
    good = None
    try:
        steps = json.loads(out)
        for i in range(1, STEPS + 1):
            ok = _ferry_step_ok(json.dumps({"items": steps[f"s{i}"]}), i) or set()
            good = ok if good is None else good & ok
        res.success = len(good)
    except (ValueError, KeyError, TypeError):
        res.success = f.n if res.exit_code == 0 else 0
        res.note += "no per-step JSON: success from the exit status; "
    res.note += f"one `ferry plan run` (YAML plan, {STEPS} task steps); "
    if res.success != f.n or res.exit_code != 0:
        res.errors = tail(err, out)
    return res


def _pyinfra(bench, op: str, work: str) -> Result:
    f = bench.f
    argv = bench.pyinfra_argv() + [DEPLOY]
    env = dict(bench.pyinfra_env(), FERRY_BENCH_TASKS_DIR=step_dir(bench, "pyinfra"),
               FERRY_BENCH_TASK_WORK=work)
    res, out, err = measure(f, "pyinfra", op, argv, env=env, cwd=f.dir)
    text = ANSI.sub("", out + err)
    # pyinfra prints "[host] Success" once per host and operation.
    per_host: dict[str, int] = {}
    for host in re.findall(r"^\s*\[(127\.[0-9.]+)\]\s+Success\b", text, re.M):
        per_host[host] = per_host.get(host, 0) + 1
    res.success = sum(1 for c in per_host.values() if c == STEPS)
    if res.success != f.n:
        res.errors = [l for l in text.splitlines() if "rror" in l][:5] or tail(err, out)
    res.note += f"one deploy file, {STEPS} server.shell operations; "
    return res


def _ansible(bench, op: str, work: str) -> Result:
    f = bench.f
    exe = os.path.join(VENV_BIN, "ansible-playbook")
    argv = [exe, "-i", bench.ansible_inv, "-f", str(bench.c), "-e", f"dir={step_dir(bench, 'ansible')}", "-e", f"work={work}",
            PLAYBOOK]
    res, out, err = measure(f, "ansible", op, argv, env=bench.ansible_env(), cwd=f.dir)
    # PLAY RECAP: "127.42.0.1 : ok=10 changed=10 unreachable=0 failed=0 ..."
    ok = 0
    for m in re.finditer(r"^(\S+)\s*:\s*ok=(\d+)\s+changed=\d+\s+unreachable=(\d+)\s+failed=(\d+)",
                         ANSI.sub("", out), re.M):
        if int(m.group(2)) == STEPS and m.group(3) == "0" and m.group(4) == "0":
            ok += 1
    res.success = ok
    if ok != f.n:
        res.errors = [l for l in out.splitlines() if "FAILED" in l or "UNREACHABLE" in l][:5] or tail(err, out)
    res.note += f"ansible-playbook, one play, {STEPS} shell tasks; "
    return res


# -- verification -------------------------------------------------------------

def verify(bench, res: Result):
    """Read step-1 … step-10 on every target (through /proc/<sshd>/root) and
    check each holds value-<i>; the tool's own count is capped by this."""
    f = bench.f
    good, bad = 0, []
    for a in f.addrs:
        d = step_dir(bench, res.tool)
        missing = []
        for i in range(1, STEPS + 1):
            try:
                with open(f.target_path(a, f"{d}/step-{i}")) as fh:
                    if fh.read() != expected(i):
                        missing.append(f"step-{i} differs")
            except OSError as e:
                missing.append(f"step-{i}: {e.strerror}")
        if missing:
            bad.append(f"{a}: {', '.join(missing[:3])}")
        else:
            good += 1
    if f.per_sshd > 1:
        res.note += "targets share one filesystem: the file check is per sshd, not per target; "
        good = f.n if good else 0
    if good != res.success:
        res.note += f"tool reported {res.success} ok, verified {good}; "
    res.success = min(res.success, good)
    if bad:
        res.errors = (res.errors + bad)[:8]
        log(f"  {res.tool} tasks: {len(bad)} target(s) without all {STEPS} files, e.g. {bad[:2]}")
