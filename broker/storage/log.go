package storage

// Log: one partition replica's log (Kafka's UnifiedLog + LocalLog): the
// ordered segments, log start/end offsets, high watermark, recovery point
// and the leader epoch cache.

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage/record"
	"github.com/twmb/franz-go/pkg/kerr"
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

	// topicIDMu guards the following (partition.metadata's cached topic
	// id); it is a leaf lock, taken with no other log lock held.
	topicIDMu    sync.Mutex
	topicID      [16]byte
	topicIDKnown bool

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
	unsyncedSnapshots []string        // producer snapshots written at rolls, not yet fsync'd
	closed            bool

	// The flusher goroutine (startFlusher); channels set once at load.
	flushKick chan struct{}
	flushStop chan struct{}
	flushDone chan struct{}
	stopOnce  sync.Once
	producers *ProducerStateManager // producerstate.go; never nil after load
}

// newLogLocked assembles a Log around loaded segments.
func (l *Log) activeLocked() *Segment { return l.segments[len(l.segments)-1] }

// TopicPartition returns the partition this log belongs to.
func (l *Log) TopicPartition() common.TopicPartition { return l.tp }

// Dir returns the partition directory.
func (l *Log) Dir() string { return l.dir }

// LogStartOffset is the earliest offset readable by consumers.
func (l *Log) LogStartOffset() int64 { return l.logStartOffset.Load() }

// LogEndOffset is the offset the next appended record gets.
func (l *Log) LogEndOffset() int64 { return l.logEndOffset.Load() }

// HighWatermark is the last value stored by SetHighWatermark (clamped).
func (l *Log) HighWatermark() int64 { return l.highWatermark.Load() }

