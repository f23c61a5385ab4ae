package storage

// Flushing a Log (Kafka's Log.flush): fsync what lies above the recovery
// point and raise it, from the flusher goroutine after a roll, on
// flush.messages / flush.ms, or on demand.

import (
	"errors"
	"math"
	"os"
	"time"
)

// startFlusher starts the goroutine that fsyncs rolled segments. It is
// owned by the Log and stopped by Close, closeNoFlush and detach.
func (l *Log) startFlusher() {
	l.flushKick = make(chan struct{}, 1)
	l.flushStop = make(chan struct{})
	l.flushDone = make(chan struct{})
	go func() {
		defer close(l.flushDone)
		for {
			select {
			case <-l.flushStop:
				return
			case <-l.flushKick:
				if err := l.writeTopicIDInTurn(l.flushStop); err != nil {
					// Appends and Close retry it.
					l.logger.Error("writing partition.metadata failed", "err", err)
				}
				if err := l.ioFailed("leader epoch checkpoint", l.epochs.Sync()); err != nil {
					// Every flush that would raise the recovery point, and
					// Close, write it first and fail without it.
					l.logger.Error("writing leader-epoch-checkpoint failed", "err", err)
				}
				if err := l.ioFailed("flush", l.flushRolled()); err != nil {
					// The recovery point stays put; Flush/Close retry.
					l.logger.Error("flushing rolled segment failed", "err", err)
				}
			}
		}
	}()
}

func (l *Log) kickFlusher() {
	if l.flushKick == nil {
		return
	}
	select {
	case l.flushKick <- struct{}{}:
	default: // a flush is already pending; it takes the whole queue
	}
}

// stopFlusher stops the flusher goroutine and waits for it. It must be
// called without holding l.mu (the flusher takes it).
func (l *Log) stopFlusher() {
	if l.flushStop == nil {
		return
	}
	l.stopOnce.Do(func() { close(l.flushStop) })
	<-l.flushDone
}

// flushRolled fsyncs segments queued by rollLocked outside Log.mu, then
// raises the recovery point. A segment deleted or truncated meanwhile is
// simply skipped: whatever replaced it is covered by later flushes.
func (l *Log) flushRolled() error {
	l.mu.Lock()
	queue, snaps := l.rolled, l.unsyncedSnapshots
	l.rolled, l.unsyncedSnapshots = nil, nil
	l.mu.Unlock()
	if len(queue) == 0 && len(snaps) == 0 {
		return nil
	}
	for i, p := range snaps {
		if err := SyncProducerSnapshot(p); err != nil {
			// Put the rest back for Flush/Close to retry.
			l.mu.Lock()
			l.unsyncedSnapshots = append(snaps[i:len(snaps):len(snaps)], l.unsyncedSnapshots...)
			l.rolled = append(queue[:len(queue):len(queue)], l.rolled...)
			l.mu.Unlock()
			return err
		}
	}
	// New leader epochs reach the file before the recovery point passes
	// them (see leaderepoch.go).
	if err := l.epochs.Sync(); err != nil {
		l.mu.Lock()
		l.rolled = append(queue[:len(queue):len(queue)], l.rolled...)
		l.mu.Unlock()
		return err
	}
	if err := l.syncParentEntry(); err != nil {
		l.mu.Lock()
		l.rolled = append(queue[:len(queue):len(queue)], l.rolled...)
		l.mu.Unlock()
		return err
	}
	// The roll created files (segment, snapshot) without fsyncing the
	// directory; do it before any recovery point moves past them.
	if err := syncDir(l.dir); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil // the partition directory is gone (deleted log)
		}
		return err
	}
	var firstErr error
	for _, r := range queue {
		if err := l.flushSegment(r.seg); err != nil {
			if errors.Is(err, os.ErrClosed) {
				continue
			}
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		l.mu.Lock()
		if !l.closed && r.upTo > l.recoveryPoint && r.upTo <= l.logEndOffset.Load() && l.containsLocked(r.seg) {
			l.recoveryPoint = r.upTo
		}
		l.mu.Unlock()
	}
	return firstErr
}

// syncParentEntry makes the log directory's entry for a newly created
// log's directory durable, once: fsync'd segments in a directory a crash
// could lose would be lost with it.
func (l *Log) syncParentEntry() error {
	s := l.parentUnsynced.Load()
	if s == nil {
		return nil
	}
	if err := s.sync(); err != nil {
		return err
	}
	l.parentUnsynced.CompareAndSwap(s, nil)
	return nil
}

// Flush fsyncs every segment at or above the recovery point and raises
// the recovery point to the log end offset.
func (l *Log) Flush() error {
	if l.dirFailed.Load() {
		return l.errOffline()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrLogClosed
	}
	return l.ioFailed("flush", l.flushLocked())
}

func (l *Log) flushLocked() error { return l.flushExceptLocked(nil) }

// flushExceptLocked is flushLocked leaving out the active segment when
// skip is it: the recovery point then rises only to that segment's base
// offset, and the caller raises it to the log end once it fsync'd the
// segment itself (Close fsyncs the active segment after trimming its
// indexes, so a flush of it before the trim would be a second fsync of
// each of its files). Must hold l.mu.
func (l *Log) flushExceptLocked(skip *Segment) error {
	for _, p := range l.unsyncedSnapshots {
		if err := SyncProducerSnapshot(p); err != nil {
			return err
		}
	}
	l.unsyncedSnapshots = nil
	// New leader epochs reach the file before the recovery point passes
	// them (see leaderepoch.go).
	if err := l.epochs.Sync(); err != nil {
		return err
	}
	if l.recoveryPoint < l.logEndOffset.Load() {
		// Data is about to be made durable: so must the directory's entry.
		if err := l.syncParentEntry(); err != nil {
			return err
		}
	}
	if l.dirDirty {
		if err := syncDir(l.dir); err != nil {
			return err
		}
		l.dirDirty = false
	}
	start := l.floorSegmentLocked(l.recoveryPoint)
	if start < 0 {
		start = 0
	}
	for _, s := range l.segments[start:] {
		if s == skip {
			continue
		}
		if err := l.flushSegment(s); err != nil {
			return err
		}
	}
	if skip != nil {
		l.recoveryPoint = max(l.recoveryPoint, min(skip.baseOffset, l.logEndOffset.Load()))
		return nil
	}
	l.recoveryPoint = l.logEndOffset.Load()
	l.unflushedMessages = 0
	l.lastFlushTime = l.clock()
	return nil
}

// flushIfDue runs the flush.ms check (called by the manager's scheduler).
func (l *Log) flushIfDue(now time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.dirFailed.Load() || l.cfg.FlushMs == math.MaxInt64 || l.unflushedMessages == 0 {
		return nil
	}
	if now.Sub(l.lastFlushTime).Milliseconds() < l.cfg.FlushMs {
		return nil
	}
	return l.ioFailed("flush", l.flushLocked())
}
