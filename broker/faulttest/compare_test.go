package faulttest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// writeSegments writes a partition directory "t-0" under root/<id> with the
// given segment contents (named by their index as base offsets).
func writeSegments(t *testing.T, root string, id int32, segs ...[]byte) {
	t.Helper()
	dir := filepath.Join(root, strconv.Itoa(int(id)), "t-0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, s := range segs {
		name := filepath.Join(dir, strings.Repeat("0", 19)+strconv.Itoa(i)+".log")
		if err := os.WriteFile(name, s, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func acksFor(ids ...string) []Ack {
	var a []Ack
	for i, id := range ids {
		a = append(a, Ack{ID: id, Seq: int64(i), Partition: 0, Offset: int64(i)})
	}
	return a
}

func TestComparePartition(t *testing.T) {
	good1 := batchOf(0, "r-0", "r-1")
	good2 := batchOf(2, "r-2")
	for _, tc := range []struct {
		name  string
		segs  map[int32][][]byte
		hw    int64
		acks  []Ack
		wants []string // substrings of the findings, in any order; none = OK
	}{
		{
			name: "identical across segments",
			segs: map[int32][][]byte{1: {good1, good2}, 2: {append(append([]byte(nil), good1...), good2...)}, 3: {good1, good2}},
			hw:   3, acks: acksFor("r-0", "r-1", "r-2"),
		},
		{
			name: "a follower's extra uncommitted tail is ignored",
			segs: map[int32][][]byte{1: {good1}, 2: {good1, good2}},
			hw:   2, acks: acksFor("r-0", "r-1"),
		},
		{
			name:  "different bytes below the HW",
			segs:  map[int32][][]byte{1: {good1, good2}, 2: {good1, batchOf(2, "r-9")}},
			hw:    3,
			acks:  acksFor("r-0", "r-1", "r-2"),
			wants: []string{"differ from broker 1", "lost: id=r-2 partition=0 offset=2"},
		},
		{
			name:  "replica short of the HW",
			segs:  map[int32][][]byte{1: {good1, good2}, 2: {good1}},
			hw:    3,
			acks:  acksFor("r-0", "r-1", "r-2"),
			wants: []string{"ends at 2 below the high watermark 3"},
		},
		{
			name:  "duplicate and reordered records",
			segs:  map[int32][][]byte{1: {batchOf(0, "r-1", "r-0", "r-1")}},
			hw:    3,
			acks:  acksFor("r-0", "r-1"),
			wants: []string{"duplicated: id=r-1", "reordered: id=r-0", "moved: id=r-1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			var isr []int32
			for id := int32(1); id <= 3; id++ {
				if segs, ok := tc.segs[id]; ok {
					writeSegments(t, root, id, segs...)
					isr = append(isr, id)
				}
			}
			f := ComparePartition("t", 0, tc.hw, isr, func(id int32) string { return filepath.Join(root, strconv.Itoa(int(id))) }, tc.acks)
			var all []string
			for _, x := range f {
				all = append(all, x.String())
			}
			joined := strings.Join(all, "\n")
			if len(tc.wants) == 0 && len(f) > 0 {
				t.Fatalf("unexpected findings:\n%s", joined)
			}
			for _, w := range tc.wants {
				if !strings.Contains(joined, w) {
					t.Errorf("missing finding %q in:\n%s", w, joined)
				}
			}
		})
	}
}
