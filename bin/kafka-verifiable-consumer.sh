#!/usr/bin/env bash
# Consumes one topic in a group and prints JSON lines for rebalances,
# consumed records and commits, as Kafka's kafka-verifiable-consumer.sh
# (org.apache.kafka.tools.VerifiableConsumer).
set -euo pipefail
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/kafka-run-class.sh" kafka-verifiable-consumer "$@"
