package storage

import (
	"bytes"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage/record"
)

// "Roll segments on ... log.roll.ms/log.roll.hours (with jitter)": each
// segment draws its jitter once, and rolls when the append's largest
// timestamp is more than segment.ms - jitter after the segment's first
// batch, so replicas of many partitions created together do not all roll
// in the same instant.
func TestRollOnSegmentMsWithJitter(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 1 << 20
	cfg.SegmentMs = 1000
	cfg.SegmentJitterMs = 1000
	clock := newFakeClock()
	var l *Log
	var jitter int64
	// A zero draw (one in a thousand) shows nothing; draw again.
	for attempt := 0; attempt < 10 && jitter == 0; attempt++ {
		if l != nil {
			l.Close()
		}
		l = openTestLog(t, t.TempDir(), cfg, clock)
		jitter = l.segments[0].rollJitterMs
	}
	defer l.Close()
	if jitter <= 0 || jitter >= cfg.SegmentMs {
		t.Fatalf("jitter %d outside (0, %d)", jitter, cfg.SegmentMs)
	}
	ts := clock.Now().UnixMilli()
	if _, err := l.AppendAsLeader(makeBatch(1, 10, ts, "a"), 0); err != nil {
		t.Fatal(err)
	}
	// Exactly segment.ms - jitter later: not yet.
	if _, err := l.AppendAsLeader(makeBatch(1, 10, ts+cfg.SegmentMs-jitter, "a"), 0); err != nil {
		t.Fatal(err)
	}
	if n := l.NumSegments(); n != 1 {
		t.Fatalf("rolled at segment.ms - jitter: %d segments", n)
	}
	// One millisecond more: the roll happens before segment.ms itself.
	info, err := l.AppendAsLeader(makeBatch(1, 10, ts+cfg.SegmentMs-jitter+1, "a"), 0)
	if err != nil {
		t.Fatal(err)
	}
	bases := l.SegmentBaseOffsets()
	if len(bases) != 2 || bases[1] != info.FirstOffset {
		t.Fatalf("no jittered time roll: segments %v, batch at %d", bases, info.FirstOffset)
	}
	// The new segment drew its own jitter in [0, min(jitter.ms, segment.ms)).
	if j := l.segments[1].rollJitterMs; j < 0 || j >= cfg.SegmentMs {
		t.Fatalf("new segment's jitter %d", j)
	}
	// An empty active segment never rolls on time.
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	n := l.NumSegments()
	if _, err := l.AppendAsLeader(makeBatch(1, 10, ts+100*cfg.SegmentMs, "late"), 0); err != nil {
		t.Fatal(err)
	}
	if l.NumSegments() != n {
		t.Fatal("an empty segment was rolled on time")
	}
}

// "... or relative-offset overflow": a follower copying a compacted leader
// can receive offsets more than 2^31 apart. An index entry holds a 4-byte
// offset relative to the segment base, so the batch whose last offset is
// more than MaxInt32 past the base goes into a new segment based at the
// batch's base offset. Data on both sides reads back byte for byte, also
// after recovery rebuilds the indexes.
func TestOffsetOverflowRollsOnFollowerGaps(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 1 << 20
	dir := filepath.Join(t.TempDir(), "t-0")
	clock := newFakeClock()
	l := openTestLog(t, dir, cfg, clock)
	ts := clock.Now().UnixMilli()
	var batches [][]byte
	appendAt := func(base int64, n int) {
		t.Helper()
		b := makeBatch(n, 50, ts, "gap")
		record.SetBaseOffset(b, base)
		if _, err := l.AppendAsFollower(b); err != nil {
			t.Fatalf("follower append at %d: %v", base, err)
		}
		batches = append(batches, b)
	}
	appendAt(0, 2)
	// Last offset exactly base + MaxInt32: still representable.
	appendAt(math.MaxInt32-2, 3)
	if n := l.NumSegments(); n != 1 {
		t.Fatalf("rolled at relative offset MaxInt32: %d segments", n)
	}
	// Last offset base + MaxInt32 + 1: a new segment.
	appendAt(math.MaxInt32+1, 1)
	// A batch straddling the limit of the second segment.
	second := int64(math.MaxInt32 + 1)
	appendAt(second+math.MaxInt32-1, 3)
	want := []int64{0, second, second + math.MaxInt32 - 1}
	check := func(when string) {
		t.Helper()
		got := l.SegmentBaseOffsets()
		if len(got) != len(want) {
			t.Fatalf("%s: segments %v, want %v", when, got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: segments %v, want %v", when, got, want)
			}
		}
		for _, b := range batches {
			h, err := parseBatchHeader(b)
			if err != nil {
				t.Fatal(err)
			}
			for _, off := range []int64{h.BaseOffset, h.LastOffset()} {
				fd, err := l.Read(off, 1<<20, l.LogEndOffset(), true)
				if err != nil {
					t.Fatalf("%s: read %d: %v", when, off, err)
				}
				data, err := fd.Records.ReadAll()
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.HasPrefix(data, b) {
					t.Fatalf("%s: read at %d does not start with batch %d", when, off, h.BaseOffset)
				}
			}
		}
		if leo := l.LogEndOffset(); leo != second+math.MaxInt32+2 {
			t.Fatalf("%s: LEO %d", when, leo)
		}
	}
	check("after appends")
	// Unclean reopen: recovery rebuilds indexes of every segment.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openTestLog(t, dir, cfg, clock)
	defer l.Close()
	check("after reopen")
}

