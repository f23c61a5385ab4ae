package txn

import (
	"bytes"
	"errors"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/common/hextest"
	"github.com/klassik/klassik/broker/common/jvm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// golden compares got with testdata/name (hex, one value per file).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	hextest.Golden(t, filepath.Join("testdata", name), got, *update)
}

func sampleOngoing() Value {
	return Value{ProducerID: 1000, ProducerEpoch: 2, TimeoutMs: 60000, State: Ongoing,
		Partitions:   []common.TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}},
		LastUpdateMs: 1700000000000, StartMs: 1699999999000}
}

// The key and value bytes, worked out by hand from TransactionLogKey.json
// and TransactionLogValue.json (version 0, classic encoding: int16
// string lengths, int32 array lengths, -1 for a null array), then pinned
// in testdata/ and decoded with kmsg's TxnMetadataKey/TxnMetadataValue.
func TestRecordGoldenBytes(t *testing.T) {
	key := EncodeKey("txn-1")
	// version 0 | "txn-1" (length 5)
	if want := hextest.Decode(t, "0000 0005 74786e2d31"); !bytes.Equal(key, want) {
		t.Errorf("key %x, want %x", key, want)
	}
	ongoing := EncodeValue(sampleOngoing())
	// version 0 | producer_id 1000 | epoch 2 | timeout 60000 | status 1 |
	// 1 topic: "t", [0, 1] | last update 1700000000000 | start 1699999999000
	want := hextest.Decode(t, "0000 00000000000003e8 0002 0000ea60 01"+
		" 00000001 0001 74 00000002 00000000 00000001"+
		" 0000018bcfe56800 0000018bcfe56418")
	if !bytes.Equal(ongoing, want) {
		t.Errorf("ongoing value %x, want %x", ongoing, want)
	}
	empty := EncodeValue(Value{ProducerID: 1000, ProducerEpoch: 0, TimeoutMs: 60000, State: Empty,
		LastUpdateMs: 1700000000000, StartMs: -1})
	// An Empty value has a null partition array (-1) and start -1.
	if want := hextest.Decode(t, "0000 00000000000003e8 0000 0000ea60 00 ffffffff 0000018bcfe56800 ffffffffffffffff"); !bytes.Equal(empty, want) {
		t.Errorf("empty value %x, want %x", empty, want)
	}
	golden(t, "key_v0.hex", key)
	golden(t, "value_v0_ongoing.hex", ongoing)
	golden(t, "value_v0_empty.hex", empty)

	// kmsg reads the same bytes as the same fields.
	var kk kmsg.TxnMetadataKey
	if err := kk.ReadFrom(key); err != nil || kk.Version != 0 || kk.TransactionalID != "txn-1" {
		t.Errorf("kmsg key: %+v %v", kk, err)
	}
	var kv kmsg.TxnMetadataValue
	if err := kv.ReadFrom(ongoing); err != nil {
		t.Fatalf("kmsg value: %v", err)
	}
	if kv.Version != 0 || kv.ProducerID != 1000 || kv.ProducerEpoch != 2 || kv.TimeoutMillis != 60000 || kv.State != 1 ||
		len(kv.Topics) != 1 || kv.Topics[0].Topic != "t" || len(kv.Topics[0].Partitions) != 2 ||
		kv.LastUpdateTimestamp != 1700000000000 || kv.StartTimestamp != 1699999999000 {
		t.Errorf("kmsg value: %+v", kv)
	}
	if err := kv.ReadFrom(empty); err != nil || len(kv.Topics) != 0 || kv.State != 0 || kv.StartTimestamp != -1 {
		t.Errorf("kmsg empty value: %+v %v", kv, err)
	}
	// And kmsg's encoding of version 0 is byte for byte ours.
	kv.ReadFrom(ongoing)
	if got := kv.AppendTo(nil); !bytes.Equal(got, ongoing) {
		t.Errorf("kmsg re-encoding %x, want %x", got, ongoing)
	}
}

