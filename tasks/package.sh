#!/bin/sh
# ferry::package - install, uninstall, upgrade or query one package with the
# target's native package manager (apt, dnf, yum, zypper or apk).
#
# Parameters arrive as PT_action, PT_name, PT_version and PT__noop (the
# runner also sends them as JSON on stdin; this task reads the environment).
# Result: {"status", "version"?, "old_version"?, "changed", "provider",
# "noop"?, "would"?}. In noop mode nothing is changed: status/version describe
# the current state, "changed" tells whether a real run would change
# something and "would" names the operation it would perform.

LC_ALL=C
export LC_ALL
# Package managers must never prompt.
DEBIAN_FRONTEND=noninteractive
export DEBIAN_FRONTEND

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

action=${PT_action:-}
name=${PT_name:-}
version=${PT_version:-}
noop=false
case ${PT__noop:-} in true | '"true"') noop=true ;; esac

# ------------------------------------------------------------- validation
# Parameters are only ever passed as single arguments, never evaluated; the
# character checks below additionally keep option injection ("-x") and shell
# metacharacters out of package manager command lines.
case $action in
  install | uninstall | upgrade | status) ;;
  *)
    JM=; jm_s parameter action; jm_s value "$action"
    ferry_fail invalid-parameter "action must be one of install, uninstall, upgrade, status" "$JM"
    ;;
esac
valid_token() {
  case $1 in
    '' | [!A-Za-z0-9]* | *[!A-Za-z0-9.+_:~-]*) return 1 ;;
  esac
  [ "${#1}" -le 200 ]
}
if ! valid_token "$name"; then
  JM=; jm_s parameter name; jm_s value "$name"
  ferry_fail invalid-parameter "invalid package name: only letters, digits and . + - _ : ~ are allowed, starting with a letter or digit" "$JM"
fi
if [ -n "$version" ] && ! valid_token "$version"; then
  JM=; jm_s parameter version; jm_s value "$version"
  ferry_fail invalid-parameter "invalid package version: only letters, digits and . + - _ : ~ are allowed, starting with a letter or digit" "$JM"
fi

# ---------------------------------------------------------------- provider
provider=
if have apt-get && have dpkg-query; then provider=apt
elif have apk; then provider=apk
elif have dnf; then provider=dnf
elif have yum; then provider=yum
elif have zypper; then provider=zypper
fi
if [ -z "$provider" ]; then
  ferry_fail package-no-provider "no supported package manager found (apt, dnf, yum, zypper, apk)"
fi

# run CMD...: run a package manager command, keeping its output (also copied
# to stderr) in RUN_OUT and its exit status in RUN_RC.
run() {
  RUN_OUT=$("$@" </dev/null 2>&1)
  RUN_RC=$?
  [ -z "$RUN_OUT" ] || printf '%s\n' "$RUN_OUT" >&2
  return $RUN_RC
}

# fail_cmd KIND MSG: fail with the last command's status and output tail.
fail_cmd() {
  JM=; jm_s name "$name"; jm_s provider "$provider"; jm_n exit_code "$RUN_RC"
  jm_s output "$(printf '%s\n' "$RUN_OUT" | tail -n 20)"
  ferry_fail "$1" "$2" "$JM"
}

# installed_version: set CUR to the installed version ("" when absent).
installed_version() {
  CUR=
  case $provider in
    apt)
      _st=$(dpkg-query -W -f='${db:Status-Abbrev}|${Version}\n' "$name" 2>/dev/null | head -n 1)
      case $_st in ii*'|'* | hi*'|'* | iU*'|'* | iF*'|'*) CUR=${_st#*|} ;; esac
      ;;
    apk)
      # The installed database: "P:<name>" then "V:<version>" per package.
      CUR=$(awk -v n="$name" '/^P:/ { p = substr($0, 3) } /^V:/ && p == n { print substr($0, 3); exit }' \
        /lib/apk/db/installed 2>/dev/null)
      ;;
    dnf | yum | zypper)
      CUR=$(rpm -q --qf '%{EPOCH}:%{VERSION}-%{RELEASE}\n' "$name" 2>/dev/null | tail -n 1)
      case $CUR in
        *' '* | '') CUR= ;; # "package x is not installed"
        '(none):'*) CUR=${CUR#'(none):'} ;;
      esac
      ;;
  esac
}

# candidate_version: set CAND to the version an install/upgrade would pick
# ("" when unknown). Best effort: only used for reporting.
candidate_version() {
  CAND=
  case $provider in
    apt)
      CAND=$(apt-cache policy "$name" 2>/dev/null | awk '$1 == "Candidate:" { print $2; exit }')
      [ "$CAND" = "(none)" ] && CAND=
      ;;
    apk)
      CAND=$(apk policy "$name" 2>/dev/null | awk 'NR == 2 { v = $1; sub(/:$/, "", v); print v; exit }')
      ;;
    dnf | yum)
      CAND=$($provider -q list available "$name" 2>/dev/null | awk -v n="$name" 'index($1, n ".") == 1 { v = $2 } END { print v }')
      ;;
    zypper)
      CAND=$(zypper -n --no-refresh info "$name" 2>/dev/null | awk -F': *' '$1 ~ /^Version/ { print $2; exit }')
      ;;
  esac
}

