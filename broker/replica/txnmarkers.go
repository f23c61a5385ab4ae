package replica

// The partition side of transactions: WriteTxnMarkers (key 27), which the
// transaction coordinator sends to partition leaders to close a
// transaction with a COMMIT or ABORT control batch, and DescribeProducers
// (key 61), which lists a partition's producer state (Kafka's
// KafkaApis.handleWriteTxnMarkersRequest / handleDescribeProducersRequest,
// ReplicaManager.activeProducerState, Partition.activeProducerState).

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage/record"
)

// txnMarkerTimeout bounds the ISR wait of WriteTxnMarkers when ctx has no
// deadline (Kafka waits request.timeout.ms, 30 s by default).
const txnMarkerTimeout = 30 * time.Second

// OffsetsTopic is the group coordinator's topic; markers written to its
// partitions complete transactional offset commits.
const OffsetsTopic = "__consumer_offsets"

// WriteTxnMarkers appends one control batch per marker and partition: a
// COMMIT or ABORT record whose value carries the coordinator epoch, with the
// marker's producer id and epoch, transactional and control attributes and
// base sequence -1 (Kafka's MemoryRecords.withEndTransactionMarker). The
// append is the coordinator's (storage.OriginCoordinator: a marker older
// than the producer's epoch is INVALID_PRODUCER_EPOCH, one from an older
// coordinator epoch TRANSACTION_COORDINATOR_FENCED) with acks=-1, and each
// partition is answered once the ISR has its marker, as Kafka does.
//
// A partition this broker does not host answers UNKNOWN_TOPIC_OR_PARTITION
// (Kafka's getMagic finds no local log), one it follows
// NOT_LEADER_OR_FOLLOWER. The response has one entry per producer id, its
// partitions merged, as Kafka's response map does.
//
// The caller must, for every marker, pass the __consumer_offsets
// partitions answered NONE to the group coordinator
// (group.Coordinator.HandleTxnCompletion; OffsetsTxnCompletions lists
// them), as Kafka's response callback does.
func (m *Manager) WriteTxnMarkers(ctx context.Context, req *kmsg.WriteTxnMarkersRequest) *kmsg.WriteTxnMarkersResponse {
	resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	resp.Version = req.Version

	timeout := txnMarkerTimeout
	if deadline, ok := ctx.Deadline(); ok {
		timeout = time.Until(deadline)
	}
	deadline := m.cfg.Clock().Add(timeout)

	type pending struct {
		tp         common.TopicPartition
		lastOffset int64
		code       *int16
	}
	var waits []pending
	byProducer := map[int64]int{} // producer id → index in resp.Markers
	for _, mk := range req.Markers {
		i, ok := byProducer[mk.ProducerID]
		if !ok {
			i = len(resp.Markers)
			byProducer[mk.ProducerID] = i
			rm := kmsg.NewWriteTxnMarkersResponseMarker()
			rm.ProducerID = mk.ProducerID
			resp.Markers = append(resp.Markers, rm)
		}
		ctl := record.ControlAbort
		if mk.Committed {
			ctl = record.ControlCommit
		}
		for _, t := range mk.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = t.Topic
			for _, part := range t.Partitions {
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition = part
				tp := common.TopicPartition{Topic: t.Topic, Partition: part}
				code, last := m.appendTxnMarker(tp, mk.ProducerID, mk.ProducerEpoch, ctl, mk.CoordinatorEpoch)
				rp.ErrorCode = code
				rt.Partitions = append(rt.Partitions, rp)
				if code == 0 {
					waits = append(waits, pending{tp: tp, lastOffset: last, code: &rt.Partitions[len(rt.Partitions)-1].ErrorCode})
				}
			}
			resp.Markers[i].Topics = append(resp.Markers[i].Topics, rt)
		}
	}
	// The waits share one deadline, so a request waits at most the timeout
	// in all (the HW of every partition moves independently meanwhile).
	// The pointers into resp stay valid: the slices are complete.
	for _, w := range waits {
		left := deadline.Sub(m.cfg.Clock())
		if left <= 0 {
			left = time.Millisecond
		}
		*w.code = m.WaitForReplication(ctx, w.tp, w.lastOffset, left)
	}
	return resp
}