func TestRecordRoundTrip(t *testing.T) {
	id, err := DecodeKey(EncodeKey("é-\U0001F600"))
	if err != nil || id != "é-\U0001F600" {
		t.Fatalf("key round trip: %q %v", id, err)
	}
	for _, v := range []Value{sampleOngoing(),
		{ProducerID: 7, ProducerEpoch: 32767, TimeoutMs: 1, State: PrepareAbort, StartMs: 5, LastUpdateMs: 6,
			Partitions: []common.TopicPartition{{Topic: "a", Partition: 3}, {Topic: "b", Partition: 0}, {Topic: "a", Partition: 1}}},
		{ProducerID: 7, State: CompleteCommit, StartMs: 5, LastUpdateMs: 6},
	} {
		got, err := DecodeValue(EncodeValue(v))
		if err != nil {
			t.Fatal(err)
		}
		// Encoding groups by topic in order of first appearance.
		want := v
		if len(v.Partitions) == 3 {
			want.Partitions = []common.TopicPartition{{Topic: "a", Partition: 3}, {Topic: "a", Partition: 1}, {Topic: "b", Partition: 0}}
		}
		if got.ProducerID != want.ProducerID || got.ProducerEpoch != want.ProducerEpoch || got.State != want.State ||
			got.StartMs != want.StartMs || got.LastUpdateMs != want.LastUpdateMs || got.TimeoutMs != want.TimeoutMs ||
			len(got.Partitions) != len(want.Partitions) {
			t.Fatalf("round trip: got %+v, want %+v", got, want)
		}
		for i := range got.Partitions {
			if got.Partitions[i] != want.Partitions[i] {
				t.Fatalf("round trip partitions: got %v, want %v", got.Partitions, want.Partitions)
			}
		}
	}
}

// The text kafka-dump-log.sh --transaction-log-decoder prints for a
// record (DumpLogSegments prints "key: K payload: V").
func TestFormatRecordKeyAndValue(t *testing.T) {
	k, v, err := FormatRecordKeyAndValue(EncodeKey("txn-1"), EncodeValue(sampleOngoing()))
	if err != nil {
		t.Fatal(err)
	}
	if want := "transaction_metadata::transactionalId=txn-1"; k != want {
		t.Errorf("key text %q, want %q", k, want)
	}
	// TopicPartition hash codes: t-0 = 31*31+116 = 1077 (bucket 5 of 16),
	// t-1 = 31*32+116 = 1108 (bucket 4): Kafka's set prints t-1 first.
	if want := "producerId:1000,producerEpoch:2,state=Ongoing,partitions=[t-1,t-0],txnLastUpdateTimestamp=1700000000000,txnTimeoutMs=60000"; v != want {
		t.Errorf("value text %q, want %q", v, want)
	}
	_, v, err = FormatRecordKeyAndValue(EncodeKey("txn-1"), nil)
	if err != nil || v != "<DELETE>" {
		t.Errorf("tombstone text %q %v", v, err)
	}
	if _, _, err := FormatRecordKeyAndValue(nil, nil); !errors.Is(err, ErrMalformed) {
		t.Errorf("null key: %v", err)
	}
	if _, _, err := FormatRecordKeyAndValue(EncodeKey("x"), []byte{0, 1}); !errors.Is(err, ErrMalformed) {
		t.Errorf("value version 1: %v", err)
	}
}

// The print order of scala.collection.mutable.HashSet (Scala 2.13, which
// Kafka 2.8 is built with): by bucket of the improved hash, then by hash;
// the table grows from 16 as partitions are added.
func TestScalaHashSetOrder(t *testing.T) {
	var parts []common.TopicPartition
	for p := int32(0); p < 20; p++ {
		parts = append(parts, common.TopicPartition{Topic: "orders", Partition: p})
	}
	got := scalaHashSetOrder(parts)
	if len(got) != 20 {
		t.Fatalf("got %d partitions", len(got))
	}
	// With 20 elements of one topic the size hint makes the table 32
	// long; TopicPartition hashes of one topic differ by 31 per partition.
	const tableLen = 32
	prevBucket, prevHash := int32(-1), int32(0)
	for _, tp := range got {
		h := jvm.TopicPartitionHashCode(tp.Topic, tp.Partition)
		h ^= int32(uint32(h) >> 16)
		b := h & (tableLen - 1)
		if b < prevBucket || (b == prevBucket && h < prevHash) {
			t.Fatalf("order %v not by (bucket, hash) at %v", got, tp)
		}
		prevBucket, prevHash = b, h
	}
	// Values printed by Java's String.hashCode (jshell), a surrogate pair
	// included.
	if h := jvm.StringHashCode("orders"); h != -1008770331 {
		t.Errorf(`"orders".hashCode() = %d, want -1008770331`, h)
	}
	if h := jvm.StringHashCode("é-\U0001F600"); h != 8757447 {
		t.Errorf(`"é-😀".hashCode() = %d, want 8757447`, h)
	}
}

