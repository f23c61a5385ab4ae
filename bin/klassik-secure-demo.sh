#!/usr/bin/env bash
# Secures a one-broker Klassik cluster the way the README's "Securing a
# cluster" walks through it, step by step, with the same commands: a CA
# (openssl), the broker's JKS keystore and truststore (keytool), SCRAM users
# (kafka-configs.sh), ACLs (kafka-acls.sh), the broker started from
# config/server-secure.properties, a topic created by the administrator
# over SASL_SSL (kafka-topics.sh --command-config), then alice producing and
# consuming with kcat and the console tools, and bob, who has no ACL,
# refused.
#
# Usage: bin/klassik-secure-demo.sh          run the walk-through
#        bin/klassik-secure-demo.sh stop     stop the broker it started
#
# The README's paths and ports are the defaults; a test runs the script in
# a sandbox by setting KLASSIK_SECURE_DIR (keystores and logs),
# KLASSIK_SECURE_ZK (a ZooKeeper connect string; ZooKeeper is then not
# started) and KLASSIK_SECURE_PORTS ("client broker" ports).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
export LOG_DIR="${LOG_DIR:-$repo/logs}"
mkdir -p "$LOG_DIR"

if [ "${1:-}" = "stop" ]; then
  pid=$(cat "$LOG_DIR/server-0.pid" 2>/dev/null || true)
  if [ -n "$pid" ] && kill -s TERM "$pid" 2>/dev/null; then
    for _ in $(seq 1 120); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.5; done
    echo "klassik: broker $pid still running after 60 s" >&2
    exit 1
  fi
  exit 0
fi

dir=${KLASSIK_SECURE_DIR:-/tmp/klassik-secure}
zk=${KLASSIK_SECURE_ZK:-localhost:2181}
read -r client_port broker_port <<<"${KLASSIK_SECURE_PORTS:-9095 9096}"
client=localhost:$client_port
overrides=()
if [ "$dir" != /tmp/klassik-secure ]; then
  overrides+=(--override "ssl.keystore.location=$dir/broker.keystore.jks" --override "ssl.truststore.location=$dir/truststore.jks"
    --override "log.dirs=$dir/kafka-logs")
fi
if [ "$zk" != localhost:2181 ]; then
  overrides+=(--override "zookeeper.connect=$zk")
fi
if [ "$client_port $broker_port" != "9095 9096" ]; then
  overrides+=(--override "listeners=CLIENT://localhost:$client_port,BROKER://localhost:$broker_port")
fi

. bin/klassik-lib.sh
wait_for_logs=$LOG_DIR
step() { printf '\n== %s\n' "$*"; }

for tool in keytool openssl kcat; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "klassik: $tool is required: run bin/klassik-install-deps.sh" >&2
    exit 1
  fi
