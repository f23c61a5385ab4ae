package replica

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type fakeFetcher struct {
	mu      sync.Mutex
	added   map[common.TopicPartition]FollowerStart
	removed []common.TopicPartition
}

func (f *fakeFetcher) AddPartitions(parts map[common.TopicPartition]FollowerStart) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.added == nil {
		f.added = make(map[common.TopicPartition]FollowerStart)
	}
	for tp, s := range parts {
		f.added[tp] = s
	}
}

func (f *fakeFetcher) RemovePartitions(tps []common.TopicPartition) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.removed = append(f.removed, tps...)
}

type fakeMeta struct {
	mu      sync.Mutex
	updates int
	deleted []common.TopicPartition
	known   map[common.TopicPartition]bool
}

func (f *fakeMeta) Update(req *kmsg.UpdateMetadataRequest) []common.TopicPartition {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.updates++
	var del []common.TopicPartition
	for _, ts := range req.TopicStates {
		for _, ps := range ts.PartitionStates {
			if ps.Leader == -2 {
				del = append(del, common.TopicPartition{Topic: ts.Topic, Partition: ps.Partition})
			}
		}
	}
	f.deleted = append(f.deleted, del...)
	return del
}

func (f *fakeMeta) HasPartition(topic string, p int32) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.known[common.TopicPartition{Topic: topic, Partition: p}]
}

func (f *fakeMeta) TopicName([16]byte) (string, bool) { return "", false }

// "If ControllerEpoch < highest controller epoch seen → STALE_CONTROLLER_EPOCH
// (LeaderAndIsr, StopReplica) or a failure (UpdateMetadata). Otherwise record
// it as the highest seen."
func TestStaleControllerEpochRejected(t *testing.T) {
	m, _ := newTestManager(t, nil)
	ctx := context.Background()
	if m.ControllerEpoch() != -1 {
		t.Fatalf("initial controller epoch %d", m.ControllerEpoch())
	}
	if c := lairCode(t, m.LeaderAndIsr(ctx, lairReq(5, "t", topicIDFor("t"), 0, 1, 0, []int32{1}, []int32{1}))); c != 0 {
		t.Fatalf("epoch 5: %d", c)
	}
	if m.ControllerEpoch() != 5 {
		t.Fatalf("controller epoch %d, want 5", m.ControllerEpoch())
	}
	old := lairReq(4, "t", topicIDFor("t"), 0, 1, 9, []int32{1}, []int32{1})
	resp := m.LeaderAndIsr(ctx, old)
	if resp.ErrorCode != kerr.StaleControllerEpoch.Code {
		t.Fatalf("LeaderAndIsr from epoch 4: top-level %d", resp.ErrorCode)
	}
	if p, _ := m.Partition(common.TopicPartition{Topic: "t", Partition: 0}); p.State().LeaderEpoch != 0 {
		t.Fatal("stale LeaderAndIsr changed the partition")
	}

	sr := stopReplicaReq(3, "t", -1, false)
	sr.ControllerEpoch = 4
	if r := m.StopReplica(ctx, sr); r.ErrorCode != kerr.StaleControllerEpoch.Code {
		t.Fatalf("StopReplica from epoch 4: %d", r.ErrorCode)
	}
	if r := m.UpdateMetadata(ctx, updateMetadataReq(4, -1)); r.ErrorCode != kerr.StaleControllerEpoch.Code {
		t.Fatalf("UpdateMetadata from epoch 4: %d", r.ErrorCode)
	}
	// A newer controller is accepted and recorded.
	if r := m.UpdateMetadata(ctx, updateMetadataReq(6, -1)); r.ErrorCode != 0 || m.ControllerEpoch() != 6 {
		t.Fatalf("UpdateMetadata from epoch 6: %d, epoch %d", r.ErrorCode, m.ControllerEpoch())
	}
}

