package replica

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/klassik/klassik/broker/common"
)

// errNotFollowing means the partition is no longer a follower at the
// leader epoch the fetcher works with: the fetcher drops what it was doing
// for it (a LeaderAndIsr re-adds it if needed).
var errNotFollowing = errors.New("replica: partition is not following at this leader epoch")

// followerLogState is what the fetcher needs from a follower's log.
type followerLogState struct {
	leo, logStart, hw int64
	latestEpoch       int32 // -1 when the epoch cache is empty
}

// followerLogLocked returns the log of a partition that follows at
// leaderEpoch. Must hold p.mu (read).
func (p *Partition) followerLogLocked(leaderEpoch int32) (Log, error) {
	if p.log == nil || p.leaderID == p.brokerID || p.leaderID == noLeader || p.leaderEpoch != leaderEpoch {
		return nil, errNotFollowing
	}
	return p.log, nil
}

func (m *Manager) withFollowerLog(tp common.TopicPartition, leaderEpoch int32, f func(p *Partition, l Log) error) error {
	p, ok := m.Partition(tp)
	if !ok {
		return errNotFollowing
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	l, err := p.followerLogLocked(leaderEpoch)
	if err != nil {
		return err
	}
	return f(p, l)
}

// followerState reads the follower's log ends and latest epoch.
func (m *Manager) followerState(tp common.TopicPartition, leaderEpoch int32) (followerLogState, error) {
	var st followerLogState
	err := m.withFollowerLog(tp, leaderEpoch, func(_ *Partition, l Log) error {
		st.leo, st.logStart, st.hw = l.LogEndOffset(), l.LogStartOffset(), l.HighWatermark()
		st.latestEpoch = -1
		if e, ok := l.LatestEpoch(); ok {
			st.latestEpoch = e
		}
		return nil
	})
	return st, err
}

// appendFromLeader appends a fetch response's records as follower and
// copies the leader's HW and log start: the HW is
// clamped to the follower's own log end, the log start only moves forward.
func (m *Manager) appendFromLeader(tp common.TopicPartition, leaderEpoch int32, records []byte, leaderHW, leaderLogStart int64) (followerLogState, error) {
	var st followerLogState
	hwRose := false
	err := m.withFollowerLog(tp, leaderEpoch, func(p *Partition, l Log) error {
		if len(records) > 0 {
			if base, last, ok := firstBatchRange(records); ok {
				if leo := l.LogEndOffset(); leo == l.LogStartOffset() && base < leo && last >= leo {
					// An empty follower log starting inside the leader's first
					// batch (the leader's log start moved into a batch, e.g. by
					// DeleteRecords): restart the log at the batch's base
					// offset so the batch can be copied whole.
					if err := l.TruncateFullyAndStartAt(base); err != nil {
						return fmt.Errorf("restarting %s-%d at %d: %w", tp.Topic, tp.Partition, base, err)
					}
				}
			}
			if _, err := l.AppendAsFollower(records); err != nil {
				return fmt.Errorf("appending replicated records to %s-%d: %w", tp.Topic, tp.Partition, err)
			}
		}
		// A follower's HW is its leader's, clamped to its own log end. This
		// fetcher is the only writer while the partition follows at this
		// epoch (checked under p.mu read), so before and after compare.
		before := l.HighWatermark()
		if leaderHW >= 0 {
			l.SetHighWatermark(min(leaderHW, l.LogEndOffset()))
		}
		hwRose = l.HighWatermark() > before
		if leaderLogStart > l.LogStartOffset() && leaderLogStart <= l.HighWatermark() {
			if _, err := l.DeleteRecordsBefore(leaderLogStart); err != nil {
				m.log.Warn("following the leader's log start", "topic", tp.Topic, "partition", tp.Partition, "err", err)
			}
		}
		st.leo, st.logStart, st.hw = l.LogEndOffset(), l.LogStartOffset(), l.HighWatermark()
		st.latestEpoch = -1
		if e, ok := l.LatestEpoch(); ok {
			st.latestEpoch = e
		}
		return nil
	})
	if hwRose {
		m.wakeFetches(tp)
	}
	return st, err
}

// truncationOffset: given the leader's answer
// (leaderEpoch, leaderEnd) for the follower's latest epoch, where must the
// follower's log end? done is false when the follower lacks the leader's
// epoch entirely: it truncates to the end of its own largest earlier epoch
// and asks again with its new latest epoch.
func truncationOffset(leaderEpoch int32, leaderEnd int64, localEndFor func(int32) (int32, int64), leo, fetchOffset int64) (offset int64, done bool) {
	if leaderEnd == -1 {
		return fetchOffset, true
	}
	if leaderEpoch == -1 {
		return min(leaderEnd, leo), true
	}
	fe, fend := localEndFor(leaderEpoch)
	if fe == -1 && fend == -1 {
		return min(leaderEnd, leo), true
	}
	if fe != leaderEpoch {
		return min(fend, leo), false
	}
	return min(fend, leaderEnd, leo), true
}

// truncateByEpoch applies the leader's OffsetForLeaderEpoch answer (or a
// Fetch diverging epoch) to a follower: a follower never truncates to its
// own HW alone, which may be stale.
func (m *Manager) truncateByEpoch(tp common.TopicPartition, leaderEpoch int32, le int32, lend int64, fetchOffset int64) (int64, bool, error) {
	var off int64
	var done bool
	err := m.withFollowerLog(tp, leaderEpoch, func(p *Partition, l Log) error {
		leo := l.LogEndOffset()
		off, done = truncationOffset(le, lend, l.EndOffsetForEpoch, leo, fetchOffset)
		return m.truncateLocked(p, l, off, "leader epoch")
	})
	return off, done, err
}

// truncateFollower truncates a follower's log to offset (after an
// OFFSET_OUT_OF_RANGE whose leader has a shorter log, or to the HW when
// the log has no epochs).
func (m *Manager) truncateFollower(tp common.TopicPartition, leaderEpoch int32, offset int64, reason string) error {
	return m.withFollowerLog(tp, leaderEpoch, func(p *Partition, l Log) error {
		return m.truncateLocked(p, l, offset, reason)
	})
}

func (m *Manager) truncateLocked(p *Partition, l Log, offset int64, reason string) error {
	leo, hw := l.LogEndOffset(), l.HighWatermark()
	if offset >= leo {
		// No record goes, but the log still cuts its leader epoch cache
		// back to the log end: an epoch this broker assigned as leader
		// without writing must not outlive the leadership.
		if err := l.TruncateTo(offset); err != nil {
			return fmt.Errorf("truncating %s-%d epochs at %d: %w", p.tp.Topic, p.tp.Partition, leo, err)
		}
		return nil
	}
	if offset < hw {
		m.log.Warn("truncating follower below its high watermark", "topic", p.tp.Topic, "partition", p.tp.Partition,
			"offset", offset, "high_watermark", hw, "reason", reason)
	}
	m.log.Info("truncating follower log", "topic", p.tp.Topic, "partition", p.tp.Partition,
		"from", leo, "to", offset, "reason", reason)
	if err := l.TruncateTo(offset); err != nil {
		return fmt.Errorf("truncating %s-%d to %d: %w", p.tp.Topic, p.tp.Partition, offset, err)
	}
	return nil
}

// restartFollowerLog empties a follower's log and restarts it at offset
// (the leader's log start is beyond the follower's log end).
func (m *Manager) restartFollowerLog(tp common.TopicPartition, leaderEpoch int32, offset int64) error {
	return m.withFollowerLog(tp, leaderEpoch, func(p *Partition, l Log) error {
		m.log.Warn("restarting follower log at the leader's log start", "topic", tp.Topic, "partition", tp.Partition,
			"log_end_offset", l.LogEndOffset(), "offset", offset)
		return l.TruncateFullyAndStartAt(offset)
	})
}

// firstBatchRange returns the base and last offsets of the first batch of
// records.
func firstBatchRange(records []byte) (base, last int64, ok bool) {
	if len(records) < batchLastDeltaOffset+4 {
		return 0, 0, false
	}
	base = int64(binary.BigEndian.Uint64(records))
	return base, base + int64(int32(binary.BigEndian.Uint32(records[batchLastDeltaOffset:]))), true
}
