package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage/record"
)

func clCompactConfig() LogConfig {
	c := DefaultLogConfig()
	c.CleanupPolicyCompact, c.CleanupPolicyDelete = true, false
	c.IndexIntervalBytes = 100
	c.FileDeleteDelayMs = 0
	return c
}

// clRec is a record as seen in the log: offset, key, value (nil =
// tombstone).
type clRec struct {
	Off        int64
	Key, Value string
	Tombstone  bool
}

// clAppend appends records at the log end as a follower would (explicit
// offsets), one batch per call, with timestamps ts.
func clAppend(t *testing.T, l *Log, ts int64, kvs ...string) {
	t.Helper()
	o := record.DefaultBuildOptions()
	o.BaseOffset = l.LogEndOffset()
	o.PartitionLeaderEpoch = 0
	o.BaseTimestamp = ts
	var recs []record.Record
	for i := 0; i+1 < len(kvs); i += 2 {
		r := record.Record{OffsetDelta: int32(i / 2), Key: []byte(kvs[i])}
		if kvs[i+1] != "<nil>" {
			r.Value = []byte(kvs[i+1])
		}
		recs = append(recs, r)
	}
	if _, err := l.AppendAsFollower(record.Build(o, recs)); err != nil {
		t.Fatalf("append: %v", err)
	}
}

func clRoll(t *testing.T, l *Log) {
	t.Helper()
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
}

// clReadLog reads every batch of every segment file on disk.
func clReadLog(t *testing.T, l *Log) ([]clRec, []record.BatchHeader) {
	t.Helper()
	var recs []clRec
	var hdrs []record.BatchHeader
	for _, base := range l.SegmentBaseOffsets() {
		data, err := os.ReadFile(segmentPath(l.Dir(), base, logFileSuffix))
		if err != nil {
			t.Fatal(err)
		}
		err = record.ForEachBatch(data, func(b []byte, h record.BatchHeader) error {
			if err := record.CheckCRC(b); err != nil {
				return err
			}
			if h.BaseOffset < base {
				return fmt.Errorf("batch %d below segment base %d", h.BaseOffset, base)
			}
			hdrs = append(hdrs, h)
			return record.ForEachRecord(b, func(r *record.Record) error {
				recs = append(recs, clRec{Off: r.Offset(h), Key: string(r.Key), Value: string(r.Value), Tombstone: r.Value == nil})
				return nil
			})
		})
		if err != nil {
			t.Fatalf("segment %d: %v", base, err)
		}
	}
	return recs, hdrs
}

