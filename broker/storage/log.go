package storage

// Log: one partition replica's log (Kafka's UnifiedLog + LocalLog): the
// ordered segments, log start/end offsets, high watermark, recovery point
// and the leader epoch cache.

import (
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage/record"
)

// ErrLogClosed is returned by operations on a closed log.
var ErrLogClosed = errors.New("storage: log is closed")

// ErrNonMonotonicOffsets reports follower data whose offsets go backwards
// or start below the log end offset.
var ErrNonMonotonicOffsets = errors.New("storage: offsets not monotonically increasing")

// AppendInfo describes one append (Kafka's LogAppendInfo).
type AppendInfo struct {
	FirstOffset, LastOffset            int64
	MaxTimestamp, OffsetOfMaxTimestamp int64
	LogAppendTime                      int64 // -1 unless the topic uses LogAppendTime
	LogStartOffset                     int64
	NumMessages                        int32
	Duplicate                          bool // producer-state duplicate: nothing appended, original offsets
}

// FetchData is the result of a Read.
type FetchData struct {
	Records     FileRecords
	FirstOffset int64 // base offset of the first batch returned (-1 if empty)
}

// pendingDelete is a segment renamed to .deleted awaiting removal.
type pendingDelete struct {
	seg *Segment
	due time.Time
}

// Log is safe for concurrent use. See LOCKS.md for the lock order.
type Log struct {
	dir    string
	tp     common.TopicPartition
	clock  func() time.Time
	logger *slog.Logger
	epochs *LeaderEpochCache
	// recoveredAtLoad is how many segments loading re-validated after an
	// unclean shutdown (the LogManager's load log line; tests).
	recoveredAtLoad int

	// Offsets readable without the lock (atomics written under mu).
	logStartOffset atomic.Int64
	logEndOffset   atomic.Int64
	highWatermark  atomic.Int64
	// cleanerFloor is 1 + the lowest offset this log was truncated to
	// since the cleaner last read its cleaner-offset-checkpoint entry (0:
	// none). It is read and written only under cleanerCheckpointMu; a
	// pass that was running during a truncation clamps the end offset it
	// records to it (see lowerCleanerCheckpointLocked).
	cleanerFloor atomic.Int64
	// truncationFloor is 1 + the lowest offset this log was truncated to
	// since a copy of it last asked (futurelog.go TakeTruncationFloor;
	// 0: none). Written under mu.
	truncationFloor atomic.Int64

	// topicIDMu guards the following (partition.metadata's cached topic
	// id); it is a leaf lock, taken with no other log lock held.
	topicIDMu    sync.Mutex
	topicID      [16]byte
	topicIDKnown bool
	// topicIDUnwritten: the topic id is known but partition.metadata is
	// not written yet (SetTopicID). Written under topicIDMu; appends read
	// it without the lock.
	topicIDUnwritten atomic.Bool

	// mu guards the following. Appends, rolls, truncation and retention
	// take it exclusively; reads take it shared only while locating bytes.
	mu                sync.RWMutex
	cfg               LogConfig
	segments          []*Segment // ascending base offset; last is active
	recoveryPoint     int64
	unflushedMessages int64
	lastFlushTime     time.Time
	pending           []pendingDelete
	rolled            []rolledSegment // awaiting their post-roll fsync
	dirDirty          bool            // a file was created since the last directory fsync
	// parentUnsynced: the log directory's entry for this log's directory
	// awaits this fsync (syncParentEntry); nil once done.
	parentUnsynced    atomic.Pointer[dirSyncer]
	unsyncedSnapshots []string // producer snapshots written at rolls, not yet fsync'd
	closed            bool

	// The flusher goroutine (startFlusher); channels set once at load.
	flushKick chan struct{}
	flushStop chan struct{}
	flushDone chan struct{}
	stopOnce  sync.Once
	producers *ProducerStateManager // producerstate.go; never nil after load
	stats     *logStats             // metrics.go; never nil after load

	// failure reports an I/O error as a failure of the log's directory
	// (logdirfailure.go); set before the log is shared, nil for OpenLog.
	// dirFailed is set at the first I/O error: every later operation
	// answers KAFKA_STORAGE_ERROR without touching the disk.
	failure   *dirFailure
	dirFailed atomic.Bool
}

// activeLocked returns the active segment, the last one (there is always one).
func (l *Log) activeLocked() *Segment { return l.segments[len(l.segments)-1] }

// TopicPartition returns the partition this log belongs to.
func (l *Log) TopicPartition() common.TopicPartition { return l.tp }

// Dir returns the partition directory.
func (l *Log) Dir() string { return l.dir }

// LogStartOffset is the earliest offset readable by consumers.
func (l *Log) LogStartOffset() int64 { return l.logStartOffset.Load() }

// LogEndOffset is the offset the next appended record gets.
func (l *Log) LogEndOffset() int64 { return l.logEndOffset.Load() }

