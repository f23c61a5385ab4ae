#!/usr/bin/env bash
# Runs every Klassik test: installs what is missing, then go vet and the whole
# Go test suite with the race detector. The suite starts real ZooKeeper servers
# and real brokers on 127.0.0.1 and drives them with real clients (franz-go,
# sarama, kafka-go, kcat, kafka-python, confluent-kafka, kafkajs).
# Usage: bin/klassik-test.sh [extra go test flags...]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
"$repo/bin/klassik-install-deps.sh"
command -v go >/dev/null 2>&1 || export PATH="/usr/local/go/bin:$PATH"

echo "klassik: go vet ./..."
go vet ./...
# Test artefacts (the console's browser screenshots) are kept here after the run.
export KLASSIK_ARTIFACTS="${KLASSIK_ARTIFACTS:-$repo/test-artifacts}"
mkdir -p "$KLASSIK_ARTIFACTS"
echo "klassik: go test -race ./..."
# -p 3: three packages at a time on this 2-core machine. The longest
# packages (broker/faulttest, broker/e2e, bin/klassik-chaos) spend most of
# their time waiting for faults and timeouts to play out, so a third one
# overlaps them; every test is written to hold beside a CPU-burning process.
go test -race -p 3 -timeout 25m -count=1 "$@" ./...
