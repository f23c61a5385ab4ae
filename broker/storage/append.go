package storage

// Appending to a Log (Kafka's Log.append): validate the batches, answer a
// producer's retry from producer state, assign offsets as leader (or check
// the leader's as follower), write to the active segment and update the
// leader epoch cache, producer state and flush accounting.

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/klassik/klassik/broker/storage/record"
	"github.com/twmb/franz-go/pkg/kerr"
)

// magicPos is the offset of a batch's magic byte (after baseOffset,
// batchLength and partitionLeaderEpoch).
const magicPos = 16

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

// validate checks every complete batch of records: size within
// max.message.bytes, CRC, counts and offsets (the leader's producer rules
// in validateLeaderBatch, monotonic offsets for a follower); a partial
// trailing batch is dropped. It does not modify records.
func (l *Log) validate(records []byte, cfg *LogConfig, origin AppendOrigin, now int64) (validatedAppend, error) {
	leader := origin != OriginReplication
	v := validatedAppend{firstOffset: -1, lastOffset: -1, maxTimestamp: -1, offOfMaxTs: -1}
	data := records
	prevNext := int64(-1)
	firstMagic := byte(0)
	for len(data) >= logOverhead {
		h, err := parseBatchHeader(data)
		if errors.Is(err, errBatchTruncated) {
			break // a partial trailing batch is dropped, as Kafka does
		}
		if v.numBatches == 0 && len(data) > magicPos {
			firstMagic = data[magicPos]
		}
		if err != nil {
			err = fmt.Errorf("%w: %v", kerr.InvalidRecord, err)
			if v.numBatches > 0 && len(data) > magicPos && data[magicPos] != firstMagic {
				err = record.WithKind(err, record.ErrInvalidMagic)
			}
			return v, err
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
			return v, record.WithKind(fmt.Errorf("%w: batch at offset %d has an invalid CRC", kerr.CorruptMessage, h.BaseOffset), record.ErrInvalidCRC)
		}
		if h.NumRecords < 0 || (leader && (h.NumRecords == 0 || int64(h.LastOffsetDelta)+1 != int64(h.NumRecords))) {
			return v, record.WithKind(fmt.Errorf("%w: lastOffsetDelta %d does not match record count %d", kerr.InvalidRecord, h.LastOffsetDelta, h.NumRecords), record.ErrInvalidOffsetOrSequence)
		}
		if h.LastOffsetDelta < 0 {
			return v, fmt.Errorf("%w: negative lastOffsetDelta %d", kerr.InvalidRecord, h.LastOffsetDelta)
		}
		if leader {
			if err := validateLeaderBatch(h, batch, cfg, origin, now); err != nil {
				return v, err
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

// validateLeaderBatch holds a batch a leader is about to assign offsets to
// to what a producer may send: base offset 0, no control batch from a
// client, a base sequence with a producer id, a known codec, and for client
// batches the record-level checks (keys on compacted topics, CreateTime
// bounds, record framing and offset deltas).
func validateLeaderBatch(h batchHeader, batch []byte, cfg *LogConfig, origin AppendOrigin, now int64) error {
	if h.BaseOffset != 0 {
		return record.WithKind(fmt.Errorf("%w: producer batch base offset %d is not 0", kerr.InvalidRecord, h.BaseOffset), record.ErrInvalidOffsetOrSequence)
	}
	if h.IsControl() && origin == OriginClient {
		return record.WithKind(fmt.Errorf("%w: clients may not produce control batches", kerr.InvalidRecord), record.ErrInvalidOffsetOrSequence)
	}
	if h.ProducerID >= 0 && h.BaseSequence < 0 && !h.IsControl() {
		return record.WithKind(fmt.Errorf("%w: batch with producer id %d has no base sequence", kerr.InvalidRecord, h.ProducerID), record.ErrInvalidOffsetOrSequence)
	}
	if h.Attributes&attrCompressionMask > 4 {
		return fmt.Errorf("%w: unknown compression codec %d", kerr.InvalidRecord, h.Attributes&attrCompressionMask)
	}
	if origin != OriginClient {
		return nil
	}
	createTime := cfg.MessageTimestampType == "CreateTime"
	return record.ValidateBatch(batch, record.ValidateOptions{
		MaxMessageBytes:    int(cfg.MaxMessageBytes),
		FromClient:         true,
		RequireKeys:        cfg.CleanupPolicyCompact,
		CheckTimestamps:    createTime && cfg.MessageTimestampDifferenceMaxMs != math.MaxInt64,
		NowMs:              now,
		TimestampDiffMaxMs: cfg.MessageTimestampDifferenceMaxMs,
	})
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
	if l.dirFailed.Load() {
		return AppendInfo{}, l.errOffline()
	}
	// The topic id is on disk before any record of the topic's
	// incarnation (see SetTopicID).
	if err := l.writeTopicID(); err != nil {
		return AppendInfo{}, err
	}
	l.mu.Lock()
	info, err := l.appendLocked(records, leaderEpoch, origin)
	rolled := len(l.rolled) > 0
	l.mu.Unlock()
	if err != nil {
		err = l.ioFailed("append", err)
		l.stats.invalid(err)
	}
	if rolled {
		// The segment(s) this append rolled away from are fsync'd by the
		// log's flusher goroutine, as Kafka schedules this flush
		// asynchronously: neither this append nor readers wait for it.
		l.kickFlusher()
	}
	return info, err
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

// assignEpochsFromBatches assigns, for each batch whose epoch is newer
// than the cache's latest, that epoch from the batch's base offset.
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