func TestPartitionFor(t *testing.T) {
	// Java: "a".hashCode() = 97; Math.abs(Integer.MIN_VALUE) is mapped to 0.
	if got := jvm.PartitionFor("a", 50); got != 47 {
		t.Errorf("partitionFor(a) = %d, want 47", got)
	}
	// "polygenelubricants".hashCode() == Integer.MIN_VALUE.
	if got := jvm.PartitionFor("polygenelubricants", 50); got != 0 {
		t.Errorf("partitionFor(MIN_VALUE hash) = %d, want 0", got)
	}
	if jvm.StringHashCode("polygenelubricants") != -1<<31 {
		t.Errorf("hash = %d", jvm.StringHashCode("polygenelubricants"))
	}
}

// FuzzDecode checks the record decoders on arbitrary input. Invariants:
// they never panic; a key or value they accept re-encodes to a prefix of
// the input (Kafka's reader ignores trailing bytes) that decodes to the
// same thing; the dump-log formatter agrees with the decoders.
func FuzzDecode(f *testing.F) {
	f.Add(EncodeKey("txn-1"), EncodeValue(sampleOngoing()))
	f.Add(EncodeKey(""), EncodeValue(Value{State: Empty, StartMs: -1}))
	f.Add([]byte{0, 0, 0xff, 0xff}, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9})
	f.Add([]byte{0, 1}, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		id, kerr := DecodeKey(key)
		if kerr == nil {
			enc := EncodeKey(id)
			if !bytes.HasPrefix(key, enc) {
				t.Fatalf("key %x decoded to %q which encodes to %x", key, id, enc)
			}
		} else if !errors.Is(kerr, ErrMalformed) {
			t.Fatalf("key error %v does not wrap ErrMalformed", kerr)
		}
		v, verr := DecodeValue(value)
		if verr == nil {
			again, err := DecodeValue(EncodeValue(v))
			if err != nil || again.ProducerID != v.ProducerID || again.State != v.State || len(again.Partitions) != len(v.Partitions) {
				t.Fatalf("value %x: re-decoding %+v gave %+v %v", value, v, again, err)
			}
		} else if !errors.Is(verr, ErrMalformed) {
			t.Fatalf("value error %v does not wrap ErrMalformed", verr)
		}
		_, _, ferr := FormatRecordKeyAndValue(key, value)
		if (ferr == nil) != (kerr == nil && verr == nil) {
			t.Fatalf("format error %v, key error %v, value error %v", ferr, kerr, verr)
		}
	})
}

// Print orders of Kafka's decoded partition sets. The expected lists
// were printed by a line-by-line Java transcription of Scala 2.13's
// mutable.HashSet (add, addAll with its size hint, growTable, the
// iterator), fed the same partitions one topic at a time as Kafka's
// readTxnRecordValue adds them; the Go emulation also agreed with it on
// 300 random partition sets.
func TestScalaHashSetOrderCases(t *testing.T) {
	tps := func(topic string, ps ...int32) []common.TopicPartition {
		var out []common.TopicPartition
		for _, p := range ps {
			out = append(out, common.TopicPartition{Topic: topic, Partition: p})
		}
		return out
	}
	cat := func(groups ...[]common.TopicPartition) []common.TopicPartition {
		var out []common.TopicPartition
		for _, g := range groups {
			out = append(out, g...)
		}
		return out
	}
	for _, tc := range []struct {
		parts []common.TopicPartition
		want  string
	}{
		{tps("t", 0, 1), "t-1,t-0"},
		{tps("orders", 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19),
			"orders-7,orders-8,orders-9,orders-10,orders-11,orders-12,orders-13,orders-14,orders-15,orders-16," +
				"orders-17,orders-18,orders-19,orders-0,orders-1,orders-2,orders-3,orders-4,orders-5,orders-6"},
		{cat(tps("a", 0), tps("b", 0), tps("c", 1, 2), tps("d", 0, 1, 2, 3), tps("e", 5), tps("f", 0), tps("g", 0),
			tps("h", 0), tps("i", 0), tps("j", 0), tps("k", 0), tps("l", 0), tps("m", 0)),
			"e-5,a-0,c-2,d-3,b-0,c-1,d-2,d-1,d-0,f-0,g-0,h-0,i-0,j-0,k-0,l-0,m-0"},
		{cat(tps("__consumer_offsets", 17), tps("t", 0, 1, 2, 3, 4, 5), tps("u", 9)),
			"t-5,t-4,t-3,t-2,t-1,t-0,u-9,__consumer_offsets-17"},
	} {
		var names []string
		for _, tp := range scalaHashSetOrder(tc.parts) {
			names = append(names, tp.String())
		}
		if got := strings.Join(names, ","); got != tc.want {
			t.Errorf("order of %v:\n got %s\nwant %s", tc.parts, got, tc.want)
		}
	}
}
