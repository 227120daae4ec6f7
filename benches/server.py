#!/usr/bin/env python3
"""Catalog service: `ferry serve` against Debian's puppetserver 7.9, side by side.

Both servers get the same environment (a roles-and-profiles site on Debian's
puppet-module-* packages: ntp, apache, memcached, mysql, concat, stdlib,
hiera data), the same PKI (one CA made with openssl, a certificate per
node), the same N nodes' facts (Debian 12, Ubuntu 22.04 and RHEL 9 fact
sets from tests/debian/facts, each node with its own hostname, addresses
and role) and the same load generator: C worker processes, each with one
request in flight, posting what a Puppet 7 agent posts,

    POST /puppet/v3/catalog/<certname>?environment=production
    facts_format=application/json&facts=<urlencoded {name, values, ...}>
        &environment=production&transaction_uuid=...&static_catalog=true...

over HTTPS with the node's own client certificate (one kept-alive
connection per node). Each server is checked to return the same resources
(type and title, and the edges) for a node of each role and OS, warmed up,
then driven for --duration seconds; the table gives catalogs/s, the
server's CPU per catalog (utime+stime+cutime+cstime of its process from
/proc/<pid>/stat) and latency percentiles.

    python3 benches/server.py                         # 120 nodes, 8 at once
    python3 benches/server.py -n 60 -c 4 -d 20 --warmup 60
    python3 benches/server.py --only ferry            # no puppetserver

puppetserver is installed with apt when it is missing, and run as root
straight from /usr/share/puppetserver/puppetserver.jar with a config of its
own under --workdir (its system config in /etc/puppet is not touched, its
CA service disabled: it uses the bench's PKI), on its own port, with
--ps-heap of Java heap and --ps-instances JRuby instances. ferry is
target/release/ferry (--ferry). Needs openssl and root.
"""

import argparse
import http.client
import json
import multiprocessing
import os
import random
import shutil
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import time
import urllib.parse
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FACTS = os.path.join(ROOT, "tests", "debian", "facts")
MODULES = "/usr/share/puppet/modules"
PS_JAR = "/usr/share/puppetserver/puppetserver.jar"
PS_CONF = "/etc/puppet/puppetserver"
OS_SETS = ["debian-12", "ubuntu-22.04", "redhat-9"]
ROLES = ["web", "db", "app"]
ACCEPT = "application/vnd.puppet.rich+json, application/json, text/pson"


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def run(*cmd, **kw):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kw)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


# --- PKI --------------------------------------------------------------------

def certname(i):
    return f"{ROLES[i % len(ROLES)]}{i:04d}.bench.example"


def make_pki(d, nodes):
    """A CA, its CRL, a server certificate for localhost and one client
    certificate per node (RSA 2048, as Puppet's CA makes them). Kept in
    the workdir and extended when more nodes are asked for."""
    os.makedirs(f"{d}/nodes", exist_ok=True)
    if not os.path.exists(f"{d}/ca.pem"):
        run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{d}/ca.key",
            "-out", f"{d}/ca.pem", "-days", "30", "-subj", "/CN=Puppet CA: bench",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")
        write(f"{d}/index.txt", "")
        write(f"{d}/crlnumber", "01\n")
        write(f"{d}/ca.cnf", f"""[ca]
default_ca = bench
[bench]
database = {d}/index.txt
crlnumber = {d}/crlnumber
default_md = sha256
default_crl_days = 30
""")
        run("openssl", "ca", "-config", f"{d}/ca.cnf", "-gencrl", "-keyfile", f"{d}/ca.key",
            "-cert", f"{d}/ca.pem", "-out", f"{d}/crl.pem")
        sign(d, "localhost", f"{d}/server",
             "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
             "extendedKeyUsage=serverAuth,clientAuth\n")
    for i in range(nodes):
        name = certname(i)
        if not os.path.exists(f"{d}/nodes/{name}.pem"):
            sign(d, name, f"{d}/nodes/{name}", "extendedKeyUsage=clientAuth\n")


