#!/bin/sh
# Reports where the parameter arrived: the environment, stdin, or both.
stdin=$(cat)
case $stdin in *message*) on_stdin=true ;; *) on_stdin=false ;; esac
printf '{"env": "%s", "on_stdin": %s}\n' "${PT_message:-}" "$on_stdin"