// appendTxnMarker writes one marker to a partition this broker leads and
// returns the error code and the marker's offset.
func (m *Manager) appendTxnMarker(tp common.TopicPartition, pid int64, epoch int16, ctl record.ControlType, coordEpoch int32) (int16, int64) {
	p, ok := m.Partition(tp)
	if !ok || p.Log() == nil {
		return kerr.UnknownTopicOrPartition.Code, -1
	}
	batch := record.BuildControlBatch(0, -1, pid, epoch, ctl, coordEpoch, m.cfg.Clock().UnixMilli())
	info, err := m.AppendToLocalLog(tp, batch, -1)
	if code := m.errorCode(err, tp, "WriteTxnMarkers"); code != 0 {
		return code, -1
	}
	return 0, info.LastOffset
}

// OffsetsTxnCompletion is one transaction end the group coordinator must
// apply: the __consumer_offsets partitions where producerID's marker was
// written, and whether it committed.
type OffsetsTxnCompletion struct {
	ProducerID int64
	Partitions []int32
	Commit     bool
}

// OffsetsTxnCompletions lists, for a WriteTxnMarkers request and the
// response WriteTxnMarkers gave it, the markers written to
// __consumer_offsets partitions, in request order. The caller passes each
// to group.Coordinator.HandleTxnCompletion, as Kafka's KafkaApis does in
// the append callback, so the transaction's offsets become visible (or are
// dropped).
func OffsetsTxnCompletions(req *kmsg.WriteTxnMarkersRequest, resp *kmsg.WriteTxnMarkersResponse) []OffsetsTxnCompletion {
	byProducer := map[int64]*kmsg.WriteTxnMarkersResponseMarker{}
	for i := range resp.Markers {
		byProducer[resp.Markers[i].ProducerID] = &resp.Markers[i]
	}
	// The response lists each marker's topics, in request order, under
	// its producer id; next walks them.
	next := map[int64]int{}
	var out []OffsetsTxnCompletion
	for _, mk := range req.Markers {
		rm := byProducer[mk.ProducerID]
		var done []int32
		for _, t := range mk.Topics {
			i := next[mk.ProducerID]
			next[mk.ProducerID]++
			if rm == nil || i >= len(rm.Topics) || t.Topic != OffsetsTopic {
				continue
			}
			for _, p := range rm.Topics[i].Partitions {
				if p.ErrorCode == 0 {
					done = append(done, p.Partition)
				}
			}
		}
		if len(done) > 0 {
			out = append(out, OffsetsTxnCompletion{ProducerID: mk.ProducerID, Partitions: done, Commit: mk.Committed})
		}
	}
	return out
}

// DescribeProducers answers each partition with the producers its local
// log remembers (id, epoch, last sequence and timestamp, coordinator epoch,
// start offset of the open transaction or -1). As in Kafka 2.8 any replica
// hosting the partition answers (Partition.activeProducerState reads the
// local log, so kafka-transactions.sh describe-producers --broker-id can
// ask a follower); an unknown topic or partition answers
// UNKNOWN_TOPIC_OR_PARTITION, a known one not hosted here
// NOT_LEADER_OR_FOLLOWER.
func (m *Manager) DescribeProducers(_ context.Context, req *kmsg.DescribeProducersRequest) *kmsg.DescribeProducersResponse {
	resp := req.ResponseKind().(*kmsg.DescribeProducersResponse)
	resp.Version = req.Version
	for _, t := range req.Topics {
		rt := kmsg.NewDescribeProducersResponseTopic()
		rt.Topic = t.Topic
		for _, part := range t.Partitions {
			rp := kmsg.NewDescribeProducersResponseTopicPartition()
			rp.Partition = part
			tp := common.TopicPartition{Topic: t.Topic, Partition: part}
			rp.ErrorCode, rp.ActiveProducers = m.activeProducerState(tp)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func (m *Manager) activeProducerState(tp common.TopicPartition) (int16, []kmsg.DescribeProducersResponseTopicPartitionActiveProducer) {
	p, ok := m.Partition(tp)
	if !ok {
		return m.errorCode(m.unknownPartitionError(tp), tp, "DescribeProducers"), nil
	}
	log := p.Log()
	if log == nil {
		return kerr.NotLeaderForPartition.Code, nil
	}
	out := []kmsg.DescribeProducersResponseTopicPartitionActiveProducer{}
	for _, e := range log.ActiveProducers() {
		ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
		ap.ProducerID = e.ProducerID
		ap.ProducerEpoch = int32(e.ProducerEpoch)
		ap.LastSequence = e.LastSeq()
		ap.LastTimestamp = e.LastTimestamp
		ap.CoordinatorEpoch = e.CoordinatorEpoch
		ap.CurrentTxnStartOffset = e.CurrentTxnFirstOffset
		out = append(out, ap)
	}
	return 0, out
}
