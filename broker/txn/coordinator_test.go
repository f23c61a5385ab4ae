package txn

import (
	"context"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/group"
	"github.com/klassik/klassik/broker/purgatory"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The happy path: InitProducerId, AddPartitionsToTxn, EndTxn(commit)
// answered once PrepareCommit is written, markers to each leader, then
// CompleteCommit.
func TestCommitHappyPath(t *testing.T) {
	store, mk, clock := group.NewMemStore(), newFakeMarkers(), purgatory.NewFakeClock(testStart)
	c := newTestCoordinator(t, store, mk, &pidBlocks{}, clock, 1)
	ctx := context.Background()
	p := c.PartitionFor("a")
	if resp := c.InitProducerID(ctx, &kmsg.InitProducerIDRequest{Version: 4, TransactionalID: ptr("a"), TransactionTimeoutMillis: 60000}); resp.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("before becoming leader: %s", errName(resp.ErrorCode))
	}
	c.OnBecomeLeader(p, 1)
	waitIdle(t, c)
	init := c.InitProducerID(ctx, &kmsg.InitProducerIDRequest{Version: 4, TransactionalID: ptr("a"), TransactionTimeoutMillis: 60000,
		ProducerID: -1, ProducerEpoch: -1})
	if init.ErrorCode != 0 || init.ProducerID != 0 || init.ProducerEpoch != 0 {
		t.Fatalf("init: %s pid=%d epoch=%d", errName(init.ErrorCode), init.ProducerID, init.ProducerEpoch)
	}
	mk.leaders[tp("t", 1)] = 2
	add := c.AddPartitionsToTxn(ctx, &kmsg.AddPartitionsToTxnRequest{Version: 3, TransactionalID: "a", ProducerID: 0, ProducerEpoch: 0,
		Topics: []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "t", Partitions: []int32{0, 1}}}})
	for _, rt := range add.Topics {
		for _, rp := range rt.Partitions {
			if rp.ErrorCode != 0 {
				t.Fatalf("add %s-%d: %s", rt.Topic, rp.Partition, errName(rp.ErrorCode))
			}
		}
	}
	if off := c.AddOffsetsToTxn(ctx, &kmsg.AddOffsetsToTxnRequest{Version: 3, TransactionalID: "a", ProducerID: 0, ProducerEpoch: 0, Group: "g"}); off.ErrorCode != 0 {
		t.Fatalf("add offsets: %s", errName(off.ErrorCode))
	}
	end := c.EndTxn(ctx, &kmsg.EndTxnRequest{Version: 3, TransactionalID: "a", ProducerID: 0, ProducerEpoch: 0, Commit: true})
	if end.ErrorCode != 0 {
		t.Fatalf("end: %s", errName(end.ErrorCode))
	}
	waitIdle(t, c)
	sent := mk.takeSent()
	if len(sent) != 2 {
		t.Fatalf("markers sent: %q", sent)
	}
	d := c.DescribeTransactions(ctx, &kmsg.DescribeTransactionsRequest{TransactionalIDs: []string{"a"}})
	if st := d.TransactionStates[0]; st.State != "CompleteCommit" || len(st.Topics) != 0 {
		t.Fatalf("describe: %+v", st)
	}
	recs := records(store, p)
	if len(recs) != 5 {
		t.Fatalf("records: %q", recs)
	}
	for _, r := range recs {
		t.Log(r)
	}
}

// blockingStore holds appends until released.
type blockingStore struct {
	*group.MemStore
	release chan struct{}
	waiting chan struct{}
}

func (s *blockingStore) Append(ctx context.Context, partition int32, batch []byte) error {
	s.waiting <- struct{}{}
	<-s.release
	// As the replica manager: the local append happens whatever ctx says;
	// only the wait for the ISR is bounded by it.
	if err := s.MemStore.Append(context.Background(), partition, batch); err != nil {
		return err
	}
	return ctx.Err()
}

