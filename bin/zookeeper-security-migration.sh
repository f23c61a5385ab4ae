#!/usr/bin/env bash
# Sets or removes Kafka's ZooKeeper ACLs on an existing tree, as Kafka's
# zookeeper-security-migration.sh (kafka.admin.ZkSecurityMigrator):
# --zookeeper.acl secure|unsecure --zookeeper.connect host:port[/chroot].
# The session authenticates with a TLS client certificate
# (--zk-tls-config-file) or the JAAS Client section named by
# -Djava.security.auth.login.config in KAFKA_OPTS (ZooKeeper digest).
set -euo pipefail
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/kafka-run-class.sh" zookeeper-security-migration "$@"
