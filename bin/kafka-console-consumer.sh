#!/usr/bin/env bash
# Reads records and prints them, as Kafka's kafka-console-consumer.sh (--bootstrap-server, or the classic ZooKeeper consumer with --zookeeper).
set -euo pipefail
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/kafka-run-class.sh" kafka-console-consumer "$@"
