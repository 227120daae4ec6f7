#!/bin/sh
# Echoes its sensitive parameter back, to prove ferry redacts it.
printf '{"token_was": "%s", "_sensitive": {"token": "%s"}}\n' "$PT_token" "$PT_token"
echo "stderr mentions $PT_token" >&2
