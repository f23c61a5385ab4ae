package group

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/klassik/klassik/broker/purgatory"
	"github.com/klassik/klassik/broker/storage/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func readAll(s OffsetStore, partition int32, fn func(k, v []byte)) error {
	return s.Read(context.Background(), partition, func(batch []byte) error {
		return record.ForEachRecord(batch, func(r *record.Record) error {
			fn(r.Key, r.Value)
			return nil
		})
	})
}

// "load after OnBecomeLeader restores groups and offsets from the store".
func TestLoadRestoresGroupsAndOffsets(t *testing.T) {
	store := NewMemStore()
	h := newHarnessWith(t, testConfig(), store, purgatory.NewFakeClock(t0))
	leader, follower := h.stableGroup("g")
	wantCode(t, "commit", h.commit("g", leader, 1, "t", 0, 42, "m"), nil)
	wantCode(t, "simple commit", h.commit("simple", "", -1, "x", 1, 7, ""), nil)
	h.c.Close()

	h2 := newHarnessWith(t, testConfig(), store, purgatory.NewFakeClock(t0))
	if h2.state("g") != Stable {
		t.Fatalf("loaded state %v", h2.state("g"))
	}
	d := h2.c.DescribeGroups(context.Background(), &kmsg.DescribeGroupsRequest{Groups: []string{"g"}}).Groups[0]
	got := map[string][]byte{}
	for _, m := range d.Members {
		got[m.MemberID] = m.MemberAssignment
	}
	if len(got) != 2 || !bytes.Equal(got[leader], assignment("t", 0)) || !bytes.Equal(got[follower], assignment("t", 1)) {
		t.Fatalf("loaded members %+v", d.Members)
	}
	if off, meta, _ := h2.fetch("g", "t", 0); off != 42 || meta != "m" {
		t.Errorf("loaded offset %d %q", off, meta)
	}
	if off, _, _ := h2.fetch("simple", "x", 1); off != 7 {
		t.Errorf("loaded simple offset %d", off)
	}
	wantCode(t, "heartbeat after load", h2.heartbeat("g", leader, 1, nil), nil)
}

// Records built byte-for-byte as Kafka writes them (kmsg's generated
// schemas, one batch per write, older value versions, a transactional
// commit that is aborted and one that is committed) load as Kafka would.
func TestLoadKafkaWrittenRecords(t *testing.T) {
	cfg := testConfig()
	store := NewMemStore()
	p := PartitionFor("kg", cfg.OffsetsTopicPartitions)
	okey := func(topic string, part int32) []byte {
		return (&kmsg.OffsetCommitKey{Version: 1, Group: "kg", Topic: topic, Partition: part}).AppendTo(nil)
	}
	oval := func(v int16, off int64) []byte {
		return (&kmsg.OffsetCommitValue{Version: v, Offset: off, LeaderEpoch: -1, Metadata: "", CommitTimestamp: t0.UnixMilli(), ExpireTimestamp: -1}).AppendTo(nil)
	}
	proto, leader := "range", "m1"
	gval := (&kmsg.GroupMetadataValue{Version: 2, ProtocolType: "consumer", Generation: 5, Protocol: &proto, Leader: &leader,
		CurrentStateTimestamp: t0.UnixMilli(), Members: []kmsg.GroupMetadataValueMember{{MemberID: "m1", ClientID: "c",
			ClientHost: "/10.0.0.1", RebalanceTimeoutMillis: 30000, SessionTimeoutMillis: 10000,
			Subscription: consumerMeta("t"), Assignment: assignment("t", 0, 1)}}}).AppendTo(nil)
	app := func(o record.BuildOptions, recs ...record.Record) {
		o.BaseTimestamp = t0.UnixMilli()
		for i := range recs {
			recs[i].OffsetDelta = int32(i)
		}
		if err := store.Append(context.Background(), p, record.Build(o, recs)); err != nil {
			t.Fatal(err)
		}
	}
	plain := record.DefaultBuildOptions()
	app(plain, record.Record{Key: okey("t", 0), Value: oval(0, 1)}, record.Record{Key: okey("t", 1), Value: oval(2, 2)})
	app(plain, record.Record{Key: (&kmsg.OffsetCommitKey{Version: 0, Group: "kg", Topic: "t", Partition: 2}).AppendTo(nil), Value: oval(3, 3)})
	app(plain, record.Record{Key: (&kmsg.GroupMetadataKey{Version: 2, Group: "kg"}).AppendTo(nil), Value: gval})
	app(plain, record.Record{Key: okey("t", 1)})                         // tombstone
	app(plain, record.Record{Key: []byte{0, 9, 0, 0}, Value: []byte{1}}) // unknown key version: skipped
	txn := record.DefaultBuildOptions()
	txn.Transactional, txn.ProducerID, txn.ProducerEpoch = true, 77, 0
	app(txn, record.Record{Key: okey("t", 0), Value: oval(3, 100)})
	ctrl := txn
	ctrl.Control = true
	app(ctrl, record.Record{Key: record.ControlKey(record.ControlAbort), Value: record.EndTxnMarkerValue(0)})
	txn.ProducerID = 78
	app(txn, record.Record{Key: okey("t", 3), Value: oval(3, 300)})
	ctrl.ProducerID = 78
	app(ctrl, record.Record{Key: record.ControlKey(record.ControlCommit), Value: record.EndTxnMarkerValue(0)})

	h := newHarnessWith(t, cfg, store, purgatory.NewFakeClock(t0))
	for part, want := range map[int32]int64{0: 1, 1: -1, 2: 3, 3: 300} {
		if off, _, code := h.fetch("kg", "t", part); off != want || code != 0 {
			t.Errorf("t-%d: offset %d (%s), want %d", part, off, errName(code), want)
		}
	}
	d := h.c.DescribeGroups(context.Background(), &kmsg.DescribeGroupsRequest{Groups: []string{"kg"}}).Groups[0]
	if d.State != "Stable" || len(d.Members) != 1 || d.Members[0].ClientHost != "/10.0.0.1" ||
		!bytes.Equal(d.Members[0].MemberAssignment, assignment("t", 0, 1)) {
		t.Fatalf("loaded group %+v", d)
	}
	if gen := h.generation("kg"); gen != 5 {
		t.Errorf("generation %d", gen)
	}
}

