package storage

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"
)

// newManagerEnv is a fresh log directory, a fake clock and the test
// manager configuration over both, for a test to adjust before
// mustNewLogManager.
func newManagerEnv(t testing.TB) (string, *fakeClock, ManagerConfig) {
	d := t.TempDir()
	clock := newFakeClock()
	return d, clock, testManagerConfig(clock, d)
}

func testManagerConfig(clock *fakeClock, dirs ...string) ManagerConfig {
	cfg := DefaultManagerConfig(dirs...)
	cfg.Defaults = testConfig()
	cfg.Clock = clock.Now
	cfg.CleanerEnable = false
	return cfg
}

func TestManagerPlacementCheckpointsAndCleanShutdown(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	clock := newFakeClock()
	cfg := testManagerConfig(clock, d1, d2)
	m := mustNewLogManager(t, cfg)
	// A second manager cannot take the same directories.
	if _, err := NewLogManager(cfg); !errors.Is(err, ErrLogDirLocked) {
		t.Fatalf("second manager: %v", err)
	}
	// "A new partition is placed in the live directory that currently
	// holds the fewest partitions."
	for p := int32(0); p < 4; p++ {
		l := mustGetOrCreateLog(t, m, common.TopicPartition{Topic: "orders", Partition: p}, cfg.Defaults)
		for i := 0; i < 10; i++ {
			if _, err := l.AppendAsLeader(makeBatch(2, 100, clock.Now().UnixMilli(), "x"), 3); err != nil {
				t.Fatal(err)
			}
		}
		l.SetHighWatermark(15)
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
	if count(d1) != 2 || count(d2) != 2 {
		t.Fatalf("placement %d/%d, want 2/2", count(d1), count(d2))
	}
	l0, _ := m.GetLog(common.TopicPartition{Topic: "orders", Partition: 0})
	l0.SetHighWatermark(20)
	if _, err := l0.DeleteRecordsBefore(5); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteMetaProperties(1, "8kz5Y0r4RZy2m0eW6rQ1Hw"); err != nil {
		t.Fatal(err)
	}
	if err := m.Shutdown(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{d1, d2} {
		for _, f := range []string{cleanShutdownFile, recoveryPointCheckpointFile, replicationOffsetCheckpoint, logStartOffsetCheckpointFile, metaPropertiesFile} {
			if _, err := os.Stat(filepath.Join(d, f)); err != nil {
				t.Fatalf("%s missing in %s after shutdown", f, d)
			}
		}
	}
	m2 := mustNewLogManager(t, cfg)
	defer m2.Shutdown()
	for _, d := range []string{d1, d2} {
		if _, err := os.Stat(filepath.Join(d, cleanShutdownFile)); !os.IsNotExist(err) {
			t.Fatalf(".kafka_cleanshutdown must be deleted at startup")
		}
	}
	if len(m2.AllLogs()) != 4 {
		t.Fatalf("reloaded %d logs", len(m2.AllLogs()))
	}
	l0, _ = m2.GetLog(common.TopicPartition{Topic: "orders", Partition: 0})
	if l0.LogStartOffset() != 5 || l0.HighWatermark() != 20 || l0.LogEndOffset() != 20 || l0.RecoveryPoint() != 20 {
		t.Fatalf("restored start %d hw %d leo %d rp %d", l0.LogStartOffset(), l0.HighWatermark(), l0.LogEndOffset(), l0.RecoveryPoint())
	}
	l1, _ := m2.GetLog(common.TopicPartition{Topic: "orders", Partition: 1})
	if l1.HighWatermark() != 15 {
		t.Fatalf("hw of orders-1 = %d", l1.HighWatermark())
	}
	mp, found, err := m2.ReadMetaProperties()
	if err != nil || !found || mp.BrokerID != 1 || m2.ClusterID() != "8kz5Y0r4RZy2m0eW6rQ1Hw" {
		t.Fatalf("meta.properties %+v %v %v", mp, found, err)
	}
}

func TestManagerInconsistentMetaProperties(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(d1, metaPropertiesFile), []byte("version=0\nbroker.id=1\ncluster.id=a\n"), 0o644)
	os.WriteFile(filepath.Join(d2, metaPropertiesFile), []byte("version=0\nbroker.id=2\ncluster.id=a\n"), 0o644)
	m := mustNewLogManager(t, testManagerConfig(newFakeClock(), d1, d2))
	defer m.Shutdown()
	if _, _, err := m.ReadMetaProperties(); err == nil || !strings.Contains(err.Error(), "inconsistent") {
		t.Fatalf("want inconsistent broker metadata, got %v", err)
	}
}

func TestManagerRejectsBadDirectoryNames(t *testing.T) {
	for _, name := range []string{"nodash", "topic-x", "-1", "t-x.abc-delete", "t-1-delete"} {
		d := t.TempDir()
		os.Mkdir(filepath.Join(d, name), 0o755)
		if m, err := NewLogManager(testManagerConfig(newFakeClock(), d)); err == nil {
			m.Shutdown()
			t.Errorf("directory %q accepted", name)
		}
	}
	tp, suf, err := ParseTopicPartitionName("my-topic-12")
	if err != nil || tp != (common.TopicPartition{Topic: "my-topic", Partition: 12}) || suf != "" {
		t.Fatalf("parse: %v %v %v", tp, suf, err)
	}
	tp, suf, err = ParseTopicPartitionName("orders-2.3f0c1d2e9a8b4c7d8e9f00112233aabb-delete")
	if err != nil || tp != (common.TopicPartition{Topic: "orders", Partition: 2}) || suf != "delete" {
		t.Fatalf("parse delete: %v %v %v", tp, suf, err)
	}
}

func TestManagerDeleteLog(t *testing.T) {
	d, clock, cfg := newManagerEnv(t)
	cfg.Defaults.FileDeleteDelayMs = 60000
	m := mustNewLogManager(t, cfg)
	defer m.Shutdown()
	tp := common.TopicPartition{Topic: "gone", Partition: 3}
	l := mustGetOrCreateLog(t, m, tp, cfg.Defaults)
	l.AppendAsLeader(makeBatch(1, 10, 0, "x"), 0)
	inflight, err := l.Read(0, 1000, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.DeleteLog(tp); err != nil {
		t.Fatal(err)
	}
	// A fetch that already holds the bytes' location still reads them.
	if b, err := inflight.Records.ReadAll(); err != nil || len(b) != inflight.Records.Len() || len(b) == 0 {
		t.Fatalf("in-flight read after DeleteLog: %d bytes, %v", len(b), err)
	}
	if _, err := l.AppendAsLeader(makeBatch(1, 10, 0, "x"), 0); !errors.Is(err, ErrLogClosed) {
		t.Fatalf("append to a deleted log: %v", err)
	}
	if _, ok := m.GetLog(tp); ok {
		t.Fatal("log still registered")
	}
	es, _ := os.ReadDir(d)
	var renamed string
	for _, e := range es {
		if strings.HasPrefix(e.Name(), "gone-3.") && strings.HasSuffix(e.Name(), "-delete") {
			renamed = e.Name()
		}
	}
	if renamed == "" || len(renamed) != len("gone-3.")+32+len("-delete") {
		t.Fatalf("no <topic>-<p>.<uuid>-delete directory: %v", es)
	}
	m.DeletePending()
	if _, err := os.Stat(filepath.Join(d, renamed)); err != nil {
		t.Fatal("removed before file.delete.delay.ms")
	}
	clock.Advance(61 * time.Second)
	if err := m.DeletePending(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(d, renamed)); !os.IsNotExist(err) {
		t.Fatal("not removed after file.delete.delay.ms")
	}
}

// agedLog creates partition 0 of topic in m with retention.ms = 1h, fills
// four segments with records two hours old, rolls, and appends three
// current batches after them. It returns the log and the end offset of the
// old records; the high watermark is left where it is.
func agedLog(t *testing.T, m *LogManager, clock *fakeClock, defaults LogConfig, topic string) (*Log, int64) {
	t.Helper()
	lc := defaults
	lc.RetentionMs = 3600000
	l := mustGetOrCreateLog(t, m, common.TopicPartition{Topic: topic, Partition: 0}, lc)
	old := clock.Now().Add(-2 * time.Hour).UnixMilli()
	appendUntilSegments(t, l, 4, func() []byte { return makeBatch(3, 200, old, "old") })
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	oldEnd := l.LogEndOffset()
	for i := 0; i < 3; i++ {
		if _, err := l.AppendAsLeader(makeBatch(3, 200, clock.Now().UnixMilli(), "new"), 0); err != nil {
			t.Fatal(err)
		}
	}
	return l, oldEnd
}

// Retention is driven by record timestamps and the injected clock.
func TestManagerRetention(t *testing.T) {
	_, clock, cfg := newManagerEnv(t)
	m := mustNewLogManager(t, cfg)
	defer m.Shutdown()
	l, oldEnd := agedLog(t, m, clock, cfg.Defaults, "r")
	// Nothing is deleted above the high watermark.
	if n := m.RunRetention(); n != 0 {
		t.Fatalf("deleted %d segments above the high watermark", n)
	}
	l.SetHighWatermark(l.LogEndOffset())
	if n := m.RunRetention(); n < 4 {
		t.Fatalf("time retention deleted %d segments", n)
	}
	if l.LogStartOffset() != oldEnd {
		t.Fatalf("log start %d, want %d", l.LogStartOffset(), oldEnd)
	}
	entries, _ := os.ReadDir(l.Dir())
	deleted := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".deleted") {
			deleted++
		}
	}
	if deleted == 0 {
		t.Fatal("segments were not renamed to .deleted")
	}
	clock.Advance(time.Duration(cfg.Defaults.FileDeleteDelayMs+1) * time.Millisecond)
	m.DeletePending()
	entries, _ = os.ReadDir(l.Dir())
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".deleted") {
			t.Fatalf("%s not removed", e.Name())
		}
	}
	// Size retention keeps at most retention.bytes (whole segments).
	lc := cfg.Defaults
	lc.RetentionMs = -1
	lc.RetentionBytes = 2000
	l.UpdateConfig(lc)
	for l.NumSegments() < 5 {
		l.AppendAsLeader(makeBatch(3, 200, clock.Now().UnixMilli(), "s"), 0)
	}
	l.SetHighWatermark(l.LogEndOffset())
	m.RunRetention()
	if l.Size() > 2000+lc.SegmentBytes {
		t.Fatalf("size %d after size retention", l.Size())
	}
	if _, err := l.Read(l.LogStartOffset(), 100, l.LogEndOffset(), true); err != nil {
		t.Fatalf("read at new log start: %v", err)
	}
}

