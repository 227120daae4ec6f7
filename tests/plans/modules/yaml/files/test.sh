#!/bin/sh
echo "$@"
if [ -n "${GREETING-}" ]; then echo "greeting=$GREETING list=$LIST"; fi
