package replica

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/klassik/klassik/broker/common"
	"github.com/twmb/franz-go/pkg/kerr"
)

// readChunk bounds one Log.Read of ReadLocalLog (a larger batch is still
// returned whole).
const readChunk = 1 << 20

// ReadLocalLog calls fn for every record batch of a partition this broker
// leads, from startOffset (clamped to the log start) up to the log end at
// the time of the call. The group coordinator uses it to load
// __consumer_offsets; like Kafka's loadGroupsAndOffsets it reads to the log
// end, not the HW: right after an election the new leader's HW may still
// lag records that were committed under the previous leader. fn's slice is only valid during the call. Errors: not
// hosted → UNKNOWN_TOPIC_OR_PARTITION / NOT_LEADER_OR_FOLLOWER (kerr).
func (m *Manager) ReadLocalLog(ctx context.Context, tp common.TopicPartition, startOffset int64, fn func(batch []byte) error) error {
	p, ok := m.Partition(tp)
	if !ok {
		return m.unknownPartitionError(tp)
	}
	p.mu.RLock()
	st, kerrE := p.checkLeaderLocked(-1, true)
	p.mu.RUnlock()
	if kerrE != nil {
		return kerrE
	}
	log := st.log
	end := log.LogEndOffset()
	next := max(startOffset, log.LogStartOffset())
	for next < end {
		if err := ctx.Err(); err != nil {
			return err
		}
		recs, err := log.ReadRecords(next, readChunk, end, true)
		if err != nil {
			return err
		}
		if recs == nil || recs.Len() == 0 {
			return nil
		}
		data, err := recs.ReadAll()
		if err != nil {
			return err
		}
		for len(data) > 0 {
			if len(data) < batchHeaderMinSize+4 {
				return fmt.Errorf("replica: reading %s-%d: %w", tp.Topic, tp.Partition, kerr.CorruptMessage)
			}
			n := int(int32(binary.BigEndian.Uint32(data[batchLengthOffset:]))) + batchLengthOffset + 4
			if n < batchHeaderMinSize+4 || n > len(data) {
				return fmt.Errorf("replica: reading %s-%d: %w", tp.Topic, tp.Partition, kerr.CorruptMessage)
			}
			batch := data[:n]
			last := int64(binary.BigEndian.Uint64(batch)) + int64(int32(binary.BigEndian.Uint32(batch[batchLastDeltaOffset:])))
			if err := fn(batch); err != nil {
				return err
			}
			if last+1 > next {
				next = last + 1
			}
			data = data[n:]
		}
	}
	return nil
}
