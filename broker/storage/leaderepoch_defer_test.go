package storage

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage/record"
)

// epochFile reads a log's leader-epoch-checkpoint as entries.
func epochFile(t *testing.T, dir string) []EpochEntry {
	t.Helper()
	c, err := loadLeaderEpochCache(filepath.Join(dir, leaderEpochCheckpointFile), func() int64 { return 0 })
	if err != nil {
		t.Fatal(err)
	}
	return c.Entries()
}

// A new epoch is written by the flusher, not by the call that assigns it;
// whatever moves the recovery point (Flush, Close) writes the file first,
// so an entry below the recovery point is always on disk.
func TestLeaderEpochFileWrittenBeforeRecoveryPointPassesIt(t *testing.T) {
	l, _ := openTempLog(t, testConfig())
	for i := range 3 {
		if _, err := l.AppendAsLeader(makeBatch(2, 10, 1000, "a"), int32(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.AssignEpoch(7, l.LogEndOffset()); err != nil {
		t.Fatal(err)
	}
	want := []EpochEntry{{0, 0}, {1, 2}, {2, 4}, {7, 6}}
	if got := l.LeaderEpochs().Entries(); !slices.Equal(got, want) {
		t.Fatalf("cache %v, want %v", got, want)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := epochFile(t, l.Dir()); !slices.Equal(got, want) {
		t.Fatalf("file after Flush (recovery point %d): %v, want %v", l.RecoveryPoint(), got, want)
	}
	if l.LeaderEpochs().Unwritten() {
		t.Fatal("cache still unwritten after Flush")
	}
	// The flusher writes a new epoch without any flush.
	if err := l.AssignEpoch(8, l.LogEndOffset()); err != nil {
		t.Fatal(err)
	}
	want = append(want, EpochEntry{8, 6})
	want = slices.Delete(want, 3, 4) // 7 started where 8 starts
	pollUntil(t, 10e9, "the flusher to write epoch 8", func() bool {
		return slices.Equal(epochFile(t, l.Dir()), want)
	})
	if err := l.AssignEpoch(9, l.LogEndOffset()); err != nil {
		t.Fatal(err)
	}
	dir := l.Dir()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := epochFile(t, dir); !slices.Equal(got, []EpochEntry{{0, 0}, {1, 2}, {2, 4}, {9, 6}}) {
		t.Fatalf("file after Close: %v", got)
	}
}

// After a crash the file may lack the newest entries (the flusher had not
// written them) and may still hold entries an earlier load dropped in
// memory only (past the log end). Invariant: after recovery the cache
// says, for every batch, the epoch the batch carries. Here an unclean
// election made the follower append batches of an older epoch (5) where
// its stale file has a newer one (7); recovery adds an epoch only above
// the latest, so without dropping the loaded entries from the recovery
// start, epoch 7 would shadow the batches' epoch 5.
func TestStaleEpochFileAfterCrashRecoveredFromBatches(t *testing.T) {
	dir := t.TempDir()
	tp := common.TopicPartition{Topic: "t", Partition: 0}
	cfg := testConfig()
	clock := newFakeClock()
	l := openTestLog(t, dir, cfg, clock)
	for range 5 {
		if _, err := l.AppendAsLeader(makeBatch(2, 10, 1000, "a"), 0); err != nil {
			t.Fatal(err)
		}
	}
	// Leader in epoch 7 at the log end, nothing written in it; flushed.
	if err := l.AssignEpoch(7, 10); err != nil {
		t.Fatal(err)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	rp := l.RecoveryPoint()
	if err := l.closeNoFlush(); err != nil { // crash
		t.Fatal(err)
	}
	stale, err := os.ReadFile(filepath.Join(dir, leaderEpochCheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	// Restart: epoch 7 has no batch and is past the log end, dropped in
	// memory; the file keeps it.
	l, err = loadLog(loadParams{dir: dir, tp: tp, cfg: cfg, recoveryPoint: rp, clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.LeaderEpochs().Entries(); !slices.Equal(got, []EpochEntry{{0, 0}}) {
		t.Fatalf("cache after the first restart: %v", got)
	}
	// Follower of a leader that holds epoch-5 batches from offset 10.
	for off := int64(10); off < 16; off += 2 {
		b := makeBatch(2, 10, 1000, "b")
		record.SetBaseOffset(b, off)
		record.SetPartitionLeaderEpoch(b, 5)
		if _, err := l.AppendAsFollower(b); err != nil {
			t.Fatal(err)
		}
	}
	if got := l.LeaderEpochs().Entries(); !slices.Equal(got, []EpochEntry{{0, 0}, {5, 10}}) {
		t.Fatalf("cache after the follower's appends: %v", got)
	}
	if l.RecoveryPoint() > 10 {
		t.Fatalf("recovery point %d passed the unflushed appends", l.RecoveryPoint())
	}
	rp = l.RecoveryPoint()
	if err := l.closeNoFlush(); err != nil { // crash before the flusher wrote epoch 5
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, leaderEpochCheckpointFile), stale, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err = loadLog(loadParams{dir: dir, tp: tp, cfg: cfg, recoveryPoint: rp, clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, b := range readAllBatches(t, l, 0) {
		h, err := parseBatchHeader(b)
		if err != nil {
			t.Fatal(err)
		}
		if got := l.LeaderEpochs().EpochForOffset(h.BaseOffset); got != h.PartitionLeaderEpoch {
			t.Errorf("offset %d: cache says epoch %d, the batch carries %d (cache %v)", h.BaseOffset, got, h.PartitionLeaderEpoch, l.LeaderEpochs().Entries())
		}
	}
	if got := l.LeaderEpochs().Entries(); !slices.Equal(got, []EpochEntry{{0, 0}, {5, 10}}) {
		t.Fatalf("cache after the second restart: %v, want [{0 0} {5 10}]", got)
	}
}

// A manager's logs leave their new epochs to its writer: each file gets
// its epoch without a flush; a log deleted while its file is queued or
// being written does not turn the write into a directory failure (the
// directory was renamed away); Shutdown leaves every remaining file
// complete.
func TestManagerEpochWriter(t *testing.T) {
	dir := t.TempDir()
	cfg := DefaultManagerConfig(dir)
	cfg.CleanerEnable = false
	m := mustNewLogManager(t, cfg)
	const n = 64
	logs := make([]*Log, n)
	for p := range logs {
		logs[p] = mustGetOrCreateLog(t, m, common.TopicPartition{Topic: "w", Partition: int32(p)}, testConfig())
		if _, err := logs[p].AppendAsLeader(makeBatch(2, 10, 1000, "a"), 0); err != nil {
			t.Fatal(err)
		}
	}
	for round := int32(1); round <= 3; round++ {
		for p, l := range logs {
			if l == nil {
				continue
			}
			if err := l.AssignEpoch(round, l.LogEndOffset()); err != nil {
				t.Fatal(err)
			}
			if round == 2 && p%2 == 1 {
				// Deleted right behind its queued write.
				if err := m.DeleteLog(l.tp); err != nil {
					t.Fatal(err)
				}
				logs[p] = nil
			}
		}
	}
	pollUntil(t, 30e9, "the writer to write every remaining log's file", func() bool {
		for _, l := range logs {
			if l != nil && l.LeaderEpochs().Unwritten() {
				return false
			}
		}
		return true
	})
	select {
	case d := <-m.Failures():
		t.Fatalf("directory %s failed", d)
	default:
	}
	if off := m.OfflineDirs(); len(off) != 0 {
		t.Fatalf("offline dirs %v", off)
	}
	want := []EpochEntry{{0, 0}, {3, 2}}
	for p, l := range logs {
		if l == nil {
			continue
		}
		if got := epochFile(t, l.Dir()); !slices.Equal(got, want) {
			t.Fatalf("partition %d: file %v, want %v", p, got, want)
		}
	}
	for _, l := range logs {
		if l != nil {
			if err := l.AssignEpoch(4, l.LogEndOffset()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := m.Shutdown(); err != nil {
		t.Fatal(err)
	}
	for p, l := range logs {
		if l == nil {
			continue
		}
		if got := epochFile(t, l.Dir()); !slices.Equal(got, []EpochEntry{{0, 0}, {4, 2}}) {
			t.Fatalf("partition %d after Shutdown: file %v", p, got)
		}
	}
}
