#!/bin/sh
# ferry::facts - gather structured facts about a POSIX target, named as
# facter names them (os, kernel, networking, memory, processors, identity...).
#
# Portable POSIX sh plus awk (mawk, gawk, busybox awk: no gawk-only
# functions, no "^" operator, no strftime); runs under dash, busybox ash,
# bash and ksh. Every source is optional: a missing file or command only
# drops the facts it would have provided, the task never fails because of
# it. awk is the one requirement: without it the task fails with the
# Bolt-style error ferry/facts-no-awk.
#
# FERRY_FACTS_ROOT (default: empty, i.e. "/") prefixes every file this task
# reads (etc/os-release, proc/meminfo, sys/class/net, ...), so tests can feed
# it a fixture tree. When it is set, commands that describe the live system
# (ip, ifconfig) are not consulted for network facts.
#
# Forks are the cost of this task (it runs before every apply): the shell
# only runs the few commands whose answers no file holds (uname, id, ip or
# ifconfig, date, and hostname -f when the node name has no dot) and lists
# the directories awk cannot list; then it becomes ONE awk program that
# reads every /proc, /sys and /etc file itself and prints the whole JSON
# document. Rare fallbacks (ip link/route without /sys or /proc/net,
# getconf without /proc/cpuinfo) are run by awk only when they are needed.
# awk takes the shell's place (exec): when ferry reads this task into its
# wrapper's subshell, nothing runs after it there either.
#
# There are no shell JSON helpers here (the other tasks share a block of
# them): awk's js() escapes every string the way their json_str does, which
# tests/builtin_tasks/json.rs checks string by string.

LC_ALL=C
export LC_ALL
R=${FERRY_FACTS_ROOT:-}
R=${R%/}

if ! command -v awk >/dev/null 2>&1; then
  printf '%s\n' '{"_error":{"kind":"ferry/facts-no-awk","msg":"the facts task needs awk on the target","details":{}}}'
  exit 1
fi

# The commands whose answers no file holds. Their stderr is silenced for
# the whole group, not per command: bash forks twice for a command
# substitution whose command carries its own redirection.
nl='
'
fqdn_out= want_fqdn= net_src= net_out=
{
  uts=$(uname -s -n -r -m)
  # The node name decides whether hostname -f is worth a fork: a dotted
  # name carries its domain already.
  set -f
  # shellcheck disable=SC2086 # word splitting wanted
  set -- $uts
  set +f
  if [ $# -ne 4 ] || [ "${2#*.}" = "$2" ]; then
    if command -v hostname >/dev/null; then
      want_fqdn=1
      fqdn_out=$(hostname -f)
    fi
  fi
  ids=$(id)
  # Network commands describe the live system only: `ip -o addr show`, or
  # `ifconfig -a` when ip is missing or fails.
  if [ -z "$R" ]; then
    if command -v ip >/dev/null && net_out=$(ip -o addr show); then
      net_src=ip
    elif command -v ifconfig >/dev/null; then
      net_src=ifconfig
      net_out=$(ifconfig -a)
    fi
  fi
  tz=$(date +%Z)
} 2>/dev/null

# Directory listings (awk cannot list a directory): interfaces, and the
# CPU packages for when /proc/cpuinfo has no "physical id".
sysnet= ifs=
if [ -d "$R/sys/class/net" ]; then
  sysnet=1
  for d in "$R"/sys/class/net/*; do
    [ -e "$d" ] && ifs="$ifs${d##*/}$nl"
  done
fi
cpus=
if [ -d "$R/sys/devices/system/cpu" ]; then
  for f in "$R"/sys/devices/system/cpu/cpu[0-9]*/topology/physical_package_id; do
    cpus="$cpus$f$nl"
  done
fi

# Everything the shell gathered goes to awk on stdin, one section per
# source: a "@@ferry@@ NAME" line, then the text.
exec awk '
function rl(p,   l) {
  # The first line of file p ("" when unreadable).
  l = ""
  if ((getline l < p) < 0) l = ""
  close(p)
  return l
}

