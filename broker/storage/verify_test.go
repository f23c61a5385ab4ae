package storage

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klassik/klassik/broker/common"
)

// The checked-ranges set of a segment: ranges of whole batches merge when
// they touch, lookups answer how far a position is covered, truncation
// forgets what lies beyond the new size, and the set stays bounded.
func TestVerifiedRanges(t *testing.T) {
	type step struct {
		add  posRange // zero: none
		trim int64    // > 0: truncate to it first
		want []posRange
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"one", []step{{add: posRange{0, 10}, want: []posRange{{0, 10}}}}},
		{"empty range ignored", []step{{add: posRange{5, 5}, want: nil}}},
		{"adjacent merge", []step{
			{add: posRange{10, 20}, want: []posRange{{10, 20}}},
			{add: posRange{20, 30}, want: []posRange{{10, 30}}},
			{add: posRange{0, 10}, want: []posRange{{0, 30}}},
		}},
		{"disjoint stay sorted", []step{
			{add: posRange{50, 60}, want: []posRange{{50, 60}}},
			{add: posRange{10, 20}, want: []posRange{{10, 20}, {50, 60}}},
			{add: posRange{30, 40}, want: []posRange{{10, 20}, {30, 40}, {50, 60}}},
		}},
		{"bridge merges three", []step{
			{add: posRange{0, 10}, want: []posRange{{0, 10}}},
			{add: posRange{20, 30}, want: []posRange{{0, 10}, {20, 30}}},
			{add: posRange{40, 50}, want: []posRange{{0, 10}, {20, 30}, {40, 50}}},
			{add: posRange{5, 45}, want: []posRange{{0, 50}}},
		}},
		{"contained", []step{
			{add: posRange{0, 100}, want: []posRange{{0, 100}}},
			{add: posRange{10, 20}, want: []posRange{{0, 100}}},
		}},
		{"truncate", []step{
			{add: posRange{0, 10}},
			{add: posRange{20, 30}},
			{add: posRange{40, 50}, want: []posRange{{0, 10}, {20, 30}, {40, 50}}},
			{trim: 25, want: []posRange{{0, 10}, {20, 25}}},
			{trim: 20, want: []posRange{{0, 10}}},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var v verifiedRanges
			for i, s := range c.steps {
				if s.trim > 0 {
					v.truncate(s.trim)
				}
				v.add(s.add.start, s.add.end)
				if s.want != nil || i == len(c.steps)-1 {
					if !slices.Equal(v.r, s.want) {
						t.Fatalf("step %d: ranges %v, want %v", i, v.r, s.want)
					}
				}
			}
		})
	}

	var v verifiedRanges
	v.add(10, 20)
	v.add(30, 40)
	for _, c := range []struct{ pos, want int64 }{{0, 0}, {10, 20}, {15, 20}, {19, 20}, {20, 20}, {25, 25}, {30, 40}, {40, 40}} {
		if got := v.coveredTo(c.pos); got != c.want {
			t.Errorf("coveredTo(%d) = %d, want %d", c.pos, got, c.want)
		}
	}

	// Scattered ranges: the set stays bounded and keeps the newest.
	var w verifiedRanges
	for i := int64(0); i < 3*maxVerifiedRanges; i++ {
		w.add(i*100, i*100+10+i)
		if len(w.r) > maxVerifiedRanges {
			t.Fatalf("%d ranges kept, bound %d", len(w.r), maxVerifiedRanges)
		}
		if got := w.coveredTo(i * 100); got != i*100+10+i {
			t.Fatalf("the range just added is not kept: coveredTo %d", got)
		}
	}
}

// corruptLogDir writes a log of several segments into dir, closes it
// cleanly and returns the batches it holds (as read back) and the log's
// end offset.
func corruptLogDir(t *testing.T, dir string, cfg LogConfig) ([][]byte, int64) {
	t.Helper()
	clock := newFakeClock()
	l := openTestLog(t, dir, cfg, clock)
	n := 0
	appendUntilSegments(t, l, 5, func() []byte { n++; return makeBatch(3, 100, clock.Now().UnixMilli(), "b"+string(rune('a'+n%26))) })
	batches := readAllBatches(t, l, 0)
	leo := l.LogEndOffset()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return batches, leo
}

