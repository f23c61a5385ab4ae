package record

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("read testdata: %v", err)
	}
	return b
}

// specExample builds a two-record v2 batch whose bytes as Kafka writes
// them are pinned in TestSpecExampleGolden.
func specExample(t testing.TB, codec Codec) []byte {
	t.Helper()
	o := DefaultBuildOptions()
	o.PartitionLeaderEpoch = 0
	o.BaseTimestamp = 1700000000000
	o.Codec = codec
	return Build(o, specRecords())
}

func specRecords() []Record {
	return []Record{
		{Key: []byte("k1"), Value: []byte("hello")},
		{TimestampDelta: 5, OffsetDelta: 1, Value: []byte("world"), Headers: []Header{{Key: "h", Value: []byte("x")}}},
	}
}

// The two-record example batch is reproduced byte for byte by Build, and the
// golden bytes decode to the same header and records.
func TestSpecExampleGolden(t *testing.T) {
	golden := readTestdata(t, "spec_3_7_batch.bin")
	if got := specExample(t, None); !bytes.Equal(got, golden) {
		t.Fatalf("Build differs from the spec example\n got %x\nwant %x", got, golden)
	}
	h, err := ParseBatchHeader(golden)
	if err != nil {
		t.Fatal(err)
	}
	want := BatchHeader{BaseOffset: 0, BatchLength: 79, PartitionLeaderEpoch: 0, Magic: 2, CRC: 0xe81177aa,
		LastOffsetDelta: 1, BaseTimestamp: 1700000000000, MaxTimestamp: 1700000000005, ProducerID: -1,
		ProducerEpoch: -1, BaseSequence: -1, NumRecords: 2}
	if h != want {
		t.Fatalf("header %+v, want %+v", h, want)
	}
	if h.Size() != 91 || h.LastOffset() != 1 || h.Compression() != None || h.TimestampType() != CreateTime ||
		h.IsTransactional() || h.IsControl() || h.HasDeleteHorizon() || h.LastSequence() != -1 {
		t.Fatalf("derived header values wrong: %+v", h)
	}
	if err := CheckCRC(golden); err != nil {
		t.Fatal(err)
	}
	recs, err := Records(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(recs, specRecords()) {
		t.Fatalf("records %+v", recs)
	}
	if ts := recs[1].Timestamp(h); ts != 1700000000005 {
		t.Fatalf("record 1 timestamp %d", ts)
	}
	if err := ValidateBatch(golden, ValidateOptions{FromClient: false, RequireKeys: false}); err != nil {
		t.Fatal(err)
	}
}

// kmsg decodes our bytes to the same fields (an independent decoder).
func TestKmsgAgrees(t *testing.T) {
	golden := readTestdata(t, "spec_3_7_batch.bin")
	var kb kmsg.RecordBatch
	if err := kb.ReadFrom(golden); err != nil {
		t.Fatal(err)
	}
	if kb.CRC != int32(-401508438) || kb.NumRecords != 2 || kb.FirstTimestamp != 1700000000000 {
		t.Fatalf("kmsg batch %+v", kb)
	}
}

func TestRoundTripEveryCodec(t *testing.T) {
	big := bytes.Repeat([]byte("klassik compresses this value "), 4000) // > one snappy/lz4 block
	for _, c := range []Codec{None, Gzip, Snappy, LZ4, Zstd} {
		t.Run(c.String(), func(t *testing.T) {
			o := DefaultBuildOptions()
			o.Codec = c
			o.BaseOffset = 100
			o.BaseTimestamp = 1700000000000
			o.ProducerID, o.ProducerEpoch, o.BaseSequence = 7, 1, 40
			recs := []Record{
				{Key: []byte("a"), Value: big},
				{OffsetDelta: 1, TimestampDelta: 3, Key: []byte("b"), Value: nil},
				{OffsetDelta: 2, TimestampDelta: 1, Key: nil, Value: []byte{}, Headers: []Header{{Key: "n", Value: nil}, {Key: "e", Value: []byte{}}}},
			}
			b := Build(o, recs)
			h, err := ParseBatchHeader(b)
			if err != nil {
				t.Fatal(err)
			}
			if h.Compression() != c || h.NumRecords != 3 || h.LastOffsetDelta != 2 || h.MaxTimestamp != 1700000000003 || h.LastSequence() != 42 {
				t.Fatalf("header %+v", h)
			}
			if c != None && len(b) > len(big)/2 {
				t.Fatalf("%s did not compress: %d bytes", c, len(b))
			}
			if err := ValidateBatch(b, ValidateOptions{}); err != nil {
				t.Fatal(err)
			}
			got, err := Records(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, recs) {
				t.Fatalf("records differ")
			}
			// Decompress(Compress(x)) == x also for empty input.
			for _, in := range [][]byte{{}, []byte("x"), big} {
				z := mustCompress(t, c, in)
				out, err := Decompress(c, z)
				if err != nil || !bytes.Equal(out, in) {
					t.Fatalf("round trip of %d bytes: %v", len(in), err)
				}
			}
		})
	}
}

// Snappy as librdkafka writes it: one raw block, no xerial framing.
func TestSnappyRawBlock(t *testing.T) {
	framed := mustCompress(t, Snappy, []byte("raw snappy block"))
	if !bytes.HasPrefix(framed, xerialMagic) {
		t.Fatal("encoder must write xerial framing")
	}
	raw := framed[len(xerialMagic)+8+4:]
	out, err := Decompress(Snappy, raw)
	if err != nil || string(out) != "raw snappy block" {
		t.Fatalf("raw block: %q %v", out, err)
	}
}

func TestSetters(t *testing.T) {
	b := specExample(t, None)
	SetBaseOffset(b, 368769)
	SetPartitionLeaderEpoch(b, 5)
	if err := CheckCRC(b); err != nil {
		t.Fatalf("offset and epoch must not affect the crc: %v", err)
	}
	SetLogAppendTime(b, 1800000000000)
	if err := CheckCRC(b); err != nil {
		t.Fatal(err)
	}
	h, _ := ParseBatchHeader(b)
	if h.BaseOffset != 368769 || h.PartitionLeaderEpoch != 5 || h.TimestampType() != LogAppendTime || h.MaxTimestamp != 1800000000000 {
		t.Fatalf("header %+v", h)
	}
	recs, _ := Records(b)
	if recs[0].Timestamp(h) != 1800000000000 || recs[0].Offset(h) != 368769 || recs[1].Offset(h) != 368770 {
		t.Fatal("LogAppendTime must apply to every record")
	}
}

// BuildAt bases the batch at now and numbers the records in order,
// whatever offset deltas they carried.
func TestBuildAt(t *testing.T) {
	o := DefaultBuildOptions()
	o.Transactional = true
	b := BuildAt(o, time.UnixMilli(1700000000000), []Record{{OffsetDelta: 7, Value: []byte("a")}, {Value: []byte("b")}})
	h, err := ParseBatchHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	if h.BaseTimestamp != 1700000000000 || h.MaxTimestamp != 1700000000000 || h.LastOffsetDelta != 1 || h.NumRecords != 2 || !h.IsTransactional() {
		t.Fatalf("header %+v", h)
	}
	recs, _ := Records(b)
	if recs[0].Offset(h) != 0 || recs[1].Offset(h) != 1 {
		t.Fatalf("records %+v", recs)
	}
}

func TestNoAllocations(t *testing.T) {
	b := specExample(t, None)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := ParseBatchHeader(b); err != nil {
			t.Fatal(err)
		}
		if err := CheckCRC(b); err != nil {
			t.Fatal(err)
		}
		SetBaseOffset(b, 9)
		SetPartitionLeaderEpoch(b, 1)
		if err := ValidateBatch(b, ValidateOptions{RequireKeys: false}); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("hot path allocates %v times", allocs)
	}
}

