#!/usr/bin/env bash
# Dumps .log, .index, .timeindex, .txnindex and .snapshot files of a
# partition directory (Kafka's kafka.tools.DumpLogSegments).
exec "$(dirname "$0")/kafka-run-class.sh" kafka-dump-log "$@"
