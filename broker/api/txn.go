package api

// Wiring of the transaction coordinator (broker/txn, Kafka's
// TransactionCoordinator) into the request path: the interface this layer
// needs, the __transaction_state topic FindCoordinator creates, and the
// checks KafkaApis makes before a transactional request reaches the
// coordinator (authorization, unknown partitions).

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/txn"
	"github.com/klassik/klassik/config"
)

// TxnCoordinator is the part of *txn.Coordinator the api layer routes to.
// Each method owns every rule of its API (coordinator ownership, loading,
// producer epochs, the transaction state machine); this layer finds the
// coordinator and authorizes.
type TxnCoordinator interface {
	PartitionFor(transactionalID string) int32
	InitProducerID(ctx context.Context, req *kmsg.InitProducerIDRequest) *kmsg.InitProducerIDResponse
	AddPartitionsToTxn(ctx context.Context, req *kmsg.AddPartitionsToTxnRequest) *kmsg.AddPartitionsToTxnResponse
	AddOffsetsToTxn(ctx context.Context, req *kmsg.AddOffsetsToTxnRequest) *kmsg.AddOffsetsToTxnResponse
	EndTxn(ctx context.Context, req *kmsg.EndTxnRequest) *kmsg.EndTxnResponse
	DescribeTransactions(ctx context.Context, req *kmsg.DescribeTransactionsRequest) *kmsg.DescribeTransactionsResponse
	ListTransactions(ctx context.Context, req *kmsg.ListTransactionsRequest) *kmsg.ListTransactionsResponse
}

var _ TxnCoordinator = (*txn.Coordinator)(nil)

// transactionTopic is __transaction_state as the transaction coordinator
// needs it: transaction.state.log.num.partitions partitions,
// transaction.state.log.replication.factor replicas, compacted,
// uncompressed, min.insync.replicas = transaction.state.log.min.isr, no
// unclean election, transaction.state.log.segment.bytes.
func (a *Apis) transactionTopic() internalTopic {
	tc := a.conf().Transactions()
	return internalTopic{
		name: config.TransactionStateTopicName, partitions: tc.StateLogPartitions,
		rf: tc.StateLogReplication, rfKey: "transaction.state.log.replication.factor",
		what: "the transaction state topic",
		configs: map[string]string{
			"cleanup.policy":                 "compact",
			"compression.type":               "uncompressed",
			"min.insync.replicas":            fmt.Sprint(tc.StateLogMinISR),
			"unclean.leader.election.enable": "false",
			"segment.bytes":                  fmt.Sprint(tc.StateLogSegmentBytes),
		},
	}
}

// txnCoordinatorFor answers one FindCoordinator key of type transaction: the
// leader of the id's __transaction_state partition on the request's
// listener, creating the topic on first use.
func (a *Apis) txnCoordinatorFor(ctx context.Context, key string, listener string) (int32, string, int32, error) {
	return a.coordinatorOn(ctx, a.transactionTopic(), a.txn.PartitionFor(key), listener)
}
