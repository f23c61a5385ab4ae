package storage

// Truncating a Log: a follower cutting back to its leader (Kafka's
// Log.truncateTo) and replacing the whole log (truncateFullyAndStartAt).

import (
	"fmt"
	"time"
)

// TruncateTo removes every record at or after offset (replication).
//
// At or past the log end no record goes, but the leader epoch cache is
// still cut back to the log end: a broker that became leader assigns its
// epoch at the log end before writing anything, and if it loses the
// leadership before its first append that entry names an epoch the new
// leader never had. Kept, it makes the follower send that stale epoch
// forever and be answered with a diverging epoch at the same offset, so it
// never catches up and drops out of the ISR (Kafka's Log.truncateTo makes
// the same cut).
func (l *Log) TruncateTo(offset int64) error {
	return l.cutAt(offset, "truncate", "to", l.truncateToLocked)
}

func (l *Log) truncateToLocked(offset int64) error {
	if leo := l.logEndOffset.Load(); offset >= leo {
		return l.epochs.TruncateFromEnd(leo)
	}
	now := l.clock()
	if offset < l.segments[0].baseOffset {
		return l.truncateFullyAndStartAtLocked(offset, now)
	}
	keep := l.floorSegmentLocked(offset)
	// Segments whose base is above offset go entirely.
	if err := l.removeSegmentsLocked(l.segments[keep+1:], now); err != nil {
		return err
	}
	l.segments = l.segments[:keep+1]
	act := l.activeLocked()
	if _, err := act.truncateTo(offset, now); err != nil {
		return err
	}
	if err := l.reactivateLocked(act); err != nil {
		return err
	}
	l.logEndOffset.Store(offset)
	if ls := l.logStartOffset.Load(); ls > offset {
		l.logStartOffset.Store(offset)
	}
	if l.highWatermark.Load() > offset {
		l.highWatermark.Store(offset)
	}
	if l.recoveryPoint > offset {
		l.recoveryPoint = offset
	}
	if err := l.epochs.TruncateFromEnd(offset); err != nil {
		return err
	}
	if err := l.reloadProducerStateLocked(now); err != nil {
		return err
	}
	l.lowerCleanerCheckpointLocked(offset)
	l.noteTruncationLocked(offset)
	return nil
}

// lowerCleanerCheckpointLocked lowers this partition's entry in the
// directory's cleaner-offset-checkpoint to offset after a truncation below
// it (Kafka's LogCleaner.maybeTruncateCheckpoint). Without it the records
// appended again between offset and the old checkpoint would count as
// already cleaned and keep every duplicate key for good. The caller holds
// l.mu; cleanerCheckpointMu is a leaf below it.
//
// The truncation itself has succeeded by now, so a failure to rewrite the
// file is logged, not returned: the in-memory floor still makes this
// process's next pass start at or below offset (readCleanerCheckpoint),
// and that pass records a correct checkpoint.
func (l *Log) lowerCleanerCheckpointLocked(offset int64) {
	cleanerCheckpointMu.Lock()
	defer cleanerCheckpointMu.Unlock()
	if f := l.cleanerFloor.Load(); f == 0 || offset+1 < f {
		l.cleanerFloor.Store(offset + 1)
	}
	path := cleanerCheckpointPath(l)
	cp, err := ReadOffsetCheckpoint(path)
	if err == nil {
		off, ok := cp[l.tp]
		if !ok || off <= offset {
			return
		}
		cp[l.tp] = offset
		err = WriteOffsetCheckpoint(path, cp)
	}
	if err != nil {
		l.logger.Warn("cannot lower the cleaner checkpoint after a truncation", "offset", offset, "err", err)
	}
}

// TruncateFullyAndStartAt deletes every segment and restarts the log empty
// at offset (a follower far behind the leader's log start).
func (l *Log) TruncateFullyAndStartAt(offset int64) error {
	return l.cutAt(offset, "restart", "at", func(offset int64) error {
		return l.truncateFullyAndStartAtLocked(offset, l.clock())
	})
}

// cutAt runs cut(offset) under the log's write lock after the checks both
// truncations share: a negative offset is refused ("cannot <verb> <tp>
// <prep> negative offset") and a closed log answers ErrLogClosed.
func (l *Log) cutAt(offset int64, verb, prep string, cut func(offset int64) error) error {
	if offset < 0 {
		return fmt.Errorf("storage: cannot %s %s %s negative offset %d", verb, l.tp, prep, offset)
	}
	if l.dirFailed.Load() {
		return l.errOffline()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrLogClosed
	}
	return l.ioFailed(verb, cut(offset))
}

func (l *Log) truncateFullyAndStartAtLocked(offset int64, now time.Time) error {
	if err := l.removeSegmentsLocked(l.segments, now); err != nil {
		return err
	}
	seg, err := createSegment(l.dir, offset, &l.cfg, now, l.jitter())
	if err != nil {
		return err
	}
	l.segments = []*Segment{seg}
	l.logEndOffset.Store(offset)
	l.logStartOffset.Store(offset)
	l.highWatermark.Store(offset)
	l.recoveryPoint = offset
	if err := l.epochs.Clear(); err != nil {
		return err
	}
	if err := l.producers.TruncateFullyAndStartAt(offset); err != nil {
		return err
	}
	l.lowerCleanerCheckpointLocked(offset)
	l.noteTruncationLocked(offset)
	return syncDir(l.dir)
}
