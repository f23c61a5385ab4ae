package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/klassik/klassik/broker/storage/record"
)

// "accept gzip, snappy, lz4 and zstd batches as-is (the broker does not
// recompress unless a topic's compression.type demands it)" and "re-writing
// only the header fields Kafka rewrites; the CRC-32C ... recomputed only
// where Kafka would": with compression.type=producer and CreateTime, the
// stored batch differs from the client's only in baseOffset and
// partitionLeaderEpoch, which the CRC does not cover, so the CRC is the
// client's. A compressed batch whose payload is cut short (CRC fixed up to
// match) fails validation, which looks inside it, and leaves the log as it
// was.
func TestAppendCompressedBatchesAsIs(t *testing.T) {
	clock := newFakeClock()
	for _, codec := range []record.Codec{record.None, record.Gzip, record.Snappy, record.LZ4, record.Zstd} {
		t.Run(fmt.Sprint(codec), func(t *testing.T) {
			l := openTestLog(t, t.TempDir(), testConfig(), clock)
			defer l.Close()
			o := record.DefaultBuildOptions()
			o.Codec = codec
			o.BaseTimestamp = clock.Now().UnixMilli()
			var recs []record.Record
			for i := 0; i < 5; i++ {
				recs = append(recs, record.Record{OffsetDelta: int32(i), TimestampDelta: int64(i),
					Key: []byte(fmt.Sprint("k", i)), Value: bytes.Repeat([]byte{byte('a' + i)}, 200)})
			}
			client := record.Build(o, recs)
			// Move the log end so the assigned base offset is not 0.
			if _, err := l.AppendAsLeader(makeBatch(3, 10, o.BaseTimestamp, "first"), 7); err != nil {
				t.Fatal(err)
			}
			info, err := l.AppendAsLeader(append([]byte(nil), client...), 7)
			if err != nil {
				t.Fatalf("append: %v", err)
			}
			if info.FirstOffset != 3 || info.LastOffset != 7 {
				t.Fatalf("append info %+v", info)
			}
			stored := readAllBatches(t, l, 3)[0]
			if len(stored) != len(client) {
				t.Fatalf("stored %d bytes, client sent %d", len(stored), len(client))
			}
			if got := int64(binary.BigEndian.Uint64(stored[offBaseOffset:])); got != 3 {
				t.Fatalf("base offset %d", got)
			}
			if got := int32(binary.BigEndian.Uint32(stored[offLeaderEpoch:])); got != 7 {
				t.Fatalf("partition leader epoch %d", got)
			}
			// Everything else, the CRC included, is the client's.
			if !bytes.Equal(stored[offLength:offLeaderEpoch], client[offLength:offLeaderEpoch]) ||
				!bytes.Equal(stored[offMagic:], client[offMagic:]) {
				t.Fatal("the log rewrote bytes other than baseOffset and partitionLeaderEpoch")
			}
			h, err := record.ParseBatchHeader(stored)
			if err != nil || h.Compression() != codec || record.CheckCRC(stored) != nil {
				t.Fatalf("stored header %+v %v", h, err)
			}
			i := 0
			err = record.ForEachRecord(stored, func(r *record.Record) error {
				if string(r.Key) != fmt.Sprint("k", i) || !bytes.Equal(r.Value, recs[i].Value) || r.Offset(h) != 3+int64(i) {
					return fmt.Errorf("record %d: key %q offset %d", i, r.Key, r.Offset(h))
				}
				i++
				return nil
			})
			if err != nil || i != 5 {
				t.Fatalf("records: %v (%d)", err, i)
			}

			// A payload cut short with a matching CRC is refused.
			cut := append([]byte(nil), client[:len(client)-12]...)
			binary.BigEndian.PutUint32(cut[offLength:], uint32(len(cut)-12))
			binary.BigEndian.PutUint32(cut[offCRC:], batchCRC(cut))
			leo := l.LogEndOffset()
			if _, err := l.AppendAsLeader(cut, 7); err == nil {
				t.Fatal("a batch with a truncated payload was accepted")
			}
			if l.LogEndOffset() != leo || len(readAllBatches(t, l, 0)) != 2 {
				t.Fatal("the refused batch changed the log")
			}
		})
	}
}
