#!/bin/sh
# ferry::resources - describe the current state of resources the way
# Puppet's resource indirection (`puppet resource`) does, without Puppet on
# the target. The plan function get_resources runs it.
#
# Parameters arrive as PT_resources: a JSON array of strings, each a type
# (`user`, `Package`: every instance) or an instance (`File[/etc/hosts]`,
# `Service[ssh]`). Types: user (useradd), group (groupadd), package (dpkg,
# rpm or apk), service (systemd, OpenRC or SysV init scripts), file (one
# path only; listing every file is refused, as Puppet refuses it).
# Result: {"resources": [{"type", "title", "tags", "exported", "kind",
# "parameters"}...]}, Puppet's shape. Password hashes are left out.

LC_ALL=C
export LC_ALL
SYSTEMD_PAGER=
export SYSTEMD_PAGER

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

# The resources, one a line, from the JSON array of strings.
list=$(printf '%s' "${PT_resources:-}" | LC_ALL=C awk '
  { text = text $0 "\n" }
  END {
    n = length(text); i = 1; out = ""
    while (i <= n && substr(text, i, 1) ~ /[ \t\n\r]/) i++
    if (substr(text, i, 1) != "[") exit 2
    i++
    while (1) {
      while (i <= n && substr(text, i, 1) ~ /[ \t\n\r,]/) i++
      c = substr(text, i, 1)
      if (c == "]") break
      if (c != "\"") exit 2
      i++; s = ""
      while (1) {
        if (i > n) exit 2
        c = substr(text, i, 1)
        if (c == "\"") { i++; break }
        if (c == "\\") {
          i++; e = substr(text, i, 1)
          if (e == "n" || e == "r" || e == "u") exit 3
          if (e == "t") s = s "\t"; else s = s e
        } else s = s c
        i++
      }
      print s
    }
  }') || ferry_fail invalid-parameter "resources must be an array of resource types or instances (e.g. [\"user\", \"File[/etc/hosts]\"])"

OUT=

# emit TYPE TITLE: append a resource with the parameters in JM.
emit() {
  _params=$JM
  _tags=$(printf '%s' "$1" | tr '[:upper:]' '[:lower:]')
  json_set "$_tags"; _tl=$JS
  case $2 in
    '' | [!A-Za-z0-9_]* | *[!A-Za-z0-9_.:-]*) ;;
    *) json_set "$(printf '%s' "$2" | tr '[:upper:]' '[:lower:]')"; _tl="$_tl,$JS" ;;
  esac
  JM=; jm_s type "$1"; jm_r title "$(json_str "$2")"; jm_r tags "[$_tl]"
  jm_b exported false; jm_s kind compilable_type; jm_r parameters "{${_params#,}}"
  OUT="$OUT,{${JM#,}}"
}

# num KEY VALUE: an integer member, or -1 when VALUE is empty (shadow's
# unset fields, as Puppet shows them).
num() {
  if [ -z "$2" ]; then jm_r "$1" -1; else jm_n "$1" "$2"; fi
}

# ------------------------------------------------------------------- user
user_emit() { # passwd line
  set -f; _ifs=$IFS; IFS=:; set -- $1; IFS=$_ifs
  _n=$1
  JM=; jm_s ensure present; jm_s home "$6"; jm_n uid "$3"; jm_n gid "$4"
  json_set "$5"; jm_r comment "$JS"; jm_s shell "$7"
  _sp=$(getent shadow "$_n" 2>/dev/null) || _sp=
  if [ -n "$_sp" ]; then
    IFS=:; set -- $_sp; IFS=$_ifs
    num password_min_age "$4"; num password_max_age "$5"; num password_warn_days "$6"
    _exp=$8
  else
    _exp=
  fi
  _gl=
  for _g in $(getent group | awk -F: -v u="$_n" '{ n = split($4, m, ","); for (i = 1; i <= n; i++) if (m[i] == u) { print $1; break } }'); do
    json_set "$_g"; _gl="$_gl,$JS"
  done
  set +f
  jm_r groups "[${_gl#,}]"
  if [ -n "$_exp" ] && _d=$(date -u -d "@$((_exp * 86400))" +%Y-%m-%d 2>/dev/null); then
    jm_s expiry "$_d"
  else
    jm_s expiry absent
  fi
  jm_s provider useradd
  for _m in membership role_membership auth_membership profile_membership key_membership attribute_membership; do
    jm_s "$_m" minimum
  done
  jm_r purge_ssh_keys "[]"; jm_s loglevel notice
  emit User "$_n"
}
user_one() {
  if _l=$(getent passwd "$1" 2>/dev/null) && [ -n "$_l" ]; then
    user_emit "$_l"
  else
    JM=
    for _p in ensure home uid gid comment shell password_min_age password_max_age password_warn_days groups expiry; do
      jm_s "$_p" absent
    done
    jm_s provider useradd
    jm_r audit '["ensure","home","uid","gid","comment","shell","password","password_min_age","password_max_age","password_warn_days","groups","expiry","roles","auths","profiles","keys","project","attributes","salt","iterations","loginclass"]'
    for _m in membership role_membership auth_membership profile_membership key_membership attribute_membership; do
      jm_s "$_m" minimum
    done
    jm_r purge_ssh_keys "[]"; jm_s loglevel notice
    emit User "$1"
  fi
}
user_all() {
  getent passwd > "$tmp/passwd" || return 0
  while IFS= read -r _l; do user_emit "$_l"; done < "$tmp/passwd"
}