# ------------------------------------------------------------------ JSON
# js(s): s as a JSON string literal. Quote, backslash and control
# characters are escaped; valid UTF-8 passes through unchanged and each
# byte of an invalid UTF-8 sequence becomes U+FFFD, so the output is
# always valid JSON.
function js(s,   n, i, c, o, out, k, lo, hi, ok, j, b) {
  if (s !~ /[^ -~]/ && index(s, "\"") == 0 && index(s, "\\") == 0) return "\"" s "\""
  if (!ordok) { for (i = 1; i < 256; i++) ord[sprintf("%c", i)] = i; ordok = 1 }
  n = length(s); out = ""
  for (i = 1; i <= n; i++) {
    c = substr(s, i, 1); o = ord[c]
    if (o == 34) out = out "\\\""
    else if (o == 92) out = out "\\\\"
    else if (o == 10) out = out "\\n"
    else if (o == 9) out = out "\\t"
    else if (o == 13) out = out "\\r"
    else if (o < 32 || o == 127) out = out sprintf("\\u%04x", o)
    else if (o < 128) out = out c
    else {
      # UTF-8 lead byte: k continuation bytes follow, the first of them
      # within [lo, hi] (rejects overlongs and surrogates).
      k = 0; lo = 128; hi = 191
      if (o >= 194 && o <= 223) k = 1
      else if (o >= 224 && o <= 239) {
        k = 2; if (o == 224) lo = 160; if (o == 237) hi = 159
      } else if (o >= 240 && o <= 244) {
        k = 3; if (o == 240) lo = 144; if (o == 244) hi = 143
      }
      ok = (k > 0 && i + k <= n)
      for (j = 1; ok && j <= k; j++) {
        b = ord[substr(s, i + j, 1)]
        if (j == 1 && (b < lo || b > hi)) ok = 0
        if (j > 1 && (b < 128 || b > 191)) ok = 0
      }
      if (ok) { out = out substr(s, i, k + 1); i += k }
      else out = out "\\ufffd"
    }
  }
  return "\"" out "\""
}
# Object members, each with a leading comma; obj() wraps them.
# ms: a string member, omitted when empty.
function ms(k, v) { return v == "" ? "" : "," js(k) ":" js(v) }
# mn: an integer member, omitted unless v is a non-negative decimal integer.
function mn(k, v) { return v ~ /^(0|[1-9][0-9]*)$/ ? "," js(k) ":" v : "" }
# mr: a raw JSON member, omitted when empty.
function mr(k, v) { return v == "" ? "" : "," js(k) ":" v }
function obj(m) { return "{" substr(m, 2) "}" }
# mo: an object member, omitted when it has no members.
function mo(k, m) { return m == "" ? "" : mr(k, obj(m)) }

# -------------------------------------------------------------------- os
# unq: v without one level of os-release quoting.
function unq(v,   c) {
  c = substr(v, 1, 1)
  if (length(v) >= 2 && (c == "\"" || c == SQ) && substr(v, length(v)) == c)
    v = substr(v, 2, length(v) - 2)
  return v
}
# os_name_of: facter os.name: the first word of os-release NAME, with its
# special cases (Red Hat -> RedHat, Arch Linux -> Archlinux...); without a
# NAME, the ID capitalised.
function os_name_of(name, id,   w, lc, j) {
  if (name == "") return toupper(substr(id, 1, 1)) substr(id, 2)
  split(name, w)
  lc = tolower(w[1])
  if (lc == "red" || lc == "oracle") return w[1] w[2]
  if (lc ~ /^(arch|manjaro)/) {
    j = w[1] w[2]
    return toupper(substr(j, 1, 1)) tolower(substr(j, 2))
  }
  if (lc == "virtuozzo") return w[1] "Linux"
  return w[1]
}
# os_family_of: facter os.family for the first os-release ID / ID_LIKE
# word it knows ("" for none).
function os_family_of(words,   w, n, i) {
  n = split(words, w)
  for (i = 1; i <= n; i++) {
    if (w[i] ~ /^(rhel|redhat|centos|fedora|rocky|almalinux|ol|amzn|scientific|cloudlinux|virtuozzo|eurolinux|circle|xenenterprise|photon)$/ || w[i] ~ /^oracle/) return "RedHat"
    if (w[i] ~ /^(debian|ubuntu|linuxmint|devuan|raspbian|pop|kali|elementary|huaweios)$/ || w[i] ~ /^kde/) return "Debian"
    if (w[i] ~ /^(sles|sled|suse)$/ || w[i] ~ /^opensuse/) return "Suse"
    if (w[i] == "gentoo") return "Gentoo"
    if (w[i] ~ /^(arch|archarm|endeavouros)$/ || w[i] ~ /^manjaro/) return "Archlinux"
    if (w[i] ~ /^(mandrake|mandriva|mageia)$/) return "Mandrake"
  }
  return ""
}

