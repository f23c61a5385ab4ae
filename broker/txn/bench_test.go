package txn

import (
	"context"
	"testing"

	"github.com/klassik/klassik/broker/group"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// BenchmarkCommit measures the coordinator's own cost of one transaction
// (AddPartitionsToTxn of two partitions, EndTxn(commit), the markers and
// CompleteCommit) against the in-memory log and markers.
func BenchmarkCommit(b *testing.B) {
	c, _ := leaderOf(b, group.NewMemStore(), "a")
	ctx := context.Background()
	init := c.InitProducerID(ctx, &kmsg.InitProducerIDRequest{Version: 4, TransactionalID: ptr("a"), TransactionTimeoutMillis: 60000})
	add := &kmsg.AddPartitionsToTxnRequest{Version: 3, TransactionalID: "a", ProducerID: init.ProducerID, ProducerEpoch: init.ProducerEpoch,
		Topics: []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "t", Partitions: []int32{0, 1}}}}
	end := &kmsg.EndTxnRequest{Version: 3, TransactionalID: "a", ProducerID: init.ProducerID, ProducerEpoch: init.ProducerEpoch, Commit: true}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := c.AddPartitionsToTxn(ctx, add); r.Topics[0].Partitions[0].ErrorCode != 0 {
			b.Fatal(errName(r.Topics[0].Partitions[0].ErrorCode))
		}
		if r := c.EndTxn(ctx, end); r.ErrorCode != 0 {
			b.Fatal(errName(r.ErrorCode))
		}
		waitIdle(b, c)
	}
}
