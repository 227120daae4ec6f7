#!/bin/sh
# benchmod::step — one step of the TASKS benchmark (benches/tasks.py):
# writes "value-<n>" to <dir>/step-<n>, reads it back and reports it.
# pyinfra and Ansible run the same shell commands (see benches/tasks.py);
# PT_work picks the variant: "procs" starts mkdir and cat, "builtins" does
# the same work with shell builtins (mkdir only when the dir is missing).
set -e
d=${PT_dir:-/tmp/ferry-bench}
case ${PT_work:-procs} in
builtins)
  { [ -d "$d" ] || mkdir -p "$d"; } && printf 'value-%s\n' "$PT_n" > "$d/step-$PT_n" && read -r v < "$d/step-$PT_n" ;;
*)
  mkdir -p "$d" && printf 'value-%s\n' "$PT_n" > "$d/step-$PT_n" && v=$(cat "$d/step-$PT_n") ;;
esac
printf '{"n": %s, "value": "%s"}\n' "$PT_n" "$v"
