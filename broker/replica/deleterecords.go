package replica

import (
	"context"

	"github.com/klassik/klassik/broker/common"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DeleteRecords moves log start offsets forward, never past the high
// watermark (OFFSET_OUT_OF_RANGE). Offset -1 means "up to the high
// watermark".
//
// Kafka answers once every replica's log start offset reached the new low
// watermark; here the answer is immediate with the leader's log start, and
// followers copy it from their next fetch response.
func (m *Manager) DeleteRecords(_ context.Context, req *kmsg.DeleteRecordsRequest) *kmsg.DeleteRecordsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteRecordsResponse)
	resp.Version = req.Version
	answerPerPartition(req.Topics, &resp.Topics, m.deleteRecordsPartition)
	return resp
}

func (m *Manager) deleteRecordsPartition(topic string, rp *kmsg.DeleteRecordsRequestTopicPartition) kmsg.DeleteRecordsResponseTopicPartition {
	sp := kmsg.NewDeleteRecordsResponseTopicPartition()
	sp.Partition = rp.Partition
	sp.LowWatermark = -1
	tp := common.TopicPartition{Topic: topic, Partition: rp.Partition}
	low, err := m.deleteRecords(tp, rp.Offset)
	sp.ErrorCode = m.errorCode(err, tp, "delete_records")
	if sp.ErrorCode == 0 {
		sp.LowWatermark = low
	}
	return sp
}

func (m *Manager) deleteRecords(tp common.TopicPartition, offset int64) (int64, error) {
	if isInternalTopic(tp.Topic) {
		return -1, kerr.InvalidTopicException
	}
	p, ok := m.Partition(tp)
	if !ok {
		return -1, m.unknownPartitionError(tp)
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	st, kerrE := p.checkLeaderLocked(-1, true)
	if kerrE != nil {
		return -1, kerrE
	}
	log := st.log
	if !log.DeleteRecordsAllowed() {
		return -1, kerr.PolicyViolation
	}
	hw := log.HighWatermark()
	if offset == -1 {
		offset = hw
	}
	if offset < 0 || offset > hw {
		return -1, kerr.OffsetOutOfRange
	}
	low, err := log.DeleteRecordsBefore(offset)
	if err != nil {
		return -1, err
	}
	return low, nil
}
