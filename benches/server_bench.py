#!/usr/bin/env python3
"""Load test for `ferry serve`: requests/s and latency percentiles of
POST /check and POST /ssh/run_command (`echo ok`) against a small fleet of
real sshd on loopback, driven by wrk.

Everything is generated in a temp dir: a CA and server certificate (openssl),
a bearer token (wrk cannot present client certificates, so the server gets a
tokens file), sshd host keys and a client key (ssh-keygen), one sshd per
target on 127.0.0.1:<port>, sessions with an empty HOME (as benches/fleet.py
does: root's shell start-up files would dominate). The server uses its
default SQLite store there,
so every run_command is also a stored job (4 small transactions).

    python3 benches/server_bench.py                # 4 targets, 10 s per endpoint
    python3 benches/server_bench.py -n 8 -d 20 -c 64

Needs root (sshd), wrk, openssl, ssh-keygen, /usr/sbin/sshd and a release
build with `serve` (cargo build --profile dist). Prints a markdown table.
"""

import argparse
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(*cmd, **kw):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)


def make_tls(d):
    run("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
        "-nodes", "-keyout", f"{d}/ca.key", "-out", f"{d}/ca.pem", "-days", "2",
        "-subj", "/CN=bench CA")
    run("openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", f"{d}/server.key", "-out", f"{d}/server.csr", "-subj", "/CN=localhost")
    with open(f"{d}/ext", "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
    run("openssl", "x509", "-req", "-in", f"{d}/server.csr", "-CA", f"{d}/ca.pem",
        "-CAkey", f"{d}/ca.key", "-CAcreateserial", "-out", f"{d}/server.pem", "-days", "2",
        "-extfile", f"{d}/ext")


def start_sshd(d, i, client_pub):
    sd = f"{d}/sshd{i}"
    os.makedirs(f"{sd}/home")
    run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{sd}/host")
    shutil.copy(client_pub, f"{sd}/authorized_keys")
    os.chmod(f"{sd}/authorized_keys", 0o600)
    port = free_port()
    with open(f"{sd}/config", "w") as f:
        f.write(f"""Port {port}
ListenAddress 127.0.0.1
HostKey {sd}/host
AuthorizedKeysFile {sd}/authorized_keys
PermitRootLogin yes
PasswordAuthentication no
UsePAM no
StrictModes no
UseDNS no
LogLevel ERROR
MaxStartups 1000:30:1000
MaxSessions 100
PidFile {sd}/pid
SetEnv HOME={sd}/home
""")
    p = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", f"{sd}/config"],
                         stderr=open(f"{sd}/log", "w"))
    with open(f"{sd}/host.pub") as f:
        key = " ".join(f.read().split()[:2])
    return p, port, f"[127.0.0.1]:{port} {key}\n"


def wait_port(port, timeout=15):
    end = time.time() + timeout
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"nothing listens on {port}")


