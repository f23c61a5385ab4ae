package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/testcluster"
)

// Every replica directory of a new topic holds partition.metadata naming the
// topic id the controller assigned in /brokers/topics/<t>, as a Kafka 2.8+
// broker writes it: a text file "version: 0" and "topic_id: <base64 id>".
func TestPartitionMetadataFiles(t *testing.T) {
	c := startCluster(t)
	createTopic(t, c, "ids")
	assignment, _, err := c.ZK().GetTopicAssignment("ids")
	if err != nil {
		t.Fatal(err)
	}
	want := "version: 0\ntopic_id: " + assignment.TopicID
	// A replica writes the file while it applies the controller's
	// LeaderAndIsr, before it becomes leader or follower; the state znodes
	// createTopic waited for may be ahead of a follower's request.
	var problem string
	ok := testcluster.Poll(15*time.Second, func() bool {
		found := 0
		problem = ""
		for i := 0; i < c.N(); i++ {
			for p := int32(0); p < 6; p++ {
				l, ok := c.Broker(i).LogManager().GetLog(common.TopicPartition{Topic: "ids", Partition: p})
				if !ok {
					continue
				}
				data, err := os.ReadFile(filepath.Join(l.Dir(), "partition.metadata"))
				if err != nil {
					problem = fmt.Sprintf("broker %d partition %d: %v", c.BrokerID(i), p, err)
					continue
				}
				if string(data) != want {
					t.Fatalf("broker %d partition %d: partition.metadata = %q, want %q", c.BrokerID(i), p, data, want)
				}
				found++
			}
		}
		return found == 18
	})
	if !ok {
		t.Fatalf("partition.metadata missing from a replica directory after 15s (want 18 of 6 partitions x RF 3): %s", problem)
	}
}
