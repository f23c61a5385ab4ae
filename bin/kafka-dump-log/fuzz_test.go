package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// FuzzFormatOffsetsRecord: the __consumer_offsets and __transaction_state
// decoders never panic on
// any key/value, and a decoded key always yields a payload.
func FuzzFormatOffsetsRecord(f *testing.F) {
	f.Add((&kmsg.OffsetCommitKey{Version: 1, Group: "g", Topic: "t"}).AppendTo(nil),
		(&kmsg.OffsetCommitValue{Version: 3, Offset: 1}).AppendTo(nil))
	f.Add((&kmsg.GroupMetadataKey{Version: 2, Group: "g"}).AppendTo(nil),
		(&kmsg.GroupMetadataValue{Version: 3, ProtocolType: "consumer",
			Members: []kmsg.GroupMetadataValueMember{{MemberID: "m", Assignment: []byte{0, 0, 0, 0, 0, 1}}}}).AppendTo(nil))
	f.Add([]byte{0, 9}, []byte(nil))
	f.Add((&kmsg.TxnMetadataKey{TransactionalID: "t"}).AppendTo(nil),
		(&kmsg.TxnMetadataValue{State: 2, Topics: []kmsg.TxnMetadataValueTopic{{Topic: "x", Partitions: []int32{1}}}}).AppendTo(nil))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		k, v, err := formatOffsetsRecord(key, value)
		if err == nil && (k == "" || v == "") {
			t.Fatalf("decoded key %q without payload %q", k, v)
		}
		k, v, err = formatTxnLogRecord(key, value)
		if err == nil && (k == "" || v == "") {
			t.Fatalf("decoded txn key %q without payload %q", k, v)
		}
	})
}

// FuzzDumpFiles: dumping arbitrary bytes as a segment, index, time index,
// snapshot or txn index never panics, and a .log dump always starts with
// the "Dumping" and "Starting offset" lines.
func FuzzDumpFiles(f *testing.F) {
	dir := f.TempDir()
	writeFixture(f, dir)
	for _, name := range []string{"00000000000000000000.log", "00000000000000000000.index", "00000000000000000011.snapshot"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := t.TempDir()
		var names []string
		for _, suffix := range []string{".log", ".index", ".timeindex", ".snapshot", ".txnindex"} {
			p := filepath.Join(d, "00000000000000000000"+suffix)
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			names = append(names, p)
		}
		for _, p := range names {
			var out, errOut bytes.Buffer
			run([]string{"--print-data-log", "--files", p}, &out, &errOut)
			if filepath.Ext(p) == ".log" && !bytes.HasPrefix(out.Bytes(), []byte("Dumping "+p+"\nStarting offset: 0\n")) {
				t.Fatalf("log dump starts with %q", out.String())
			}
		}
	})
}