// SetHighWatermark stores hw clamped to [logStartOffset, logEndOffset]. The
// LogManager checkpoints it into replication-offset-checkpoint.
func (l *Log) SetHighWatermark(hw int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.setHighWatermarkLocked(hw)
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

// ---------------------------------------------------------------- append

// validatedAppend is the result of shallow validation.
type validatedAppend struct {
	validBytes   int
	firstOffset  int64 // follower: first batch's base offset
	lastOffset   int64 // follower: last batch's last offset
	numMessages  int32
	maxTimestamp int64
	offOfMaxTs   int64 // follower only; the leader computes it after assignment
	numBatches   int
	hasProducer  bool // some batch carries a producer id
}

// validate checks every complete batch of records (§8.1 steps 1-2). It does
// not modify records.
func (l *Log) validate(records []byte, cfg *LogConfig, origin AppendOrigin, now int64) (validatedAppend, error) {
	leader := origin != OriginReplication
	v := validatedAppend{firstOffset: -1, lastOffset: -1, maxTimestamp: -1, offOfMaxTs: -1}
	data := records
	prevNext := int64(-1)
	for len(data) >= logOverhead {
		h, err := parseBatchHeader(data)
		if errors.Is(err, errBatchTruncated) {
			break // a partial trailing batch is dropped, as Kafka does
		}
		if err != nil {
			return v, fmt.Errorf("%w: %v", kerr.InvalidRecord, err)
		}
		size := int64(h.BatchLength) + logOverhead
		if leader && size > int64(cfg.MaxMessageBytes) {
			return v, fmt.Errorf("%w: batch of %d bytes exceeds max.message.bytes %d", kerr.MessageTooLarge, size, cfg.MaxMessageBytes)
		}
		if size > int64(len(data)) {
			break
		}
		batch := data[:size]
		// Client batches get their CRC checked by record.ValidateBatch
		// below; checking it here as well would hash every byte twice.
		if origin != OriginClient && !checkBatchCRC(batch) {
			return v, fmt.Errorf("%w: batch at offset %d has an invalid CRC", kerr.CorruptMessage, h.BaseOffset)
		}
		if h.NumRecords < 0 || (leader && (h.NumRecords == 0 || int64(h.LastOffsetDelta)+1 != int64(h.NumRecords))) {
			return v, fmt.Errorf("%w: lastOffsetDelta %d does not match record count %d", kerr.InvalidRecord, h.LastOffsetDelta, h.NumRecords)
		}
		if h.LastOffsetDelta < 0 {
			return v, fmt.Errorf("%w: negative lastOffsetDelta %d", kerr.InvalidRecord, h.LastOffsetDelta)
		}
		if leader {
			if h.BaseOffset != 0 {
				return v, fmt.Errorf("%w: producer batch base offset %d is not 0", kerr.InvalidRecord, h.BaseOffset)
			}
			if h.IsControl() && origin == OriginClient {
				return v, fmt.Errorf("%w: clients may not produce control batches", kerr.InvalidRecord)
			}
			if h.ProducerID >= 0 && h.BaseSequence < 0 && !h.IsControl() {
				return v, fmt.Errorf("%w: batch with producer id %d has no base sequence", kerr.InvalidRecord, h.ProducerID)
			}
			if h.Attributes&attrCompressionMask > 4 {
				return v, fmt.Errorf("%w: unknown compression codec %d", kerr.InvalidRecord, h.Attributes&attrCompressionMask)
			}
			// Record-level checks (§8.1 step 3): keys on compacted topics,
			// CreateTime bounds, record framing and offset deltas.
			createTime := cfg.MessageTimestampType == "CreateTime"
			if origin == OriginClient {
				if err := record.ValidateBatch(batch, record.ValidateOptions{
					MaxMessageBytes:    int(cfg.MaxMessageBytes),
					FromClient:         true,
					RequireKeys:        cfg.CleanupPolicyCompact,
					CheckTimestamps:    createTime && cfg.MessageTimestampDifferenceMaxMs != math.MaxInt64,
					NowMs:              now,
					TimestampDiffMaxMs: cfg.MessageTimestampDifferenceMaxMs,
				}); err != nil {
					return v, err
				}
			}
		} else {
			if h.BaseOffset < prevNext || h.BaseOffset < 0 {
				return v, fmt.Errorf("%w: batch base offset %d below previous next offset %d", ErrNonMonotonicOffsets, h.BaseOffset, prevNext)
			}
			if v.firstOffset < 0 {
				v.firstOffset = h.BaseOffset
			}
			v.lastOffset = h.LastOffset()
			prevNext = h.NextOffset()
			if h.MaxTimestamp > v.maxTimestamp {
				v.maxTimestamp, v.offOfMaxTs = h.MaxTimestamp, h.LastOffset()
			}
		}
		if h.ProducerID >= 0 {
			v.hasProducer = true
		}
		v.numMessages += h.NumRecords
		v.numBatches++
		v.validBytes += int(size)
		data = data[size:]
	}
	if int64(v.validBytes) > cfg.SegmentBytes {
		return v, fmt.Errorf("%w: %d bytes exceed segment.bytes %d", kerr.RecordListTooLarge, v.validBytes, cfg.SegmentBytes)
	}
	return v, nil
}

// AppendAsLeader validates records (one or more v2 batches as sent in a
// Produce request), assigns offsets from the log end offset, stamps
// leaderEpoch (and the append time for LogAppendTime topics) and appends
// them. The header fields are rewritten in place in records. On error the
// log is unchanged.
func (l *Log) AppendAsLeader(records []byte, leaderEpoch int32) (AppendInfo, error) {
	return l.append(records, leaderEpoch, OriginClient)
}

// AppendAsCoordinator is AppendAsLeader for data written by the broker
// itself (group/transaction coordinators, WriteTxnMarkers): control batches
// are allowed, record-level client checks are skipped and producer state
// checks only epochs (Kafka's AppendOrigin.Coordinator).
func (l *Log) AppendAsCoordinator(records []byte, leaderEpoch int32) (AppendInfo, error) {
	return l.append(records, leaderEpoch, OriginCoordinator)
}

// AppendAsFollower appends batches copied from the leader, keeping their
// offsets and epochs. Offsets must not go backwards nor start below the log
// end offset.
func (l *Log) AppendAsFollower(records []byte) (AppendInfo, error) {
	return l.append(records, -1, OriginReplication)
}

func (l *Log) append(records []byte, leaderEpoch int32, origin AppendOrigin) (AppendInfo, error) {
	l.mu.Lock()
	info, err := l.appendLocked(records, leaderEpoch, origin)
	rolled := len(l.rolled) > 0
	l.mu.Unlock()
	if rolled {
		// The segment(s) this append rolled away from are fsync'd by the
		// log's flusher goroutine, as Kafka schedules this flush
		// asynchronously: neither this append nor readers wait for it.
		l.kickFlusher()
	}
	return info, err
}

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
				if err := l.flushRolled(); err != nil {
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

// appendLocked appends records at the log end (Kafka's Log.append): it
// validates them, answers a producer's retried batch from producer state
// without writing, assigns offsets as leader (or checks the leader's as
// follower), rolls the segment if needed, writes, and updates the leader
// epoch cache, producer state and flush accounting.
func (l *Log) appendLocked(records []byte, leaderEpoch int32, origin AppendOrigin) (AppendInfo, error) {
	if l.closed {
		return AppendInfo{}, ErrLogClosed
	}
	now := l.clock()
	nowMs := now.UnixMilli()
	cfg := &l.cfg
	v, err := l.validate(records, cfg, origin, nowMs)
	if err != nil {
		return AppendInfo{}, err
	}
	leo := l.logEndOffset.Load()
	info := AppendInfo{FirstOffset: leo, LastOffset: leo - 1, MaxTimestamp: -1, OffsetOfMaxTimestamp: -1,
		LogAppendTime: -1, LogStartOffset: l.logStartOffset.Load()}
	if v.numBatches == 0 {
		return info, nil
	}
	data := records[:v.validBytes]

	if v.hasProducer {
		// Producer state is checked before anything is written, so a
		// rejected or duplicate batch leaves the log untouched.
		dup, err := l.producers.CheckAppend(data, origin)
		if err != nil {
			return AppendInfo{}, err
		}
		if dup != nil {
			return duplicateAppendInfo(dup, cfg, info.LogStartOffset), nil
		}
	}

	if origin == OriginClient {
		if data, err = recompress(data, cfg); err != nil {
			return AppendInfo{}, err
		}
		if int64(len(data)) > cfg.SegmentBytes {
			return AppendInfo{}, fmt.Errorf("%w: %d bytes exceed segment.bytes %d", kerr.RecordListTooLarge, len(data), cfg.SegmentBytes)
		}
	}

	if origin != OriginReplication {
		assignOffsets(data, leo, leaderEpoch, cfg.MessageTimestampType == "LogAppendTime", nowMs, &info)
	} else {
		if v.firstOffset < leo {
			return AppendInfo{}, fmt.Errorf("%w: first offset %d below log end offset %d", ErrNonMonotonicOffsets, v.firstOffset, leo)
		}
		info.FirstOffset, info.LastOffset = v.firstOffset, v.lastOffset
		info.MaxTimestamp, info.OffsetOfMaxTimestamp = v.maxTimestamp, v.offOfMaxTs
	}
	info.NumMessages = v.numMessages

	seg, err := l.maybeRollLocked(len(data), info, now)
	if err != nil {
		return AppendInfo{}, err
	}
	if err := seg.append(info.LastOffset, info.MaxTimestamp, info.OffsetOfMaxTimestamp, data); err != nil {
		return AppendInfo{}, err
	}
	return info, l.afterAppendLocked(data, leaderEpoch, origin, v.hasProducer, info, now)
}

// duplicateAppendInfo answers a retried producer batch with the offsets
// and timestamp of the copy already in the log.
func duplicateAppendInfo(dup *DuplicateInfo, cfg *LogConfig, logStartOffset int64) AppendInfo {
	d := AppendInfo{FirstOffset: dup.FirstOffset, LastOffset: dup.LastOffset, MaxTimestamp: dup.Timestamp,
		OffsetOfMaxTimestamp: dup.LastOffset, LogAppendTime: -1, LogStartOffset: logStartOffset, Duplicate: true}
	if cfg.MessageTimestampType == "LogAppendTime" {
		d.LogAppendTime = dup.Timestamp
	}
	return d
}

// assignOffsets is the leader's rewrite of validated batches in place:
// consecutive offsets from leo, the leader epoch, and with logAppendTime
// the broker's clock as every batch's timestamp. It fills info's offsets
// and maximum timestamp.
func assignOffsets(data []byte, leo int64, leaderEpoch int32, logAppendTime bool, nowMs int64, info *AppendInfo) {
	if logAppendTime {
		info.LogAppendTime = nowMs
	}
	next := leo
	for p := 0; p < len(data); {
		h, _ := parseBatchHeader(data[p:])
		size := h.Size()
		batch := data[p : p+size]
		record.SetBaseOffset(batch, next)
		record.SetPartitionLeaderEpoch(batch, leaderEpoch)
		last := next + int64(h.LastOffsetDelta)
		ts := h.MaxTimestamp
		if logAppendTime {
			record.SetLogAppendTime(batch, nowMs)
			ts = nowMs
		}
		if ts > info.MaxTimestamp {
			info.MaxTimestamp, info.OffsetOfMaxTimestamp = ts, last
		}
		next = last + 1
		p += size
	}
	info.LastOffset = next - 1
}

// afterAppendLocked updates what follows a write: the leader epoch cache
// (the leader's epoch, or the epochs in a follower's batches), the log end
// offset, producer state with its aborted transactions, and the flush
// accounting (flush.messages, flush.ms).
func (l *Log) afterAppendLocked(data []byte, leaderEpoch int32, origin AppendOrigin, hasProducer bool, info AppendInfo, now time.Time) error {
	if origin != OriginReplication {
		if leaderEpoch >= 0 {
			if err := l.epochs.Assign(leaderEpoch, info.FirstOffset); err != nil {
				l.logger.Warn("leader epoch cache write failed", "err", err)
			}
		}
	} else {
		l.assignEpochsFromBatches(data)
	}
	l.logEndOffset.Store(info.LastOffset + 1)
	if hasProducer {
		txns, err := l.producers.Append(data)
		if err != nil {
			l.logger.Warn("producer state update failed", "err", err)
		}
		for _, t := range txns {
			if t.IsAborted {
				l.abortedTxnLocked(t)
			}
		}
	}
	l.producers.UpdateMapEndOffset(info.LastOffset + 1)
	l.unflushedMessages += int64(info.NumMessages)
	cfg := &l.cfg
	if l.unflushedMessages >= cfg.FlushMessages ||
		(cfg.FlushMs != math.MaxInt64 && now.Sub(l.lastFlushTime).Milliseconds() >= cfg.FlushMs) {
		return l.flushLocked()
	}
	return nil
}

// assignEpochsFromBatches applies §1.7 assign for each batch whose epoch is
// newer than the cache's latest.
func (l *Log) assignEpochsFromBatches(data []byte) {
	for p := 0; p < len(data); {
		h, err := parseBatchHeader(data[p:])
		if err != nil {
			return
		}
		if h.PartitionLeaderEpoch >= 0 && h.PartitionLeaderEpoch > l.epochs.LatestEpoch() {
			if err := l.epochs.Assign(h.PartitionLeaderEpoch, h.BaseOffset); err != nil {
				l.logger.Warn("leader epoch cache write failed", "err", err)
			}
		}
		p += h.Size()
	}
}

// maybeRollLocked rolls the active segment if §8.2 says so and returns the
// segment to append to.
func (l *Log) maybeRollLocked(size int, info AppendInfo, now time.Time) (*Segment, error) {
	seg := l.activeLocked()
	if !seg.shouldRoll(&l.cfg, size, info.MaxTimestamp, info.LastOffset, now) {
		return seg, nil
	}
	return l.rollLocked(info.FirstOffset, now)
}

// Roll forces a new active segment at the log end offset.
func (l *Log) Roll() error {
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
	return err
}

// rolledSegment is an inactive segment waiting for its post-roll fsync;
// the recovery point moves to upTo once it is done.
type rolledSegment struct {
	seg  *Segment
	upTo int64
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
		if err := r.seg.flush(); err != nil {
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

func (l *Log) containsLocked(s *Segment) bool {
	i := l.floorSegmentLocked(s.baseOffset)
	return i >= 0 && l.segments[i] == s
}

// rollLocked implements §8.3: finish the old active segment (final time
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

// ---------------------------------------------------------------- flush

// Flush fsyncs every segment at or above the recovery point and raises
// the recovery point to the log end offset.
func (l *Log) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrLogClosed
	}
	return l.flushLocked()
}

func (l *Log) flushLocked() error {
	for _, p := range l.unsyncedSnapshots {
		if err := SyncProducerSnapshot(p); err != nil {
			return err
		}
	}
	l.unsyncedSnapshots = nil
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
		if err := s.flush(); err != nil {
			return err
		}
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
	if l.closed || l.cfg.FlushMs == math.MaxInt64 || l.unflushedMessages == 0 {
		return nil
	}
	if now.Sub(l.lastFlushTime).Milliseconds() < l.cfg.FlushMs {
		return nil
	}
	return l.flushLocked()
}

// ---------------------------------------------------------------- read

// Read returns the bytes starting at the batch holding startOffset, at most
// maxBytes (but one whole batch when minOneMessage) and none at or beyond
// maxOffset (exclusive, e.g. the high watermark). startOffset outside
// [logStartOffset, logEndOffset] is kerr.OffsetOutOfRange.
func (l *Log) Read(startOffset int64, maxBytes int32, maxOffset int64, minOneMessage bool) (FetchData, error) {
	var buf [batchHeaderSize]byte
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return FetchData{}, ErrLogClosed
	}
	leo := l.logEndOffset.Load()
	ls := l.logStartOffset.Load()
	if startOffset < ls || startOffset > leo {
		return FetchData{}, fmt.Errorf("%w: offset %d not in [%d, %d] of %s", kerr.OffsetOutOfRange, startOffset, ls, leo, l.tp)
	}
	empty := FetchData{FirstOffset: -1}
	if maxOffset > leo {
		maxOffset = leo
	}
	if startOffset >= maxOffset {
		return empty, nil
	}
	i := l.floorSegmentLocked(startOffset)
	if i < 0 {
		i = 0
	}
	for ; i < len(l.segments); i++ {
		seg := l.segments[i]
		maxPos := seg.size
		if i+1 >= len(l.segments) || maxOffset < l.segments[i+1].baseOffset {
			// The upper bound falls in this segment: stop before the batch
			// that holds maxOffset.
			bp, found, err := seg.lookup(maxOffset, buf[:])
			if err != nil {
				return FetchData{}, err
			}
			if found {
				maxPos = bp.pos
			}
		}
		recs, first, found, err := seg.read(startOffset, maxBytes, maxPos, minOneMessage, buf[:])
		if err != nil {
			return FetchData{}, err
		}
		if found {
			if recs.Size == 0 {
				return empty, nil
			}
			return FetchData{Records: recs, FirstOffset: first}, nil
		}
	}
	return empty, nil
}

// ---------------------------------------------------------------- time

// Special ListOffsets timestamps.
const (
	LatestTimestamp   = -1
	EarliestTimestamp = -2
	MaxTimestampQuery = -3
)

// FetchOffsetByTimestamp answers ListOffsets (§5.4): the first offset whose
// timestamp is >= ts. -2 returns the log start offset, -1 the log end offset
// (the caller substitutes the high watermark / LSO for clients), -3 the
// batch holding the largest timestamp. found is false if no record
// qualifies.
func (l *Log) FetchOffsetByTimestamp(ts int64) (offset int64, timestamp int64, leaderEpoch int32, found bool, err error) {
	var buf [batchHeaderSize]byte
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return -1, -1, -1, false, ErrLogClosed
	}
	ls := l.logStartOffset.Load()
	switch ts {
	case EarliestTimestamp:
		ep := int32(-1)
		if es := l.epochs.Entries(); len(es) > 0 && es[0].StartOffset <= ls {
			ep = es[0].Epoch
		}
		return ls, -1, ep, true, nil
	case LatestTimestamp:
		return l.logEndOffset.Load(), -1, l.epochs.LatestEpoch(), true, nil
	case MaxTimestampQuery:
		var best *Segment
		for _, s := range l.segments {
			if best == nil || s.maxTimestampSoFar > best.maxTimestampSoFar {
				best = s
			}
		}
		if best == nil || best.maxTimestampSoFar < 0 {
			return -1, -1, -1, false, nil
		}
		off := best.offsetOfMaxTimestampSoFar
		return off, best.maxTimestampSoFar, l.epochs.EpochForOffset(off), true, nil
	}
	if ts < 0 {
		return -1, -1, -1, false, fmt.Errorf("%w: timestamp %d", kerr.InvalidRequest, ts)
	}
	for _, s := range l.segments {
		if s.LargestTimestamp() < ts {
			continue
		}
		_, o := s.timeIdx.Lookup(ts)
		if o < ls {
			o = ls
		}
		_, pos := s.offsetIdx.Lookup(o)
		p := int64(pos)
		for p < s.size {
			h, err := s.readHeaderInto(p, buf[:])
			if err != nil {
				return -1, -1, -1, false, err
			}
			if h.MaxTimestamp >= ts && h.LastOffset() >= ls {
				off, rts, ok, err := findRecordByTimestamp(s.log, p, h, ts, ls)
				if err != nil {
					return -1, -1, -1, false, err
				}
				if ok {
					return off, rts, h.PartitionLeaderEpoch, true, nil
				}
			}
			p += int64(h.Size())
		}
	}
	return -1, -1, -1, false, nil
}

