package group

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/purgatory"
	"github.com/klassik/klassik/broker/storage/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type txnCommitArgs struct {
	member   string
	gen      int32
	instance *string
	meta     string
}

// txnCommit sends a TxnOffsetCommit v3 of one partition and returns its code.
func (h *harness) txnCommit(group string, pid int64, epoch int16, topic string, partition int32, offset int64, a txnCommitArgs) int16 {
	h.t.Helper()
	r := kmsg.NewPtrTxnOffsetCommitRequest()
	r.Version = 3
	r.TransactionalID = "tx"
	r.Group, r.ProducerID, r.ProducerEpoch = group, pid, epoch
	r.Generation, r.MemberID, r.InstanceID = -1, "", nil
	if a.member != "" || a.gen != 0 || a.instance != nil {
		r.Generation, r.MemberID, r.InstanceID = a.gen, a.member, a.instance
	}
	meta := a.meta
	rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata = partition, offset, 3, &meta
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic = topic
	rt.Partitions = []kmsg.TxnOffsetCommitRequestTopicPartition{rp}
	r.Topics = []kmsg.TxnOffsetCommitRequestTopic{rt}
	resp := h.c.TxnOffsetCommit(context.Background(), r)
	return resp.Topics[0].Partitions[0].ErrorCode
}

// fetchStable is OffsetFetch v7 with require_stable.
func (h *harness) fetchStable(group, topic string, partition int32) (int64, int16) {
	h.t.Helper()
	r := kmsg.NewPtrOffsetFetchRequest()
	r.Version = 7
	r.Group = group
	r.RequireStable = true
	r.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: topic, Partitions: []int32{partition}}}
	resp := h.c.OffsetFetch(context.Background(), r)
	if resp.ErrorCode != 0 {
		return -1, resp.ErrorCode
	}
	p := resp.Topics[0].Partitions[0]
	return p.Offset, p.ErrorCode
}

// marker appends a COMMIT/ABORT control batch of pid to the group's
// partition, as WriteTxnMarkers would.
func (h *harness) marker(group string, pid int64, epoch int16, commit bool) int32 {
	h.t.Helper()
	t := record.ControlAbort
	if commit {
		t = record.ControlCommit
	}
	p := h.c.PartitionFor(group)
	if err := h.store.Append(context.Background(), p, record.BuildControlBatch(0, -1, pid, epoch, t, 0, t0.UnixMilli())); err != nil {
		h.t.Fatal(err)
	}
	return p
}