func TestStaleBrokerEpochRejected(t *testing.T) {
	m, _ := newTestManager(t, func(c *Config) { c.BrokerEpoch = func() int64 { return 100 } })
	ctx := context.Background()
	req := lairReq(1, "t", topicIDFor("t"), 0, 1, 0, []int32{1}, []int32{1})
	req.BrokerEpoch = 99
	if r := m.LeaderAndIsr(ctx, req); r.ErrorCode != kerr.StaleBrokerEpoch.Code {
		t.Fatalf("LeaderAndIsr for an old incarnation: %d", r.ErrorCode)
	}
	req.BrokerEpoch = 101 // larger is accepted: the controller may learn it first
	if c := lairCode(t, m.LeaderAndIsr(ctx, req)); c != 0 {
		t.Fatalf("newer broker epoch: %d", c)
	}
	sr := stopReplicaReq(3, "t", -1, false)
	sr.BrokerEpoch = 50
	if r := m.StopReplica(ctx, sr); r.ErrorCode != kerr.StaleBrokerEpoch.Code {
		t.Fatalf("StopReplica: %d", r.ErrorCode)
	}
	if r := m.UpdateMetadata(ctx, updateMetadataReq(1, 50)); r.ErrorCode != kerr.StaleBrokerEpoch.Code {
		t.Fatalf("UpdateMetadata: %d", r.ErrorCode)
	}
	// -1 skips the check.
	if r := m.UpdateMetadata(ctx, updateMetadataReq(1, -1)); r.ErrorCode != 0 {
		t.Fatalf("UpdateMetadata with broker epoch -1: %d", r.ErrorCode)
	}
}

