#!/usr/bin/env python3
"""A remote task: reads its parameters on stdin, reaches the device named
by _target over ssh (its key, known_hosts, user, host, port) and runs one
command in the device's CLI. Prints what it saw, _target included, so that
the test can check what a remote task is given (and what ferry hides)."""
import json
import os
import subprocess
import sys
import tempfile

params = json.load(sys.stdin)
target = params["_target"]
key = target["private-key"]
if isinstance(key, dict):
    # An inline key (ACE's private-key-content): to a private file.
    with tempfile.NamedTemporaryFile("w", delete=False) as f:
        f.write(key["key-data"])
    key = f.name
argv = [
    "ssh", "-F", "/dev/null", "-tt",
    "-o", "BatchMode=yes",
    "-o", "StrictHostKeyChecking=yes",
    "-o", "UserKnownHostsFile=" + target["known-hosts-file"],
    "-i", key,
    "-p", str(target.get("port", 22)),
    "-l", target["user"],
    target["host"],
]
done = subprocess.run(
    argv,
    input=(params["command"] + "\nexit\n").encode(),
    capture_output=True,
    timeout=60,
)
if key != target["private-key"]:
    os.unlink(key)
text = done.stdout.decode(errors="replace").replace("\r", "")
first = next((l for l in text.splitlines() if l.startswith("FRRouting")), None)
print(json.dumps({
    "target": target,
    "first_line": first,
    "over_ssh": bool(os.environ.get("SSH_CONNECTION")),
    "ssh_exit": done.returncode,
}))
