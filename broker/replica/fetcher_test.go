package replica

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestTruncationOffset is the table of the follower truncation rule: to the
// smaller of the leader's end of the follower's latest epoch and the
// follower's log end.
func TestTruncationOffset(t *testing.T) {
	// Local cache: epoch 0 at 0, epoch 2 at 5, LEO 9.
	local := func(e int32) (int32, int64) {
		switch {
		case e < 0:
			return -1, -1
		case e < 2:
			return 0, 5
		default:
			return 2, 9
		}
	}
	cases := []struct {
		name             string
		le               int32
		lend, leo, fetch int64
		want             int64
		done             bool
	}{
		{"undefined answer: to the fetch offset (HW)", -1, -1, 9, 4, 4, true},
		{"very old leader: min(Lend, LEO)", -1, 7, 9, 4, 7, true},
		{"same epoch, leader shorter", 2, 7, 9, 4, 7, true},
		{"same epoch, leader longer", 2, 12, 9, 4, 9, true},
		{"follower lacks the leader's epoch: own end, ask again", 1, 6, 9, 4, 5, false},
		{"older common epoch", 0, 3, 9, 4, 3, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, done := truncationOffset(c.le, c.lend, local, c.leo, c.fetch)
			if got != c.want || done != c.done {
				t.Fatalf("got (%d, %v), want (%d, %v)", got, done, c.want, c.done)
			}
		})
	}
}

func TestFetcherID(t *testing.T) {
	// Java: "topic".hashCode() = 110546223; 31*h + 3 = 3426932916 → int32
	// -868034380 → abs 868034380; mod 7 = 3.
	if got := fetcherID(common.TopicPartition{Topic: "topic", Partition: 3}, 7); got != 3 {
		t.Fatalf("fetcher id %d", got)
	}
	for p := range int32(50) {
		if id := fetcherID(common.TopicPartition{Topic: "orders", Partition: p}, 3); id < 0 || id >= 3 {
			t.Fatalf("out of range: %d", id)
		}
	}
}

func produceValues(t *testing.T, m *Manager, acks int16, topic string, values ...string) {
	t.Helper()
	for _, v := range values {
		if r := produceOne(t, m, acks, topic, 0, makeBatch(1, v)); r.ErrorCode != 0 {
			t.Fatalf("produce %q: code %d", v, r.ErrorCode)
		}
	}
}

func (c *miniCluster) waitSame(ids []int32, topic string, end int64) {
	c.t.Helper()
	waitFor(c.t, fmt.Sprintf("replicas %v identical up to %d", ids, end), func() bool {
		ref := c.log(ids[0], topic, 0)
		if ref == nil || ref.LogEndOffset() < end {
			return false
		}
		want := bytesUpTo(c.t, ref, end)
		for _, id := range ids[1:] {
			l := c.log(id, topic, 0)
			if l == nil || l.LogEndOffset() < end || !bytes.Equal(bytesUpTo(c.t, l, end), want) {
				return false
			}
		}
		return true
	})
}

// TestReplicationEndToEndInProcess: three managers, the leader's follower
// fetch handling, two fetchers; acks=all completes once both followers
// have the records, and every replica holds identical bytes below the HW.
func TestReplicationEndToEndInProcess(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() LogStore) {
		c := newMiniClusterWith(t, newStore, nil, 1, 2, 3)
		all := []int32{1, 2, 3}
		c.lairEach(all, "t", 0, 1, 0, all, all)
		leader := c.broker(1)
		produceValues(t, leader, -1, "t", "a", "b", "c")
		st := mustPartition(t, leader, common.TopicPartition{Topic: "t", Partition: 0}).State()
		if st.HighWatermark != 3 {
			t.Fatalf("acks=all returned with HW %d", st.HighWatermark)
		}
		c.waitSame(all, "t", 3)
		// Followers learn the HW from later responses.
		waitFor(t, "follower HWs", func() bool {
			return c.log(2, "t", 0).HighWatermark() == 3 && c.log(3, "t", 0).HighWatermark() == 3
		})
		if _, vals := c.values(3, "t", 0); !slices.Equal(vals, []string{"a", "b", "c"}) {
			t.Fatalf("follower values %v", vals)
		}
		// Stopping a follower: the fetchers stop with StopReplica/role change;
		// leadership moves to 2 and 1 follows it.
		c.lairEach([]int32{2, 1, 3}, "t", 0, 2, 1, []int32{2, 1, 3}, all)
		produceValues(t, c.broker(2), -1, "t", "d")
		c.waitSame([]int32{2, 1, 3}, "t", 4)
		for _, id := range all {
			if e, _ := c.log(id, "t", 0).LatestEpoch(); e != 1 {
				t.Fatalf("broker %d latest epoch %d", id, e)
			}
		}
	})
}