func TestLeaderAndIsrTransitions(t *testing.T) {
	ff := &fakeFetcher{}
	m, _ := newTestManager(t, func(c *Config) { c.Fetcher = ff })
	ctx := context.Background()
	tp := common.TopicPartition{Topic: "t", Partition: 0}
	id := topicIDFor("t")

	// Leader at epoch 1.
	if c := lairCode(t, m.LeaderAndIsr(ctx, lairReq(1, "t", id, 0, 1, 1, []int32{1, 2}, []int32{1, 2}))); c != 0 {
		t.Fatal(c)
	}
	p, _ := m.Partition(tp)
	st := p.State()
	if !st.IsLeader || st.LeaderEpoch != 1 || !slices.Equal(st.ISR, []int32{1, 2}) || st.EpochStartOffset != 0 || st.TopicID != id {
		t.Fatalf("after becoming leader: %+v", st)
	}
	if r := produceOne(t, m, 1, "t", 0, makeBatch(1, "a", "b")); r.ErrorCode != 0 {
		t.Fatal(r.ErrorCode)
	}
	// Same epoch again and an older one: ignored with STALE_CONTROLLER_EPOCH.
	for _, e := range []int32{1, 0} {
		if c := lairCode(t, m.LeaderAndIsr(ctx, lairReq(1, "t", id, 0, 2, e, []int32{2}, []int32{1, 2}))); c != kerr.StaleControllerEpoch.Code {
			t.Fatalf("leader epoch %d: %d", e, c)
		}
	}
	if !p.IsLeader() {
		t.Fatal("ignored request changed the role")
	}
	// Different topic id: INCONSISTENT_TOPIC_ID.
	if c := lairCode(t, m.LeaderAndIsr(ctx, lairReq(1, "t", [16]byte{7}, 0, 2, 5, []int32{2}, []int32{1, 2}))); c != kerr.InconsistentTopicID.Code {
		t.Fatalf("other topic id: %d", c)
	}

	// Become follower of broker 2 at epoch 2: produce refused, fetcher
	// told to fetch from the log end.
	toFollower := lairReq(1, "t", id, 0, 2, 2, []int32{2, 1}, []int32{1, 2})
	ll := kmsg.NewLeaderAndISRRequestLiveLeader()
	ll.BrokerID, ll.Host, ll.Port = 2, "broker2", 9093
	toFollower.LiveLeaders = append(toFollower.LiveLeaders, ll)
	if c := lairCode(t, m.LeaderAndIsr(ctx, toFollower)); c != 0 {
		t.Fatal(c)
	}
	st = p.State()
	if st.IsLeader || st.Leader != 2 || st.LeaderEpoch != 2 || len(st.ISR) != 0 || st.EpochStartOffset != -1 {
		t.Fatalf("after becoming follower: %+v", st)
	}
	if r := produceOne(t, m, 1, "t", 0, makeBatch(1, "c")); r.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("produce to follower: %d", r.ErrorCode)
	}
	if fp := onlyFetchPartition(t, doFetch(t, m, fetchReq("t", 0, 0))); fp.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("consumer fetch from follower: %d", fp.ErrorCode)
	}
	ff.mu.Lock()
	start, ok := ff.added[tp]
	ff.mu.Unlock()
	if !ok || start.LeaderID != 2 || start.LeaderHost != "broker2" || start.LeaderPort != 9093 ||
		start.LeaderEpoch != 2 || start.FetchOffset != 2 || start.TopicID != id {
		t.Fatalf("fetcher start: %+v (ok %v)", start, ok)
	}

	// Leader again at epoch 3: the fetcher stops, the epoch starts at the
	// log end.
	if c := lairCode(t, m.LeaderAndIsr(ctx, lairReq(1, "t", id, 0, 1, 3, []int32{1}, []int32{1, 2}))); c != 0 {
		t.Fatal(c)
	}
	ff.mu.Lock()
	removed := slices.Clone(ff.removed)
	ff.mu.Unlock()
	if !slices.Contains(removed, tp) {
		t.Fatal("fetcher not stopped when becoming leader")
	}
	st = p.State()
	if !st.IsLeader || st.EpochStartOffset != 2 {
		t.Fatalf("leader again: %+v", st)
	}
	if e, end := p.Log().EndOffsetForEpoch(1); e != 1 || end != 2 {
		t.Fatalf("epoch 1 ends at (%d, %d), want (1, 2)", e, end)
	}

	// Follower of a leader that is not live: no fetcher.
	if c := lairCode(t, m.LeaderAndIsr(ctx, lairReq(1, "w", topicIDFor("w"), 0, 3, 0, []int32{3, 1}, []int32{3, 1}))); c != 0 {
		t.Fatal(c)
	}
	ff.mu.Lock()
	_, fetching := ff.added[common.TopicPartition{Topic: "w", Partition: 0}]
	ff.mu.Unlock()
	if fetching {
		t.Fatal("fetcher started for a partition whose leader is not live")
	}

	// Not in the replica set: UNKNOWN_TOPIC_OR_PARTITION.
	if c := lairCode(t, m.LeaderAndIsr(ctx, lairReq(1, "u", topicIDFor("u"), 0, 2, 0, []int32{2, 3}, []int32{2, 3}))); c != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("not a replica: %d", c)
	}
}

func TestLeaderAndIsrResponseVersions(t *testing.T) {
	m, _ := newTestManager(t, nil)
	ctx := context.Background()
	// v0/v1 list partition states flat with their topic.
	req := kmsg.NewPtrLeaderAndISRRequest()
	req.Version = 1
	req.ControllerEpoch = 1
	for _, p := range []int32{0, 1} {
		ps := kmsg.NewLeaderAndISRRequestTopicPartition()
		ps.Topic = "old"
		ps.Partition = p
		ps.Leader = 1
		ps.LeaderEpoch = 0
		ps.ISR = []int32{1}
		ps.Replicas = []int32{1}
		req.PartitionStates = append(req.PartitionStates, ps)
	}
	resp := m.LeaderAndIsr(ctx, req)
	if len(resp.Partitions) != 2 || resp.Partitions[0].Topic != "old" || resp.Partitions[1].Partition != 1 || resp.Partitions[1].ErrorCode != 0 {
		t.Fatalf("v1 response: %+v", resp)
	}
	// v4: flat response even though the request is grouped.
	r4 := lairReq(1, "v4", [16]byte{}, 0, 1, 0, []int32{1}, []int32{1})
	r4.Version = 4
	resp = m.LeaderAndIsr(ctx, r4)
	if len(resp.Partitions) != 1 || resp.Partitions[0].Topic != "v4" || len(resp.Topics) != 0 {
		t.Fatalf("v4 response: %+v", resp)
	}
	// v5+: grouped by topic id.
	resp = m.LeaderAndIsr(ctx, lairReq(1, "v6", topicIDFor("v6"), 0, 1, 0, []int32{1}, []int32{1}))
	if len(resp.Topics) != 1 || resp.Topics[0].TopicID != topicIDFor("v6") || len(resp.Partitions) != 0 {
		t.Fatalf("v6 response: %+v", resp)
	}
}

