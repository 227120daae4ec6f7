#!/bin/sh
# ferry::facts - gather structured facts about a POSIX target, named as
# facter names them (os, kernel, networking, memory, processors, identity...).
#
# Portable POSIX sh: runs under dash, busybox ash, bash and ksh; needs only
# awk, sed-free. Every source is optional: a missing file or command only
# drops the facts it would have provided, the task never fails because of it.
#
# FERRY_FACTS_ROOT (default: empty, i.e. "/") prefixes every file this task
# reads (etc/os-release, proc/meminfo, sys/class/net, ...), so tests can feed
# it a fixture tree. When it is set, commands that describe the live system
# (ip, ifconfig) are not consulted for network facts.

LC_ALL=C
export LC_ALL
R=${FERRY_FACTS_ROOT:-}
R=${R%/}

# --- ferry json helpers: begin (keep byte-identical in every ferry task) ---
# json_str VALUE: print VALUE as a JSON string literal. Quote, backslash and
# control characters are escaped; valid UTF-8 passes through unchanged and
# each byte of an invalid UTF-8 sequence becomes U+FFFD, so the output is
# always valid JSON.
#
# json_set VALUE does the same into the variable JS (no subshell on the
# common all-printable-ASCII path: forks are slow on some hosts).
json_set() {
  case $1 in
    *[\"\\]* | *[!\ -~]*)
      JS=$(FERRY_JSON_S=$1 LC_ALL=C awk 'BEGIN {
        for (i = 1; i < 256; i++) ord[sprintf("%c", i)] = i
        s = ENVIRON["FERRY_JSON_S"]; n = length(s); out = ""
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
            # UTF-8 lead byte: k continuation bytes follow, the first of
            # them within [lo, hi] (rejects overlongs and surrogates).
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
        printf "\"%s\"", out
      }')
      ;;
    *) JS="\"$1\"" ;;
  esac
}
json_str() {
  json_set "$1"
  printf '%s' "$JS"
}

# Object members are appended to the variable JM, each with a leading
# comma; wrap them with "{${JM#,}}" (arrays: "[${list#,}]").
# jm_s KEY STRING (omitted when STRING is empty)
jm_s() {
  [ -n "$2" ] || return 0
  json_set "$1"
  _jk=$JS
  json_set "$2"
  JM="$JM,$_jk:$JS"
}
# jm_n KEY INTEGER (omitted unless INTEGER is a non-negative decimal integer)
jm_n() {
  case $2 in
    0 | [1-9] | [1-9]*[0-9]) ;;
    *) return 0 ;;
  esac
  case $2 in *[!0-9]*) return 0 ;; esac
  json_set "$1"
  JM="$JM,$JS:$2"
}
# jm_b KEY true|false (omitted for anything else)
jm_b() {
  case $2 in
    true | false)
      json_set "$1"
      JM="$JM,$JS:$2"
      ;;
  esac
}
# jm_r KEY RAW_JSON (omitted when RAW_JSON is empty)
jm_r() {
  [ -n "$2" ] || return 0
  json_set "$1"
  JM="$JM,$JS:$2"
}

# ferry_fail KIND MSG [DETAIL_MEMBERS]: print a Bolt-style error on stdout
# and exit 1. DETAIL_MEMBERS is a JM-style comma-prefixed member list.
ferry_fail() {
  json_set "ferry/$1"
  _fk=$JS
  json_set "$2"
  printf '{"_error":{"kind":%s,"msg":%s,"details":{%s}}}\n' "$_fk" "$JS" "${3#,}"
  exit 1
}
# --- ferry json helpers: end ---

have() { command -v "$1" >/dev/null 2>&1; }

# read_line FILE: set RL to the first line of FILE (empty if unreadable).
read_line() {
  RL=
  [ -r "$1" ] || return 0
  IFS= read -r RL <"$1" || :
}

# unquote VALUE: set UQ to VALUE without one level of os-release quoting.
unquote() {
  UQ=$1
  case $UQ in
    \"*\") UQ=${UQ#\"}; UQ=${UQ%\"} ;;
    \'*\') UQ=${UQ#\'}; UQ=${UQ%\'} ;;
  esac
}

