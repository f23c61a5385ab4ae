#!/usr/bin/env bash
# The README's "Chaos" and "ZooKeeper trouble" walk-throughs, with the same
# commands: a three-node ZooKeeper ensemble on 127.0.0.1:2181-2183 and three
# brokers (config/server-{1,2,3}.properties, 127.0.0.1:9092-9094) on it, a
# klassik-chaos run with kill9, sigstop and zk-kill faults, then, under a
# klassik-chaos workload, the ensemble's leader killed, its quorum lost and
# the whole ensemble paused past zookeeper.session.timeout.ms.
#
# Usage: bin/klassik-chaos-demo.sh          run both walk-throughs; the
#                                           cluster keeps running afterwards
#        bin/klassik-chaos-demo.sh stop     stop what it started
#
# Everything lives in ${KLASSIK_DEMO_DIR:-/tmp/klassik-chaos-demo}; the ports
# are fixed (a test runs the script in a network namespace of its own).
# Exit status 0 only when both verdicts are CLEAN and the brokers came back
# from each ZooKeeper fault as the README says.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
dir=${KLASSIK_DEMO_DIR:-/tmp/klassik-chaos-demo}

# ours PID: the process was started by this walk-through (its command line
# names $dir), so stop never touches another ZooKeeper or broker.
ours() { tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF "$dir"; }
if [ "${1:-}" = "stop" ]; then
  for port in 9092 9093 9094 2181 2182 2183; do
    for pid in $(lsof -t -iTCP:$port -sTCP:LISTEN 2>/dev/null || true); do
      if ours "$pid"; then kill -CONT "$pid" 2>/dev/null || true; kill -TERM "$pid" 2>/dev/null || true; fi
    done
    if [ "$port" = 9094 ]; then sleep 5; fi # the brokers' controlled shutdown needs ZooKeeper
  done
  exit 0
fi

. bin/klassik-lib.sh
wait_for_logs=$dir
fail() { echo "klassik: $*" >&2; exit 1; }
step() { printf '\n== %s\n' "$*"; }
for tool in java nc lsof; do
  command -v $tool >/dev/null 2>&1 || fail "$tool is required: run bin/klassik-install-deps.sh"
done
mkdir -p "$dir"

step "Chaos 1. Three ZooKeeper nodes, an ensemble: each lists all three (server.N) and has its own dataDir with a myid file"
for i in 1 2 3; do
  mkdir -p $dir/zookeeper-$i && echo $i >$dir/zookeeper-$i/myid
  printf '%s\n' tickTime=2000 initLimit=10 syncLimit=5 dataDir=$dir/zookeeper-$i clientPort=218$i clientPortAddress=127.0.0.1 \
    admin.enableServer=false '4lw.commands.whitelist=*' server.1=127.0.0.1:2888:3888 server.2=127.0.0.1:2889:3889 \
    server.3=127.0.0.1:2890:3890 >$dir/zookeeper-$i.properties
  LOG_DIR=$dir/zookeeper-$i bin/zookeeper-server-start.sh -daemon $dir/zookeeper-$i.properties
done
serving() { for p in 2181 2182 2183; do echo srvr | nc -N 127.0.0.1 $p | grep -q 'Mode: [lf]' || return 1; done; }
until serving; do sleep 1; done
for p in 2181 2182 2183; do echo "127.0.0.1:$p $(echo srvr | nc -N 127.0.0.1 $p | grep Mode)"; done

step "Chaos 2. Three brokers on the ensemble, zookeeper.session.timeout.ms=6000"
for i in 1 2 3; do
  LOG_DIR=$dir/broker-$i bin/kafka-server-start.sh -daemon config/server-$i.properties --override log.dirs=$dir/kafka-logs-$i \
    --override zookeeper.connect=127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183 --override zookeeper.session.timeout.ms=6000
done
wait_for 60 "three registered brokers" sh -c "bin/zookeeper-shell.sh 127.0.0.1:2181 ls /brokers/ids | grep -q '1, 2, 3'"

step "Chaos 3. The chaos run"
bin/klassik-chaos.sh --bootstrap-server 127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094 \
  --zookeeper 127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183 --faults kill9,sigstop,zk-kill --seed 6 \
  --duration 30s --warmup 3s --interval 2s --fault-duration 4s --log-dir $dir/chaos --timeline-json $dir/chaos.json
# (set -e: a verdict other than CLEAN ends the walk-through here)

step "ZooKeeper trouble 1. A workload to watch (klassik-chaos without faults, stopped with SIGINT at the end), and where things stand"
bin/klassik-chaos.sh --bootstrap-server 127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094 \
  --zookeeper 127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183 --faults none --duration 10m --topic zk-trouble --log-dir $dir/zk-trouble >$dir/zk-trouble.out 2>&1 &
