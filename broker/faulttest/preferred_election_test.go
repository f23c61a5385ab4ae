package faulttest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker/faulttest"
)

// The preferred leader comes back after a bounce, in the exact sequence of
// a lost-replica bug: replicas 1,2,3 of one partition; broker 1 is stopped
// with SIGTERM (its controlled shutdown hands the leadership to another ISR
// member, which takes a new leader epoch and no write in it) and started
// again; a preferred election gives broker 1 the leadership back with a
// third epoch; then 30 records are produced with acks=all.
//
// The broker that led the middle epoch without writing assigned that epoch
// in its leader epoch cache at the log end. As a follower it must drop the
// entry when it truncates to the common log end (even though no record
// goes), as Kafka's Log.truncateTo does; kept, it asks the new leader with
// the stale epoch forever, is told the epoch diverges at the same offset,
// never receives the new records and leaves the ISR for good. So after the
// produce every replica must reach the leader's log end with identical
// bytes, hold the same leader epoch checkpoint, and the ISR in ZooKeeper
// must be all three replicas again.

// bounceReplicas is the partition's assignment: broker 1 is preferred.
var bounceReplicas = []int32{1, 2, 3}

// produceAcked sends n records "r-<seq>", seq from first on, to partition 0
// of topic with acks=all and returns their acknowledgements.
func produceAcked(t *testing.T, c *faulttest.Cluster, topic string, first, n int) []faulttest.Ack {
	t.Helper()
	cl := c.Client(faulttest.ProducerOpts()...)
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: topic, Partition: 0, Value: []byte(faulttest.RecordID("r", int64(first+i)))}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res := cl.ProduceSync(ctx, recs...)
	if err := res.FirstErr(); err != nil {
		t.Fatalf("acks=all produce of records r-%d..r-%d: %v\n%s", first, first+n-1, err, c.DumpState())
	}
	acks := make([]faulttest.Ack, 0, n)
	for i, r := range res {
		seq := int64(first + i)
		acks = append(acks, faulttest.Ack{ID: faulttest.RecordID("r", seq), Seq: seq, Partition: 0, Offset: r.Record.Offset})
	}
	return acks
}

// bounceFirstReplica creates the topic, writes 50 records, stops broker 1
// with SIGTERM and waits for another replica to lead a new epoch, starts
// broker 1 again and waits for the full ISR. It returns the records written
// and the state of the middle epoch (which no write reaches: nothing is
// produced between the bounce and the election).
func bounceFirstReplica(t *testing.T, c *faulttest.Cluster, topic string) ([]faulttest.Ack, int32, int32) {
	t.Helper()
	c.CreateTopic(topic, map[int32][]int32{0: bounceReplicas}, nil)
	first, _ := c.PartitionState(topic, 0)
	if first.Leader != 1 {
		t.Fatalf("a new topic is led by its preferred replica: leader %d of %v", first.Leader, bounceReplicas)
	}
	acks := produceAcked(t, c, topic, 0, 50)
	c.Stop(c.Index(1))
	var middle int32
	var middleEpoch int32
	c.WaitFor(30*time.Second, "another replica leading a new epoch while broker 1 is down", func() bool {
		st, ok := c.PartitionState(topic, 0)
		middle, middleEpoch = st.Leader, st.LeaderEpoch
		return ok && st.Leader >= 0 && st.Leader != 1 && st.LeaderEpoch > first.LeaderEpoch
	})
	c.Restart(c.Index(1))
	c.WaitFullISR(topic, 1, 45*time.Second)
	t.Logf("broker %d led epoch %d during the bounce", middle, middleEpoch)
	return acks, middle, middleEpoch
}

// checkEveryReplica waits for the ISR in ZooKeeper to hold all three
// replicas led by broker 1, then requires every replica (not only the ISR
// members) to reach the leader's log end with identical bytes holding
// every acknowledged record once, the same leader epoch checkpoint on
// every broker, and the ISR still full afterwards.
func checkEveryReplica(t *testing.T, c *faulttest.Cluster, topic string, acks []faulttest.Ack) {
	t.Helper()
	c.WaitFor(30*time.Second, "the ISR back to all three replicas, led by broker 1", func() bool {
		st, ok := c.PartitionState(topic, 0)
		return ok && st.Leader == 1 && len(st.ISR) == 3
	})
	want := int64(len(acks))
	logDirOf := func(id int32) string { return c.Node(c.Index(id)).LogDir }
	var findings []faulttest.ReplicaFinding
	var hw map[int32]int64
	c.WaitFor(30*time.Second, fmt.Sprintf("every replica at the leader's log end %d with identical bytes", want), func() bool {
		var err error
		hw, err = c.HighWatermarks(topic)
		if err != nil || hw[0] != want {
			return false
		}
		findings = faulttest.ComparePartition(topic, 0, want, bounceReplicas, logDirOf, acks)
		return len(findings) == 0
	})
	var ref string
	c.WaitFor(30*time.Second, "the same leader-epoch-checkpoint on every replica", func() bool {
		var got []string
		for _, id := range bounceReplicas {
			data, err := os.ReadFile(filepath.Join(logDirOf(id), topic+"-0", "leader-epoch-checkpoint"))
			if err != nil {
				return false
			}
			got = append(got, string(data))
		}
		ref = got[0]
		return !slices.ContainsFunc(got, func(s string) bool { return s != ref })
	})
	t.Logf("leader-epoch-checkpoint of every replica: %q", ref)
	if st, ok := c.PartitionState(topic, 0); !ok || len(st.ISR) != 3 {
		t.Fatalf("the ISR shrank again after every replica caught up: %+v", st)
	}
}

