#!/bin/sh
# benchmod::step — one step of the TASKS benchmark (benches/tasks.py):
# writes "value-<n>" to <dir>/step-<n>, reads it back and prints it.
# These are, to the letter, the commands pyinfra and Ansible run for the same
# step (benches/tasks/deploy.py, playbook.yml); the output is plain text, so
# the task's result is {"_output": "value-<n>\n"}. PT_work picks the op's
# variant: "procs" starts mkdir and cat, "builtins" does the same work with
# shell builtins (mkdir only when the dir is missing).
d=${PT_dir:-/tmp/ferry-bench}
n=$PT_n
case ${PT_work:-procs} in
builtins)
  { [ -d "$d" ] || mkdir -p "$d"; } && printf 'value-%s\n' "$n" > "$d/step-$n" && read -r v < "$d/step-$n" && echo "$v" ;;
*)
  mkdir -p "$d" && printf 'value-%s\n' "$n" > "$d/step-$n" && cat "$d/step-$n" ;;
esac
