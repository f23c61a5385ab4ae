package storage

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klassik/klassik/broker/common"
)

// copyTo appends to fut every batch of cur from fut's log end up to upTo.
func copyTo(t *testing.T, cur, fut *Log, upTo int64) {
	t.Helper()
	for _, b := range readAllBatches(t, cur, fut.LogEndOffset()) {
		if fut.LogEndOffset() >= upTo {
			return
		}
		if _, err := fut.AppendAsFollower(b); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFutureLogMoveAndRestart: "AlterReplicaLogDirs creates the future log
// in the target directory as <topic>-<partition>.<uuid>-future; a -future
// directory found at start-up is loaded as the future log again; once
// both end at the same offset the future log becomes the current one and
// the old directory is renamed -delete." Also the preferred directory of a
// log not created yet, DescribeLogDirs' sizes, lags and is_future, the
// truncation floor and the errors for unknown and current directories.
func TestFutureLogMoveAndRestart(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	clock := newFakeClock()
	cfg := testManagerConfig(clock, d1, d2)
	m := mustNewLogManager(t, cfg)
	tp := common.TopicPartition{Topic: "moving", Partition: 3}
	// d1 holds fewer logs (none), but the preferred d2 wins.
	if err := m.MaybeUpdatePreferredLogDir(tp, d2); err != nil {
		t.Fatal(err)
	}
	cur := mustGetOrCreateLog(t, m, tp, cfg.Defaults)
	if filepath.Dir(cur.Dir()) != d2 {
		t.Fatalf("created in %s, want the preferred %s", cur.Dir(), d2)
	}
	for i := 0; i < 20; i++ {
		if _, err := cur.AppendAsLeader(makeBatch(3, 200, clock.Now().UnixMilli(), "r"), 1); err != nil {
			t.Fatal(err)
		}
	}
	cur.SetHighWatermark(cur.LogEndOffset())
	if err := m.CheckLogDir("/no/such"); !errors.Is(err, kerr.LogDirNotFound) {
		t.Fatalf("unknown dir: %v", err)
	}
	if _, _, err := m.GetOrCreateFutureLog(tp, d2, cfg.Defaults); err == nil {
		t.Fatal("a future log in the current directory was created")
	}
	fut, created, err := m.GetOrCreateFutureLog(tp, d1, cfg.Defaults)
	if err != nil || !created {
		t.Fatalf("future log: %v created=%v", err, created)
	}
	if ok, _ := regexp.MatchString(`^moving-3\.[0-9a-f]{32}-future$`, filepath.Base(fut.Dir())); !ok || filepath.Dir(fut.Dir()) != d1 {
		t.Fatalf("future log directory %s", fut.Dir())
	}
	copyTo(t, cur, fut, 30)
	half := fut.LogEndOffset()
	descs := m.DescribeLogDirs(nil)
	if len(descs) != 2 || descs[0].Path != d1 || descs[1].Path != d2 {
		t.Fatalf("described dirs %+v", descs)
	}
	if p := descs[0].Partitions; len(p) != 1 || !p[0].IsFuture || p[0].OffsetLag != cur.LogEndOffset()-half || p[0].Size != fut.Size() {
		t.Fatalf("future entry %+v (leo %d, copied %d)", p, cur.LogEndOffset(), half)
	}
	if p := descs[1].Partitions; len(p) != 1 || p[0].IsFuture || p[0].OffsetLag != 0 || p[0].Size != cur.Size() {
		t.Fatalf("current entry %+v", p)
	}
	if got := m.DescribeLogDirs(func(common.TopicPartition) bool { return false }); len(got[0].Partitions)+len(got[1].Partitions) != 0 {
		t.Fatalf("filter ignored: %+v", got)
	}

	// A truncation of the current log is remembered for the copy.
	if _, ok := cur.TakeTruncationFloor(); ok {
		t.Fatal("a truncation floor before any truncation")
	}
	if err := cur.TruncateTo(cur.LogEndOffset() - 3); err != nil {
		t.Fatal(err)
	}
	if off, ok := cur.TakeTruncationFloor(); !ok || off != cur.LogEndOffset() {
		t.Fatalf("truncation floor %d %v, want %d", off, ok, cur.LogEndOffset())
	}
	if _, ok := cur.TakeTruncationFloor(); ok {
		t.Fatal("the floor was not forgotten")
	}

	// Restart in the middle: the -future directory is the future log again.
	if err := m.Shutdown(); err != nil {
		t.Fatal(err)
	}
	m = mustNewLogManager(t, cfg)
	defer m.Shutdown()
	cur, _ = m.GetLog(tp)
	fut, ok := m.GetFutureLog(tp)
	if cur == nil || !ok || fut.LogEndOffset() != half || filepath.Dir(fut.Dir()) != d1 {
		t.Fatalf("after restart: current %v future %v", cur, fut)
	}
	if c, f := m.LogDirs(tp); c != d2 || f != d1 {
		t.Fatalf("LogDirs after restart: %q %q", c, f)
	}
	if _, err := m.ReplaceCurrentWithFutureLog(tp); err == nil {
		t.Fatal("swapped a future log that is behind")
	}
	copyTo(t, cur, fut, cur.LogEndOffset())
	want := readAllBatches(t, cur, 0)
	hw := cur.HighWatermark()
	l, err := m.ReplaceCurrentWithFutureLog(tp)
	if err != nil {
		t.Fatal(err)
	}
	if l.Dir() != filepath.Join(d1, "moving-3") || l.HighWatermark() != hw {
		t.Fatalf("new current log %s hw %d (want %d)", l.Dir(), l.HighWatermark(), hw)
	}
	if got := readAllBatches(t, l, 0); !bytes.Equal(bytes.Join(got, nil), bytes.Join(want, nil)) {
		t.Fatalf("moved log differs: %d batches, want %d", len(got), len(want))
	}
	if c, f := m.LogDirs(tp); c != d1 || f != "" {
		t.Fatalf("LogDirs after the swap: %q %q", c, f)
	}
	es, _ := os.ReadDir(d2)
	for _, e := range es {
		if e.IsDir() && !regexp.MustCompile(`^moving-3\.[0-9a-f]{32}-delete$`).MatchString(e.Name()) {
			t.Fatalf("left in the old directory: %s", e.Name())
		}
	}
	if g, _ := m.GetLog(tp); g != l {
		t.Fatal("GetLog does not return the new log")
	}
}
