#!/usr/bin/env bash
# Runs one of Klassik's Go tools, the way Kafka's kafka-run-class.sh runs a
# Java class: bin/kafka-run-class.sh <tool> [args...] builds ./bin/<tool>
# (a Go main package) into ${KLASSIK_BUILD_DIR:-<repo>/bin/.build} when the
# module's sources changed since the last build, then execs it, so the
# process id is the tool's and signals reach it directly.
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