// reopenClean loads dir as after a clean shutdown: no segment is recovered
// (Kafka recovers nothing below the recovery point).
func reopenClean(t *testing.T, dir string, cfg LogConfig, leo int64) *Log {
	t.Helper()
	l, err := loadLog(loadParams{dir: dir, tp: common.TopicPartition{Topic: "t", Partition: 0}, cfg: cfg,
		clock: newFakeClock().Now, cleanShutdown: true, recoveryPoint: leo})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// flipInSegment flips one byte inside the records of the batch at
// position pos of the segment file path (past its 61-byte header, so the
// header still parses and only the CRC notices).
func flipInSegment(t *testing.T, path string, pos int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	at := pos + batchHeaderSize + 5
	if _, err := f.ReadAt(b, at); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x5a
	if _, err := f.WriteAt(b, at); err != nil {
		t.Fatal(err)
	}
}

// Issue 14: "a segment corrupted in the middle is detected by its CRC on
// read and never served as data". A byte flipped inside a batch of a
// closed segment, with the log closed, is found on the first read after a
// clean restart (nothing is recovered): a read that covers the batch stops
// before it, a read that starts at it answers CORRUPT_MESSAGE every time,
// the batches before it and after it are served unchanged, and the
// segments are then fully checked so later reads cost nothing.
func TestCorruptBatchInSegmentNeverServed(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig()
	batches, leo := corruptLogDir(t, dir, cfg)

	// The victim: the second batch of the second segment.
	l := reopenClean(t, dir, cfg, leo)
	l.mu.RLock()
	seg := l.segments[1]
	segPath, segSize := seg.log.Name(), seg.size
	l.mu.RUnlock()
	var victim int
	var pos int64
	for i, b := range batches {
		h, _ := parseBatchHeader(b)
		if h.BaseOffset >= seg.baseOffset {
			victim = i + 1
			pos += int64(len(batches[i]))
			break
		}
	}
	vh, _ := parseBatchHeader(batches[victim])
	l.Close()
	flipInSegment(t, segPath, pos)

	l = reopenClean(t, dir, cfg, leo)
	if got := l.segments[1].check.unverifiedEnd.Load(); got != segSize {
		t.Fatalf("a segment of an earlier process: unverifiedEnd %d, want its size %d", got, segSize)
	}
	// Reading from the segment's start stops before the damage.
	fd, err := l.Read(seg.baseOffset, 1<<20, leo, true)
	if err != nil {
		t.Fatalf("read before the corrupt batch: %v", err)
	}
	got, err := fd.Records.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, batches[victim-1]) {
		t.Fatalf("read from %d returned %d bytes, want only the %d bytes of the good batch before the corrupt one", seg.baseOffset, len(got), len(batches[victim-1]))
	}
	// Every read that starts at the corrupt batch fails, whatever offset
	// inside it is asked for.
	for i := 0; i < 3; i++ {
		_, err := l.Read(vh.BaseOffset+int64(i%int(vh.NumRecords)), 1<<20, leo, true)
		if !errors.Is(err, kerr.CorruptMessage) {
			t.Fatalf("read of the corrupt batch at %d: %v, want CORRUPT_MESSAGE", vh.BaseOffset, err)
		}
	}
	if l.dirFailed.Load() {
		t.Fatal("a corrupt batch took the log offline (it is not an I/O error)")
	}
	// Everything else is served byte for byte, and every byte handed out
	// was checked.
	want := slices.Concat(batches[:victim]...)
	var served []byte
	for off := int64(0); off < vh.BaseOffset; {
		fd, err := l.Read(off, 700, leo, true)
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		b, _ := fd.Records.ReadAll()
		for len(b) > 0 {
			batch, h, err := nextBatch(b)
			if err != nil {
				break // a partial batch at the end of a maxBytes-bounded read
			}
			served = append(served, batch...)
			off = h.NextOffset()
			b = b[len(batch):]
		}
	}
	if !bytes.Equal(served, want) {
		t.Fatalf("the batches before the corrupt one differ when read in small pieces")
	}
	after := readAllBatches(t, l, vh.NextOffset())
	if len(after) != len(batches)-victim-1 {
		t.Fatalf("%d batches after the corrupt one, want %d", len(after), len(batches)-victim-1)
	}
	for i, b := range after {
		if !bytes.Equal(b, batches[victim+1+i]) {
			t.Fatalf("batch %d after the corrupt one differs", i)
		}
	}
	// The first segment was read whole: it is trusted from now on.
	if got := l.segments[0].check.unverifiedEnd.Load(); got != 0 {
		t.Fatalf("segment 0 fully checked but unverifiedEnd %d", got)
	}
	if got := l.segments[1].check.unverifiedEnd.Load(); got == 0 {
		t.Fatal("the corrupt segment was marked fully checked")
	}
	if l.segments[1].check.loggedCorrupt.Load() != pos+1 {
		t.Fatalf("corrupt batch logged at %d, want %d", l.segments[1].check.loggedCorrupt.Load()-1, pos)
	}

	// Recovery (an unclean start from recovery point 0) cuts the log at
	// the corrupt batch, as Kafka's does, and trusts what it kept.
	l.Close()
	l = openTestLog(t, dir, cfg, newFakeClock())
	defer l.Close()
	if l.LogEndOffset() != vh.BaseOffset {
		t.Fatalf("after recovery the log ends at %d, want %d (the corrupt batch's base)", l.LogEndOffset(), vh.BaseOffset)
	}
	for _, s := range l.segments {
		if s.check.unverifiedEnd.Load() != 0 {
			t.Fatalf("segment %d recovered but not trusted", s.baseOffset)
		}
	}
}