def sign(d, cn, base, ext):
    run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{base}.key",
        "-out", f"{base}.csr", "-subj", f"/CN={cn}")
    write(f"{base}.ext", ext)
    run("openssl", "x509", "-req", "-in", f"{base}.csr", "-CA", f"{d}/ca.pem", "-CAkey",
        f"{d}/ca.key", "-set_serial", str(random.getrandbits(63)), "-out", f"{base}.pem",
        "-days", "30", "-extfile", f"{base}.ext")
    os.remove(f"{base}.csr")


# --- the environment ----------------------------------------------------------

SITE_PP = """\
# One node definition for every node: the role comes from the hostname.
node default {
  $role = $facts['networking']['hostname'] ? {
    /^web/  => 'web',
    /^db/   => 'db',
    default => 'app',
  }
  include "role::${role}"
}
"""

PROFILES = {
    "role/manifests/web.pp": """\
class role::web {
  include profile::base
  include profile::web
  include profile::cache
}
""",
    "role/manifests/db.pp": """\
class role::db {
  include profile::base
  include profile::db
}
""",
    "role/manifests/app.pp": """\
class role::app {
  include profile::base
  include profile::cache
  profile::app { ['billing', 'search', 'auth']: }
}
""",
    "profile/manifests/base.pp": """\
class profile::base (
  Array[String]       $ntp_servers,
  Hash[String, Integer] $admins,
  Array[String]       $packages,
  String              $motd_owner = 'ops@example.com',
) {
  class { 'ntp':
    servers  => $ntp_servers,
    restrict => ['127.0.0.1'],
  }
  concat { '/etc/motd':
    ensure => present,
    owner  => 'root',
    mode   => '0644',
  }
  concat::fragment { 'motd-header':
    target  => '/etc/motd',
    order   => '01',
    content => "${facts['networking']['fqdn']}: ${facts['os']['name']} ${facts['os']['release']['full']}\\n",
  }
  concat::fragment { 'motd-owner':
    target  => '/etc/motd',
    order   => '10',
    content => "Managed by Puppet; questions to ${motd_owner}\\n",
  }
  file_line { 'swappiness':
    path => '/etc/sysctl.conf',
    line => 'vm.swappiness = 10',
  }
  $admins.each |String $name, Integer $uid| {
    group { $name: ensure => present, gid => $uid }
    user { $name:
      ensure     => present,
      uid        => $uid,
      gid        => $uid,
      shell      => '/bin/bash',
      managehome => true,
      require    => Group[$name],
    }
    file { "/home/${name}/.ssh":
      ensure  => directory,
      owner   => $name,
      mode    => '0700',
      require => User[$name],
    }
  }
  package { $packages: ensure => installed }
  file { '/etc/profile.d/site.sh':
    ensure  => file,
    mode    => '0644',
    content => "export SITE_ROLE=${facts['networking']['hostname']}\\nexport SITE_IP=${facts['networking']['ip']}\\n",
  }
}
""",
    "profile/manifests/web.pp": """\
class profile::web (
  Array[String] $sites = [],
) {
  class { 'apache':
    default_vhost => false,
  }
  apache::vhost { $facts['networking']['fqdn']:
    port    => 80,
    docroot => "/var/www/${facts['networking']['hostname']}",
  }
  $sites.each |String $site| {
    apache::vhost { "${site}.${facts['networking']['domain']}":
      port    => 80,
      docroot => "/var/www/${site}",
    }
  }
}
""",
    "profile/manifests/cache.pp": """\
class profile::cache {
  class { 'memcached':
    max_memory => 256,
  }
}
""",
    "profile/manifests/db.pp": """\
class profile::db {
  class { 'mysql::server':
    override_options => {
      'mysqld' => {
        'bind-address'    => $facts['networking']['ip'],
        'max_connections' => 500,
      },
    },
  }
}
""",
    "profile/manifests/app.pp": """\
define profile::app (
  Integer $port = 8000 + fqdn_rand(1000, $title),
) {
  file { "/srv/${title}":
    ensure => directory,
    mode   => '0755',
  }
  file { "/srv/${title}/config.ini":
    ensure  => file,
    content => "[${title}]\\nport = ${port}\\nhost = ${facts['networking']['fqdn']}\\n",
    notify  => Service["app-${title}"],
  }
  service { "app-${title}":
    ensure => running,
    enable => true,
  }
}
""",
}

