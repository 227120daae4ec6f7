#!/bin/sh
# An external node classifier (Puppet's ENC contract): the certname is the
# only argument; YAML on stdout; a non-zero exit means no such node.
case "$1" in
  enc.test|deploy-enc)
    cat <<'YAML'
---
classes:
  role::web:
    port: 6060
parameters:
  tier: enc
environment: dev
YAML
    ;;
  *)
    echo "no node $1" >&2
    exit 1
    ;;
esac
