package broker_test

import (
	"os"
	"testing"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/testcluster"
)

// TestMain shares one real ZooKeeper server between the integration tests;
// each cluster works in its own chroot.
func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }

func replicaTP(topic string, p int32) common.TopicPartition {
	return common.TopicPartition{Topic: topic, Partition: p}
}
