"""The TASKS benchmark for pyinfra: ten server.shell operations in a row, the
same commands as benchmod::step (modules/benchmod/tasks/step.sh).
Run by benches/tasks.py with FERRY_BENCH_TASKS_DIR=<per-target tmpfs> and
FERRY_BENCH_TASK_WORK=builtins|procs (the op's work; tasks.py sets it)."""

import os
import shlex

from pyinfra.operations import server

d = shlex.quote(os.environ.get("FERRY_BENCH_TASKS_DIR", "/tmp/ferry-bench"))
builtins = os.environ.get("FERRY_BENCH_TASK_WORK", "procs") == "builtins"
for i in range(1, 11):
    if builtins:
        cmd = (f"{{ [ -d {d} ] || mkdir -p {d}; }} && printf 'value-%s\\n' {i} > {d}/step-{i}"
               f" && read -r v < {d}/step-{i} && echo \"$v\"")
    else:
        cmd = f"mkdir -p {d} && printf 'value-%s\\n' {i} > {d}/step-{i} && cat {d}/step-{i}"
    server.shell(name=f"step {i}", commands=[cmd])
