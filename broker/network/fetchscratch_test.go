package network

import (
	"bytes"
	"io"
	"testing"
)

type bytesFile []byte

func (f bytesFile) Len() int                           { return len(f) }
func (f bytesFile) WriteTo(w io.Writer) (int64, error) { return io.Copy(w, bytes.NewReader(f)) }

type releasingSlot struct{ released int }

func (s *releasingSlot) ReleaseReads() { s.released++ }

// Once a Fetch answer is written, the kept memory references nothing of
// it (records read into memory, file ranges) and the owner's slot is told
// to drop its reads; the next answer starts empty, in the same memory.
func TestFetchScratchDropsTheWrittenAnswer(t *testing.T) {
	var s FetchScratch
	slot := &releasingSlot{}
	s.Slot = slot
	resp, files := s.Response(13, true)
	topic := AppendFetchTopic(resp, 2)
	topic.Topic = "t"
	topic.Partitions = topic.Partitions[:2]
	topic.Partitions[0].RecordBatches = []byte("in memory")
	topic.Partitions[1].Partition = 1
	files.SetFileRecords(0, 1, bytesFile("a file range"))
	parts := topic.Partitions

	s.written()
	if slot.released != 1 {
		t.Fatalf("ReleaseReads called %d times, want 1", slot.released)
	}
	for i, p := range parts {
		if p.RecordBatches != nil || p.Partition != 0 {
			t.Fatalf("partition %d still holds %+v after the write", i, p)
		}
	}
	for i, f := range files.files[:cap(files.files)] {
		if f.file != nil {
			t.Fatalf("file %d still held after the write", i)
		}
	}

	resp2, files2 := s.Response(13, true)
	if len(resp2.Topics) != 0 || files2.HasFiles() {
		t.Fatalf("the next answer starts with %d topics, files %v", len(resp2.Topics), files2.HasFiles())
	}
	if &AppendFetchTopic(resp2, 2).Partitions[:1][0] != &parts[0] {
		t.Fatal("the next answer does not reuse the partition list")
	}
}