// clCleanAll makes every appended record committed (high watermark at the
// log end) and runs one cleaning pass over l.
func clCleanAll(t *testing.T, c *Cleaner, l *Log) CleanStats {
	t.Helper()
	l.SetHighWatermark(l.LogEndOffset())
	st, err := c.CleanLog(l)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// clCleanWithNewData gives the cleaner new dirty data (a closed segment
// holding closedKey, then an active one holding activeKey, each valued
// key+"0") and runs a pass.
func clCleanWithNewData(t *testing.T, c *Cleaner, l *Log, ts int64, closedKey, activeKey string) {
	t.Helper()
	clAppend(t, l, ts, closedKey, closedKey+"0")
	clRoll(t, l)
	clAppend(t, l, ts, activeKey, activeKey+"0")
	clCleanAll(t, c, l)
}

func newTestCleaner(clock *fakeClock) *Cleaner {
	cfg := DefaultCleanerConfig()
	cfg.DedupeBufferSize = 24 * 1024
	cfg.Clock = clock.Now
	return NewCleaner(nil, cfg)
}

// openCompactedLog opens a compacted log (clCompactConfig, then mutate if
// not nil) in a fresh directory on a new fake clock, and returns it with
// the clock and the clock's time in milliseconds.
func openCompactedLog(t *testing.T, mutate func(*LogConfig)) (*Log, *fakeClock, int64) {
	t.Helper()
	cfg := clCompactConfig()
	if mutate != nil {
		mutate(&cfg)
	}
	clock := newFakeClock()
	return clOpen(t, t.TempDir(), cfg, clock), clock, clock.Now().UnixMilli()
}

func clOpen(t *testing.T, dir string, cfg LogConfig, clock *fakeClock) *Log {
	t.Helper()
	l, err := OpenLog(filepath.Join(dir, "t-0"), common.TopicPartition{Topic: "t", Partition: 0}, cfg, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// "keep at least the last record for every key, drop older values ...
// without changing any retained record's offset", and the active
// segment is never touched.
func TestCleanerKeepsLatestValuePerKey(t *testing.T) {
	clock := newFakeClock()
	dir := t.TempDir()
	l := clOpen(t, dir, clCompactConfig(), clock)
	ts := clock.Now().UnixMilli()
	clAppend(t, l, ts, "a", "a0", "b", "b0", "c", "c0") // 0-2
	clAppend(t, l, ts, "a", "a1", "nokey?", "x")        // 3-4
	clRoll(t, l)
	clAppend(t, l, ts, "b", "b1") // 5
	clAppend(t, l, ts, "a", "a2") // 6
	clRoll(t, l)
	clAppend(t, l, ts, "a", "a3", "c", "c1") // 7-8, active segment
	l.SetHighWatermark(l.LogEndOffset())
	activeBefore, _ := os.ReadFile(segmentPath(l.Dir(), 7, logFileSuffix))

	c := newTestCleaner(clock)
	st, err := c.CleanLog(l)
	if err != nil {
		t.Fatal(err)
	}
	if st.FirstDirtyOffset != 0 || st.EndOffset != 7 || st.Aborted || st.SegmentsRead != 2 || st.SegmentsWritten != 1 {
		t.Fatalf("stats %+v", st)
	}
	recs, _ := clReadLog(t, l)
	want := []clRec{
		{Off: 2, Key: "c", Value: "c0"},
		{Off: 4, Key: "nokey?", Value: "x"},
		{Off: 5, Key: "b", Value: "b1"},
		{Off: 6, Key: "a", Value: "a2"},
		{Off: 7, Key: "a", Value: "a3"},
		{Off: 8, Key: "c", Value: "c1"},
	}
	if !reflect.DeepEqual(recs, want) {
		t.Fatalf("after cleaning:\n got %+v\nwant %+v", recs, want)
	}
	if got := l.SegmentBaseOffsets(); !reflect.DeepEqual(got, []int64{0, 7}) {
		t.Fatalf("segments %v", got)
	}
	if after, _ := os.ReadFile(segmentPath(l.Dir(), 7, logFileSuffix)); string(after) != string(activeBefore) {
		t.Fatal("the active segment changed")
	}
	cp, err := os.ReadFile(filepath.Join(dir, "cleaner-offset-checkpoint"))
	if err != nil || string(cp) != "0\n1\nt 0 7\n" {
		t.Fatalf("checkpoint %q %v", cp, err)
	}
	// Reads through the Log see the cleaned data with the right offsets.
	fd, err := l.Read(5, 1<<20, l.LogEndOffset(), true)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := fd.Records.ReadAll()
	h, err := record.ParseBatchHeader(b)
	if err != nil || h.BaseOffset > 5 || h.LastOffset() < 5 {
		t.Fatalf("read at 5: %+v %v", h, err)
	}
	// No leftovers; the sources are .deleted until the Log removes them.
	ents, _ := os.ReadDir(l.Dir())
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), cleanedFileSuffix) || strings.HasSuffix(e.Name(), swapFileSuffix) {
			t.Fatalf("leftover %s", e.Name())
		}
	}
	// The cleaned log survives a restart (indexes and data agree).
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := clOpen(t, dir, clCompactConfig(), clock)
	recs2, _ := clReadLog(t, l2)
	if !reflect.DeepEqual(recs2, want) || l2.LogEndOffset() != 9 {
		t.Fatalf("after reopen %+v leo %d", recs2, l2.LogEndOffset())
	}
	// A second pass with nothing dirty does nothing.
	l2.SetHighWatermark(l2.LogEndOffset())
	if st, err := c.CleanLog(l2); err != nil || st.SegmentsWritten != 0 {
		t.Fatalf("second pass %+v %v", st, err)
	}
}

