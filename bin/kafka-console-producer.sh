#!/usr/bin/env bash
# Sends each line of standard input as a record, as Kafka's kafka-console-producer.sh.
set -euo pipefail
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/kafka-run-class.sh" kafka-console-producer "$@"
