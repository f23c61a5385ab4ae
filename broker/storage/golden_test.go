package storage

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/common/hextest"
	"github.com/klassik/klassik/broker/storage/record"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/storage")

const goldenDir = "../../testdata/storage"

// golden compares got with testdata/storage/name (rewritten with -update).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(goldenDir, name)
	if *update {
		if err := os.MkdirAll(goldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file %s missing (run go test -update): %v", path, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from golden:\n got %x\nwant %x", name, got, want)
	}
}

// TestGoldenSpecBatch: "Batch at offset 0 of a fresh segment ... Total 91
// bytes" (a two-record v2 batch as Kafka writes it). Appending the producer's batch with leader
// epoch 0 must write exactly these bytes to 00000000000000000000.log.
func TestGoldenSpecBatch(t *testing.T) {
	spec := hextest.Decode(t, `0000 0000 0000 0000 0000 004f 0000 0000
02e8 1177 aa00 0000 0000 0100 0001 8bcf
e568 0000 0001 8bcf e568 05ff ffff ffff
ffff ffff ffff ffff ff00 0000 021a 0000
0004 6b31 0a68 656c 6c6f 001e 000a 0201
0a77 6f72 6c64 0202 6802 78`)
	opts := record.DefaultBuildOptions()
	opts.BaseTimestamp = 1700000000000
	in := record.Build(opts, []record.Record{
		{OffsetDelta: 0, Key: []byte("k1"), Value: []byte("hello")},
		{OffsetDelta: 1, TimestampDelta: 5, Value: []byte("world"), Headers: []record.Header{{Key: "h", Value: []byte("x")}}},
	})
	dir := t.TempDir()
	clock := newFakeClock()
	l := openTestLog(t, dir, DefaultLogConfig(), clock)
	info, err := l.AppendAsLeader(in, 0)
	if err != nil {
		t.Fatal(err)
	}
	if info.FirstOffset != 0 || info.LastOffset != 1 || info.MaxTimestamp != 1700000000005 {
		t.Fatalf("info %+v", info)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, spec) {
		t.Fatalf("segment bytes\n got %x\nwant %x", got, spec)
	}
	golden(t, "spec-batch.log", got)
	// One batch, first append: no index entry; the time index gets the
	// final (max timestamp) entry on close.
	idx, _ := os.ReadFile(filepath.Join(dir, "00000000000000000000.index"))
	if len(idx) != 0 {
		t.Fatalf("index should be empty after close, is %d bytes", len(idx))
	}
	tidx, _ := os.ReadFile(filepath.Join(dir, "00000000000000000000.timeindex"))
	golden(t, "spec-batch.timeindex", tidx)
	if want := hextest.Decode(t, "0000018bcfe56805 00000001"); !bytes.Equal(tidx, want) {
		t.Fatalf("timeindex %x want %x", tidx, want)
	}
}

// buildSizedBatch builds a ten-record batch of exactly size bytes for the
// index example below (timestamps 10 ms apart, null keys).
func buildSizedBatch(t *testing.T, firstOffset int64, size int) []byte {
	t.Helper()
	for v := 50; v < 150; v++ {
		for extra := 0; extra < 20; extra++ {
			opts := record.DefaultBuildOptions()
			opts.BaseTimestamp = 1700000000000 + 10*(firstOffset-999)
			recs := make([]record.Record, 10)
			for i := range recs {
				n := v
				if i == 9 {
					n += extra
				}
				recs[i] = record.Record{OffsetDelta: int32(i), TimestampDelta: int64(10 * i), Value: bytes.Repeat([]byte{'a'}, n)}
			}
			b := record.Build(opts, recs)
			if len(b) == size {
				return b
			}
		}
	}
	t.Fatalf("cannot build a %d-byte batch", size)
	return nil
}