# ------------------------------------------------------------------ group
group_emit() { # group line
  set -f; _ifs=$IFS; IFS=:; set -- $1; IFS=$_ifs; set +f
  JM=; jm_s ensure present; jm_n gid "$3"; jm_s provider groupadd
  jm_s attribute_membership minimum; jm_s loglevel notice
  emit Group "$1"
}
group_one() {
  if _l=$(getent group "$1" 2>/dev/null) && [ -n "$_l" ]; then
    group_emit "$_l"
  else
    JM=; jm_s ensure absent; jm_s gid absent; jm_s provider groupadd
    jm_r audit '["ensure","gid","members","attributes"]'
    jm_s attribute_membership minimum; jm_s loglevel notice
    emit Group "$1"
  fi
}
group_all() {
  getent group > "$tmp/group" || return 0
  while IFS= read -r _l; do group_emit "$_l"; done < "$tmp/group"
}

# ---------------------------------------------------------------- package
pkg_provider=
if have dpkg-query; then pkg_provider=apt
elif have rpm; then if have dnf; then pkg_provider=dnf; else pkg_provider=yum; fi
elif have apk; then pkg_provider=apk
fi

# pkg_emit NAME ENSURE MARK
pkg_emit() {
  JM=; jm_s ensure "$2"
  if [ "$pkg_provider" = apt ]; then
    if [ -n "$3" ]; then jm_s mark "$3"; else jm_r mark null; fi
  fi
  jm_s provider "$pkg_provider"
  case $2 in
    purged | absent)
      if [ "$pkg_provider" = apt ]; then
        jm_r audit '["ensure","package_settings","flavor","mark"]'
      else
        jm_r audit '["ensure","package_settings","flavor"]'
      fi
      ;;
  esac
  jm_s configfiles keep; jm_s reinstall_on_refresh false; jm_s loglevel notice
  emit Package "$1"
}
# dpkg_line: "desired error status name version" as dpkg-query prints it.
dpkg_emit() {
  set -f; set -- $1; set +f
  [ $# -ge 4 ] || return 0
  _mark=none; [ "$1" = hold ] && _mark=hold
  case $3 in
    not-installed) pkg_emit "$4" purged "$_mark" ;;
    config-files | half-installed | unpacked | half-configured) pkg_emit "$4" absent "$_mark" ;;
    *) pkg_emit "$4" "${5:-absent}" "$_mark" ;;
  esac
}
package_one() {
  case $pkg_provider in
    apt)
      if _l=$(dpkg-query -W --showformat '${Status} ${Package} ${Version}\n' -- "$1" 2>/dev/null) && [ -n "$_l" ]; then
        dpkg_emit "$(printf '%s\n' "$_l" | head -n 1)"
      else
        pkg_emit "$1" purged ""
      fi
      ;;
    dnf | yum)
      if _v=$(rpm -q --qf '%|EPOCH?{%{EPOCH}:}:{}|%{VERSION}-%{RELEASE}\n' -- "$1" 2>/dev/null); then
        pkg_emit "$1" "$(printf '%s\n' "$_v" | head -n 1)" ""
      else
        pkg_emit "$1" purged ""
      fi
      ;;
    apk)
      if _v=$(apk info -e -v -- "$1" 2>/dev/null) && [ -n "$_v" ]; then
        _v=${_v#"$1"-}; pkg_emit "$1" "$_v" ""
      else
        pkg_emit "$1" absent ""
      fi
      ;;
    *) ferry_fail resources-unsupported "no supported package manager found (dpkg, rpm, apk)" ;;
  esac
}
package_all() {
  case $pkg_provider in
    apt)
      dpkg-query -W --showformat '${Status} ${Package} ${Version}\n' > "$tmp/pkgs" 2>/dev/null || :
      while IFS= read -r _l; do dpkg_emit "$_l"; done < "$tmp/pkgs"
      ;;
    dnf | yum)
      rpm -qa --qf '%{NAME} %|EPOCH?{%{EPOCH}:}:{}|%{VERSION}-%{RELEASE}\n' | sort -u > "$tmp/pkgs" 2>/dev/null || :
      while read -r _n _v; do pkg_emit "$_n" "$_v" ""; done < "$tmp/pkgs"
      ;;
    apk)
      apk info -v 2>/dev/null | sort > "$tmp/pkgs" || :
      while read -r _l; do
        _v=${_l#"${_l%-*-*}"-}; pkg_emit "${_l%-*-*}" "$_v" ""
      done < "$tmp/pkgs"
      ;;
    *) ferry_fail resources-unsupported "no supported package manager found (dpkg, rpm, apk)" ;;
  esac
}