# os_family_of WORD...: facter's os.family for an os-release ID / ID_LIKE word.
os_family_of() {
  for _w in "$@"; do
    case $_w in
      rhel | redhat | centos | fedora | rocky | almalinux | ol | oracle* | amzn | \
        scientific | cloudlinux | virtuozzo | eurolinux | circle | xenenterprise | photon)
        echo RedHat; return 0 ;;
      debian | ubuntu | linuxmint | devuan | raspbian | pop | kali | elementary | \
        huaweios | kde*)
        echo Debian; return 0 ;;
      sles | sled | suse | opensuse*) echo Suse; return 0 ;;
      gentoo) echo Gentoo; return 0 ;;
      arch | archarm | manjaro* | endeavouros) echo Archlinux; return 0 ;;
      mandrake | mandriva | mageia) echo Mandrake; return 0 ;;
    esac
  done
  return 1
}

# os_name_of NAME ID: facter's os.name: the first word of os-release NAME,
# with facter's special cases (Red Hat -> RedHat, Arch Linux -> Archlinux...).
os_name_of() {
  _n=$1
  if [ -z "$_n" ]; then
    # No NAME: capitalise the ID.
    _first=$(printf '%s' "$2" | cut -c1 | tr '[:lower:]' '[:upper:]')
    printf '%s%s' "$_first" "${2#?}"
    return 0
  fi
  set -f
  # shellcheck disable=SC2086 # word splitting wanted
  set -- $_n
  set +f
  _lc=$(printf '%s' "$1" | tr '[:upper:]' '[:lower:]')
  case $_lc in
    red | oracle) printf '%s%s' "$1" "${2:-}" ;;
    arch* | manjaro*)
      _j="$1${2:-}"
      _first=$(printf '%s' "$_j" | cut -c1 | tr '[:lower:]' '[:upper:]')
      _rest=$(printf '%s' "$_j" | cut -c2- | tr '[:upper:]' '[:lower:]')
      printf '%s%s' "$_first" "$_rest"
      ;;
    virtuozzo) printf '%sLinux' "$1" ;;
    *) printf '%s' "$1" ;;
  esac
}

# ---------------------------------------------------------------- os / kernel
osr=
for f in "$R/etc/os-release" "$R/usr/lib/os-release"; do
  if [ -r "$f" ]; then osr=$f; break; fi
done
os_id= os_like= os_name_raw= os_ver= os_codename= os_pretty=
if [ -n "$osr" ]; then
  while IFS= read -r line || [ -n "$line" ]; do
    case $line in
      ID=*) unquote "${line#ID=}"; os_id=$UQ ;;
      ID_LIKE=*) unquote "${line#ID_LIKE=}"; os_like=$UQ ;;
      NAME=*) unquote "${line#NAME=}"; os_name_raw=$UQ ;;
      VERSION_ID=*) unquote "${line#VERSION_ID=}"; os_ver=$UQ ;;
      VERSION_CODENAME=*) unquote "${line#VERSION_CODENAME=}"; os_codename=$UQ ;;
      PRETTY_NAME=*) unquote "${line#PRETTY_NAME=}"; os_pretty=$UQ ;;
    esac
  done <"$osr"
fi
os_id=$(printf '%s' "$os_id" | tr '[:upper:]' '[:lower:]')

os_name=
os_family=
if [ -n "$os_id$os_name_raw" ]; then
  os_name=$(os_name_of "$os_name_raw" "$os_id")
  set -f
  # shellcheck disable=SC2086 # ID_LIKE is a space-separated list
  os_family=$(os_family_of $os_id $os_like) || os_family=$os_name
  set +f
fi

# os.release: VERSION_ID, refined by /etc/debian_version on Debian (which
# carries the point release, as facter reports it). Ubuntu's major is the
# whole YY.MM, as facter reports it.
rel_full=$os_ver
if [ "$os_id" = debian ]; then
  read_line "$R/etc/debian_version"
  dv=$RL
  case $dv in
    [0-9]*.[0-9]*) rel_full=$dv ;;
    [0-9]*) [ -n "$rel_full" ] || rel_full=$dv ;;
  esac