func TestStopReplicaEpochsAndFetcher(t *testing.T) {
	ff := &fakeFetcher{}
	m, store := newTestManager(t, func(c *Config) { c.Fetcher = ff })
	ctx := context.Background()
	makeLeader(t, m, "t", 0, 5)

	stop := func(version int16, epoch int32, del bool, partitions ...int32) *kmsg.StopReplicaResponse {
		return m.StopReplica(ctx, stopReplicaReq(version, "t", epoch, del, partitions...))
	}
	// Older leader epoch: FENCED_LEADER_EPOCH, nothing changes.
	if r := stop(3, 4, true, 0); r.Partitions[0].ErrorCode != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("older epoch: %+v", r)
	}
	if _, ok := m.Partition(common.TopicPartition{Topic: "t", Partition: 0}); !ok {
		t.Fatal("fenced StopReplica removed the partition")
	}
	// Without delete: stays hosted, fetcher stopped.
	if r := stop(3, 5, false, 0); r.Partitions[0].ErrorCode != 0 {
		t.Fatalf("stop without delete: %+v", r)
	}
	if _, ok := m.Partition(common.TopicPartition{Topic: "t", Partition: 0}); !ok {
		t.Fatal("StopReplica without delete removed the partition")
	}
	ff.mu.Lock()
	if !slices.Contains(ff.removed, common.TopicPartition{Topic: "t", Partition: 0}) {
		t.Error("fetcher not told to stop")
	}
	ff.mu.Unlock()
	// Unhosted partition: NONE (v1 request-level delete flag).
	if r := stop(1, -1, true, 7); r.Partitions[0].ErrorCode != 0 {
		t.Fatalf("unhosted: %+v", r)
	}
	// v1 delete of the hosted partition.
	if r := stop(1, -1, true, 0); r.Partitions[0].ErrorCode != 0 {
		t.Fatalf("delete: %+v", r)
	}
	if _, ok := m.Partition(common.TopicPartition{Topic: "t", Partition: 0}); ok {
		t.Fatal("partition still hosted after delete")
	}
	if !slices.Contains(store.deleted, common.TopicPartition{Topic: "t", Partition: 0}) {
		t.Fatal("log not deleted")
	}
}

