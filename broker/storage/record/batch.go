package record

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Sizes and positions of the v2 batch header (DefaultRecordBatch).
const (
	// BatchHeaderSize is RECORD_BATCH_OVERHEAD: the fixed header of a v2
	// batch, which is also the size of a batch without records.
	BatchHeaderSize = 61
	// LogOverhead is the baseOffset+length prefix shared by every magic.
	LogOverhead = 12

	posBatchLength     = 8
	posLeaderEpoch     = 12
	posMagic           = 16
	posCRC             = 17
	posAttributes      = 21
	posLastOffsetDelta = 23
	posBaseTimestamp   = 27
	posMaxTimestamp    = 35
	posProducerID      = 43
	posProducerEpoch   = 51
	posBaseSequence    = 53
	posNumRecords      = 57

	// minBatchLength is the smallest legal batchLength of a v2 batch.
	minBatchLength = BatchHeaderSize - LogOverhead
)

// Attribute bits of a v2 batch.
const (
	attrCompressionMask = 0x07
	attrLogAppendTime   = 0x08
	attrTransactional   = 0x10
	attrControl         = 0x20
	attrDeleteHorizon   = 0x40
)

// Magic values.
const (
	MagicV0 int8 = 0
	MagicV1 int8 = 1
	MagicV2 int8 = 2
)

