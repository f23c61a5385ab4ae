#!/usr/bin/env bash
# Describes and alters entity configs (topics, brokers, broker loggers,
# users, clients and ips: configs, SCRAM credentials and quotas), as
# Kafka's kafka-configs.sh (both --bootstrap-server and the
# classic --zookeeper mode).
set -euo pipefail
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/kafka-run-class.sh" kafka-configs "$@"
