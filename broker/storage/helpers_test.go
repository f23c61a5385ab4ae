package storage

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage/record"
)

// fakeClock is an injectable clock tests advance by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.UnixMilli(1700000000000)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// pollUntil polls cond every 10ms until it holds or the wall-clock
// deadline passes.
func pollUntil(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// makeBatch builds a producer-style batch (base offset 0) of n records
// whose values are valueSize bytes tagged with tag, timestamps ts, ts+1, ...
func makeBatch(n, valueSize int, ts int64, tag string) []byte {
	opts := record.DefaultBuildOptions()
	opts.BaseTimestamp = ts
	recs := make([]record.Record, n)
	for i := range recs {
		v := make([]byte, valueSize)
		copy(v, fmt.Sprintf("%s-%d", tag, i))
		recs[i] = record.Record{OffsetDelta: int32(i), TimestampDelta: int64(i), Key: []byte(fmt.Sprintf("k%d", i)), Value: v}
	}
	return record.Build(opts, recs)
}

// appendUntilSegments appends fresh batches from batch as leader (epoch 0)
// until l has n segments (an append assigns offsets in place, so a batch is
// never appended twice).
func appendUntilSegments(t testing.TB, l *Log, n int, batch func() []byte) {
	t.Helper()
	for l.NumSegments() < n {
		if _, err := l.AppendAsLeader(batch(), 0); err != nil {
			t.Fatal(err)
		}
	}
}

// testConfig is a small-segment config for tests.
func testConfig() LogConfig {
	c := DefaultLogConfig()
	c.SegmentBytes = 4096
	c.SegmentIndexBytes = 1024
	c.IndexIntervalBytes = 256
	c.FileDeleteDelayMs = 0
	return c
}

// openTempLog opens a log with cfg in a fresh directory on a new fake
// clock; the log is closed when the test ends.
func openTempLog(t testing.TB, cfg LogConfig) (*Log, *fakeClock) {
	t.Helper()
	clock := newFakeClock()
	l := openTestLog(t, t.TempDir(), cfg, clock)
	t.Cleanup(func() { l.Close() })
	return l, clock
}

func openTestLog(t testing.TB, dir string, cfg LogConfig, clock *fakeClock) *Log {
	t.Helper()
	l, err := OpenLog(dir, common.TopicPartition{Topic: "t", Partition: 0}, cfg, clock.Now)
	if err != nil {
		t.Fatalf("OpenLog: %v", err)
	}
	return l
}

// readAllBatches reads every batch from offset from to the log end.
func readAllBatches(t testing.TB, l *Log, from int64) [][]byte {
	t.Helper()
	var out [][]byte
	off := from
	for off < l.LogEndOffset() {
		fd, err := l.Read(off, 1<<20, l.LogEndOffset(), true)
		if err != nil {
			t.Fatalf("Read(%d): %v", off, err)
		}
		b, err := fd.Records.ReadAll()
		if err != nil {
			t.Fatalf("ReadAll: %v", err)
		}
		if len(b) == 0 {
			break
		}
		for len(b) > 0 {
			batch, h, err := nextBatch(b)
			if err != nil {
				break
			}
			if h.LastOffset() >= off {
				out = append(out, append([]byte(nil), batch...))
				off = h.NextOffset()
			}
			b = b[len(batch):]
		}
	}
	return out
}

// mustNewLogManager loads a LogManager on cfg or fails the test. The
// caller shuts it down (or, in crash tests, abandons it).
func mustNewLogManager(t testing.TB, cfg ManagerConfig) *LogManager {
	t.Helper()
	m, err := NewLogManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// mustGetOrCreateLog returns the log of tp with cfg or fails the test.
func mustGetOrCreateLog(t testing.TB, m *LogManager, tp common.TopicPartition, cfg LogConfig) *Log {
	t.Helper()
	l, err := m.GetOrCreateLog(tp, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
