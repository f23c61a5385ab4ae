#!/usr/bin/env bash
# Generates, executes, verifies, lists and cancels partition reassignments,
# as Kafka's kafka-reassign-partitions.sh (kafka.admin.ReassignPartitionsCommand;
# --bootstrap-server and the deprecated --zookeeper mode).
set -euo pipefail
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/kafka-run-class.sh" kafka-reassign-partitions "$@"
