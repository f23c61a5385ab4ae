#!/usr/bin/env bash
# Prints the API versions every broker of the cluster supports beside the
# versions the client can use, as Kafka's kafka-broker-api-versions.sh.
set -euo pipefail
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/kafka-run-class.sh" kafka-broker-api-versions "$@"
