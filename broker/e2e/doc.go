// Package e2e holds the client suite: unmodified Kafka clients in other
// languages and libraries (kcat/librdkafka, kafka-python, confluent-kafka,
// kafkajs, sarama, kafka-go) producing to and consuming from a real cluster
// (a real ZooKeeper and three brokers on racks a, b, c, started by
// broker/testcluster).
//
// Every test states the same invariant: each of the N records a client
// produced ("<prefix>-<i>", key "k<i>") is read back exactly once, and within
// a partition the records appear in the order the producer sent them. A
// violation is reported by partition and offset.
//
// The external clients are required: a missing kcat, python3-kafka,
// python3-confluent-kafka, node or kafkajs fails the test with the command
// that installs it (bin/klassik-install-deps.sh installs them all).
package e2e