# ---------------------------------------------------------------- service
manager=
if have systemctl && [ -d /run/systemd/system ]; then manager=systemd
elif have rc-service && { [ -d /run/openrc ] || [ -x /sbin/openrc ]; }; then manager=openrc
elif [ -d /etc/init.d ]; then manager=sysv
fi
svc_provider=$manager
if [ "$manager" = sysv ]; then
  if [ -f /etc/debian_version ]; then svc_provider=debian; else svc_provider=redhat; fi
fi

# service_emit NAME EXISTS(true|false)
service_emit() {
  _ens=stopped; _en=false
  case $manager in
    systemd)
      case $(systemctl is-active -- "$1" 2>/dev/null) in active | reloading) _ens=running ;; esac
      case $(systemctl is-enabled -- "$1" 2>/dev/null) in
        enabled | enabled-runtime | alias | generated | static | indirect) _en=true ;;
        masked | masked-runtime) _en=mask ;;
      esac
      ;;
    openrc)
      if $2 && rc-service "$1" status >/dev/null 2>&1 </dev/null; then _ens=running; fi
      for _f in /etc/runlevels/*/"$1"; do
        if [ -e "$_f" ] || [ -L "$_f" ]; then _en=true; fi
      done
      ;;
    sysv)
      if $2 && "/etc/init.d/$1" status >/dev/null 2>&1 </dev/null; then _ens=running; fi
      for _f in /etc/rc[2345].d/S[0-9][0-9]"$1" /etc/rc.d/rc[2345].d/S[0-9][0-9]"$1"; do
        if [ -e "$_f" ] || [ -L "$_f" ]; then _en=true; fi
      done
      ;;
  esac
  JM=; jm_s ensure "$_ens"; jm_s enable "$_en"; jm_s provider "$svc_provider"
  $2 || jm_r audit '["ensure","enable","logonaccount","flags"]'
  jm_s hasstatus true
  case $manager in
    sysv | openrc)
      jm_r path '["/etc/init.d"]'
      json_set "$1"; jm_r pattern "$JS"
      ;;
  esac
  jm_s loglevel notice
  emit Service "$1"
}
service_one() {
  _ex=false
  case $manager in
    systemd)
      case $(systemctl show -p LoadState -- "$1" 2>/dev/null) in
        LoadState=not-found | '') ;;
        *) _ex=true ;;
      esac
      ;;
    openrc | sysv)
      case $1 in */*) ;; *) [ -f "/etc/init.d/$1" ] && _ex=true ;; esac
      ;;
    *) ferry_fail resources-unsupported "no supported service manager found (systemd, openrc, sysv init scripts)" ;;
  esac
  service_emit "$1" "$_ex"
}
service_all() {
  case $manager in
    systemd)
      systemctl list-unit-files --type=service --no-legend --no-pager 2>/dev/null |
        awk '{ n = $1; sub(/\.service$/, "", n); if (n !~ /@$/) print n }' | sort -u > "$tmp/svcs"
      ;;
    openrc | sysv)
      for _f in /etc/init.d/*; do
        [ -f "$_f" ] && [ -x "$_f" ] || continue
        # Puppet's init provider leaves these out.
        case ${_f##*/} in
          .* | functions.sh | reboot.sh | shutdown.sh | functions | halt | killall | single | linuxconf | reboot | boot | wait-for-state | portmap-wait | rcS | module-init-tools | plymouth-ready | idmapd-mounting | startpar-bridge | cryptdisks-udev | statd-mounting | gssd-mounting) continue ;;
        esac
        printf '%s\n' "${_f##*/}"
      done > "$tmp/svcs"
      ;;
    *) ferry_fail resources-unsupported "no supported service manager found (systemd, openrc, sysv init scripts)" ;;
  esac
  while IFS= read -r _s; do service_emit "$_s" true; done < "$tmp/svcs"
}