# ---------------------------------------------------------------- memory
function human(x,   e, v, u) {
  if (x < 1024) return sprintf("%.0f bytes", x)
  e = 0; v = x
  while (v >= 1024 && e < 6) { v = v / 1024; e++ }
  v = int(v * 100 + 0.5) / 100
  if (v >= 1024 && e < 6) { v = 1; e++ }
  split("KiB MiB GiB TiB PiB EiB", u, " ")
  return sprintf("%.2f %s", v, u[e])
}
function memobj(total, avail,   used) {
  if (avail > total) avail = total
  used = total - avail
  return sprintf("{\"total_bytes\":%.0f,\"available_bytes\":%.0f,\"used_bytes\":%.0f,\"total\":\"%s\",\"available\":\"%s\",\"used\":\"%s\",\"capacity\":\"%.2f%%\"}",
    total, avail, used, human(total), human(avail), human(used), total > 0 ? used * 100 / total : 0)
}

# ------------------------------------------------------------ networking
# No "^": some busybox builds have no math support.
function pow2(n,   r) { r = 1; while (n-- > 0) r = r * 2; return r }
function hexval(h,   i, c, v) {
  v = 0; h = tolower(h)
  if (h == "" || length(h) > 4) return -1
  for (i = 1; i <= length(h); i++) {
    c = index("0123456789abcdef", substr(h, i, 1))
    if (c == 0) return -1
    v = v * 16 + c - 1
  }
  return v
}
function isv4(a,   o, i, n) {
  n = split(a, o, ".")
  if (n != 4) return 0
  for (i = 1; i <= 4; i++) if (o[i] !~ /^[0-9]+$/ || o[i] + 0 > 255) return 0
  return 1
}
function mask2prefix(m,   o, i, p, v) {
  split(m, o, "."); p = 0
  for (i = 1; i <= 4; i++) { v = o[i] + 0; while (v >= 128) { p++; v = (v - 128) * 2 } }
  return p
}
function v4calc(a, p,   o, i, bits, blk, mask, net) {
  split(a, o, "."); mask = ""; net = ""
  for (i = 0; i < 4; i++) {
    bits = p - 8 * i
    blk = bits >= 8 ? 1 : (bits <= 0 ? 256 : pow2(8 - bits))
    mask = mask (i ? "." : "") (256 - blk)
    net = net (i ? "." : "") (int(o[i + 1] / blk) * blk)
  }
  return mask " " net
}
function v6parse(a, g,   i, n, k, hp, tp, nh, nt, idx, head, tail, last, o) {
  sub(/%.*/, "", a)
  if (length(a) == 32 && a !~ /[^0-9a-fA-F]/) {
    for (i = 1; i <= 8; i++) g[i] = hexval(substr(a, 4 * i - 3, 4))
    return 1
  }
  # Embedded IPv4 tail (::ffff:192.0.2.1).
  k = split(a, hp, ":")
  last = hp[k]
  if (index(last, ".")) {
    if (!isv4(last)) return 0
    split(last, o, ".")
    a = substr(a, 1, length(a) - length(last)) sprintf("%x:%x", o[1] * 256 + o[2], o[3] * 256 + o[4])
  }
  idx = index(a, "::")
  if (idx) {
    head = substr(a, 1, idx - 1); tail = substr(a, idx + 2)
    if (index(tail, "::")) return 0
    nh = head == "" ? 0 : split(head, hp, ":")
    nt = tail == "" ? 0 : split(tail, tp, ":")
    if (nh + nt > 7) return 0
    for (i = 1; i <= 8; i++) g[i] = 0
    for (i = 1; i <= nh; i++) g[i] = hexval(hp[i])
    for (i = 1; i <= nt; i++) g[8 - nt + i] = hexval(tp[i])
  } else {
    if (split(a, hp, ":") != 8) return 0
    for (i = 1; i <= 8; i++) g[i] = hexval(hp[i])
  }
  for (i = 1; i <= 8; i++) if (g[i] < 0) return 0
  return 1
}
# v6fmt: RFC 5952 text (longest run of two or more zero groups as "::").
function v6fmt(g,   i, bs, bl, cs, cl, out) {
  bs = 0; bl = 0; cl = 0
  for (i = 1; i <= 8; i++) {
    if (g[i] == 0) { if (cl == 0) cs = i; cl++; if (cl > bl) { bl = cl; bs = cs } }
    else cl = 0
  }
  if (bl < 2) bs = 0
  out = ""; i = 1
  while (i <= 8) {
    if (i == bs) { out = out "::"; i += bl; continue }
    if (out != "" && substr(out, length(out)) != ":") out = out ":"
    out = out sprintf("%x", g[i]); i++
  }
  return out
}
# addr(): one address record (IFACE FAMILY ADDRESS PREFIX|NETMASK) from
# ip, ifconfig or /proc/net/if_inet6.
function addr(name, fam, a, p) { na++; AN[na] = name; AF[na] = fam; AA[na] = a; AP[na] = p }
function link(name, mtu, mac) { nl++; LN[nl] = name; LM[nl] = mtu; LA[nl] = mac }
# bind(): an address with its netmask and network (B records).
function bind(name, fam, a, mask, net, scope) {
  nb++; BN[nb] = name; BF[nb] = fam; BA[nb] = a; BM[nb] = mask; BW[nb] = net; BS[nb] = scope
}
function calc(name, fam, a, pfx,   p, mn2, i, bits, blk, scope) {
  if (fam == 4) {
    if (!isv4(a)) return
    p = index(pfx, ".") ? mask2prefix(pfx) : pfx + 0
    if (p < 0 || p > 32) return
    split(v4calc(a, p), mn2, " ")
    bind(name, 4, a, mn2[1], mn2[2], "-")
    return
  }
  if (!v6parse(a, g)) return
  p = pfx
  if (length(a) == 32 && a !~ /:/) p = hexval(p)
  p = p + 0
  if (p < 0 || p > 128) return
  for (i = 1; i <= 8; i++) {
    bits = p - 16 * (i - 1)
    blk = bits >= 16 ? 1 : (bits <= 0 ? 65536 : pow2(16 - bits))
    m[i] = 65536 - blk
    nw[i] = int(g[i] / blk) * blk
  }
  scope = "global"
  if (g[1] == 0 && g[2] == 0 && g[3] == 0 && g[4] == 0 && g[5] == 0 && g[6] == 0 && g[7] == 0 && g[8] == 1) scope = "host"
  else if (g[1] >= 65152 && g[1] <= 65215) scope = "link"
  else if (g[1] >= 65216 && g[1] <= 65279) scope = "site"
  bind(name, 6, v6fmt(g), v6fmt(m), v6fmt(nw), scope)
}
# ip -o addr show: "2: eth0    inet 192.0.2.2/24 brd ... scope global eth0\ ..."
function ip_addr_line(line,   f, n, i, name, a, k) {
  n = split(line, f)
  name = f[2]; sub(/:$/, "", name); sub(/@.*/, "", name)
  for (i = 3; i < n; i++) {
    if (f[i] == "inet" || f[i] == "inet6") {
      k = split(f[i + 1], a, "/")
      addr(name, (f[i] == "inet" ? 4 : 6), a[1], (k > 1 ? a[2] : (f[i] == "inet" ? 32 : 128)))
    }
  }
}
# ip -o link show: "2: eth0: <...> mtu 1500 ... link/ether MAC brd ..."
function ip_link_line(line,   f, n, i, name, mtu, mac) {
  n = split(line, f)
  name = f[2]; sub(/:$/, "", name); sub(/@.*/, "", name); mtu = "-"; mac = "-"
  for (i = 3; i < n; i++) {
    if (f[i] == "mtu") mtu = f[i + 1]
    if (f[i] ~ /^link\//) mac = f[i + 1]
  }
  link(name, mtu, mac)
}
# ifconfig -a, net-tools ("inet 1.2.3.4  netmask 255.0.0.0", "ether MAC",
# "mtu N") and busybox/old net-tools ("inet addr:1.2.3.4  Mask:255.0.0.0",
# "HWaddr MAC", "MTU:N", "inet6 addr: fe80::1/64 Scope:Link").
function ifconfig_line(line,   f, n, i, j, a, mk, p, parts) {
  n = split(line, f)
  if (line ~ /^[^ \t]/) { ifc = f[1]; sub(/:$/, "", ifc); ifcn[++nifc] = ifc }
  if (ifc == "") return
  for (i = 1; i <= n; i++) {
    if (f[i] == "HWaddr" || f[i] == "ether") ifcmac[ifc] = f[i + 1]
    else if (f[i] == "mtu") ifcmtu[ifc] = f[i + 1]
    else if (f[i] ~ /^MTU:/) ifcmtu[ifc] = substr(f[i], 5)
    else if (f[i] == "inet") {
      a = f[i + 1]; sub(/^addr:/, "", a); mk = ""
      for (j = i + 2; j <= n; j++) {
        if (f[j] == "netmask") mk = f[j + 1]
        else if (f[j] ~ /^Mask:/) mk = substr(f[j], 6)
      }
      addr(ifc, 4, a, (mk == "" ? 32 : mk))
    } else if (f[i] == "inet6") {
      a = f[i + 1]; if (a == "addr:") a = f[i + 2]
      p = ""
      if (split(a, parts, "/") > 1) { a = parts[1]; p = parts[2] }
      for (j = i + 2; j <= n; j++) if (f[j] == "prefixlen") p = f[j + 1]
      addr(ifc, 6, a, (p == "" ? 128 : p))
    }
  }
}

# All in BEGIN, stdin read with getline: no field variables, so the task
# stays readable into the wrapper shell (which must not see dollar-zero).
BEGIN {
  SQ = sprintf("%c", 39)
  R = ENVIRON["FERRY_FACTS_ROOT"]; sub(/\/$/, "", R)
  while ((getline line) > 0) {
    if (line ~ /^@@ferry@@ /) { sec = substr(line, 11); S[sec] = ""; first[sec] = 1; continue }
    # Network output can be long: parsed line by line, never kept whole.
    if (sec == "net ip") ip_addr_line(line)
    else if (sec == "net ifconfig") ifconfig_line(line)
    else if (first[sec]) { S[sec] = line; first[sec] = 0 }
    else S[sec] = S[sec] "\n" line
  }
  # ------------------------------------------------------------ os
  # The first of the two that can be opened, even if empty.
  osr = R "/etc/os-release"
  if ((got = (getline line < osr)) < 0) { close(osr); osr = R "/usr/lib/os-release"; got = (getline line < osr) }
  if (got > 0) {
    do {
      if (substr(line, 1, 3) == "ID=") os_id = unq(substr(line, 4))
      else if (substr(line, 1, 8) == "ID_LIKE=") os_like = unq(substr(line, 9))
      else if (substr(line, 1, 5) == "NAME=") os_name_raw = unq(substr(line, 6))
      else if (substr(line, 1, 11) == "VERSION_ID=") os_ver = unq(substr(line, 12))
      else if (substr(line, 1, 17) == "VERSION_CODENAME=") os_codename = unq(substr(line, 18))
      else if (substr(line, 1, 12) == "PRETTY_NAME=") os_pretty = unq(substr(line, 13))
    } while ((getline line < osr) > 0)
  }
  close(osr)
  os_id = tolower(os_id)
  if (os_id != "" || os_name_raw != "") {
    os_name = os_name_of(os_name_raw, os_id)
    os_family = os_family_of(os_id " " os_like)
    if (os_family == "") os_family = os_name
  }
  # os.release: VERSION_ID, refined by /etc/debian_version on Debian
  # (which carries the point release, as facter reports it). Ubuntu major
  # is the whole YY.MM, as facter reports it.
  rel_full = os_ver
  if (os_id == "debian") {
    dv = rl(R "/etc/debian_version")
    if (dv ~ /^[0-9].*\.[0-9]/) rel_full = dv
    else if (dv ~ /^[0-9]/ && rel_full == "") rel_full = dv
  }
  if (rel_full != "") {
    if (rel_full ~ /[^0-9.]/) rel_major = rel_full
    else {
      rel_major = rel_full; sub(/\..*/, "", rel_major)
      if (index(rel_full, ".")) { rel_minor = substr(rel_full, index(rel_full, ".") + 1); sub(/\..*/, "", rel_minor) }
      if (os_id == "ubuntu") { rel_major = rel_full; rel_minor = "" }
    }
  }

  # -------------------------------------------------------- kernel
  nu = split(S["uname"], u)
  if (nu >= 4) {
    kernel = u[1]; kernelrelease = u[nu - 1]; hardware = u[nu]
    node = u[2]; for (i = 3; i <= nu - 2; i++) node = node " " u[i]
  } else if (nu == 3) { kernel = u[1]; kernelrelease = u[2]; hardware = u[3] }
  kernelversion = kernelrelease; sub(/-.*/, "", kernelversion); sub(/[^0-9.].*/, "", kernelversion)
  kernelmajversion = kernelversion
  if (kernelversion ~ /\..*\./) sub(/\.[^.]*$/, "", kernelmajversion)
  arch = hardware
  if (hardware ~ /^i[3-6]86$/) arch = "i386"
  else if (hardware == "x86_64" && (os_family == "Debian" || os_family == "Gentoo")) arch = "amd64"

  # --------------------------------------------------- host naming
  if (node == "") node = rl("/proc/sys/kernel/hostname")
  host = node; sub(/\..*/, "", host)
  if (index(node, ".")) domain = substr(node, index(node, ".") + 1)
  else if (node != "" && ("fqdn" in S)) {
    long = S["fqdn"]
    if (substr(long, 1, length(host) + 1) == host ".") domain = substr(long, length(host) + 2)
  }
  if (domain == "") {
    f = R "/etc/resolv.conf"; d = ""; s = ""
    while ((getline line < f) > 0) {
      n = split(line, w)
      if (w[1] == "domain" && n > 1) d = w[2]
      if (w[1] == "search" && n > 1 && s == "") s = w[2]
    }
    close(f)
    domain = d != "" ? d : s
  }
  sub(/\.$/, "", domain)
  fqdn = host
  if (domain != "") fqdn = host "." domain

  # -------------------------------------------------------- memory
  f = R "/proc/meminfo"
  while ((getline line < f) > 0) {
    split(line, w)
    if (w[1] == "MemTotal:") { mt = w[2] * 1024; hmt = 1 }
    else if (w[1] == "MemAvailable:") { ma = w[2] * 1024; hma = 1 }
    else if (w[1] == "MemFree:") mf = w[2] * 1024
    else if (w[1] == "Buffers:") mb = w[2] * 1024
    else if (w[1] == "Cached:") mc = w[2] * 1024
    else if (w[1] == "SwapTotal:") st = w[2] * 1024
    else if (w[1] == "SwapFree:") sf = w[2] * 1024
  }
  close(f)
  if (hmt) {
    if (!hma) ma = mf + mb + mc
    mem_m = mr("system", memobj(mt, ma))
    if (st > 0) mem_m = mem_m mr("swap", memobj(st, sf))
  }

  # ---------------------------------------------------- processors
  f = R "/proc/cpuinfo"; cur = 0; nproc = 0
  while ((getline line < f) > 0) {
    k = line; sub(/:.*/, "", k); sub(/[ \t]+$/, "", k)
    v = line; sub(/^[^:]*:[ \t]*/, "", v); sub(/[ \t]+$/, "", v)
    if (k == "processor") { nproc++; cur = nproc }
    if (k == "model name" || (k == "Processor" && cur == 0) || k == "cpu model") model[cur > 0 ? cur : 1] = v
    if (k == "physical id" && !(v in phys)) { phys[v] = 1; nphys++ }
    if (k == "cpu MHz" && mhz == "") mhz = v
    if (k == "cpu cores" && cores == "") cores = v
    if (k == "siblings" && siblings == "") siblings = v
  }
  close(f)
  count = nproc > 0 ? nproc : ""
  if (mhz != "") speed = mhz + 0 >= 1000 ? sprintf("%.2f GHz", mhz / 1000) : sprintf("%.2f MHz", mhz)
  if (cores + 0 > 0 && siblings + 0 >= cores + 0) threads = int(siblings / cores)
  if (cores + 0 <= 0) cores = ""
  last = ""; models = ""
  for (i = 1; i <= (nproc > 0 ? nproc : 1); i++) {
    if (i in model) { last = model[i]; lastjs = js(last) }
    if (last != "") models = models "," lastjs
  }
  if (count == "" && R == "") {
    c = "getconf _NPROCESSORS_ONLN 2>/dev/null"
    if ((c | getline line) > 0) count = line
    close(c)
  }
  if (nphys == 0) {
    np = split(S["cpus"], w, "\n")
    for (i = 1; i <= np; i++) {
      if (w[i] == "") continue
      while ((getline line < w[i]) > 0) if (!(line in pkg)) { pkg[line] = 1; nphys++ }
      close(w[i])
    }
  }

  # ---------------------------------------------------- networking
  have_ip = ("net ip" in S)
  if ("sysnet" in S) {
    n = split(S["sysnet"], w, "\n")
    for (i = 1; i <= n; i++) {
      if (w[i] == "") continue
      split(rl(R "/sys/class/net/" w[i] "/mtu"), a); mtu = a[1]
      split(rl(R "/sys/class/net/" w[i] "/address"), a); mac = a[1]
      link(w[i], mtu == "" ? "-" : mtu, mac == "" ? "-" : mac)
    }
  } else if (have_ip) {
    c = "ip -o link show 2>/dev/null"
    while ((c | getline line) > 0) ip_link_line(line)
    close(c)
  }
  if (("net ifconfig" in S) && nl == 0)
    for (i = 1; i <= nifc; i++) link(ifcn[i], (ifcn[i] in ifcmtu ? ifcmtu[ifcn[i]] : "-"), (ifcn[i] in ifcmac ? ifcmac[ifcn[i]] : "-"))
  # IPv6: /proc/net/if_inet6 is authoritative when present (its prefixes
  # are hex); the other sources then give IPv4 only.
  f = R "/proc/net/if_inet6"
  if ((got = (getline line < f)) >= 0) {
    for (i = 1; i <= na; i++) if (AF[i] == 4) calc(AN[i], 4, AA[i], AP[i])
    while (got > 0) {
      n = split(line, w)
      if (n >= 6) calc(w[6], 6, w[1], w[3])
      got = (getline line < f)
    }
  } else for (i = 1; i <= na; i++) calc(AN[i], AF[i], AA[i], AP[i])
  close(f)

  # Interface names: links first, then any name only seen in an address.
  nn = 0
  for (i = 1; i <= nl; i++) if (!(LN[i] in seen)) { seen[LN[i]] = 1; names[++nn] = LN[i] }
  for (i = 1; i <= nb; i++) if (!(BN[i] in seen)) { seen[BN[i]] = 1; names[++nn] = BN[i] }
  for (i = 1; i <= nl; i++) {
    if (LM[i] != "-") imtu[LN[i]] = LM[i]
    if (LA[i] != "-" && LA[i] != "00:00:00:00:00:00") imac[LN[i]] = LA[i]
  }
  for (i = 1; i <= nb; i++) {
    ifn = BN[i]
    if (BF[i] == 4) {
      b4[ifn] = b4[ifn] "," obj(ms("address", BA[i]) ms("netmask", BM[i]) ms("network", BW[i]))
      if (!(ifn in ip4)) { ip4[ifn] = BA[i]; mask4[ifn] = BM[i]; net4[ifn] = BW[i] }
    } else {
      b6[ifn] = b6[ifn] "," obj(ms("address", BA[i]) ms("netmask", BM[i]) ms("network", BW[i]) ms("scope6", BS[i]))
      if (BS[i] == "link" || BS[i] == "host") {
        if (!(ifn in ll6)) { ll6[ifn] = i }
      } else if (!(ifn in g6)) g6[ifn] = i
    }
  }

  # Primary interface: the IPv4 default route, then the IPv6 one.
  primary = ""
  f = R "/proc/net/route"; r = 0
  while ((getline line < f) > 0) {
    r++
    split(line, w)
    if (r > 1 && w[2] == "00000000" && w[8] == "00000000") { primary = w[1]; break }
  }
  close(f)
  if (primary == "") {
    f = R "/proc/net/ipv6_route"
    while ((getline line < f) > 0) {
      n = split(line, w)
      if (w[1] == "00000000000000000000000000000000" && w[2] == "00" && w[n] != "lo") { primary = w[n]; break }
    }
    close(f)
  }
  if (primary == "" && have_ip) {
    c = "ip route show default 2>/dev/null"
    while (primary == "" && (c | getline line) > 0) {
      n = split(line, w)
      for (i = 1; i < n; i++) if (w[i] == "dev") { primary = w[i + 1]; break }
    }
    close(c)
  }

  first_with_ip = ""
  for (j = 1; j <= nn; j++) {
    ifn = names[j]
    x = (ifn in g6) ? g6[ifn] : ((ifn in ll6) ? ll6[ifn] : 0)
    i6 = x ? BA[x] : ""; m6 = x ? BM[x] : ""; n6 = x ? BW[x] : ""; s6 = x ? BS[x] : ""
    i4 = (ifn in ip4) ? ip4[ifn] : ""
    o = ""
    if (b4[ifn] != "") o = o mr("bindings", "[" substr(b4[ifn], 2) "]")
    if (b6[ifn] != "") o = o mr("bindings6", "[" substr(b6[ifn], 2) "]")
    o = o ms("ip", i4) ms("ip6", i6) ms("mac", imac[ifn]) mn("mtu", imtu[ifn])
    o = o ms("netmask", mask4[ifn]) ms("netmask6", m6) ms("network", net4[ifn])
    o = o ms("network6", n6) ms("scope6", s6)
    iface[j] = js(ifn) ":" obj(o)
    if (ifn == primary || (primary == "" && first_with_ip == "" && ifn != "lo" && i4 i6 != "")) {
      first_with_ip = ifn
      p_ip = i4; p_ip6 = i6; p_mac = imac[ifn]; p_mtu = imtu[ifn]; p_mask = mask4[ifn]
      p_net = net4[ifn]; p_mask6 = m6; p_net6 = n6; p_scope6 = s6
    }
  }
  if (primary == "") primary = first_with_ip
  net_m = ms("hostname", host) ms("domain", domain) ms("fqdn", fqdn)
  net_m = net_m ms("ip", p_ip) ms("ip6", p_ip6) ms("mac", p_mac) mn("mtu", p_mtu)
  net_m = net_m ms("netmask", p_mask) ms("netmask6", p_mask6) ms("network", p_net)
  net_m = net_m ms("network6", p_net6) ms("scope6", p_scope6) ms("primary", primary)

  # ------------------------------------------------------ identity
  # id: "uid=0(root) gid=0(root) groups=..."; a user or group without a
  # name has no "(name)" after its number.
  ids = S["id"]
  if (substr(ids, 1, 4) == "uid=") {
    uid = substr(ids, 5); sub(/[^0-9].*/, "", uid)
    user = substr(ids, 5 + length(uid))
    if (substr(user, 1, 1) == "(") { user = substr(user, 2); if (index(user, ")")) user = substr(user, 1, index(user, ")") - 1) }
    else user = ""
    x = index(ids, " gid=")
    gs = x ? substr(ids, x + 5) : ids
    gid = gs; sub(/[^0-9].*/, "", gid)
    group = substr(gs, 1 + length(gid))
    if (substr(group, 1, 1) == "(") { group = substr(group, 2); if (index(group, ")")) group = substr(group, 1, index(group, ")") - 1) }
    else group = ""
    id_m = ms("user", user) mn("uid", uid) ms("group", group) mn("gid", gid)
    id_m = id_m mr("privileged", uid == "0" ? "true" : "false")
  }

  # -------------------------------------------------------- uptime
  up = rl(R "/proc/uptime"); sub(/[. ].*/, "", up)
  if (up ~ /^[0-9]+$/) up_m = mn("seconds", up) mn("hours", sprintf("%d", up / 3600)) mn("days", sprintf("%d", up / 86400))

  # -------------------------------------------------------- output
  rel_m = ms("full", rel_full) ms("major", rel_major) ms("minor", rel_minor)
  distro_m = ms("codename", os_codename) ms("description", os_pretty) ms("id", os_name)
  if (distro_m != "") distro_m = distro_m mo("release", rel_m)
  os_m = ms("name", os_name) ms("family", os_family) mo("release", rel_m)
  if (os_id != "") os_m = os_m mo("distro", distro_m)
  os_m = os_m ms("architecture", arch) ms("hardware", hardware)
  proc_m = mn("count", count) mn("physicalcount", nphys)
  if (models != "") proc_m = proc_m mr("models", "[" substr(models, 2) "]")
  proc_m = proc_m ms("speed", speed) mn("cores", cores) mn("threads", threads) ms("isa", hardware)

  # Printed as it goes: a host can have thousands of interfaces, and awk
  # strings grown by appending cost the square of their length.
  out = mo("os", os_m)
  out = out ms("kernel", kernel) ms("kernelrelease", kernelrelease)
  out = out ms("kernelversion", kernelversion) ms("kernelmajversion", kernelmajversion)
  out = out ms("architecture", arch) ms("hardwaremodel", hardware)
  out = out ms("hostname", host) ms("domain", domain) ms("fqdn", fqdn)
  if (nn > 0) net_m = net_m ",\"interfaces\":{"
  if (net_m != "") out = out ",\"networking\":{" substr(net_m, 2)
  printf "{%s", substr(out, 2)
  started = out != ""
  for (j = 1; j <= nn; j++) printf "%s%s", (j > 1 ? "," : ""), iface[j]
  if (nn > 0) printf "}"
  if (net_m != "") printf "}"
  out = mo("memory", mem_m) mo("processors", proc_m)
  out = out mo("identity", id_m) mo("system_uptime", up_m) ms("timezone", S["date"])
  printf "%s}\n", started ? out : substr(out, 2)
}' <<EOF
@@ferry@@ uname
$uts
@@ferry@@ id
$ids
@@ferry@@ net $net_src
$net_out
@@ferry@@ date
$tz
${want_fqdn:+@@ferry@@ fqdn$nl$fqdn_out$nl}${sysnet:+@@ferry@@ sysnet$nl$ifs}@@ferry@@ cpus
$cpus
EOF