// TestFollowerTruncatesByEpochNotHW checks: "A
// follower never truncates to its own HW (its HW may be stale). It asks the
// leader, in terms of leader epochs, where its log and the leader's log
// stop agreeing, and truncates there."
//
// This is the first divergence scenario. Replicas A (broker 1, leader, epoch 0) and B
// (broker 2). m0 and m1 are on both; A's HW is 2 — m1 was acknowledged
// with acks=all — but no response carrying HW 2 reached B, whose HW is 1.
// B restarts. "Old protocol (truncate to own HW): B truncates to HW 1,
// dropping m1. A then dies …; the controller elects B … the acknowledged m1
// is gone." With leader epochs B asks A for the end of epoch 0, gets 2, and
// keeps m1; when A dies and B leads epoch 1, m1 survives.
func TestScenario1HighWatermarkTruncationWouldLoseAckedWrite(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() LogStore) {
		c := newMiniClusterWith(t, newStore, nil, 1, 2)
		ab := scenario1UpToRestart(t, c)

		// Step 4: B restarts (same log, HW 1) and follows A again.
		c.kill(2)
		c.start(2)
		c.lair(2, "t", 0, 1, 0, ab, ab)
		waitFor(t, "B done truncating", func() bool {
			f := c.broker(2).fetcher.Fetching()
			trunc, ok := f[common.TopicPartition{Topic: "t", Partition: 0}]
			return ok && !trunc
		})
		if leo := c.log(2, "t", 0).LogEndOffset(); leo != 2 {
			t.Fatalf("B truncated to %d; truncating by epoch must keep m1 (HW truncation would leave 1)", leo)
		}
		// A dies; B is elected from the ISR with epoch 1.
		c.kill(1)
		c.lair(2, "t", 0, 2, 1, []int32{2}, ab)
		if _, vals := c.values(2, "t", 0); !slices.Equal(vals, []string{"m0", "m1"}) {
			t.Fatalf("new leader B holds %v; the acknowledged m1 must survive", vals)
		}
		// A returns as follower of B: its epoch 0 ends at 2 on B too; nothing
		// is truncated and the logs agree.
		c.start(1)
		c.lair(1, "t", 0, 2, 1, []int32{2}, ab)
		produceValues(t, c.broker(2), 1, "t", "m2")
		c.waitSame([]int32{2, 1}, "t", 3)
		if _, vals := c.values(1, "t", 0); !slices.Equal(vals, []string{"m0", "m1", "m2"}) {
			t.Fatalf("A holds %v", vals)
		}
	})
}