// "A tombstone ... must survive long enough for every consumer to see it:
// delete.retention.ms" and the first pass retaining it sets the batch's
// delete horizon (baseTimestamp = cleaning time + delete.retention.ms,
// attribute bit 6).
func TestCleanerTombstonesAndDeleteHorizon(t *testing.T) {
	l, clock, ts := openCompactedLog(t, func(c *LogConfig) { c.DeleteRetentionMs = 1000 })
	clAppend(t, l, ts, "a", "a0", "b", "b0")
	clAppend(t, l, ts+7, "a", "<nil>") // tombstone for a at 2
	clRoll(t, l)
	clAppend(t, l, ts, "z", "z0")
	c := newTestCleaner(clock)
	clCleanAll(t, c, l)
	recs, hdrs := clReadLog(t, l)
	want := []clRec{{Off: 1, Key: "b", Value: "b0"}, {Off: 2, Key: "a", Tombstone: true}, {Off: 3, Key: "z", Value: "z0"}}
	if !reflect.DeepEqual(recs, want) {
		t.Fatalf("first pass: %+v", recs)
	}
	var tomb record.BatchHeader
	for _, h := range hdrs {
		if h.BaseOffset == 2 {
			tomb = h
		}
	}
	if !tomb.HasDeleteHorizon() || tomb.DeleteHorizon() != ts+1000 || tomb.MaxTimestamp != ts+7 {
		t.Fatalf("tombstone batch header %+v", tomb)
	}
	// Before the horizon a new pass (new dirty data) keeps the tombstone.
	clCleanWithNewData(t, c, l, ts, "y", "x")
	if recs, _ := clReadLog(t, l); len(recs) != 5 || !recs[1].Tombstone {
		t.Fatalf("tombstone removed before its horizon: %+v", recs)
	}
	// After the horizon it goes.
	clock.Advance(2 * time.Second)
	clCleanWithNewData(t, c, l, ts, "w", "v")
	recs, _ = clReadLog(t, l)
	for _, r := range recs {
		if r.Tombstone {
			t.Fatalf("tombstone survived its horizon: %+v", recs)
		}
	}
	if len(recs) != 6 || recs[0].Off != 1 {
		t.Fatalf("records %+v", recs)
	}
}

// min.compaction.lag.ms keeps recent segments out of the dirty section; the
// high watermark bounds it too.
func TestCleanerRespectsCompactionLagAndHighWatermark(t *testing.T) {
	l, clock, now := openCompactedLog(t, func(c *LogConfig) { c.MinCompactionLagMs = 60000 })
	clAppend(t, l, now-120000, "a", "old0", "a", "old1") // old enough
	clRoll(t, l)
	clAppend(t, l, now-1000, "a", "new0", "a", "new1") // too recent
	clRoll(t, l)
	clAppend(t, l, now, "a", "active")
	c := newTestCleaner(clock)
	st := clCleanAll(t, c, l)
	if st.EndOffset != 2 {
		t.Fatalf("end offset %d, want 2 (second segment is within the lag)", st.EndOffset)
	}
	recs, _ := clReadLog(t, l)
	if len(recs) != 4 || recs[0].Value != "old1" {
		t.Fatalf("records %+v", recs)
	}
	// With the lag passed but the high watermark at 3 nothing beyond 2 is cleaned.
	clock.Advance(time.Hour)
	l.SetHighWatermark(3)
	if st, err := c.CleanLog(l); err != nil || st.EndOffset > 2 {
		t.Fatalf("cleaned above the high watermark: %+v %v", st, err)
	}
	clCleanAll(t, c, l)
	recs, _ = clReadLog(t, l)
	if len(recs) != 2 || recs[0].Value != "new1" || recs[1].Value != "active" {
		t.Fatalf("records %+v", recs)
	}
}

