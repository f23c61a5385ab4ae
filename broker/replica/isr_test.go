package replica

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/metadata"
	"github.com/klassik/klassik/broker/purgatory"
	"github.com/klassik/klassik/broker/storage"
	gometrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const testLag = 10 * time.Second

// TestHighWatermarkCandidate checks: "candidate :=
// leaderLEO; for each follower f: if f.leo < candidate and (isCaughtUp(f,
// now) or f ∈ maximalISR): candidate := f.leo".
func TestHighWatermarkCandidate(t *testing.T) {
	now := time.Unix(1000, 0)
	recent := now.Add(-testLag / 2)
	old := now.Add(-2 * testLag)
	rr := func(leo int64, caughtUp time.Time) *remoteReplica {
		r := newRemoteReplica()
		r.leo, r.lastCaughtUp = leo, caughtUp
		return r
	}
	cases := []struct {
		name     string
		replicas []int32
		isr      []int32
		remotes  map[int32]*remoteReplica
		want     int64
	}{
		{"leader alone", []int32{1}, []int32{1}, nil, 10},
		{"ISR follower behind holds the HW", []int32{1, 2}, []int32{1, 2}, map[int32]*remoteReplica{2: rr(7, old)}, 7},
		{"ISR follower at the log end", []int32{1, 2}, []int32{1, 2}, map[int32]*remoteReplica{2: rr(10, old)}, 10},
		{"ISR follower with unknown log end holds the HW", []int32{1, 2}, []int32{1, 2}, map[int32]*remoteReplica{2: newRemoteReplica()}, -1},
		{"ISR follower without state holds the HW", []int32{1, 2}, []int32{1, 2}, nil, -1},
		{"slowest ISR member wins", []int32{1, 2, 3}, []int32{1, 2, 3}, map[int32]*remoteReplica{2: rr(8, recent), 3: rr(5, recent)}, 5},
		{"caught-up follower outside the ISR holds the HW", []int32{1, 2}, []int32{1}, map[int32]*remoteReplica{2: rr(9, recent)}, 9},
		{"lagging follower outside the ISR is ignored", []int32{1, 2}, []int32{1}, map[int32]*remoteReplica{2: rr(3, old)}, 10},
		{"non-replica state is ignored", []int32{1}, []int32{1}, map[int32]*remoteReplica{9: rr(0, now)}, 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := highWatermarkCandidate(1, 10, c.replicas, c.isr, c.remotes, now, testLag); got != c.want {
				t.Fatalf("candidate = %d, want %d", got, c.want)
			}
		})
	}
}

// TestFollowerCaughtUpRule checks: a follower is caught up
// at the time of a fetch at the leader's log end, and "as of its previous
// fetch" when it has now reached what the leader had back then.
func TestFollowerCaughtUpRule(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r := newRemoteReplica()
	r.updateFetchState(5, 0, t0, 10) // behind, first fetch
	if !r.lastCaughtUp.IsZero() {
		t.Fatalf("a first fetch behind the leader is not caught up: %v", r.lastCaughtUp)
	}
	r.updateFetchState(10, 0, t0.Add(time.Second), 12) // reached what the leader had at t0
	if !r.lastCaughtUp.Equal(t0) {
		t.Fatalf("caught up as of the previous fetch: got %v want %v", r.lastCaughtUp, t0)
	}
	r.updateFetchState(12, 0, t0.Add(2*time.Second), 12) // at the log end
	if !r.lastCaughtUp.Equal(t0.Add(2 * time.Second)) {
		t.Fatalf("caught up now: %v", r.lastCaughtUp)
	}
	if !r.isCaughtUp(20, t0.Add(2*time.Second+testLag), testLag) {
		t.Fatal("within replica.lag.time.max.ms of the last catch-up")
	}
	if r.isCaughtUp(20, t0.Add(2*time.Second+testLag+time.Millisecond), testLag) {
		t.Fatal("beyond replica.lag.time.max.ms")
	}
	if !r.isCaughtUp(12, t0.Add(time.Hour), testLag) {
		t.Fatal("at the leader's log end is always caught up")
	}
}

func TestCanJoinIsr(t *testing.T) {
	r := newRemoteReplica()
	if canJoinIsr(r, 0, 0) {
		t.Fatal("unknown log end cannot join")
	}
	r.leo = 5
	for _, c := range []struct {
		hw, es int64
		want   bool
	}{{5, 5, true}, {4, 3, true}, {6, 5, false}, {5, 6, false}} {
		if got := canJoinIsr(r, c.hw, c.es); got != c.want {
			t.Fatalf("leo 5, hw %d, epoch start %d: %v, want %v", c.hw, c.es, got, c.want)
		}
	}
}