fi
rel_major= rel_minor=
case $rel_full in
  '') ;;
  *[!0-9.]*) rel_major=$rel_full ;;
  *)
    rel_major=${rel_full%%.*}
    case $rel_full in
      *.*)
        rel_minor=${rel_full#*.}
        rel_minor=${rel_minor%%.*}
        ;;
    esac
    if [ "$os_id" = ubuntu ]; then
      rel_major=$rel_full
      rel_minor=
    fi
    ;;
esac

# One uname for the three (none of them holds a blank).
set -f
set -- $(uname -s -r -m 2>/dev/null)
set +f
kernel=${1-} kernelrelease=${2-} hardware=${3-}
kernelversion=${kernelrelease%%-*}
kernelversion=${kernelversion%%[!0-9.]*}
case $kernelversion in
  *.*.*) kernelmajversion=${kernelversion%.*} ;;
  *) kernelmajversion=$kernelversion ;;
esac
arch=$hardware
case $hardware in
  i[3456]86) arch=i386 ;;
  x86_64) case $os_family in Debian | Gentoo) arch=amd64 ;; esac ;;
esac

# -------------------------------------------------------------- host naming
node=
have hostname && node=$(hostname 2>/dev/null)
[ -n "$node" ] || node=$(uname -n 2>/dev/null)
if [ -z "$node" ]; then read_line /proc/sys/kernel/hostname; node=$RL; fi
host=${node%%.*}
domain=
case $node in
  *.*) domain=${node#*.} ;;
  *)
    if [ -n "$node" ] && have hostname; then
      long=$(hostname -f 2>/dev/null)
      case $long in "$host".*) domain=${long#*.} ;; esac
    fi
    ;;
esac
if [ -z "$domain" ] && [ -r "$R/etc/resolv.conf" ]; then
  domain=$(awk '$1 == "domain" && NF > 1 { d = $2 }
    $1 == "search" && NF > 1 && s == "" { s = $2 }
    END { if (d != "") print d; else if (s != "") print s }' "$R/etc/resolv.conf")
fi
domain=${domain%.}
fqdn=$host
[ -n "$domain" ] && fqdn=$host.$domain

# ----------------------------------------------------------------- memory
mem_system= mem_swap=
if [ -r "$R/proc/meminfo" ]; then
  mem_out=$(awk '
    function human(x,   e, v, u) {
      if (x < 1024) return sprintf("%.0f bytes", x)
      e = 0; v = x
      while (v >= 1024 && e < 6) { v = v / 1024; e++ }
      v = int(v * 100 + 0.5) / 100
      if (v >= 1024 && e < 6) { v = 1; e++ }
      split("KiB MiB GiB TiB PiB EiB", u, " ")
      return sprintf("%.2f %s", v, u[e])
    }
    function obj(total, avail,   used) {
      if (avail > total) avail = total
      used = total - avail
      return sprintf("{\"total_bytes\":%.0f,\"available_bytes\":%.0f,\"used_bytes\":%.0f,\"total\":\"%s\",\"available\":\"%s\",\"used\":\"%s\",\"capacity\":\"%.2f%%\"}",
        total, avail, used, human(total), human(avail), human(used), total > 0 ? used * 100 / total : 0)
    }
    $1 == "MemTotal:" { t = $2 * 1024; ht = 1 }
    $1 == "MemAvailable:" { a = $2 * 1024; ha = 1 }
    $1 == "MemFree:" { f = $2 * 1024 }
    $1 == "Buffers:" { b = $2 * 1024 }
    $1 == "Cached:" { c = $2 * 1024 }
    $1 == "SwapTotal:" { st = $2 * 1024 }
    $1 == "SwapFree:" { sf = $2 * 1024 }
    END {
      if (!ht) exit
      if (!ha) a = f + b + c
      print "system " obj(t, a)
      if (st > 0) print "swap " obj(st, sf)
    }' "$R/proc/meminfo" 2>/dev/null)
  while IFS=' ' read -r kind val; do
    case $kind in
      system) mem_system=$val ;;
      swap) mem_swap=$val ;;
    esac
  done <<MEM
$mem_out
MEM
fi

# -------------------------------------------------------------- processors
proc_count= proc_phys= proc_models= proc_speed= proc_cores= proc_threads=
if [ -r "$R/proc/cpuinfo" ]; then
  cpu_out=$(awk -F: '
    function val() { v = $0; sub(/^[^:]*:[ \t]*/, "", v); sub(/[ \t]+$/, "", v); return v }
    { k = $1; sub(/[ \t]+$/, "", k) }
    k == "processor" { n++; cur = n }
    k == "model name" || (k == "Processor" && cur == 0) || k == "cpu model" { model[cur > 0 ? cur : 1] = val() }
    k == "physical id" { if (!(val() in phys)) { phys[val()] = 1; np++ } }
    k == "cpu MHz" && mhz == "" { mhz = val() }
    k == "cpu cores" && cores == "" { cores = val() }
    k == "siblings" && siblings == "" { siblings = val() }
    END {
      print "count " n
      if (np > 0) print "physical " np
      if (mhz != "") {
        if (mhz >= 1000) printf "speed %.2f GHz\n", mhz / 1000
        else printf "speed %.2f MHz\n", mhz
      }
      if (cores > 0) {
        print "cores " cores
        if (siblings >= cores) print "threads " int(siblings / cores)
      }
      last = ""
      for (i = 1; i <= (n > 0 ? n : 1); i++) {
        if (i in model) last = model[i]
        if (last != "") print "model " last
      }
    }' "$R/proc/cpuinfo" 2>/dev/null)
  prev_model= prev_json=
  while IFS=' ' read -r kind val; do
    case $kind in
      count) proc_count=$val ;;
      physical) proc_phys=$val ;;
      speed) proc_speed=$val ;;
      cores) proc_cores=$val ;;
      threads) proc_threads=$val ;;
      model)
        if [ "$val" != "$prev_model" ] || [ -z "$prev_json" ]; then
          prev_model=$val
          json_set "$val"
          prev_json=$JS
        fi
        proc_models="$proc_models,$prev_json"
        ;;
    esac
  done <<CPU
