#!/usr/bin/env bash
# Lists, describes, deletes and resets consumer groups, as Kafka's kafka-consumer-groups.sh (--bootstrap-server, or ZooKeeper-stored groups with --zookeeper).
set -euo pipefail
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/kafka-run-class.sh" kafka-consumer-groups "$@"
