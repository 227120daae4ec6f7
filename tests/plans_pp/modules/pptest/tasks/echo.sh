#!/bin/sh
if [ "$PT_fail" = "true" ]; then
  printf '{"_error": {"msg": "asked to fail", "kind": "pptest/failed", "details": {}}}\n'
  exit 1
fi
printf '{"said": "%s"}\n' "$PT_message"
