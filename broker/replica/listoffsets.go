package replica

import (
	"context"

	"github.com/klassik/klassik/broker/common"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Special ListOffsets timestamps.
const (
	latestTimestamp   int64 = -1
	earliestTimestamp int64 = -2
	maxTimestamp      int64 = -3
)

// ListOffsets answers offset lookups by timestamp (-1 latest, -2 earliest,
// -3 the record with the largest timestamp).
func (m *Manager) ListOffsets(_ context.Context, req *kmsg.ListOffsetsRequest) *kmsg.ListOffsetsResponse {
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	resp.Version = req.Version

	// A partition listed twice (v1+) gets INVALID_REQUEST.
	seen := make(map[common.TopicPartition]int)
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			seen[common.TopicPartition{Topic: t.Topic, Partition: p.Partition}]++
		}
	}
	answerPerPartition(req.Topics, &resp.Topics, func(topic string, rp *kmsg.ListOffsetsRequestTopicPartition) kmsg.ListOffsetsResponseTopicPartition {
		tp := common.TopicPartition{Topic: topic, Partition: rp.Partition}
		sp := kmsg.NewListOffsetsResponseTopicPartition()
		sp.Partition = rp.Partition
		sp.Timestamp, sp.Offset, sp.LeaderEpoch = -1, -1, -1
		if req.Version >= 1 && seen[tp] > 1 {
			sp.ErrorCode = kerr.InvalidRequest.Code
		} else {
			m.listOffset(req, tp, rp, &sp)
		}
		return sp
	})
	return resp
}

// lastFetchableOffset is the last offset a ListOffsets caller may see:
// the HW (read_uncommitted), the LSO (= HW without open transactions) for
// read_committed, the log end for brokers (fromBroker).
func lastFetchableOffset(req *kmsg.ListOffsetsRequest, log Log) (hw, lastFetchable int64, fromBroker bool) {
	hw = log.HighWatermark()
	fromBroker = req.ReplicaID >= 0 || req.ReplicaID == debuggingReplicaID
	lastFetchable = hw
	switch {
	case fromBroker:
		lastFetchable = log.LogEndOffset()
	case req.Version >= 2 && req.IsolationLevel == 1:
		lastFetchable = log.LastStableOffset()
	}
	return hw, lastFetchable, fromBroker
}

// offsetNotAvailableYet is the error code (0: none) for a client asking a
// new leader whose HW has not yet reached the start of its epoch
// (esOffset): it must not answer "latest" with an old end, as the HW of a
// new leader may lag until its followers have fetched in the new epoch.
func offsetNotAvailableYet(version int16, fromBroker bool, esOffset, hw int64) int16 {
	if fromBroker || esOffset < 0 || esOffset <= hw {
		return 0
	}
	if version >= 5 {
		return kerr.OffsetNotAvailable.Code
	}
	return kerr.LeaderNotAvailable.Code
}

func (m *Manager) listOffset(req *kmsg.ListOffsetsRequest, tp common.TopicPartition, rp *kmsg.ListOffsetsRequestTopicPartition, sp *kmsg.ListOffsetsResponseTopicPartition) {
	p, ok := m.Partition(tp)
	if !ok {
		sp.ErrorCode = m.errorCode(m.unknownPartitionError(tp), tp, "list_offsets")
		return
	}
	currentEpoch := int32(-1)
	if req.Version >= 4 {
		currentEpoch = rp.CurrentLeaderEpoch
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	st, kerrE := p.checkLeaderLocked(currentEpoch, true)
	if kerrE != nil {
		sp.ErrorCode = kerrE.Code
		return
	}
	log := st.log
	hw, lastFetchable, fromBroker := lastFetchableOffset(req, log)

	if req.Version == 0 {
		sp.OldStyleOffsets = m.oldStyleOffsets(log, rp.Timestamp, lastFetchable, rp.MaxNumOffsets)
		return
	}

	notAvailable := func() bool {
		sp.ErrorCode = offsetNotAvailableYet(req.Version, fromBroker, st.esOffset, hw)
		return sp.ErrorCode != 0
	}

	switch rp.Timestamp {
	case latestTimestamp:
		if notAvailable() {
			return
		}
		sp.Offset = lastFetchable
		sp.LeaderEpoch = st.leaderEpoch
		return
	case earliestTimestamp, maxTimestamp:
	default:
		if rp.Timestamp < 0 {
			sp.ErrorCode = kerr.InvalidRequest.Code // unknown special timestamp
			return
		}
	}
	off, ts, epoch, found, err := log.FetchOffsetByTimestamp(rp.Timestamp)
	if err != nil {
		sp.ErrorCode = m.errorCode(err, tp, "list_offsets")
		return
	}
	if rp.Timestamp == earliestTimestamp {
		if found {
			sp.Offset, sp.Timestamp, sp.LeaderEpoch = off, -1, epoch
		}
		return
	}
	// Offsets at or beyond the last fetchable offset are not visible to
	// this caller: answer "none" (-1), or OFFSET_NOT_AVAILABLE while a new
	// leader's HW lags its epoch start (the answer may exist but cannot be
	// given yet).
	if !found || off >= lastFetchable {
		notAvailable()
		return
	}
	sp.Offset, sp.Timestamp, sp.LeaderEpoch = off, ts, epoch
}

// oldStyleOffsets answers ListOffsets v0 (max_num_offsets). Kafka returns
// segment base offsets older than the timestamp; without segment listing
// here we answer the lookups a v0 client relies on: latest → [end,
// log start] and earliest → [log start], limited to max_num_offsets.
func (m *Manager) oldStyleOffsets(log Log, ts, lastFetchable int64, maxNum int32) []int64 {
	var out []int64
	switch ts {
	case latestTimestamp:
		out = append(out, lastFetchable)
		if ls := log.LogStartOffset(); ls < lastFetchable {
			out = append(out, ls)
		}
	case earliestTimestamp:
		out = append(out, log.LogStartOffset())
	default:
		if off, _, _, found, err := log.FetchOffsetByTimestamp(ts); err == nil && found && off < lastFetchable {
			out = append(out, off)
		}
	}
	if maxNum >= 0 && len(out) > int(maxNum) {
		out = out[:maxNum]
	}
	if out == nil {
		out = []int64{}
	}
	return out
}
