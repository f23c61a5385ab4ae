package storage

// Rolling a Log's active segment (Kafka's Log.roll / maybeRoll): when a
// new segment starts, and how the old one is queued for its fsync.

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// maybeRollLocked rolls the active segment if shouldRoll says so and
// returns the segment to append to.
func (l *Log) maybeRollLocked(size int, info AppendInfo, now time.Time) (*Segment, error) {
	seg := l.activeLocked()
	if !seg.shouldRoll(&l.cfg, size, info.MaxTimestamp, info.LastOffset, now) {
		return seg, nil
	}
	return l.rollLocked(info.FirstOffset, now)
}

// Roll forces a new active segment at the log end offset.
func (l *Log) Roll() error {
	if l.dirFailed.Load() {
		return l.errOffline()
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrLogClosed
	}
	_, err := l.rollLocked(l.logEndOffset.Load(), l.clock())
	l.mu.Unlock()
	if ferr := l.flushRolled(); err == nil {
		err = ferr
	}
	return l.ioFailed("roll", err)
}

// rolledSegment is an inactive segment waiting for its post-roll fsync;
// the recovery point moves to upTo once it is done.
type rolledSegment struct {
	seg  *Segment
	upTo int64
}

func (l *Log) containsLocked(s *Segment) bool {
	i := l.floorSegmentLocked(s.baseOffset)
	return i >= 0 && l.segments[i] == s
}

// rollLocked finishes the old active segment (final time
// index entry, trim, fsync), create the new one and raise the recovery
// point.
func (l *Log) rollLocked(newBase int64, now time.Time) (*Segment, error) {
	if leo := l.logEndOffset.Load(); newBase < leo {
		newBase = leo
	}
	old := l.activeLocked()
	if old.baseOffset == newBase {
		if old.size > 0 {
			return nil, fmt.Errorf("storage: roll to existing non-empty segment %d", newBase)
		}
		// Replace the empty active segment at the same offset.
		if err := old.close(); err != nil {
			return nil, err
		}
		l.segments = l.segments[:len(l.segments)-1]
	} else {
		if err := old.onBecomeInactive(); err != nil {
			return nil, fmt.Errorf("storage: finish segment %d: %w", old.baseOffset, err)
		}
		// The fsync itself runs after the lock is released (flushRolled).
		l.rolled = append(l.rolled, rolledSegment{seg: old, upTo: newBase})
	}
	seg, err := createSegment(l.dir, newBase, &l.cfg, now, l.jitter())
	if err != nil {
		return nil, err
	}
	l.segments = append(l.segments, seg)
	// The directory entry of the new segment is made durable by the next
	// fsync that moves the recovery point past it (flushRolled, or
	// flushLocked through dirDirty), not here under the lock: a directory
	// fsync commits the filesystem journal, which waited for the rolled
	// segment's data and stalled appends for milliseconds per roll. Until
	// then everything in the new segment is above the recovery point, so
	// losing the file in a crash loses only unflushed data.
	l.dirDirty = true
	l.producers.UpdateMapEndOffset(newBase)
	// Written now, fsync'd with the rolled segment by the flusher (or the
	// next flushLocked): two fsyncs under Log.mu cost milliseconds per
	// roll on a busy disk.
	snap, err := l.producers.TakeSnapshotNoSync()
	if err != nil {
		return nil, fmt.Errorf("storage: producer snapshot at %d: %w", newBase, err)
	}
	if snap != "" {
		l.unsyncedSnapshots = append(l.unsyncedSnapshots, snap)
	}
	return seg, nil
}

func (l *Log) jitter() int64 {
	j := l.cfg.SegmentJitterMs
	if j <= 0 {
		return 0
	}
	if r := l.cfg.rollMs(); r < j {
		j = r
	}
	return rand.Int64N(j)
}

// reactivateLocked gives a trimmed segment's indexes back their maximum
// size (segment.index.bytes, rounded down to whole entries) now that it
// is the active segment again. The files grow to it at their next
// entry (ensureCapacityLocked), so loading an idle log does not touch
// them.
func (l *Log) reactivateLocked(s *Segment) error {
	if err := s.offsetIdx.reactivate(l.cfg.maxIndexBytes(offsetIndexEntrySize)); err != nil {
		return err
	}
	return s.timeIdx.reactivate(l.cfg.maxIndexBytes(timeIndexEntrySize))
}