// blockingStore holds Read until release is closed.
type blockingStore struct {
	*MemStore
	release chan struct{}
	once    sync.Once
}

func (b *blockingStore) Read(ctx context.Context, p int32, fn func([]byte) error) error {
	select {
	case <-b.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return b.MemStore.Read(ctx, p, fn)
}

func TestLoadInProgress(t *testing.T) {
	cfg := testConfig()
	bs := &blockingStore{MemStore: NewMemStore(), release: make(chan struct{})}
	c, err := New(cfg, bs, purgatory.NewFakeClock(t0), quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	p := c.PartitionFor("g")
	c.OnBecomeLeader(p)
	jr := c.JoinGroup(context.Background(), joinReq(5, "g", "", nil, "t"), JoinInfo{ClientID: "c"})
	wantCode(t, "join while loading", jr.ErrorCode, kerr.CoordinatorLoadInProgress)
	hb := c.Heartbeat(context.Background(), &kmsg.HeartbeatRequest{Group: "g", MemberID: "m"})
	wantCode(t, "heartbeat while loading", hb.ErrorCode, nil)
	lg := c.ListGroups(context.Background(), &kmsg.ListGroupsRequest{})
	wantCode(t, "list while loading", lg.ErrorCode, kerr.CoordinatorLoadInProgress)
	other := "x"
	for c.PartitionFor(other) == p {
		other += "x"
	}
	jr = c.JoinGroup(context.Background(), joinReq(5, other, "", nil, "t"), JoinInfo{ClientID: "c"})
	wantCode(t, "join for a partition not led", jr.ErrorCode, kerr.NotCoordinator)
	close(bs.release)
	h := &harness{t: t, c: c, store: bs.MemStore}
	h.waitLoaded(p)
	jr = c.JoinGroup(context.Background(), joinReq(5, "g", "", nil, "t"), JoinInfo{ClientID: "c"})
	wantCode(t, "join after load", jr.ErrorCode, kerr.MemberIDRequired)
}

// A resignation during a load wins: the load's result is discarded.
func TestResignDuringLoad(t *testing.T) {
	bs := &blockingStore{MemStore: NewMemStore(), release: make(chan struct{})}
	c, err := New(testConfig(), bs, purgatory.NewFakeClock(t0), quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	c.OnBecomeLeader(1)
	c.OnResign(1)
	close(bs.release)
	c.wg.Wait()
	c.mu.Lock()
	_, owned := c.owned[1]
	c.mu.Unlock()
	if owned {
		t.Fatal("partition owned after resign")
	}
}
