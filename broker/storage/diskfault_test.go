package storage

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// A write that fails mid-append (half the batch reached the file, then
// EIO) takes the directory offline like any I/O error, and the torn half
// is never served: the log answers KAFKA_STORAGE_ERROR from then on, and
// after a restart recovery cuts the torn bytes, every acknowledged batch
// is back byte for byte and the log takes appends again at the right
// offset.
func TestShortWriteMidAppendTakesLogDirOffline(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	m, byDir := twoDirManager(t, a, b)
	defer m.Shutdown()
	tp := byDir[a][0]
	l, _ := m.GetLog(tp)
	for i := 0; i < 20; i++ {
		if _, err := l.AppendAsLeader(makeBatch(3, 40, 1, "ok"), 0); err != nil {
			t.Fatal(err)
		}
	}
	acked := readAllBatches(t, l, 0)
	ackedEnd := l.LogEndOffset()

	torn := makeBatch(3, 40, 1, "torn")
	restore := SetFaultHook(func(op FaultOp, path string) error {
		if op == FaultAppend && strings.HasPrefix(path, a+string(os.PathSeparator)) {
			return &ShortWrite{N: len(torn) / 2, Err: syscall.EIO}
		}
		return nil
	})
	defer restore()
	if _, err := l.AppendAsLeader(torn, 0); !errors.Is(err, syscall.EIO) || !IsIOError(err) {
		t.Fatalf("append cut short: %v, want an EIO I/O error", err)
	}
	restore()
	if d := takeFailure(t, m); d != a {
		t.Fatalf("failed dir %q, want %q", d, a)
	}
	if _, err := l.Read(0, 1<<20, ackedEnd, true); !errors.Is(err, kerr.KafkaStorageError) {
		t.Fatalf("read after the failure: %v, want KAFKA_STORAGE_ERROR", err)
	}
	m.HandleLogDirFailure(a, nil)
	segs, _ := filepath.Glob(filepath.Join(l.Dir(), "*"+logFileSuffix))
	var onDisk int64
	for _, p := range segs {
		if fi, err := os.Stat(p); err == nil {
			onDisk += fi.Size()
		}
	}
	if want := int64(len(bytes.Join(acked, nil)) + len(torn)/2); onDisk != want {
		t.Fatalf("%d bytes in the segment files, want %d (the acknowledged batches and the torn half)", onDisk, want)
	}
	if err := m.Shutdown(); err != nil {
		t.Fatal(err)
	}

	cfg := DefaultManagerConfig(a, b)
	cfg.CleanerEnable = false
	m2 := mustNewLogManager(t, cfg)
	defer m2.Shutdown()
	l2, ok := m2.GetLog(tp)
	if !ok {
		t.Fatal("log missing after restart")
	}
	if l2.LogEndOffset() != ackedEnd {
		t.Fatalf("log end %d after restart, want the acknowledged end %d", l2.LogEndOffset(), ackedEnd)
	}
	got := readAllBatches(t, l2, 0)
	if !bytes.Equal(bytes.Join(got, nil), bytes.Join(acked, nil)) {
		t.Fatalf("after restart %d batches differ from the %d acknowledged", len(got), len(acked))
	}
	info, err := l2.AppendAsLeader(makeBatch(1, 10, 1, "after"), 0)
	if err != nil || info.FirstOffset != ackedEnd {
		t.Fatalf("append after restart: %+v %v, want offset %d", info, err, ackedEnd)
	}
}