$cpu_out
CPU
fi
[ "$proc_count" = 0 ] && proc_count=
if [ -z "$proc_count" ] && [ -z "$R" ]; then
  proc_count=$(getconf _NPROCESSORS_ONLN 2>/dev/null) || proc_count=
fi
if [ -z "$proc_phys" ] && [ -d "$R/sys/devices/system/cpu" ]; then
  proc_phys=$(cat "$R"/sys/devices/system/cpu/cpu[0-9]*/topology/physical_package_id 2>/dev/null |
    sort -u | awk 'END { if (NR > 0) print NR }')
fi

# -------------------------------------------------------------- networking
# Records gathered from whichever sources exist:
#   L IFACE MTU MAC               (link; "-" for unknown)
#   A IFACE 4 ADDR PREFIX|NETMASK (IPv4 address)
#   A IFACE 6 ADDR PREFIX         (IPv6 address; ADDR may be 32 hex digits)
links= addrs4= addrs6=
have_ip=false
if [ -z "$R" ] && have ip && ip -o link show >/dev/null 2>&1; then have_ip=true; fi

if [ -d "$R/sys/class/net" ]; then
  for d in "$R"/sys/class/net/*; do
    [ -e "$d" ] || continue
    read_line "$d/mtu"
    mtu=$RL
    read_line "$d/address"
    mac=$RL
    links="$links
L ${d##*/} ${mtu:--} ${mac:--}"
  done
