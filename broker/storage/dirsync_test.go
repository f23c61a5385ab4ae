package storage

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// Every caller's sync returns only after an fsync that started after the
// call; callers arriving during one fsync share the next.
func TestDirSyncerCoversEveryCallerWithFewerFsyncs(t *testing.T) {
	s := newDirSyncer(t.TempDir())
	var started atomic.Int64 // fsyncs begun
	release := make(chan struct{})
	first := true
	s.fsync = func(dir string) error {
		started.Add(1)
		if first {
			first = false // only the first fsync runs alone; the others wait for it
			<-release
		}
		return syncDir(dir)
	}
	const callers = 50
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the first caller, holding the first fsync; joined below
		defer wg.Done()
		if err := s.sync(); err != nil {
			t.Error(err)
		}
	}()
	for started.Load() == 0 {
		runtime.Gosched() // until the first fsync is under way
	}
	before := make([]int64, callers)
	for i := 0; i < callers; i++ {
		wg.Add(1)
		go func() { // joined below
			defer wg.Done()
			before[i] = started.Load()
			if err := s.sync(); err != nil {
				t.Error(err)
			}
			if after := started.Load(); after <= before[i] {
				t.Errorf("caller %d returned with no fsync started after its call (%d, %d)", i, before[i], after)
			}
		}()
	}
	close(release)
	wg.Wait()
	if n := started.Load(); n < 2 || n > callers+1 {
		t.Fatalf("%d fsyncs for %d callers", n, callers+1)
	}
	t.Logf("%d fsyncs for %d callers", started.Load(), callers+1)
}

// A failed fsync is reported to its callers and to every later one.
func TestDirSyncerKeepsTheFailure(t *testing.T) {
	s := newDirSyncer(t.TempDir())
	boom := errors.New("boom")
	s.fsync = func(string) error { return boom }
	if err := s.sync(); !errors.Is(err, boom) {
		t.Fatalf("sync: %v", err)
	}
	s.fsync = syncDir
	if err := s.sync(); !errors.Is(err, boom) {
		t.Fatalf("sync after a failure: %v", err)
	}
}
