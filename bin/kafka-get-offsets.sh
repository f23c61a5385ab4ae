#!/usr/bin/env bash
# Prints the offsets of topic partitions at a time (latest, earliest,
# max-timestamp or a timestamp), as Kafka 3.x's kafka-get-offsets.sh
# (kafka.tools.GetOffsetShell).
set -euo pipefail
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/kafka-run-class.sh" kafka-get-offsets "$@"