elif $have_ip; then
  links=$(ip -o link show 2>/dev/null | awk '{
    name = $2; sub(/:$/, "", name); sub(/@.*/, "", name); mtu = "-"; mac = "-"
    for (i = 3; i < NF; i++) {
      if ($i == "mtu") mtu = $(i + 1)
      if ($i ~ /^link\//) mac = $(i + 1)
    }
    print "L", name, mtu, mac
  }')
fi

if $have_ip; then
  addrs4=$(ip -o addr show 2>/dev/null | awk '{
    name = $2; sub(/:$/, "", name); sub(/@.*/, "", name)
    for (i = 3; i < NF; i++) {
      if ($i == "inet" || $i == "inet6") {
        n = split($(i + 1), a, "/")
        print "A", name, ($i == "inet" ? 4 : 6), a[1], (n > 1 ? a[2] : ($i == "inet" ? 32 : 128))
      }
    }
  }')
elif [ -z "$R" ] && have ifconfig; then
  # net-tools ("inet 1.2.3.4  netmask 255.0.0.0", "ether MAC", "mtu N") and
  # busybox/old net-tools ("inet addr:1.2.3.4  Mask:255.0.0.0", "HWaddr MAC",
  # "MTU:N", "inet6 addr: fe80::1/64 Scope:Link").
  ifc=$(ifconfig -a 2>/dev/null | awk '
    /^[^ \t]/ { name = $1; sub(/:$/, "", name); names[++nn] = name }
    name == "" { next }
    {
      for (i = 1; i <= NF; i++) {
        if ($i == "HWaddr" || $i == "ether") mac[name] = $(i + 1)
        else if ($i == "mtu") mtu[name] = $(i + 1)
        else if ($i ~ /^MTU:/) mtu[name] = substr($i, 5)
        else if ($i == "inet") {
          a = $(i + 1); sub(/^addr:/, "", a); m = ""
          for (j = i + 2; j <= NF; j++) {
            if ($j == "netmask") m = $(j + 1)
            else if ($j ~ /^Mask:/) m = substr($j, 6)
          }
          print "A", name, 4, a, (m == "" ? 32 : m)
        } else if ($i == "inet6") {
          a = $(i + 1); if (a == "addr:") a = $(i + 2)
          p = ""
          if (split(a, parts, "/") > 1) { a = parts[1]; p = parts[2] }
          for (j = i + 2; j <= NF; j++) if ($j == "prefixlen") p = $(j + 1)
          print "A", name, 6, a, (p == "" ? 128 : p)
        }
      }
    }
    END { for (k = 1; k <= nn; k++) print "L", names[k], (names[k] in mtu ? mtu[names[k]] : "-"), (names[k] in mac ? mac[names[k]] : "-") }')
  addrs4=$(printf '%s\n' "$ifc" | grep '^A ')
  [ -n "$links" ] || links=$(printf '%s\n' "$ifc" | grep '^L ')
fi

# IPv6: /proc/net/if_inet6 is authoritative when present.
if [ -r "$R/proc/net/if_inet6" ]; then
  addrs6=$(awk 'NF >= 6 { print "A", $6, 6, $1, $3 }' "$R/proc/net/if_inet6")
  # if_inet6 prefixes are hex; drop IPv6 records from the other sources.
  addrs4=$(printf '%s\n' "$addrs4" | awk '$3 == 4')
fi

# net_calc: turn A records into
#   B IFACE FAMILY ADDRESS NETMASK NETWORK SCOPE
# with canonical (RFC 5952) IPv6 text; if_inet6 prefixes arrive in hex.
net_records=$(printf '%s\n%s\n' "$addrs4" "$addrs6" | awk '
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
  $1 != "A" || NF < 5 { next }
  $3 == 4 {
    if (!isv4($4)) next
    p = index($5, ".") ? mask2prefix($5) : $5 + 0
    if (p < 0 || p > 32) next
    print "B", $2, 4, $4, v4calc($4, p), "-"
    next
  }
  $3 == 6 {
    if (!v6parse($4, g)) next
    p = $5
    if (length($4) == 32 && $4 !~ /:/) p = hexval(p)
    p = p + 0
    if (p < 0 || p > 128) next
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
    print "B", $2, 6, v6fmt(g), v6fmt(m), v6fmt(nw), scope
  }')

# Interface names: links first, then any name only seen in an address.
ifnames=$(printf '%s\n%s\n' "$links" "$net_records" | awk '
  ($1 == "L" || $1 == "B") && !($2 in seen) { seen[$2] = 1; print $2 }')

# Primary interface: the IPv4 default route, then the IPv6 one.
primary=
if [ -r "$R/proc/net/route" ]; then
  primary=$(awk 'NR > 1 && $2 == "00000000" && $8 == "00000000" { print $1; exit }' "$R/proc/net/route")
fi
if [ -z "$primary" ] && [ -r "$R/proc/net/ipv6_route" ]; then
  primary=$(awk '$1 == "00000000000000000000000000000000" && $2 == "00" && $NF != "lo" { print $NF; exit }' "$R/proc/net/ipv6_route")
fi
if [ -z "$primary" ] && $have_ip; then
  primary=$(ip route show default 2>/dev/null | awk '{ for (i = 1; i < NF; i++) if ($i == "dev") { print $(i + 1); exit } }')
fi

ifaces_json=
first_with_ip=
p_ip= p_ip6= p_mac= p_mtu= p_mask= p_net= p_mask6= p_net6= p_scope6=
for ifn in $ifnames; do
  mtu= mac=
  b4= b6= ip4= ip6= mask4= net4= mask6= net6= scope6= ip6_link= ip6_link_mask= ip6_link_net=
  while read -r kind n f a b c d; do
    [ "$n" = "$ifn" ] || continue
    case $kind in
      L)
        [ "$f" = - ] || mtu=$f
        case $a in - | 00:00:00:00:00:00) ;; *) mac=$a ;; esac
        ;;
      B)
        if [ "$f" = 4 ]; then
          JM=
          jm_s address "$a"; jm_s netmask "$b"; jm_s network "$c"
          b4="$b4,{${JM#,}}"
          if [ -z "$ip4" ]; then ip4=$a mask4=$b net4=$c; fi
        else
          JM=
          jm_s address "$a"; jm_s netmask "$b"; jm_s network "$c"; jm_s scope6 "$d"
          b6="$b6,{${JM#,}}"
          if [ "$d" = link ] || [ "$d" = host ]; then
            if [ -z "$ip6_link" ]; then ip6_link=$a ip6_link_mask=$b ip6_link_net=$c ip6_link_scope=$d; fi
          elif [ -z "$ip6" ]; then
            ip6=$a mask6=$b net6=$c scope6=$d
          fi
        fi
        ;;
    esac
  done <<NET
