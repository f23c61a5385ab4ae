package replica

import (
	"encoding/binary"
	"errors"
)

// Record batch header fields this package needs (log-format.md §3): a batch
// starts with baseOffset int64, batchLength int32, partitionLeaderEpoch
// int32, magic int8, crc uint32, attributes int16 ...
const (
	batchLengthOffset  = 8
	batchMagicOffset   = 16
	batchAttrsOffset   = 21
	batchHeaderMinSize = 23 // enough to read the attributes
	attrTransactional  = 0x10
)

var errTruncatedBatch = errors.New("replica: truncated record batch")

// hasTransactionalBatch reports whether any magic-2 batch in records has the
// transactional attribute bit. Produce needs this before appending: a
// transactional batch without a transactional id is refused for the whole
// request. Validation of the batches themselves is storage's job; a
// malformed set returns an error and storage reports CORRUPT_MESSAGE.
func hasTransactionalBatch(records []byte) (bool, error) {
	for len(records) > 0 {
		if len(records) < batchLengthOffset+4 {
			return false, errTruncatedBatch
		}
		n := int32(binary.BigEndian.Uint32(records[batchLengthOffset:]))
		if n < 0 || int64(n) > int64(len(records)-batchLengthOffset-4) {
			return false, errTruncatedBatch
		}
		total := batchLengthOffset + 4 + int(n)
		if total >= batchHeaderMinSize && records[batchMagicOffset] == 2 {
			attrs := binary.BigEndian.Uint16(records[batchAttrsOffset:])
			if attrs&attrTransactional != 0 {
				return true, nil
			}
		}
		records = records[total:]
	}
	return false, nil
}