// A reload on the same broker waits for an append of the previous
// ownership still in flight, so the loaded state includes it even though
// the write's own request was answered COORDINATOR_LOAD_IN_PROGRESS (the
// partition was loading when the append returned; Kafka answers the
// same).
func TestReloadWaitsForInFlightAppend(t *testing.T) {
	mem := group.NewMemStore()
	c, p := leaderOf(t, mem, "a")
	ctx := context.Background()
	if r := c.InitProducerID(ctx, &kmsg.InitProducerIDRequest{Version: 4, TransactionalID: ptr("a"), TransactionTimeoutMillis: 60000}); r.ErrorCode != 0 {
		t.Fatal(errName(r.ErrorCode))
	}
	bs := &blockingStore{MemStore: mem, release: make(chan struct{}), waiting: make(chan struct{}, 1)}
	c.store = bs
	done := make(chan int16)
	go func() {
		resp := c.AddPartitionsToTxn(ctx, &kmsg.AddPartitionsToTxnRequest{Version: 3, TransactionalID: "a",
			Topics: []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "t", Partitions: []int32{0}}}})
		done <- resp.Topics[0].Partitions[0].ErrorCode
	}()
	<-bs.waiting // the append is in flight
	c.OnResign(p, -1)
	c.OnBecomeLeader(p, 1)
	// The loader is parked until the append finishes.
	c.mu.Lock()
	loading := c.parts[p].loading
	c.mu.Unlock()
	if !loading {
		t.Fatal("partition loaded while an append of the previous ownership was in flight")
	}
	close(bs.release)
	if code := <-done; code != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("add partitions across the reload: %s, want COORDINATOR_LOAD_IN_PROGRESS", errName(code))
	}
	waitIdle(t, c)
	d := c.DescribeTransactions(ctx, &kmsg.DescribeTransactionsRequest{TransactionalIDs: []string{"a"}})
	if st := d.TransactionStates[0]; st.ErrorCode != 0 || st.State != "Ongoing" || len(st.Topics) != 1 {
		t.Fatalf("after reload: %+v", st)
	}
}

// waitingStore is a replica manager waiting for an ISR that never
// catches up: appends block until their context ends.
type waitingStore struct {
	*group.MemStore
	waiting chan struct{}
}

func (s *waitingStore) Append(ctx context.Context, partition int32, batch []byte) error {
	s.waiting <- struct{}{}
	<-ctx.Done()
	return ctx.Err()
}

// Resigning a partition ends the waits of its appends at once, so the
// client hears NOT_COORDINATOR now (not after the transaction timeout)
// and a reload does not wait for them.
func TestResignEndsInFlightAppends(t *testing.T) {
	mem := group.NewMemStore()
	c, p := leaderOf(t, mem, "a")
	ctx := context.Background()
	ws := &waitingStore{MemStore: mem, waiting: make(chan struct{}, 1)}
	c.store = ws
	done := make(chan int16)
	go func() {
		done <- c.InitProducerID(ctx, &kmsg.InitProducerIDRequest{Version: 4, TransactionalID: ptr("a"), TransactionTimeoutMillis: 900000}).ErrorCode
	}()
	<-ws.waiting
	c.OnResign(p, 2)
	select {
	case code := <-done:
		if code != kerr.NotCoordinator.Code {
			t.Fatalf("InitProducerId across the resignation: %s, want NOT_COORDINATOR", errName(code))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the append kept waiting after the partition was resigned")
	}
	c.store = mem
	c.OnBecomeLeader(p, 3)
	waitIdle(t, c)
	if r := c.InitProducerID(ctx, &kmsg.InitProducerIDRequest{Version: 4, TransactionalID: ptr("a"), TransactionTimeoutMillis: 60000}); r.ErrorCode != 0 {
		t.Fatalf("after the reload: %s", errName(r.ErrorCode))
	}
}
