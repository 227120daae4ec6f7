#!/bin/sh
# Reports what the wrapper could leak into a task it reads into its own
# shell instead of exec'ing it (tests/tasks.rs): its variables and
# functions. Then reads stdin and exits with PT_code.
leak=
t=
for v in c d f ok m x tok frag line FERRY_SESSION_DIR FERRY_SHA256_PID _n _ok _r _b _p; do
  eval "t=\${"$v"+set}"
  [ -z "$t" ] || leak="$leak $v"
done
for f in h miss mk dirs_ok ferry_sha256_check ferry_mkdirs; do
  command -v "$f" >/dev/null 2>&1 && leak="$leak $f()"
done
printf '{"leak": "%s", "x": "%s", "stdin": %s}\n' "$leak" "$PT_x" "$(cat)"
exit "$PT_code"
