package storage

// Retention: raising the log start offset (DeleteRecords, retention) and
// deleting old segments by start offset, size and time (Kafka's
// Log.deleteOldSegments), with the delayed removal of .deleted files.

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// removeSegmentsLocked renames segs to .deleted and queues them for
// removal after file.delete.delay.ms. The caller drops them from
// l.segments.
func (l *Log) removeSegmentsLocked(segs []*Segment, now time.Time) error {
	due := now.Add(time.Duration(l.cfg.FileDeleteDelayMs) * time.Millisecond)
	for _, s := range segs {
		if err := s.renameToDeleted(); err != nil {
			return fmt.Errorf("storage: schedule deletion of segment %d: %w", s.baseOffset, err)
		}
		l.pending = append(l.pending, pendingDelete{seg: s, due: due})
		if err := l.producers.DeleteSnapshot(s.baseOffset); err != nil {
			l.logger.Warn("deleting producer snapshot", "offset", s.baseOffset, "err", err)
		}
	}
	return nil
}

// deletePending removes .deleted segments whose delay has passed (called
// by the manager's scheduler; tests call it with an advanced clock).
func (l *Log) deletePending(now time.Time) error {
	l.mu.Lock()
	var due []*Segment
	keep := l.pending[:0]
	for _, p := range l.pending {
		if !now.Before(p.due) {
			due = append(due, p.seg)
		} else {
			keep = append(keep, p)
		}
	}
	l.pending = keep
	l.mu.Unlock()
	var err error
	for _, s := range due {
		if e := s.deleteFiles(); e != nil && err == nil {
			err = e
		}
	}
	return err
}

// DeleteRecordsBefore raises the log start offset to offset
// (DeleteRecords). offset -1 means the high watermark. Offsets above the high
// watermark are kerr.OffsetOutOfRange. Segments entirely below the new start
// are removed by the next retention run.
func (l *Log) DeleteRecordsBefore(offset int64) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, ErrLogClosed
	}
	hw := l.highWatermark.Load()
	if offset == -1 {
		offset = hw
	}
	if offset < 0 || offset > hw {
		return l.logStartOffset.Load(), fmt.Errorf("%w: cannot delete records of %s before %d (high watermark %d)", kerr.OffsetOutOfRange, l.tp, offset, hw)
	}
	l.maybeIncrementLogStartOffsetLocked(offset)
	return l.logStartOffset.Load(), nil
}

func (l *Log) maybeIncrementLogStartOffsetLocked(offset int64) {
	if offset <= l.logStartOffset.Load() {
		return
	}
	l.logStartOffset.Store(offset)
	if err := l.epochs.TruncateFromStart(offset); err != nil {
		l.logger.Warn("leader epoch cache write failed", "err", err)
	}
	l.producers.OnLogStartOffsetIncremented(offset)
}

// DeleteOldSegments applies log-start-offset retention, then with
// cleanup.policy delete size (retention.bytes) and time (retention.ms,
// against record timestamps) retention, and returns the number of segments
// deleted.
func (l *Log) DeleteOldSegments() (int, error) {
	if l.dirFailed.Load() {
		return 0, l.errOffline()
	}
	n, err := l.deleteOldSegments()
	err = l.ioFailed("retention", err)
	l.kickFlusher() // in case retention rolled a new active segment
	return n, err
}

func (l *Log) deleteOldSegments() (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, ErrLogClosed
	}
	now := l.clock()
	total := 0
	ls := l.logStartOffset.Load()
	n, err := l.deleteSegmentsLocked(now, func(s, next *Segment) bool { return next != nil && next.baseOffset <= ls })
	total += n
	if err != nil || !l.cfg.CleanupPolicyDelete {
		return total, err
	}
	if rb := l.cfg.RetentionBytes; rb >= 0 {
		var size int64
		for _, s := range l.segments {
			size += s.size
		}
		diff := size - rb
		n, err := l.deleteSegmentsLocked(now, func(s, _ *Segment) bool {
			if diff >= s.size {
				diff -= s.size
				return true
			}
			return false
		})
		total += n
		if err != nil {
			return total, err
		}
	}
	if rm := l.cfg.RetentionMs; rm >= 0 {
		nowMs := now.UnixMilli()
		n, err := l.deleteSegmentsLocked(now, func(s, _ *Segment) bool { return nowMs-s.LargestTimestamp() > rm })
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// deleteSegmentsLocked deletes the longest prefix of deletable segments
// that lie entirely below the high watermark (a non-empty active segment
// included, after rolling a new one, so a log always has a segment).
func (l *Log) deleteSegmentsLocked(now time.Time, pred func(s, next *Segment) bool) (int, error) {
	hw := l.highWatermark.Load()
	leo := l.logEndOffset.Load()
	n := 0
	for n < len(l.segments) {
		s := l.segments[n]
		var next *Segment
		upper := leo
		if n+1 < len(l.segments) {
			next = l.segments[n+1]
			upper = next.baseOffset
		}
		if hw < upper || (next == nil && s.size == 0) || !pred(s, next) {
			break
		}
		n++
	}
	if n == 0 {
		return 0, nil
	}
	if n == len(l.segments) {
		// Keep at least one segment: roll a fresh active one first.
		if _, err := l.rollLocked(leo, now); err != nil {
			return 0, err
		}
	}
	victims := append([]*Segment(nil), l.segments[:n]...)
	if err := l.removeSegmentsLocked(victims, now); err != nil {
		return 0, err
	}
	l.segments = append(l.segments[:0:0], l.segments[n:]...)
	l.maybeIncrementLogStartOffsetLocked(l.segments[0].baseOffset)
	return n, nil
}
