package replica

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// manyLair is one LeaderAndIsr v5 request for partitions [0, n) of topic
// with leader(p) as each partition's leader at leaderEpoch.
func manyLair(topic string, n int, leaderEpoch int32, leader func(p int32) int32) *kmsg.LeaderAndISRRequest {
	req := kmsg.NewPtrLeaderAndISRRequest()
	req.Version = 5
	req.ControllerEpoch = 1
	req.BrokerEpoch = -1
	ts := kmsg.NewLeaderAndISRRequestTopicState()
	ts.Topic = topic
	ts.TopicID = topicIDFor(topic)
	for p := int32(0); p < int32(n); p++ {
		ps := kmsg.NewLeaderAndISRRequestTopicPartition()
		ps.Partition = p
		ps.ControllerEpoch = 1
		ps.Leader = leader(p)
		ps.LeaderEpoch = leaderEpoch
		ps.ISR = []int32{1, 2, 3}
		ps.Replicas = []int32{1, 2, 3}
		ps.IsNew = leaderEpoch == 0
		ts.PartitionStates = append(ts.PartitionStates, ps)
	}
	req.TopicStates = append(req.TopicStates, ts)
	return req
}

// One LeaderAndIsr of many partitions switches them at once (on several
// goroutines): every partition is answered in request order, gets its log
// with partition.metadata, leads or follows as told, and a leader's epoch
// is in its leader epoch checkpoint; a second request moving every
// leadership here does the same for the next epoch.
func TestLeaderAndIsrManyPartitionsAtOnce(t *testing.T) {
	const n = 300
	m, lm, _ := newStorageManager(t, nil)
	check := func(req *kmsg.LeaderAndISRRequest, epoch int32, leader func(p int32) int32) {
		t.Helper()
		resp := m.LeaderAndIsr(context.Background(), req)
		id := req.TopicStates[0].TopicID
		if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != n {
			t.Fatalf("answer: error %d, %d topics", resp.ErrorCode, len(resp.Topics))
		}
		for i, rp := range resp.Topics[0].Partitions {
			if rp.Partition != int32(i) || rp.ErrorCode != 0 {
				t.Fatalf("answer %d: partition %d, error %d", i, rp.Partition, rp.ErrorCode)
			}
		}
		for p := int32(0); p < n; p++ {
			tp := common.TopicPartition{Topic: "many", Partition: p}
			part, ok := m.Partition(tp)
			if !ok {
				t.Fatalf("%s not hosted", tp)
			}
			part.mu.RLock()
			isLeader, leaderID, le, log := part.isLeaderLocked(), part.leaderID, part.leaderEpoch, part.log
			part.mu.RUnlock()
			if want := leader(p); leaderID != want || isLeader != (want == 1) || le != epoch {
				t.Fatalf("%s: leader %d (here: %v) epoch %d, want leader %d epoch %d", tp, leaderID, isLeader, le, want, epoch)
			}
			if log == nil {
				t.Fatalf("%s: no log", tp)
			}
			sl, ok := lm.GetLog(tp)
			if !ok {
				t.Fatalf("%s: no log in the log manager", tp)
			}
			if got, ok, err := sl.TopicID(); !ok || err != nil || got != id {
				t.Fatalf("%s: topic id %v (known %v, err %v), want %v", tp, got, ok, err, id)
			}
			if got, ok := log.LatestEpoch(); isLeader && (!ok || got != epoch) {
				t.Fatalf("%s: latest epoch %d (%v), want %d", tp, got, ok, epoch)
			}
		}
	}
	third := func(p int32) int32 { return p%3 + 1 }
	check(manyLair("many", n, 0, third), 0, third)
	// partition.metadata follows the answer (storage writes it from
	// each log's flusher); the bound only limits a failure.
	deadline := time.Now().Add(time.Minute)
	for p := int32(0); p < n; p++ {
		sl, _ := lm.GetLog(common.TopicPartition{Topic: "many", Partition: p})
		for {
			_, err := os.Stat(filepath.Join(sl.Dir(), "partition.metadata"))
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("partition %d: partition.metadata not written: %v", p, err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	all := func(int32) int32 { return 1 }
	check(manyLair("many", n, 1, all), 1, all)
}

func TestForEachPartitionCallsEachOnce(t *testing.T) {
	for _, n := range []int{0, 1, 3, 4, 7, 64, 1000} {
		seen := make([]int32, n)
		forEachPartition(n, func(i int) { seen[i]++ })
		for i, c := range seen {
			if c != 1 {
				t.Fatalf("n=%d: %d called %d times", n, i, c)
			}
		}
	}
}
