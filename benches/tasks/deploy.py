"""The TASKS benchmark for pyinfra: ten server.shell operations in a row, the
same commands as benchmod::step (modules/benchmod/tasks/step.sh).
Run by benches/tasks.py with FERRY_BENCH_TASKS_DIR=<per-target tmpfs>."""

import os
import shlex

from pyinfra.operations import server

d = shlex.quote(os.environ.get("FERRY_BENCH_TASKS_DIR", "/tmp/ferry-bench"))
for i in range(1, 11):
    server.shell(
        name=f"step {i}",
        commands=[f"mkdir -p {d} && printf 'value-%s\\n' {i} > {d}/step-{i} && cat {d}/step-{i}"],
    )
