package replica

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage"
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
	// What a new controller sends after a broker died: every leader stays,
	// the ISR shrinks and the epoch goes up. Each partition's cache has the
	// new epoch once the request is answered; the log's flusher writes it
	// to the checkpoint file afterwards (storage's leaderepoch.go), and a
	// flush writes it before the recovery point passes it.
	shrunk := manyLair("many", n, 2, all)
	for i := range shrunk.TopicStates[0].PartitionStates {
		shrunk.TopicStates[0].PartitionStates[i].ISR = []int32{1, 2}
	}
	check(shrunk, 2, all)
	for p := int32(0); p < n; p++ {
		sl, _ := lm.GetLog(common.TopicPartition{Topic: "many", Partition: p})
		if e, ok := sl.LatestEpoch(); !ok || e != 2 {
			t.Fatalf("partition %d: latest cached epoch %d (%v), want 2", p, e, ok)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			data, err := os.ReadFile(filepath.Join(sl.Dir(), "leader-epoch-checkpoint"))
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			if last := lines[len(lines)-1]; strings.HasPrefix(last, "2 ") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("partition %d: leader-epoch-checkpoint not written with epoch 2:\n%s", p, data)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// A LeaderAndIsr of many partitions switches lairWorkers of them at once:
// the first lairWorkers calls all run before any of them returns (a switch
// waits for fsyncs, which concurrent switches share).
func TestForEachPartitionRunsLairWorkersAtOnce(t *testing.T) {
	var mu sync.Mutex
	running, most := 0, 0
	all := make(chan struct{})
	var release sync.Once
	forEachPartition(4*lairWorkers, func(int) {
		mu.Lock()
		running++
		most = max(most, running)
		if running == lairWorkers {
			release.Do(func() { close(all) })
		}
		mu.Unlock()
		select {
		case <-all:
		case <-time.After(time.Minute): // bounds a failure only
			release.Do(func() { close(all) })
		}
		mu.Lock()
		running--
		mu.Unlock()
	})
	if most != lairWorkers {
		t.Fatalf("at most %d calls at once, want %d", most, lairWorkers)
	}
}

// BenchmarkLeaderAndIsrEpochBump times the LeaderAndIsr a new controller
// sends after a broker died, for partitions led here: same leader, ISR
// shrunk, next epoch, so every partition writes its leader epoch
// checkpoint (file and directory fsyncs) before the answer. Rounds
// alternate 16 workers (the former count) and lairWorkers on the same
// directory, so both see the same disk:
//
//	go test -run '^$' -bench LeaderAndIsrEpochBump -benchtime 1x ./broker/replica
func BenchmarkLeaderAndIsrEpochBump(b *testing.B) {
	const n, rounds = 3333, 3
	m, lm, _ := newStorageManager(b, nil)
	here := func(int32) int32 { return 1 }
	if resp := m.LeaderAndIsr(context.Background(), manyLair("bump", n, 0, here)); resp.ErrorCode != 0 {
		b.Fatalf("create: error %d", resp.ErrorCode)
	}
	counts := []int{16, lairWorkers}
	defer func(w int) { lairWorkers = w }(lairWorkers)
	took := make([]time.Duration, len(counts))
	// The new epochs reach the checkpoint files after the answer, from
	// each log's flusher: written is the time until every file has them,
	// and the next request starts only then.
	written := make([]time.Duration, len(counts))
	var logs []*storage.Log
	for p := int32(0); p < n; p++ {
		sl, ok := lm.GetLog(common.TopicPartition{Topic: "bump", Partition: p})
		if !ok {
			b.Fatalf("partition %d: no log", p)
		}
		logs = append(logs, sl)
	}
	epoch := int32(0)
	for i := 0; i < b.N; i++ {
		for r := 0; r < rounds; r++ {
			for k, w := range counts {
				lairWorkers = w
				epoch++
				req := manyLair("bump", n, epoch, here)
				for j := range req.TopicStates[0].PartitionStates {
					req.TopicStates[0].PartitionStates[j].ISR = []int32{1, 2}
				}
				start := time.Now()
				resp := m.LeaderAndIsr(context.Background(), req)
				took[k] += time.Since(start)
				if resp.ErrorCode != 0 {
					b.Fatalf("epoch %d: error %d", epoch, resp.ErrorCode)
				}
				for _, sl := range logs {
					for sl.LeaderEpochs().Unwritten() {
						time.Sleep(time.Millisecond)
					}
				}
				written[k] += time.Since(start)
			}
		}
	}
	for k, w := range counts {
		b.ReportMetric(float64(took[k].Milliseconds())/float64(b.N*rounds), fmt.Sprintf("ms/req-%dworkers", w))
		b.ReportMetric(float64(written[k].Milliseconds())/float64(b.N*rounds), fmt.Sprintf("ms/written-%dworkers", w))
	}
}
