package storage

import (
	"errors"
	"testing"

	"github.com/klassik/klassik/broker/storage/record"
	"github.com/twmb/franz-go/pkg/kerr"
)

func idempotentBatch(pid int64, epoch int16, seq int32, n int) []byte {
	opts := record.DefaultBuildOptions()
	opts.ProducerID, opts.ProducerEpoch, opts.BaseSequence = pid, epoch, seq
	opts.BaseTimestamp = 1700000000000
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = record.Record{OffsetDelta: int32(i), Value: []byte("v")}
	}
	return record.Build(opts, recs)
}

// "a batch whose (producer, epoch, first/last sequence) equals one of the
// last 5 batches remembered for the producer is not appended; the produce
// response returns the original base offset" (log-format.md §7.3), also
// after a restart (snapshot + replay).
func TestIdempotentDuplicatesAndSequence(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock()
	l := openTestLog(t, dir, testConfig(), clock)
	if _, err := l.AppendAsLeader(makeBatch(2, 10, 1, "x"), 0); err != nil {
		t.Fatal(err)
	}
	first, err := l.AppendAsLeader(idempotentBatch(42, 0, 0, 3), 0)
	if err != nil || first.FirstOffset != 2 || first.LastOffset != 4 {
		t.Fatalf("first append %+v %v", first, err)
	}
	dup, err := l.AppendAsLeader(idempotentBatch(42, 0, 0, 3), 0)
	if err != nil || !dup.Duplicate || dup.FirstOffset != 2 || dup.LastOffset != 4 {
		t.Fatalf("duplicate append %+v %v", dup, err)
	}
	if l.LogEndOffset() != 5 {
		t.Fatalf("duplicate was appended: LEO %d", l.LogEndOffset())
	}
	if _, err := l.AppendAsLeader(idempotentBatch(42, 0, 7, 1), 0); !errors.Is(err, kerr.OutOfOrderSequenceNumber) {
		t.Fatalf("gap in sequence: %v", err)
	}
	if l.LogEndOffset() != 5 {
		t.Fatalf("rejected batch changed the log: LEO %d", l.LogEndOffset())
	}
	if _, err := l.AppendAsLeader(idempotentBatch(42, 0, 3, 2), 0); err != nil {
		t.Fatal(err)
	}
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	l.closeNoFlush() // unclean: state rebuilt from the roll snapshot + replay
	l = openTestLog(t, dir, testConfig(), clock)
	defer l.Close()
	dup, err = l.AppendAsLeader(idempotentBatch(42, 0, 3, 2), 0)
	if err != nil || !dup.Duplicate || dup.FirstOffset != 5 {
		t.Fatalf("duplicate after restart %+v %v", dup, err)
	}
	if _, err := l.AppendAsLeader(idempotentBatch(42, 0, 5, 1), 0); err != nil {
		t.Fatalf("next sequence after restart: %v", err)
	}
	// Truncation rewinds producer state: sequence 5 may be re-sent.
	if err := l.TruncateTo(7); err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendAsLeader(idempotentBatch(42, 0, 5, 1), 0); err != nil {
		t.Fatalf("re-append after truncation: %v", err)
	}
}
