#!/bin/sh
printf '{"noop": %s}\n' "${PT__noop:-false}"
