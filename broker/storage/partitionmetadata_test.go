package storage

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

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
	data, err := os.ReadFile(filepath.Join(dir, "partition.metadata"))
	if err != nil || string(data) != string(EncodePartitionMetadata(id)) {
		t.Fatalf("partition.metadata = %q, %v", data, err)
	}
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