// scenario1UpToRestart plays steps 1–3 of the first divergence scenario on
// brokers 1 (A) and 2 (B) of c: m0 and m1 are on both, m1 is acknowledged
// (A's HW 2) and B's HW is still 1. It returns the replica list.
func scenario1UpToRestart(t *testing.T, c *miniCluster) []int32 {
	t.Helper()
	ab := []int32{1, 2}
	c.lair(1, "t", 0, 1, 0, ab, ab)
	// B follows without a fetcher for the first steps, so the test decides
	// exactly what B has and knows (steps 1–3 of the table).
	b := c.broker(2)
	b.cfg.Fetcher.(*FetcherManager).Shutdown()
	b.cfg.Fetcher = nil
	c.lair(2, "t", 0, 1, 0, ab, ab)

	a := c.broker(1)
	acked := make(chan kmsg.ProduceResponseTopicPartition, 1)
	produceValues(t, a, 1, "t", "m0")
	go func() { acked <- produceOne(t, a, -1, "t", 0, makeBatch(1, "m1")) }()
	waitFor(t, "m1 appended on A", func() bool { return c.log(1, "t", 0).LogEndOffset() == 2 })
	// B fetches m0, m1 from offset 0 and appends them as follower.
	r := followerFetch(t, a, 2, "t", 0, 0, 0)
	if _, err := b.appendFromLeader(common.TopicPartition{Topic: "t", Partition: 0}, 0, r.RecordBatches, 1, 0); err != nil {
		t.Fatal(err)
	}
	// B's next fetch (offset 2) tells A that B has m1: A.HW = 2, m1 acked.
	followerFetch(t, a, 2, "t", 0, 2, 0)
	if res := <-acked; res.ErrorCode != 0 || res.BaseOffset != 1 {
		t.Fatalf("m1 not acknowledged: %+v", res)
	}
	if hw := c.log(1, "t", 0).HighWatermark(); hw != 2 {
		t.Fatalf("A.HW = %d", hw)
	}
	if hw := c.log(2, "t", 0).HighWatermark(); hw != 1 {
		t.Fatalf("B.HW = %d, the scenario needs B to lag in learning the HW", hw)
	}
	return ab
}

// TestScenario2DivergenceAfterDoubleFailure is the second divergence scenario. A (broker
// 1, leader, epoch 0) and B (broker 2) hold m0, m1; both lose power and B
// loses its unflushed m1. B restarts first and becomes leader in epoch 1
// (cache (0,0),(1,1)); a producer writes m2 at offset 1. A returns as
// follower. "Old protocol: A truncates to its HW 2 — i.e. keeps m1 — and
// fetches from offset 2. Offset 1 now holds m1 on A and m2 on B: the logs
// have diverged silently." With leader epochs: "B answers from its cache:
// epoch 0 ends where epoch 1 starts, offset 1 … A truncates to 1 (dropping
// m1), and re-fetches from offset 1, receiving m2. Logs agree again."
func TestScenario2DivergenceAfterDoubleFailure(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() LogStore) {
		c, ab := newReplicatedPair(t, newStore, "m0", "m1")

		// Step 2: both lose power; B's m1 was only in its page cache.
		c.kill(1)
		c.kill(2)
		if err := c.log(2, "t", 0).TruncateTo(1); err != nil {
			t.Fatal(err)
		}
		if hw := c.log(1, "t", 0).HighWatermark(); hw != 2 {
			t.Fatalf("A's HW %d; the old protocol would keep everything below it", hw)
		}
		// Step 3–4: B alone restarts, leads epoch 1, and takes m2 at offset 1.
		c.start(2)
		c.lair(2, "t", 0, 2, 1, []int32{2}, ab)
		produceValues(t, c.broker(2), -1, "t", "m2")
		if offs, vals := c.values(2, "t", 0); !slices.Equal(vals, []string{"m0", "m2"}) || offs[1] != 1 {
			t.Fatalf("B holds %v at %v", vals, offs)
		}
		// Step 5: A restarts as follower of B.
		c.start(1)
		c.lair(1, "t", 0, 2, 1, []int32{2}, ab)
		c.waitSame([]int32{2, 1}, "t", 2)
		if _, vals := c.values(1, "t", 0); !slices.Equal(vals, []string{"m0", "m2"}) {
			t.Fatalf("A holds %v; it must have dropped m1 and taken m2", vals)
		}
		if e, end := c.log(1, "t", 0).EndOffsetForEpoch(0); e != 0 || end != 1 {
			t.Fatalf("A's epoch cache: epoch 0 ends at %d (epoch %d)", end, e)
		}
	})
}

