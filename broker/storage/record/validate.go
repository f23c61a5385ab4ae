package record

import (
	"errors"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ValidateOptions selects the checks of ValidateBatch.
type ValidateOptions struct {
	// MaxMessageBytes is max.message.bytes; a larger batch fails with
	// MESSAGE_TOO_LARGE. 0 disables the check.
	MaxMessageBytes int
	// FromClient applies the rules for batches produced by clients (the
	// leader's produce path): base offset 0, record offset deltas exactly
	// 0..n-1 with lastOffsetDelta = n-1 and n > 0, no control batches, a
	// producer id requires a sequence, transactional requires a producer
	// id, and no LogAppendTime bit. Without it (replication, recovery) the
	// deltas need only increase within [0, lastOffsetDelta].
	FromClient bool
	// RequireKeys rejects records without key (compacted topics).
	RequireKeys bool
	// CheckTimestamps enforces message.timestamp.difference.max.ms for
	// CreateTime records: |timestamp - NowMs| <= TimestampDiffMaxMs.
	CheckTimestamps    bool
	NowMs              int64
	TimestampDiffMaxMs int64
}

// validateBufs holds decompression buffers for ValidateBatch.
var validateBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledValidateBuf keeps an unusually large decompressed batch from
// pinning its memory in the pool.
const maxPooledValidateBuf = 8 << 20

func putValidateBuf(bp *[]byte) {
	if cap(*bp) > maxPooledValidateBuf {
		*bp = nil
	}
	validateBufs.Put(bp)
}

// RecordError reports which record of a batch failed validation, for the
// per-record RecordErrors of Produce v8+. It unwraps to the kerr code.
type RecordError struct {
	Index int // batch_index in Kafka's terms
	Err   error
}

func (e *RecordError) Error() string { return fmt.Sprintf("record %d: %v", e.Index, e.Err) }
func (e *RecordError) Unwrap() error { return e.Err }

// ValidateBatch checks one whole v2 batch (batch must hold exactly the
// batch or start with it). Errors satisfy errors.Is with the kerr code the
// broker should return: CorruptMessage (bad structure, CRC, record
// encoding; also for truncation, together with ErrTruncated),
// UnsupportedForMessageFormat (magic 0/1), MessageTooLarge,
// UnsupportedCompressionType, InvalidRecord, InvalidTimestamp. Record-level
// failures are *RecordError. Uncompressed batches are checked without
// allocating per record.
func ValidateBatch(batch []byte, o ValidateOptions) error {
	h, err := ParseBatchHeader(batch)
	if err != nil {
		if errors.Is(err, ErrTruncated) {
			return fmt.Errorf("record: %w: %w", ErrTruncated, kerr.CorruptMessage)
		}
		return err
	}
	if h.Size() > len(batch) {
		return fmt.Errorf("record: batch of %d bytes, have %d: %w: %w", h.Size(), len(batch), ErrTruncated, kerr.CorruptMessage)
	}
	batch = batch[:h.Size()]
	if o.MaxMessageBytes > 0 && h.Size() > o.MaxMessageBytes {
		return fmt.Errorf("record: batch of %d bytes exceeds max.message.bytes %d: %w", h.Size(), o.MaxMessageBytes, kerr.MessageTooLarge)
	}
	if err := CheckCRC(batch); err != nil {
		return err
	}
	if err := validateHeader(h, o); err != nil {
		return err
	}
	if err := validateRecords(batch, h, o); err != nil {
		return err
	}
	if h.IsControl() && !h.IsTransactional() {
		return invalid("control batch that is not transactional")
	}
	return nil
}

// validateHeader checks the batch header's codec and counts, and for a
// client's batch what only a broker may set: offsets, control batches,
// LogAppendTime, and the producer fields' consistency.
func validateHeader(h BatchHeader, o ValidateOptions) error {
	if h.Compression() > Zstd {
		return fmt.Errorf("record: compression codec %d: %w", h.Compression(), kerr.UnsupportedCompressionType)
	}
	if h.NumRecords < 0 {
		return corrupt("negative record count %d", h.NumRecords)
	}
	if h.LastOffsetDelta < 0 {
		return corrupt("negative last offset delta %d", h.LastOffsetDelta)
	}
	if o.FromClient {
		switch {
		case h.BaseOffset != 0:
			return invalidOffsetOrSequence("produced batch has base offset %d, want 0", h.BaseOffset)
		case h.IsControl():
			return invalidOffsetOrSequence("clients may not produce control batches")
		case h.NumRecords == 0:
			return invalidOffsetOrSequence("produced batch has no records")
		case int64(h.LastOffsetDelta)+1 != int64(h.NumRecords):
			return invalidOffsetOrSequence("lastOffsetDelta %d does not match %d records", h.LastOffsetDelta, h.NumRecords)
		case h.ProducerID >= 0 && h.BaseSequence < 0:
			return invalidOffsetOrSequence("producer id %d without base sequence", h.ProducerID)
		case h.IsTransactional() && h.ProducerID < 0:
			return invalid("transactional batch without producer id")
		case h.TimestampType() == LogAppendTime:
			return fmt.Errorf("record: produced batch has LogAppendTime set: %w", kerr.InvalidTimestamp)
		}
	} else if int64(h.NumRecords) > int64(h.LastOffsetDelta)+1 {
		return corrupt("%d records do not fit offset span %d", h.NumRecords, h.LastOffsetDelta)
	}
	return nil
}

// validateRecords decodes every record of the batch (decompressing it into
// a pooled buffer) and checks framing, offset deltas, keys on compacted
// topics and CreateTime bounds.
func validateRecords(batch []byte, h BatchHeader, o ValidateOptions) error {
	var err error
	payload := batch[BatchHeaderSize:]
	if h.Compression() != None {
		// The decompressed records are only inspected, never kept, so
		// they go to a pooled buffer: a producer batch is typically 1 MiB
		// decompressed, and allocating that per batch made the garbage
		// collector a large share of the produce path.
		bp := validateBufs.Get().(*[]byte)
		defer putValidateBuf(bp)
		if payload, err = decompressAppend((*bp)[:0], h.Compression(), payload); err != nil {
			return err
		}
		*bp = payload[:0]
	}
	if int(h.NumRecords) > len(payload)/minRecordSize {
		return corrupt("record count %d does not fit in %d bytes", h.NumRecords, len(payload))
	}
	var r Record
	pos := 0
	prevDelta := int32(-1)
	for i := 0; i < int(h.NumRecords); i++ {
		n, err := parseRecord(payload[pos:], &r, false)
		if err != nil {
			return &RecordError{Index: i, Err: err}
		}
		pos += n
		if o.FromClient {
			if r.OffsetDelta != int32(i) {
				return &RecordError{Index: i, Err: invalidOffsetOrSequence("offset delta %d, want %d", r.OffsetDelta, i)}
			}
		} else if r.OffsetDelta <= prevDelta || r.OffsetDelta > h.LastOffsetDelta {
			return &RecordError{Index: i, Err: corrupt("offset delta %d out of order", r.OffsetDelta)}
		}
		prevDelta = r.OffsetDelta
		if o.RequireKeys && !h.IsControl() && r.Key == nil {
			return &RecordError{Index: i, Err: WithKind(invalid("compacted topic cannot accept a record without key"), ErrNoKey)}
		}
		if o.CheckTimestamps && h.TimestampType() == CreateTime {
			ts := h.BaseTimestamp + r.TimestampDelta
			if ts != NoTimestamp && (ts-o.NowMs > o.TimestampDiffMaxMs || o.NowMs-ts > o.TimestampDiffMaxMs) {
				return &RecordError{Index: i, Err: fmt.Errorf("record: timestamp %d out of range (now %d, max difference %d): %w", ts, o.NowMs, o.TimestampDiffMaxMs, kerr.InvalidTimestamp)}
			}
		}
	}
	if pos != len(payload) {
		return corrupt("%d bytes after the last record", len(payload)-pos)
	}
	return nil
}