done
mkdir -p "$dir"
rm -f "$dir"/*.jks

step "1. A certificate authority, the broker's keystore and a truststore"
pw=klassik-secret
openssl req -x509 -newkey rsa:2048 -nodes -days 365 -subj "/CN=Klassik demo CA" -keyout "$dir/ca.key" -out "$dir/ca.pem"
keytool -genkeypair -alias broker -keyalg RSA -keysize 2048 -validity 365 -dname CN=localhost \
  -ext SAN=dns:localhost,ip:127.0.0.1 -keystore "$dir/broker.keystore.jks" -storepass $pw -keypass $pw
keytool -certreq -alias broker -keystore "$dir/broker.keystore.jks" -storepass $pw \
  -ext SAN=dns:localhost,ip:127.0.0.1 -file "$dir/broker.csr"
openssl x509 -req -in "$dir/broker.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial -days 365 \
  -copy_extensions copy -out "$dir/broker.pem"
keytool -importcert -noprompt -alias CARoot -file "$dir/ca.pem" -keystore "$dir/broker.keystore.jks" -storepass $pw
keytool -importcert -noprompt -alias broker -file "$dir/broker.pem" -keystore "$dir/broker.keystore.jks" -storepass $pw
keytool -importcert -noprompt -alias CARoot -file "$dir/ca.pem" -keystore "$dir/truststore.jks" -storepass $pw

step "2. ZooKeeper, SCRAM users, the broker"
if [ -z "${KLASSIK_SECURE_ZK:-}" ] && [ "$(echo ruok | nc -N -w 2 127.0.0.1 2181 2>/dev/null)" != imok ]; then
  bin/zookeeper-server-start.sh -daemon config/zookeeper.properties
  wait_for 60 ZooKeeper sh -c '[ "$(echo ruok | nc -N -w 2 127.0.0.1 2181)" = imok ]'
fi
bin/kafka-configs.sh --zookeeper $zk --alter --add-config 'SCRAM-SHA-512=[password=admin-secret]' --entity-type users --entity-name admin
bin/kafka-configs.sh --zookeeper $zk --alter --add-config 'SCRAM-SHA-512=[password=alice-secret]' --entity-type users --entity-name alice
bin/kafka-configs.sh --zookeeper $zk --alter --add-config 'SCRAM-SHA-512=[iterations=8192,password=bob-secret]' --entity-type users --entity-name bob
bin/kafka-configs.sh --zookeeper $zk --describe --entity-type users
bin/kafka-server-start.sh -daemon config/server-secure.properties ${overrides[@]+"${overrides[@]}"}
wait_for 60 "the broker on $client" nc -z localhost "$client_port"

step "3. ACLs: alice may produce to and consume from orders"
bin/kafka-acls.sh --authorizer-properties zookeeper.connect=$zk --add --allow-principal User:alice --producer --topic orders
bin/kafka-acls.sh --authorizer-properties zookeeper.connect=$zk --add --allow-principal User:alice --consumer --topic orders --group orders-app
bin/kafka-acls.sh --authorizer-properties zookeeper.connect=$zk --list --topic orders

step "4. The administrator creates the topic, lists the ACLs and describes alice over SASL_SSL"
cat >"$dir/admin.properties" <<EOF
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="admin-secret";
ssl.truststore.location=$dir/truststore.jks
ssl.truststore.password=$pw
EOF
bin/kafka-topics.sh --bootstrap-server $client --command-config "$dir/admin.properties" --create --topic orders --partitions 3 --replication-factor 1
bin/kafka-acls.sh --bootstrap-server $client --command-config "$dir/admin.properties" --list --topic orders
bin/kafka-configs.sh --bootstrap-server $client --command-config "$dir/admin.properties" --describe --entity-type users --entity-name alice

step "5. alice produces and consumes"
echo "order-1" | kcat -b $client -X security.protocol=SASL_SSL -X sasl.mechanisms=SCRAM-SHA-512 \
  -X sasl.username=alice -X sasl.password=alice-secret -X ssl.ca.location="$dir/ca.pem" -t orders -P
kcat -b $client -X security.protocol=SASL_SSL -X sasl.mechanisms=SCRAM-SHA-512 \
  -X sasl.username=alice -X sasl.password=alice-secret -X ssl.ca.location="$dir/ca.pem" -t orders -C -o beginning -e -q
sed 's/"admin" password="admin-secret"/"alice" password="alice-secret"/' "$dir/admin.properties" >"$dir/alice.properties"
echo "order-2" | bin/kafka-console-producer.sh --bootstrap-server $client --producer.config "$dir/alice.properties" --topic orders
bin/kafka-console-consumer.sh --bootstrap-server $client --consumer.config "$dir/alice.properties" --topic orders \
  --group orders-app --from-beginning --max-messages 2 --timeout-ms 30000

step "6. bob has a password but no ACL: refused"
if echo "order-3" | kcat -b $client -X security.protocol=SASL_SSL -X sasl.mechanisms=SCRAM-SHA-512 \
  -X sasl.username=bob -X sasl.password=bob-secret -X ssl.ca.location="$dir/ca.pem" -t orders -P; then
  echo "klassik: bob could write to orders" >&2
  exit 1
fi

cat <<MSG

The secured broker runs on $client (SASL_SSL, SCRAM-SHA-512); its
configuration is config/server-secure.properties, its keystores are in $dir.
Stop it with: bin/klassik-secure-demo.sh stop
MSG