// TestLeaderWithoutWritesLeavesNoStaleEpoch: a broker leads an epoch and
// writes nothing in it (the preferred leader was bounced, then won the
// preferred election back). Its epoch cache holds an entry the new leader
// never had; following again it must drop that entry, catch up and stay
// byte-identical, instead of asking with the stale epoch forever.
func TestLeaderWithoutWritesLeavesNoStaleEpoch(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() LogStore) {
		c, ab := newReplicatedPair(t, newStore, "m0", "m1")
		// Broker 1 is bounced: 2 leads epoch 1 and takes no write.
		c.kill(1)
		c.lair(2, "t", 0, 2, 1, []int32{2}, ab)
		c.start(1)
		c.lair(1, "t", 0, 2, 1, []int32{2}, ab)
		c.waitSame([]int32{2, 1}, "t", 2)
		// Preferred election: 1 leads epoch 2 from offset 2, 2 follows.
		c.lairEach(ab, "t", 0, 1, 2, ab, ab)
		produceValues(t, c.broker(1), -1, "t", "m2", "m3")
		c.waitSame(ab, "t", 4)
		if _, vals := c.values(2, "t", 0); !slices.Equal(vals, []string{"m0", "m1", "m2", "m3"}) {
			t.Fatalf("follower 2 holds %v", vals)
		}
		if e, ok := c.log(2, "t", 0).LatestEpoch(); !ok || e != 2 {
			t.Fatalf("follower 2's latest epoch is %d (ok %v), want 2", e, ok)
		}
		if e, end := c.log(2, "t", 0).EndOffsetForEpoch(1); e != 0 || end != 2 {
			t.Fatalf("follower 2 still knows epoch 1: EndOffsetForEpoch(1) = %d, %d; want 0, 2", e, end)
		}
	})
}

// TestFetcherStopsOnRoleChange: a follower that becomes leader stops
// fetching, and its fetcher goroutine goes away.
func TestFetcherStopsOnRoleChange(t *testing.T) {
	c := newMiniCluster(t, nil, 1, 2)
	ab := []int32{1, 2}
	c.lairEach(ab, "t", 0, 1, 0, ab, ab)
	f := c.broker(2).fetcher
	waitFor(t, "fetching", func() bool { _, ok := f.Fetching()[common.TopicPartition{Topic: "t", Partition: 0}]; return ok })
	c.lair(2, "t", 0, 2, 1, []int32{2}, ab)
	if n := len(f.Fetching()); n != 0 {
		t.Fatalf("still fetching %d partitions", n)
	}
	f.mu.Lock()
	threads := len(f.threads)
	f.mu.Unlock()
	if threads != 0 {
		t.Fatalf("%d idle fetcher goroutines left", threads)
	}
}

// TestFollowerBehindLeaderLogStart checks: a new
// follower whose log ends before the leader's log start gets
// OFFSET_OUT_OF_RANGE, restarts its log at the leader's log start, copies
// the rest, and then joins the ISR (its log end reached the HW).
func TestFollowerBehindLeaderLogStart(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() LogStore) {
		c, leader := newSoloLeaderCluster(t, newStore)
		for i := range 10 {
			produceValues(t, leader, -1, "t", fmt.Sprint("v", i))
		}
		dr := kmsg.NewPtrDeleteRecordsRequest()
		addDeleteRecordsTopic(dr, "t", 5)
		if r := leader.DeleteRecords(context.Background(), dr); r.Topics[0].Partitions[0].ErrorCode != 0 {
			t.Fatalf("DeleteRecords: %d", r.Topics[0].Partitions[0].ErrorCode)
		}
		c.addFollower2()
		waitFor(t, "follower 2 caught up and in the ISR", func() bool {
			st := mustPartition(t, leader, common.TopicPartition{Topic: "t", Partition: 0}).State()
			return slices.Equal(st.ISR, []int32{1, 2}) && c.log(2, "t", 0).LogEndOffset() == 10
		})
		l2 := c.log(2, "t", 0)
		if l2.LogStartOffset() != 5 {
			t.Fatalf("follower log start %d, want the leader's 5", l2.LogStartOffset())
		}
		if _, vals := c.values(2, "t", 0); !slices.Equal(vals, []string{"v5", "v6", "v7", "v8", "v9"}) {
			t.Fatalf("follower holds %v", vals)
		}
	})
}

