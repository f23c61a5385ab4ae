package storage

import (
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"
)

// Logs are created without the manager's lock, so many at once: every
// caller of one partition gets the same log, different partitions are
// spread evenly over the directories (creations in progress counted),
// and every partition's directory is there.
func TestManagerConcurrentGetOrCreateLog(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	cfg := testManagerConfig(newFakeClock(), d1, d2)
	m := mustNewLogManager(t, cfg)
	defer m.Shutdown()
	const partitions, callers = 64, 3
	got := make([][callers]*Log, partitions)
	var wg sync.WaitGroup
	for p := 0; p < partitions; p++ {
		for c := 0; c < callers; c++ {
			wg.Add(1)
			go func() { // joined below
				defer wg.Done()
				l, err := m.GetOrCreateLog(common.TopicPartition{Topic: "t", Partition: int32(p)}, cfg.Defaults)
				if err != nil {
					t.Error(err)
					return
				}
				got[p][c] = l
			}()
		}
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for p := range got {
		for c := 1; c < callers; c++ {
			if got[p][c] != got[p][0] {
				t.Fatalf("partition %d: callers got different logs", p)
			}
		}
	}
	if n := len(m.AllLogs()); n != partitions {
		t.Fatalf("%d logs, want %d", n, partitions)
	}
	count := func(d string) int {
		es, _ := os.ReadDir(d)
		n := 0
		for _, e := range es {
			if e.IsDir() {
				n++
			}
		}
		return n
	}
	// Each choice is made under the manager's lock and counts the
	// creations in progress, so whatever the interleaving the split is
	// exact.
	if a, b := count(d1), count(d2); a != partitions/2 || b != partitions/2 {
		t.Fatalf("placement %d/%d of %d", a, b, partitions)
	}
	for p := 0; p < partitions; p++ {
		tp := common.TopicPartition{Topic: "t", Partition: int32(p)}
		l, _ := m.GetLog(tp)
		if _, err := os.Stat(l.Dir()); err != nil {
			t.Fatalf("%s: %v", tp, err)
		}
		if d, ok := m.LogDirOf(tp); !ok || d != filepath.Dir(l.Dir()) {
			t.Fatalf("%s: LogDirOf %q (%v), its directory is in %s", tp, d, ok, filepath.Dir(l.Dir()))
		}
	}
}

// A shutdown while logs are being created waits for those creations;
// each either returned its log (closed by the shutdown) or an error, and
// no log is added after the shutdown.
func TestManagerShutdownDuringGetOrCreateLog(t *testing.T) {
	_, _, cfg := newManagerEnv(t)
	m := mustNewLogManager(t, cfg)
	var wg sync.WaitGroup
	for p := 0; p < 32; p++ {
		wg.Add(1)
		go func() { // joined below
			defer wg.Done()
			_, _ = m.GetOrCreateLog(common.TopicPartition{Topic: "t", Partition: int32(p)}, cfg.Defaults)
		}()
	}
	if err := m.Shutdown(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if _, err := m.GetOrCreateLog(common.TopicPartition{Topic: "t", Partition: 99}, cfg.Defaults); err == nil {
		t.Fatal("created a log after the shutdown")
	}
	m.mu.Lock()
	n := len(m.creating)
	m.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d creations still recorded after the shutdown", n)
	}
}

// A new partition directory is created empty and loaded without looking
// for files; one that is already there (left over) is loaded as found, its
// records kept.
func TestGetOrCreateLogLoadsLeftOverDirectory(t *testing.T) {
	d, clock, cfg := newManagerEnv(t)
	m := mustNewLogManager(t, cfg)
	defer m.Shutdown()
	left := common.TopicPartition{Topic: "t", Partition: 1}
	ol, err := OpenLog(filepath.Join(d, left.String()), left, cfg.Defaults, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ol.AppendAsLeader(makeBatch(3, 10, 1, "left"), 0); err != nil {
		t.Fatal(err)
	}
	if err := ol.Close(); err != nil {
		t.Fatal(err)
	}
	l := mustGetOrCreateLog(t, m, left, cfg.Defaults)
	if leo := l.LogEndOffset(); leo != 3 {
		t.Fatalf("left-over log ends at %d, want 3", leo)
	}
	fresh := mustGetOrCreateLog(t, m, common.TopicPartition{Topic: "t", Partition: 2}, cfg.Defaults)
	if leo := fresh.LogEndOffset(); leo != 0 {
		t.Fatalf("new log ends at %d", leo)
	}
	if _, err := fresh.AppendAsLeader(makeBatch(2, 10, 1, "new"), 0); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	es, _ := os.ReadDir(fresh.Dir())
	for _, e := range es {
		names[e.Name()] = true
	}
	for _, want := range []string{"00000000000000000000.log", "00000000000000000000.index", "00000000000000000000.timeindex"} {
		if !names[want] {
			t.Fatalf("new log's directory lacks %s: %v", want, names)
		}
	}
}

// A new log's directory entry in its log directory is fsync'd by the
// log's first flush of data, not at creation: creating logs fsyncs the
// log directory never, the first Flush with data (or the flusher's
// post-roll flush) fsyncs it before the recovery point rises, and later
// flushes do not again. A failed fsync fails the flush and leaves the
// recovery point where it was.
func TestNewLogDirectoryEntrySyncedByFirstFlush(t *testing.T) {
	d, _, cfg := newManagerEnv(t)
	cfg.Defaults.SegmentBytes = 4096
	m := mustNewLogManager(t, cfg)
	defer m.Shutdown()
	var mu sync.Mutex
	var calls []string // which log's flush asked, by the time of the call
	var fail bool
	m.dirs[0].entries.fsync = func(dir string) error {
		if dir != d {
			t.Errorf("fsync of %s, want the log directory %s", dir, d)
		}
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, "fsync")
		if fail {
			return &os.PathError{Op: "fsync", Path: dir, Err: syscall.EIO}
		}
		return syncDir(dir)
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(calls)
	}
	var logs []*Log
	for p := int32(0); p < 3; p++ {
		logs = append(logs, mustGetOrCreateLog(t, m, common.TopicPartition{Topic: "t", Partition: p}, cfg.Defaults))
	}
	if n := count(); n != 0 {
		t.Fatalf("creating 3 logs fsync'd the log directory %d times, want 0", n)
	}
	// Nothing to make durable: no fsync.
	if err := logs[0].Flush(); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 0 {
		t.Fatalf("flushing an empty log fsync'd the log directory %d times", n)
	}
	if _, err := logs[0].AppendAsLeader(makeBatch(3, 10, 1, "a"), 0); err != nil {
		t.Fatal(err)
	}
	if err := logs[0].Flush(); err != nil {
		t.Fatal(err)
	}
	if n, rp := count(), logs[0].RecoveryPoint(); n != 1 || rp != 3 {
		t.Fatalf("first flush with data: %d fsyncs of the log directory, recovery point %d; want 1 and 3", n, rp)
	}
	if _, err := logs[0].AppendAsLeader(makeBatch(3, 10, 1, "b"), 0); err != nil {
		t.Fatal(err)
	}
	if err := logs[0].Flush(); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 1 {
		t.Fatalf("a second flush fsync'd the log directory again (%d fsyncs)", n)
	}

	// The flusher's post-roll flush: rolls raise the recovery point only
	// after the log directory's fsync.
	appendUntilSegments(t, logs[1], 3, func() []byte { return makeBatch(4, 300, 1, "r") })
	pollUntil(t, 10*time.Second, "the post-roll flush to raise the recovery point", func() bool {
		return logs[1].RecoveryPoint() > 0
	})
	if n := count(); n != 2 {
		t.Fatalf("after the post-roll flush of a new log: %d fsyncs of the log directory, want 2", n)
	}

	// A failing fsync fails the flush; the recovery point stays.
	mu.Lock()
	fail = true
	mu.Unlock()
	if _, err := logs[2].AppendAsLeader(makeBatch(3, 10, 1, "c"), 0); err != nil {
		t.Fatal(err)
	}
	if err := logs[2].Flush(); err == nil {
		t.Fatal("flush succeeded though the log directory's fsync failed")
	}
	if rp := logs[2].RecoveryPoint(); rp != 0 {
		t.Fatalf("recovery point %d after the failed fsync, want 0", rp)
	}
}
