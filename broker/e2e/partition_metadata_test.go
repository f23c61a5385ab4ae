package e2e_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/klassik/klassik/broker/storage"
)

// Every replica directory of a new topic holds partition.metadata naming the
// topic id the controller assigned in /brokers/topics/<t> (log-format.md
// §1.8), as a Kafka 2.8+ broker writes it.
func TestPartitionMetadataFiles(t *testing.T) {
	c := startCluster(t)
	createTopic(t, c, "ids")
	assignment, _, err := c.ZK().GetTopicAssignment("ids")
	if err != nil {
		t.Fatal(err)
	}
	want := "version: 0\ntopic_id: " + assignment.TopicID
	found := 0
	for i := 0; i < c.N(); i++ {
		for p := int32(0); p < 6; p++ {
			l, ok := c.Broker(i).LogManager().GetLog(storage.TopicPartition{Topic: "ids", Partition: p})
			if !ok {
				continue
			}
			data, err := os.ReadFile(filepath.Join(l.Dir(), "partition.metadata"))
			if err != nil {
				t.Fatalf("broker %d partition %d: %v", c.BrokerID(i), p, err)
			}
			if string(data) != want {
				t.Fatalf("broker %d partition %d: partition.metadata = %q, want %q", c.BrokerID(i), p, data, want)
			}
			found++
		}
	}
	if found != 18 {
		t.Fatalf("found %d replica directories with partition.metadata, want 18 (6 partitions x RF 3)", found)
	}
}