// TestFollowerEmptyLogInsideLeaderBatch checks the special case of
// "if a follower with an empty log (LEO = logStart)
// receives a batch that starts before its LEO but ends at or after it …
// it restarts its log at the batch's base offset and appends."
func TestFollowerEmptyLogInsideLeaderBatch(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() LogStore) {
		c, leader := newSoloLeaderCluster(t, newStore)
		if r := produceOne(t, leader, -1, "t", 0, makeBatch(1, "a", "b", "c", "d")); r.ErrorCode != 0 {
			t.Fatal(r.ErrorCode)
		}
		if _, err := c.log(1, "t", 0).DeleteRecordsBefore(2); err != nil {
			t.Fatal(err)
		}
		c.addFollower2()
		waitFor(t, "follower 2 in the ISR", func() bool {
			return slices.Equal(mustPartition(t, leader, common.TopicPartition{Topic: "t", Partition: 0}).State().ISR, []int32{1, 2})
		})
		if !bytes.Equal(bytesUpTo(t, c.log(2, "t", 0), 4), bytesUpTo(t, c.log(1, "t", 0), 4)) {
			t.Fatal("follower does not hold the leader's batch")
		}
	})
}

// TestFetcherLeaderEpochFencing checks: a
// FENCED_LEADER_EPOCH answer for the epoch the follower itself holds means
// its metadata is stale, so the partition leaves the fetcher until the
// next LeaderAndIsr; UNKNOWN_LEADER_EPOCH (the leader is behind) is
// retried until the leader catches up.
func TestFetcherLeaderEpochFencing(t *testing.T) {
	c := newMiniCluster(t, nil, 1, 2)
	ab := []int32{1, 2}
	tp := common.TopicPartition{Topic: "t", Partition: 0}
	// The leader is already at epoch 1; the follower only heard of epoch 0.
	c.lair(1, "t", 0, 1, 1, ab, ab)
	produceValues(t, c.broker(1), 1, "t", "a")
	c.lair(2, "t", 0, 1, 0, ab, ab)
	f := c.broker(2).fetcher
	waitFor(t, "the fenced partition to leave the fetcher", func() bool {
		_, ok := f.Fetching()[tp]
		return !ok
	})
	if leo := c.log(2, "t", 0).LogEndOffset(); leo != 0 {
		t.Fatalf("a fenced follower copied data: LEO %d", leo)
	}
	c.lair(2, "t", 0, 1, 1, ab, ab)
	c.waitSame([]int32{1, 2}, "t", 1)

	// Now the follower is ahead: epoch 2 reaches it before the leader.
	c.lair(2, "t", 0, 1, 2, ab, ab)
	produceValues(t, c.broker(1), 1, "t", "b")
	time.Sleep(50 * time.Millisecond) // several fetch rounds answered UNKNOWN_LEADER_EPOCH
	if _, ok := f.Fetching()[tp]; !ok {
		t.Fatal("UNKNOWN_LEADER_EPOCH must be retried, not drop the partition")
	}
	if leo := c.log(2, "t", 0).LogEndOffset(); leo != 1 {
		t.Fatalf("copied data across an epoch the leader does not know yet: LEO %d", leo)
	}
	c.lair(1, "t", 0, 1, 2, ab, ab)
	c.waitSame([]int32{1, 2}, "t", 2)
}
