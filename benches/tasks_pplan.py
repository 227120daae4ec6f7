"""The Puppet-language plan benchmark (`python3 benches/fleet.py --ops
tasks-pplan`, issue 13): a ten-step plan in the Puppet language against the
same work as a pyinfra deploy, on every target:

  * ferry-plan — ONE `ferry plan run benchmod::ten targets=all dir=<dir> …`
                 (benches/tasks/modules/benchmod/plans/ten.pp: run_command,
                 run_task, upload_file and a parallelize over the targets),
  * pyinfra    — one deploy file (benches/tasks/deploy_pplan.py) with the ten
                 steps as ten operations: the same shell commands, the same
                 two files uploaded.

Afterwards the harness reads every file the steps write on every target
(step-1 … step-6 with value-<i>, payload.txt and settings.conf as uploaded,
payload.sha with the payload's checksum): a target counts as ok only if the
tool reported it ok and its files are right. tasks.py holds what both
tasks benchmarks share (the ferry inventory with a per-target task cache,
the step directories); fleet.py the fleet and the measurement.
"""

from __future__ import annotations

import hashlib
import json
import os
import re

import tasks
from fleet import ANSI, Result, log, measure, tail

OP = "tasks-pplan"
PLAN = "benchmod::ten"
FILES = os.path.join(tasks.MODULEPATH, "benchmod", "files")
DEPLOY = os.path.join(tasks.TASKS_DIR, "deploy_pplan.py")
TOOLS = ("ferry-plan", "pyinfra")
STEPS = 10
# The step files the plan writes: step-<i> holds value-<i>.
STEP_FILES = range(1, 7)


def run(bench, tool: str) -> Result | None:
    if tool not in TOOLS:
        return None  # ferry task run, Ansible, pssh, OpenSSH: not part of this comparison
    tasks.clean(bench, tool)
    res = {"ferry-plan": _ferry_plan, "pyinfra": _pyinfra}[tool](bench)
    verify(bench, res)
    tasks.clean(bench, tool)
    res.note += f"{STEPS} steps; "
    return res


def _ferry_plan(bench) -> Result:
    f = bench.f
    argv = [bench.ferry, "plan", "run", PLAN, "targets=all", f"dir={tasks.step_dir(bench, 'ferry-plan')}",
            "-i", tasks._ferry_inventory(bench), "--modulepath", tasks.MODULEPATH,
            "--concurrency", str(bench.c), "--format", "json"]
    res, out, err = measure(f, "ferry-plan", OP, argv, env=bench.base_env, cwd=f.dir)
    # --format json: the plan's value alone, {"ok": [names], "parallel": ["value-5\n", ...]}
    try:
        doc = json.loads(out)
        ok = doc["ok"]
        parallel = doc["parallel"]
        if not (isinstance(ok, list) and isinstance(parallel, list)):
            raise TypeError
        res.success = len(set(ok)) if len(parallel) == f.n and all(p == "value-5\n" for p in parallel) else 0
    except (ValueError, KeyError, TypeError):
        res.success = 0
        res.errors.append("the plan's value is not {ok, parallel}")
    res.note += f"one `ferry plan run` (Puppet-language plan, {STEPS} steps, parallelize over targets); "
    if res.success != f.n or res.exit_code != 0:
        res.errors = (res.errors + tail(err, out))[:8]
    return res


def _pyinfra(bench) -> Result:
    f = bench.f
    argv = bench.pyinfra_argv() + [DEPLOY]
    env = dict(bench.pyinfra_env(), FERRY_BENCH_TASKS_DIR=tasks.step_dir(bench, "pyinfra"), FERRY_BENCH_FILES=FILES)
    res, out, err = measure(f, "pyinfra", OP, argv, env=env, cwd=f.dir)
    text = ANSI.sub("", out + err)
    # pyinfra prints "[host] Success" (or "No changes") once per host and operation.
    per_host: dict[str, int] = {}
    for host in re.findall(r"^\s*\[(127\.[0-9.]+)\]\s+(?:Success|No changes)\b", text, re.M):
        per_host[host] = per_host.get(host, 0) + 1
    res.success = sum(1 for c in per_host.values() if c == STEPS)
    if res.success != f.n:
        res.errors = [l for l in text.splitlines() if "rror" in l][:5] or tail(err, out)
    res.note += f"one deploy file, {STEPS} operations (8 server.shell, 2 files.put); "
    return res


def expected_files() -> dict[str, bytes]:
    payload = open(os.path.join(FILES, "payload.txt"), "rb").read()
    want = {f"step-{i}": tasks.expected(i).encode() for i in STEP_FILES}
    want["payload.txt"] = payload
    want["payload.sha"] = f"{hashlib.sha256(payload).hexdigest()}  payload.txt\n".encode()
    want["settings.conf"] = open(os.path.join(FILES, "settings.conf"), "rb").read()
    return want


def verify(bench, res: Result):
    """Reads every file the ten steps leave on every target (through
    /proc/<sshd>/root); the tool's own count is capped by this."""
    f = bench.f
    want = expected_files()
    good, bad = 0, []
    for a in f.addrs:
        d = tasks.step_dir(bench, res.tool)
        wrong = []
        for name, content in want.items():
            try:
                with open(f.target_path(a, f"{d}/{name}"), "rb") as fh:
                    if fh.read() != content:
                        wrong.append(f"{name} differs")
            except OSError as e:
                wrong.append(f"{name}: {e.strerror}")
        if wrong:
            bad.append(f"{a}: {', '.join(wrong[:3])}")
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
        log(f"  {res.tool} {OP}: {len(bad)} target(s) without all files right, e.g. {bad[:2]}")
