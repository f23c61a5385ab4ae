#!/usr/bin/env bash
# Deletes the records of partitions below given offsets (DeleteRecords), as
# Kafka's kafka-delete-records.sh.
set -euo pipefail
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/kafka-run-class.sh" kafka-delete-records "$@"
