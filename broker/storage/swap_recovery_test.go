package storage

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/klassik/klassik/broker/storage/record"
)

// A cleaner pass may merge several segments into one: it renames the
// .cleaned file to .swap, then the source segments to .deleted, then the
// .swap to its final name. A crash after the first rename leaves the merged
// .swap beside its sources. Recovery must complete the swap AND drop the
// source segments it covers, or two segments would hold the
// same offsets.
func TestRecoveryCompletesMergingSwap(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	clock := newFakeClock()
	cfg := testConfig()
	l := openTestLog(t, dir, cfg, clock)
	for i := 0; i < 12; i++ {
		if _, err := l.AppendAsLeader(makeBatch(4, 200, clock.Now().UnixMilli(), "r"), 0); err != nil {
			t.Fatal(err)
		}
	}
	if l.NumSegments() < 3 {
		t.Fatalf("want at least 3 segments, have %d", l.NumSegments())
	}
	leo := l.LogEndOffset()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	// Merge the first two segments' bytes into a swap file at the first base.
	var bases []int64
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if filepath.Ext(e.Name()) == logFileSuffix {
			off, err := offsetFromFileName(e.Name())
			if err != nil {
				t.Fatal(err)
			}
			bases = append(bases, off)
		}
	}
	var merged []byte
	for _, b := range bases[:2] {
		data, err := os.ReadFile(segmentPath(dir, b, logFileSuffix))
		if err != nil {
			t.Fatal(err)
		}
		merged = append(merged, data...)
	}
	if err := os.WriteFile(segmentPath(dir, bases[0], logFileSuffix+swapFileSuffix), merged, 0o644); err != nil {
		t.Fatal(err)
	}
	// OpenLog loads as after an unclean shutdown.
	l = openTestLog(t, dir, cfg, clock)
	defer l.Close()
	if _, err := os.Stat(segmentPath(dir, bases[1], logFileSuffix)); !os.IsNotExist(err) {
		t.Fatalf("segment %d, covered by the completed swap, is still there (err=%v)", bases[1], err)
	}
	if got := l.LogEndOffset(); got != leo {
		t.Fatalf("log end offset after recovery = %d, want %d", got, leo)
	}
	seen := map[int64]bool{}
	next := int64(0)
	for _, batch := range readAllBatches(t, l, 0) {
		h, err := record.ParseBatchHeader(batch)
		if err != nil {
			t.Fatal(err)
		}
		if h.BaseOffset != next {
			t.Fatalf("batch at offset %d, want %d: offsets held twice or missing", h.BaseOffset, next)
		}
		for o := h.BaseOffset; o <= h.LastOffset(); o++ {
			if seen[o] {
				t.Fatalf("offset %d read twice", o)
			}
			seen[o] = true
		}
		next = h.NextOffset()
	}
	if next != leo {
		t.Fatalf("read up to %d, want %d", next, leo)
	}
}