// Sentinel values used in batch headers.
const (
	NoProducerID           int64 = -1
	NoProducerEpoch        int16 = -1
	NoSequence             int32 = -1
	NoTimestamp            int64 = -1
	NoPartitionLeaderEpoch int32 = -1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// TimestampType says how the timestamps of a batch were assigned.
type TimestampType int8

const (
	// NoTimestampType is used by magic 0 messages, which carry no timestamp.
	NoTimestampType TimestampType = -1
	// CreateTime: the producer's timestamps.
	CreateTime TimestampType = 0
	// LogAppendTime: the broker's append time (maxTimestamp) applies to
	// every record.
	LogAppendTime TimestampType = 1
)

// String returns Kafka's name of the type, as kafka-dump-log prints it.
func (t TimestampType) String() string { return nameOr(timestampTypeNames, t, "NoTimestampType") }

var timestampTypeNames = map[TimestampType]string{CreateTime: "CreateTime", LogAppendTime: "LogAppendTime"}

// nameOr returns names[v], or unknown for a value the table does not name
// (the String methods of this package's enums).
func nameOr[T comparable](names map[T]string, v T, unknown string) string {
	if n, ok := names[v]; ok {
		return n
	}
	return unknown
}

// BatchHeader is the decoded fixed part of a v2 record batch.
type BatchHeader struct {
	BaseOffset           int64
	BatchLength          int32
	PartitionLeaderEpoch int32
	Magic                int8
	CRC                  uint32
	Attributes           int16
	LastOffsetDelta      int32
	BaseTimestamp        int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	NumRecords           int32
}

// LastOffset is the offset of the last record the batch was written with
// (kept even when compaction removed that record).
func (h BatchHeader) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// NextOffset is LastOffset()+1.
func (h BatchHeader) NextOffset() int64 { return h.LastOffset() + 1 }

// Compression returns the codec from the attribute bits.
func (h BatchHeader) Compression() Codec { return Codec(h.Attributes & attrCompressionMask) }

// TimestampType returns CreateTime or LogAppendTime.
func (h BatchHeader) TimestampType() TimestampType {
	if h.Attributes&attrLogAppendTime != 0 {
		return LogAppendTime
	}
	return CreateTime
}

// IsTransactional reports attribute bit 4.
func (h BatchHeader) IsTransactional() bool { return h.Attributes&attrTransactional != 0 }

// IsControl reports attribute bit 5.
func (h BatchHeader) IsControl() bool { return h.Attributes&attrControl != 0 }

// HasDeleteHorizon reports attribute bit 6: BaseTimestamp then holds the
// delete horizon set by the cleaner rather than the first record's time.
func (h BatchHeader) HasDeleteHorizon() bool { return h.Attributes&attrDeleteHorizon != 0 }

// DeleteHorizon returns the delete horizon, or -1 when none is set.
func (h BatchHeader) DeleteHorizon() int64 {
	if h.HasDeleteHorizon() {
		return h.BaseTimestamp
	}
	return NoTimestamp
}

// HasProducerID reports whether the batch was written by an idempotent or
// transactional producer.
func (h BatchHeader) HasProducerID() bool { return h.ProducerID >= 0 }

// LastSequence is the sequence number of the last record, wrapping from
// MaxInt32 to 0 as Kafka does; -1 without a producer id.
func (h BatchHeader) LastSequence() int32 {
	if h.BaseSequence == NoSequence {
		return NoSequence
	}
	return IncrementSequence(h.BaseSequence, h.LastOffsetDelta)
}

// Size is the total size of the batch in bytes, prefix included.
func (h BatchHeader) Size() int { return LogOverhead + int(h.BatchLength) }

// IncrementSequence adds inc to seq, wrapping past MaxInt32 to 0.
func IncrementSequence(seq, inc int32) int32 {
	if seq > int32(^uint32(0)>>1)-inc {
		return inc - (int32(^uint32(0)>>1) - seq) - 1
	}
	return seq + inc
}

// ParseBatchHeader decodes the fixed header at the start of b. It checks
// that the header is present and that the magic is 2 and batchLength is
// plausible; it does not require the whole batch to be in b and does not
// verify the CRC (see CheckCRC). It does not allocate on success.
//
// A buffer shorter than the 12-byte prefix, or shorter than the header,
// yields ErrTruncated; a legacy magic yields an error wrapping
// kerr.UnsupportedForMessageFormat; anything else malformed wraps
// kerr.CorruptMessage.
func ParseBatchHeader(b []byte) (BatchHeader, error) {
	var h BatchHeader
	if len(b) < LogOverhead {
		return h, ErrTruncated
	}
	h.BaseOffset = int64(binary.BigEndian.Uint64(b))
	h.BatchLength = int32(binary.BigEndian.Uint32(b[posBatchLength:]))
	if len(b) > posMagic {
		h.Magic = int8(b[posMagic])
		if h.Magic == MagicV0 || h.Magic == MagicV1 {
			return h, fmt.Errorf("record: legacy message set with magic %d: %w", h.Magic, kerr.UnsupportedForMessageFormat)
		}
		if h.Magic != MagicV2 {
			return h, corrupt("unknown magic %d", h.Magic)
		}
	}
	if h.BatchLength < minBatchLength {
		return h, corrupt("batch length %d below minimum %d", h.BatchLength, minBatchLength)
	}
	if len(b) < BatchHeaderSize {
		return h, ErrTruncated
	}
	h.PartitionLeaderEpoch = int32(binary.BigEndian.Uint32(b[posLeaderEpoch:]))
	h.CRC = binary.BigEndian.Uint32(b[posCRC:])
	h.Attributes = int16(binary.BigEndian.Uint16(b[posAttributes:]))
	h.LastOffsetDelta = int32(binary.BigEndian.Uint32(b[posLastOffsetDelta:]))
	h.BaseTimestamp = int64(binary.BigEndian.Uint64(b[posBaseTimestamp:]))
	h.MaxTimestamp = int64(binary.BigEndian.Uint64(b[posMaxTimestamp:]))
	h.ProducerID = int64(binary.BigEndian.Uint64(b[posProducerID:]))
	h.ProducerEpoch = int16(binary.BigEndian.Uint16(b[posProducerEpoch:]))
	h.BaseSequence = int32(binary.BigEndian.Uint32(b[posBaseSequence:]))
	h.NumRecords = int32(binary.BigEndian.Uint32(b[posNumRecords:]))
	return h, nil
}

// ComputeCRC returns the CRC-32C a v2 batch should carry: bytes from the
// attributes to the end of the batch. batch must hold the whole batch and
// nothing after it.
func ComputeCRC(batch []byte) uint32 {
	return crc32.Checksum(batch[posAttributes:], castagnoli)
}

// CheckCRC verifies the stored CRC of the v2 batch at the start of batch.
// Bytes after the batch (as announced by batchLength) are ignored. It does
// not allocate on success.
func CheckCRC(batch []byte) error {
	if len(batch) < BatchHeaderSize {
		return ErrTruncated
	}
	n := int64(LogOverhead) + int64(int32(binary.BigEndian.Uint32(batch[posBatchLength:])))
	if n < BatchHeaderSize {
		return corrupt("batch length %d below minimum", n-LogOverhead)
	}
	if int64(len(batch)) < n {
		return ErrTruncated
	}
	stored := binary.BigEndian.Uint32(batch[posCRC:])
	if got := crc32.Checksum(batch[posAttributes:n], castagnoli); got != stored {
		return WithKind(corrupt("batch crc %d does not match computed %d", stored, got), ErrInvalidCRC)
	}
	return nil
}

// SetBaseOffset overwrites the base offset. The CRC does not cover it.
func SetBaseOffset(batch []byte, off int64) {
	binary.BigEndian.PutUint64(batch, uint64(off))
}

// SetPartitionLeaderEpoch overwrites the partition leader epoch. The CRC
// does not cover it, so the leader stamps it without recomputing the CRC.
func SetPartitionLeaderEpoch(batch []byte, e int32) {
	binary.BigEndian.PutUint32(batch[posLeaderEpoch:], uint32(e))
}

// SetLogAppendTime marks the batch as LogAppendTime with ts as its max
// timestamp and recomputes the CRC. batch must be exactly one whole batch
// (or start with one; bytes after it are not touched).
func SetLogAppendTime(batch []byte, ts int64) {
	attrs := binary.BigEndian.Uint16(batch[posAttributes:]) | attrLogAppendTime
	binary.BigEndian.PutUint16(batch[posAttributes:], attrs)
	binary.BigEndian.PutUint64(batch[posMaxTimestamp:], uint64(ts))
	updateCRC(batch)
}

// updateCRC recomputes and stores the CRC of the batch at the start of b.
func updateCRC(b []byte) {
	n := LogOverhead + int(int32(binary.BigEndian.Uint32(b[posBatchLength:])))
	binary.BigEndian.PutUint32(b[posCRC:], crc32.Checksum(b[posAttributes:n], castagnoli))
}

// ForEachBatch calls fn for every v2 batch in data, a concatenation of
// batches as found in a .log file or a fetch/produce payload, passing the
// batch's exact bytes (a sub-slice of data) and its header. It stops at
// the first error from fn and returns it. A tail too short to hold the
// next whole batch yields an error wrapping ErrTruncated; a malformed
// header yields ParseBatchHeader's error. In both cases the error is a
// *PositionError giving the byte position of the offending batch, so a
// recovery can truncate there. CRCs are not checked here.
func ForEachBatch(data []byte, fn func(batch []byte, h BatchHeader) error) error {
	pos := 0
	for pos < len(data) {
		h, err := ParseBatchHeader(data[pos:])
		if err != nil {
			return &PositionError{Pos: pos, Err: err}
		}
		end := pos + h.Size()
		if end > len(data) || end < pos {
			return &PositionError{Pos: pos, Err: ErrTruncated}
		}
		if err := fn(data[pos:end:end], h); err != nil {
			return err
		}
		pos = end
	}
	return nil
}

// PositionError locates a batch-level decoding error in a buffer.
type PositionError struct {
	Pos int
	Err error
}

func (e *PositionError) Error() string {
	return fmt.Sprintf("at position %d: %v", e.Pos, e.Err)
}

func (e *PositionError) Unwrap() error { return e.Err }