// TestGoldenSpecIndexes checks the sparse-index rule (an entry before an
// append once more than index.interval.bytes were written since the last,
// keyed by the append's last offset at its start position) on Kafka's
// numbers:
// segment 1000, ten-record batches of 1100 bytes, one per append; entries
// (49, 4400) and (89, 8800), time entries (…500, 49) and (…900, 89).
func TestGoldenSpecIndexes(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock()
	l := openTestLog(t, dir, DefaultLogConfig(), clock)
	if err := l.TruncateFullyAndStartAt(1000); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		b := buildSizedBatch(t, 1000+int64(10*i), 1100)
		if _, err := l.AppendAsLeader(b, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	idx, _ := os.ReadFile(filepath.Join(dir, "00000000000000001000.index"))
	if want := hextest.Decode(t, "00000031 00001130 00000059 00002260"); !bytes.Equal(idx, want) {
		t.Fatalf("index %x want %x", idx, want)
	}
	golden(t, "00000000000000001000.index", idx)
	tidx, _ := os.ReadFile(filepath.Join(dir, "00000000000000001000.timeindex"))
	want := hextest.Decode(t, "0000018bcfe569f4 00000031 0000018bcfe56b84 00000059")
	if !bytes.HasPrefix(tidx, want) {
		t.Fatalf("timeindex %x does not start with %x", tidx, want)
	}
	golden(t, "00000000000000001000.timeindex", tidx)
}

// TestGoldenCheckpoints pins the text of every checkpoint file.
func TestGoldenCheckpoints(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "recovery-point-offset-checkpoint")
	m := map[common.TopicPartition]int64{{Topic: "orders", Partition: 0}: 368769, {Topic: "orders", Partition: 1}: 401220, {Topic: "__consumer_offsets", Partition: 17}: 12}
	if err := WriteOffsetCheckpoint(p, m); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	golden(t, "recovery-point-offset-checkpoint", got)
	back, err := ReadOffsetCheckpoint(p)
	if err != nil || len(back) != 3 || back[common.TopicPartition{Topic: "orders", Partition: 1}] != 401220 {
		t.Fatalf("read back %v %v", back, err)
	}
	// The spec's example, in Kafka's (hash) order, must read the same.
	spec := "0\n3\norders 0 368769\norders 1 401220\n__consumer_offsets 17 12\n"
	if got, err := decodeCheckpoint("spec", []byte(spec)); err != nil || len(got) != 3 {
		t.Fatalf("spec example: %v %v", got, err)
	}

	ep := filepath.Join(dir, leaderEpochCheckpointFile)
	c, err := loadLeaderEpochCache(ep, func() int64 { return 100000 })
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []EpochEntry{{0, 0}, {2, 1184}, {5, 90234}} {
		if err := c.Assign(e.Epoch, e.StartOffset); err != nil {
			t.Fatal(err)
		}
	}
	got, _ = os.ReadFile(ep)
	if string(got) != "0\n3\n0 0\n2 1184\n5 90234\n" {
		t.Fatalf("leader-epoch-checkpoint %q", got)
	}
	golden(t, "leader-epoch-checkpoint", got)

	mp := encodeMetaProperties(MetaProperties{BrokerID: 1, ClusterID: "8kz5Y0r4RZy2m0eW6rQ1Hw"}, time.Date(2023, 11, 29, 13, 36, 0, 0, time.UTC))
	golden(t, "meta.properties", mp)
	if string(mp) != "#\n#Wed Nov 29 13:36:00 UTC 2023\ncluster.id=8kz5Y0r4RZy2m0eW6rQ1Hw\nversion=0\nbroker.id=1\n" {
		t.Fatalf("meta.properties %q", mp)
	}
	back2, err := decodeMetaProperties(mp)
	if err != nil || back2.BrokerID != 1 || back2.ClusterID != "8kz5Y0r4RZy2m0eW6rQ1Hw" {
		t.Fatalf("meta.properties read back %+v %v", back2, err)
	}
}

func TestCheckpointReadErrors(t *testing.T) {
	for _, bad := range []string{"1\n0\n", "0\n2\nt 0 1\n", "0\n1\nt x 1\n", "0\n1\nt 0\n", "x\n"} {
		if _, err := decodeCheckpoint("bad", []byte(bad)); err == nil {
			if m, err := decodeOffsetEntries("bad", mustDecode(bad)); err == nil {
				t.Errorf("%q accepted: %v", bad, m)
			}
		}
	}
	for _, ok := range []string{"", "0\n", "0\n0\n", "0\n1\nt  0\t5\n"} {
		lines, err := decodeCheckpoint("ok", []byte(ok))
		if err != nil {
			t.Errorf("%q rejected: %v", ok, err)
		}
		if _, err := decodeOffsetEntries("ok", lines); err != nil {
			t.Errorf("%q rejected: %v", ok, err)
		}
	}
}

func mustDecode(s string) [][]string {
	l, _ := decodeCheckpoint("x", []byte(s))
	return l
}

// TestGoldenManagerCheckpoints pins the four per-directory files a
// LogManager writes at clean shutdown.
func TestGoldenManagerCheckpoints(t *testing.T) {
	d := t.TempDir()
	clock := newFakeClock()
	cfg := DefaultManagerConfig(d)
	cfg.Defaults = testConfig()
	cfg.Clock = clock.Now
	cfg.CleanerEnable = false
	m := mustNewLogManager(t, cfg)
	for p := int32(0); p < 2; p++ {
		l := mustGetOrCreateLog(t, m, common.TopicPartition{Topic: "orders", Partition: p}, cfg.Defaults)
		for i := 0; i < 3+int(p); i++ {
			l.AppendAsLeader(makeBatch(2, 10, 1700000000000, "g"), 0)
		}
		l.SetHighWatermark(4)
		if p == 1 {
			l.DeleteRecordsBefore(3)
		}
	}
	if err := m.Shutdown(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{recoveryPointCheckpointFile, replicationOffsetCheckpoint, logStartOffsetCheckpointFile} {
		got, err := os.ReadFile(filepath.Join(d, f))
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "manager-"+f, got)
	}
	if fi, err := os.Stat(filepath.Join(d, cleanShutdownFile)); err != nil || fi.Size() != 0 {
		t.Fatalf(".kafka_cleanshutdown: %v", err)
	}
}

// cleaner-offset-checkpoint has the offset-checkpoint text format:
// version 0, the entry count, then "topic partition offset" per compacted
// log, the offset being the end of the last cleaned section.
func TestGoldenCleanerCheckpoint(t *testing.T) {
	clock := newFakeClock()
	dir := t.TempDir()
	l, err := OpenLog(filepath.Join(dir, "compacted-0"), common.TopicPartition{Topic: "compacted", Partition: 0}, clCompactConfig(), clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ts := clock.Now().UnixMilli()
	clAppend(t, l, ts, "a", "1", "b", "1", "a", "2") // 0-2
	clRoll(t, l)
	clAppend(t, l, ts, "b", "2") // 3, active
	l.SetHighWatermark(l.LogEndOffset())
	if _, err := newTestCleaner(clock).CleanLog(l); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, cleanerOffsetCheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "0\n1\ncompacted 0 3\n" {
		t.Fatalf("cleaner-offset-checkpoint %q", got)
	}
	golden(t, "cleaner-offset-checkpoint", got)
}
