// Package e2e holds the end-to-end suites that drive Klassik the way its
// users do: unmodified Kafka clients and Kafka's own scripts against a real
// ZooKeeper and real brokers on 127.0.0.1.
//
//   - clients_test.go: kcat/librdkafka, kafka-python, confluent-kafka,
//     kafkajs, franz-go, sarama and kafka-go each produce 10,000 records to
//     a 6-partition, RF=3 topic on three brokers (racks a, b, c) and read
//     them back. Invariant: each record is read exactly once and, within a
//     partition, in the order the producer sent it; violations are reported
//     by partition and offset.
//   - inspect_test.go: what an operator sees with kcat -L and zkCli.
//   - groups_test.go (+ groups_member_test.go, groups_bench_test.go):
//     consumer groups with every client (membership changes, kill -9 of a
//     member and of the coordinator broker, committed offsets resuming);
//     the invariants are stated in its header.
//   - ops_*_test.go: the distribution's scripts as processes
//     (kafka-server-start.sh and SIGTERM = controlled shutdown,
//     kafka-topics.sh in both modes, controller failover, whole-cluster
//     restart, zookeeper-shell.sh).
//   - offsets_topic_test.go: __consumer_offsets on a cluster smaller than
//     offsets.topic.replication.factor.
//   - bench_test.go: produce/consume throughput next to franz-go's kfake.
//
// The external clients are required: a missing kcat, python3-kafka,
// python3-confluent-kafka, node or kafkajs fails the test with the command
// that installs it (bin/klassik-install-deps.sh installs them all).
package e2e