func TestForEachBatch(t *testing.T) {
	a := specExample(t, None)
	b := specExample(t, Gzip)
	SetBaseOffset(b, 2)
	data := append(append([]byte{}, a...), b...)
	var offs []int64
	if err := ForEachBatch(data, func(batch []byte, h BatchHeader) error {
		if len(batch) != h.Size() {
			t.Fatalf("batch slice %d bytes, header says %d", len(batch), h.Size())
		}
		offs = append(offs, h.BaseOffset)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(offs, []int64{0, 2}) {
		t.Fatalf("offsets %v", offs)
	}
	// Every truncation inside the second batch is reported as ErrTruncated
	// at the second batch's position.
	for cut := len(a) + 1; cut < len(data); cut++ {
		n := 0
		err := ForEachBatch(data[:cut], func([]byte, BatchHeader) error { n++; return nil })
		var pe *PositionError
		if !errors.Is(err, ErrTruncated) || !errors.As(err, &pe) || pe.Pos != len(a) || n != 1 {
			t.Fatalf("cut at %d: err %v, n %d", cut, err, n)
		}
	}
	stop := errors.New("stop")
	if err := ForEachBatch(data, func([]byte, BatchHeader) error { return stop }); err != stop {
		t.Fatalf("callback error not returned: %v", err)
	}
}

func TestValidateErrors(t *testing.T) {
	good := specExample(t, None)
	mod := func(f func(b []byte)) []byte {
		b := append([]byte(nil), good...)
		f(b)
		return b
	}
	idem := func() []byte {
		o := DefaultBuildOptions()
		o.ProducerID = 1
		return Build(o, []Record{{Key: []byte("k")}})
	}
	cases := []struct {
		name  string
		batch []byte
		opts  ValidateOptions
		want  error
	}{
		{"crc", mod(func(b []byte) { b[70] ^= 1 }), ValidateOptions{}, kerr.CorruptMessage},
		{"truncated", good[:50], ValidateOptions{}, ErrTruncated},
		{"truncated is corrupt", good[:80], ValidateOptions{}, kerr.CorruptMessage},
		{"too large", good, ValidateOptions{MaxMessageBytes: 90}, kerr.MessageTooLarge},
		{"legacy", readTestdata(t, "spec_3_5_v1_message.bin"), ValidateOptions{}, kerr.UnsupportedForMessageFormat},
		{"bad magic", mod(func(b []byte) { b[16] = 3 }), ValidateOptions{}, kerr.CorruptMessage},
		{"client base offset", mod(func(b []byte) { SetBaseOffset(b, 5) }), ValidateOptions{FromClient: true}, kerr.InvalidRecord},
		{"null key compacted", good, ValidateOptions{RequireKeys: true}, kerr.InvalidRecord},
		{"pid without sequence", idem(), ValidateOptions{FromClient: true}, kerr.InvalidRecord},
		{"client log append time", mod(func(b []byte) { SetLogAppendTime(b, 1) }), ValidateOptions{FromClient: true}, kerr.InvalidTimestamp},
		{"timestamp range", good, ValidateOptions{CheckTimestamps: true, NowMs: 1800000000000, TimestampDiffMaxMs: 1000}, kerr.InvalidTimestamp},
		{"codec 7", mod(func(b []byte) { b[22] |= 7; updateCRC(b) }), ValidateOptions{}, kerr.UnsupportedCompressionType},
		{"count mismatch", mod(func(b []byte) { b[60] = 3; updateCRC(b) }), ValidateOptions{}, kerr.CorruptMessage},
		{"client control", BuildControlBatch(0, 0, 1, 0, ControlCommit, 0, 0), ValidateOptions{FromClient: true}, kerr.InvalidRecord},
	}
	for _, c := range cases {
		err := ValidateBatch(c.batch, c.opts)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
	var re *RecordError
	if err := ValidateBatch(good, ValidateOptions{RequireKeys: true}); !errors.As(err, &re) || re.Index != 1 {
		t.Errorf("record error index: %v", err)
	}
	if err := ValidateBatch(BuildControlBatch(0, 0, 1, 0, ControlCommit, 0, 0), ValidateOptions{RequireKeys: true}); err != nil {
		t.Errorf("control batch on compacted topic: %v", err)
	}
}

func TestControlRecords(t *testing.T) {
	b := BuildControlBatch(10, 3, 4242, 2, ControlAbort, 7, 1700000000000)
	h, err := ParseBatchHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	if !h.IsControl() || !h.IsTransactional() || h.ProducerID != 4242 || h.BaseSequence != -1 || h.BaseOffset != 10 {
		t.Fatalf("header %+v", h)
	}
	recs, err := Records(b)
	if err != nil {
		t.Fatal(err)
	}
	if _, typ, err := ParseControlKey(recs[0].Key); err != nil || typ != ControlAbort {
		t.Fatalf("key %x: %v %v", recs[0].Key, typ, err)
	}
	if _, ep, err := ParseEndTxnMarker(recs[0].Value); err != nil || ep != 7 {
		t.Fatalf("marker: %v %v", ep, err)
	}
	if _, typ, _ := ParseControlKey([]byte{0, 0, 0, 4}); typ != ControlUnknown {
		t.Fatal("KRaft-only types read as unknown")
	}
	if _, _, err := ParseControlKey([]byte{0}); err == nil {
		t.Fatal("short key accepted")
	}
}

func TestConvertLegacy(t *testing.T) {
	for _, name := range []string{"spec_3_5_v0_message.bin", "spec_3_5_v1_message.bin"} {
		b, err := ConvertLegacy(readTestdata(t, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := ValidateBatch(b, ValidateOptions{FromClient: true}); err != nil {
			t.Fatalf("%s: converted batch invalid: %v", name, err)
		}
		h, _ := ParseBatchHeader(b)
		recs, _ := Records(b)
		if len(recs) != 1 || recs[0].Key != nil || string(recs[0].Value) != "hi" {
			t.Fatalf("%s: records %+v", name, recs)
		}
		wantTS := int64(1700000000000)
		if name == "spec_3_5_v0_message.bin" {
			wantTS = -1
		}
		if recs[0].Timestamp(h) != wantTS {
			t.Fatalf("%s: timestamp %d", name, recs[0].Timestamp(h))
		}
	}
}

// legacyMsg encodes one legacy entry.
func legacyMsg(offset int64, magic, attrs int8, ts int64, key, value []byte) []byte {
	var m []byte
	m = append(m, 0, 0, 0, 0, byte(magic), byte(attrs))
	if magic == 1 {
		m = appendU64(m, uint64(ts))
	}
	for _, f := range [][]byte{key, value} {
		if f == nil {
			m = appendU32(m, 0xffffffff)
		} else {
			m = appendU32(m, uint32(len(f)))
			m = append(m, f...)
		}
	}
	crc := crcIEEE(m[4:])
	m[0], m[1], m[2], m[3] = byte(crc>>24), byte(crc>>16), byte(crc>>8), byte(crc)
	out := appendU64(nil, uint64(offset))
	out = appendU32(out, uint32(len(m)))
	return append(out, m...)
}

func TestConvertLegacyCompressed(t *testing.T) {
	for _, c := range []Codec{Gzip, Snappy, LZ4} {
		for _, magic := range []int8{0, 1} {
			var inner []byte
			for i := 0; i < 3; i++ {
				inner = append(inner, legacyMsg(int64(i), magic, 0, 1000+int64(i), []byte{'k', byte('0' + i)}, []byte("v"))...)
			}
			z := mustCompress(t, c, inner)
			set := legacyMsg(2, magic, int8(c), 1002, nil, z)
			set = append(set, 0, 0, 0) // a partial trailing entry is ignored
			b, err := ConvertLegacy(set)
			if err != nil {
				t.Fatalf("%s v%d: %v", c, magic, err)
			}
			h, _ := ParseBatchHeader(b)
			recs, err := Records(b)
			if err != nil || len(recs) != 3 || h.Compression() != c {
				t.Fatalf("%s v%d: %d records, codec %s, %v", c, magic, len(recs), h.Compression(), err)
			}
			for i, r := range recs {
				if string(r.Key) != "k"+string(rune('0'+i)) || r.Offset(h) != int64(i) {
					t.Fatalf("%s v%d: record %d = %+v", c, magic, i, r)
				}
			}
		}
	}
	bad := legacyMsg(0, 1, 0, 0, nil, []byte("x"))
	bad[20] ^= 0xff
	if _, err := ConvertLegacy(bad); !errors.Is(err, kerr.CorruptMessage) {
		t.Fatalf("bad crc: %v", err)
	}
}