// log.flush.interval.ms: the LogManager's flush scheduler fsyncs a log
// once flush.ms has passed on the (injected) clock since its last flush,
// which raises the recovery point to the log end; with the default
// (Long.MaxValue, leave it to the page cache) the schedule never flushes,
// only a roll (the rolled segment, by the flusher) and a clean shutdown do.
func TestFlushIntervalMsOnScheduleAndRecoveryPoint(t *testing.T) {
	d, clock, cfg := newManagerEnv(t)
	cfg.InitialTaskDelayMs = 0
	cfg.FlushSchedulerIntervalMs = 100
	cfg.FlushCheckpointIntervalMs = 100
	m := mustNewLogManager(t, cfg)
	defer m.Shutdown()
	timed := cfg.Defaults
	timed.FlushMs = 5000
	lt := mustGetOrCreateLog(t, m, common.TopicPartition{Topic: "timed", Partition: 0}, timed)
	lp := mustGetOrCreateLog(t, m, common.TopicPartition{Topic: "pagecache", Partition: 0}, cfg.Defaults)
	for i := 0; i < 3; i++ {
		for _, l := range []*Log{lt, lp} {
			if _, err := l.AppendAsLeader(makeBatch(2, 10, clock.Now().UnixMilli(), "f"), 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	m.Startup()
	// The recovery-point checkpoint task runs on the same schedule: once it
	// has listed both logs at 0, the flush task has had its turns too.
	cpPath := filepath.Join(d, recoveryPointCheckpointFile)
	pollUntil(t, 5*time.Second, "recovery-point checkpoint", func() bool {
		cp, err := ReadOffsetCheckpoint(cpPath)
		_, ok1 := cp[common.TopicPartition{Topic: "timed", Partition: 0}]
		_, ok2 := cp[common.TopicPartition{Topic: "pagecache", Partition: 0}]
		return err == nil && ok1 && ok2
	})
	hold := time.Now().Add(300 * time.Millisecond)
	for time.Now().Before(hold) {
		if lt.RecoveryPoint() != 0 || lp.RecoveryPoint() != 0 {
			t.Fatalf("flushed before flush.ms: recovery points %d, %d", lt.RecoveryPoint(), lp.RecoveryPoint())
		}
		time.Sleep(20 * time.Millisecond)
	}
	clock.Advance(5001 * time.Millisecond)
	pollUntil(t, 5*time.Second, "flush.ms flush by the schedule", func() bool { return lt.RecoveryPoint() == lt.LogEndOffset() })
	pollUntil(t, 5*time.Second, "recovery point checkpointed", func() bool {
		cp, err := ReadOffsetCheckpoint(cpPath)
		return err == nil && cp[common.TopicPartition{Topic: "timed", Partition: 0}] == 6
	})
	if lp.RecoveryPoint() != 0 {
		t.Fatalf("default flush.ms flushed: recovery point %d", lp.RecoveryPoint())
	}
	// A roll fsyncs the rolled segment (the log's flusher) and the
	// recovery point reaches the new segment's base.
	if err := lp.Roll(); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, 5*time.Second, "flush of the rolled segment", func() bool { return lp.RecoveryPoint() == 6 })
	if _, err := lp.AppendAsLeader(makeBatch(2, 10, clock.Now().UnixMilli(), "f"), 0); err != nil {
		t.Fatal(err)
	}
	// A clean shutdown flushes everything and checkpoints the log ends.
	if err := m.Shutdown(); err != nil {
		t.Fatal(err)
	}
	cp, err := ReadOffsetCheckpoint(cpPath)
	if err != nil || cp[common.TopicPartition{Topic: "timed", Partition: 0}] != 6 || cp[common.TopicPartition{Topic: "pagecache", Partition: 0}] != 8 {
		t.Fatalf("recovery points after clean shutdown: %v %v", cp, err)
	}
}
