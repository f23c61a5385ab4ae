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