# ------------------------------------------------------------------- file
file_one() {
  JM=
  if [ -L "$1" ]; then _t=link
  elif [ -d "$1" ]; then _t=directory
  elif [ -e "$1" ]; then _t=file
  else _t=absent
  fi
  _file_tail='jm_s provider posix
    jm_r audit "[\"ensure\",\"content\",\"checksum_value\",\"target\",\"owner\",\"group\",\"mode\",\"type\",\"seluser\",\"selrole\",\"seltype\",\"selrange\",\"ctime\",\"mtime\"]"
    jm_n max_files 0; jm_b replace true; jm_s links manage; jm_b purge false
    jm_s sourceselect first; jm_b show_diff true; jm_s validate_replacement %
    jm_s checksum sha256; jm_s source_permissions ignore
    jm_s selinux_ignore_defaults false; jm_s loglevel notice'
  if [ $_t = absent ]; then
    for _p in ensure content checksum_value target owner group mode type seluser selrole seltype selrange ctime mtime; do
      jm_s "$_p" absent
    done
    eval "$_file_tail"
    emit File "$1"
    return
  fi
  # stat: uid, gid, octal mode, ctime and mtime in seconds (the link itself).
  set -- "$1" $(stat -c '%u %g %a %Z %Y' -- "$1" 2>/dev/null)
  jm_s ensure "$_t"
  if [ $_t = file ]; then
    _sum=$(sha256sum < "$1" 2>/dev/null) && jm_s content "{sha256}${_sum%% *}" || jm_r content null
  else
    jm_r content null
  fi
  jm_r checksum_value null
  [ $_t = link ] && jm_s target "$(readlink -- "$1")"
  jm_n owner "$2"; jm_n group "$3"
  _mode=$4; while [ ${#_mode} -lt 4 ]; do _mode=0$_mode; done
  jm_s mode "$_mode"; jm_s type "$_t"
  for _p in seluser selrole seltype selrange; do jm_r "$_p" null; done
  jm_s ctime "$(date -u -d "@$5" '+%Y-%m-%d %H:%M:%S +0000' 2>/dev/null)"
  jm_s mtime "$(date -u -d "@$6" '+%Y-%m-%d %H:%M:%S +0000' 2>/dev/null)"
  eval "$_file_tail"
  emit File "$1"
}

tmp=$(mktemp -d) || ferry_fail resources-error "cannot make a temporary directory"
trap 'rm -rf "$tmp"' EXIT

printf '%s\n' "$list" > "$tmp/list"
while IFS= read -r _r; do
  [ -n "$_r" ] || continue
  case $_r in
    *\[*\]) _type=${_r%%\[*}; _title=${_r#*\[}; _title=${_title%\]} ;;
    *) _type=$_r; _title= ;;
  esac
  _type=$(printf '%s' "$_type" | tr '[:upper:]' '[:lower:]')
  case $_type:$_title in
    user:) user_all ;;
    user:*) user_one "$_title" ;;
    group:) group_all ;;
    group:*) group_one "$_title" ;;
    package:) package_all ;;
    package:*) package_one "$_title" ;;
    service:) service_all ;;
    service:*) service_one "$_title" ;;
    file:) ferry_fail resources-unsupported "Listing all file instances is not supported. Please specify a file or directory, e.g. File[/etc]" ;;
    file:*) file_one "$_title" ;;
    *)
      JM=; jm_s resource "$_r"
      ferry_fail resources-unsupported "ferry cannot describe resources of type $_type (it describes user, group, package, service and file)" "$JM"
      ;;
  esac
done < "$tmp/list"

printf '{"resources":[%s]}\n' "${OUT#,}"
