package storage

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

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
// response returns the original base offset", also
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

// An aborted transaction is written to the segment's .txnindex with the
// 34-byte entry layout, reported to READ_COMMITTED fetches, and holds back the LSO
// while open.
func TestAbortedTransactionIndex(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock()
	l := openTestLog(t, dir, testConfig(), clock)
	defer l.Close()
	l.AppendAsLeader(makeBatch(2, 10, 1, "x"), 0) // offsets 0-1
	opts := record.DefaultBuildOptions()
	opts.ProducerID, opts.ProducerEpoch, opts.BaseSequence, opts.Transactional = 4242, 0, 0, true
	opts.BaseTimestamp = 1700000000000
	txn := record.Build(opts, []record.Record{{Value: []byte("a")}, {OffsetDelta: 1, Value: []byte("b")}})
	if _, err := l.AppendAsLeader(txn, 0); err != nil { // offsets 2-3
		t.Fatal(err)
	}
	l.SetHighWatermark(l.LogEndOffset())
	if lso := l.LastStableOffset(); lso != 2 {
		t.Fatalf("LSO with an open transaction = %d, want 2", lso)
	}
	marker := record.BuildControlBatch(0, 0, 4242, 0, record.ControlAbort, 7, 1700000000001)
	info, err := l.AppendAsCoordinator(marker, 0) // offset 4
	if err != nil || info.FirstOffset != 4 {
		t.Fatalf("marker append %+v %v", info, err)
	}
	l.SetHighWatermark(l.LogEndOffset())
	if lso := l.LastStableOffset(); lso != 5 {
		t.Fatalf("LSO after abort = %d, want 5", lso)
	}
	got, err := l.CollectAbortedTransactions(0, 5)
	if err != nil || len(got) != 1 || got[0] != (AbortedTxn{4242, 2, 4, 5}) {
		t.Fatalf("aborted txns %v %v", got, err)
	}
	if got, _ := l.CollectAbortedTransactions(5, 6); len(got) != 0 {
		t.Fatalf("txn reported past its marker: %v", got)
	}
	// Clients may not produce control batches.
	if _, err := l.AppendAsLeader(record.BuildControlBatch(0, 0, 4242, 0, record.ControlCommit, 7, 0), 0); !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("client control batch: %v", err)
	}
	// Truncation below the marker drops the entry.
	if err := l.TruncateTo(4); err != nil {
		t.Fatal(err)
	}
	if got, _ := l.CollectAbortedTransactions(0, 5); len(got) != 0 {
		t.Fatalf("entry survived truncation: %v", got)
	}
}

// After a crash the .txnindex of recovered segments is rebuilt from the
// control batches, as Kafka rebuilds it during segment recovery.
func TestTxnIndexRebuiltByRecovery(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock()
	l := openTestLog(t, dir, testConfig(), clock)
	opts := record.DefaultBuildOptions()
	opts.ProducerID, opts.ProducerEpoch, opts.BaseSequence, opts.Transactional = 7, 0, 0, true
	opts.BaseTimestamp = 1700000000000
	if _, err := l.AppendAsLeader(record.Build(opts, []record.Record{{Value: []byte("a")}}), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendAsCoordinator(record.BuildControlBatch(0, 0, 7, 0, record.ControlAbort, 1, 1700000000001), 0); err != nil {
		t.Fatal(err)
	}
	l.closeNoFlush()
	if err := os.Remove(filepath.Join(dir, "00000000000000000000.txnindex")); err != nil {
		t.Fatal(err)
	}
	l = openTestLog(t, dir, testConfig(), clock) // unclean: recovery from 0
	defer l.Close()
	got, err := l.CollectAbortedTransactions(0, 2)
	if err != nil || len(got) != 1 || got[0] != (AbortedTxn{7, 0, 1, 2}) {
		t.Fatalf("rebuilt txn index %v %v", got, err)
	}
}

// The producer snapshot taken at a roll is fsync'd by the flusher, not
// under the append lock, so a crash may tear it. A torn snapshot must read
// as corrupt and the state be rebuilt from an older snapshot plus replay:
// duplicates are still recognised after the restart.
func TestTornRollSnapshotRebuiltOnLoad(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock()
	l := openTestLog(t, dir, testConfig(), clock)
	if _, err := l.AppendAsLeader(idempotentBatch(7, 0, 0, 3), 0); err != nil {
		t.Fatal(err)
	}
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	l.mu.RLock()
	pending := len(l.unsyncedSnapshots)
	l.mu.RUnlock()
	if pending != 0 {
		t.Fatalf("%d roll snapshots still unsynced after Roll", pending)
	}
	snap := ProducerSnapshotPath(dir, 3)
	if _, err := os.Stat(snap); err != nil {
		t.Fatalf("roll snapshot: %v", err)
	}
	l.closeNoFlush()
	if err := os.Truncate(snap, 5); err != nil { // torn by the crash
		t.Fatal(err)
	}
	l = openTestLog(t, dir, testConfig(), clock)
	defer l.Close()
	if l.LogEndOffset() != 3 {
		t.Fatalf("LEO after restart %d, want 3", l.LogEndOffset())
	}
	dup, err := l.AppendAsLeader(idempotentBatch(7, 0, 0, 3), 0)
	if err != nil || !dup.Duplicate || dup.FirstOffset != 0 {
		t.Fatalf("duplicate after restart with a torn snapshot: %+v %v", dup, err)
	}
}

// A roll caused by an append leaves its producer snapshot to the flusher
// goroutine, which fsyncs it (and the directory) before raising the
// recovery point past the rolled segment.
func TestFlusherSyncsRollSnapshot(t *testing.T) {
	l := openTestLog(t, t.TempDir(), testConfig(), newFakeClock())
	defer l.Close()
	for l.NumSegments() < 2 {
		if _, err := l.AppendAsLeader(makeBatch(4, 200, 1, "r"), 0); err != nil {
			t.Fatal(err)
		}
	}
	base := l.SegmentBaseOffsets()[1]
	pollUntil(t, 10*time.Second, "the flusher to sync the roll's snapshot and move the recovery point past the roll", func() bool {
		l.mu.RLock()
		defer l.mu.RUnlock()
		return len(l.unsyncedSnapshots) == 0 && l.recoveryPoint >= base
	})
	if _, err := os.Stat(ProducerSnapshotPath(l.Dir(), base)); err != nil {
		t.Fatalf("roll snapshot: %v", err)
	}
}
