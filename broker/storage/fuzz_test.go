package storage

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/klassik/klassik/broker/common"
)

// seedSegment returns the .log, .index and .timeindex bytes of a small
// cleanly closed three-batch-per-index-entry segment.
func seedSegment(t testing.TB) (logb, idx, tidx []byte) {
	logb, idx, tidx, _ = seedSegmentEnd(t)
	return
}

func seedSegmentEnd(t testing.TB) (logb, idx, tidx []byte, end int64) {
	dir := t.TempDir()
	cfg := testConfig()
	cfg.SegmentBytes = 1 << 20
	cfg.IndexIntervalBytes = 100
	l := openTestLog(t, dir, cfg, newFakeClock())
	for l.LogEndOffset() < 30 {
		if _, err := l.AppendAsLeader(deterministicBatch(l.LogEndOffset(), false), 1); err != nil {
			t.Fatal(err)
		}
	}
	end = l.LogEndOffset()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	logb, _ = os.ReadFile(filepath.Join(dir, "00000000000000000000.log"))
	idx, _ = os.ReadFile(filepath.Join(dir, "00000000000000000000.index"))
	tidx, _ = os.ReadFile(filepath.Join(dir, "00000000000000000000.timeindex"))
	return
}

// FuzzIndexLoad loads a segment whose .index and .timeindex hold arbitrary
// bytes next to a valid .log, as after disk damage, both as a clean and as
// an unclean start. Invariants: loading never panics; after an unclean
// start (full recovery) every batch reads back byte-identical; after a
// clean start the log end offset is right and any read either fails or
// returns a range inside the file; lookups on the raw indexes return
// entries not above the target.
func FuzzIndexLoad(f *testing.F) {
	logb, idx, tidx, end := seedSegmentEnd(f)
	f.Add(idx, tidx)
	f.Add([]byte{}, []byte{})
	f.Add(make([]byte, 64), make([]byte, 60))
	f.Add(idx[:len(idx)-3], tidx[:5])
	bad := append([]byte(nil), idx...)
	binary.BigEndian.PutUint32(bad[4:], 1<<30)
	f.Add(bad, tidx)
	f.Fuzz(func(t *testing.T, idxData, tidxData []byte) {
		if len(idxData) > 1<<16 || len(tidxData) > 1<<16 {
			return
		}
		for _, clean := range []bool{false, true} {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "00000000000000000000.log"), logb, 0o644)
			os.WriteFile(filepath.Join(dir, "00000000000000000000.index"), idxData, 0o644)
			os.WriteFile(filepath.Join(dir, "00000000000000000000.timeindex"), tidxData, 0o644)
			l, err := loadLog(loadParams{dir: dir, tp: common.TopicPartition{Topic: "f", Partition: 0}, cfg: testConfig(), cleanShutdown: clean, clock: newFakeClock().Now})
			if err != nil {
				continue // refusing damaged input is fine; panicking is not
			}
			if l.LogEndOffset() != end {
				t.Fatalf("clean=%v: log end offset %d, want %d", clean, l.LogEndOffset(), end)
			}
			for i := 0; i < 8; i++ {
				_, pos := l.segments[0].offsetIdx.Lookup(int64(i * 4))
				if int64(pos) > l.segments[0].size && !clean {
					t.Fatalf("lookup position %d beyond log", pos)
				}
			}
			if !clean {
				verifyDeterministicLog(t, l)
			} else {
				for off := int64(0); off < end; off += 3 {
					fd, err := l.Read(off, 4096, end, true)
					if err == nil && fd.Records.Pos+int64(fd.Records.Size) > int64(len(logb)) {
						t.Fatalf("read range [%d,+%d) beyond the file", fd.Records.Pos, fd.Records.Size)
					}
				}
			}
			l.Close()
		}
	})
}