// Batches of aborted transactions are removed; a producer's last data
// batch survives as an empty batch so its sequence state is not lost
// (as Kafka's cleaner keeps it); markers are kept.
func TestCleanerTransactions(t *testing.T) {
	l, clock, ts := openCompactedLog(t, nil)
	appendRaw := func(b []byte) {
		if _, err := l.AppendAsFollower(b); err != nil {
			t.Fatal(err)
		}
	}
	txn := func(pid int64, seq int32, kv ...string) []byte {
		o := record.DefaultBuildOptions()
		o.BaseOffset, o.PartitionLeaderEpoch, o.BaseTimestamp = l.LogEndOffset(), 0, ts
		o.ProducerID, o.ProducerEpoch, o.BaseSequence, o.Transactional = pid, 0, seq, true
		var recs []record.Record
		for i := 0; i+1 < len(kv); i += 2 {
			recs = append(recs, record.Record{OffsetDelta: int32(i / 2), Key: []byte(kv[i]), Value: []byte(kv[i+1])})
		}
		return record.Build(o, recs)
	}
	clAppend(t, l, ts, "k", "committed")                                                        // 0
	appendRaw(txn(9, 0, "k", "aborted-1", "j", "aborted-2"))                                    // 1-2
	appendRaw(record.BuildControlBatch(l.LogEndOffset(), 0, 9, 0, record.ControlAbort, 0, ts))  // 3
	appendRaw(txn(8, 0, "k", "committed-txn"))                                                  // 4
	appendRaw(record.BuildControlBatch(l.LogEndOffset(), 0, 8, 0, record.ControlCommit, 0, ts)) // 5
	clRoll(t, l)
	appendRaw(txn(8, 1, "m", "open")) // 6, still open: its segment is uncleanable
	clRoll(t, l)
	clAppend(t, l, ts, "z", "z")
	c := newTestCleaner(clock)
	clCleanAll(t, c, l)
	recs, hdrs := clReadLog(t, l)
	for _, r := range recs {
		if strings.HasPrefix(r.Value, "aborted") {
			t.Fatalf("aborted data survived: %+v", recs)
		}
	}
	var empty, markers int
	for _, h := range hdrs {
		if h.ProducerID == 9 && !h.IsControl() {
			if h.NumRecords != 0 || h.BaseOffset != 1 || h.LastOffset() != 2 || h.BaseSequence != 0 {
				t.Fatalf("producer 9's last batch %+v", h)
			}
			empty++
		}
		if h.IsControl() {
			markers++
		}
	}
	if empty != 1 || markers != 2 {
		t.Fatalf("empty batches %d markers %d: %+v", empty, markers, hdrs)
	}
	// "committed" at 0 is superseded by the committed transaction at 4;
	// the open transaction's segment is left alone.
	var values []string
	for _, r := range recs {
		if !strings.HasPrefix(r.Value, "\x00") { // skip the markers' values
			values = append(values, r.Value)
		}
	}
	if strings.Join(values, ",") != "committed-txn,open,z" {
		t.Fatalf("values %q", values)
	}
}

