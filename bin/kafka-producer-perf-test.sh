#!/usr/bin/env bash
# Measures the producer: sends --num-records records to a topic and prints
# Kafka's progress and summary lines (throughput, latency percentiles), as
# Kafka's kafka-producer-perf-test.sh (org.apache.kafka.tools.ProducerPerformance).
set -euo pipefail
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/kafka-run-class.sh" kafka-producer-perf-test "$@"
