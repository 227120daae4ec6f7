#!/usr/bin/env python3
"""Writes benches/hot-symbols.txt: the functions of ferry that its main jobs
execute, for the linker to lay out next to each other (build.rs).

Why: a run of `ferry command run` executes ~2.4 MiB of the binary's ~13 MiB
of code, spread all over it. The kernel maps a file's pages 64 KiB at a time
around each page a process touches, so a spread-out 2.4 MiB costs ~7 MiB of
resident memory. Laid out together it costs about what it is
(benches/README.md, "Hot code together").

How: starts a small fleet (fleet.py's), runs each job once under
`valgrind --tool=callgrind` (which sees every function that runs, with its
linker-level name), and writes the union of those names, in the order they
were first seen, one per line.

Usage (needs valgrind and a dist build, the profile packages and benchmarks use):
  cargo build --profile dist && python3 benches/hot_symbols.py && cargo build --profile dist

A stale list costs memory, never correctness: names the linker does not find
are skipped, and code not on the list keeps its default place.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleet  # noqa: E402
import tasks  # noqa: E402

OUT = os.path.join(fleet.BENCH_DIR, "hot-symbols.txt")
TARGETS = 6


def jobs(bench: fleet.Bench, ferry: str):
    """(name, argv) of each job whose code goes on the list, most common first."""
    inv = ["-i", bench.ferry_inv, "--format", "json"]
    task_inv = ["-i", tasks._ferry_inventory(bench), "--modulepath", tasks.MODULEPATH, "--format", "json"]
    d = bench.f.dest_dir
    return [
        ("command", [ferry, "command", "run", "echo ok", "-t", "all", *inv]),
        ("upload", [ferry, "file", "upload", bench.src, f"{d}/hot.bin", "-t", "all", *inv]),
        ("download", [ferry, "file", "download", f"{d}/hot.bin", f"{bench.f.dir}/dl", "-t", "all", *inv]),
        ("task", [ferry, "task", "run", tasks.TASK, "n=1", f"dir={d}/hot-task", "-t", "all", *task_inv]),
        ("plan", [ferry, "plan", "run", tasks.PLAN, "targets=all", f"dir={d}/hot-plan", *task_inv]),
    ]


def functions(callgrind_out: str, binary: str) -> list[str]:
    """Names of the functions of `binary` in a callgrind profile, first seen first."""
    objects: dict[str, str] = {}
    current = ""
    seen: dict[str, None] = {}
    named: dict[str, str] = {}
    with open(callgrind_out) as fh:
        for line in fh:
            m = re.match(r"(c?ob|c?fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
            if not m:
                continue
            kind, ident, name = m.groups()
            if kind.endswith("ob"):
                if name:
                    objects[ident] = name
                if kind == "ob":
                    current = objects.get(ident, "")
                continue
            if name:
                named[ident] = name
            if kind == "fn" and os.path.realpath(current) == binary:
                seen.setdefault(named[ident], None)
    return list(seen)


def coverage(binary: str) -> tuple[int, int]:
    """(names on the list that `binary` has, names on the list): a list made
    for another build of ferry (a new rustc, other dependency versions) no
    longer matches, and the code it named falls back to its default place."""
    try:
        listed = {line.strip() for line in open(OUT) if line.strip() and not line.startswith("#")}
        nm = subprocess.run(["nm", binary], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return 0, 0
    present = {line.rsplit(" ", 1)[-1] for line in nm.splitlines()}
    return len(listed & present), len(listed)


def main() -> int:
    ferry = os.path.realpath(os.path.join(fleet.REPO, "target", "dist", "ferry"))
    if not os.access(ferry, os.X_OK):
        print(f"no {ferry}: run cargo build --profile dist first", file=sys.stderr)
        return 1
    workdir = tempfile.mkdtemp(prefix="ferry-hot-")
    f = fleet.Fleet(TARGETS, 2422, workdir)
    names: dict[str, None] = {}
    try:
        f.setup()
        f.wait_ready()
        bench = fleet.Bench(f, TARGETS, ferry)
        for job, argv in jobs(bench, ferry):
            out = os.path.join(workdir, f"callgrind.{job}")
            run = subprocess.run(["valgrind", "--tool=callgrind", "--demangle=no",
                                  f"--callgrind-out-file={out}", *argv],
                                 capture_output=True, text=True, cwd=workdir, env=bench.base_env)
            if run.returncode != 0:
                print(f"{job} failed ({run.returncode}):\n{run.stdout[-2000:]}{run.stderr[-2000:]}",
                      file=sys.stderr)
                return 1
            found = functions(out, ferry)
            fleet.log(f"{job}: {len(found)} functions")
            for name in found:
                names.setdefault(name, None)
    finally:
        f.stop()
    with open(OUT, "w") as fh:
        fh.write("# Generated by benches/hot_symbols.py; read by build.rs. Do not edit.\n")
        fh.writelines(n + "\n" for n in names)
    fleet.log(f"{len(names)} functions written to {os.path.relpath(OUT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
