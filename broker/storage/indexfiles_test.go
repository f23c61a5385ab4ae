package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// TestIndexesHoldNoDescriptors: an index keeps no descriptor once mapped,
// and writers share a bounded cache of them, so 10,000 replicas cost one
// descriptor per segment (its .log) plus the cache.
func TestIndexesHoldNoDescriptors(t *testing.T) {
	old := indexFiles.max
	indexFiles.max = 16
	t.Cleanup(func() { indexFiles.max = old })
	dir := t.TempDir()
	before := openFDs(t)
	const n = 200
	idx := make([]*OffsetIndex, n)
	for i := range idx {
		x, err := openOffsetIndex(filepath.Join(dir, fmt.Sprintf("%020d.index", i)), 1000, 4096, true, false)
		if err != nil {
			t.Fatal(err)
		}
		idx[i] = x
	}
	if got := openFDs(t) - before; got > 0 {
		t.Fatalf("%d open indexes hold %d descriptors, want none", n, got)
	}
	for round := range 3 {
		for i, x := range idx {
			if err := x.Append(int64(1000+10*round+i%7), int32(100*round+i%5)); err != nil {
				t.Fatalf("index %d round %d: %v", i, round, err)
			}
		}
		if got := openFDs(t) - before; got > indexFiles.max {
			t.Fatalf("after round %d of writes to %d indexes, %d descriptors are open, want at most the cache's %d", round, n, got, indexFiles.max)
		}
	}
	for i, x := range idx {
		if err := x.flush(); err != nil {
			t.Fatal(err)
		}
		if e := x.numEntries(); e != 3 {
			t.Fatalf("index %d has %d entries, want 3", i, e)
		}
		off, pos := x.Lookup(1000 + 20 + int64(i%7))
		if off != int64(1020+i%7) || pos != int32(200+i%5) {
			t.Fatalf("index %d: lookup = (%d,%d), want (%d,%d)", i, off, pos, 1020+i%7, 200+i%5)
		}
	}
	// The bytes reached the files, not only the mappings.
	for i, x := range idx {
		if err := x.trim(); err != nil {
			t.Fatal(err)
		}
		if err := x.close(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(x.path)
		if err != nil || fi.Size() != 3*offsetIndexEntrySize {
			t.Fatalf("index %d file: %v size %d, want %d", i, err, fi.Size(), 3*offsetIndexEntrySize)
		}
		y, err := openOffsetIndex(x.path, 1000, 4096, false, false)
		if err != nil {
			t.Fatal(err)
		}
		if off, pos := y.Lookup(2000); off != int64(1020+i%7) || pos != int32(200+i%5) {
			t.Fatalf("reopened index %d: last entry (%d,%d)", i, off, pos)
		}
		y.close()
	}
	if got := openFDs(t) - before; got > 0 || indexFiles.open() != 0 {
		t.Fatalf("after closing every index %d descriptors stay open (cache %d)", got, indexFiles.open())
	}
}