HIERA_YAML = """\
---
version: 5
defaults:
  datadir: data
  data_hash: yaml_data
hierarchy:
  - name: "per OS family"
    path: "os/%{facts.os.family}.yaml"
  - name: "common"
    path: "common.yaml"
"""

COMMON_YAML = """\
---
profile::base::ntp_servers:
  - 0.pool.ntp.org
  - 1.pool.ntp.org
  - 2.pool.ntp.org
profile::base::admins:
  alice: 2001
  bob: 2002
  carol: 2003
  dave: 2004
profile::base::packages:
  - vim
  - curl
  - htop
  - tmux
profile::web::sites:
  - shop
  - blog
"""

OS_YAML = {
    "Debian": "---\nprofile::base::packages:\n  - vim\n  - curl\n  - htop\n  - tmux\n  - apt-transport-https\n",
    "RedHat": "---\nprofile::base::packages:\n  - vim-enhanced\n  - curl\n  - htop\n  - tmux\n",
}


def make_environment(code):
    env = f"{code}/environments/production"
    shutil.rmtree(env, ignore_errors=True)
    write(f"{env}/manifests/site.pp", SITE_PP)
    for path, text in PROFILES.items():
        write(f"{env}/modules/{path}", text)
    write(f"{env}/hiera.yaml", HIERA_YAML)
    write(f"{env}/data/common.yaml", COMMON_YAML)
    for family, text in OS_YAML.items():
        write(f"{env}/data/os/{family}.yaml", text)
    write(f"{env}/environment.conf", "modulepath = modules:$basemodulepath\n")
    return env


# --- facts -----------------------------------------------------------------------

