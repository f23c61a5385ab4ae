#!/usr/bin/env bash
# Starts a real Apache ZooKeeper (Debian's zookeeper package), as Kafka's
# zookeeper-server-start.sh:
#   bin/zookeeper-server-start.sh [-daemon] config/zookeeper.properties
# In the foreground the script becomes the JVM (exec). With -daemon the JVM
# runs in the background, logging to ${LOG_DIR:-<repo>/logs}/zookeeper.out,
# with its pid in zookeeper.pid (used by zookeeper-server-stop.sh).
# Extra JVM options may be given in KAFKA_HEAP_OPTS / KAFKA_OPTS.
set -euo pipefail

base_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$base_dir/bin/klassik-lib.sh"
parse_daemon_args "$0 [-daemon] zookeeper.properties" "$@"
set -- "${args[@]}"
config=$1
if [ ! -f "$config" ]; then
  echo "$0: configuration file $config not found" >&2
  exit 1
fi
config=$(cd "$(dirname "$config")" && pwd)/$(basename "$config")

zk_jar=/usr/share/java/zookeeper.jar
if [ ! -f "$zk_jar" ] || ! command -v java >/dev/null 2>&1; then
  echo "$0: Apache ZooKeeper and Java are required but not installed." >&2
  echo "Install them with:  apt-get update && apt-get install -y zookeeper default-jre-headless" >&2
  exit 1
fi

# zookeeper.jar's manifest names its dependencies; add a logging binding so
# the server's log is readable, and Debian's conf dir for log4j.properties.
classpath=$zk_jar
for jar in /usr/share/java/slf4j-log4j12.jar /usr/share/java/log4j-1.2.jar; do
  [ -f "$jar" ] && classpath=$classpath:$jar
done
log_dir=${LOG_DIR:-$base_dir/logs}
mkdir -p "$log_dir"
log4j_opts=(-Dzookeeper.root.logger=INFO,CONSOLE -Dzookeeper.log.dir="$log_dir")
if [ -f /etc/zookeeper/conf/log4j.properties ]; then
  log4j_opts+=(-Dlog4j.configuration=file:/etc/zookeeper/conf/log4j.properties)
fi

# -Dklassik.home marks the JVM as started from this checkout, so that
# zookeeper-server-stop.sh never touches another ZooKeeper.
read -r -a heap_opts <<<"${KAFKA_HEAP_OPTS:--Xmx256m -Xms64m}"
read -r -a extra_opts <<<"${KAFKA_OPTS:-}"
cmd=(java "${heap_opts[@]}" -XX:+UseSerialGC -Djava.awt.headless=true
  -Dzookeeper.admin.enableServer=false -Dklassik.home="$base_dir"
  "${log4j_opts[@]}" ${extra_opts[@]+"${extra_opts[@]}"}
  -cp "$classpath" org.apache.zookeeper.server.quorum.QuorumPeerMain "$config")

if [ "$daemon" = false ]; then
  exec "${cmd[@]}"
fi

pid_file=$log_dir/zookeeper.pid
if [ -f "$pid_file" ] && kill -0 "$(cat "$pid_file")" 2>/dev/null; then
  echo "$0: ZooKeeper is already running with pid $(cat "$pid_file") ($pid_file)" >&2
  exit 1
fi
nohup "${cmd[@]}" >"$log_dir/zookeeper.out" 2>&1 </dev/null &
echo $! >"$pid_file"
echo "Started ZooKeeper (pid $!), output in $log_dir/zookeeper.out"
