package broker_test

import (
	"os"
	"testing"

	"github.com/klassik/klassik/broker/replica"
	"github.com/klassik/klassik/broker/testcluster"
)

// TestMain shares one real ZooKeeper server between the integration tests;
// each cluster works in its own chroot.
func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }

func replicaTP(topic string, p int32) replica.TopicPartition {
	return replica.TopicPartition{Topic: topic, Partition: p}
}
