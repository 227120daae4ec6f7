#!/usr/bin/env python3
"""Writes the handwritten seeds (inputs the repository has no files for:
PQL queries, API bodies, known_hosts, ssh_config, task output) into
fuzz/corpus/TARGET/seed-*. Run by fuzz/run.sh when a corpus is empty:
  handwritten.py CORPUS_ROOT [TARGET...]"""
import hashlib, json, os, sys

HOST = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAtuQLpstBsjdADEkISpJD1ORqv1BPBuveLozoJwopTi"
CA = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMqmZEx+tnRTRcfHGOUahHtGiPJo9GA9wWK3BtdqMCq9"
RSA = open(os.path.join(os.path.dirname(__file__), "rsa.pub")).read().strip()

def hashed(host, salt=b"12345678901234567890"):
    import base64, hmac
    mac = hmac.new(salt, host.encode(), hashlib.sha1).digest()
    return "|1|%s|%s" % (base64.b64encode(salt).decode(), base64.b64encode(mac).decode())

SEEDS = {
    "pql": [
        'nodes[certname] { facts.os.family = "Debian" and certname ~ "^web" }',
        'inventory[certname] { certname ~ "web" and facts.cores >= 4 }',
        'not facts.os.family = "RedHat" or certname = "db1"',
        '(certname = "web1" or certname = "web2") and facts.cores < 3.5',
        "facts.os.release.major != '12'",
        'facts.tags ~ "a" and facts.ok = true and facts.memory = null',
        'certname !~ "^(db|web)[0-9]+$"',
        'nodes[certname] { certname ~ "^web" and not certname = "web1" }',
        "facts.cores > -1 and facts.cores <= 16.5",
    ],
    "api_body": [
        {"command": "id", "target": {"hostname": "server.example.com", "user": "root", "password": "hunter2", "port": 22, "host-key-check": False}},
        {"targets": [{"hostname": "a", "user": "u", "private-key-content": "-----BEGIN OPENSSH PRIVATE KEY-----\nxx\n-----END OPENSSH PRIVATE KEY-----\n", "known-hosts-content": "a " + HOST + "\n"}, {"hostname": "b", "user": "u", "password": "p", "run-as": "root", "sudo-password": "s", "tty": True, "tmpdir": "/var/tmp", "connect-timeout": 5, "run-as-command": ["sudo", "-nu"]}]},
        {"script": {"filename": "s.sh", "uri": {"path": "/puppet/v3/file_content/scripts/demo/s.sh", "params": {"environment": "production"}}, "sha256": "00" * 32, "content": "ZWNobyBoaQo="}, "arguments": ["a", "b c"], "target": {"hostname": "h", "user": "u", "password": "p"}},
        {"files": [{"relative_path": "a/b", "uri": {"path": "/puppet/v3/file_content/modules/demo/a/b", "params": {}}, "sha256": "ab" * 32, "kind": "file", "content": "aGk="}, {"relative_path": "a", "uri": {"path": "/puppet/v3/file_content/modules/demo/a", "params": {}}, "sha256": "", "kind": "directory"}], "job_id": 1, "destination": "/tmp/x", "target": {"hostname": "h", "user": "u", "password": "p"}},
        {"task": {"name": "ferry::package", "metadata": {}, "files": [{"filename": "package.sh", "sha256": "00", "uri": {"path": "/puppet/v3/file_content/tasks/ferry/package.sh", "params": {}}}]}, "parameters": {"action": "status", "name": "openssl"}, "target": {"hostname": "h", "user": "u", "password": "p"}, "timeout": 30},
        {"task": "ferry::service", "params": {"action": "status", "name": "ssh"}, "scope": {"nodes": ["web1", "db1"]}, "noop": True, "concurrency": 2, "timeout": 10, "description": "d", "environment": "production"},
        {"command": "uptime", "scope": {"query": 'nodes[certname] { facts.os.family = "Debian" }'}, "description": "x", "concurrency": 1},
        {"command": "uptime", "scope": {"node_group": "web"}},
        {"job": "42"},
        {"task": "ferry::facts", "params": {}, "scope": {"query": "certname ~ 'web'"}},
    ],
    "known_hosts": [
        "server.example.com " + HOST + "\n",
        "server.example.com,192.0.2.1 " + HOST + " comment here\n[192.0.2.1]:2222 " + RSA + "\n",
        "# comment\n\n" + hashed("server.example.com") + " " + HOST + "\n" + hashed("[192.0.2.1]:2222") + " " + RSA + "\n",
        "@cert-authority *.example.com " + CA + "\n@cert-authority [192.0.2.1]:2222 " + CA + "\n",
        "@revoked * " + HOST + "\n@cert-authority * " + CA + "\n",
        "*.example.com,!bad.example.com " + HOST + "\nserv?r.example.com " + RSA + "\r\n",
        "other " + RSA + "\nserver.example.com " + RSA + "\n",
    ],
    "ssh_config": [
        open(os.path.join(os.path.dirname(__file__), "ssh_config.example")).read(),
        "Host *\n  User fallback\n  Port 2222\n  ConnectTimeout 30\n  StrictHostKeyChecking yes\n",
        "Match host web1 user alice\n  Port 2200\nMatch all\n  User x\nHost x\n  HostName %h.%l\n",
        "Host server.example.com\n  ProxyJump admin@jump1:2222,jump2\n  UserKnownHostsFile ~/.ssh/kh %d/kh_%h_%p\n  IdentityFile ~/.ssh/id_%r\n  ProxyCommand ssh -W %h:%p gw\n  HostKeyAlias alias\n",
        'Host "web1" web2\n\tHostName=10.0.0.5\n\tUser "deploy user"\n\tStrictHostKeyChecking=accept-new\n',
        "Include /nonexistent/conf.d/*\nHost x\n  Include other\n",
    ],
    "inventory": [
        """version: 2
config:
  transport: ssh
  ssh:
    user: deploy
    port: 2222
    host-key-check: accept-new
    known-hosts-file: /tmp/kh
    connect-timeout: 5
    private-key: {key-data: {_plugin: env_var, var: KEY}}
    password: {_plugin: env_var, var: NOPE, default: fallback}
    run-as: root
    run-as-command: [sudo, -nkSEu]
    sudo-password: s3cret
    tty: false
    tmpdir: /var/tmp
    proxyjump: admin@jump:2200
    kex-algorithms: [curve25519-sha256]
    encryption-algorithms: [aes128-ctr]
    host-key-algorithms: [ssh-ed25519]
    mac-algorithms: [hmac-sha2-256]
    load-config: false
    cleanup: true
    login-shell: sh
    interpreters: {.rb: /usr/bin/ruby}
  local:
    tmpdir: /tmp
    env-vars: {A: b}
groups:
  - name: web
    targets:
      - uri: ssh://alice@web1.example.com:2201
        alias: [w1, first]
        vars: {role: web}
        facts: {os: {family: Debian}}
        features: [puppet-agent]
      - name: web2
        uri: "[2001:db8::1]:22"
    groups:
      - name: inner
        targets: [web1.example.com, local://here]
        config: {transport: local}
  - name: db
    targets: [{name: db1, config: {ssh: {host: 10.0.0.5, port: "22"}}}]
facts: {site: x}
vars: {v: {_plugin: env_var, var: EMPTY}}
features: []
""",
    ],
    "plan": [
        "parameters:\n  nodes:\n    type: Optional[TargetSpec]\n  n:\n    type: Integer[1, 10]\n    default: 3\n  h:\n    type: Hash[String, Variant[String, Array[Integer]]]\n    default: {a: b, c: [1, 2]}\n"
        "  e:\n    type: Enum[a, 'b c']\n    default: a\n  p:\n    type: Pattern[/^x+$/]\n    default: xx\n"
        "steps:\n  - name: s\n    script: demo/files/s.sh\n    targets: [web1, $nodes]\n    arguments: [\"${n}\", $h]\n"
        "  - upload: demo/files/conf\n    destination: /tmp/${e}/conf\n    targets: $nodes\n  - message: $h\n"
        "return:\n  first: $s\n  all: [$n, '${p}', {k: $e}]\n",
        "description: d\nversion: 1\nsteps:\n  - task: ferry::package\n    description: install\n    targets: localhost\n    parameters: {action: install, name: \"${missing}\"}\n",
        "parameters:\nsteps: []\nreturn: ~\n",
    ],
    "task_output": [
        b"\x00" + b'{"status": "ok", "n": 1, "_sensitive": {"password": "hunter2"}}',
        b"\x01" + b'{"_error": {"kind": "demo/failed", "msg": "no", "details": {"a": 1}}}',
        b"\x02plain text with hunter2 inside\x00stderr text",
        b"\x00[1,2,3]",
        b"\x7f" + b'{"_output": "x", "_error": "not an object"}',
        b"\xff" + b'  {"nested": {"deep": [{"s": "hunter2"}]}}  \n',
    ],
}

def main(root, only=None):
    for target, seeds in SEEDS.items():
        if only and target not in only:
            continue
        d = os.path.join(root, target)
        os.makedirs(d, exist_ok=True)
        for s in seeds:
            if isinstance(s, dict):
                s = json.dumps(s, indent=1)
            if isinstance(s, str):
                s = s.encode()
            name = "seed-" + hashlib.sha1(s).hexdigest()
            with open(os.path.join(d, name), "wb") as f:
                f.write(s)

if __name__ == "__main__":
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "corpus")
    main(root, sys.argv[2:])
