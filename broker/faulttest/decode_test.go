package faulttest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/klassik/klassik/broker/storage/record"
)

// batchOf builds a v2 batch at base holding the given values.
func batchOf(base int64, values ...string) []byte {
	o := record.DefaultBuildOptions()
	o.BaseOffset = base
	o.BaseTimestamp = 1700000000000
	recs := make([]record.Record, len(values))
	for i, v := range values {
		recs[i] = record.Record{OffsetDelta: int32(i), Value: []byte(v)}
	}
	return record.Build(o, recs)
}

func TestDecodeSegmentStopsAtEnd(t *testing.T) {
	seg := append(append(batchOf(0, "r-0", "r-1"), batchOf(2, "r-2")...), batchOf(3, "r-3|xxxx")...)
	for _, tc := range []struct {
		end     int64
		wantEnd int64
		ids     []string
	}{
		{end: 0, wantEnd: 0},
		{end: 2, wantEnd: 2, ids: []string{"r-0", "r-1"}},
		{end: 3, wantEnd: 3, ids: []string{"r-0", "r-1", "r-2"}},
		{end: 100, wantEnd: 4, ids: []string{"r-0", "r-1", "r-2", "r-3"}},
	} {
		dl := &DiskLog{ByID: map[string][]int64{}}
		if err := decodeSegment(seg, tc.end, dl); err != nil {
			t.Fatalf("end %d: %v", tc.end, err)
		}
		if dl.End != tc.wantEnd {
			t.Errorf("end %d: read up to %d, want %d", tc.end, dl.End, tc.wantEnd)
		}
		var ids []string
		for i, r := range dl.Records {
			if r.Offset != int64(i) {
				t.Errorf("end %d: record %d at offset %d", tc.end, i, r.Offset)
			}
			ids = append(ids, r.ID)
		}
		if strings.Join(ids, ",") != strings.Join(tc.ids, ",") {
			t.Errorf("end %d: ids %v, want %v", tc.end, ids, tc.ids)
		}
	}
}

func TestDecodeSegmentStraddlingBatchIsAnError(t *testing.T) {
	seg := batchOf(0, "r-0", "r-1", "r-2")
	dl := &DiskLog{ByID: map[string][]int64{}}
	err := decodeSegment(seg, 2, dl)
	if err == nil || !strings.Contains(err.Error(), "straddles") {
		t.Fatalf("a batch across the end offset: got %v", err)
	}
}

func TestDecodeSegmentCorruptCRCIsAnError(t *testing.T) {
	seg := batchOf(0, "r-0")
	seg[len(seg)-1] ^= 0xff
	dl := &DiskLog{ByID: map[string][]int64{}}
	if err := decodeSegment(seg, 10, dl); err == nil {
		t.Fatal("a corrupt batch below the end was accepted")
	}
}

func TestDecodeSegmentTornTailTolerated(t *testing.T) {
	full := batchOf(1, "r-1")
	seg := append(batchOf(0, "r-0"), full[:len(full)-3]...)
	dl := &DiskLog{ByID: map[string][]int64{}}
	if err := decodeSegment(seg, 10, dl); err != nil {
		t.Fatalf("torn tail: %v", err)
	}
	if dl.End != 1 {
		t.Fatalf("read up to %d, want 1 (the caller compares End with the HW)", dl.End)
	}
}

func TestDecodeSegmentFindsDuplicates(t *testing.T) {
	seg := append(batchOf(0, "r-0", "r-1"), batchOf(2, "r-1")...)
	dl := &DiskLog{ByID: map[string][]int64{}}
	if err := decodeSegment(seg, 10, dl); err != nil {
		t.Fatal(err)
	}
	if got := dl.ByID["r-1"]; len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Fatalf("r-1 at %v, want [1 2]", got)
	}
}

func TestParseRecordID(t *testing.T) {
	for _, tc := range []struct {
		in     string
		prefix string
		seq    int64
		ok     bool
	}{
		{"r-12", "r", 12, true},
		{"a-b-7|xxxx", "a-b", 7, true},
		{"zombie-0", "zombie", 0, true},
		{"r-", "", 0, false},
		{"-5", "", 0, false},
		{"r--5", "r-", 5, true},
		{"nodash", "", 0, false},
	} {
		p, s, err := ParseRecordID([]byte(tc.in))
		if (err == nil) != tc.ok || (tc.ok && (p != tc.prefix || s != tc.seq)) {
			t.Errorf("ParseRecordID(%q) = %q, %d, %v", tc.in, p, s, err)
		}
		if tc.ok && RecordID(p, s) != ValueID([]byte(tc.in)) {
			t.Errorf("RecordID does not round-trip %q", tc.in)
		}
	}
}

func TestDecodeResponseFrame(t *testing.T) {
	body := []byte{0, 0, 0, 7, 1, 2}
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(body)))
	got, err := decodeResponseFrame(hdr, bytes.NewReader(body))
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("got %v, %v", got, err)
	}
	binary.BigEndian.PutUint32(hdr[:], 1<<31)
	if _, err := decodeResponseFrame(hdr, bytes.NewReader(body)); err == nil {
		t.Fatal("negative frame size accepted")
	}
	binary.BigEndian.PutUint32(hdr[:], 100)
	if _, err := decodeResponseFrame(hdr, bytes.NewReader(body)); err == nil {
		t.Fatal("short frame accepted")
	}
}

