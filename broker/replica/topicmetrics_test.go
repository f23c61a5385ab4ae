package replica

import (
	"testing"

	gometrics "github.com/rcrowley/go-metrics"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage"
)

// The produce and fetch paths' BrokerTopicMetrics allocate nothing once
// the topic's meters exist, count messages and bytes per topic and for
// all topics, and go away with the topic.
func TestBrokerTopicStatsAllocFree(t *testing.T) {
	r := gometrics.NewRegistry()
	s := newBrokerTopicStats(r)
	info := storage.AppendInfo{FirstOffset: 10, LastOffset: 14}
	s.produced("t", 300, info, 0)
	if n := testing.AllocsPerRun(100, func() { s.produced("t", 300, info, 0) }); n != 0 {
		t.Errorf("produced allocates %v times", n)
	}
	parts := []fetchPart{{tp: common.TopicPartition{Topic: "t"}}}
	reads := []partRead{{}}
	var none noReassignments
	if n := testing.AllocsPerRun(100, func() { s.fetched(parts, reads, -1, none) }); n != 0 {
		t.Errorf("fetched allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { s.fetched(parts, reads, 2, none) }); n != 0 {
		t.Errorf("a follower's fetched allocates %v times", n)
	}
	const calls = 1 + 1 + 100 // AllocsPerRun warms up once
	if c := r.Get("kafka.server.BrokerTopicMetrics.MessagesInPerSec.topic=t").(gometrics.Meter).Count(); c != 5*calls {
		t.Errorf("per-topic messages in %d, want %d", c, 5*calls)
	}
	if c := r.Get("kafka.server.BrokerTopicMetrics.BytesInPerSec").(gometrics.Meter).Count(); c != 300*calls {
		t.Errorf("all-topics bytes in %d", c)
	}
	s.removeTopic("t")
	if r.Get("kafka.server.BrokerTopicMetrics.MessagesInPerSec.topic=t") != nil {
		t.Error("per-topic meter left after removeTopic")
	}
}

type noReassignments struct{}

func (noReassignments) isAddingReplica(common.TopicPartition, int32) bool { return false }
