#!/usr/bin/env bash
# Runs Klassik's benchmark suite in one command (issue 13): it builds
# kafka-server without the race detector, starts its own ZooKeeper and
# three brokers on free loopback ports (or measures a running cluster with
# --bootstrap-server and --broker-pids), and prints a Markdown table of
# every figure next to its baseline measured in the same run: franz-go's
# kfake with the same franz-go client, raw file writes, loopback TCP into a
# trivial Go sink. Medians of three alternating runs by default.
#   bin/klassik-bench.sh [--quick] [--runs N] [--out FILE] [--profile]
#   bin/klassik-bench.sh --bootstrap-server HOST:PORT,... --broker-pids PID,...
# The machine is shared: read the ratios, not the absolute numbers.
set -euo pipefail
base_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export KLASSIK_HOME=$base_dir
exec "$base_dir/bin/kafka-run-class.sh" klassik-bench "$@"
