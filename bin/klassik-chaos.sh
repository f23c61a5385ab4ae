#!/usr/bin/env bash
# Runs a verifiable producer and consumer group against a running cluster
# (Klassik's or any Kafka on this machine) while injecting faults on this
# machine (kill -9 and restart a broker, SIGSTOP/SIGCONT, iptables cuts,
# ZooKeeper node kills) on a reproducible schedule, then prints a
# Jepsen-style verdict and a timeline; exit status 0 only when clean:
#   bin/klassik-chaos.sh --bootstrap-server 127.0.0.1:9092 --zookeeper 127.0.0.1:2181 \
#     --faults kill9,sigstop --duration 10m --seed 42
# bin/klassik-chaos.sh --help lists every option.
set -euo pipefail
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/kafka-run-class.sh" klassik-chaos "$@"
