package record

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ErrTruncated reports that a buffer ends in the middle of a batch: the
// 12-byte prefix or the bytes announced by batchLength are not all there.
// A fetch response or a log tail after a crash legitimately ends this way,
// so callers distinguish it from corruption with errors.Is.
var ErrTruncated = errors.New("record: truncated batch")

// corrupt wraps kerr.CorruptMessage with context.
func corrupt(format string, args ...any) error {
	return fmt.Errorf("record: "+format+": %w", append(args, kerr.CorruptMessage)...)
}

// invalid wraps kerr.InvalidRecord with context.
func invalid(format string, args ...any) error {
	return fmt.Errorf("record: "+format+": %w", append(args, kerr.InvalidRecord)...)
}

// The validation failures Kafka counts in BrokerTopicMetrics (LogValidator
// and Log.analyzeAndValidateRecords): errors.Is finds them in the errors
// of ValidateBatch and CheckCRC (and storage's own checks), beside the
// kerr code.
var (
	// ErrInvalidCRC: a batch's stored CRC does not match its bytes
	// (InvalidMessageCrcRecordsPerSec).
	ErrInvalidCRC = errors.New("record: invalid crc")
	// ErrNoKey: a record without key for a compacted topic
	// (NoKeyCompactedTopicRecordsPerSec).
	ErrNoKey = errors.New("record: no key for a compacted topic")
	// ErrInvalidOffsetOrSequence: a produced batch's offsets, counts or
	// sequence are not what a client may send
	// (InvalidOffsetOrSequenceRecordsPerSec).
	ErrInvalidOffsetOrSequence = errors.New("record: invalid offset or sequence")
	// ErrInvalidMagic: a batch's magic differs from the first batch's
	// (InvalidMagicNumberRecordsPerSec).
	ErrInvalidMagic = errors.New("record: invalid magic")
)

// kindError adds a validation kind to err without changing its text.
type kindError struct {
	err, kind error
}

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.err, e.kind} }

// WithKind returns err, unchanged in text, that also satisfies
// errors.Is(_, kind) (one of the Err... kinds above).
func WithKind(err, kind error) error { return &kindError{err, kind} }

// invalidOffsetOrSequence is invalid, of kind ErrInvalidOffsetOrSequence.
func invalidOffsetOrSequence(format string, args ...any) error {
	return WithKind(invalid(format, args...), ErrInvalidOffsetOrSequence)
}