// ---------------------------------------------------------------- truncation

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
	if offset < 0 {
		return fmt.Errorf("storage: cannot truncate %s to negative offset %d", l.tp, offset)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrLogClosed
	}
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

// reactivateLocked extends a trimmed segment's indexes back to the maximum
// size now that it is the active segment again (§4.3).
func (l *Log) reactivateLocked(s *Segment) error {
	if err := s.offsetIdx.resize(l.cfg.maxIndexBytes(offsetIndexEntrySize)); err != nil {
		return err
	}
	return s.timeIdx.resize(l.cfg.maxIndexBytes(timeIndexEntrySize))
}

// TruncateFullyAndStartAt deletes every segment and restarts the log empty
// at offset (a follower far behind the leader's log start).
func (l *Log) TruncateFullyAndStartAt(offset int64) error {
	if offset < 0 {
		return fmt.Errorf("storage: cannot restart %s at negative offset %d", l.tp, offset)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrLogClosed
	}
	return l.truncateFullyAndStartAtLocked(offset, l.clock())
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
	return syncDir(l.dir)
}

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

// ---------------------------------------------------------------- retention

// DeleteRecordsBefore raises the log start offset to offset (DeleteRecords,
// §10.5). offset -1 means the high watermark. Offsets above the high
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

// DeleteOldSegments applies log-start-offset, size and time retention
// (§10) and returns the number of segments deleted.
func (l *Log) DeleteOldSegments() (int, error) {
	n, err := l.deleteOldSegments()
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
// that lie entirely below the high watermark (§10.1, §10.3).
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

// ---------------------------------------------------------------- close

// Close flushes, writes the final time-index entries, trims the active
// segment's indexes and closes every file (clean shutdown). Pending
// .deleted files are left for the next startup to remove.
func (l *Log) Close() error {
	l.stopFlusher() // flushLocked below covers whatever it had queued
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	err := l.flushLocked()
	l.producers.UpdateMapEndOffset(l.logEndOffset.Load())
	if e := l.producers.TakeSnapshot(); e != nil && err == nil {
		err = e
	}
	act := l.activeLocked()
	if e := act.onBecomeInactive(); e != nil && err == nil {
		err = e
	}
	if e := act.flush(); e != nil && err == nil {
		err = e
	}
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
	l.pending = nil
	l.rolled = nil // flushLocked covered them
	l.closed = true
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
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
}

// releaseFiles closes every segment file of a detached log.
func (l *Log) releaseFiles() error {
	l.mu.Lock()
	defer l.mu.Unlock()
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
	l.segments, l.pending, l.rolled = nil, nil, nil
	return err
}
