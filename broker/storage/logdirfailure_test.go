package storage

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klassik/klassik/broker/common"
)

// twoDirManager opens a manager over log dirs a and b with four logs,
// two in each directory (placement picks the emptier one).
func twoDirManager(t *testing.T, a, b string) (*LogManager, map[string][]common.TopicPartition) {
	t.Helper()
	cfg := DefaultManagerConfig(a, b)
	cfg.CleanerEnable = false
	m := mustNewLogManager(t, cfg)
	byDir := map[string][]common.TopicPartition{}
	for p := int32(0); p < 4; p++ {
		tp := common.TopicPartition{Topic: "t", Partition: p}
		mustGetOrCreateLog(t, m, tp, testConfig())
		d, _ := m.LogDirOf(tp)
		byDir[d] = append(byDir[d], tp)
	}
	if len(byDir[a]) != 2 || len(byDir[b]) != 2 {
		t.Fatalf("placement: %v", byDir)
	}
	return m, byDir
}

// takeFailure waits for the failure channel to name a directory.
func takeFailure(t *testing.T, m *LogManager) string {
	t.Helper()
	select {
	case d := <-m.Failures():
		return d
	case <-time.After(10 * time.Second):
		t.Fatal("no log directory failure reported")
		return ""
	}
}

// Design (KIP-112): "a disk failure only makes the replicas on that disk
// offline; the broker keeps serving the replicas on its other disks." An
// I/O error in one directory reports that directory once, its logs refuse
// every later operation with KAFKA_STORAGE_ERROR, and after
// HandleLogDirFailure the other directory still takes appends, new logs
// and checkpoints; the failed one is never written again. A restart with
// the directory healthy brings its logs back with every record whose
// append had succeeded.
func TestFaultHookTakesOneLogDirOffline(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	m, byDir := twoDirManager(t, a, b)
	defer m.Shutdown()
	acked := map[common.TopicPartition]int64{} // next offset after the last successful append
	appendTo := func(tp common.TopicPartition) error {
		l, ok := m.GetLog(tp)
		if !ok {
			return errors.New("no log")
		}
		info, err := l.AppendAsLeader(makeBatch(3, 20, 1, tp.String()), 0)
		if err == nil {
			acked[tp] = info.LastOffset + 1
		}
		return err
	}
	for _, tps := range byDir {
		for _, tp := range tps {
			for i := 0; i < 5; i++ {
				if err := appendTo(tp); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if err := m.CheckpointHighWatermarks(); err != nil {
		t.Fatal(err)
	}
	hwA, err := os.ReadFile(filepath.Join(a, replicationOffsetCheckpoint))
	if err != nil {
		t.Fatal(err)
	}

	calls := 0
	restore := SetFaultHook(func(op FaultOp, path string) error {
		if op == FaultAppend && strings.HasPrefix(path, a+string(os.PathSeparator)) {
			calls++
			return syscall.EIO
		}
		return nil
	})
	defer restore()
	failing := byDir[a][0]
	err = appendTo(failing)
	if !IsIOError(err) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("append in the failing dir: %v, want an EIO I/O error", err)
	}
	if d := takeFailure(t, m); d != a {
		t.Fatalf("failed dir %q, want %q", d, a)
	}
	// Every later operation of that log answers KAFKA_STORAGE_ERROR
	// without reaching the disk.
	if err := appendTo(failing); !errors.Is(err, kerr.KafkaStorageError) {
		t.Fatalf("append after the failure: %v, want KAFKA_STORAGE_ERROR", err)
	}
	l, _ := m.GetLog(failing)
	if _, err := l.Read(0, 1<<20, 100, true); !errors.Is(err, kerr.KafkaStorageError) {
		t.Fatalf("read after the failure: %v, want KAFKA_STORAGE_ERROR", err)
	}
	if calls != 1 {
		t.Fatalf("the failed log reached the disk %d times after its failure", calls-1)
	}
	// A second error in the same directory is not reported again.
	if err := appendTo(byDir[a][1]); !errors.Is(err, syscall.EIO) {
		t.Fatalf("append to the other log of the failing dir: %v", err)
	}
	select {
	case d := <-m.Failures():
		t.Fatalf("directory %q reported twice", d)
	default:
	}

	var before []common.TopicPartition
	offline, anyOnline := m.HandleLogDirFailure(a, func(tps []common.TopicPartition) { before = tps })
	if !anyOnline || len(offline) != 2 || len(before) != 2 {
		t.Fatalf("HandleLogDirFailure: offline %v (before close %v), anyOnline %v", offline, before, anyOnline)
	}
	if !m.IsOffline(a) || m.IsOffline(b) || len(m.OfflineDirs()) != 1 || m.OfflineDirs()[0] != a || len(m.LiveDirs()) != 1 {
		t.Fatalf("offline dirs %v, live %v", m.OfflineDirs(), m.LiveDirs())
	}
	for _, tp := range byDir[a] {
		if _, ok := m.GetLog(tp); ok {
			t.Fatalf("%s still served from the offline dir", tp)
		}
	}
	// The other directory keeps working: appends, a new log, checkpoints.
	for _, tp := range byDir[b] {
		if err := appendTo(tp); err != nil {
			t.Fatalf("append in the healthy dir: %v", err)
		}
	}
	nl := mustGetOrCreateLog(t, m, common.TopicPartition{Topic: "t", Partition: 9}, testConfig())
	if !strings.HasPrefix(nl.Dir(), b) {
		t.Fatalf("new log placed in %s, want under %s", nl.Dir(), b)
	}
	restore()
	if err := m.CheckpointHighWatermarks(); err != nil {
		t.Fatalf("checkpoint with one dir offline: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(a, replicationOffsetCheckpoint)); !bytes.Equal(got, hwA) {
		t.Fatalf("the offline dir's checkpoint was rewritten:\n%s\nwas\n%s", got, hwA)
	}
	if err := m.Shutdown(); err != nil {
		t.Fatalf("shutdown with one dir offline: %v", err)
	}
	if _, err := os.Stat(filepath.Join(a, cleanShutdownFile)); err == nil {
		t.Fatal("the offline dir got a clean-shutdown marker")
	}

	// Restart with the directory fixed: every log is back with what was
	// acknowledged.
	cfg := DefaultManagerConfig(a, b)
	cfg.CleanerEnable = false
	m2 := mustNewLogManager(t, cfg)
	defer m2.Shutdown()
	if len(m2.OfflineDirs()) != 0 {
		t.Fatalf("offline after restart: %v", m2.OfflineDirs())
	}
	for tp, end := range acked {
		l, ok := m2.GetLog(tp)
		if !ok {
			t.Fatalf("%s missing after restart", tp)
		}
		if l.LogEndOffset() < end {
			t.Errorf("%s: log end %d after restart, below the acknowledged end %d", tp, l.LogEndOffset(), end)
		}
	}
}

// A checkpoint write failing in one directory takes that directory offline
// too (Kafka: an IOException writing recovery-point-offset-checkpoint).
func TestCheckpointFailureTakesLogDirOffline(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	m, _ := twoDirManager(t, a, b)
	defer m.Shutdown()
	restore := SetFaultHook(func(op FaultOp, path string) error {
		if op == FaultCheckpoint && strings.HasPrefix(path, b+string(os.PathSeparator)) {
			return syscall.EROFS
		}
		return nil
	})
	defer restore()
	if err := m.CheckpointRecoveryPoints(); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("checkpoint: %v, want EROFS", err)
	}
	if d := takeFailure(t, m); d != b {
		t.Fatalf("failed dir %q, want %q", d, b)
	}
	if _, anyOnline := m.HandleLogDirFailure(b, nil); !anyOnline {
		t.Fatal("no dir online")
	}
	if err := m.CheckpointRecoveryPoints(); err != nil {
		t.Fatalf("checkpoint after the dir went offline: %v", err)
	}
	// The last directory failing leaves none online: the broker must stop.
	if _, anyOnline := m.HandleLogDirFailure(a, nil); anyOnline {
		t.Fatal("anyOnline with every dir offline")
	}
	if _, err := m.GetOrCreateLog(common.TopicPartition{Topic: "t", Partition: 7}, testConfig()); !errors.Is(err, kerr.KafkaStorageError) {
		t.Fatalf("creating a log with every dir offline: %v", err)
	}
}

// mountTmpfs mounts a tmpfs of size at dir (root only; the test fails,
// never skips, without it) and unmounts it when the test ends.
func mountTmpfs(t *testing.T, dir, size string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("this test mounts a small tmpfs and needs root (mount(8)): %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
}

// A real full file system: a log dir on a 512 KiB tmpfs fills up, the
// append that hits ENOSPC takes that directory offline alone, the other
// directory keeps taking appends, and after the file system is grown (the
// fix) a restart brings every acknowledged record back. Segments are
// larger than the file system and index files one page, so the index
// pages are touched while space remains and no mmap write can fault.
func TestFullFilesystemTakesLogDirOffline(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "small"), filepath.Join(root, "b")
	mountTmpfs(t, a, "512k")
	cfg := DefaultManagerConfig(a, b)
	cfg.CleanerEnable = false
	m := mustNewLogManager(t, cfg)
	defer m.Shutdown()
	lc := testConfig()
	lc.SegmentBytes = 8 << 20
	lc.SegmentIndexBytes = 4096
	lc.IndexIntervalBytes = 1 << 20
	la := mustGetOrCreateLog(t, m, common.TopicPartition{Topic: "full", Partition: 0}, lc)
	lb := mustGetOrCreateLog(t, m, common.TopicPartition{Topic: "full", Partition: 1}, lc)
	if !strings.HasPrefix(la.Dir(), a) || !strings.HasPrefix(lb.Dir(), b) {
		t.Fatalf("placement: %s, %s", la.Dir(), lb.Dir())
	}
	var ackedEnd int64
	var appendErr error
	for i := 0; i < 1000; i++ {
		info, err := la.AppendAsLeader(makeBatch(4, 1000, 1, "x"), 0)
		if err != nil {
			appendErr = err
			break
		}
		ackedEnd = info.LastOffset + 1
	}
	if !errors.Is(appendErr, syscall.ENOSPC) {
		t.Fatalf("filling the tmpfs: %v after %d records, want ENOSPC", appendErr, ackedEnd)
	}
	if d := takeFailure(t, m); d != a {
		t.Fatalf("failed dir %q, want %q", d, a)
	}
	m.HandleLogDirFailure(a, nil)
	if _, err := lb.AppendAsLeader(makeBatch(4, 1000, 1, "y"), 0); err != nil {
		t.Fatalf("append to the healthy dir: %v", err)
	}
	if err := m.Shutdown(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	// The fix: more space.
	if out, err := exec.Command("mount", "-o", "remount,size=8m", a).CombinedOutput(); err != nil {
		t.Fatalf("growing the tmpfs: %v: %s", err, out)
	}
	m2 := mustNewLogManager(t, cfg)
	defer m2.Shutdown()
	l, ok := m2.GetLog(common.TopicPartition{Topic: "full", Partition: 0})
	if !ok {
		t.Fatal("log of the fixed dir missing after restart")
	}
	if l.LogEndOffset() < ackedEnd {
		t.Fatalf("log end %d after restart, below the acknowledged end %d", l.LogEndOffset(), ackedEnd)
	}
	if got := len(readAllBatches(t, l, 0)); int64(got*4) < ackedEnd {
		t.Fatalf("%d batches readable after restart, %d records were acknowledged", got, ackedEnd)
	}
	if _, err := l.AppendAsLeader(makeBatch(1, 10, 1, "z"), 0); err != nil {
		t.Fatalf("append after the fix: %v", err)
	}
}

// A directory that cannot be used at start-up (its path is a regular
// file) starts offline and is reported once, as Kafka starts; with every
// directory unusable NewLogManager fails.
func TestLogDirUnusableAtStartupStartsOffline(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	if err := os.WriteFile(a, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultManagerConfig(a, b)
	cfg.CleanerEnable = false
	m := mustNewLogManager(t, cfg)
	defer m.Shutdown()
	if !m.IsOffline(a) || m.IsOffline(b) {
		t.Fatalf("offline dirs %v", m.OfflineDirs())
	}
	if d := takeFailure(t, m); d != a {
		t.Fatalf("failed dir %q, want %q", d, a)
	}
	l := mustGetOrCreateLog(t, m, common.TopicPartition{Topic: "t", Partition: 0}, testConfig())
	if !strings.HasPrefix(l.Dir(), b) {
		t.Fatalf("log placed in %s", l.Dir())
	}
	if err := m.WriteMetaProperties(1, "c"); err != nil {
		t.Fatal(err)
	}
	if _, found, err := m.ReadMetaProperties(); err != nil || !found {
		t.Fatalf("meta.properties with a dir offline: %v %v", found, err)
	}
	if _, err := NewLogManager(DefaultManagerConfig(a)); err == nil {
		t.Fatal("NewLogManager with every dir unusable succeeded")
	}
}
