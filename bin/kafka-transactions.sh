#!/usr/bin/env bash
# Lists and describes transactions and the producers of a partition, finds hanging transactions and aborts them, as Kafka 3.0's kafka-transactions.sh.
set -euo pipefail
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/kafka-run-class.sh" kafka-transactions "$@"
