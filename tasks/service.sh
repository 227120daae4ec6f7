#!/bin/sh
# ferry::service - start, stop, restart, enable, disable or query one service
# with the target's init system: systemd (when it is running as PID 1),
# OpenRC, or SysV init scripts (/etc/init.d, via `service` when present).
#
# Parameters arrive as PT_action, PT_name and PT__noop (the runner also sends
# them as JSON on stdin; this task reads the environment).
# Result: {"status": "running"|"stopped"|"failed"|"starting"|"stopping"|
# "unknown", "enabled": "true"|"false"|"unknown", "changed", "manager",
# "noop"?, "would"?}. In noop mode nothing is changed: status/enabled describe
# the current state and "changed" tells whether a real run would change it.

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

action=${PT_action:-}
name=${PT_name:-}
noop=false
case ${PT__noop:-} in true | '"true"') noop=true ;; esac

# ------------------------------------------------------------- validation
# The name is only ever passed as a single argument, never evaluated; the
# character check additionally keeps options ("-x"), paths and shell
# metacharacters out of it.
case $action in
  start | stop | restart | "enable" | disable | status) ;;
  *)
    JM=; jm_s parameter action; jm_s value "$action"
    ferry_fail invalid-parameter "action must be one of start, stop, restart, enable, disable, status" "$JM"
    ;;
esac
case $name in
  '' | [!A-Za-z0-9]* | *[!A-Za-z0-9._@:+-]*) bad_name=true ;;
  *) bad_name=false ;;
esac
if $bad_name || [ "${#name}" -gt 200 ]; then
  JM=; jm_s parameter name; jm_s value "$name"
  ferry_fail invalid-parameter "invalid service name: only letters, digits and . _ @ : + - are allowed, starting with a letter or digit" "$JM"
fi

# ----------------------------------------------------------------- manager
manager=
if have systemctl && [ -d /run/systemd/system ]; then manager=systemd
elif have rc-service && { [ -d /run/openrc ] || [ -x /sbin/openrc ]; }; then manager=openrc
elif [ -d /etc/init.d ]; then manager=sysv
fi
if [ -z "$manager" ]; then
  ferry_fail service-no-manager "no supported service manager found (systemd, openrc, sysv init scripts)"
fi

# run CMD...: run a command, keeping its output (also copied to stderr) in
# RUN_OUT and its exit status in RUN_RC.
run() {
  RUN_OUT=$("$@" </dev/null 2>&1)
  RUN_RC=$?
  [ -z "$RUN_OUT" ] || printf '%s\n' "$RUN_OUT" >&2
  return $RUN_RC
}

# fail_cmd KIND MSG: fail with the last command's status and output tail.
fail_cmd() {
  JM=; jm_s name "$name"; jm_s manager "$manager"; jm_n exit_code "$RUN_RC"
  jm_s output "$(printf '%s\n' "$RUN_OUT" | tail -n 20)"
  ferry_fail "$1" "$2" "$JM"
}

not_found() {
  JM=; jm_s name "$name"; jm_s manager "$manager"
  ferry_fail service-not-found "service $name not found ($manager)" "$JM"
}

# sysv_run ACTION: run the init script, through service(8) when available.
sysv_run() {
  if have service; then run service "$name" "$1"; else run "/etc/init.d/$name" "$1"; fi
}

# ------------------------------------------------------ per-manager queries
check_exists() {
  case $manager in
    systemd)
      _ls=$(systemctl show -p LoadState "$name" 2>/dev/null)
      case $_ls in LoadState=not-found | '') not_found ;; esac
      ;;
    openrc | sysv) [ -f "/etc/init.d/$name" ] || not_found ;;
  esac
}

# get_status: set STATUS.
get_status() {
  case $manager in
    systemd)
      case $(systemctl is-active "$name" 2>/dev/null) in
        active | reloading) STATUS=running ;;
        activating) STATUS=starting ;;
        deactivating) STATUS=stopping ;;
        failed) STATUS=failed ;;
        inactive) STATUS=stopped ;;
        *) STATUS=unknown ;;
      esac
      ;;
    openrc)
      _o=$(rc-service "$name" status 2>&1 </dev/null)
      case $?:$_o in
        0:*) STATUS=running ;;
        *crashed*) STATUS=failed ;;
        *) STATUS=stopped ;;
      esac
      ;;
    sysv)
      # LSB: 0 running, 1 dead with a pid file, 2 dead with a lock file,
      # 3 not running, 4 unknown.
      if have service; then
        _o=$(service "$name" status 2>&1 </dev/null)
      else
        _o=$("/etc/init.d/$name" status 2>&1 </dev/null)
      fi
      case $? in
        0) STATUS=running ;;
        1 | 2) STATUS=failed ;;
        3) STATUS=stopped ;;
        *) STATUS=unknown ;;
      esac
      case $_o in *[Uu]sage:*) STATUS=unknown ;; esac
      ;;
  esac
}