// FuzzDecodeSegment: decodeSegment never panics on arbitrary segment bytes
// and end offsets; on success the bytes it kept are whole batches whose
// offsets lie below end, each record id is indexed at its offsets, and End
// never exceeds end.
func FuzzDecodeSegment(f *testing.F) {
	f.Add(append(batchOf(0, "r-0", "r-1"), batchOf(2, "r-2")...), int64(3))
	f.Add(batchOf(5, "x-1|yy"), int64(6))
	f.Add(batchOf(0, "r-0", "r-1", "r-2"), int64(1))
	f.Add([]byte{}, int64(0))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9}, int64(10))
	f.Fuzz(func(t *testing.T, data []byte, end int64) {
		dl := &DiskLog{ByID: map[string][]int64{}}
		if err := decodeSegment(data, end, dl); err != nil {
			return
		}
		if dl.End > end && len(dl.Bytes) > 0 {
			t.Fatalf("read up to %d past the end %d", dl.End, end)
		}
		var n int64
		err := record.ForEachBatch(dl.Bytes, func(_ []byte, h record.BatchHeader) error {
			if h.LastOffset() >= end {
				return errors.New("batch past the end kept")
			}
			n++
			return nil
		})
		if err != nil {
			t.Fatalf("kept bytes are not whole batches below the end: %v", err)
		}
		for _, r := range dl.Records {
			if !slices.Contains(dl.ByID[r.ID], r.Offset) {
				t.Fatalf("record %s at %d not indexed", r.ID, r.Offset)
			}
		}
	})
}

// FuzzParseRecordID: never panics; a parsed id re-encodes to the value's id.
func FuzzParseRecordID(f *testing.F) {
	for _, s := range []string{"r-0", "zombie-0", "a-b-99|xxx", "", "-", "r-x", "r-99999999999999999999"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		p, s, err := ParseRecordID(v)
		if err != nil {
			return
		}
		if s < 0 || p == "" {
			t.Fatalf("parsed %q as %q, %d", v, p, s)
		}
		if got := RecordID(p, s); got != ValueID(v) && !strings.HasPrefix(ValueID(v), p+"-") {
			t.Fatalf("%q re-encodes as %q", v, got)
		}
	})
}

// FuzzDecodeResponseFrame: never panics, never allocates past the cap, and a
// returned body has the announced size of at least 4 bytes.
func FuzzDecodeResponseFrame(f *testing.F) {
	f.Add([]byte{0, 0, 0, 6, 0, 0, 0, 7, 1, 2})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0, 0, 2, 1, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 4 {
			return
		}
		var hdr [4]byte
		copy(hdr[:], data)
		body, err := decodeResponseFrame(hdr, bytes.NewReader(data[4:]))
		if err != nil {
			return
		}
		if len(body) < 4 || len(body) != int(binary.BigEndian.Uint32(hdr[:])) {
			t.Fatalf("body of %d bytes for header %v", len(body), hdr)
		}
	})
}

func TestParseDumpLog(t *testing.T) {
	out := "Dumping /x/00000000000000000000.log\nLog starting offset: 0\n" +
		"baseOffset: 0 lastOffset: 1 count: 2 baseSequence: 0 lastSequence: 1 producerId: 0 producerEpoch: 0 partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1 size: 80 magic: 2 compresscodec: none crc: 123 isvalid: true\n" +
		"baseOffset: 2 lastOffset: 4 count: 3 baseSequence: 2 lastSequence: 4 producerId: 0 producerEpoch: 0 partitionLeaderEpoch: 1 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 80 CreateTime: 1 size: 90 magic: 2 compresscodec: none crc: 456 isvalid: true\n"
	got, err := parseDumpLog(out, 5)
	if err != nil || len(got) != 2 || got[0] != "0..1 count=2 epoch=0 crc=123" || got[1] != "2..4 count=3 epoch=1 crc=456" {
		t.Fatalf("got %q, %v", got, err)
	}
	if got, _ := parseDumpLog(out, 4); len(got) != 1 {
		t.Fatalf("end 4: got %q", got)
	}
	if _, err := parseDumpLog(strings.Replace(out, "crc: 123 isvalid: true", "crc: 123 isvalid: false", 1), 5); err == nil {
		t.Fatal("an invalid batch below the end was accepted")
	}
}

// FuzzParseDumpLog: never panics; every batch kept ends below end.
func FuzzParseDumpLog(f *testing.F) {
	f.Add("baseOffset: 0 lastOffset: 1 count: 2 x partitionLeaderEpoch: 0 y crc: 1 isvalid: true", int64(2))
	f.Add("baseOffset: 9 lastOffset: 3 count: 2 x partitionLeaderEpoch: -1 y crc: 1 isvalid: true", int64(20))
	f.Add("", int64(0))
	f.Fuzz(func(t *testing.T, out string, end int64) {
		got, err := parseDumpLog(out, end)
		if err != nil {
			return
		}
		for _, b := range got {
			var base, last int64
			if _, err := fmt.Sscanf(b, "%d..%d", &base, &last); err != nil || last >= end || last < base {
				t.Fatalf("kept %q for end %d", b, end)
			}
		}
	})
}