# version_matches INSTALLED WANTED: WANTED is the installed version, possibly
# without the epoch or the rpm release.
version_matches() {
  [ -n "$2" ] || return 0
  case $1 in
    "$2" | *:"$2" | "$2"-* | *:"$2"-*) return 0 ;;
  esac
  return 1
}

# target SEP: the name, or name<SEP>version when a version was asked for.
target() {
  if [ -n "$version" ]; then printf '%s%s%s' "$name" "$1" "$version"; else printf '%s' "$name"; fi
}

do_install() { # $1: install|upgrade
  case $provider in
    apt)
      # A fresh host may have no package lists yet: refresh them once when
      # apt knows no candidate for the package.
      candidate_version
      if [ -z "$CAND" ]; then run apt-get update -q; fi
      set -- apt-get install -y -q -o Dpkg::Options::=--force-confdef \
        -o Dpkg::Options::=--force-confold -o DPkg::Lock::Timeout=120 --allow-downgrades
      [ "$mode" = upgrade ] && [ -n "$CUR" ] && set -- "$@" --only-upgrade
      run "$@" "$(target =)"
      ;;
    apk)
      if [ "$mode" = upgrade ]; then run apk add --no-progress --upgrade "$(target =)"
      else run apk add --no-progress "$(target =)"; fi
      ;;
    dnf | yum)
      if [ "$mode" = upgrade ] && [ -n "$CUR" ] && [ -z "$version" ]; then run "$provider" -y upgrade "$name"
      else run "$provider" -y install "$(target -)"; fi
      ;;
    zypper)
      if [ "$mode" = upgrade ] && [ -n "$CUR" ] && [ -z "$version" ]; then run zypper -n update "$name"
      else run zypper -n install "$(target =)"; fi
      ;;
  esac
}

do_uninstall() {
  case $provider in
    apt) run apt-get remove -y -q -o DPkg::Lock::Timeout=120 "$name" ;;
    apk) run apk del --no-progress "$name" ;;
    dnf | yum) run "$provider" -y remove "$name" ;;
    zypper) run zypper -n remove "$name" ;;
  esac
}

# result STATUS VERSION OLD_VERSION CHANGED [WOULD]
result() {
  JM=
  jm_s status "$1"; jm_s version "$2"; jm_s old_version "$3"; jm_b changed "$4"
  jm_s provider "$provider"
  if $noop; then
    jm_b noop true; jm_s would "${5:-}"
    case ${5:-} in
      install | upgrade)
        if [ -n "$version" ]; then CAND=$version; else candidate_version; fi
        jm_s candidate_version "$CAND"
        ;;
    esac
  fi
  printf '{%s}\n' "${JM#,}"
  exit 0
}

# ------------------------------------------------------------------ action
installed_version
old=$CUR
mode=$action

case $action in
  status)
    if [ -n "$old" ]; then result installed "$old" "" false; fi
    result absent "" "" false
    ;;
  install | upgrade)
    if [ -n "$old" ]; then
      if [ "$action" = install ] && version_matches "$old" "$version"; then
        result installed "$old" "" false
      fi
      if [ "$action" = upgrade ]; then
        candidate_version
        if [ -n "$version" ] && version_matches "$old" "$version"; then
          result installed "$old" "" false
        fi
        if [ -z "$version" ] && [ -n "$CAND" ] && version_matches "$old" "$CAND"; then
          result installed "$old" "" false
        fi
      fi
    fi
    if $noop; then
      if [ -n "$old" ]; then result installed "$old" "" true "$action"; fi
      result absent "" "" true install
    fi
    if ! do_install; then
      fail_cmd package-install-failed "$provider could not $action $name"
    fi
    installed_version
    if [ -z "$CUR" ]; then
      fail_cmd package-install-failed "$provider reported success but $name is not installed"
    fi
    if [ "$CUR" = "$old" ]; then result installed "$CUR" "" false; fi
    result installed "$CUR" "$old" true
    ;;
  uninstall)
    if [ -z "$old" ]; then result absent "" "" false; fi
    if $noop; then result installed "$old" "" true uninstall; fi
    if ! do_uninstall; then
      fail_cmd package-uninstall-failed "$provider could not uninstall $name"
    fi
    installed_version
    if [ -n "$CUR" ]; then
      fail_cmd package-uninstall-failed "$provider reported success but $name is still installed"
    fi
    result uninstalled "" "$old" true
    ;;
esac
