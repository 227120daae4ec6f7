#!/bin/sh
stdin=$(cat)
printf '{"stdin": %s, "env_list": %s, "env_message": "%s", "user": "%s"}\n' "$stdin" "$PT_list" "$PT_message" "$(id -un)"
