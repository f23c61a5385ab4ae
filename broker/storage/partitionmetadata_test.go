package storage

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"

	"github.com/twmb/franz-go/pkg/kerr"
)

// partition.metadata as Kafka writes it: "exactly two lines with no trailing newline after the
// second", the topic id in URL-safe base64 without padding.
func TestPartitionMetadataGolden(t *testing.T) {
	var id [16]byte
	for i := range id {
		id[i] = byte(0x9c + i*7)
	}
	got := string(EncodePartitionMetadata(id))
	want := "version: 0\ntopic_id: nKOqsbi_xs3U2-Lp8Pf-BQ"
	if got != want {
		t.Fatalf("encoded %q, want %q", got, want)
	}
	back, err := DecodePartitionMetadata([]byte(got))
	if err != nil || back != id {
		t.Fatalf("decode: %v %v", back, err)
	}
	for _, bad := range []string{"", "version: 1\ntopic_id: nKOqsbi_xs3U2-Lp8Pf-BQ", "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", "version: 0\ntopic_id: short", "version: 0"} {
		if _, err := DecodePartitionMetadata([]byte(bad)); err == nil {
			t.Errorf("%q decoded without error", bad)
		}
	}
}

// The id is written once, survives a reopen, and a different id afterwards
// is INCONSISTENT_TOPIC_ID (the directory belongs to an older incarnation).
func TestSetTopicIDPersistsAndFences(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	clock := newFakeClock()
	l := openTestLog(t, dir, testConfig(), clock)
	if _, ok, err := l.TopicID(); ok || err != nil {
		t.Fatalf("fresh log has a topic id (ok=%v err=%v)", ok, err)
	}
	id := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	if err := l.SetTopicID(id); err != nil {
		t.Fatal(err)
	}
	if err := l.SetTopicID(id); err != nil {
		t.Fatalf("same id again: %v", err)
	}
	// The log's flusher writes it.
	pollUntil(t, 10*time.Second, "partition.metadata", func() bool {
		data, err := os.ReadFile(filepath.Join(dir, "partition.metadata"))
		return err == nil && string(data) == string(EncodePartitionMetadata(id))
	})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openTestLog(t, dir, testConfig(), clock)
	defer l.Close()
	if got, ok, err := l.TopicID(); !ok || err != nil || got != id {
		t.Fatalf("after reopen: %v %v %v", got, ok, err)
	}
	other := id
	other[0] = 99
	if err := l.SetTopicID(other); !errors.Is(err, kerr.InconsistentTopicID) {
		t.Fatalf("different id: %v, want INCONSISTENT_TOPIC_ID", err)
	}
}

// holdTopicIDWriters takes every slot of topicIDWriters, so no flusher
// writes partition.metadata until the returned release is called (appends
// still write it; Close waits for a slot).
func holdTopicIDWriters(t *testing.T) (release func()) {
	t.Helper()
	for i := 0; i < cap(topicIDWriters); i++ {
		topicIDWriters <- struct{}{}
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			for i := 0; i < cap(topicIDWriters); i++ {
				<-topicIDWriters
			}
		})
	}
	t.Cleanup(release)
	return release
}

