package storage

// Local record-batch header helpers.
//
// Record encoding, decoding and validation live in broker/storage/record
// (record.ValidateBatch, record.ForEachRecord, ...), which the append and
// timestamp paths use. These helpers only read and patch the fixed 61-byte
// v2 header and compute the CRC; the read, scan and recovery loops call
// them once per batch, so they are kept minimal and allocation-free. Each
// is named after the record function with the same job.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

const (
	// logOverhead is Kafka's LOG_OVERHEAD: baseOffset int64 + length int32.
	logOverhead = 12
	// batchHeaderSize is Kafka's RECORD_BATCH_OVERHEAD for magic 2.
	batchHeaderSize = 61
	// minBatchLength is the smallest legal batchLength of a v2 batch.
	minBatchLength = batchHeaderSize - logOverhead

	offBaseOffset   = 0
	offLength       = 8
	offLeaderEpoch  = 12
	offMagic        = 16
	offCRC          = 17
	offAttributes   = 21
	offLastDelta    = 23
	offBaseTs       = 27
	offMaxTs        = 35
	offProducerID   = 43
	offProducerEp   = 51
	offBaseSequence = 53
	offRecordsCount = 57

	attrCompressionMask = 0x07
	attrTimestampType   = 0x08
	attrTransactional   = 0x10
	attrControl         = 0x20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errBatchTruncated reports a batch that does not fit in the buffer.
var errBatchTruncated = errors.New("storage: truncated record batch")

// batchHeader is the decoded fixed part of a magic v2 record batch.
type batchHeader struct {
	BaseOffset           int64
	Length               int32 // batchLength: bytes after the length field
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
	RecordsCount         int32
}

// Size is the total byte size of the batch including the 12-byte prefix.
func (h *batchHeader) Size() int { return int(h.Length) + logOverhead }

// LastOffset is the offset of the batch's last record.
func (h *batchHeader) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// NextOffset is the offset after the batch.
func (h *batchHeader) NextOffset() int64 { return h.LastOffset() + 1 }

// IsControl reports attribute bit 5.
func (h *batchHeader) IsControl() bool { return h.Attributes&attrControl != 0 }

// IsTransactional reports attribute bit 4.
func (h *batchHeader) IsTransactional() bool { return h.Attributes&attrTransactional != 0 }

// LogAppendTime reports attribute bit 3.
func (h *batchHeader) LogAppendTime() bool { return h.Attributes&attrTimestampType != 0 }

// parseBatchHeader decodes the header of the batch at the start of b. It
// checks only that the 61 header bytes are present and that magic is 2 and
// batchLength is plausible; the caller checks that the whole batch fits.
// Stands in for record.ParseBatchHeader.
func parseBatchHeader(b []byte) (batchHeader, error) {
	var h batchHeader
	if len(b) < logOverhead {
		return h, errBatchTruncated
	}
	h.BaseOffset = int64(binary.BigEndian.Uint64(b[offBaseOffset:]))
	h.Length = int32(binary.BigEndian.Uint32(b[offLength:]))
	if len(b) <= offMagic {
		return h, errBatchTruncated
	}
	h.Magic = int8(b[offMagic])
	if h.Magic != 2 {
		return h, fmt.Errorf("storage: unsupported record batch magic %d", h.Magic)
	}
	if h.Length < minBatchLength {
		return h, fmt.Errorf("storage: record batch length %d below minimum %d", h.Length, minBatchLength)
	}
	if len(b) < batchHeaderSize {
		return h, errBatchTruncated
	}
	h.PartitionLeaderEpoch = int32(binary.BigEndian.Uint32(b[offLeaderEpoch:]))
	h.CRC = binary.BigEndian.Uint32(b[offCRC:])
	h.Attributes = int16(binary.BigEndian.Uint16(b[offAttributes:]))
	h.LastOffsetDelta = int32(binary.BigEndian.Uint32(b[offLastDelta:]))
	h.BaseTimestamp = int64(binary.BigEndian.Uint64(b[offBaseTs:]))
	h.MaxTimestamp = int64(binary.BigEndian.Uint64(b[offMaxTs:]))
	h.ProducerID = int64(binary.BigEndian.Uint64(b[offProducerID:]))
	h.ProducerEpoch = int16(binary.BigEndian.Uint16(b[offProducerEp:]))
	h.BaseSequence = int32(binary.BigEndian.Uint32(b[offBaseSequence:]))
	h.RecordsCount = int32(binary.BigEndian.Uint32(b[offRecordsCount:]))
	return h, nil
}

// batchCRC computes CRC-32C over bytes 21..end of a complete batch.
func batchCRC(batch []byte) uint32 { return crc32.Checksum(batch[offAttributes:], castagnoli) }

// checkBatchCRC compares the stored CRC with the computed one. Stands in for
// record.CheckCRC.
func checkBatchCRC(batch []byte) bool {
	if len(batch) < batchHeaderSize {
		return false
	}
	return binary.BigEndian.Uint32(batch[offCRC:]) == batchCRC(batch)
}

// setBaseOffset rewrites baseOffset (outside the CRC).
func setBaseOffset(batch []byte, off int64) {
	binary.BigEndian.PutUint64(batch[offBaseOffset:], uint64(off))
}

// setPartitionLeaderEpoch rewrites partitionLeaderEpoch (outside the CRC).
func setPartitionLeaderEpoch(batch []byte, epoch int32) {
	binary.BigEndian.PutUint32(batch[offLeaderEpoch:], uint32(epoch))
}

// setLogAppendTime sets the timestamp-type bit and maxTimestamp and
// recomputes the CRC, as Kafka's LogValidator does for LogAppendTime topics.
func setLogAppendTime(batch []byte, ts int64) {
	attrs := binary.BigEndian.Uint16(batch[offAttributes:])
	binary.BigEndian.PutUint16(batch[offAttributes:], attrs|attrTimestampType)
	binary.BigEndian.PutUint64(batch[offMaxTs:], uint64(ts))
	binary.BigEndian.PutUint32(batch[offCRC:], batchCRC(batch))
}

// nextBatch splits the first complete batch off data. It returns ok=false
// when data holds no complete batch (a partial tail).
func nextBatch(data []byte) (batch []byte, h batchHeader, err error) {
	h, err = parseBatchHeader(data)
	if err != nil {
		return nil, h, err
	}
	size := int64(h.Length) + logOverhead
	if size > int64(len(data)) {
		return nil, h, errBatchTruncated
	}
	return data[:size], h, nil
}
