#!/bin/sh
# Reports what arrived in the environment and on stdin.
stdin=$(cat)
printf '{"message": "%s", "count": "%s", "stdin_bytes": %s}\n' "$PT_message" "$PT_count" "${#stdin}"
