package storage

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/klassik/klassik/broker/common"
)

// segmentDirty reports which files of s are marked for the next fsync.
func segmentDirty(s *Segment) (log, offsetIdx, timeIdx, txn bool) {
	return s.logDirty.Load(), s.offsetIdx.dirty.Load(), s.timeIdx.dirty.Load(), s.txnDirty.Load()
}

// A clean shutdown fsyncs only the files written since their last fsync,
// and what it guarantees still holds: after it, every log loads with no
// recovery and every appended record is there; files loaded after a clean
// shutdown count as durable until written; a file written after the
// restart is marked, fsync'd by the next clean shutdown and found again;
// and a new segment keeps empty indexes until an entry needs room.
func TestCleanShutdownSyncsOnlyWrittenFiles(t *testing.T) {
	d, _, cfg := newManagerEnv(t)
	idle := common.TopicPartition{Topic: "idle", Partition: 0}
	busy := common.TopicPartition{Topic: "busy", Partition: 0}
	m1 := mustNewLogManager(t, cfg)
	mustGetOrCreateLog(t, m1, idle, cfg.Defaults)
	b := mustGetOrCreateLog(t, m1, busy, cfg.Defaults)
	for i := 0; i < 20; i++ {
		if _, err := b.AppendAsLeader(makeBatch(3, 300, int64(1000+i), "b"), 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"00000000000000000000.index", "00000000000000000000.timeindex"} {
		if fi, err := os.Stat(filepath.Join(d, "idle-0", name)); err != nil || fi.Size() != 0 {
			t.Fatalf("idle log's %s: %v, size %d, want an empty file", name, err, fi.Size())
		}
	}
	if lg, _, _, _ := segmentDirty(b.segments[len(b.segments)-1]); !lg {
		t.Fatal("an appended segment is not marked for fsync")
	}
	wantLEO := b.LogEndOffset()
	if err := m1.Shutdown(); err != nil {
		t.Fatal(err)
	}

	m2 := mustNewLogManager(t, cfg)
	for _, tp := range []common.TopicPartition{idle, busy} {
		l, ok := m2.GetLog(tp)
		if !ok {
			t.Fatalf("%v not loaded", tp)
		}
		if l.recoveredAtLoad != 0 {
			t.Fatalf("%v: %d segments recovered after a clean shutdown, want none", tp, l.recoveredAtLoad)
		}
		for _, s := range l.segments {
			if lg, oi, ti, tx := segmentDirty(s); lg || oi || ti || tx {
				t.Fatalf("%v segment %d loaded after a clean shutdown is marked for fsync (log %v, index %v, time index %v, txn %v)",
					tp, s.baseOffset, lg, oi, ti, tx)
			}
		}
	}
	b, _ = m2.GetLog(busy)
	if b.LogEndOffset() != wantLEO || b.RecoveryPoint() != wantLEO || len(readAllBatches(t, b, 0)) != 20 {
		t.Fatalf("busy log after restart: LEO %d, recovery point %d, %d batches; want LEO and recovery point %d, 20 batches",
			b.LogEndOffset(), b.RecoveryPoint(), len(readAllBatches(t, b, 0)), wantLEO)
	}
	// An index lookup in the middle still finds its batch.
	if got := readAllBatches(t, b, 30); len(got) != 10 {
		t.Fatalf("%d batches from offset 30, want 10", len(got))
	}
	l, _ := m2.GetLog(idle)
	if _, err := l.AppendAsLeader(makeBatch(1, 10, 5000, "i"), 0); err != nil {
		t.Fatal(err)
	}
	act := l.segments[len(l.segments)-1]
	if lg, _, _, _ := segmentDirty(act); !lg {
		t.Fatal("a segment appended after a clean restart is not marked for fsync")
	}
	if err := m2.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if lg, _, _, _ := segmentDirty(act); lg {
		t.Fatal("the clean shutdown left a written segment unsynced")
	}

	m3 := mustNewLogManager(t, cfg)
	defer m3.Shutdown()
	l, _ = m3.GetLog(idle)
	if l.recoveredAtLoad != 0 || l.LogEndOffset() != 1 || len(readAllBatches(t, l, 0)) != 1 {
		t.Fatalf("idle log after its append and a clean shutdown: %d segments recovered, LEO %d; want none recovered, LEO 1",
			l.recoveredAtLoad, l.LogEndOffset())
	}
}
