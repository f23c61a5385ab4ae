#!/usr/bin/env bash
# Runs one of Klassik's Go tools, the way Kafka's kafka-run-class.sh runs a
# Java class: bin/kafka-run-class.sh <tool> [args...] builds ./bin/<tool>
# (a Go main package) into ${KLASSIK_BUILD_DIR:-<repo>/bin/.build} when the
# module's sources changed since the last build, then execs it, so the
# process id is the tool's and signals reach it directly.
#
# <tool> may also be the Java class name Kafka's scripts and tutorials run
# (kafka-run-class.sh kafka.tools.GetOffsetShell ...): each class of a tool
# Klassik has maps to that tool's directory (kafka_class_tool); another
# class name is refused as the JVM refuses a class it cannot find.
#
# KLASSIK_BUILD_ONLY=1 builds without running. KLASSIK_RACE_TOOLS, a
# space-separated list of tool names, builds those tools with the race
# detector (into a race/ directory of their own); the tests set it for the
# tools whose goroutines they want checked.
set -euo pipefail

base_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$base_dir/bin/klassik-lib.sh"
require_args "$0 <tool> [args...]   (tools: the directories of bin/ holding a Go main package)" "$@"
tool=$1
shift

# kafka_class_tool CLASS: the bin/ directory of the tool that stands in for
# Kafka's main class CLASS (2.8's names, and the org.apache.kafka.tools
# names the tools moved to in 3.x); empty when Klassik has none.
kafka_class_tool() {
  case "$1" in
    kafka.Kafka) echo kafka-server ;;
    kafka.admin.ConfigCommand) echo kafka-configs ;;
    kafka.admin.TopicCommand) echo kafka-topics ;;
    kafka.admin.ConsumerGroupCommand) echo kafka-consumer-groups ;;
    kafka.admin.ReassignPartitionsCommand) echo kafka-reassign-partitions ;;
    kafka.admin.LeaderElectionCommand) echo kafka-leader-election ;;
    kafka.admin.PreferredReplicaLeaderElectionCommand) echo kafka-preferred-replica-election ;;
    kafka.admin.AclCommand) echo kafka-acls ;;
    kafka.admin.BrokerApiVersionsCommand) echo kafka-broker-api-versions ;;
    kafka.admin.LogDirsCommand | org.apache.kafka.tools.LogDirsCommand) echo kafka-log-dirs ;;
    kafka.admin.DeleteRecordsCommand | org.apache.kafka.tools.DeleteRecordsCommand) echo kafka-delete-records ;;
    kafka.admin.ZkSecurityMigrator) echo zookeeper-security-migration ;;
    kafka.tools.GetOffsetShell | org.apache.kafka.tools.GetOffsetShell) echo kafka-get-offsets ;;
    kafka.tools.DumpLogSegments) echo kafka-dump-log ;;
    kafka.tools.ConsoleConsumer) echo kafka-console-consumer ;;
    kafka.tools.ConsoleProducer) echo kafka-console-producer ;;
    org.apache.kafka.tools.VerifiableProducer | kafka.tools.VerifiableProducer) echo kafka-verifiable-producer ;;
    org.apache.kafka.tools.VerifiableConsumer | kafka.tools.VerifiableConsumer) echo kafka-verifiable-consumer ;;
    org.apache.kafka.tools.TransactionsCommand) echo kafka-transactions ;;
    org.apache.kafka.tools.ProducerPerformance) echo kafka-producer-perf-test ;;
    kafka.tools.ConsumerPerformance | org.apache.kafka.tools.ConsumerPerformance) echo kafka-consumer-perf-test ;;
  esac
}

# A name with a dot is a class name (tool directories have none).
if [[ $tool == *.* ]]; then
  class=$tool
  tool=$(kafka_class_tool "$class")
  if [ -z "$tool" ]; then
    echo "Error: Could not find or load main class $class" >&2
    echo "Caused by: java.lang.ClassNotFoundException: $class" >&2
    exit 1
  fi
fi
build_dir=${KLASSIK_BUILD_DIR:-$base_dir/bin/.build}

if [ ! -d "$base_dir/bin/$tool" ]; then
  echo "$0: unknown tool '$tool': there is no directory $base_dir/bin/$tool" >&2
  exit 1
fi
if ! command -v go >/dev/null 2>&1; then
  echo "$0: the Go toolchain is required to build bin/$tool (install Go 1.26 and put 'go' on PATH)" >&2
  exit 1
fi

build_flags=()
case " ${KLASSIK_RACE_TOOLS:-} " in
  *" $tool "*) build_dir=$build_dir/race; build_flags=(-race) ;;
esac
mkdir -p "$build_dir"
binary=$build_dir/$tool
stamp=$build_dir/$tool.sources

# Content hash of everything that can change the binary: every non-test .go
# file of the module plus go.mod and go.sum. Timestamps are not trusted
# because checkouts and copies rewrite them.
sources_hash() {
  (
    cd "$base_dir"
    find . \( -path ./bin/.build -o -path ./node_modules -o -path ./.git -o -name testdata \) -prune -o \
      -type f -name '*.go' ! -name '*_test.go' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
    for f in go.mod go.sum; do
      if [ -f "$f" ]; then sha256sum "$f"; fi
    done
  ) | sha256sum | cut -d' ' -f1
}

hash=$(sources_hash)
if [ ! -x "$binary" ] || [ "$(cat "$stamp" 2>/dev/null || true)" != "$hash" ]; then
  # Build to a private name and rename, so brokers started at the same time
  # never run a half-written binary.
  tmp="$binary.tmp.$$"
  if ! (cd "$base_dir" && go build "${build_flags[@]}" -o "$tmp" "./bin/$tool"); then
    rm -f "$tmp"
    echo "$0: building bin/$tool failed" >&2
    exit 1
  fi
  mv -f "$tmp" "$binary"
  echo "$hash" > "$stamp.tmp.$$"
  mv -f "$stamp.tmp.$$" "$stamp"
fi

if [ "${KLASSIK_BUILD_ONLY:-}" = "1" ]; then
  exit 0
fi
exec "$binary" "$@"
