#!/usr/bin/env bash
# Starts a Klassik broker, as Kafka's kafka-server-start.sh:
#   bin/kafka-server-start.sh [-daemon] config/server.properties [--override key=value]...
# In the foreground the script becomes the broker (exec), so Ctrl-C and
# SIGTERM reach it. With -daemon the broker runs in the background, its
# output goes to ${LOG_DIR:-<repo>/logs}/server-<broker.id>.out and its pid to
# server-<broker.id>.pid, which kafka-server-stop.sh uses.
set -euo pipefail

base_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$base_dir/bin/klassik-lib.sh"
parse_daemon_args "$0 [-daemon] server.properties [--override property=value]*" "$@"
set -- "${args[@]}"

# KAFKA_OPTS holds the JVM options Kafka's scripts hand to java. The
# -Dname=value system properties among them (notably
# -Djava.security.auth.login.config=<JAAS file> with the KafkaServer
# section) reach the broker as leading arguments; other JVM flags (-Xmx,
# -XX:...) mean nothing to a Go process and are left out. The value is
# split on whitespace, as the Java scripts do.
jvm_props=()
read -r -a kafka_opts <<<"${KAFKA_OPTS:-}"
for opt in "${kafka_opts[@]+"${kafka_opts[@]}"}"; do
  case "$opt" in -D?*) jvm_props+=("$opt") ;; esac
done

if [ "$daemon" = false ]; then
  exec "$base_dir/bin/kafka-run-class.sh" kafka-server "${jvm_props[@]+"${jvm_props[@]}"}" "$@"
fi

# Name the log and pid files after broker.id: the last --override wins,
# then the properties file; a file without one is named after the file.
config_file=$1
broker_id=""
prev=""
for arg in "$@"; do
  if [ "$prev" = "--override" ]; then
    case "$arg" in broker.id=*) broker_id=${arg#broker.id=} ;; esac
  fi
  case "$arg" in --override=broker.id=*) broker_id=${arg#--override=broker.id=} ;; esac
  prev=$arg
done
if [ -z "$broker_id" ] && [ -f "$config_file" ]; then
  broker_id=$(sed -n -E 's/^[[:space:]]*broker\.id[[:space:]]*[=:[:space:]][[:space:]]*([-0-9]+).*/\1/p' "$config_file" | tail -n 1)
fi
if [ -z "$broker_id" ] || [ "$broker_id" = "-1" ]; then
  broker_id=$(basename "$config_file" | sed -E 's/\.(properties|ya?ml)$//')
fi

log_dir=${LOG_DIR:-$base_dir/logs}
mkdir -p "$log_dir"
out=$log_dir/server-$broker_id.out
pid_file=$log_dir/server-$broker_id.pid

# A pid file whose process still runs a kafka-server binary means the broker
# is up; any other pid file is stale (the pid may even have been reused).
old_pid=$(cat "$pid_file" 2>/dev/null || true)
old_exe=$(readlink "/proc/${old_pid:-0}/exe" 2>/dev/null || true)
if [ -n "$old_pid" ] && [ "$(basename "${old_exe% (deleted)}")" = "kafka-server" ]; then
  echo "$0: broker $broker_id is already running with pid $(cat "$pid_file") ($pid_file)" >&2
  exit 1
fi

# Build in the foreground so a compile error is shown here, not in the log.
KLASSIK_BUILD_ONLY=1 "$base_dir/bin/kafka-run-class.sh" kafka-server

nohup "$base_dir/bin/kafka-run-class.sh" kafka-server "${jvm_props[@]+"${jvm_props[@]}"}" "$@" >"$out" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$pid_file"
echo "Started broker $broker_id (pid $pid), output in $out"
