package scaletest

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// filesBaselineWorkers is how many goroutines make one broker's share of
// the baseline's files.
const filesBaselineWorkers = 16

// filesBaseline is the file system's part of creating the scale topic,
// measured in the same run as the brokers' creation: for every replica,
// what Kafka's layout puts on disk for a new partition (its directory, an
// empty .log, .index and .timeindex and a partition.metadata), made by
// plain Go code next to each broker's log directory (the same file
// system), one group of goroutines per broker and all at once, with no
// fsync. No broker does less; on a machine whose disk throttles metadata
// writes this, not the brokers, bounds creation. The files are left for
// the test's temporary directory to remove (not timed).
func (s *scenario) filesBaseline() time.Duration {
	s.t.Helper()
	meta := []byte("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ")
	var first atomic.Pointer[error]
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < s.c.N(); i++ {
		root := filepath.Join(filepath.Dir(s.c.Node(i).LogDir), "files-baseline")
		if err := os.Mkdir(root, 0o755); err != nil {
			s.t.Fatal(err)
		}
		// Each broker holds every partition at RF=3 with 3 brokers.
		var next atomic.Int64
		for w := 0; w < filesBaselineWorkers; w++ {
			wg.Add(1)
			go func() { // joined below
				defer wg.Done()
				for {
					p := int(next.Add(1) - 1)
					if p >= s.cfg.partitions || first.Load() != nil {
						return
					}
					if err := makeReplicaFiles(filepath.Join(root, fmt.Sprintf("%s-%d", topic, p)), meta); err != nil {
						first.CompareAndSwap(nil, &err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	d := time.Since(start)
	if err := first.Load(); err != nil {
		s.t.Fatalf("files baseline: %v", *err)
	}
	s.t.Logf("files baseline: %d directories with 4 files each (%d next to each broker's log directory, all at once) in %v",
		s.c.N()*s.cfg.partitions, s.cfg.partitions, d.Round(time.Millisecond))
	return d
}

func makeReplicaFiles(dir string, meta []byte) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	for _, name := range []string{"00000000000000000000.log", "00000000000000000000.index", "00000000000000000000.timeindex"} {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "partition.metadata"), meta, 0o644)
}
