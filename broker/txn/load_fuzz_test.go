package txn

import (
	"context"
	"testing"

	"github.com/klassik/klassik/broker/common/jvm"
	"github.com/klassik/klassik/broker/group"
	"github.com/klassik/klassik/broker/purgatory"
	"github.com/klassik/klassik/broker/storage/record"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// FuzzLoadedState loads a partition holding one record with an
// arbitrary value for id "a" (any state byte, epoch, timestamps and
// partitions a valid encoding can carry) and then drives every request
// at it. Invariants: nothing panics or deadlocks (the coordinator goes
// idle), and the loaded state is either served or refused with an error
// code.
func FuzzLoadedState(f *testing.F) {
	f.Add(int64(0), int16(0), int32(60000), int8(2), "t", int32(0), int64(0), int64(0), true)
	f.Add(int64(5), int16(32767), int32(1), int8(1), "t", int32(3), int64(-1), int64(-1), false)
	f.Add(int64(-1), int16(-1), int32(-1), int8(7), "", int32(-1), int64(0), int64(0), true)
	f.Add(int64(9), int16(4), int32(60000), int8(6), "x", int32(0), int64(0), int64(1), false)
	f.Fuzz(func(t *testing.T, pid int64, epoch int16, timeout int32, state int8, topic string, partition int32,
		start, update int64, commit bool) {
		if state < 0 || int(state) >= len(stateNames) {
			return
		}
		store := group.NewMemStore()
		v := Value{ProducerID: pid, ProducerEpoch: epoch, TimeoutMs: timeout, State: State(state), StartMs: start,
			LastUpdateMs: update}
		if topic != "" {
			v.Partitions = append(v.Partitions, tp(topic, partition))
		}
		clock := purgatory.NewFakeClock(testStart)
		p := jvm.PartitionFor("a", testConfig().NumPartitions)
		batch := recordBatch(clock.Now(), []record.Record{{Key: EncodeKey("a"), Value: EncodeValue(v)}})
		if err := store.Append(context.Background(), p, batch); err != nil {
			t.Fatal(err)
		}
		c := newTestCoordinator(t, store, newFakeMarkers(), &pidBlocks{}, clock, 1)
		c.OnBecomeLeader(p, 1)
		waitIdle(t, c)
		ctx := context.Background()
		c.DescribeTransactions(ctx, &kmsg.DescribeTransactionsRequest{TransactionalIDs: []string{"a"}})
		c.ListTransactions(ctx, kmsg.NewPtrListTransactionsRequest())
		c.AddPartitionsToTxn(ctx, &kmsg.AddPartitionsToTxnRequest{Version: 3, TransactionalID: "a", ProducerID: pid, ProducerEpoch: epoch,
			Topics: []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "u", Partitions: []int32{1}}}})
		c.EndTxn(ctx, &kmsg.EndTxnRequest{Version: 3, TransactionalID: "a", ProducerID: pid, ProducerEpoch: epoch, Commit: commit})
		waitIdle(t, c)
		c.InitProducerID(ctx, &kmsg.InitProducerIDRequest{Version: 4, TransactionalID: ptr("a"), TransactionTimeoutMillis: 60000,
			ProducerID: pid, ProducerEpoch: epoch})
		waitIdle(t, c)
		clock.Advance(2 * testConfig().RemoveExpiredInterval)
		waitIdle(t, c)
		c.Close()
	})
}
