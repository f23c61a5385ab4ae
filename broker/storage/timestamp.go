package storage

import (
	"fmt"
	"os"

	"github.com/klassik/klassik/broker/storage/record"
)

// findRecordByTimestamp reads the batch at pos and returns the first record
// with timestamp >= ts and offset >= minOffset. Compressed
// batches are decompressed by the record package.
func findRecordByTimestamp(f *os.File, pos int64, h batchHeader, ts, minOffset int64) (int64, int64, bool, error) {
	buf := make([]byte, h.Size())
	if _, err := f.ReadAt(buf, pos); err != nil {
		return 0, 0, false, fmt.Errorf("storage: read batch at %d: %w", pos, err)
	}
	rh, err := record.ParseBatchHeader(buf)
	if err != nil {
		return 0, 0, false, err
	}
	var off, rts int64
	found := false
	err = record.ForEachRecord(buf, func(r *record.Record) error {
		if found {
			return nil
		}
		o, t := r.Offset(rh), r.Timestamp(rh)
		if t >= ts && o >= minOffset {
			off, rts, found = o, t, true
		}
		return nil
	})
	if err != nil {
		return 0, 0, false, fmt.Errorf("storage: decode batch at %d: %w", pos, err)
	}
	return off, rts, found, nil
}