// "The offsets of a transaction are not visible to OffsetFetch until the
// transaction commits" (KIP-98: pending transactional offset commits).
func TestTxnOffsetCommitVisibleOnCommit(t *testing.T) {
	h := newHarness(t, testConfig())
	wantCode(t, "txn commit to an unknown group", h.txnCommit("g", 7, 2, "t", 0, 10, txnCommitArgs{meta: "m"}), nil)
	if h.group("g") == nil {
		t.Fatal("unknown group not created")
	}
	if off, _, code := h.fetch("g", "t", 0); off != -1 || code != 0 {
		t.Fatalf("pending offset visible: %d %s", off, errName(code))
	}
	if _, code := h.fetchStable("g", "t", 0); code != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("require_stable: %s", errName(code))
	}
	if _, code := h.fetchStable("g", "t", 1); code != 0 {
		t.Fatalf("require_stable on a partition without pending offsets: %s", errName(code))
	}

	// The batch in the log is the producer's transactional batch.
	p := h.c.PartitionFor("g")
	var hdrs []record.BatchHeader
	if err := record.ForEachBatch(h.store.Log(p), func(_ []byte, bh record.BatchHeader) error {
		hdrs = append(hdrs, bh)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(hdrs) != 1 || !hdrs[0].IsTransactional() || hdrs[0].IsControl() || hdrs[0].ProducerID != 7 ||
		hdrs[0].ProducerEpoch != 2 || hdrs[0].BaseSequence != 0 {
		t.Fatalf("written batches %+v", hdrs)
	}

	// A marker of another producer or partition changes nothing.
	h.c.HandleTxnCompletion(8, []int32{p}, true)
	h.c.HandleTxnCompletion(7, []int32{(p + 1) % 4}, true)
	if off, _, _ := h.fetch("g", "t", 0); off != -1 {
		t.Fatalf("completed by an unrelated marker: %d", off)
	}
	h.c.HandleTxnCompletion(7, []int32{p}, true)
	off, meta, code := h.fetch("g", "t", 0)
	if off != 10 || meta != "m" || code != 0 {
		t.Fatalf("after commit: %d %q %s", off, meta, errName(code))
	}
	if off, code := h.fetchStable("g", "t", 0); off != 10 || code != 0 {
		t.Fatalf("require_stable after commit: %d %s", off, errName(code))
	}
	if len(h.c.producerGroups) != 0 {
		t.Errorf("producer still tracked: %v", h.c.producerGroups)
	}
}

func TestTxnOffsetCommitAbortDropsOffsets(t *testing.T) {
	h := newHarness(t, testConfig())
	wantCode(t, "plain commit", h.commit("g", "", -1, "t", 0, 5, ""), nil)
	wantCode(t, "txn commit", h.txnCommit("g", 7, 0, "t", 0, 10, txnCommitArgs{}), nil)
	h.c.HandleTxnCompletion(7, []int32{h.c.PartitionFor("g")}, false)
	if off, code := h.fetchStable("g", "t", 0); off != 5 || code != 0 {
		t.Fatalf("after abort: %d %s", off, errName(code))
	}
}

// Kafka's completePendingTxnOffsetCommit keeps a cached offset written
// after the transaction's record (olderThan).
func TestTxnCommitDoesNotOverwriteLaterCommit(t *testing.T) {
	h := newHarness(t, testConfig())
	wantCode(t, "txn commit", h.txnCommit("g", 7, 0, "t", 0, 10, txnCommitArgs{}), nil)
	wantCode(t, "later plain commit", h.commit("g", "", -1, "t", 0, 20, ""), nil)
	wantCode(t, "txn commit of another partition", h.txnCommit("g", 7, 0, "t", 1, 11, txnCommitArgs{}), nil)
	h.c.HandleTxnCompletion(7, []int32{h.c.PartitionFor("g")}, true)
	if off, _, _ := h.fetch("g", "t", 0); off != 20 {
		t.Errorf("t-0: %d, want the later plain commit 20", off)
	}
	if off, _, _ := h.fetch("g", "t", 1); off != 11 {
		t.Errorf("t-1: %d, want 11", off)
	}
}

// KIP-447: the member id, generation and group.instance.id of a v3
// request are checked when set; coordinator errors as for OffsetCommit.
func TestTxnOffsetCommitValidation(t *testing.T) {
	cfg := testConfig()
	cfg.OffsetMetadataMaxBytes = 4
	h := newHarness(t, cfg)
	leader, _ := h.stableGroup("g")
	wantCode(t, "member at its generation", h.txnCommit("g", 1, 0, "t", 0, 1, txnCommitArgs{member: leader, gen: 1}), nil)
	wantCode(t, "stale generation", h.txnCommit("g", 1, 0, "t", 0, 1, txnCommitArgs{member: leader, gen: 0}), kerr.IllegalGeneration)
	wantCode(t, "unknown member", h.txnCommit("g", 1, 0, "t", 0, 1, txnCommitArgs{member: "nobody", gen: 1}), kerr.UnknownMemberID)
	wantCode(t, "no member, generation -1 (v0-v2 style)", h.txnCommit("g", 1, 0, "t", 0, 1, txnCommitArgs{}), nil)
	wantCode(t, "metadata too large", h.txnCommit("g", 1, 0, "t", 0, 1, txnCommitArgs{meta: "12345"}), kerr.OffsetMetadataTooLarge)
	wantCode(t, "empty group id", h.txnCommit("", 1, 0, "t", 0, 1, txnCommitArgs{}), kerr.InvalidGroupID)

	inst := "i1"
	j := h.joinAsync(joinReq(5, "static", "", &inst, "t"))
	h.waitParkedJoins("static", 1)
	h.clock.Advance(3 * time.Second)
	wantCode(t, "static join", recv(t, j).ErrorCode, nil)
	wantCode(t, "fenced instance", h.txnCommit("static", 1, 0, "t", 0, 1, txnCommitArgs{member: "other", gen: -1, instance: &inst}), kerr.FencedInstanceID)

	h.c.OnResign(h.c.PartitionFor("g"))
	wantCode(t, "resigned", h.txnCommit("g", 1, 0, "t", 0, 1, txnCommitArgs{}), kerr.NotCoordinator)

	h.store.FailAppends(kerr.NotEnoughReplicas)
	wantCode(t, "append failure", h.txnCommit("x", 2, 0, "t", 0, 1, txnCommitArgs{}), kerr.CoordinatorNotAvailable)
	h.store.FailAppends(nil)
	if _, code := h.fetchStable("x", "t", 0); code != 0 {
		t.Errorf("failed write left a pending offset: %s", errName(code))
	}
}

func TestTxnOffsetCommitLoadInProgress(t *testing.T) {
	store := NewMemStore()
	c, err := New(testConfig(), store, purgatory.NewFakeClock(t0), quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := c.PartitionFor("g")
	c.mu.Lock()
	c.owned[p] = ownership{state: partitionLoading, epoch: 99}
	c.mu.Unlock()
	r := kmsg.NewPtrTxnOffsetCommitRequest()
	r.Version = 3
	r.Group = "g"
	r.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1}}}}
	if code := c.TxnOffsetCommit(context.Background(), r).Topics[0].Partitions[0].ErrorCode; code != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("loading: %s", errName(code))
	}
}

