"""The Puppet-language plan benchmark for pyinfra: the ten steps of
modules/benchmod/plans/ten.pp as ten operations, with the same shell
commands (benchmod::step's for the task steps, procs variant) and the same
two files. Run by benches/tasks_pplan.py with FERRY_BENCH_TASKS_DIR=<per-target
tmpfs> and FERRY_BENCH_FILES=<benchmod's files/ directory>."""

import os
import shlex

from pyinfra.operations import files, server

d = shlex.quote(os.environ.get("FERRY_BENCH_TASKS_DIR", "/tmp/ferry-bench"))
src = os.environ["FERRY_BENCH_FILES"]
raw_dir = os.environ.get("FERRY_BENCH_TASKS_DIR", "/tmp/ferry-bench")


def step(n: int) -> str:
    """benchmod::step n=<n> (step.sh, procs)."""
    return f"mkdir -p {d} && printf 'value-%s\\n' {n} > {d}/step-{n} && cat {d}/step-{n}"


server.shell(name="1 mkdir", commands=[f"mkdir -p {d}"])
server.shell(name="2 step 1", commands=[step(1)])
files.put(name="3 payload", src=os.path.join(src, "payload.txt"), dest=f"{raw_dir}/payload.txt")
server.shell(name="4 checksum", commands=[f"cd {d} && sha256sum payload.txt > payload.sha"])
server.shell(name="5 step 2", commands=[step(2)])
server.shell(name="6 step 3", commands=[f"printf 'value-%s\\n' 3 > {d}/step-3 && cat {d}/step-3"])
server.shell(name="7 step 4", commands=[step(4)])
server.shell(name="8 step 5", commands=[f"printf 'value-%s\\n' 5 > {d}/step-5 && cat {d}/step-5"])
files.put(name="9 settings", src=os.path.join(src, "settings.conf"), dest=f"{raw_dir}/settings.conf")
server.shell(name="10 step 6", commands=[step(6)])