// HighWatermark is the partition's high watermark. The Log is its one
// owner: the value lives here (read without a lock), and only three things
// move it, each under l.mu:
//   - a leader raises it with MaybeIncrementHighWatermark, which never
//     lowers it, so appends finishing in any order cannot move it back;
//   - a follower (and the loader, from replication-offset-checkpoint)
//     stores its leader's value with SetHighWatermark;
//   - truncation lowers it to the truncation offset.
//
// It always stays within [logStartOffset, logEndOffset]. broker/replica's
// Partition decides when each is called (under its role lock, so leader
// and follower updates never run at once).
func (l *Log) HighWatermark() int64 { return l.highWatermark.Load() }

// SetHighWatermark stores hw clamped to [logStartOffset, logEndOffset]
// (Kafka's Log.updateHighWatermark: a follower copying its leader's value,
// which may be lower than its own right after a leader change). The
// LogManager checkpoints it into replication-offset-checkpoint.
func (l *Log) SetHighWatermark(hw int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.setHighWatermarkLocked(hw)
}

// MaybeIncrementHighWatermark raises the HW to hw (clamped to the log end)
// if that is above the current value, and reports whether it rose; it
// never lowers it. A leader's only way to move its HW.
func (l *Log) MaybeIncrementHighWatermark(hw int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	hw = min(hw, l.logEndOffset.Load())
	if hw <= l.highWatermark.Load() {
		return false
	}
	l.setHighWatermarkLocked(hw)
	return true
}

func (l *Log) setHighWatermarkLocked(hw int64) int64 {
	if s := l.logStartOffset.Load(); hw < s {
		hw = s
	}
	if e := l.logEndOffset.Load(); hw > e {
		hw = e
	}
	l.highWatermark.Store(hw)
	if l.producers != nil {
		l.producers.OnHighWatermarkUpdated(hw)
	}
	return hw
}

// LastStableOffset is min(first unstable offset, high watermark): the
// bound for READ_COMMITTED fetches and ListOffsets.
func (l *Log) LastStableOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	hw := l.highWatermark.Load()
	if fuo, ok := l.producers.FirstUnstableOffset(); ok && fuo < hw {
		return fuo
	}
	return hw
}

// ActiveProducers returns the state of every producer the partition
// remembers, by producer id (Kafka's Log.activeProducers, read by
// DescribeProducers).
func (l *Log) ActiveProducers() []ProducerStateEntry {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]ProducerStateEntry, 0, len(l.producers.producers))
	for _, e := range l.producers.producers {
		out = append(out, *e.clone())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProducerID < out[j].ProducerID })
	return out
}

// ProducerState returns the producer state manager. It is not safe for
// concurrent use; callers outside the Log must go through Log methods.
func (l *Log) ProducerState() *ProducerStateManager { return l.producers }

// RemoveExpiredProducers drops producers idle longer than
// producer.id.expiration.ms (called periodically by the manager).
func (l *Log) RemoveExpiredProducers(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.producers.RemoveExpiredProducers(now.UnixMilli())
	}
}

// reloadProducerStateLocked rebuilds producer state after truncation or at
// load: reload from the newest usable snapshot, replay the log from there
// to the log end and snapshot the result.
func (l *Log) reloadProducerStateLocked(now time.Time) error {
	return l.rebuildProducerStateLocked(now, -1)
}

// rebuildProducerStateLocked is reloadProducerStateLocked that, when
// txnIndexFrom >= 0, also rebuilds the .txnindex entries of aborted
// transactions whose marker is at or above txnIndexFrom (segments
// recovered after a crash): snapshots above txnIndexFrom are dropped so
// the replay covers those segments, as Kafka's per-segment recovery does.
func (l *Log) rebuildProducerStateLocked(now time.Time, txnIndexFrom int64) error {
	ls, leo := l.logStartOffset.Load(), l.logEndOffset.Load()
	if txnIndexFrom >= 0 {
		for _, off := range l.producers.Snapshots() {
			if off > txnIndexFrom {
				if err := l.producers.DeleteSnapshot(off); err != nil {
					return err
				}
			}
		}
	}
	if err := l.producers.TruncateAndReload(ls, leo, now.UnixMilli()); err != nil {
		return err
	}
	from := l.producers.MapEndOffset()
	if from < leo {
		var hdr [batchHeaderSize]byte
		var buf []byte
		i := l.floorSegmentLocked(from)
		if i < 0 {
			i = 0
		}
		for ; i < len(l.segments); i++ {
			s := l.segments[i]
			_, pos := s.offsetIdx.Lookup(from)
			for p := int64(pos); p < s.size; {
				h, err := s.readHeaderInto(p, hdr[:])
				if err != nil {
					return fmt.Errorf("storage: replay producer state: %w", err)
				}
				if h.LastOffset() >= from && h.ProducerID >= 0 {
					if cap(buf) < h.Size() {
						buf = make([]byte, h.Size())
					}
					b := buf[:h.Size()]
					if _, err := s.log.ReadAt(b, p); err != nil {
						return fmt.Errorf("storage: replay producer state: %w", err)
					}
					rh, err := record.ParseBatchHeader(b)
					if err != nil {
						return err
					}
					done, err := l.producers.AppendBatch(b, rh)
					if err != nil {
						l.logger.Warn("producer state replay", "offset", h.BaseOffset, "err", err)
					}
					if done != nil && done.IsAborted && txnIndexFrom >= 0 && done.LastOffset >= txnIndexFrom {
						e := AbortedTxn{ProducerID: done.ProducerID, FirstOffset: done.FirstOffset, LastOffset: done.LastOffset, LastStableOffset: done.LastStableOffset}
						if err := s.appendTxnIndex(e); err != nil {
							return fmt.Errorf("storage: rebuild .txnindex: %w", err)
						}
					}
				}
				p += int64(h.Size())
			}
		}
	}
	l.producers.UpdateMapEndOffset(leo)
	return l.producers.TakeSnapshot()
}

