#!/usr/bin/env bash
# Creates, lists, describes, alters and deletes topics, as Kafka's
# kafka-topics.sh (both --bootstrap-server and the classic --zookeeper mode).
set -euo pipefail
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/kafka-run-class.sh" kafka-topics "$@"
