#!/bin/sh
# Answers which implementation ran and how the parameter arrived.
stdin=$(cat)
printf '{"implementation": "posix.sh", "word": "%s", "task": "%s", "stdin_bytes": %s}\n' \
  "${PT_word:-}" "${PT__task:-}" "${#stdin}"