// RecoveryPoint is the offset below which everything is fsync'd.
func (l *Log) RecoveryPoint() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.recoveryPoint
}

// LeaderEpochs returns the leader epoch cache.
func (l *Log) LeaderEpochs() *LeaderEpochCache { return l.epochs }

// Config returns the current configuration.
func (l *Log) Config() LogConfig {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.cfg
}

// UpdateConfig replaces the topic configuration (dynamic topic config).
// Index sizes apply to segments created afterwards.
func (l *Log) UpdateConfig(cfg LogConfig) {
	if err := cfg.validate(); err != nil {
		l.logger.Warn("ignoring invalid log config", "err", err)
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cfg = cfg
}

// Size is the total size of all segments in bytes.
func (l *Log) Size() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var n int64
	for _, s := range l.segments {
		n += s.size
	}
	return n
}

// NumSegments returns the number of segments.
func (l *Log) NumSegments() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.segments)
}

// SegmentBaseOffsets lists the segments' base offsets, oldest first.
func (l *Log) SegmentBaseOffsets() []int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]int64, len(l.segments))
	for i, s := range l.segments {
		out[i] = s.baseOffset
	}
	return out
}

// floorSegmentLocked returns the index of the segment with the greatest
// base offset <= offset, or -1.
func (l *Log) floorSegmentLocked(offset int64) int {
	i := sort.Search(len(l.segments), func(i int) bool { return l.segments[i].baseOffset > offset })
	return i - 1
}

// Close flushes, writes the final time-index entries, trims the active
// segment's indexes and closes every file (clean shutdown). Pending
// .deleted files are left for the next startup to remove.
func (l *Log) Close() error {
	if l.dirFailed.Load() {
		// Its directory failed: nothing more is written there.
		return l.closeNoFlush()
	}
	l.stopFlusher() // flushLocked below covers whatever it had queued
	idErr := l.writeTopicIDInTurn(nil)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return idErr
	}
	act := l.activeLocked()
	// The active segment is fsync'd once, below, after its indexes are
	// trimmed; everything else from the recovery point on is fsync'd here.
	err := l.flushExceptLocked(act)
	if err == nil {
		err = idErr
	}
	l.producers.UpdateMapEndOffset(l.logEndOffset.Load())
	if e := l.producers.TakeSnapshot(); e != nil && err == nil {
		err = e
	}
	if e := act.onBecomeInactive(); e != nil && err == nil {
		err = e
	}
	if e := l.flushSegment(act); e != nil {
		if err == nil {
			err = e
		}
	} else if e := l.epochs.Sync(); e != nil {
		// An epoch assigned since flushExceptLocked's Sync: the recovery
		// point stays below the log end, so a restart scans the tail.
		if err == nil {
			err = e
		}
	} else if err == nil {
		l.recoveryPoint = l.logEndOffset.Load()
		l.unflushedMessages = 0
	}
	if e := l.closeFilesLocked(); e != nil && err == nil {
		err = e
	}
	l.pending = nil
	l.rolled = nil // flushLocked covered them
	l.closed = true
	l.epochs.stopWriting()
	return err
}

// closeNoFlush closes files without the clean-shutdown work (used when
// loading fails and by crash tests).
func (l *Log) closeNoFlush() error {
	l.detach()
	return l.releaseFiles()
}

// detach marks the log closed: every later operation fails with
// ErrLogClosed, but open files stay usable for FileRecords already handed
// out (a deleted partition keeps them until its directory is removed).
func (l *Log) detach() {
	l.stopFlusher()
	l.epochs.stopWriting()
	l.dropUnwrittenTopicID()
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
}

// releaseFiles closes every segment file of a detached log.
func (l *Log) releaseFiles() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.closeFilesLocked()
	l.segments, l.pending, l.rolled = nil, nil, nil
	return err
}

// closeFilesLocked closes the files of every segment, live or pending
// deletion, and returns the first error.
func (l *Log) closeFilesLocked() error {
	var err error
	for _, s := range l.segments {
		if e := s.close(); e != nil && err == nil {
			err = e
		}
	}
	for _, p := range l.pending {
		if e := p.seg.close(); e != nil && err == nil {
			err = e
		}
	}
	return err
}