// FuzzRecovery feeds arbitrary bytes as a segment's .log after an unclean
// shutdown. Invariants: recovery never panics; the recovered .log is a
// prefix of the input consisting of complete, CRC-valid batches with
// increasing offsets; reading from the log start returns exactly that
// prefix; a second recovery changes nothing.
func FuzzRecovery(f *testing.F) {
	logb, _, _ := seedSegment(f)
	f.Add(logb)
	f.Add(logb[:len(logb)-1])
	f.Add(logb[:100])
	f.Add([]byte{})
	f.Add(make([]byte, 200))
	flipped := append([]byte(nil), logb...)
	flipped[len(flipped)/2] ^= 1
	f.Add(flipped)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<18 {
			return
		}
		dir := t.TempDir()
		path := filepath.Join(dir, "00000000000000000000.log")
		os.WriteFile(path, data, 0o644)
		open := func() *Log {
			l, err := loadLog(loadParams{dir: dir, tp: common.TopicPartition{Topic: "f", Partition: 0}, cfg: testConfig(), clock: newFakeClock().Now})
			if err != nil {
				t.Fatalf("recovery failed: %v", err)
			}
			return l
		}
		l := open()
		got, _ := os.ReadFile(path)
		if !bytes.HasPrefix(data, got) {
			t.Fatalf("recovered file is not a prefix of the input")
		}
		next := int64(0)
		for p := 0; p < len(got); {
			batch, h, err := nextBatch(got[p:])
			if err != nil || !checkBatchCRC(batch) || h.BaseOffset < next || h.LastOffsetDelta < 0 || h.LastOffset() > math.MaxInt32 {
				t.Fatalf("recovered data holds an invalid batch at %d: %v", p, err)
			}
			next = h.NextOffset()
			p += len(batch)
		}
		if len(got) > 0 && l.LogEndOffset() != next {
			t.Fatalf("log end offset %d, batches end at %d", l.LogEndOffset(), next)
		}
		var read []byte
		for _, b := range readAllBatches(t, l, l.LogStartOffset()) {
			read = append(read, b...)
		}
		if !bytes.Equal(read, got) {
			t.Fatalf("reads return %d bytes, file holds %d", len(read), len(got))
		}
		l.closeNoFlush()
		l2 := open()
		again, _ := os.ReadFile(path)
		if !bytes.Equal(again, got) {
			t.Fatalf("second recovery changed the log")
		}
		l2.Close()
	})
}

// FuzzDecodeCheckpoint: the checkpoint decoders never panic, and whatever
// decodes re-encodes to a file that decodes to the same entries.
func FuzzDecodeCheckpoint(f *testing.F) {
	f.Add([]byte("0\n3\norders 0 368769\norders 1 401220\n__consumer_offsets 17 12\n"))
	f.Add([]byte("0\n3\n0 0\n2 1184\n5 90234\n"))
	f.Add([]byte(""))
	f.Add([]byte("0\n1\nt 0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, err := decodeCheckpoint("fuzz", data)
		if err != nil {
			return
		}
		m, err := decodeOffsetEntries("fuzz", lines)
		if err != nil {
			return
		}
		back, err := decodeCheckpoint("re", encodeCheckpoint(encodeOffsetCheckpoint(m)))
		if err != nil {
			t.Fatalf("re-encoded checkpoint does not decode: %v", err)
		}
		m2, err := decodeOffsetEntries("re", back)
		if err != nil || len(m2) != len(m) {
			t.Fatalf("round trip changed entries: %v %v", m2, err)
		}
		for k, v := range m {
			if m2[k] != v {
				t.Fatalf("round trip changed %v", k)
			}
		}
	})
}

// FuzzMetaProperties: decoding never panics and decoded values round-trip.
func FuzzMetaProperties(f *testing.F) {
	f.Add([]byte("#\n#Wed Nov 29 13:36:00 UTC 2023\ncluster.id=8kz5Y0r4RZy2m0eW6rQ1Hw\nversion=0\nbroker.id=1\n"))
	f.Add([]byte("broker.id=7\n"))
	f.Add([]byte("version=1\nnode.id=1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		mp, err := decodeMetaProperties(data)
		if err != nil {
			return
		}
		if bytes.ContainsAny([]byte(mp.ClusterID), "\n\r") {
			return
		}
		back, err := decodeMetaProperties(encodeMetaProperties(mp, newFakeClock().Now()))
		if err != nil || back.BrokerID != mp.BrokerID {
			t.Fatalf("round trip: %+v -> %+v %v", mp, back, err)
		}
	})
}

// FuzzParseBatchHeader: the local header parser never panics, never
// reports a batch larger than its input as complete, and agrees with the
// record package on every field it decodes.
func FuzzParseBatchHeader(f *testing.F) {
	logb, _, _ := seedSegment(f)
	f.Add(logb)
	f.Add(logb[:61])
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 49, 0, 0, 0, 0, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		batch, h, err := nextBatch(data)
		if err != nil {
			return
		}
		if len(batch) != h.Size() || len(batch) > len(data) || h.Size() < batchHeaderSize {
			t.Fatalf("batch size %d, header says %d, input %d", len(batch), h.Size(), len(data))
		}
	})
}