// SetTopicID returns before partition.metadata is written (LeaderAndIsr
// does not wait for thousands of fsyncs); the file is then written before
// the first append returns, by Close, or by the log's flusher, and not
// at all when the log is closed as in a crash first: the reopened log has
// no topic id and takes one again.
func TestPartitionMetadataWrittenAfterSetTopicID(t *testing.T) {
	id := [16]byte{9, 8, 7, 6, 5, 4, 3, 2, 1, 10, 11, 12, 13, 14, 15, 16}
	want := string(EncodePartitionMetadata(id))
	clock := newFakeClock()
	file := func(dir string) (string, bool) {
		data, err := os.ReadFile(filepath.Join(dir, partitionMetadataFile))
		return string(data), err == nil
	}
	setHeld := func(t *testing.T, dir string) *Log {
		t.Helper()
		l := openTestLog(t, dir, testConfig(), clock)
		if err := l.SetTopicID(id); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := l.TopicID(); !ok || err != nil || got != id {
			t.Fatalf("TopicID after SetTopicID: %v %v %v", got, ok, err)
		}
		if _, ok := file(dir); ok {
			t.Fatal("partition.metadata written inside SetTopicID")
		}
		return l
	}

	t.Run("before the first append", func(t *testing.T) {
		holdTopicIDWriters(t)
		dir := filepath.Join(t.TempDir(), "t-0")
		l := setHeld(t, dir)
		defer l.Close()
		if _, err := l.AppendAsLeader(makeBatch(1, 10, 1, "a"), 0); err != nil {
			t.Fatal(err)
		}
		if got, ok := file(dir); !ok || got != want {
			t.Fatalf("after the first append: partition.metadata %q (present %v), want %q", got, ok, want)
		}
	})
	t.Run("by Close", func(t *testing.T) {
		release := holdTopicIDWriters(t)
		dir := filepath.Join(t.TempDir(), "t-0")
		l := setHeld(t, dir)
		// Close waits for a slot of topicIDWriters, given back here.
		closed := make(chan error, 1)
		go func() { closed <- l.Close() }() // joined below
		release()
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
		if got, ok := file(dir); !ok || got != want {
			t.Fatalf("after Close: partition.metadata %q (present %v), want %q", got, ok, want)
		}
		l = openTestLog(t, dir, testConfig(), clock)
		defer l.Close()
		if got, ok, err := l.TopicID(); !ok || err != nil || got != id {
			t.Fatalf("after reopen: %v %v %v", got, ok, err)
		}
	})
	t.Run("not after a crash", func(t *testing.T) {
		release := holdTopicIDWriters(t)
		dir := filepath.Join(t.TempDir(), "t-0")
		l := setHeld(t, dir)
		if err := l.closeNoFlush(); err != nil {
			t.Fatal(err)
		}
		release()
		if _, ok := file(dir); ok {
			t.Fatal("partition.metadata written after the crash")
		}
		l = openTestLog(t, dir, testConfig(), clock)
		defer l.Close()
		if _, ok, err := l.TopicID(); ok || err != nil {
			t.Fatalf("reopened log has a topic id (ok=%v err=%v)", ok, err)
		}
		if err := l.SetTopicID(id); err != nil {
			t.Fatal(err)
		}
		pollUntil(t, 10*time.Second, "partition.metadata written by the flusher", func() bool {
			got, ok := file(dir)
			return ok && got == want
		})
	})
}

// A log deleted before its flusher wrote partition.metadata drops the
// write: its directory, renamed for deletion, is not written to and does
// not go offline.
func TestDeleteLogBeforePartitionMetadataWritten(t *testing.T) {
	release := holdTopicIDWriters(t)
	_, _, cfg := newManagerEnv(t)
	m := mustNewLogManager(t, cfg)
	defer m.Shutdown()
	tp := common.TopicPartition{Topic: "t", Partition: 0}
	l := mustGetOrCreateLog(t, m, tp, cfg.Defaults)
	if err := l.SetTopicID([16]byte{1}); err != nil {
		t.Fatal(err)
	}
	if err := m.DeleteLog(tp); err != nil {
		t.Fatal(err)
	}
	release()
	if l.topicIDUnwritten.Load() {
		t.Fatal("the deleted log still has a partition.metadata write pending")
	}
	if off := m.OfflineDirs(); len(off) != 0 {
		t.Fatalf("offline directories %v", off)
	}
}

// FuzzDecodePartitionMetadata: never panics; whatever decodes re-encodes to
// a file that decodes to the same id.
func FuzzDecodePartitionMetadata(f *testing.F) {
	f.Add([]byte("version: 0\ntopic_id: nKOqsbi_xs3U2-Lp8Pf-BQ"))
	f.Add([]byte("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA"))
	f.Add([]byte("version:0\ntopic_id:nKOqsbi_xs3U2-Lp8Pf-BQ\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		id, err := DecodePartitionMetadata(data)
		if err != nil {
			return
		}
		back, err := DecodePartitionMetadata(EncodePartitionMetadata(id))
		if err != nil || back != id {
			t.Fatalf("re-encoding %v: %v %v", id, back, err)
		}
	})
}
