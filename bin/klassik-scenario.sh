#!/usr/bin/env bash
# Replays the classic moments of the ZooKeeper-era design on a throwaway
# cluster, narrated step by step with the evidence of the bin/ tools:
#   bin/klassik-scenario.sh list | <scenario>
# Each replay starts its own ZooKeeper and brokers on free loopback ports,
# removes everything at the end and prints "scenario <name>: OK (...)".
set -euo pipefail
base_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export KLASSIK_HOME=$base_dir
exec "$base_dir/bin/kafka-run-class.sh" klassik-scenario "$@"
