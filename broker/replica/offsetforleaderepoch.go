package replica

import (
	"context"

	"github.com/klassik/klassik/broker/common"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetForLeaderEpoch answers, from the leader's epoch cache, where each
// requested epoch ends: the largest epoch not above it and the start of
// the next epoch (the log end for the latest). Used by
// followers to truncate and by KIP-320 consumers after a leader change.
func (m *Manager) OffsetForLeaderEpoch(_ context.Context, req *kmsg.OffsetForLeaderEpochRequest) *kmsg.OffsetForLeaderEpochResponse {
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	resp.Version = req.Version
	answerPerPartition(req.Topics, &resp.Topics, func(topic string, rp *kmsg.OffsetForLeaderEpochRequestTopicPartition) kmsg.OffsetForLeaderEpochResponseTopicPartition {
		current := int32(-1)
		if req.Version >= 2 {
			current = rp.CurrentLeaderEpoch
		}
		sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
		sp.Partition = rp.Partition
		sp.ErrorCode, sp.LeaderEpoch, sp.EndOffset = m.endOffsetForEpoch(common.TopicPartition{Topic: topic, Partition: rp.Partition}, current, rp.LeaderEpoch)
		return sp
	})
	return resp
}

func (m *Manager) endOffsetForEpoch(tp common.TopicPartition, current, epoch int32) (int16, int32, int64) {
	p, ok := m.Partition(tp)
	if !ok {
		return m.errorCode(m.unknownPartitionError(tp), tp, "offset_for_leader_epoch"), -1, -1
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	st, kerrE := p.checkLeaderLocked(current, true)
	if kerrE != nil {
		return kerrE.Code, -1, -1
	}
	e, end := st.log.EndOffsetForEpoch(epoch)
	return 0, e, end
}
