package storage

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/klassik/klassik/broker/common"
)

// "... and rebuilds a missing or corrupt index": after a clean shutdown
// (no recovery scan), a segment whose .index is gone and one whose .index
// fails the sanity check are rebuilt from their .log on load; the rebuilt
// offset indexes equal the originals byte for byte (the same
// index.interval.bytes rule over the same batches). A segment whose
// .timeindex is gone gets an empty one, as in Kafka. Reads and timestamp
// lookups through all of them are right.
func TestMissingAndCorruptIndexesRebuilt(t *testing.T) {
	_, clock, cfg := newManagerEnv(t)
	m := mustNewLogManager(t, cfg)
	tp := common.TopicPartition{Topic: "idx", Partition: 0}
	l := mustGetOrCreateLog(t, m, tp, cfg.Defaults)
	ts0 := clock.Now().UnixMilli()
	var batches [][]byte
	for i := 0; l.NumSegments() < 5; i++ {
		b := makeBatch(1+i%3, 150, ts0+int64(i)*10, "i")
		if _, err := l.AppendAsLeader(b, 0); err != nil {
			t.Fatal(err)
		}
		batches = append(batches, b)
	}
	bases := l.SegmentBaseOffsets()
	dir := l.Dir()
	if err := m.Shutdown(); err != nil {
		t.Fatal(err)
	}
	orig := map[string][]byte{}
	for _, b := range bases[:3] {
		for _, suf := range []string{indexFileSuffix, timeIndexFileSuffix} {
			p := segmentPath(dir, b, suf)
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if suf == indexFileSuffix && len(data) < 16 {
				t.Fatalf("segment %d index has %d bytes; the test needs entries", b, len(data))
			}
			orig[p] = data
		}
	}
	// Damage: no .index in the first segment; the second's entries go
	// backwards (size still a multiple of 8); no .timeindex in the third.
	if err := os.Remove(segmentPath(dir, bases[0], indexFileSuffix)); err != nil {
		t.Fatal(err)
	}
	bad := append([]byte(nil), orig[segmentPath(dir, bases[1], indexFileSuffix)]...)
	binary.BigEndian.PutUint32(bad[len(bad)-8:], 0)
	if err := os.WriteFile(segmentPath(dir, bases[1], indexFileSuffix), bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(segmentPath(dir, bases[2], timeIndexFileSuffix)); err != nil {
		t.Fatal(err)
	}

	m2 := mustNewLogManager(t, cfg)
	defer m2.Shutdown()
	l2, ok := m2.GetLog(tp)
	if !ok {
		t.Fatal("log not loaded")
	}
	// Every batch reads back at its offset.
	off := int64(0)
	for i, b := range batches {
		h, _ := parseBatchHeader(b)
		fd, err := l2.Read(off, 1, l2.LogEndOffset(), true)
		if err != nil {
			t.Fatalf("read %d: %v", off, err)
		}
		got, err := fd.Records.ReadAll()
		if err != nil || len(got) < len(b) {
			t.Fatalf("read %d: %d bytes %v", off, len(got), err)
		}
		// The stored batch has its offset and epoch set; compare the rest.
		if !bytes.Equal(got[offMagic:len(b)], b[offMagic:]) {
			t.Fatalf("batch %d at offset %d differs", i, off)
		}
		// Timestamp lookup: the first record of batch i has ts0+10i.
		if got, _, _, found, err := l2.FetchOffsetByTimestamp(ts0 + int64(i)*10); err != nil || !found || got != off {
			t.Fatalf("timestamp %d: offset %d found %v %v, want %d", ts0+int64(i)*10, got, found, err, off)
		}
		off = h.NextOffset()
	}
	// Close cleanly (indexes trimmed as on any shutdown) and compare the
	// rebuilt offset indexes with the originals.
	if err := m2.Shutdown(); err != nil {
		t.Fatal(err)
	}
	for _, b := range bases[:2] {
		p := segmentPath(dir, b, indexFileSuffix)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, orig[p]) {
			t.Fatalf("%s rebuilt as %x, was %x", filepath.Base(p), data, orig[p])
		}
	}
	// As in Kafka (LogSegment.sanityCheck with timeIndexFileNewlyCreated),
	// a missing .timeindex next to a present .index comes back as an
	// empty time index rather than triggering a rebuild: lookups in that
	// segment scan from its start (checked above) and its largest
	// timestamp falls back to the file's mtime.
	if data, err := os.ReadFile(segmentPath(dir, bases[2], timeIndexFileSuffix)); err != nil || len(data) != 0 {
		t.Fatalf("time index of segment %d: %d bytes %v, want an empty file", bases[2], len(data), err)
	}
}