// Loading honours transactional batches and markers as Kafka's
// doLoadGroupsAndOffsets: committed transactions are applied unless a later
// record wrote the partition, aborted ones dropped, open ones stay pending
// until their marker.
func TestLoadTransactionalOffsets(t *testing.T) {
	store := NewMemStore()
	h := newHarnessWith(t, testConfig(), store, purgatory.NewFakeClock(t0))
	wantCode(t, "plain t-0", h.commit("g", "", -1, "t", 0, 1, ""), nil)
	wantCode(t, "pid 1 t-1", h.txnCommit("g", 1, 0, "t", 1, 2, txnCommitArgs{}), nil)
	wantCode(t, "pid 1 t-2", h.txnCommit("g", 1, 0, "t", 2, 2, txnCommitArgs{}), nil)
	wantCode(t, "pid 2 t-0", h.txnCommit("g", 2, 0, "t", 0, 3, txnCommitArgs{}), nil)
	wantCode(t, "plain t-2 after pid 1's record", h.commit("g", "", -1, "t", 2, 4, ""), nil)
	h.marker("g", 1, 0, true)
	h.marker("g", 2, 0, false)
	wantCode(t, "pid 3 t-3, no marker yet", h.txnCommit("g", 3, 0, "t", 3, 9, txnCommitArgs{}), nil)
	wantCode(t, "pid 4 only group", h.txnCommit("only-pending", 4, 0, "t", 0, 5, txnCommitArgs{}), nil)
	h.c.Close()

	h2 := newHarnessWith(t, testConfig(), store, purgatory.NewFakeClock(t0))
	for _, c := range []struct {
		p    int32
		want int64
	}{{0, 1}, {1, 2}, {2, 4}, {3, -1}} {
		if off, _, _ := h2.fetch("g", "t", c.p); off != c.want {
			t.Errorf("loaded t-%d = %d, want %d", c.p, off, c.want)
		}
	}
	if _, code := h2.fetchStable("g", "t", 3); code != kerr.UnstableOffsetCommit.Code {
		t.Errorf("open transaction after load: %s", errName(code))
	}
	if h2.group("only-pending") == nil {
		t.Fatal("group with only pending offsets not loaded")
	}
	h2.c.HandleTxnCompletion(3, []int32{h2.c.PartitionFor("g")}, true)
	h2.c.HandleTxnCompletion(4, []int32{h2.c.PartitionFor("only-pending")}, true)
	if off, code := h2.fetchStable("g", "t", 3); off != 9 || code != 0 {
		t.Errorf("after the marker: %d %s", off, errName(code))
	}
	if off, _, _ := h2.fetch("only-pending", "t", 0); off != 5 {
		t.Errorf("only-pending after the marker: %d", off)
	}
}

// A group whose only offsets are pending is not removed by expiry (Kafka's
// hasOffsets counts pending transactional commits).
func TestExpiryKeepsGroupWithPendingTxnOffsets(t *testing.T) {
	cfg := testConfig()
	cfg.OffsetsRetention = time.Minute
	cfg.OffsetsRetentionCheckInterval = time.Minute
	h := newHarness(t, cfg)
	wantCode(t, "txn commit", h.txnCommit("g", 1, 0, "t", 0, 5, txnCommitArgs{}), nil)
	h.clock.Advance(3 * time.Minute)
	h.c.ExpireOffsets()
	if h.group("g") == nil {
		t.Fatal("group with pending offsets removed")
	}
	h.c.HandleTxnCompletion(1, []int32{h.c.PartitionFor("g")}, true)
	if off, _, _ := h.fetch("g", "t", 0); off != 5 {
		t.Fatalf("committed after expiry pass: %d", off)
	}
}

