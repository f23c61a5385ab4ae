#!/usr/bin/env bash
# Moves partition leadership back to the preferred replicas, as Kafka's
# deprecated kafka-preferred-replica-election.sh: --zookeeper writes
# /admin/preferred_replica_election, --bootstrap-server calls ElectLeaders.
set -euo pipefail
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/kafka-run-class.sh" kafka-preferred-replica-election "$@"
