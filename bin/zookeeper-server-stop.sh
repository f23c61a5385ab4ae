#!/usr/bin/env bash
# Stops the ZooKeeper started by zookeeper-server-start.sh from this checkout
# (SIGTERM), as Kafka's zookeeper-server-stop.sh. The pid file in
# ${LOG_DIR:-<repo>/logs} is used first; otherwise the JVMs whose command line
# carries this checkout's -Dklassik.home marker. Other ZooKeepers (for example
# a system service) are never signalled.
set -euo pipefail

base_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$base_dir/bin/klassik-lib.sh"
log_dir=${LOG_DIR:-$base_dir/logs}
marker="-Dklassik.home=$base_dir"

is_our_zookeeper() {
  local cmdline
  cmdline=$({ tr '\0' ' ' <"/proc/$1/cmdline"; } 2>/dev/null || true)
  [[ "$cmdline" == *QuorumPeerMain* && " $cmdline " == *" $marker "* ]]
}

pids=()
pid_file=$log_dir/zookeeper.pid
if [ -f "$pid_file" ]; then
  pid=$(cat "$pid_file")
  if [ -n "$pid" ] && is_our_zookeeper "$pid"; then
    pids+=("$pid")
  fi
  rm -f "$pid_file"
fi
term_processes "zookeeper server" ZooKeeper is_our_zookeeper ${pids[@]+"${pids[@]}"}