# get_enabled: set ENABLED to true, false or unknown.
get_enabled() {
  ENABLED=unknown
  case $manager in
    systemd)
      case $(systemctl is-enabled "$name" 2>/dev/null) in
        enabled | enabled-runtime | alias | generated) ENABLED=true ;;
        disabled | masked | masked-runtime | linked | linked-runtime) ENABLED=false ;;
      esac
      ;;
    openrc)
      ENABLED=false
      for _f in /etc/runlevels/*/"$name"; do
        if [ -e "$_f" ] || [ -L "$_f" ]; then ENABLED=true; fi
      done
      ;;
    sysv)
      _dirs=false
      for _d in /etc/rc[2345].d /etc/rc.d/rc[2345].d; do
        [ -d "$_d" ] || continue
        _dirs=true
        for _f in "$_d"/S[0-9][0-9]"$name"; do
          if [ -e "$_f" ] || [ -L "$_f" ]; then ENABLED=true; fi
        done
      done
      if $_dirs && [ "$ENABLED" = unknown ]; then ENABLED=false; fi
      ;;
  esac
}

do_action() { # start|stop|restart|enable|disable
  case $manager in
    systemd) run systemctl "$1" "$name" ;;
    openrc)
      case $1 in
        start | stop | restart) run rc-service "$name" "$1" ;;
        enable) run rc-update add "$name" default ;;
        disable)
          RUN_RC=0
          for _f in /etc/runlevels/*/"$name"; do
            if [ -e "$_f" ] || [ -L "$_f" ]; then
              _lvl=${_f%/*}
              run rc-update del "$name" "${_lvl##*/}" || return
            fi
          done
          ;;
      esac
      ;;
    sysv)
      case $1 in
        start | stop | restart) sysv_run "$1" ;;
        "enable" | disable)
          if have update-rc.d; then
            if [ "$1" = enable ]; then
              run update-rc.d "$name" defaults && run update-rc.d "$name" enable
            else
              run update-rc.d "$name" disable
            fi
          elif have chkconfig; then
            if [ "$1" = enable ]; then
              run chkconfig --add "$name" && run chkconfig "$name" on
            else
              run chkconfig "$name" off
            fi
          else
            JM=; jm_s name "$name"; jm_s manager "$manager"
            ferry_fail service-unsupported "cannot $1 $name: neither update-rc.d nor chkconfig is available" "$JM"
          fi
          ;;
      esac
      ;;
  esac
}

# result CHANGED [WOULD]
result() {
  get_status
  get_enabled
  JM=
  jm_s status "$STATUS"; jm_s enabled "$ENABLED"; jm_b changed "$1"
  jm_s manager "$manager"
  if $noop; then jm_b noop true; jm_s would "${2:-}"; fi
  printf '{%s}\n' "${JM#,}"
  exit 0
}

# ------------------------------------------------------------------ action
check_exists
get_status
get_enabled

case $action in
  status) result false ;;
  start)
    [ "$STATUS" = running ] && result false
    $noop && result true start
    do_action start || fail_cmd service-start-failed "could not start $name"
    get_status
    if [ "$STATUS" != running ] && [ "$STATUS" != starting ]; then
      fail_cmd service-start-failed "$name is $STATUS after start"
    fi
    result true
    ;;
  stop)
    [ "$STATUS" = stopped ] && result false
    $noop && result true stop
    do_action stop || fail_cmd service-stop-failed "could not stop $name"
    get_status
    if [ "$STATUS" = running ]; then
      fail_cmd service-stop-failed "$name is still running after stop"
    fi
    result true
    ;;
  restart)
    $noop && result true restart
    do_action restart || fail_cmd service-restart-failed "could not restart $name"
    get_status
    if [ "$STATUS" != running ] && [ "$STATUS" != starting ]; then
      fail_cmd service-restart-failed "$name is $STATUS after restart"
    fi
    result true
    ;;
  "enable" | disable)
    want=true
    [ "$action" = disable ] && want=false
    [ "$ENABLED" = "$want" ] && result false
    $noop && result true "$action"
    do_action "$action" || fail_cmd "service-$action-failed" "could not $action $name"
    get_enabled
    if [ "$ENABLED" != "$want" ]; then
      fail_cmd "service-$action-failed" "$name is not ${action}d after $action (enabled: $ENABLED)"
    fi
    result true
    ;;
esac
