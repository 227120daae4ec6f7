#!/bin/sh
stdin=$(cat)
printf '{"stdin": %s, "env_message": "%s"}\n' "$stdin" "${PT_message:-unset}"
