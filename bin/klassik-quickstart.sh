#!/usr/bin/env bash
# Brings up a local Klassik cluster on this machine, the way a Kafka quickstart
# does: a ZooKeeper on 127.0.0.1:2181 and three brokers (ids 1, 2, 3 on racks
# a, b, c, ports 9092-9094), then creates the topic "demo" and prints how to
# reach it with kcat and zkCli. Installs whatever is missing first.
#
# Usage: bin/klassik-quickstart.sh          start (idempotent)
#        bin/klassik-quickstart.sh stop     stop brokers and ZooKeeper
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
export LOG_DIR="${LOG_DIR:-$repo/logs}"
mkdir -p "$LOG_DIR"

if [ "${1:-}" = "stop" ]; then
  # Brokers first, and wait for them: their controlled shutdown needs
  # ZooKeeper and the controller.
  pids=$(cat "$LOG_DIR"/server-*.pid 2>/dev/null || true)
  bin/kafka-server-stop.sh || true
  for _ in $(seq 1 120); do
    alive=""
    for pid in $pids; do kill -0 "$pid" 2>/dev/null && alive="$alive $pid"; done
    [ -z "$alive" ] && break
    sleep 0.5
  done
  [ -n "${alive:-}" ] && echo "klassik: brokers still running after 60 s:$alive" >&2
  bin/zookeeper-server-stop.sh || true
  exit 0
fi

# The cluster needs neither the npm clients nor a Docker daemon (the test
# suite's install starts one).
bin/klassik-install-deps.sh --no-npm --no-dockerd
command -v go >/dev/null 2>&1 || export PATH="/usr/local/go/bin:$PATH"

zk_ok() { [ "$(echo ruok | nc -N -w 2 127.0.0.1 2181 2>/dev/null)" = "imok" ]; }
. "$repo/bin/klassik-lib.sh"
wait_for_logs=$LOG_DIR

if ! zk_ok; then
  echo "klassik: starting ZooKeeper on 127.0.0.1:2181"
  bin/zookeeper-server-start.sh -daemon config/zookeeper.properties
  wait_for 60 "ZooKeeper" zk_ok
fi

echo "klassik: building the broker and tools"
bin/kafka-run-class.sh kafka-server --version >/dev/null 2>&1 || true
bin/kafka-run-class.sh kafka-topics --version >/dev/null 2>&1 || true

for id in 1 2 3; do
  port=$((9091 + id))
  if ! nc -z 127.0.0.1 "$port" 2>/dev/null; then
    echo "klassik: starting broker $id on 127.0.0.1:$port (rack $(echo abc | cut -c$id))"
    bin/kafka-server-start.sh -daemon "config/server-$id.properties"
  fi
done
for id in 1 2 3; do
  port=$((9091 + id))
  wait_for 60 "broker $id on port $port" nc -z 127.0.0.1 "$port"
done

topic_ready() { bin/kafka-topics.sh --bootstrap-server 127.0.0.1:9092 --describe --topic demo | grep -q 'Leader: [0-9]'; }
if ! bin/kafka-topics.sh --bootstrap-server 127.0.0.1:9092 --list | grep -qx demo; then
  wait_for 60 "3 registered brokers" sh -c "bin/zookeeper-shell.sh 127.0.0.1:2181 ls /brokers/ids | grep -q '1, 2, 3'"
  bin/kafka-topics.sh --bootstrap-server 127.0.0.1:9092 --create --topic demo --partitions 6 --replication-factor 3 --config min.insync.replicas=2
fi
wait_for 60 "leaders for topic demo" topic_ready
bin/kafka-topics.sh --bootstrap-server 127.0.0.1:9092 --describe --topic demo

cat <<MSG

Klassik is up: ZooKeeper 127.0.0.1:2181, brokers 127.0.0.1:9092, :9093, :9094.
  List brokers and topics:    kcat -b 127.0.0.1:9092 -L
  Produce:                    echo hello | kcat -b 127.0.0.1:9092 -t demo -P
  Consume:                    kcat -b 127.0.0.1:9092 -t demo -C -o beginning -e
  Who is the controller:      bin/zookeeper-shell.sh 127.0.0.1:2181 get /controller
  A partition's leader/ISR:   bin/zookeeper-shell.sh 127.0.0.1:2181 get /brokers/topics/demo/partitions/0/state
  Topics:                     bin/kafka-topics.sh --bootstrap-server 127.0.0.1:9092 --describe
  Prometheus metrics:         curl -s http://127.0.0.1:8081/metrics (brokers 2, 3: :8082, :8083)
  Stop everything:            bin/klassik-quickstart.sh stop
Logs: $LOG_DIR
MSG
