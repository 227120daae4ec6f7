"""parallel-ssh driver for benches/fleet.py (runs inside benches/.venv).

parallel-ssh's native client (ssh2-python) has no host-key verification
option of its own, so this driver connects and authenticates every host
first (ParallelSSHClient.connect_auth), compares each session's host key with
the known_hosts file, and only then runs the command / sends the file on the
hosts whose key matched. A mismatch counts as a failure.

Prints one JSON object: {"ok": n, "failed": n, "errors": [...]}.
"""

import argparse
import base64
import json
import sys

from gevent import joinall
from pssh.clients import ParallelSSHClient


def load_known_hosts(path):
    keys = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 3 or line.startswith("#"):
                continue
            for name in parts[0].split(","):
                keys[name] = base64.b64decode(parts[2])
    return keys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts-file", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--user", default="root")
    ap.add_argument("--key", required=True)
    ap.add_argument("--known-hosts", required=True)
    ap.add_argument("--concurrency", type=int, required=True)
    ap.add_argument("--mode", choices=["command", "sftp", "scp"], required=True)
    ap.add_argument("--command", default="echo ok")
    ap.add_argument("--src")
    ap.add_argument("--dest")
    a = ap.parse_args()

    with open(a.hosts_file) as f:
        hosts = [h.strip() for h in f if h.strip()]
    known = load_known_hosts(a.known_hosts)
    errors = []

    client = ParallelSSHClient(
        hosts, user=a.user, port=a.port, pkey=a.key, pool_size=a.concurrency,
        num_retries=1, allow_agent=False, timeout=60,
    )
    # 1. connect + authenticate, then verify host keys.
    joinall(client.connect_auth(), raise_error=False)
    good = []
    for i, host in enumerate(hosts):
        c = client._host_clients.get((i, host))
        if c is None or c.session is None:
            errors.append(f"{host}: connect failed")
            continue
        key, _typ = c.session.hostkey()
        want = known.get(f"[{host}]:{a.port}") if a.port != 22 else known.get(host)
        if want is None or bytes(key) != want:
            errors.append(f"{host}: host key mismatch")
            continue
        good.append(host)
    ok = 0
    if len(good) != len(hosts):
        # Drop the hosts that failed verification from the work list.
        client.hosts = good
        client._host_clients = {
            (i, h): client._host_clients[(j, h)]
            for i, h in enumerate(good)
            for j, hh in enumerate(hosts) if hh == h and (j, h) in client._host_clients
        }

    # 2. the actual work
    if a.mode == "command":
        output = client.run_command(a.command, stop_on_errors=False)
        for ho in output:
            if ho.exception is not None:
                errors.append(f"{ho.host}: {ho.exception!r}")
                continue
            lines = list(ho.stdout)
            for _ in ho.stderr:
                pass
            if ho.exit_code == 0 and lines == ["ok"]:
                ok += 1
            else:
                errors.append(f"{ho.host}: exit {ho.exit_code} stdout {lines!r}")
    else:
        send = client.copy_file if a.mode == "sftp" else client.scp_send
        greenlets = send(a.src, a.dest)
        joinall(greenlets, raise_error=False)
        for g in greenlets:
            if g.exception is None:
                ok += 1
            else:
                errors.append(repr(g.exception))
    json.dump({"ok": ok, "failed": len(hosts) - ok, "errors": errors[:20]}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
