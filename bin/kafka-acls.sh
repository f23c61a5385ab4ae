#!/usr/bin/env bash
# Adds, removes and lists ACLs, as Kafka's kafka-acls.sh: directly in
# ZooKeeper (--authorizer-properties zookeeper.connect=...) or through the
# brokers (--bootstrap-server ... [--command-config FILE]).
set -euo pipefail
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/kafka-run-class.sh" kafka-acls "$@"