$links
$net_records
NET
  if [ -z "$ip6" ] && [ -n "$ip6_link" ]; then
    ip6=$ip6_link mask6=$ip6_link_mask net6=$ip6_link_net scope6=$ip6_link_scope
  fi
  JM=
  [ -n "$b4" ] && jm_r bindings "[${b4#,}]"
  [ -n "$b6" ] && jm_r bindings6 "[${b6#,}]"
  jm_s ip "$ip4"; jm_s ip6 "$ip6"; jm_s mac "$mac"; jm_n mtu "$mtu"
  jm_s netmask "$mask4"; jm_s netmask6 "$mask6"; jm_s network "$net4"
  jm_s network6 "$net6"; jm_s scope6 "$scope6"
  iface_obj="{${JM#,}}"
  JM=$ifaces_json
  jm_r "$ifn" "$iface_obj"
  ifaces_json=$JM
  if [ "$ifn" = "$primary" ] || { [ -z "$primary" ] && [ -z "$first_with_ip" ] && [ "$ifn" != lo ] && [ -n "$ip4$ip6" ]; }; then
    first_with_ip=$ifn
    p_ip=$ip4 p_ip6=$ip6 p_mac=$mac p_mtu=$mtu p_mask=$mask4 p_net=$net4 p_mask6=$mask6 p_net6=$net6 p_scope6=$scope6
  fi
done
[ -n "$primary" ] || primary=$first_with_ip

