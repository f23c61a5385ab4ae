package txn

// AddPartitionsToTxn (key 24) and AddOffsetsToTxn (key 25): Kafka's
// TransactionCoordinator.handleAddPartitionsToTransaction.

import (
	"context"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/common/jvm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// AddPartitionsToTxn adds partitions to the producer's transaction
// (starting it if there is none); every partition of the request gets
// the same code. The api layer has already refused unauthorized and
// unknown partitions.
func (c *Coordinator) AddPartitionsToTxn(_ context.Context, req *kmsg.AddPartitionsToTxnRequest) *kmsg.AddPartitionsToTxnResponse {
	resp := kmsg.NewPtrAddPartitionsToTxnResponse()
	resp.Version = req.Version
	if req.Version >= 4 {
		// Batched (broker-to-broker, KIP-890) requests are not routed here.
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		return resp
	}
	var tps []common.TopicPartition
	seen := map[common.TopicPartition]bool{}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			tp := common.TopicPartition{Topic: t.Topic, Partition: p}
			if !seen[tp] {
				seen[tp] = true
				tps = append(tps, tp)
			}
		}
	}
	code := fencedCode(c.addPartitions(req.TransactionalID, req.ProducerID, req.ProducerEpoch, tps), req.Version, 2)
	forEachTopic(tps, func(topic string, partitions []int32) {
		rt := kmsg.NewAddPartitionsToTxnResponseTopic()
		rt.Topic = topic
		for _, p := range partitions {
			rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	})
	return resp
}

// AddOffsetsToTxn adds the group's __consumer_offsets partition to the
// transaction, so that EndTxn sends it a marker too (the group
// coordinator then makes the transaction's offset commits visible or
// drops them).
func (c *Coordinator) AddOffsetsToTxn(_ context.Context, req *kmsg.AddOffsetsToTxnRequest) *kmsg.AddOffsetsToTxnResponse {
	resp := kmsg.NewPtrAddOffsetsToTxnResponse()
	resp.Version = req.Version
	tp := common.TopicPartition{Topic: OffsetsTopicName, Partition: jvm.PartitionFor(req.Group, c.cfg.OffsetsTopicPartitions)}
	resp.ErrorCode = fencedCode(c.addPartitions(req.TransactionalID, req.ProducerID, req.ProducerEpoch,
		[]common.TopicPartition{tp}), req.Version, 2)
	return resp
}

// addPartitions: the id must be known and held by this producer id
// (else INVALID_PRODUCER_ID_MAPPING) at its current epoch (else
// PRODUCER_FENCED); while a change is pending or the previous
// transaction completes, CONCURRENT_TRANSACTIONS; partitions already in
// an Ongoing transaction are answered at once without a write.
func (c *Coordinator) addPartitions(id string, pid int64, epoch int16, tps []common.TopicPartition) int16 {
	ce, tm, code := c.lookupExisting(id, kerr.InvalidProducerIDMapping.Code)
	if code != 0 {
		return code
	}
	tm.mu.Lock()
	var t transit
	switch {
	case tm.producerID != pid:
		code = kerr.InvalidProducerIDMapping.Code
	case tm.producerEpoch != epoch:
		code = kerr.ProducerFenced.Code
	case tm.pendingLocked(), tm.state == PrepareCommit, tm.state == PrepareAbort:
		code = kerr.ConcurrentTransactions.Code
	case tm.state == Ongoing && tm.hasAllLocked(tps):
		tm.mu.Unlock()
		return 0
	default:
		var err error
		if t, err = tm.prepareAddPartitionsLocked(tps, c.nowMs()); err != nil {
			c.log.Error("cannot add partitions to the transaction", "transactional_id", id, "err", err)
			code = kerr.UnknownServerError.Code
		}
	}
	tm.mu.Unlock()
	if code != 0 {
		return code
	}
	return c.appendTransition(tm, ce, t, nil)
}

func (m *txnMetadata) hasAllLocked(tps []common.TopicPartition) bool {
	for _, tp := range tps {
		if _, ok := m.partitions[tp]; !ok {
			return false
		}
	}
	return true
}
