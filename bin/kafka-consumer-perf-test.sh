#!/usr/bin/env bash
# Measures the consumer: reads --messages records of a topic in a group and
# prints Kafka's CSV figures (MB and records per second, rebalance and fetch
# time), as Kafka's kafka-consumer-perf-test.sh (kafka.tools.ConsumerPerformance).
set -euo pipefail
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/kafka-run-class.sh" kafka-consumer-perf-test "$@"
