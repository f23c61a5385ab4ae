package main

import (
	"bytes"
	"encoding/binary"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klassik/klassik/broker/storage"
	"github.com/klassik/klassik/broker/storage/record"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const ts0 = int64(1700000000000)

// writeFixture creates a partition directory with a segment at base 0:
// a plain two-record batch (offsets 0-1), a gzip idempotent batch (2-4), a
// transactional batch (5) with its COMMIT marker (6), a batch with a gap
// left by compaction (8, 10 of 7-10), then 5 garbage bytes; plus .index,
// .timeindex, .txnindex and .snapshot files.
func writeFixture(t testing.TB, dir string) {
	t.Helper()
	var log []byte
	add := func(b []byte) int {
		pos := len(log)
		log = append(log, b...)
		return pos
	}
	o := record.DefaultBuildOptions()
	o.PartitionLeaderEpoch = 0
	o.BaseTimestamp = ts0
	add(record.Build(o, []record.Record{
		{Key: []byte("k1"), Value: []byte("hello")},
		{TimestampDelta: 5, OffsetDelta: 1, Value: []byte("world"), Headers: []record.Header{{Key: "h", Value: []byte("x")}, {Key: "trace"}}},
	}))
	o = record.DefaultBuildOptions()
	o.BaseOffset, o.PartitionLeaderEpoch, o.Codec = 2, 1, record.Gzip
	o.ProducerID, o.ProducerEpoch, o.BaseSequence = 4242, 0, 7
	o.BaseTimestamp = ts0 + 10
	p2 := add(record.Build(o, []record.Record{
		{Key: []byte("a"), Value: []byte("1")},
		{OffsetDelta: 1, TimestampDelta: 1, Key: []byte("b"), Value: nil},
		{OffsetDelta: 2, TimestampDelta: 2, Key: []byte("c"), Value: []byte("3")},
	}))
	o = record.DefaultBuildOptions()
	o.BaseOffset, o.PartitionLeaderEpoch, o.Transactional = 5, 1, true
	o.ProducerID, o.ProducerEpoch, o.BaseSequence = 77, 2, 0
	o.BaseTimestamp = ts0 + 20
	add(record.Build(o, []record.Record{{Key: []byte("t"), Value: []byte("txn")}}))
	add(record.BuildControlBatch(6, 1, 77, 2, record.ControlCommit, 3, ts0+21))
	o = record.DefaultBuildOptions()
	o.BaseOffset, o.PartitionLeaderEpoch, o.LastOffsetDelta = 7, 1, 3
	o.BaseTimestamp = ts0 + 30
	p4 := add(record.Build(o, []record.Record{
		{OffsetDelta: 1, Key: []byte("x"), Value: []byte("kept")},
		{OffsetDelta: 3, TimestampDelta: 4, Key: []byte("y"), Value: []byte("kept")},
	}))
	log = append(log, 1, 2, 3, 4, 5)
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("00000000000000000000.log", log)

	var idx []byte
	idx = binary.BigEndian.AppendUint32(idx, 4)
	idx = binary.BigEndian.AppendUint32(idx, uint32(p2))
	idx = binary.BigEndian.AppendUint32(idx, 10)
	idx = binary.BigEndian.AppendUint32(idx, uint32(p4))
	idx = append(idx, make([]byte, 16)...) // preallocated zero tail
	write("00000000000000000000.index", idx)

	var tidx []byte
	tidx = binary.BigEndian.AppendUint64(tidx, uint64(ts0+12))
	tidx = binary.BigEndian.AppendUint32(tidx, 4)
	tidx = binary.BigEndian.AppendUint64(tidx, uint64(ts0+34))
	tidx = binary.BigEndian.AppendUint32(tidx, 10)
	write("00000000000000000000.timeindex", tidx)

	var txn []byte
	txn = binary.BigEndian.AppendUint16(txn, 0)
	for _, v := range []int64{4242, 1000, 1009, 1010} {
		txn = binary.BigEndian.AppendUint64(txn, uint64(v))
	}
	write("00000000000000000000.txnindex", txn)

	m, err := storage.NewProducerStateManager(dir, storage.ProducerStateConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Append(log[:len(log)-5]); err != nil {
		t.Fatal(err)
	}
	if err := m.TakeSnapshot(); err != nil {
		t.Fatal(err)
	}
}

func runTool(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return out.String(), errOut.String(), code
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden %s: %v (run with -update to create)", name, err)
	}
	if got != string(want) {
		t.Fatalf("output differs from %s\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestDumpGolden(t *testing.T) {
	wd, _ := os.Getwd()
	dir := t.TempDir()
	writeFixture(t, dir)
	cases := []struct {
		golden string
		args   []string
	}{
		{"log_shallow.golden", []string{"--files", "00000000000000000000.log"}},
		{"log_deep.golden", []string{"--deep-iteration", "--files", "00000000000000000000.log"}},
		{"log_data.golden", []string{"--files", "00000000000000000000.log", "--print-data-log"}},
		{"index.golden", []string{"--files", "00000000000000000000.index"}},
		{"timeindex.golden", []string{"--files", "00000000000000000000.timeindex"}},
		{"snapshot_txnindex.golden", []string{"--files", "00000000000000000011.snapshot,00000000000000000000.txnindex"}},
		{"sanity.golden", []string{"--index-sanity-check", "--files", "00000000000000000000.index,00000000000000000000.timeindex"}},
	}
	for _, c := range cases {
		t.Run(c.golden, func(t *testing.T) {
			t.Chdir(dir)
			out, errOut, code := runTool(t, c.args...)
			t.Chdir(wd)
			if code != 0 {
				t.Fatalf("exit %d, stderr %s", code, errOut)
			}
			checkGolden(t, c.golden, out)
			if c.golden == "log_deep.golden" && !strings.Contains(errOut, "Non-consecutive offsets in") ||
				c.golden == "log_deep.golden" && !strings.Contains(errOut, "  8 is followed by 10\n  6 is followed by 8") {
				t.Fatalf("compaction gap not reported: %q", errOut)
			}
			if c.golden == "index.golden" && errOut != "" {
				t.Fatalf("index entries point at the right batches, yet: %q", errOut)
			}
		})
	}
}

func TestDumpIndexMismatchReported(t *testing.T) {
	dir := t.TempDir()
	writeFixture(t, dir)
	p := filepath.Join(dir, "00000000000000000000.index")
	b, _ := os.ReadFile(p)
	binary.BigEndian.PutUint32(b, 3) // entry says offset 3, batch ends at 4
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runTool(t, "--verify-index-only", "--files", p)
	if code != 0 || strings.Contains(out, "offset: 3 position") {
		t.Fatalf("verify-only printed entries or failed: %d %q", code, out)
	}
	if !strings.Contains(errOut, "Mismatches in :"+p) || !strings.Contains(errOut, "  Index offset: 3, log offset: 4") {
		t.Fatalf("stderr %q", errOut)
	}
}

func TestDumpRefusesUnknownFiles(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "leader-epoch-checkpoint")
	if err := os.WriteFile(p, []byte("0\n0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runTool(t, "--files", p)
	if code != 1 || !strings.Contains(errOut, "Ignoring unknown file "+p) {
		t.Fatalf("exit %d stderr %q", code, errOut)
	}
	if _, errOut, code := runTool(t); code != 1 || !strings.Contains(errOut, `Missing required argument "[files]"`) {
		t.Fatalf("no --files: exit %d stderr %q", code, errOut)
	}
	if _, _, code := runTool(t, "--files", filepath.Join(dir, "00000000000000000000.log")); code != 1 {
		t.Fatal("a missing file must fail")
	}
}

func TestOffsetsDecoder(t *testing.T) {
	key := (&kmsg.OffsetCommitKey{Version: 1, Group: "g1", Topic: "t", Partition: 0}).AppendTo(nil)
	val := (&kmsg.OffsetCommitValue{Version: 3, Offset: 42, Metadata: "", CommitTimestamp: ts0}).AppendTo(nil)
	val2 := (&kmsg.OffsetCommitValue{Version: 3, Offset: 43, Metadata: "m", CommitTimestamp: ts0}).AppendTo(nil)
	gkey := (&kmsg.GroupMetadataKey{Version: 2, Group: "g1"}).AppendTo(nil)
	assign := (&kmsg.ConsumerMemberAssignment{Topics: []kmsg.ConsumerMemberAssignmentTopic{{Topic: "t", Partitions: []int32{0, 1}}}}).AppendTo(nil)
	proto, leader := "range", "m1"
	gval := (&kmsg.GroupMetadataValue{Version: 3, ProtocolType: "consumer", Generation: 1, Protocol: &proto, Leader: &leader,
		Members: []kmsg.GroupMetadataValueMember{{MemberID: "m1", ClientID: "c", ClientHost: "/127.0.0.1", Assignment: assign}}}).AppendTo(nil)
	o := record.DefaultBuildOptions()
	o.BaseTimestamp = ts0
	b := record.Build(o, []record.Record{
		{Key: key, Value: val}, {OffsetDelta: 1, Key: key, Value: val2}, {OffsetDelta: 2, Key: key},
		{OffsetDelta: 3, Key: gkey, Value: gval}, {OffsetDelta: 4, Key: gkey},
	})
	checkDecoded(t, b, "--offsets-decoder", []string{
		"key: offset_commit::group=g1,partition=t-0 payload: offset=42\n",
		"key: offset_commit::group=g1,partition=t-0 payload: offset=43,metadata=m\n",
		"key: offset_commit::group=g1,partition=t-0 payload: <DELETE>\n",
		`key: group_metadata::group=g1 payload: {"protocolType":"consumer","protocol":"range","generationId":1,"assignment":"{m1=[t-0, t-1]}"}` + "\n",
		"key: group_metadata::group=g1 payload: <DELETE>\n",
	})
}

func TestTransactionLogDecoder(t *testing.T) {
	key := (&kmsg.TxnMetadataKey{TransactionalID: "kafka-txn-0"}).AppendTo(nil)
	val := (&kmsg.TxnMetadataValue{ProducerID: 1, ProducerEpoch: 0, TimeoutMillis: 60000, State: 1,
		Topics:              []kmsg.TxnMetadataValueTopic{{Topic: "output-topic", Partitions: []int32{0, 2}}},
		LastUpdateTimestamp: ts0, StartTimestamp: ts0}).AppendTo(nil)
	o := record.DefaultBuildOptions()
	o.BaseTimestamp = ts0
	empty := (&kmsg.TxnMetadataValue{ProducerID: 1, ProducerEpoch: 1, TimeoutMillis: 60000, State: 0,
		Topics:              []kmsg.TxnMetadataValueTopic{{Topic: "output-topic", Partitions: []int32{0}}},
		LastUpdateTimestamp: ts0, StartTimestamp: -1}).AppendTo(nil)
	b := record.Build(o, []record.Record{{Key: key, Value: val}, {OffsetDelta: 1, Key: key}, {OffsetDelta: 2, Key: key, Value: empty}})
	// Kafka 2.8 prints the partitions in its hash set's order: buckets of
	// a 16-slot table by improved hashCode, output-topic-2 in bucket 3
	// before output-topic-0 in bucket 5.
	checkDecoded(t, b, "--transaction-log-decoder", []string{
		"key: transaction_metadata::transactionalId=kafka-txn-0 payload: producerId:1,producerEpoch:0,state=Ongoing,partitions=[output-topic-2,output-topic-0],txnLastUpdateTimestamp=1700000000000,txnTimeoutMs=60000\n",
		"key: transaction_metadata::transactionalId=kafka-txn-0 payload: <DELETE>\n",
		// An Empty value's partitions are not read (Kafka 2.8's readTxnRecordValue).
		"key: transaction_metadata::transactionalId=kafka-txn-0 payload: producerId:1,producerEpoch:1,state=Empty,partitions=[],txnLastUpdateTimestamp=1700000000000,txnTimeoutMs=60000\n",
	})
}

// checkDecoded dumps segment bytes b with the decoder flag and fails unless
// every wanted line is printed.
func checkDecoded(t *testing.T, b []byte, flag string, want []string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "00000000000000000000.log")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runTool(t, flag, "--files", p)
	if code != 0 {
		t.Fatalf("exit %d %s", code, errOut)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("missing %q in\n%s", w, out)
		}
	}
}
