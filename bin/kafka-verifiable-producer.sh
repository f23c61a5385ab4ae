#!/usr/bin/env bash
# Produces increasing integers and prints a JSON line per acknowledged or
# failed send, as Kafka's kafka-verifiable-producer.sh
# (org.apache.kafka.tools.VerifiableProducer).
set -euo pipefail
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/kafka-run-class.sh" kafka-verifiable-producer "$@"