// A follower checks every batch it fetches before appending it: a corrupt
// one is refused with CORRUPT_MESSAGE and nothing of that fetch is
// written.
func TestFollowerRefusesCorruptBatch(t *testing.T) {
	leaderDir := t.TempDir()
	cfg := testConfig()
	batches, _ := corruptLogDir(t, leaderDir, cfg)
	l, _ := openTempLog(t, cfg)
	data := slices.Concat(batches[:4]...)
	data[len(batches[0])+len(batches[1])+batchHeaderSize+3] ^= 1 // inside batch 2's records
	if _, err := l.AppendAsFollower(data); !errors.Is(err, kerr.CorruptMessage) {
		t.Fatalf("follower append of a corrupt batch: %v, want CORRUPT_MESSAGE", err)
	}
	if l.LogEndOffset() != 0 {
		t.Fatalf("follower log end %d after a refused fetch, want 0", l.LogEndOffset())
	}
	if _, err := l.AppendAsFollower(slices.Concat(batches[:2]...)); err != nil {
		t.Fatalf("follower append of the good prefix: %v", err)
	}
}

// Bytes this process appended are trusted without a check; a segment file
// reopened by a new process is checked once per batch.
func TestOwnAppendsNotRechecked(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig()
	l := openTestLog(t, dir, cfg, newFakeClock())
	appendUntilSegments(t, l, 3, func() []byte { return makeBatch(2, 50, 1, "x") })
	for _, s := range l.segments {
		if s.check.unverifiedEnd.Load() != 0 {
			t.Fatalf("segment %d written by this process has unverifiedEnd %d", s.baseOffset, s.check.unverifiedEnd.Load())
		}
	}
	leo := l.LogEndOffset()
	l.Close()
	l = reopenClean(t, dir, cfg, leo)
	var unchecked int
	for _, s := range l.segments {
		if s.check.unverifiedEnd.Load() > 0 {
			unchecked++
		}
	}
	if unchecked == 0 {
		t.Fatal("no segment of the earlier process left to check")
	}
	readAllBatches(t, l, 0)
	for _, s := range l.segments {
		if s.check.unverifiedEnd.Load() != 0 {
			t.Fatalf("segment %d read whole but unverifiedEnd %d", s.baseOffset, s.check.unverifiedEnd.Load())
		}
	}
	// The active segment takes new appends past its checked prefix.
	if _, err := l.AppendAsLeader(makeBatch(2, 50, 1, "y"), 0); err != nil {
		t.Fatal(err)
	}
	if got := readAllBatches(t, l, leo); len(got) != 1 {
		t.Fatalf("%d batches appended after reopening, want 1", len(got))
	}
}

// BenchmarkLogReadFirstCheck is BenchmarkLogRead with every read a first
// read of bytes an earlier process wrote: each pass over the log forgets
// what was checked, so every batch served is checked (pread + CRC-32C)
// first. It bounds what the check costs once per batch and process;
// BenchmarkLogRead is the steady state (bytes this process wrote, or
// already checked).
func BenchmarkLogReadFirstCheck(b *testing.B) {
	benchLogRead(b, func(l *Log) { // forget what was checked
		for _, s := range l.segments {
			s.check.init(s.size)
			s.check.verified.truncate(0)
		}
	})
}
