#!/usr/bin/env bash
# Describes the log directories of brokers (sizes, offset lags, future
# replicas) through DescribeLogDirs, as Kafka's kafka-log-dirs.sh
# (kafka.admin.LogDirsCommand).
set -euo pipefail
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/kafka-run-class.sh" kafka-log-dirs "$@"
