package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage/record"
)

func deletedFiles(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if strings.HasSuffix(e.Name(), deletedFileSuffix) {
			out = append(out, e.Name())
		}
	}
	return out
}

// Retention driven by the LogManager's own schedule, not by direct calls:
// "delete whole segments by retention.ms and retention.bytes ... on a
// log.retention.check.interval.ms schedule; renaming to .deleted then
// removing asynchronously; advance the log start offset". The schedule's
// ticks are wall-clock; every decision (segment age, file.delete.delay.ms)
// uses the injected clock, which the test holds still and then advances.
func TestManagerScheduledRetention(t *testing.T) {
	d, clock, cfg := newManagerEnv(t)
	cfg.InitialTaskDelayMs = 0
	cfg.RetentionCheckIntervalMs = 100
	cfg.FlushStartOffsetCheckpointIntervalMs = 100
	cfg.Defaults.FileDeleteDelayMs = 60000
	m := mustNewLogManager(t, cfg)
	defer m.Shutdown()

	// byTime: retention.ms = 1h; its first four segments hold records two
	// hours old, the rest are current.
	byTime, oldEnd := agedLog(t, m, clock, cfg.Defaults, "by-time")
	byTime.SetHighWatermark(byTime.LogEndOffset())

	// bySize: retention.bytes = 3000, current records, several segments.
	sizeCfg := cfg.Defaults
	sizeCfg.RetentionMs = -1
	sizeCfg.RetentionBytes = 3000
	bySize := mustGetOrCreateLog(t, m, common.TopicPartition{Topic: "by-size", Partition: 0}, sizeCfg)
	for bySize.NumSegments() < 6 {
		if _, err := bySize.AppendAsLeader(makeBatch(3, 200, clock.Now().UnixMilli(), "s"), 0); err != nil {
			t.Fatal(err)
		}
	}
	bySize.SetHighWatermark(bySize.LogEndOffset())
	sizeBefore, segsBefore := bySize.Size(), bySize.SegmentBaseOffsets()

	// Nothing happens before the schedule runs.
	if byTime.LogStartOffset() != 0 || bySize.LogStartOffset() != 0 || len(deletedFiles(t, byTime.Dir())) != 0 {
		t.Fatal("retention ran before Startup")
	}
	m.Startup()

	pollUntil(t, 5*time.Second, "time retention by the schedule", func() bool { return byTime.LogStartOffset() == oldEnd })
	pollUntil(t, 5*time.Second, "size retention by the schedule", func() bool { return bySize.LogStartOffset() > 0 })
	if got := byTime.SegmentBaseOffsets(); got[0] != oldEnd {
		t.Fatalf("by-time segments %v, want the first at %d", got, oldEnd)
	}
	// Size retention deletes whole oldest segments while the rest stays
	// above retention.bytes: what is left minus the next oldest segment
	// would be below the limit.
	segs := bySize.SegmentBaseOffsets()
	if bySize.LogStartOffset() != segs[0] || len(segs) >= len(segsBefore) {
		t.Fatalf("by-size: log start %d, segments %v (before %v)", bySize.LogStartOffset(), segs, segsBefore)
	}
	if size := bySize.Size(); size >= sizeBefore || size-sizeCfg.RetentionBytes > sizeCfg.SegmentBytes {
		t.Fatalf("by-size: %d bytes left of %d, retention.bytes %d", size, sizeBefore, sizeCfg.RetentionBytes)
	}
	// Reads below the new start are out of range, reads at it work.
	if _, err := byTime.Read(oldEnd-1, 100, byTime.LogEndOffset(), true); err == nil {
		t.Fatal("read below the log start offset succeeded")
	}
	if fd, err := byTime.Read(oldEnd, 1<<20, byTime.LogEndOffset(), true); err != nil || fd.FirstOffset != oldEnd {
		t.Fatalf("read at the new log start: %+v %v", fd, err)
	}

	// log-start-offset-checkpoint, written on its own schedule, records a
	// log start offset only where it lies inside the first segment (as
	// Kafka: a start at the first segment's base is implied by the files).
	// DeleteRecords moves by-time's start one past its first base.
	if ls, err := byTime.DeleteRecordsBefore(oldEnd + 1); err != nil || ls != oldEnd+1 {
		t.Fatalf("DeleteRecordsBefore(%d): %d %v", oldEnd+1, ls, err)
	}
	cpPath := filepath.Join(d, logStartOffsetCheckpointFile)
	pollUntil(t, 5*time.Second, "log-start-offset-checkpoint", func() bool {
		cp, err := ReadOffsetCheckpoint(cpPath)
		if err != nil {
			return false
		}
		_, sizeListed := cp[common.TopicPartition{Topic: "by-size", Partition: 0}]
		return cp[common.TopicPartition{Topic: "by-time", Partition: 0}] == oldEnd+1 && !sizeListed
	})

	// The deleted segments wait as .deleted files: with the injected clock
	// held still, file.delete.delay.ms (60 s) never passes, however many
	// deletion sweeps (one a second) run.
	timeDeleted, sizeDeleted := deletedFiles(t, byTime.Dir()), deletedFiles(t, bySize.Dir())
	if len(timeDeleted) < 4*3 || len(sizeDeleted) == 0 { // .log, .index, .timeindex per segment
		t.Fatalf(".deleted files: %v / %v", timeDeleted, sizeDeleted)
	}
	for _, n := range timeDeleted {
		if !strings.Contains(n, ".log.deleted") && !strings.Contains(n, "index.deleted") && !strings.Contains(n, ".snapshot.deleted") && !strings.Contains(n, ".txnindex.deleted") {
			t.Fatalf("unexpected deleted file %s", n)
		}
	}
	stillThere := time.Now().Add(1300 * time.Millisecond)
	for time.Now().Before(stillThere) {
		if got := deletedFiles(t, byTime.Dir()); len(got) != len(timeDeleted) {
			t.Fatalf("removed before file.delete.delay.ms: %v", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Once the delay has passed, the next sweep removes them.
	clock.Advance(61 * time.Second)
	pollUntil(t, 5*time.Second, "asynchronous removal of .deleted files", func() bool {
		return len(deletedFiles(t, byTime.Dir())) == 0 && len(deletedFiles(t, bySize.Dir())) == 0
	})

	// A clean restart restores the advanced log start offsets from the
	// checkpoint.
	wantSizeStart := bySize.LogStartOffset()
	if err := m.Shutdown(); err != nil {
		t.Fatal(err)
	}
	m2 := mustNewLogManager(t, cfg)
	defer m2.Shutdown()
	l1, ok1 := m2.GetLog(common.TopicPartition{Topic: "by-time", Partition: 0})
	l2, ok2 := m2.GetLog(common.TopicPartition{Topic: "by-size", Partition: 0})
	if !ok1 || !ok2 || l1.LogStartOffset() != oldEnd+1 || l2.LogStartOffset() != wantSizeStart {
		t.Fatalf("after restart: %v %v", l1, l2)
	}
}

// "A log manager that ... runs the retention and cleaner schedules": with
// log.cleaner.enable the manager starts the cleaner's goroutine, which
// compacts a dirty cleanup.policy=compact log on its own (recording
// cleaner-offset-checkpoint) and applies time retention to a
// compact,delete log after its pass, while the manager's retention task
// leaves compacted logs to it. Shutdown stops both.
func TestManagerRunsCleaner(t *testing.T) {
	d, clock, cfg := newManagerEnv(t)
	cfg.CleanerEnable = true
	cfg.CleanerDedupeBufferSize = 1 << 20
	cfg.InitialTaskDelayMs = 0
	cfg.RetentionCheckIntervalMs = 100
	m := mustNewLogManager(t, cfg)
	defer m.Shutdown()
	compact := cfg.Defaults
	compact.CleanupPolicyCompact, compact.CleanupPolicyDelete = true, false
	both := compact
	both.CleanupPolicyDelete = true
	both.RetentionMs = 3600000
	lc := mustGetOrCreateLog(t, m, common.TopicPartition{Topic: "compacted", Partition: 0}, compact)
	lb := mustGetOrCreateLog(t, m, common.TopicPartition{Topic: "compact-delete", Partition: 0}, both)
	now := clock.Now().UnixMilli()
	// compacted: 40 batches over 4 keys, in several segments.
	appendUntilSegments(t, lc, 4, func() []byte { return makeBatch(4, 100, now, "v") })
	if err := lc.Roll(); err != nil {
		t.Fatal(err)
	}
	if _, err := lc.AppendAsLeader(makeBatch(1, 10, now, "active"), 0); err != nil {
		t.Fatal(err)
	}
	lc.SetHighWatermark(lc.LogEndOffset())
	// compact-delete: old segments (two hours) then current data. Every
	// old record has its own key, so a cleaner pass over them keeps them
	// all, with their timestamps: a segment the cleaner emptied would
	// instead fall back to its file's mtime, which is wall-clock time
	// while this test's clock stands in 2023, and time retention stops at
	// a segment it does not find old enough (as Kafka's does).
	for i := 0; lb.NumSegments() < 3; i++ {
		o := record.DefaultBuildOptions()
		o.BaseTimestamp = now - 2*3600000
		var recs []record.Record
		for j := 0; j < 4; j++ {
			recs = append(recs, record.Record{OffsetDelta: int32(j), Key: []byte(fmt.Sprint("old-", i, "-", j)), Value: make([]byte, 100)})
		}
		if _, err := lb.AppendAsLeader(record.Build(o, recs), 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := lb.Roll(); err != nil {
		t.Fatal(err)
	}
	oldEnd := lb.LogEndOffset()
	if _, err := lb.AppendAsLeader(makeBatch(4, 100, now, "new"), 0); err != nil {
		t.Fatal(err)
	}
	lb.SetHighWatermark(lb.LogEndOffset())
	cleanBefore := lc.SegmentBaseOffsets()
	activeBase := cleanBefore[len(cleanBefore)-1]

	m.Startup()
	cpPath := filepath.Join(d, cleanerOffsetCheckpointFile)
	pollUntil(t, 10*time.Second, "the cleaner's pass over the compacted log", func() bool {
		cp, err := ReadOffsetCheckpoint(cpPath)
		return err == nil && cp[common.TopicPartition{Topic: "compacted", Partition: 0}] == activeBase
	})
	pollUntil(t, 10*time.Second, "retention of the compact,delete log", func() bool { return lb.LogStartOffset() == oldEnd })

	// Below the active segment only the latest record of each key k0..k3
	// is left, at its original offset.
	recs := map[string]int64{}
	n := 0
	for _, b := range readAllBatches(t, lc, lc.LogStartOffset()) {
		h, err := record.ParseBatchHeader(b)
		if err != nil {
			t.Fatal(err)
		}
		if h.BaseOffset >= activeBase {
			continue
		}
		err = record.ForEachRecord(b, func(r *record.Record) error {
			if _, dup := recs[string(r.Key)]; dup {
				t.Fatalf("key %s kept twice", r.Key)
			}
			recs[string(r.Key)] = r.Offset(h)
			n++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// The last batch before the active segment holds k0..k3 at
	// activeBase-4 .. activeBase-1.
	for i := 0; i < 4; i++ {
		if off := recs[fmt.Sprintf("k%d", i)]; off != activeBase-4+int64(i) {
			t.Fatalf("k%d kept at %d, want %d (records %v)", i, off, activeBase-4+int64(i), recs)
		}
	}
	if n != 4 || lc.LogEndOffset() != activeBase+1 {
		t.Fatalf("%d records below the active segment, LEO %d", n, lc.LogEndOffset())
	}
	if err := m.Shutdown(); err != nil {
		t.Fatal(err)
	}
}

// "loads existing logs in parallel on start": after an unclean shutdown
// every partition of two log.dirs is recovered by
// num.recovery.threads.per.data.dir workers per directory (run under
// -race, this also checks the workers share nothing unguarded), and each
// comes back with its data and offsets.
func TestManagerLoadsLogsInParallel(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	clock := newFakeClock()
	cfg := testManagerConfig(clock, d1, d2)
	cfg.RecoveryThreadsPerDataDir = 4
	m := mustNewLogManager(t, cfg)
	want := map[common.TopicPartition][][]byte{}
	for p := int32(0); p < 12; p++ {
		tp := common.TopicPartition{Topic: "par", Partition: p}
		l := mustGetOrCreateLog(t, m, tp, cfg.Defaults)
		for i := 0; i < int(p)+3; i++ {
			if _, err := l.AppendAsLeader(makeBatch(2, 300, clock.Now().UnixMilli(), fmt.Sprint(p)), 0); err != nil {
				t.Fatal(err)
			}
		}
		want[tp] = readAllBatches(t, l, 0)
	}
	if err := m.Shutdown(); err != nil {
		t.Fatal(err)
	}
	// Make it unclean: without the marker every log is recovered from its
	// checkpointed recovery point.
	for _, d := range []string{d1, d2} {
		if err := os.Remove(filepath.Join(d, cleanShutdownFile)); err != nil {
			t.Fatal(err)
		}
	}
	m2 := mustNewLogManager(t, cfg)
	defer m2.Shutdown()
	logs := m2.AllLogs()
	if len(logs) != len(want) {
		t.Fatalf("loaded %d logs, want %d", len(logs), len(want))
	}
	for tp, batches := range want {
		l := logs[tp]
		if l == nil {
			t.Fatalf("%s not loaded", tp)
		}
		got := readAllBatches(t, l, 0)
		if len(got) != len(batches) {
			t.Fatalf("%s: %d batches, want %d", tp, len(got), len(batches))
		}
		for i := range got {
			if string(got[i]) != string(batches[i]) {
				t.Fatalf("%s: batch %d differs after recovery", tp, i)
			}
		}
	}
}
