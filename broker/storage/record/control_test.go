package record

import (
	"bytes"
	"encoding/hex"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// goldenCommitBatch is the full v2 batch of one COMMIT marker, field by
// field as Kafka's DefaultRecordBatch and EndTransactionMarker write it
// (MemoryRecords.withEndTransactionMarker): base offset 42, partition
// leader epoch 7, producer 1000 epoch 5, coordinator epoch 3, timestamp
// 1700000000000. The CRC was computed independently (CRC-32C of the bytes
// from the attributes on).
var goldenCommitBatch = strings.Join([]string{
	"000000000000002a", // baseOffset 42
	"00000042",         // batchLength 66 (78 bytes in all minus the 12 of offset and length)
	"00000007",         // partitionLeaderEpoch 7
	"02",               // magic 2
	"0e5f7535",         // crc
	"0030",             // attributes: transactional (0x10) | control (0x20), CreateTime, no compression
	"00000000",         // lastOffsetDelta 0
	"0000018bcfe56800", // baseTimestamp 1700000000000
	"0000018bcfe56800", // maxTimestamp
	"00000000000003e8", // producerId 1000
	"0005",             // producerEpoch 5
	"ffffffff",         // baseSequence -1
	"00000001",         // records count 1
	// the control record
	"20",       // length 16 (zigzag varint)
	"00",       // attributes
	"00",       // timestampDelta 0
	"00",       // offsetDelta 0
	"08",       // key length 4
	"00000001", // key: version 0, type 1 (COMMIT)
	"0c",       // value length 6
	"0000",     // EndTransactionMarker version 0
	"00000003", // coordinatorEpoch 3
	"00",       // headers count 0
}, "")

func TestControlBatchGoldenBytes(t *testing.T) {
	want, err := hex.DecodeString(goldenCommitBatch)
	if err != nil {
		t.Fatal(err)
	}
	got := BuildControlBatch(42, 7, 1000, 5, ControlCommit, 3, 1700000000000)
	if !bytes.Equal(got, want) {
		t.Fatalf("control batch differs\n got %x\nwant %x", got, want)
	}
	if crc := crc32.Checksum(want[21:], crc32.MakeTable(crc32.Castagnoli)); crc != 0x0e5f7535 {
		t.Fatalf("golden CRC mismatch: %08x", crc)
	}

	// Read back by our parser and by franz-go's.
	h, err := ParseBatchHeader(want)
	if err != nil {
		t.Fatal(err)
	}
	if !h.IsControl() || !h.IsTransactional() || h.ProducerID != 1000 || h.ProducerEpoch != 5 ||
		h.BaseSequence != -1 || h.BaseOffset != 42 || h.PartitionLeaderEpoch != 7 || h.NumRecords != 1 {
		t.Fatalf("header %+v", h)
	}
	recs, err := Records(want)
	if err != nil || len(recs) != 1 {
		t.Fatalf("records %v %v", recs, err)
	}
	if v, typ, err := ParseControlKey(recs[0].Key); err != nil || v != 0 || typ != ControlCommit {
		t.Fatalf("control key %d %v %v", v, typ, err)
	}
	if v, ce, err := ParseEndTxnMarker(recs[0].Value); err != nil || v != 0 || ce != 3 {
		t.Fatalf("marker value %d %d %v", v, ce, err)
	}
	var kb kmsg.RecordBatch
	if err := kb.ReadFrom(want); err != nil || kb.Attributes != 0x30 || kb.ProducerID != 1000 {
		t.Fatalf("kmsg batch %+v %v", kb, err)
	}
	var key kmsg.ControlRecordKey
	if err := key.ReadFrom(recs[0].Key); err != nil || key.Type != kmsg.ControlRecordKeyTypeCommit {
		t.Fatalf("kmsg control key %+v %v", key, err)
	}
	var marker kmsg.EndTxnMarker
	if err := marker.ReadFrom(recs[0].Value); err != nil || marker.CoordinatorEpoch != 3 {
		t.Fatalf("kmsg end txn marker %+v %v", marker, err)
	}

	// ABORT differs only in the key's type and the CRC.
	abort := BuildControlBatch(42, 7, 1000, 5, ControlAbort, 3, 1700000000000)
	if err := CheckCRC(abort); err != nil {
		t.Fatal(err)
	}
	for i := range abort {
		if abort[i] != want[i] {
			if i >= 17 && i < 21 {
				continue // the CRC
			}
			if i != len(want)-9 {
				t.Errorf("ABORT batch differs at byte %d", i)
			}
		}
	}
	if abort[len(abort)-9] != 0 {
		t.Errorf("ABORT type byte %x", abort[len(abort)-9])
	}
}
