#!/bin/sh
# SysV init script for the service task tests; the test replaces @NAME@.
### BEGIN INIT INFO
# Provides:          @NAME@
# Required-Start:
# Required-Stop:
# Default-Start:     2 3 4 5
# Default-Stop:      0 1 6
# Short-Description: ferry service task test daemon
### END INIT INFO

PIDFILE=/run/@NAME@.pid

running() {
  [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null
}

case $1 in
  start)
    running && exit 0
    sleep 600 </dev/null >/dev/null 2>&1 &
    echo $! >"$PIDFILE"
    ;;
  stop)
    if running; then kill "$(cat "$PIDFILE")"; fi
    rm -f "$PIDFILE"
    ;;
  restart)
    "$0" stop
    "$0" start
    ;;
  status)
    running && exit 0
    [ -f "$PIDFILE" ] && exit 1
    exit 3
    ;;
  *)
    echo "Usage: $0 {start|stop|restart|status}" >&2
    exit 2
    ;;
esac
