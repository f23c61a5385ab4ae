#!/usr/bin/env bash
# Describes and alters entity configs (topic configs, users' SCRAM
# credentials), as Kafka's kafka-configs.sh (both --bootstrap-server and the
# classic --zookeeper mode).
set -euo pipefail
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/kafka-run-class.sh" kafka-configs "$@"
