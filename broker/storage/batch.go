package storage

// Record-batch header helpers for the storage loops.
//
// The batch format itself lives in broker/storage/record; storage reads and
// patches headers through it (record.ParseBatchHeader, record.CheckCRC,
// record.SetBaseOffset, ...). What remains here are the byte positions the
// engine and its tests patch directly, and nextBatch, which splits the first
// whole batch off a buffer for the read, scan and recovery loops.

import (
	"hash/crc32"

	"github.com/klassik/klassik/broker/storage/record"
)

const (
	logOverhead     = record.LogOverhead
	batchHeaderSize = record.BatchHeaderSize

	// Byte positions inside a v2 batch header.
	offBaseOffset   = 0
	offLength       = 8
	offLeaderEpoch  = 12
	offMagic        = 16
	offCRC          = 17
	offAttributes   = 21
	offRecordsCount = 57

	attrCompressionMask = 0x07
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// batchHeader is the decoded fixed part of a magic v2 record batch.
type batchHeader = record.BatchHeader

// errBatchTruncated reports a batch that does not fit in the buffer.
var errBatchTruncated = record.ErrTruncated

// parseBatchHeader decodes the header of the batch at the start of b; the
// caller checks that the whole batch fits.
func parseBatchHeader(b []byte) (batchHeader, error) { return record.ParseBatchHeader(b) }

// batchCRC computes CRC-32C over bytes 21..end of a complete batch.
func batchCRC(batch []byte) uint32 { return record.ComputeCRC(batch) }

// checkBatchCRC reports whether the stored CRC matches the computed one.
func checkBatchCRC(batch []byte) bool { return record.CheckCRC(batch) == nil }

// nextBatch splits the first complete batch off data; errBatchTruncated
// when data holds no complete batch (a partial tail).
func nextBatch(data []byte) (batch []byte, h batchHeader, err error) {
	h, err = parseBatchHeader(data)
	if err != nil {
		return nil, h, err
	}
	size := int64(h.BatchLength) + logOverhead
	if size > int64(len(data)) {
		return nil, h, errBatchTruncated
	}
	return data[:size], h, nil
}