// isrFixture is a leader (broker 1) of t-0 with replicas {1,2,3}, driven by
// hand-made follower fetches and a fake clock.
type isrFixture struct {
	m     *Manager
	clock *purgatory.FakeClock
	zk    *fakeIsrUpdater
	reg   gometrics.Registry
}

func newIsrFixture(t *testing.T, isr []int32, mutate func(*Config)) *isrFixture {
	f := &isrFixture{clock: newFakeClock(), zk: &fakeIsrUpdater{}, reg: gometrics.NewRegistry()}
	f.m, _ = newTestManager(t, func(c *Config) {
		c.Clock = f.clock.Now
		c.ReplicaLagTimeMax = testLag
		c.IsrUpdater = f.zk
		c.Metrics = f.reg
		if mutate != nil {
			mutate(c)
		}
	})
	resp := f.m.LeaderAndIsr(context.Background(), lairReq(1, "t", topicIDFor("t"), 0, 1, 3, isr, []int32{1, 2, 3}))
	if c := lairCode(t, resp); c != 0 {
		t.Fatal(c)
	}
	return f
}

// isr is the committed ISR once every ISR change queued so far is applied.
func (f *isrFixture) isr(t *testing.T) []int32 {
	f.m.awaitIsrWrites()
	p, _ := f.m.Partition(common.TopicPartition{Topic: "t", Partition: 0})
	return p.State().ISR
}

func (f *isrFixture) meter(name string) int64 {
	return f.reg.Get("kafka.server.ReplicaManager." + name).(gometrics.Meter).Count()
}

// TestIsrShrinkAndExpand checks: a follower that has not
// caught up for replica.lag.time.max.ms leaves the ISR through a
// conditional write of the partition state; it rejoins once its log end
// reaches the HW and the leader's epoch start offset.
func TestIsrShrinkAndExpand(t *testing.T) {
	f := newIsrFixture(t, []int32{1, 2, 3}, nil)
	tp := common.TopicPartition{Topic: "t", Partition: 0}
	for i := range 3 {
		if r := produceOne(t, f.m, 1, "t", 0, makeBatch(1, "v"+string(rune('0'+i)))); r.ErrorCode != 0 {
			t.Fatal(r)
		}
	}
	// Follower 2 keeps up, follower 3 never fetches.
	followerFetch(t, f.m, 2, "t", 0, 3, 3)
	f.clock.Advance(testLag / 2)
	f.m.MaybeShrinkIsr()
	if got := f.isr(t); !slices.Equal(got, []int32{1, 2, 3}) {
		t.Fatalf("no shrink within the lag time: %v", got)
	}
	followerFetch(t, f.m, 2, "t", 0, 3, 3)
	f.clock.Advance(testLag/2 + time.Millisecond)
	f.m.MaybeShrinkIsr()
	if got := f.isr(t); !slices.Equal(got, []int32{1, 2}) {
		t.Fatalf("ISR after follower 3 lagged: %v", got)
	}
	w, n := f.zk.lastWrite()
	if n != 1 || w.Leader != 1 || w.LeaderEpoch != 3 || !slices.Equal(w.ISR, []int32{1, 2}) || w.ControllerEpoch != 1 {
		t.Fatalf("ZooKeeper write: %+v (%d writes)", w, n)
	}
	if st := mustPartition(t, f.m, tp).State(); st.PartitionEpoch != w.ZkVersion+1 {
		t.Fatalf("partition epoch must follow the written version: %d", st.PartitionEpoch)
	}
	if f.meter("IsrShrinksPerSec") != 1 {
		t.Fatal("IsrShrinksPerSec not marked")
	}
	if g := f.reg.Get("kafka.server.ReplicaManager.UnderReplicatedPartitions").(gometrics.Gauge).Value(); g != 1 {
		t.Fatalf("UnderReplicatedPartitions = %d", g)
	}
	// HW is 3 (follower 2 has everything). Follower 3 fetches from 0: not
	// yet eligible; at 3 it is.
	followerFetch(t, f.m, 3, "t", 0, 0, 3)
	if got := f.isr(t); !slices.Equal(got, []int32{1, 2}) {
		t.Fatalf("a follower below the HW must not join: %v", got)
	}
	followerFetch(t, f.m, 3, "t", 0, 3, 3)
	if got := f.isr(t); !slices.Equal(got, []int32{1, 2, 3}) {
		t.Fatalf("ISR after follower 3 caught up: %v", got)
	}
	if f.meter("IsrExpandsPerSec") != 1 {
		t.Fatal("IsrExpandsPerSec not marked")
	}
	// Notifications are batched: none during the 5 s blackout after a
	// change, then one listing the partition.
	f.m.MaybePropagateIsrChanges()
	if len(f.zk.notified) != 0 {
		t.Fatalf("notification written during the blackout: %v", f.zk.notified)
	}
	f.clock.Advance(isrChangePropagationBlackout)
	f.m.MaybePropagateIsrChanges()
	f.m.MaybePropagateIsrChanges()
	if len(f.zk.notified) != 1 || !slices.Equal(f.zk.notified[0], []common.TopicPartition{tp}) {
		t.Fatalf("notifications: %v", f.zk.notified)
	}
}

