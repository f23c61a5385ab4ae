package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"
)

// createBenchLogs is how many logs BenchmarkCreateLogs creates per
// iteration: one broker's share of a 10,000-partition topic with RF=3.
const createBenchLogs = 10000

// createBenchWorkers is how many goroutines create them, as a
// LeaderAndIsr switches its partitions (replica.lairWorkers).
const createBenchWorkers = 16

// BenchmarkCreateLogs creates 10,000 logs the way a LeaderAndIsr of a new
// topic does on one broker (GetOrCreateLog, the topic id, and a leader
// epoch for every third, on 16 goroutines) and, in the same run, the
// baseline: the same directories with the same number of empty files
// made by os.WriteFile, no fsync. It reports milliseconds per 10,000 of
// each and their ratio:
//
//	go test -run '^$' -bench CreateLogs -benchtime 3x ./broker/storage
func BenchmarkCreateLogs(b *testing.B) {
	var logsMs, baseMs []float64
	var phases createPhases
	for i := 0; i < b.N; i++ {
		baseMs = append(baseMs, createEmptyFilesMs(b, createBenchLogs))
		logsMs = append(logsMs, createLogsMs(b, createBenchLogs, &phases))
	}
	lm, bm := medianOf(logsMs), medianOf(baseMs)
	b.ReportMetric(lm, "logs-ms/10k")
	b.ReportMetric(bm, "baseline-ms/10k")
	b.ReportMetric(lm/bm, "x-baseline")
	// Each phase's share of the goroutines' time.
	total := float64(phases.create.Load() + phases.topicID.Load() + phases.epoch.Load())
	b.ReportMetric(float64(phases.create.Load())/total, "share-create")
	b.ReportMetric(float64(phases.topicID.Load())/total, "share-topicid")
	b.ReportMetric(float64(phases.epoch.Load())/total, "share-epoch")
	b.ReportMetric(0, "ns/op")
}

// createPhases sums, over every log created, the nanoseconds spent in
// each step.
type createPhases struct {
	create, topicID, epoch atomic.Int64
}

// createLogsMs creates n logs in a new manager and returns the time taken
// in milliseconds; the manager's shutdown is not counted.
func createLogsMs(b *testing.B, n int, phases *createPhases) float64 {
	b.Helper()
	cfg := DefaultManagerConfig(b.TempDir())
	cfg.CleanerEnable = false
	m, err := NewLogManager(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Shutdown()
	id := [16]byte{1, 2, 3}
	start := time.Now()
	forEachN(n, func(p int) error {
		t0 := time.Now()
		l, err := m.GetOrCreateLog(common.TopicPartition{Topic: "scale", Partition: int32(p)}, cfg.Defaults)
		if err != nil {
			return err
		}
		t1 := time.Now()
		phases.create.Add(int64(t1.Sub(t0)))
		if err := l.SetTopicID(id); err != nil {
			return err
		}
		t2 := time.Now()
		phases.topicID.Add(int64(t2.Sub(t1)))
		if p%3 == 0 {
			if err := l.AssignEpoch(0, 0); err != nil {
				return err
			}
			phases.epoch.Add(int64(time.Since(t2)))
		}
		return nil
	}, b)
	return float64(time.Since(start).Microseconds()) / 1000
}

// createEmptyFilesMs makes n directories with as many empty files as a
// new log has (.log, .index, .timeindex, partition.metadata, and a
// leader-epoch-checkpoint in every third) and returns the milliseconds.
func createEmptyFilesMs(b *testing.B, n int) float64 {
	b.Helper()
	dir := b.TempDir()
	names := []string{"00000000000000000000.log", "00000000000000000000.index", "00000000000000000000.timeindex", partitionMetadataFile}
	start := time.Now()
	forEachN(n, func(p int) error {
		d := filepath.Join(dir, fmt.Sprintf("scale-%d", p))
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
		for _, name := range names {
			if err := os.WriteFile(filepath.Join(d, name), nil, 0o644); err != nil {
				return err
			}
		}
		if p%3 == 0 {
			return os.WriteFile(filepath.Join(d, leaderEpochCheckpointFile), nil, 0o644)
		}
		return nil
	}, b)
	return float64(time.Since(start).Microseconds()) / 1000
}

// forEachN calls f(i) for i in [0, n) on createBenchWorkers goroutines
// and fails b with the first error.
func forEachN(n int, f func(i int) error, b *testing.B) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for w := 0; w < createBenchWorkers; w++ {
		wg.Add(1)
		go func() { // joined below
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		b.Fatal(first)
	}
}
