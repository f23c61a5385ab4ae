#!/usr/bin/env bash
# Stops the Klassik brokers of this checkout with SIGTERM (a controlled
# shutdown), as Kafka's kafka-server-stop.sh does. Brokers started with
# kafka-server-start.sh -daemon are found through their pid files in
# ${LOG_DIR:-<repo>/logs}; brokers started in the foreground are found by
# their executable, this checkout's built kafka-server binary. Processes of
# other checkouts or of other programs are never signalled.
set -euo pipefail

base_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$base_dir/bin/klassik-lib.sh"
build_dir=${KLASSIK_BUILD_DIR:-$base_dir/bin/.build}
log_dir=${LOG_DIR:-$base_dir/logs}
binary=$build_dir/kafka-server

# is_our_broker PID: true when PID runs this checkout's kafka-server binary
# (also after a rebuild replaced the file, when /proc shows " (deleted)").
is_our_broker() {
  local exe
  exe=$(readlink "/proc/$1/exe" 2>/dev/null || true)
  exe=${exe% (deleted)}
  [ -n "$exe" ] && [ "$exe" = "$(readlink -f "$binary" 2>/dev/null || echo "$binary")" ]
}

# runs_kafka_server PID: true when PID runs a kafka-server binary from any
# build directory. Enough for pids from our own pid files (it only guards
# against the pid having been reused by another program), so a broker
# started with another KLASSIK_BUILD_DIR is still stopped.
runs_kafka_server() {
  local exe
  exe=$(readlink "/proc/$1/exe" 2>/dev/null || true)
  exe=${exe% (deleted)}
  [ "$(basename "$exe")" = "kafka-server" ]
}

pids=()
for pid_file in "$log_dir"/server-*.pid; do
  [ -e "$pid_file" ] || continue
  pid=$(cat "$pid_file")
  if [ -n "$pid" ] && runs_kafka_server "$pid"; then
    pids+=("$pid")
  else
    rm -f "$pid_file" # stale: that broker is gone
  fi
done
term_processes "kafka server" broker is_our_broker ${pids[@]+"${pids[@]}"}