// FuzzTxnOffsetCommit feeds TxnOffsetCommit request bytes from a client
// (any version 0-3) through the coordinator, ends the transaction with a
// COMMIT or ABORT marker in the log and HandleTxnCompletion, and loads the
// partition again into a fresh coordinator. Invariants:
//   - nothing panics; every requested partition is answered;
//   - before the marker no committed offset changed (pending offsets are
//     invisible);
//   - after the marker the cache equals what loading the log gives: the
//     log and the in-memory state agree on every requested partition.
func FuzzTxnOffsetCommit(f *testing.F) {
	seed := kmsg.NewPtrTxnOffsetCommitRequest()
	seed.Version = 3
	seed.Group, seed.ProducerID, seed.ProducerEpoch, seed.Generation = "g", 7, 1, -1
	meta := "m"
	seed.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{
		{Partition: 0, Offset: 5, LeaderEpoch: 2, Metadata: &meta}, {Partition: 0, Offset: 6}, {Partition: 1, Offset: 9}}}}
	f.Add(byte(3), true, seed.AppendTo(nil))
	seed.Version = 0
	f.Add(byte(0), false, seed.AppendTo(nil))
	f.Fuzz(func(t *testing.T, version byte, commit bool, data []byte) {
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.Version = int16(version % 4)
		if err := req.ReadFrom(data); err != nil {
			return
		}
		if len(req.Topics) > 20 {
			return
		}
		cfg := testConfig()
		cfg.OffsetMetadataMaxBytes = 16
		store := NewMemStore()
		h := newHarnessWith(t, cfg, store, purgatory.NewFakeClock(t0))
		before := h.fetchAll(req)
		resp := h.c.TxnOffsetCommit(context.Background(), req)
		if len(resp.Topics) != len(req.Topics) {
			t.Fatalf("%d topics answered for %d", len(resp.Topics), len(req.Topics))
		}
		for i := range req.Topics {
			if len(resp.Topics[i].Partitions) != len(req.Topics[i].Partitions) {
				t.Fatalf("topic %d: %d partitions answered for %d", i, len(resp.Topics[i].Partitions), len(req.Topics[i].Partitions))
			}
		}
		if got := h.fetchAll(req); !equalFetched(got, before) {
			t.Fatalf("pending offsets visible: %v, before %v", got, before)
		}
		if req.Group == "" {
			return
		}
		p := h.marker(req.Group, req.ProducerID, req.ProducerEpoch, commit)
		h.c.HandleTxnCompletion(req.ProducerID, []int32{p}, commit)
		after := h.fetchAll(req)
		h.c.Close()
		h2 := newHarnessWith(t, cfg, store, purgatory.NewFakeClock(t0))
		if loaded := h2.fetchAll(req); !equalFetched(loaded, after) {
			t.Fatalf("cache %v, loaded from the log %v", after, loaded)
		}
		if !commit && !equalFetched(after, before) {
			t.Fatalf("aborted offsets applied: %v, before %v", after, before)
		}
	})
}

type fetchedOffset struct {
	offset int64
	meta   string
	code   int16
}

// fetchAll fetches every partition the request names (OffsetFetch v5).
func (h *harness) fetchAll(req *kmsg.TxnOffsetCommitRequest) map[string]fetchedOffset {
	out := map[string]fetchedOffset{}
	if req.Group == "" {
		return out
	}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			off, meta, code := h.fetch(req.Group, t.Topic, p.Partition)
			out[fmt.Sprintf("%s/%d", t.Topic, p.Partition)] = fetchedOffset{off, meta, code}
		}
	}
	return out
}

func equalFetched(a, b map[string]fetchedOffset) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// FuzzLoadPartition loads a __consumer_offsets partition holding an
// arbitrary batch between well-formed transactional and control batches
// (log bytes that came from clients through the coordinator, or a corrupt
// disk). Invariants: loading never panics and always finishes (a batch
// that does not parse fails the load, which leaves the partition not
// owned); a loaded coordinator answers OffsetFetch and HandleTxnCompletion.
func FuzzLoadPartition(f *testing.F) {
	good := buildTxnBatch(t0, 5, 0, offsetRecords("g", map[common.TopicPartition]OffsetValue{
		{Topic: "t", Partition: 0}: {Version: 3, Offset: 1, LeaderEpoch: -1, CommitTimestamp: 1, ExpireTimestamp: -1}}))
	f.Add(good)
	f.Add(record.BuildControlBatch(0, -1, 5, 0, record.ControlCommit, 0, 1))
	f.Add(record.BuildControlBatch(0, -1, 5, 0, record.ControlAbort, 0, 1)[:40])
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg := testConfig()
		cfg.OffsetsTopicPartitions = 1
		store := NewMemStore()
		ctx := context.Background()
		_ = store.Append(ctx, 0, good)
		store.mu.Lock()
		store.logs[0] = append(store.logs[0], data...)
		store.mu.Unlock()
		c, err := New(cfg, store, purgatory.NewFakeClock(t0), quietLogger())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.OnBecomeLeader(0)
		deadline := time.Now().Add(5 * time.Second)
		for c.IsLoading(0) {
			if time.Now().After(deadline) {
				t.Fatal("load did not finish")
			}
			time.Sleep(time.Millisecond)
		}
		c.HandleTxnCompletion(5, []int32{0}, true)
		r := kmsg.NewPtrOffsetFetchRequest()
		r.Version, r.Group, r.RequireStable = 7, "g", true
		c.OffsetFetch(ctx, r)
	})
}