JM=
jm_s hostname "$host"; jm_s domain "$domain"; jm_s fqdn "$fqdn"
jm_s ip "$p_ip"; jm_s ip6 "$p_ip6"; jm_s mac "$p_mac"; jm_n mtu "$p_mtu"
jm_s netmask "$p_mask"; jm_s netmask6 "$p_mask6"; jm_s network "$p_net"
jm_s network6 "$p_net6"; jm_s scope6 "$p_scope6"; jm_s primary "$primary"
[ -n "$ifaces_json" ] && jm_r interfaces "{${ifaces_json#,}}"
net_m=$JM

# ---------------------------------------------------------------- identity
JM=
# One id for the four: "uid=0(root) gid=0(root) groups=...".
# A user or group without a name has no "(name)" after its number.
if ids=$(LC_ALL=C id 2>/dev/null) && [ "${ids#uid=}" != "$ids" ]; then
  uid=${ids#uid=}; uid=${uid%%[!0-9]*}
  user=${ids#uid=$uid}; case $user in \(*) user=${user#\(}; user=${user%%\)*} ;; *) user= ;; esac
  gid=${ids#* gid=}; gid=${gid%%[!0-9]*}
  group=${ids#* gid=$gid}; case $group in \(*) group=${group#\(}; group=${group%%\)*} ;; *) group= ;; esac
  jm_s user "$user"; jm_n uid "$uid"
  jm_s group "$group"; jm_n gid "$gid"
  if [ "$uid" = 0 ]; then jm_b privileged true; else jm_b privileged false; fi
fi
id_m=$JM

# ------------------------------------------------------------------ uptime
JM=
read_line "$R/proc/uptime"
up=${RL%%[. ]*}
case $up in
  '' | *[!0-9]*) ;;
  *) jm_n seconds "$up"; jm_n hours "$((up / 3600))"; jm_n days "$((up / 86400))" ;;
esac
up_m=$JM

# ------------------------------------------------------------------ output
JM=
jm_s full "$rel_full"; jm_s major "$rel_major"; jm_s minor "$rel_minor"
rel_m=$JM
JM=
jm_s codename "$os_codename"; jm_s description "$os_pretty"; jm_s id "$os_name"
[ -n "$JM" ] && jm_r release "{${rel_m#,}}"
distro_m=$JM
JM=
jm_s name "$os_name"; jm_s family "$os_family"
[ -n "$rel_m" ] && jm_r release "{${rel_m#,}}"
[ -n "$os_id" ] && jm_r distro "{${distro_m#,}}"
jm_s architecture "$arch"; jm_s hardware "$hardware"
os_m=$JM

JM=
jm_r system "$mem_system"; jm_r swap "$mem_swap"
mem_m=$JM

JM=
jm_n count "$proc_count"; jm_n physicalcount "$proc_phys"
[ -n "$proc_models" ] && jm_r models "[${proc_models#,}]"
jm_s speed "$proc_speed"; jm_n cores "$proc_cores"; jm_n threads "$proc_threads"
jm_s isa "$hardware"
proc_m=$JM

JM=
[ -n "$os_m" ] && jm_r os "{${os_m#,}}"
jm_s kernel "$kernel"; jm_s kernelrelease "$kernelrelease"
jm_s kernelversion "$kernelversion"; jm_s kernelmajversion "$kernelmajversion"
jm_s architecture "$arch"; jm_s hardwaremodel "$hardware"
jm_s hostname "$host"; jm_s domain "$domain"; jm_s fqdn "$fqdn"
[ -n "$net_m" ] && jm_r networking "{${net_m#,}}"
[ -n "$mem_m" ] && jm_r memory "{${mem_m#,}}"
[ -n "$proc_m" ] && jm_r processors "{${proc_m#,}}"
[ -n "$id_m" ] && jm_r identity "{${id_m#,}}"
[ -n "$up_m" ] && jm_r system_uptime "{${up_m#,}}"
jm_s timezone "$(date +%Z 2>/dev/null)"
printf '{%s}\n' "${JM#,}"