// The manager-driven path: CleanOnce picks only logs above
// min.cleanable.dirty.ratio, and the goroutine starts and stops.
func TestCleanerCleanOnceDirtyRatio(t *testing.T) {
	clock := newFakeClock()
	dir := t.TempDir()
	mc := DefaultManagerConfig(dir)
	mc.Clock = clock.Now
	mc.CleanerEnable = false
	m := mustNewLogManager(t, mc)
	t.Cleanup(func() { m.Shutdown() })
	cfg := clCompactConfig()
	cfg.MinCleanableDirtyRatio = 0.5
	l := mustGetOrCreateLog(t, m, common.TopicPartition{Topic: "c", Partition: 0}, cfg)
	plain := mustGetOrCreateLog(t, m, common.TopicPartition{Topic: "p", Partition: 0}, DefaultLogConfig())
	ts := clock.Now().UnixMilli()
	for i := 0; i < 4; i++ {
		clAppend(t, l, ts, "k", fmt.Sprint(i))
		clAppend(t, plain, ts, "k", fmt.Sprint(i))
	}
	clRoll(t, l)
	clRoll(t, plain)
	clAppend(t, l, ts, "k", "active")
	l.SetHighWatermark(l.LogEndOffset())
	plain.SetHighWatermark(plain.LogEndOffset())
	c := NewCleaner(m, CleanerConfig{DedupeBufferSize: 4096, Clock: clock.Now})
	cleaned, err := c.CleanOnce()
	if err != nil || !cleaned {
		t.Fatalf("first pass: %v %v", cleaned, err)
	}
	if recs, _ := clReadLog(t, l); len(recs) != 2 || recs[0].Value != "3" {
		t.Fatalf("compacted log %+v", recs)
	}
	if recs, _ := clReadLog(t, plain); len(recs) != 4 {
		t.Fatal("a delete-policy log was compacted")
	}
	cleaned, err = c.CleanOnce()
	if err != nil || cleaned {
		t.Fatalf("nothing dirty, yet cleaned=%v err=%v", cleaned, err)
	}
	// A large clean history with distinct keys, then a small dirty
	// segment: the cleanable ratio stays below 0.5.
	var kvs []string
	for i := 0; i < 50; i++ {
		kvs = append(kvs, fmt.Sprintf("key-%d", i), "value")
	}
	clAppend(t, l, ts, kvs...)
	clRoll(t, l)
	clAppend(t, l, ts, "x", "1")
	l.SetHighWatermark(l.LogEndOffset())
	if cleaned, err := c.CleanOnce(); err != nil || !cleaned {
		t.Fatalf("history pass: %v %v", cleaned, err)
	}
	clAppend(t, l, ts, "k", "dirty")
	clRoll(t, l)
	clAppend(t, l, ts, "x", "2")
	l.SetHighWatermark(l.LogEndOffset())
	if cleaned, err := c.CleanOnce(); err != nil || cleaned {
		t.Fatalf("ratio below min.cleanable.dirty.ratio, yet cleaned=%v err=%v", cleaned, err)
	}
	cfg.MinCleanableDirtyRatio = 0.01
	l.UpdateConfig(cfg)
	if cleaned, err := c.CleanOnce(); err != nil || !cleaned {
		t.Fatalf("ratio above 0.01: %v %v", cleaned, err)
	}
	if recs, _ := clReadLog(t, l); len(recs) != 53 {
		t.Fatalf("%d records, want 50 history keys + k + x twice", len(recs))
	}
	// The background goroutine starts and stops promptly.
	c.Startup()
	done := make(chan struct{})
	go func() { c.Shutdown(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("cleaner did not stop")
	}
}

func TestCleanableRatioAndRange(t *testing.T) {
	s := cleanerLogSnapshot{logStart: 0, logEnd: 300, hw: 300, cfg: clCompactConfig(), segs: []cleanerSegment{
		{base: 0, next: 100, size: 1000}, {base: 100, next: 200, size: 500}, {base: 200, next: 300, size: 10, active: true},
	}}
	d, u, forced := cleanableRange(&s, 100, true, 0)
	if d != 100 || u != 200 || forced {
		t.Fatalf("range %d %d %v", d, u, forced)
	}
	if r, c := cleanableRatio(&s, d, u); c != 500 || r < 0.33 || r > 0.34 {
		t.Fatalf("ratio %v cleanable %d", r, c)
	}
	// A checkpoint outside [logStart, logEnd] resets to the log start.
	if d, _, _ := cleanableRange(&s, 500, true, 0); d != 0 {
		t.Fatalf("bad checkpoint not reset: %d", d)
	}
	// The high watermark inside a segment rounds down to its base.
	s.hw = 150
	if _, u, _ := cleanableRange(&s, 0, false, 0); u != 100 {
		t.Fatalf("uncleanable %d", u)
	}
	// max.compaction.lag.ms forces a pass for old first batches.
	s.hw = 300
	s.cfg.MaxCompactionLagMs = 1000
	s.segs[1].firstBatchTs = 5
	if _, _, forced := cleanableRange(&s, 100, true, 10000); !forced {
		t.Fatal("max compaction lag not applied")
	}
}

// A swap is abandoned, leaving the log as it is, when the segments changed
// after the cleaner's snapshot (here a follower truncation).
func TestCleanerSwapAbortsOnConcurrentChange(t *testing.T) {
	l, clock, ts := openCompactedLog(t, nil)
	clAppend(t, l, ts, "a", "1")
	clAppend(t, l, ts, "a", "2")
	clRoll(t, l)
	clAppend(t, l, ts, "a", "3")
	clRoll(t, l)
	clAppend(t, l, ts, "a", "4")
	snap, ok := snapshotForCleaning(l)
	if !ok {
		t.Fatal("snapshot")
	}
	if err := l.TruncateTo(1); err != nil {
		t.Fatal(err)
	}
	p := &cleanPass{c: newTestCleaner(clock), l: l, snap: snap}
	swapped, err := p.swap(snap.segs[:2])
	if err != nil || swapped {
		t.Fatalf("swap after truncation: %v %v", swapped, err)
	}
	recs, _ := clReadLog(t, l)
	if len(recs) != 1 || recs[0].Value != "1" || l.LogEndOffset() != 1 {
		t.Fatalf("log changed by an abandoned swap: %+v", recs)
	}
}

// A dedupe buffer too small for the dirty section makes a pass stop where
// the map filled up to its load factor; the next pass continues from there, and the
// records above the mapped range are kept meanwhile.
func TestCleanerOffsetMapFullContinuesNextPass(t *testing.T) {
	l, clock, ts := openCompactedLog(t, nil)
	for seg, prefix := range []string{"a", "b", "a"} {
		for i := 0; i < 4; i++ {
			clAppend(t, l, ts, fmt.Sprintf("%s%d", prefix, i), fmt.Sprintf("s%d", seg))
		}
		clRoll(t, l)
	}
	clAppend(t, l, ts, "active", "x")
	l.SetHighWatermark(l.LogEndOffset())
	cfg := DefaultCleanerConfig()
	cfg.DedupeBufferSize = 6 * offsetMapEntrySize // 6 slots, 5 keys at load factor 0.9
	cfg.Clock = clock.Now
	c := NewCleaner(nil, cfg)
	st, err := c.CleanLog(l)
	if err != nil {
		t.Fatal(err)
	}
	// a0-a3 and b0 fill the map to its 5 keys: the pass ends after b0.
	if st.EndOffset != 5 {
		t.Fatalf("first pass end offset %d, want 5", st.EndOffset)
	}
	if recs, _ := clReadLog(t, l); len(recs) != 13 {
		t.Fatalf("after first pass %d records, want all 13", len(recs))
	}
	for _, want := range []int64{10, 12} {
		st, err := c.CleanLog(l)
		if err != nil || st.EndOffset != want {
			t.Fatalf("pass ending at %d: %+v %v", want, st, err)
		}
	}
	recs, _ := clReadLog(t, l)
	var vals []string
	for _, r := range recs {
		vals = append(vals, r.Key+"="+r.Value)
	}
	if strings.Join(vals, " ") != "b0=s1 b1=s1 b2=s1 b3=s1 a0=s2 a1=s2 a2=s2 a3=s2 active=x" {
		t.Fatalf("after further passes: %v", vals)
	}
}

// A partly retained compressed batch is rebuilt with the same codec,
// offsets, producer fields and timestamp type.
func TestCleanerRebuildsCompressedBatches(t *testing.T) {
	l, clock, ts := openCompactedLog(t, nil)
	o := record.DefaultBuildOptions()
	o.PartitionLeaderEpoch, o.BaseTimestamp, o.Codec = 0, ts, record.Zstd
	o.ProducerID, o.ProducerEpoch, o.BaseSequence = 5, 1, 0
	o.LogAppendTime, o.MaxTimestamp = true, ts+99
	b := record.Build(o, []record.Record{
		{Key: []byte("a"), Value: []byte("old")},
		{OffsetDelta: 1, Key: []byte("b"), Value: []byte("kept")},
		{OffsetDelta: 2, Key: []byte("c"), Value: []byte("old")},
	})
	if _, err := l.AppendAsFollower(b); err != nil {
		t.Fatal(err)
	}
	clAppend(t, l, ts, "a", "new", "c", "new")
	clRoll(t, l)
	clAppend(t, l, ts, "z", "z")
	clCleanAll(t, newTestCleaner(clock), l)
	recs, hdrs := clReadLog(t, l)
	h := hdrs[0]
	if h.Compression() != record.Zstd || h.BaseOffset != 0 || h.LastOffset() != 2 || h.NumRecords != 1 ||
		h.ProducerID != 5 || h.BaseSequence != 0 || h.TimestampType() != record.LogAppendTime || h.MaxTimestamp != ts+99 {
		t.Fatalf("rebuilt header %+v", h)
	}
	if recs[0].Off != 1 || recs[0].Value != "kept" || len(recs) != 4 {
		t.Fatalf("records %+v", recs)
	}
}

// A marker whose transaction has no batch left gets a delete horizon and
// is removed after it; a marker of a transaction with retained data stays.
func TestCleanerRemovesMarkersOfEmptyTransactions(t *testing.T) {
	l, clock, ts := openCompactedLog(t, func(c *LogConfig) { c.DeleteRetentionMs = 1000 })
	txn := func(seq int32, k, v string) {
		o := record.DefaultBuildOptions()
		o.BaseOffset, o.PartitionLeaderEpoch, o.BaseTimestamp = l.LogEndOffset(), 0, ts
		o.ProducerID, o.ProducerEpoch, o.BaseSequence, o.Transactional = 7, 0, seq, true
		if _, err := l.AppendAsFollower(record.Build(o, []record.Record{{Key: []byte(k), Value: []byte(v)}})); err != nil {
			t.Fatal(err)
		}
		if _, err := l.AppendAsFollower(record.BuildControlBatch(l.LogEndOffset(), 0, 7, 0, record.ControlCommit, 0, ts)); err != nil {
			t.Fatal(err)
		}
	}
	txn(0, "q", "1") // 0, marker 1: q is superseded below, so this transaction empties
	txn(1, "r", "1") // 2, marker 3: r stays
	clAppend(t, l, ts, "q", "2")
	clRoll(t, l)
	clAppend(t, l, ts, "z", "z")
	l.SetHighWatermark(l.LogEndOffset())
	c := newTestCleaner(clock)
	markers := func() map[int64]record.BatchHeader {
		_, hdrs := clReadLog(t, l)
		out := map[int64]record.BatchHeader{}
		for _, h := range hdrs {
			if h.IsControl() {
				out[h.BaseOffset] = h
			}
		}
		return out
	}
	if _, err := c.CleanLog(l); err != nil {
		t.Fatal(err)
	}
	m := markers()
	if len(m) != 2 || !m[1].HasDeleteHorizon() || m[1].DeleteHorizon() != ts+1000 || m[3].HasDeleteHorizon() {
		t.Fatalf("after first pass: %+v", m)
	}
	clock.Advance(2 * time.Second)
	clCleanWithNewData(t, c, l, ts, "y", "x")
	if m := markers(); len(m) != 1 || m[3].BaseOffset != 3 {
		t.Fatalf("after the horizon: %+v", m)
	}
	// The producer state rebuilt from the cleaned log (snapshots removed)
	// has no open transaction.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	snaps, _ := filepath.Glob(filepath.Join(l.Dir(), "*.snapshot"))
	for _, s := range snaps {
		os.Remove(s)
	}
	l2 := clOpen(t, filepath.Dir(l.Dir()), l.Config(), clock)
	l2.SetHighWatermark(l2.LogEndOffset()) // decided transactions are stable once replicated
	if fuo, open := l2.ProducerState().FirstUnstableOffset(); open {
		_, hdrs := clReadLog(t, l2)
		t.Fatalf("a transaction looks open at %d after cleaning: %+v", fuo, hdrs)
	}
}

// A truncation below the cleaner's checkpoint lowers it (Kafka's
// LogCleaner.maybeTruncateCheckpoint): the records appended again above
// the truncation point are dirty and must be deduplicated by the next pass,
// and a pass that was running during the truncation does not record an
// end offset above it.
func TestTruncationLowersCleanerCheckpoint(t *testing.T) {
	clock := newFakeClock()
	dir := t.TempDir()
	l := clOpen(t, dir, clCompactConfig(), clock)
	ts := clock.Now().UnixMilli()
	clAppend(t, l, ts, "a", "a0", "b", "b0") // 0-1
	clAppend(t, l, ts, "c", "c0")            // 2
	clRoll(t, l)
	clAppend(t, l, ts, "d", "d0") // 3, active
	l.SetHighWatermark(l.LogEndOffset())
	c := newTestCleaner(clock)
	if st, err := c.CleanLog(l); err != nil || st.EndOffset != 3 {
		t.Fatalf("first pass %+v %v", st, err)
	}
	cpPath := filepath.Join(dir, "cleaner-offset-checkpoint")
	readCP := func() string {
		b, err := os.ReadFile(cpPath)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := readCP(); got != "0\n1\nt 0 3\n" {
		t.Fatalf("checkpoint %q", got)
	}
	// Truncate into the cleaned segment and write new duplicates.
	if err := l.TruncateTo(2); err != nil {
		t.Fatal(err)
	}
	if got := readCP(); got != "0\n1\nt 0 2\n" {
		t.Fatalf("checkpoint after truncation to 2: %q", got)
	}
	clAppend(t, l, ts, "a", "a1") // 2
	clAppend(t, l, ts, "a", "a2") // 3
	clRoll(t, l)
	clAppend(t, l, ts, "e", "e0") // 4, active
	l.SetHighWatermark(l.LogEndOffset())
	st, err := c.CleanLog(l)
	if err != nil || st.FirstDirtyOffset != 2 || st.EndOffset != 4 {
		t.Fatalf("second pass %+v %v", st, err)
	}
	recs, _ := clReadLog(t, l)
	want := []clRec{{Off: 1, Key: "b", Value: "b0"}, {Off: 3, Key: "a", Value: "a2"}, {Off: 4, Key: "e", Value: "e0"}}
	if !reflect.DeepEqual(recs, want) {
		t.Fatalf("after truncation and cleaning:\n got %+v\nwant %+v", recs, want)
	}
	// A full truncation lowers it as well.
	if err := l.TruncateFullyAndStartAt(1); err != nil {
		t.Fatal(err)
	}
	if got := readCP(); got != "0\n1\nt 0 1\n" {
		t.Fatalf("checkpoint after TruncateFullyAndStartAt(1): %q", got)
	}
	// The race: a pass reads the checkpoint, a truncation happens before
	// the pass records its end; the recorded end is clamped.
	if _, _, err := readCleanerCheckpoint(l); err != nil {
		t.Fatal(err)
	}
	clAppend(t, l, ts, "x", "x0")            // 1
	clAppend(t, l, ts, "x", "x1", "y", "y0") // 2-3
	if err := l.TruncateTo(2); err != nil {
		t.Fatal(err)
	}
	if err := c.writeCleanerCheckpoint(l, 4); err != nil {
		t.Fatal(err)
	}
	if got := readCP(); got != "0\n1\nt 0 2\n" {
		t.Fatalf("checkpoint after a pass raced with a truncation: %q", got)
	}
	// A truncation whose file rewrite failed still lowers the next pass's
	// start through the in-memory floor, once.
	l.cleanerFloor.Store(1 + 1)
	if off, ok, err := readCleanerCheckpoint(l); err != nil || !ok || off != 1 {
		t.Fatalf("checkpoint read with a floor at 1: %d %v %v", off, ok, err)
	}
	if off, _, _ := readCleanerCheckpoint(l); off != 2 {
		t.Fatalf("the floor was not consumed: %d", off)
	}
}