// A failed write (a zombie producer fenced by the log, a lost leadership)
// undoes only its own offsets: what the transaction committed before
// stays pending and commits with it.
func TestFailedTxnCommitKeepsEarlierPendingOffset(t *testing.T) {
	h := newHarness(t, testConfig())
	wantCode(t, "txn commit", h.txnCommit("g", 7, 1, "t", 0, 10, txnCommitArgs{}), nil)
	h.store.FailAppends(kerr.InvalidProducerEpoch)
	wantCode(t, "fenced commit", h.txnCommit("g", 7, 0, "t", 0, 99, txnCommitArgs{}), kerr.InvalidProducerEpoch)
	h.store.FailAppends(nil)
	if _, code := h.fetchStable("g", "t", 0); code != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("earlier pending offset dropped: %s", errName(code))
	}
	h.c.HandleTxnCompletion(7, []int32{h.c.PartitionFor("g")}, true)
	if off, _, _ := h.fetch("g", "t", 0); off != 10 {
		t.Fatalf("committed %d, want 10", off)
	}
}

// DeleteGroups drops a group with pending transactional offsets (Kafka
// allows it for an Empty group); the marker that follows finds no group
// and commits nothing, and the producer is forgotten.
func TestDeleteGroupWithPendingTxnOffsets(t *testing.T) {
	h := newHarness(t, testConfig())
	wantCode(t, "txn commit", h.txnCommit("d", 7, 0, "t", 0, 10, txnCommitArgs{}), nil)
	resp := h.c.DeleteGroups(context.Background(), &kmsg.DeleteGroupsRequest{Groups: []string{"d"}})
	wantCode(t, "delete", resp.Groups[0].ErrorCode, nil)
	h.c.HandleTxnCompletion(7, []int32{h.c.PartitionFor("d")}, true)
	if off, _, _ := h.fetch("d", "t", 0); off != -1 {
		t.Fatalf("offset of a deleted group committed: %d", off)
	}
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	if len(h.c.producerGroups) != 0 {
		t.Fatalf("producer still tracked: %v", h.c.producerGroups)
	}
}

// gatedStore reads a snapshot of the partition, then waits for gate
// before handing it over: a load that read the log before a marker was
// appended.
type gatedStore struct {
	*MemStore
	read chan struct{} // closed once the snapshot was taken
	gate chan struct{}
}

func (s *gatedStore) Read(ctx context.Context, partition int32, fn func(batch []byte) error) error {
	var batches [][]byte
	if err := s.MemStore.Read(ctx, partition, func(b []byte) error {
		batches = append(batches, append([]byte(nil), b...))
		return nil
	}); err != nil {
		return err
	}
	close(s.read)
	<-s.gate
	for _, b := range batches {
		if err := fn(b); err != nil {
			return err
		}
	}
	return nil
}

// A marker whose HandleTxnCompletion arrives while the partition loads,
// after the load read the log, is applied when the load publishes.
func TestTxnCompletionDuringLoad(t *testing.T) {
	cfg := testConfig()
	cfg.OffsetsTopicPartitions = 1
	mem := NewMemStore()
	h := newHarnessWith(t, cfg, mem, purgatory.NewFakeClock(t0))
	wantCode(t, "txn commit", h.txnCommit("g", 7, 0, "t", 0, 10, txnCommitArgs{}), nil)
	h.c.Close()

	gs := &gatedStore{MemStore: mem, read: make(chan struct{}), gate: make(chan struct{})}
	c, err := New(cfg, gs, purgatory.NewFakeClock(t0), quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.OnBecomeLeader(0)
	<-gs.read
	h.c = c
	h.marker("g", 7, 0, true)
	c.HandleTxnCompletion(7, []int32{0}, true)
	close(gs.gate)
	h.waitLoaded(0)
	if off, code := h.fetchStable("g", "t", 0); off != 10 || code != 0 {
		t.Fatalf("after the load: %d %s", off, errName(code))
	}
}