func mustPartition(t *testing.T, m *Manager, tp common.TopicPartition) *Partition {
	t.Helper()
	p, ok := m.Partition(tp)
	if !ok {
		t.Fatalf("%v not hosted", tp)
	}
	return p
}

// TestIsrExpandNeedsEpochStart checks: "a replica may
// join the ISR only once its LEO ≥ the leader's epoch start offset", even
// when it has reached the HW.
func TestIsrExpandNeedsEpochStart(t *testing.T) {
	clock := newFakeClock()
	store := newMemStore()
	l, _ := store.GetOrCreateLog(common.TopicPartition{Topic: "t", Partition: 0}, storage.DefaultLogConfig())
	// Records from an earlier epoch; the HW checkpoint says 1.
	if _, err := l.AppendAsLeader(makeBatch(1, "a", "b", "c"), 2); err != nil {
		t.Fatal(err)
	}
	l.SetHighWatermark(1)
	m := New(Config{BrokerID: 1, Logger: quietLogger(), Clock: clock.Now, ReplicaLagTimeMax: testLag}, store, metadata.New(1, "test"))
	t.Cleanup(m.Shutdown)
	// Leader with ISR {1,2}; follower 3 outside.
	if c := lairCode(t, m.LeaderAndIsr(context.Background(), lairReq(1, "t", topicIDFor("t"), 0, 1, 3, []int32{1, 2}, []int32{1, 2, 3}))); c != 0 {
		t.Fatal(c)
	}
	st := mustPartition(t, m, common.TopicPartition{Topic: "t", Partition: 0}).State()
	if st.EpochStartOffset != 3 || st.HighWatermark != 1 {
		t.Fatalf("epoch start %d, HW %d", st.EpochStartOffset, st.HighWatermark)
	}
	followerFetch(t, m, 3, "t", 0, 2, 3) // ≥ HW 1, < epoch start 3
	if got := mustPartition(t, m, common.TopicPartition{Topic: "t", Partition: 0}).State().ISR; !slices.Equal(got, []int32{1, 2}) {
		t.Fatalf("joined below the epoch start offset: %v", got)
	}
	followerFetch(t, m, 3, "t", 0, 3, 3)
	if got := mustPartition(t, m, common.TopicPartition{Topic: "t", Partition: 0}).State().ISR; !slices.Equal(got, []int32{1, 2, 3}) {
		t.Fatalf("did not join at the epoch start offset: %v", got)
	}
}

// TestIsrConflictWaitsForLeaderAndIsr checks: on a
// stale zkVersion the leader "fails (stay pending until the next
// LeaderAndIsr)" instead of retrying blindly.
func TestIsrConflictWaitsForLeaderAndIsr(t *testing.T) {
	f := newIsrFixture(t, []int32{1, 2, 3}, nil)
	f.zk.conflict = true
	f.clock.Advance(testLag + time.Millisecond)
	f.m.MaybeShrinkIsr()
	if got := f.isr(t); !slices.Equal(got, []int32{1, 2, 3}) {
		t.Fatalf("a rejected write must not change the ISR: %v", got)
	}
	f.m.MaybeShrinkIsr()
	if _, n := f.zk.lastWrite(); n != 0 {
		t.Fatalf("retried while pending: %d writes", n)
	}
	// The controller's new state arrives; the leader works from it.
	if c := lairCode(t, f.m.LeaderAndIsr(context.Background(), lairReq(1, "t", topicIDFor("t"), 0, 1, 4, []int32{1, 2}, []int32{1, 2, 3}))); c != 0 {
		t.Fatal(c)
	}
	f.clock.Advance(testLag + time.Millisecond)
	f.m.MaybeShrinkIsr()
	if got := f.isr(t); !slices.Equal(got, []int32{1}) {
		t.Fatalf("after the new LeaderAndIsr the shrink proceeds: %v", got)
	}
	if w, n := f.zk.lastWrite(); n != 1 || w.LeaderEpoch != 4 {
		t.Fatalf("write %+v (%d)", w, n)
	}
}

