#!/usr/bin/env bash
# The container's bin/kafka-run-class.sh. The repository's script builds
# ./bin/<tool> from source before running it; in the image the tools are
# already built (static binaries in /opt/klassik/libexec), so this one only
# execs them, keeping the process id the tool's:
#   kafka-run-class.sh <tool> [args...]
# KLASSIK_BUILD_ONLY=1 (used by kafka-server-start.sh -daemon) does nothing.
set -euo pipefail

base_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ $# -lt 1 ]; then
  echo "USAGE: $0 <tool> [args...]   (tools: $(ls "$base_dir/libexec" | tr '\n' ' '))" >&2
  exit 1
fi
tool=$1
shift
if [ ! -x "$base_dir/libexec/$tool" ]; then
  echo "$0: unknown tool '$tool': there is no $base_dir/libexec/$tool" >&2
  exit 1
fi
if [ "${KLASSIK_BUILD_ONLY:-}" = "1" ]; then
  exit 0
fi
exec "$base_dir/libexec/$tool" "$@"