func TestStopReplicaWakesParkedFetch(t *testing.T) {
	m, _ := newT0Leader(t)
	done := make(chan *kmsg.FetchResponse, 1)
	go func() {
		raw, err := m.Fetch(context.Background(), fetchReq("t", 0, 0, func(r *kmsg.FetchRequest) { r.MinBytes = 1; r.MaxWaitMillis = 60000 }))
		if err != nil {
			done <- nil
			return
		}
		done <- raw.(*kmsg.FetchResponse)
	}()
	waitFor(t, "the fetch to park", func() bool {
		return m.fetches.Watched(partitionKey(common.TopicPartition{Topic: "t", Partition: 0})) != 0
	})
	m.StopReplica(context.Background(), stopReplicaReq(3, "t", -2, true, 0))
	select {
	case resp := <-done:
		if resp == nil {
			t.Fatal("fetch failed")
		}
		if c := resp.Topics[0].Partitions[0].ErrorCode; c != kerr.UnknownTopicOrPartition.Code {
			t.Fatalf("parked fetch after delete: %d", c)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("parked fetch not completed by StopReplica")
	}
}

func TestUpdateMetadataDeletesHostedPartitions(t *testing.T) {
	fm := &fakeMeta{known: map[common.TopicPartition]bool{{Topic: "known", Partition: 0}: true}}
	store := newMemStore()
	var gotDeleted []common.TopicPartition
	m := New(Config{BrokerID: 1, Logger: quietLogger(), OnPartitionsDeleted: func(tps []common.TopicPartition) { gotDeleted = tps }}, store, fm)
	defer m.Shutdown()
	makeLeader(t, m, "t", 0, 0)

	// Known to the cluster but not hosted: NOT_LEADER_OR_FOLLOWER.
	if r := produceOne(t, m, 1, "known", 0, makeBatch(1, "x")); r.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("known unhosted partition: %d", r.ErrorCode)
	}

	req := updateMetadataReq(1, -1)
	ts := kmsg.NewUpdateMetadataRequestTopicState()
	ts.Topic = "t"
	ts.TopicID = topicIDFor("t")
	ps := kmsg.NewUpdateMetadataRequestTopicPartition()
	ps.Topic = "t"
	ps.Partition = 0
	ps.Leader = -2
	ts.PartitionStates = append(ts.PartitionStates, ps)
	req.TopicStates = append(req.TopicStates, ts)
	if r := m.UpdateMetadata(context.Background(), req); r.ErrorCode != 0 {
		t.Fatal(r.ErrorCode)
	}
	if fm.updates != 1 {
		t.Fatalf("cache updated %d times", fm.updates)
	}
	if _, ok := m.Partition(common.TopicPartition{Topic: "t", Partition: 0}); ok {
		t.Fatal("deleted partition still hosted")
	}
	if !slices.Contains(store.deleted, common.TopicPartition{Topic: "t", Partition: 0}) {
		t.Fatal("log of deleted partition not removed")
	}
	if !slices.Equal(gotDeleted, []common.TopicPartition{{Topic: "t", Partition: 0}}) {
		t.Fatalf("OnPartitionsDeleted got %v", gotDeleted)
	}
}

// FuzzHasTransactionalBatch: the batch-header walk never panics, never
// loops forever, and reports a transactional batch only if some magic-2
// header in the input has the bit set.
func FuzzHasTransactionalBatch(f *testing.F) {
	f.Add(makeBatch(1, "a"))
	tx := makeBatch(1, "a", "b")
	tx[22] |= attrTransactional
	f.Add(tx)
	f.Add(append(makeBatch(1, "a"), tx...))
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff})
	f.Add(makeBatch(1, "a")[:30])
	f.Fuzz(func(t *testing.T, data []byte) {
		tx, err := hasTransactionalBatch(data)
		if err != nil && tx {
			t.Fatal("error and transactional")
		}
		if len(data) == 0 && (tx || err != nil) {
			t.Fatal("empty input")
		}
	})
}

func TestOnLeadershipChange(t *testing.T) {
	var got [][]LeadershipChange
	m, _ := newTestManager(t, func(c *Config) {
		c.OnLeadershipChange = func(ch []LeadershipChange) { got = append(got, slices.Clone(ch)) }
	})
	ctx := context.Background()
	makeLeader(t, m, "__consumer_offsets", 0, 4)
	m.LeaderAndIsr(ctx, lairReq(1, "__consumer_offsets", topicIDFor("__consumer_offsets"), 1, 2, 7, []int32{2, 1}, []int32{2, 1}))
	// An ignored (stale) partition state is not a change.
	m.LeaderAndIsr(ctx, lairReq(1, "__consumer_offsets", topicIDFor("__consumer_offsets"), 1, 2, 7, []int32{2, 1}, []int32{2, 1}))
	m.StopReplica(ctx, stopReplicaReq(3, "__consumer_offsets", 4, true, 0))

	co := func(p int32) common.TopicPartition {
		return common.TopicPartition{Topic: "__consumer_offsets", Partition: p}
	}
	want := [][]LeadershipChange{
		{{TopicPartition: co(0), Leader: true, LeaderEpoch: 4}},
		{{TopicPartition: co(1), Leader: false, LeaderEpoch: 7}},
		{{TopicPartition: co(0), Leader: false, LeaderEpoch: 4}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d callbacks %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("callback %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