workload=$!
trap 'kill -INT $workload 2>/dev/null || true' EXIT # also when a step fails
wait_for 60 "the workload's first acknowledgements" sh -c "bin/kafka-topics.sh --bootstrap-server 127.0.0.1:9092 --describe --topic zk-trouble | grep -q 'Leader: [0-9]'"
sleep 2
for p in 2181 2182 2183; do echo "127.0.0.1:$p $(echo srvr | nc -N 127.0.0.1 $p | grep Mode)"; done
bin/zookeeper-shell.sh 127.0.0.1:2181 get /controller
bin/zookeeper-shell.sh 127.0.0.1:2181 stat /brokers/ids/1
epoch_of() { bin/zookeeper-shell.sh 127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183 -waitforconnection stat /brokers/ids/$1 | sed -n 's/^cZxid = //p'; }
before=$(epoch_of 1)

step "ZooKeeper trouble 2. kill -9 the ensemble's leader: the other two elect a new one, the sessions move over"
leader=$(for p in 2181 2182 2183; do if echo srvr | nc -N 127.0.0.1 $p | grep -q 'Mode: leader'; then echo $p; fi; done)
kill -9 $(lsof -t -iTCP:$leader -sTCP:LISTEN)
sleep 3
for p in 2181 2182 2183; do echo "127.0.0.1:$p $(echo srvr | nc -N 127.0.0.1 $p | grep Mode)"; done
bin/zookeeper-shell.sh 127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183 -waitforconnection stat /brokers/ids/1
bin/kafka-topics.sh --bootstrap-server 127.0.0.1:9092 --describe --topic zk-trouble
LOG_DIR=$dir/zookeeper-${leader#218} bin/zookeeper-server-start.sh -daemon $dir/zookeeper-${leader#218}.properties
until serving; do sleep 1; done
[ "$(epoch_of 1)" = "$before" ] || fail "broker 1 registered again after the leader kill: a connection loss was taken for a session expiry"
echo "broker 1 kept its registration (cZxid $before): connection loss, not session expiry"

step "ZooKeeper trouble 3. Lose the quorum for a few seconds: kill two nodes; a topic created meanwhile waits"
kill -9 $(lsof -t -iTCP:2182 -sTCP:LISTEN) $(lsof -t -iTCP:2183 -sTCP:LISTEN)
# The answer seen is the one printed: asked again, a member between two
# states may close the connection without any answer.
until out=$(echo srvr | nc -N 127.0.0.1 2181) && grep -q 'not currently serving' <<<"$out"; do sleep 1; done
echo "$out"
bin/kafka-topics.sh --bootstrap-server 127.0.0.1:9092 --create --topic made-during-the-outage --partitions 3 --replication-factor 3 &
created=$!
sleep 3
for i in 2 3; do LOG_DIR=$dir/zookeeper-$i bin/zookeeper-server-start.sh -daemon $dir/zookeeper-$i.properties; done
until serving; do sleep 1; done
wait $created || fail "the topic created during the quorum loss failed"
bin/kafka-topics.sh --bootstrap-server 127.0.0.1:9092 --describe --topic made-during-the-outage

step "ZooKeeper trouble 4. Pause the whole ensemble and the brokers for 9 s (SIGSTOP), past the 6 s session timeout; the brokers resume once the ensemble expired their sessions"
before=$(epoch_of 1)
zk_pids=$(lsof -t -iTCP:2181-2183 -sTCP:LISTEN) broker_pids=$(lsof -t -iTCP:9092-9094 -sTCP:LISTEN)
kill -STOP $zk_pids $broker_pids
sleep 9
kill -CONT $zk_pids
until serving; do sleep 1; done
until [ -z "$(bin/zookeeper-shell.sh 127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183 -waitforconnection stat /brokers/ids/1 | sed -n 's/^cZxid = //p')" ]; do sleep 1; done
kill -CONT $broker_pids
until e=$(epoch_of 1) && [ -n "$e" ] && [ "$e" != "$before" ]; do sleep 1; done
bin/zookeeper-shell.sh 127.0.0.1:2181 stat /brokers/ids/1
bin/zookeeper-shell.sh 127.0.0.1:2181 get /controller_epoch
grep -h 'zookeeper session expired' $dir/broker-*/server-*.out $dir/chaos/broker-*.out | tail -3
curl -s 127.0.0.1:8081/metrics | grep -E '^kafka_server_sessionexpirelistener_zookeeper(expires|disconnects|syncconnects)_total'
kill -INT $workload
wait $workload
grep -E 'ZooKeeper|registration|registered|controller|interrupted|verdict' $dir/zk-trouble.out

cat <<MSG

The ensemble (127.0.0.1:2181-2183) and the brokers (127.0.0.1:9092-9094)
keep running; everything is in $dir.
Stop them with: bin/klassik-chaos-demo.sh stop
MSG
