package storage

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/klassik/klassik/broker/storage/record"
)

// benchBatch is a 16 KiB producer batch of 1 KiB records.
func benchBatch() []byte {
	opts := record.DefaultBuildOptions()
	opts.BaseTimestamp = 1700000000000
	recs := make([]record.Record, 16)
	for i := range recs {
		v := make([]byte, 1000)
		for j := range v {
			v[j] = byte(i + j)
		}
		recs[i] = record.Record{OffsetDelta: int32(i), TimestampDelta: int64(i), Key: []byte("key"), Value: v}
	}
	return record.Build(opts, recs)
}

func benchConfig() LogConfig {
	c := DefaultLogConfig()
	c.SegmentBytes = 64 << 20 // roll several times per benchmark run
	return c
}

// BenchmarkLogAppend measures the full leader append path: validation
// (CRC, record framing), offset assignment, epoch stamping, index
// maintenance and rolling.
func BenchmarkLogAppend(b *testing.B) {
	l := openTestLog(b, b.TempDir(), benchConfig(), newFakeClock())
	defer l.Close()
	batch := benchBatch()
	h, _ := parseBatchHeader(batch)
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		setBaseOffset(batch, 0) // the producer always sends 0
		if _, err := l.AppendAsLeader(batch, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*float64(h.RecordsCount)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkRawFileAppend is the baseline: the same bytes with plain
// os.File.Write, rolling files at the same size.
func BenchmarkRawFileAppend(b *testing.B) {
	dir := b.TempDir()
	batch := benchBatch()
	h, _ := parseBatchHeader(batch)
	seg := int64(64 << 20)
	n := 0
	f, err := os.Create(filepath.Join(dir, "0.log"))
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if size+int64(len(batch)) > seg {
			f.Sync()
			f.Close()
			n++
			if f, err = os.Create(filepath.Join(dir, filenamePrefixFromOffset(int64(n))+".log")); err != nil {
				b.Fatal(err)
			}
			size = 0
		}
		if _, err := f.Write(batch); err != nil {
			b.Fatal(err)
		}
		size += int64(len(batch))
	}
	b.ReportMetric(float64(b.N)*float64(h.RecordsCount)/b.Elapsed().Seconds(), "records/s")
	f.Close()
}

// BenchmarkLogRead measures sequential fetches of up to 1 MiB through the
// index lookup and header scan, copying the bytes with pread.
func BenchmarkLogRead(b *testing.B) {
	l := openTestLog(b, b.TempDir(), benchConfig(), newFakeClock())
	defer l.Close()
	batch := benchBatch()
	for l.Size() < 32<<20 {
		setBaseOffset(batch, 0)
		if _, err := l.AppendAsLeader(batch, 1); err != nil {
			b.Fatal(err)
		}
	}
	h, _ := parseBatchHeader(batch)
	leo := l.LogEndOffset()
	buf := make([]byte, 1<<20+len(batch))
	var bytesRead int64
	off := int64(0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if off >= leo {
			off = 0
		}
		fd, err := l.Read(off, 1<<20, leo, true)
		if err != nil {
			b.Fatal(err)
		}
		n, err := fd.Records.File.ReadAt(buf[:fd.Records.Size], fd.Records.Pos)
		if err != nil {
			b.Fatal(err)
		}
		bytesRead += int64(n)
		off = fd.FirstOffset + int64(n/len(batch))*int64(h.RecordsCount)
	}
	b.SetBytes(bytesRead / int64(b.N))
	b.ReportMetric(float64(bytesRead)/float64(len(batch))*float64(h.RecordsCount)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkIndexLookup measures random lookups in a full-size offset index.
func BenchmarkIndexLookup(b *testing.B) {
	x, err := openOffsetIndex(filepath.Join(b.TempDir(), "0.index"), 0, 10<<20, true)
	if err != nil {
		b.Fatal(err)
	}
	defer x.close()
	const n = 200000
	for i := 1; i <= n; i++ {
		if err := x.Append(int64(i*16), int32(i*4096)); err != nil {
			b.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	targets := make([]int64, 1024)
	for i := range targets {
		targets[i] = rng.Int64N(n * 16)
	}
	b.SetBytes(offsetIndexEntrySize)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := targets[i&1023]
		off, _ := x.Lookup(t)
		if off > t {
			b.Fatal("lookup above target")
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
}

// TestAppendPathAllocations: the append hot path produces no per-batch
// heap garbage.
func TestAppendPathAllocations(t *testing.T) {
	l := openTestLog(t, t.TempDir(), benchConfig(), newFakeClock())
	defer l.Close()
	batch := benchBatch()
	avg := testing.AllocsPerRun(200, func() {
		setBaseOffset(batch, 0)
		if _, err := l.AppendAsLeader(batch, 1); err != nil {
			t.Fatal(err)
		}
	})
	if avg > 0 {
		t.Fatalf("%.2f allocations per appended batch, want 0", avg)
	}
}

// TestHeapBoundedWhileAppending: heap use must not grow with the bytes
// appended (indexes are memory-mapped, batches written from the caller's
// buffer).
func TestHeapBoundedWhileAppending(t *testing.T) {
	cfg := benchConfig()
	cfg.SegmentBytes = 8 << 20
	l := openTestLog(t, t.TempDir(), cfg, newFakeClock())
	defer l.Close()
	batch := benchBatch()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for l.Size() < 48<<20 {
		setBaseOffset(batch, 0)
		if _, err := l.AppendAsLeader(batch, 1); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	growth := int64(after.HeapInuse) - int64(before.HeapInuse)
	if growth > 4<<20 {
		t.Fatalf("heap grew by %d bytes while appending 48 MiB", growth)
	}
	t.Logf("heap growth %d bytes over %d segments", growth, l.NumSegments())
}
