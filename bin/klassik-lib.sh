# Shell functions shared by the start and stop scripts of bin/. Sourced
# (". klassik-lib.sh"), never run.

# require_args USAGE ARGS...: prints "USAGE: USAGE" on stderr and exits 1
# unless at least one argument follows USAGE.
require_args() {
  if [ $# -lt 2 ]; then
    echo "USAGE: $1" >&2
    exit 1
  fi
}

# parse_daemon_args USAGE ARGS...: Kafka's start scripts take an optional
# leading -daemon. Sets daemon to true or false and args to the arguments
# after it; with none left, prints "USAGE: USAGE" on stderr and exits 1.
parse_daemon_args() {
  local usage=$1
  shift
  daemon=false
  if [ $# -ge 1 ] && [ "$1" = "-daemon" ]; then
    daemon=true
    shift
  fi
  require_args "$usage" "$@"
  args=("$@")
}

# term_processes WHAT LABEL MATCH PID...: sends SIGTERM to the PIDs given
# and to every process the function MATCH accepts (it is called with a pid),
# then prints "Sent SIGTERM to LABEL pid(s) ..."; when there are none it
# prints "No WHAT to stop" and exits 1, as Kafka's stop scripts do.
term_processes() {
  local what=$1 label=$2 match=$3
  shift 3
  local pids=("$@") proc pid
  for proc in /proc/[0-9]*; do
    pid=${proc#/proc/}
    if "$match" "$pid" && [[ " ${pids[*]-} " != *" $pid "* ]]; then
      pids+=("$pid")
    fi
  done
  if [ ${#pids[@]} -eq 0 ]; then
    echo "No $what to stop"
    exit 1
  fi
  for pid in "${pids[@]}"; do
    kill -s TERM "$pid" 2>/dev/null || true
  done
  echo "Sent SIGTERM to $label pid(s) ${pids[*]}"
}

# wait_for SECONDS WHAT COMMAND...: runs COMMAND (output discarded) every
# half second until it succeeds; after SECONDS it prints "timed out
# waiting for WHAT" on stderr, naming the logs in $wait_for_logs, and
# exits 1. The walk-through scripts set wait_for_logs to their log folder.
wait_for() {
  local secs=$1 what=$2
  shift 2
  for _ in $(seq 1 $((secs * 2))); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  echo "klassik: timed out waiting for $what (logs in ${wait_for_logs:-.})" >&2
  exit 1
}