def wrk(url, lua, threads, conns, secs):
    out = subprocess.run(["wrk", "-t", str(threads), "-c", str(conns), "-d", f"{secs}s",
                          "--latency", "-s", lua, url], capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    lat = {}
    for pct, val, unit in re.findall(r"^\s+(50|90|99)%\s+([\d.]+)(us|ms|s)\s*$", out, re.M):
        lat[pct] = float(val) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: (.*)", out)
    return {"rps": rps, "p50_ms": lat.get("50"), "p90_ms": lat.get("90"), "p99_ms": lat.get("99"),
            "non2xx": int(non2xx.group(1)) if non2xx else 0,
            "socket_errors": errors.group(1) if errors else "", "raw": out}


def cpu_ms(pid):
    """User+system CPU of a process so far, in ms."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    return ticks * 1000.0 / os.sysconf("SC_CLK_TCK")


def lua_script(path, token, bodies, endpoint):
    quoted = ",\n".join("[==[" + b + "]==]" for b in bodies)
    with open(path, "w") as f:
        f.write(f"""local bodies = {{ {quoted} }}
local n = 0
wrk.method = "POST"
wrk.headers["Authorization"] = "Bearer {token}"
wrk.headers["Content-Type"] = "application/json"
request = function()
  n = n + 1
  return wrk.format(nil, "{endpoint}", nil, bodies[(n % #bodies) + 1])
end
""")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", "--targets", type=int, default=4)
    ap.add_argument("-d", "--duration", type=int, default=10)
    ap.add_argument("-c", "--connections", type=int, default=32)
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("--ferry", default=f"{ROOT}/target/dist/ferry")
    ap.add_argument("--json", default=f"{ROOT}/benches/results/server.json")
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="ferry-serve-bench-")
    procs = []
    try:
        make_tls(d)
        run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{d}/client")
        known, targets = "", []
        for i in range(a.targets):
            p, port, line = start_sshd(d, i, f"{d}/client.pub")
            procs.append(p)
            known += line
            targets.append(port)
        for port in targets:
            wait_port(port)
        token = secrets.token_hex(16)
        with open(f"{d}/tokens.yaml", "w") as f:
            f.write(f"tokens:\n  - name: bench\n    sha256: {hashlib.sha256(token.encode()).hexdigest()}\n    actions: ['*']\n")
        port = free_port()
        with open(f"{d}/server.yaml", "w") as f:
            f.write(f"""port: {port}
ssl-cert: {d}/server.pem
ssl-key: {d}/server.key
ssl-ca-cert: {d}/ca.pem
tokens-file: {d}/tokens.yaml
cache-dir: {d}/cache
loglevel: error
""")
        server = subprocess.Popen([a.ferry, "serve", "--config", f"{d}/server.yaml"],
                                  stdout=subprocess.DEVNULL, stderr=open(f"{d}/server.log", "w"))
        procs.append(server)
        wait_port(port)
        key = open(f"{d}/client").read()
        bodies = [json.dumps({"command": "echo ok", "target": {
            "hostname": "127.0.0.1", "port": t, "user": "root",
            "private-key-content": key, "known-hosts-content": known}}) for t in targets]
        lua_script(f"{d}/check.lua", token, ["{}"], "/check")
        lua_script(f"{d}/run.lua", token, bodies, "/ssh/run_command")
        url = f"https://127.0.0.1:{port}"
        results = {}
        for ep, lua in [("/check", "check.lua"), ("/ssh/run_command", "run.lua")]:
            before = cpu_ms(server.pid)
            r = wrk(url, f"{d}/{lua}", a.threads, a.connections, a.duration)
            requests = max(1.0, r["rps"] * a.duration)
            r["server_cpu_ms_per_req"] = (cpu_ms(server.pid) - before) / requests
            results[ep] = r
        with open("/proc/loadavg") as f:
            load = f.read().split()[0]
        print(f"load average before: {load}; {os.cpu_count()} CPUs", file=sys.stderr)
        print("| endpoint | targets | connections | req/s | p50 ms | p90 ms | p99 ms | server CPU ms/req | non-2xx |")
        print("|---|---|---|---|---|---|---|---|---|")
        for ep, r in results.items():
            print(f"| `POST {ep}` | {a.targets if 'ssh' in ep else '-'} | {a.connections} | {r['rps']:.0f} | "
                  f"{r['p50_ms']:.2f} | {r['p90_ms']:.2f} | {r['p99_ms']:.2f} | "
                  f"{r['server_cpu_ms_per_req']:.3f} | {r['non2xx']} |")
        for ep, r in results.items():
            if r["non2xx"] or r["socket_errors"]:
                print(f"{ep}: non-2xx {r['non2xx']}, socket errors: {r['socket_errors']}", file=sys.stderr)
        os.makedirs(os.path.dirname(a.json), exist_ok=True)
        with open(a.json, "w") as f:
            json.dump({"targets": a.targets, "connections": a.connections, "threads": a.threads,
                       "duration_s": a.duration, "nproc": os.cpu_count(),
                       "results": {k: {x: y for x, y in v.items() if x != "raw"} for k, v in results.items()}},
                      f, indent=2)
    finally:
        for p in reversed(procs):
            p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