func TestManagerSchedulerStartsAndStops(t *testing.T) {
	d, _, cfg := newManagerEnv(t)
	cfg.InitialTaskDelayMs = 0
	cfg.FlushCheckpointIntervalMs = 50
	m := mustNewLogManager(t, cfg)
	l, _ := m.GetOrCreateLog(common.TopicPartition{Topic: "s", Partition: 0}, cfg.Defaults)
	l.AppendAsLeader(makeBatch(1, 1, 0, "x"), 0)
	m.Startup()
	pollUntil(t, 5*time.Second, "the scheduler to write the recovery point checkpoint", func() bool {
		cp, err := ReadOffsetCheckpoint(filepath.Join(d, recoveryPointCheckpointFile))
		_, ok := cp[common.TopicPartition{Topic: "s", Partition: 0}]
		return err == nil && ok
	})
	if err := m.Shutdown(); err != nil {
		t.Fatal(err)
	}
}

// "After an unclean shutdown, recovery scans only segments past the
// recovery point": a byte flipped in a segment below the checkpointed
// recovery point is not noticed (that segment is trusted), while a torn
// tail in the last segment is cut.
func TestManagerRecoversOnlyPastRecoveryPoint(t *testing.T) {
	_, _, cfg := newManagerEnv(t)
	m := mustNewLogManager(t, cfg)
	tp := common.TopicPartition{Topic: "rp", Partition: 0}
	l := mustGetOrCreateLog(t, m, tp, cfg.Defaults)
	for l.NumSegments() < 4 {
		l.AppendAsLeader(deterministicBatch(l.LogEndOffset(), false), 1)
	}
	// Rolled segments are fsync'd asynchronously; the recovery point
	// reaches the active segment's base once that is done.
	bases := l.SegmentBaseOffsets()
	pollUntil(t, 10*time.Second, "the recovery point to reach the active segment's base", func() bool {
		return l.RecoveryPoint() == bases[len(bases)-1]
	})
	rp := l.RecoveryPoint()
	if err := m.CheckpointRecoveryPoints(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ { // unflushed tail
		l.AppendAsLeader(deterministicBatch(l.LogEndOffset(), false), 1)
	}
	leo := l.LogEndOffset()
	// Crash: no Shutdown, no clean-shutdown marker.
	l.closeNoFlush()
	m.unlockAll()

	first := filepath.Join(l.Dir(), filenamePrefixFromOffset(bases[0])+".log")
	data, _ := os.ReadFile(first)
	data[len(data)-3] ^= 0xff // inside the last batch's CRC range
	os.WriteFile(first, data, 0o644)
	last := filepath.Join(l.Dir(), filenamePrefixFromOffset(bases[len(bases)-1])+".log")
	fi, _ := os.Stat(last)
	os.Truncate(last, fi.Size()-5) // torn final batch

	m2 := mustNewLogManager(t, cfg)
	defer m2.Shutdown()
	l2, _ := m2.GetLog(tp)
	if l2.LogEndOffset() >= leo || l2.LogEndOffset() < rp {
		t.Fatalf("LEO %d after recovery: want the torn batch cut (old %d) but nothing below %d", l2.LogEndOffset(), leo, rp)
	}
	after, _ := os.ReadFile(first)
	if len(after) != len(data) || after[len(after)-3] != data[len(data)-3] {
		t.Fatal("a segment below the recovery point was re-scanned and changed")
	}
	if l2.NumSegments() != len(bases) {
		t.Fatalf("%d segments, want %d", l2.NumSegments(), len(bases))
	}
}
