package replica

import (
	"encoding/binary"
	"errors"
)

// Record batch header fields this package needs (the v2 record batch format): a batch
// starts with baseOffset int64, batchLength int32, partitionLeaderEpoch
// int32, magic int8, crc uint32, attributes int16 ...
const (
	batchLengthOffset = 8
	batchMagicOffset  = 16
	batchAttrsOffset  = 21
	// lastOffsetDelta int32 follows the attributes.
	batchLastDeltaOffset = 23
	batchHeaderMinSize   = 23 // enough to read the attributes
	attrTransactional    = 0x10
	attrCompression      = 0x07
	compressionZstd      = 4
)

var errTruncatedBatch = errors.New("replica: truncated record batch")

// batchFlags summarises the attributes of the batches of a record set.
type batchFlags struct {
	transactional bool // some magic-2 batch has the transactional bit
	zstd          bool // some magic-2 batch is zstd-compressed
}

// hasTransactionalBatch reports whether any magic-2 batch in records has the
// transactional attribute bit. Produce needs this before appending: a
// transactional batch without a transactional id is refused for the whole
// request.
func hasTransactionalBatch(records []byte) (bool, error) {
	f, err := scanBatches(records)
	return f.transactional, err
}

// scanBatches walks the batch headers of records without validating them.
// Validation of the batches themselves is storage's job; a malformed set
// returns an error here and storage reports CORRUPT_MESSAGE.
func scanBatches(records []byte) (batchFlags, error) {
	var f batchFlags
	for len(records) > 0 {
		if len(records) < batchLengthOffset+4 {
			return f, errTruncatedBatch
		}
		n := int32(binary.BigEndian.Uint32(records[batchLengthOffset:]))
		if n < 0 || int64(n) > int64(len(records)-batchLengthOffset-4) {
			return f, errTruncatedBatch
		}
		total := batchLengthOffset + 4 + int(n)
		if total >= batchHeaderMinSize && records[batchMagicOffset] == 2 {
			attrs := binary.BigEndian.Uint16(records[batchAttrsOffset:])
			f.transactional = f.transactional || attrs&attrTransactional != 0
			f.zstd = f.zstd || attrs&attrCompression == compressionZstd
		}
		records = records[total:]
	}
	return f, nil
}
