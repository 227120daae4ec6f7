#!/bin/sh
# benchmod::step — one step of the TASKS benchmark (benches/tasks.py):
# writes "value-<n>" to <dir>/step-<n>, reads it back and reports it.
# pyinfra and Ansible run the same shell commands (see benches/tasks.py).
set -e
d=${PT_dir:-/tmp/ferry-bench}
mkdir -p "$d" && printf 'value-%s\n' "$PT_n" > "$d/step-$PT_n" && v=$(cat "$d/step-$PT_n")
printf '{"n": %s, "value": "%s"}\n' "$PT_n" "$v"