// TestPreferredElectionToolAfterBounce: the bounce, then
// kafka-leader-election --election-type preferred (auto.leader.rebalance
// is off in every fault scenario, so nothing else moves the leadership).
func TestPreferredElectionToolAfterBounce(t *testing.T) {
	c := faulttest.Start(t, faulttest.Options{Brokers: 3})
	const topic = "preferred-tool"
	acks, middle, middleEpoch := bounceFirstReplica(t, c, topic)
	if st, _ := c.PartitionState(topic, 0); st.Leader != middle || st.LeaderEpoch != middleEpoch {
		t.Fatalf("leadership moved without an election (auto.leader.rebalance.enable=false): %+v", st)
	}
	out, err := faulttest.RunTool(60*time.Second, "kafka-leader-election", "--bootstrap-server", strings.Join(c.Bootstrap(), ","),
		"--election-type", "preferred", "--topic", topic, "--partition", "0")
	if err != nil {
		t.Fatalf("kafka-leader-election: %v", err)
	}
	t.Logf("kafka-leader-election:\n%s", out)
	preferredBackAndReplicating(t, c, topic, 30*time.Second, "broker 1 leading again", middleEpoch, acks)
}

// preferredBackAndReplicating waits (up to timeout) for broker 1, the
// preferred replica of topic's partition 0, to lead it again in a leader
// epoch after middleEpoch, produces 30 more acknowledged records and checks
// every replica's bytes and the ISR against all acknowledged records.
func preferredBackAndReplicating(t *testing.T, c *faulttest.Cluster, topic string, timeout time.Duration, what string, middleEpoch int32, acks []faulttest.Ack) {
	t.Helper()
	c.WaitFor(timeout, what, func() bool {
		st, ok := c.PartitionState(topic, 0)
		return ok && st.Leader == 1 && st.LeaderEpoch > middleEpoch
	})
	acks = append(acks, produceAcked(t, c, topic, len(acks), 30)...)
	checkEveryReplica(t, c, topic, acks)
}

// TestAutoPreferredElectionAfterBounce: the same bounce with
// auto.leader.rebalance.enable=true and a one-second imbalance check; the
// controller's own preferred election moves the leadership back.
func TestAutoPreferredElectionAfterBounce(t *testing.T) {
	c := faulttest.Start(t, faulttest.Options{Brokers: 3, Overrides: map[string]string{
		"auto.leader.rebalance.enable":            "true",
		"leader.imbalance.check.interval.seconds": "1",
	}})
	const topic = "preferred-auto"
	acks, _, middleEpoch := bounceFirstReplica(t, c, topic)
	preferredBackAndReplicating(t, c, topic, 60*time.Second, "the automatic preferred election: broker 1 leading again", middleEpoch, acks)
}

// TestPreferredElectionAfterBounceUnderLoad bounces broker 1 (SIGTERM, restart):
// controlled shutdown moves its leadership away and, with
// auto.leader.rebalance.enable=false, nothing moves it back, until
// ElectLeaders (PREFERRED, as kafka-leader-election.sh sends) restores the
// preferred leader of every partition.
func TestPreferredElectionAfterBounceUnderLoad(t *testing.T) {
	s := newScenario(t, faulttest.Options{Brokers: 3}, "preferred", faulttest.RoundRobin(3, 3, 3))
	s.c.Stop(0)
	s.progress(100, 30*time.Second, "with broker 1 stopped")
	s.c.Restart(0)
	s.c.WaitFullISR(s.topic, int(s.partitions), 45*time.Second)
	if l := s.leader(0); l == 1 {
		t.Fatalf("partition 0 is led by broker 1 again without an election (auto.leader.rebalance.enable=false)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := s.c.Admin().ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{s.topic: {0: {}, 1: {}, 2: {}}})
	if err != nil {
		t.Fatalf("ElectLeaders: %v", err)
	}
	for p, r := range res[s.topic] {
		if r.Err != nil && !errors.Is(r.Err, kerr.ElectionNotNeeded) {
			t.Errorf("ElectLeaders partition %d: %v %s", p, r.Err, r.ErrMessage)
		}
	}
	assignment := s.c.Assignment(s.topic)
	s.c.WaitFor(20*time.Second, "every partition led by its preferred replica", func() bool {
		for p, rs := range assignment {
			st, ok := s.c.PartitionState(s.topic, p)
			if !ok || st.Leader != rs[0] {
				return false
			}
		}
		return true
	})
	s.progress(150, 20*time.Second, "after the election")
	s.finish()
}

// TestAutoPreferredElectionAfterBounceUnderLoad is the same bounce with
// auto.leader.rebalance.enable=true and a one-second imbalance check: the
// controller itself moves leadership back to the preferred replicas.
func TestAutoPreferredElectionAfterBounceUnderLoad(t *testing.T) {
	s := newScenario(t, faulttest.Options{Brokers: 3, Overrides: map[string]string{
		"auto.leader.rebalance.enable":            "true",
		"leader.imbalance.check.interval.seconds": "1",
	}}, "rebalance", faulttest.RoundRobin(3, 3, 3))
	s.c.Stop(0)
	s.progress(100, 30*time.Second, "with broker 1 stopped")
	s.c.Restart(0)
	assignment := s.c.Assignment(s.topic)
	s.c.WaitFor(60*time.Second, "every partition led by its preferred replica again", func() bool {
		for p, rs := range assignment {
			st, ok := s.c.PartitionState(s.topic, p)
			if !ok || st.Leader != rs[0] || len(st.ISR) != 3 {
				return false
			}
		}
		return true
	})
	s.progress(150, 20*time.Second, "after the rebalance")
	s.finish()
}