// TestAcksAllWaitsForIsr checks: an acks=all produce
// completes once the HW passes its last offset.
func TestAcksAllWaitsForIsr(t *testing.T) {
	f := newIsrFixture(t, []int32{1, 2, 3}, nil)
	got := make(chan kmsg.ProduceResponseTopicPartition, 1)
	go func() { got <- produceOne(t, f.m, -1, "t", 0, makeBatch(1, "a", "b")) }()
	waitFor(t, "append", func() bool {
		return mustPartition(t, f.m, common.TopicPartition{Topic: "t", Partition: 0}).State().LogEndOffset == 2
	})
	followerFetch(t, f.m, 2, "t", 0, 2, 3)
	select {
	case r := <-got:
		t.Fatalf("completed with follower 3 missing: %+v", r)
	case <-time.After(20 * time.Millisecond):
	}
	followerFetch(t, f.m, 3, "t", 0, 2, 3)
	select {
	case r := <-got:
		if r.ErrorCode != 0 || r.BaseOffset != 0 {
			t.Fatalf("%+v", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("acks=all did not complete after every ISR member fetched")
	}
	if hw := mustPartition(t, f.m, common.TopicPartition{Topic: "t", Partition: 0}).State().HighWatermark; hw != 2 {
		t.Fatalf("HW %d", hw)
	}
}

// TestAcksAllTimeout: the records stay in the log; the client gets
// REQUEST_TIMED_OUT.
func TestAcksAllTimeout(t *testing.T) {
	f := newIsrFixture(t, []int32{1, 2}, nil)
	req := produceReq(-1, "t", 0, makeBatch(1, "a"))
	req.TimeoutMillis = 30
	resp := f.m.Produce(context.Background(), req)
	if c := resp.Topics[0].Partitions[0].ErrorCode; c != kerr.RequestTimedOut.Code {
		t.Fatalf("code %d", c)
	}
	st := mustPartition(t, f.m, common.TopicPartition{Topic: "t", Partition: 0}).State()
	if st.LogEndOffset != 1 || st.HighWatermark != 0 {
		t.Fatalf("LEO %d HW %d", st.LogEndOffset, st.HighWatermark)
	}
}

// TestNotEnoughReplicasAfterAppend checks: "HW ≥
// requiredOffset → done; error NONE if len(maximal ISR) ≥
// min.insync.replicas, otherwise NOT_ENOUGH_REPLICAS_AFTER_APPEND — the
// data is in the log … (typically the ISR shrank while it waited)".
func TestNotEnoughReplicasAfterAppend(t *testing.T) {
	f := newIsrFixture(t, []int32{1, 2}, func(c *Config) {
		c.MinInsyncReplicas = func(string) int { return 2 }
	})
	got := make(chan kmsg.ProduceResponseTopicPartition, 1)
	go func() { got <- produceOne(t, f.m, -1, "t", 0, makeBatch(1, "a")) }()
	waitFor(t, "append", func() bool {
		return mustPartition(t, f.m, common.TopicPartition{Topic: "t", Partition: 0}).State().LogEndOffset == 1
	})
	f.clock.Advance(testLag + time.Millisecond)
	f.m.MaybeShrinkIsr() // follower 2 never fetched: ISR {1}, HW → 1
	r := <-got
	if r.ErrorCode != kerr.NotEnoughReplicasAfterAppend.Code {
		t.Fatalf("code %d", r.ErrorCode)
	}
	// And now before the append: NOT_ENOUGH_REPLICAS, nothing written.
	r = produceOne(t, f.m, -1, "t", 0, makeBatch(1, "b"))
	if r.ErrorCode != kerr.NotEnoughReplicas.Code {
		t.Fatalf("code %d", r.ErrorCode)
	}
	if leo := mustPartition(t, f.m, common.TopicPartition{Topic: "t", Partition: 0}).State().LogEndOffset; leo != 1 {
		t.Fatalf("NOT_ENOUGH_REPLICAS appended: LEO %d", leo)
	}
}

// TestAcksAllLeadershipLost: a waiting produce answers
// NOT_LEADER_OR_FOLLOWER when the partition stops being led here.
func TestAcksAllLeadershipLost(t *testing.T) {
	f := newIsrFixture(t, []int32{1, 2}, nil)
	got := make(chan kmsg.ProduceResponseTopicPartition, 1)
	go func() { got <- produceOne(t, f.m, -1, "t", 0, makeBatch(1, "a")) }()
	waitFor(t, "append", func() bool {
		return mustPartition(t, f.m, common.TopicPartition{Topic: "t", Partition: 0}).State().LogEndOffset == 1
	})
	if c := lairCode(t, f.m.LeaderAndIsr(context.Background(), lairReq(1, "t", topicIDFor("t"), 0, 2, 4, []int32{2}, []int32{1, 2, 3}))); c != 0 {
		t.Fatal(c)
	}
	if r := <-got; r.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("code %d", r.ErrorCode)
	}
}

// TestLeaderEpochFencing checks the leader side.
func TestLeaderEpochFencing(t *testing.T) {
	f := newIsrFixture(t, []int32{1, 2}, nil)
	if r := followerFetch(t, f.m, 2, "t", 0, 0, 2); r.ErrorCode != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("older epoch: %d", r.ErrorCode)
	}
	if r := followerFetch(t, f.m, 2, "t", 0, 0, 4); r.ErrorCode != kerr.UnknownLeaderEpoch.Code {
		t.Fatalf("newer epoch: %d", r.ErrorCode)
	}
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.Version = 3
	req.ReplicaID = 2
	rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
	rt.Topic = "t"
	rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
	rp.CurrentLeaderEpoch = 2
	rp.LeaderEpoch = 3
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	if c := f.m.OffsetForLeaderEpoch(context.Background(), req).Topics[0].Partitions[0].ErrorCode; c != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("OffsetForLeaderEpoch with an older epoch: %d", c)
	}
	// A follower answers NOT_LEADER_OR_FOLLOWER to produce and follower fetches.
	if c := lairCode(t, f.m.LeaderAndIsr(context.Background(), lairReq(1, "t", topicIDFor("t"), 0, 2, 5, []int32{2}, []int32{1, 2, 3}))); c != 0 {
		t.Fatal(c)
	}
	if r := produceOne(t, f.m, 1, "t", 0, makeBatch(1, "x")); r.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("produce to follower: %d", r.ErrorCode)
	}
	if r := followerFetch(t, f.m, 3, "t", 0, 0, 5); r.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("follower fetch from follower: %d", r.ErrorCode)
	}
}