def node_facts(i, base):
    """Node i's facts: an OS fact set with its own names and addresses."""
    name = certname(i)
    host, domain = name.split(".", 1)
    v = json.loads(json.dumps(base[OS_SETS[(i // len(ROLES)) % len(OS_SETS)]]))
    ip = f"10.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255 or 1}"
    mac = "52:54:00:%02x:%02x:%02x" % ((i >> 16) & 255, (i >> 8) & 255, i & 255)
    v.update(clientcert=name, hostname=host, fqdn=name, domain=domain, ipaddress=ip,
             ipaddress_eth0=ip, macaddress=mac, macaddress_eth0=mac,
             uptime_seconds=1000 + i * 37)
    net = v.get("networking") or {}
    net.update(hostname=host, fqdn=name, domain=domain, ip=ip, mac=mac)
    for iface in (net.get("interfaces") or {}).values():
        if iface.get("ip", "").startswith("127."):
            continue
        if "ip" in iface:
            iface["ip"] = ip
            for b in iface.get("bindings") or []:
                b["address"] = ip
        if "mac" in iface:
            iface["mac"] = mac
    v["networking"] = net
    return {"name": name, "values": v, "timestamp": "2026-11-24T12:00:00.000000000+00:00",
            "expiration": "2026-11-24T12:30:00.000000000+00:00"}


def catalog_body(facts):
    """The form body Puppet 7's agent posts (Puppet::HTTP::Service::Compiler#post_catalog)."""
    q = urllib.parse.quote
    fields = {
        "facts_format": "application/json",
        "facts": q(json.dumps(facts, separators=(",", ":")), safe=""),
        "environment": "production",
        "configured_environment": "production",
        "check_environment": "false",
        "transaction_uuid": str(uuid.uuid4()),
        "job_uuid": "",
        "static_catalog": "true",
        "checksum_type": "sha256.sha1.md5.sha224.sha384.sha512.sha256lite",
    }
    return "&".join(f"{k}={q(v, safe='')}" for k, v in fields.items()).encode()


# --- the servers -----------------------------------------------------------------

def cpu_s(pid):
    """utime+stime+cutime+cstime of a process, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def wait_up(port, ctx, proc, timeout, what):
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            sys.exit(f"{what} exited with {proc.returncode} while starting; see its log")
        try:
            c = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=5)
            c.request("GET", "/status/v1/simple")
            r = c.getresponse()
            body = r.read()
            c.close()
            if r.status == 200:
                return body.decode(errors="replace").strip()
        except (OSError, http.client.HTTPException):
            pass
        time.sleep(0.5)
    sys.exit(f"{what} did not answer on port {port} within {timeout} s")


def start_ferry(a, work, pki, code):
    port = free_port()
    shutil.rmtree(f"{work}/ferry", ignore_errors=True)
    write(f"{work}/ferry/server.yaml", f"""host: 127.0.0.1
port: {port}
ssl-cert: {pki}/server.pem
ssl-key: {pki}/server.key
ssl-ca-cert: {pki}/ca.pem
ssl-ca-crls: {pki}/crl.pem
cache-dir: {work}/ferry/cache
loglevel: warn
modulepath: [{MODULES}]
environmentpath: {code}/environments
environment-timeout: {a.environment_timeout}
""")
    p = subprocess.Popen([a.ferry, "serve", "--config", f"{work}/ferry/server.yaml"],
                         stdout=subprocess.DEVNULL, stderr=open(f"{work}/ferry/server.log", "w"),
                         start_new_session=True)
    return p, port


def ensure_puppetserver(a):
    if os.path.exists(PS_JAR):
        return
    if a.no_install:
        sys.exit(f"{PS_JAR} is missing (apt-get install puppetserver)")
    log("installing puppetserver (apt-get install -y puppetserver)")
    subprocess.run(["apt-get", "install", "-y", "puppetserver"], check=True,
                   env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
                   stdout=subprocess.DEVNULL)


def start_puppetserver(a, work, pki, code):
    """Debian's puppetserver with a config of its own under work/ps: the
    bench's PKI (CA service disabled), its own confdir and vardir, no
    access log, WARN logging to a file."""
    ensure_puppetserver(a)
    port = free_port()
    d = f"{work}/ps"
    shutil.rmtree(d, ignore_errors=True)
    ssl_dir = f"{d}/puppet/ssl"
    for src, dst in [("ca.pem", "certs/ca.pem"), ("server.pem", "certs/localhost.pem"),
                     ("server.key", "private_keys/localhost.pem"), ("crl.pem", "crl.pem")]:
        os.makedirs(os.path.dirname(f"{ssl_dir}/{dst}"), exist_ok=True)
        shutil.copy(f"{pki}/{src}", f"{ssl_dir}/{dst}")
    write(f"{d}/puppet/puppet.conf", f"""[main]
certname = localhost
ssldir = {ssl_dir}
vardir = {d}/var
logdir = {d}/log
rundir = {d}/run
codedir = {code}
environmentpath = {code}/environments
basemodulepath = {MODULES}
environment_timeout = {a.environment_timeout}
[server]
storeconfigs = false
reports = none
""")
    write(f"{d}/conf.d/global.conf", f"global: {{ logging-config: {d}/logback.xml }}\n")
    write(f"{d}/logback.xml", f"""<configuration scan="false">
  <appender name="F1" class="ch.qos.logback.core.FileAppender">
    <file>{d}/log/puppetserver.log</file>
    <append>true</append>
    <encoder><pattern>%d %-5p [%t] [%c{{2}}] %m%n</pattern></encoder>
  </appender>
  <logger name="org.eclipse.jetty" level="WARN"/>
  <root level="WARN"><appender-ref ref="F1"/></root>
</configuration>
""")
    write(f"{d}/conf.d/webserver.conf", f"""webserver: {{
    client-auth: want
    ssl-host: 127.0.0.1
    ssl-port: {port}
    ssl-cert: {pki}/server.pem
    ssl-key: {pki}/server.key
    ssl-ca-cert: {pki}/ca.pem
    ssl-crl-path: {pki}/crl.pem
}}
""")
    write(f"{d}/conf.d/puppetserver.conf", f"""jruby-puppet: {{
    ruby-load-path: [/usr/lib/puppetserver/ruby/vendor_ruby]
    gem-home: {d}/var/jruby-gems
    gem-path: [${{jruby-puppet.gem-home}}, "/usr/lib/puppetserver/vendored-jruby-gems"]
    server-conf-dir: {d}/puppet
    server-code-dir: {code}
    server-var-dir: {d}/var
    server-run-dir: {d}/run
    server-log-dir: {d}/log
    max-active-instances: {a.ps_instances}
    max-requests-per-instance: 0
}}
http-client: {{}}
profiler: {{ enabled: false }}
""")
    for f in ["auth.conf", "web-routes.conf", "metrics.conf", "ca.conf"]:
        shutil.copy(f"{PS_CONF}/conf.d/{f}", f"{d}/conf.d/{f}")
    os.makedirs(f"{d}/services.d")
    shutil.copy(f"{PS_CONF}/services.d/bootstrap.cfg", f"{d}/services.d/bootstrap.cfg")
    write(f"{d}/services.d/ca.cfg",
          "puppetlabs.services.ca.certificate-authority-disabled-service/certificate-authority-disabled-service\n"
          "puppetlabs.trapperkeeper.services.watcher.filesystem-watch-service/filesystem-watch-service\n")
    for sub in ["var", "log", "run"]:
        os.makedirs(f"{d}/{sub}", exist_ok=True)
    cmd = ["java", f"-Xms{a.ps_heap}", f"-Xmx{a.ps_heap}",
           "-Djruby.logger.class=com.puppetlabs.jruby_utils.jruby.Slf4jLogger",
           "-Djruby.lib=/usr/share/jruby/lib", "-XX:+CrashOnOutOfMemoryError",
           f"-XX:ErrorFile={d}/log/java_err_pid%p.log",
           "-jar", PS_JAR, "--config", f"{d}/conf.d", "--bootstrap-config", f"{d}/services.d"]
    p = subprocess.Popen(cmd, cwd="/usr/share/puppetserver", stdout=open(f"{d}/log/stdout.log", "w"),
                         stderr=subprocess.STDOUT, start_new_session=True)
    return p, port


def stop(p):
    if p is None or p.poll() is not None:
        return
    os.killpg(p.pid, signal.SIGTERM)
    try:
        p.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()


# --- the load generator -------------------------------------------------------------

def client_ctx(pki, name=None):
    ctx = ssl.create_default_context(cafile=f"{pki}/ca.pem")
    if name:
        ctx.load_cert_chain(f"{pki}/nodes/{name}.pem", f"{pki}/nodes/{name}.key")
    return ctx


def post_catalog(conn, name, body):
    conn.request("POST", f"/puppet/v3/catalog/{name}?environment=production", body=body, headers={
        "Accept": ACCEPT, "Content-Type": "application/x-www-form-urlencoded",
        "X-Puppet-Version": "7.23.0", "User-Agent": "Puppet/7.23.0 Ruby/3.1.2-p20 (x86_64-linux)"})
    r = conn.getresponse()
    return r.status, r.read()


def fetch_catalog(port, pki, name, body):
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=client_ctx(pki, name), timeout=300)
    try:
        status, data = post_catalog(conn, name, body)
    finally:
        conn.close()
    if status != 200:
        raise RuntimeError(f"{name}: HTTP {status}: {data[:400].decode(errors='replace')}")
    return json.loads(data)


def worker(wid, port, pki, names, bodies, go, stop_at, out):
    """One request in flight at a time, over this worker's nodes in turn,
    one kept-alive connection per node. Sends [(end, latency, status)]."""
    conns = {}
    samples = []
    i = 0
    go.wait()
    t0 = time.monotonic()
    until = t0 + stop_at.value
    while time.monotonic() < until:
        name = names[i % len(names)]
        i += 1
        start = time.monotonic()
        try:
            conn = conns.get(name)
            if conn is None:
                conn = conns[name] = http.client.HTTPSConnection(
                    "127.0.0.1", port, context=client_ctx(pki, name), timeout=300)
            status, _ = post_catalog(conn, name, bodies[name])
        except (OSError, http.client.HTTPException):
            status = 0
            conns.pop(name, None)
        end = time.monotonic()
        samples.append((end - t0, end - start, status))
    for c in conns.values():
        c.close()
    out.put((wid, samples, os.times()))


def drive(port, pki, bodies, concurrency, seconds, pid):
    """Runs the load for `seconds`; returns the measurements."""
    names = sorted(bodies)
    per = [names[w::concurrency] for w in range(concurrency)]
    go = multiprocessing.Event()
    stop_at = multiprocessing.Value("d", float(seconds))
    out = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=worker, args=(w, port, pki, per[w], bodies, go, stop_at, out))
             for w in range(concurrency) if per[w]]
    for p in procs:
        p.start()
    time.sleep(0.5)
    cpu0, t0 = cpu_s(pid), time.monotonic()
    go.set()
    results = [out.get() for _ in procs]
    wall = time.monotonic() - t0
    cpu1 = cpu_s(pid)
    for p in procs:
        p.join()
    samples = [s for _, ss, _ in results for s in ss]
    ok = [s for s in samples if s[2] == 200]
    lat = sorted(s[1] * 1000 for s in ok)

    def pct(q):
        return lat[min(len(lat) - 1, int(q * len(lat)))] if lat else float("nan")

    client_cpu = sum(t.user + t.system for _, _, t in results)
    return {
        "catalogs": len(ok), "errors": len(samples) - len(ok), "wall_s": wall,
        "catalogs_per_s": len(ok) / wall,
        "server_cpu_s": cpu1 - cpu0,
        "server_cpu_ms_per_catalog": (cpu1 - cpu0) * 1000 / max(1, len(ok)),
        "catalogs_per_cpu_s": len(ok) / max(1e-9, cpu1 - cpu0),
        "p50_ms": pct(0.50), "p90_ms": pct(0.90), "p99_ms": pct(0.99),
        "mean_ms": statistics.fmean(lat) if lat else float("nan"),
        "loader_cpu_ms_per_catalog": client_cpu * 1000 / max(1, len(ok)),
        "server_rss_mib": rss_mib(pid),
    }


# --- comparing catalogs ---------------------------------------------------------------

def shape(cat):
    res = {f"{r['type']}[{r['title']}]" for r in cat.get("resources", [])}
    edges = {(e["source"], e["target"]) for e in cat.get("edges", [])}
    return res, edges


def param_diffs(a, b):
    """Resources whose parameters differ (a count, and a few examples)."""
    def params(cat):
        return {f"{r['type']}[{r['title']}]": r.get("parameters", {}) for r in cat.get("resources", [])}
    pa, pb = params(a), params(b)
    diffs = []
    for k in sorted(set(pa) & set(pb)):
        if pa[k] != pb[k]:
            keys = sorted(x for x in set(pa[k]) | set(pb[k]) if pa[k].get(x) != pb[k].get(x))
            diffs.append(f"{k}: {', '.join(keys)}")
    return diffs


def check_same(servers, pki, facts, bodies):
    """For the first node of each role and OS: the same resources and edges
    from every server. Returns the per-node summary; exits on a mismatch."""
    sample, seen = [], set()
    for i, f in enumerate(facts):
        key = (ROLES[i % len(ROLES)], OS_SETS[(i // len(ROLES)) % len(OS_SETS)])
        if key not in seen:
            seen.add(key)
            sample.append((f["name"], key))
    report, bad = [], False
    for name, (role, os_set) in sample:
        cats = {s: fetch_catalog(port, pki, name, bodies[name]) for s, (port, _) in servers.items()}
        shapes = {s: shape(c) for s, c in cats.items()}
        first = next(iter(shapes))
        row = {"node": name, "role": role, "os": os_set,
               "resources": {s: len(sh[0]) for s, sh in shapes.items()},
               "edges": {s: len(sh[1]) for s, sh in shapes.items()}}
        for s, sh in shapes.items():
            if s == first:
                continue
            only_a = sorted(shapes[first][0] - sh[0])
            only_b = sorted(sh[0] - shapes[first][0])
            e_a = sorted(shapes[first][1] - sh[1])
            e_b = sorted(sh[1] - shapes[first][1])
            if only_a or only_b or e_a or e_b:
                bad = True
                log(f"{name}: resources only from {first}: {only_a[:10]}; only from {s}: {only_b[:10]}; "
                    f"edges only from {first}: {e_a[:5]}; only from {s}: {e_b[:5]}")
            row["param_diffs"] = param_diffs(cats[first], cats[s])
        log(f"{name} ({role}, {os_set}): resources {row['resources']}, edges {row['edges']}"
            + (f", resources with other parameters: {len(row.get('param_diffs', []))}"
               if len(cats) > 1 else ""))
        for d in row.get("param_diffs", [])[:5]:
            log(f"    {d}")
        report.append(row)
    if bad:
        sys.exit("the servers' catalogs differ: the comparison would be meaningless")
    return report


# --- main ------------------------------------------------------------------------------

def warm_up(server, port, pki, bodies, a, pid):
    """Load in rounds of --warmup-round seconds until a round's rate and
    its server CPU per catalog are both within 10 % of the round before
    (JRuby's JIT keeps speeding puppetserver up for minutes, and the CPU
    per catalog settles later than the rate), for at most --warmup seconds
    (--ferry-warmup: one round, for ferry). Returns the rounds' catalogs/s
    and CPU ms per catalog."""
    total = a.ferry_warmup if server == "ferry" else a.warmup
    rounds, cpu, spent = [], [], 0.0
    while spent < total:
        secs = min(a.warmup_round, total - spent)
        w = drive(port, pki, bodies, a.concurrency, secs, pid)
        spent += secs
        rounds.append(round(w["catalogs_per_s"], 2))
        cpu.append(round(w["server_cpu_ms_per_catalog"], 2))
        log(f"{server}: warm-up round {len(rounds)}: {w['catalogs']} catalogs, "
            f"{w['catalogs_per_s']:.1f}/s, {w['server_cpu_ms_per_catalog']:.1f} ms CPU each, "
            f"p50 {w['p50_ms']:.1f} ms")
        if (len(rounds) >= 2 and abs(rounds[-1] - rounds[-2]) <= 0.1 * rounds[-2]
                and abs(cpu[-1] - cpu[-2]) <= 0.1 * cpu[-2]):
            break
    return {"seconds": spent, "rounds_catalogs_per_s": rounds, "rounds_cpu_ms_per_catalog": cpu}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", "--nodes", type=int, default=120)
    ap.add_argument("-c", "--concurrency", type=int, default=8)
    ap.add_argument("-d", "--duration", type=float, default=30, help="seconds measured per server")
    ap.add_argument("--warmup", type=float, default=480,
                    help="at most this many seconds of load before measuring puppetserver "
                         "(JRuby's JIT), in rounds until the rate is stable")
    ap.add_argument("--warmup-round", type=float, default=60, help="seconds per warm-up round")
    ap.add_argument("--ferry-warmup", type=float, default=10, help="the same for ferry")
    ap.add_argument("--ferry", default=f"{ROOT}/target/release/ferry")
    ap.add_argument("--only", default="ferry,puppetserver")
    ap.add_argument("--ps-heap", default="2g")
    ap.add_argument("--ps-instances", type=int, default=os.cpu_count() or 2,
                    help="JRuby instances (max-active-instances); default: one per CPU")
    ap.add_argument("--environment-timeout", default="unlimited",
                    help="both servers' environment timeout (Puppet's recommended 'unlimited' by default)")
    ap.add_argument("--workdir", default="/tmp/ferry-psbench", help="PKI, code, configs, logs (kept)")
    ap.add_argument("--no-install", action="store_true")
    ap.add_argument("--no-check", action="store_true", help="skip the catalog comparison")
    ap.add_argument("--json", default=f"{ROOT}/benches/results/server-catalog.json")
    a = ap.parse_args()
    only = a.only.split(",")
    if os.geteuid() != 0:
        sys.exit("run as root (puppetserver's files, ports)")
    work = os.path.abspath(a.workdir)
    pki, code = f"{work}/pki", f"{work}/code"
    log(f"PKI for {a.nodes} nodes in {pki}")
    make_pki(pki, a.nodes)
    make_environment(code)
    base = {}
    for s in OS_SETS:
        with open(f"{FACTS}/{s}.json") as f:
            base[s] = json.load(f)
    facts = [node_facts(i, base) for i in range(a.nodes)]
    bodies = {f["name"]: catalog_body(f) for f in facts}

    procs, servers = {}, {}
    try:
        if "ferry" in only:
            if not os.access(a.ferry, os.X_OK):
                sys.exit(f"no ferry at {a.ferry} (cargo build --release)")
            p, port = start_ferry(a, work, pki, code)
            procs["ferry"] = p
            wait_up(port, client_ctx(pki, certname(0)), p, 30, "ferry serve")
            servers["ferry"] = (port, p.pid)
        if "puppetserver" in only:
            t = time.time()
            p, port = start_puppetserver(a, work, pki, code)
            procs["puppetserver"] = p
            wait_up(port, client_ctx(pki, certname(0)), p, 600, "puppetserver")
            log(f"puppetserver up on {port} after {time.time() - t:.0f} s")
            servers["puppetserver"] = (port, p.pid)
        check = [] if a.no_check else check_same(servers, pki, facts, bodies)
        with open("/proc/loadavg") as f:
            load = f.read().split()[0]
        results = {}
        for s, (port, pid) in servers.items():
            warmed = warm_up(s, port, pki, bodies, a, pid)
            log(f"{s}: measuring for {a.duration:.0f} s")
            r = drive(port, pki, bodies, a.concurrency, a.duration, pid)
            r["warmup"] = warmed
            results[s] = r
            log(f"{s}: {json.dumps(r)}")
        print_table(a, results, load)
        os.makedirs(os.path.dirname(a.json), exist_ok=True)
        with open(a.json, "w") as f:
            json.dump({"nodes": a.nodes, "concurrency": a.concurrency, "duration_s": a.duration,
                       "warmup_s": {"ferry": a.ferry_warmup, "puppetserver": a.warmup},
                       "nproc": os.cpu_count(), "load_before": load,
                       "puppetserver": {"heap": a.ps_heap, "jruby_instances": a.ps_instances},
                       "environment_timeout": a.environment_timeout,
                       "check": check, "results": results}, f, indent=1)
    finally:
        for p in procs.values():
            stop(p)


def print_table(a, results, load):
    print(f"N={a.nodes} nodes, concurrency {a.concurrency}, {a.duration:.0f} s each, "
          f"{os.cpu_count()} CPUs, load before {load}\n")
    print("| server | catalogs | catalogs/s | server CPU ms/catalog | catalogs per CPU-second "
          "| p50 ms | p90 ms | p99 ms | errors | RSS MiB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for s, r in results.items():
        print(f"| {s} | {r['catalogs']} | {r['catalogs_per_s']:.1f} | {r['server_cpu_ms_per_catalog']:.2f} "
              f"| {r['catalogs_per_cpu_s']:.1f} | {r['p50_ms']:.1f} | {r['p90_ms']:.1f} "
              f"| {r['p99_ms']:.1f} | {r['errors']} | {r['server_rss_mib']:.0f} |")
    if "ferry" in results and "puppetserver" in results:
        f, p = results["ferry"], results["puppetserver"]
        per_core = f["catalogs_per_cpu_s"] / max(1e-9, p["catalogs_per_cpu_s"])
        print(f"\nthroughput per CPU core, ferry / puppetserver: {per_core:.1f}x (goal >= 20x: "
              f"{'met' if per_core >= 20 else 'missed'})")
        print(f"catalogs/s, ferry / puppetserver: {f['catalogs_per_s'] / max(1e-9, p['catalogs_per_s']):.1f}x")
        print(f"ferry p99 {f['p99_ms']:.1f} ms vs puppetserver p50 {p['p50_ms']:.1f} ms (goal p99 < p50: "
              f"{'met' if f['p99_ms'] < p['p50_ms'] else 'missed'})")


if __name__ == "__main__":
    main()
