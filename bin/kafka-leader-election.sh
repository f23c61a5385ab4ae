#!/usr/bin/env bash
# Elects preferred or unclean partition leaders through the ElectLeaders API,
# as Kafka's kafka-leader-election.sh (kafka.admin.LeaderElectionCommand).
set -euo pipefail
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/kafka-run-class.sh" kafka-leader-election "$@"