// TestWaitForReplication: a coordinator write with acks=-1 is durable once
// the ISR has it.
func TestWaitForReplication(t *testing.T) {
	f := newIsrFixture(t, []int32{1, 2}, nil)
	tp := common.TopicPartition{Topic: "t", Partition: 0}
	info, err := f.m.AppendToLocalLog(tp, makeBatch(1, "offset-commit"), -1)
	if err != nil {
		t.Fatal(err)
	}
	if c := f.m.WaitForReplication(context.Background(), tp, info.LastOffset, 20*time.Millisecond); c != kerr.RequestTimedOut.Code {
		t.Fatalf("before the follower fetched: %d", c)
	}
	followerFetch(t, f.m, 2, "t", 0, info.LastOffset+1, 3)
	if c := f.m.WaitForReplication(context.Background(), tp, info.LastOffset, time.Second); c != 0 {
		t.Fatalf("after the follower fetched: %d", c)
	}
}

// TestIsrChangesBatchedAndAsync checks that ISR changes never hold the
// request that caused them and are written in few round trips: a
// follower's fetch of many partitions returns while their expansions are
// still being written (the updater blocks), the expansions queued meanwhile
// go out in one further call, and the shrink check hands all its shrinks to
// the writer at once too. While a shrink is pending the HW still waits for
// the follower being removed.
func TestIsrChangesBatchedAndAsync(t *testing.T) {
	const n = 50
	f := newIsrFixture(t, []int32{1, 2}, nil)
	for p := int32(1); p < n; p++ {
		if c := lairCode(t, f.m.LeaderAndIsr(context.Background(), lairReq(1, "t", topicIDFor("t"), p, 1, 3, []int32{1, 2}, []int32{1, 2, 3}))); c != 0 {
			t.Fatal(c)
		}
	}
	isrOf := func(p int32) []int32 {
		return mustPartition(t, f.m, common.TopicPartition{Topic: "t", Partition: p}).State().ISR
	}
	gated := func() (release func(), entered chan int) {
		gate, entered := make(chan struct{}), make(chan int, 2*n)
		f.zk.mu.Lock()
		f.zk.gate, f.zk.entered = gate, entered
		f.zk.mu.Unlock()
		return func() { close(gate) }, entered
	}
	calls := func() int {
		f.zk.mu.Lock()
		defer f.zk.mu.Unlock()
		return f.zk.calls
	}

	// Follower 3 fetches every partition at its log end (0): each may join.
	release, entered := gated()
	req := fetchReq("t", 0, 0, func(q *kmsg.FetchRequest) {
		q.ReplicaID = 3
		q.Topics[0].Partitions = nil
		for p := int32(0); p < n; p++ {
			fp := fetchPartition(p, 0)
			fp.CurrentLeaderEpoch, fp.LastFetchedEpoch = 3, -1
			q.Topics[0].Partitions = append(q.Topics[0].Partitions, fp)
		}
	})
	fetched := make(chan *kmsg.FetchResponse, 1)
	go func() { fetched <- doFetch(t, f.m, req) }()
	select {
	case resp := <-fetched:
		if got := len(resp.Topics[0].Partitions); got != n {
			t.Fatalf("fetch answered %d partitions", got)
		}
	case <-time.After(time.Minute):
		t.Fatal("the follower's fetch waited for its ISR writes")
	}
	first := <-entered // the writer is inside its first call, held
	if first < 1 || first > n {
		t.Fatalf("first batch of %d", first)
	}
	for p := int32(0); p < n; p++ {
		if got := isrOf(p); !slices.Equal(got, []int32{1, 2}) {
			t.Fatalf("t-%d: ISR %v before its write was answered", p, got)
		}
	}
	release()
	f.m.awaitIsrWrites()
	for p := int32(0); p < n; p++ {
		if got := isrOf(p); !slices.Equal(got, []int32{1, 2, 3}) {
			t.Fatalf("t-%d: ISR %v after the writes", p, got)
		}
	}
	if c := calls(); c > 2 {
		t.Fatalf("%d expansions took %d calls, want at most 2", n, c)
	}
	if _, w := f.zk.lastWrite(); w != n {
		t.Fatalf("%d writes for %d expansions", w, n)
	}
	if got := f.meter("IsrExpandsPerSec"); got != n {
		t.Fatalf("IsrExpandsPerSec %d", got)
	}

	// t-0 gets a record that only follower 2 fetches later; then both
	// followers of t-0 lag and it shrinks to {1}; on the others follower 2
	// never fetched, follower 3 is at the (empty) log end: {1,3}.
	tp0 := common.TopicPartition{Topic: "t", Partition: 0}
	if r := produceOne(t, f.m, 1, "t", 0, makeBatch(1, "a")); r.ErrorCode != 0 {
		t.Fatal(r)
	}
	f.clock.Advance(testLag + time.Millisecond)
	before := calls()
	release, entered = gated()
	f.m.MaybeShrinkIsr() // returns with the writes held
	<-entered
	// Follower 2 catches up during the pending shrink: the HW still
	// counts follower 3, which the stored ISR holds.
	followerFetch(t, f.m, 2, "t", 0, 1, 3)
	if hw := mustPartition(t, f.m, tp0).State().HighWatermark; hw != 0 {
		t.Fatalf("HW %d moved past a follower of the stored ISR", hw)
	}
	release()
	f.m.awaitIsrWrites()
	for p := int32(0); p < n; p++ {
		want := []int32{1, 3}
		if p == 0 {
			want = []int32{1}
		}
		if got := isrOf(p); !slices.Equal(got, want) {
			t.Fatalf("t-%d: ISR %v after the shrink, want %v", p, got, want)
		}
	}
	if c := calls() - before; c > 2 {
		t.Fatalf("%d shrinks took %d calls, want at most 2", n, c)
	}
	if hw := mustPartition(t, f.m, tp0).State().HighWatermark; hw != 1 {
		t.Fatalf("HW %d after the shrink, want 1", hw)
	}
}
