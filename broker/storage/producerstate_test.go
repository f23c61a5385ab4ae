package storage

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/klassik/klassik/broker/storage/record"
	"github.com/twmb/franz-go/pkg/kerr"
)

// psBatch builds an appended data batch: n records at offset base with
// sequences from seq.
func psBatch(pid int64, epoch int16, seq int32, base int64, n int, txn bool) []byte {
	o := record.DefaultBuildOptions()
	o.BaseOffset = base
	o.ProducerID, o.ProducerEpoch, o.BaseSequence = pid, epoch, seq
	o.Transactional = txn
	o.BaseTimestamp = 1700000000000 + base
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = record.Record{OffsetDelta: int32(i), Key: []byte("k"), Value: []byte("v")}
	}
	return record.Build(o, recs)
}

func psHeader(t *testing.T, b []byte) record.BatchHeader {
	t.Helper()
	h, err := record.ParseBatchHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func newTestPSM(t *testing.T) *ProducerStateManager {
	t.Helper()
	m, err := NewProducerStateManager(t.TempDir(), ProducerStateConfig{ExpirationMs: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// mustAppend checks (as a client) and then applies a batch.
func mustAppend(t *testing.T, m *ProducerStateManager, b []byte) []CompletedTxn {
	t.Helper()
	dup, err := m.CheckAppend(b, OriginClient)
	if err != nil || dup != nil {
		t.Fatalf("check: dup %v err %v", dup, err)
	}
	txns, err := m.Append(b)
	if err != nil {
		t.Fatal(err)
	}
	return txns
}

// "a batch whose epoch is lower than the stored epoch → INVALID_PRODUCER_EPOCH;
// with the same epoch the batch's baseSequence must equal lastSequence + 1;
// with a new (higher) epoch the sequence must be 0".
func TestProducerSequenceAndEpochRules(t *testing.T) {
	m := newTestPSM(t)
	// Unknown producer: any sequence is accepted (KIP-360).
	mustAppend(t, m, psBatch(1, 3, 17, 0, 3, false))
	if e := m.LastEntry(1); e == nil || e.LastSeq() != 19 || e.LastDataOffset() != 2 || e.ProducerEpoch != 3 {
		t.Fatalf("entry %+v", e)
	}
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"gap", psBatch(1, 3, 21, 3, 1, false), kerr.OutOfOrderSequenceNumber},
		{"old epoch", psBatch(1, 2, 20, 3, 1, false), kerr.InvalidProducerEpoch},
		{"new epoch nonzero seq", psBatch(1, 4, 5, 3, 1, false), kerr.OutOfOrderSequenceNumber},
	}
	for _, c := range cases {
		if _, err := m.CheckAppend(c.b, OriginClient); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v want %v", c.name, err, c.want)
		}
		// Replication never fails and checking never changes state.
		if _, err := m.CheckAppend(c.b, OriginReplication); err != nil {
			t.Errorf("%s: replication check failed: %v", c.name, err)
		}
	}
	if m.LastEntry(1).LastSeq() != 19 {
		t.Fatal("a failed check changed the state")
	}
	mustAppend(t, m, psBatch(1, 3, 20, 3, 1, false))
	mustAppend(t, m, psBatch(1, 4, 0, 4, 2, false)) // new epoch restarts at 0
	if e := m.LastEntry(1); e.ProducerEpoch != 4 || len(e.Batches) != 1 || e.LastSeq() != 1 {
		t.Fatalf("after epoch bump %+v", e)
	}
	// Two batches of the same producer in one append are checked in order.
	two := append(psBatch(1, 4, 2, 6, 1, false), psBatch(1, 4, 3, 7, 1, false)...)
	if _, err := m.CheckAppend(two, OriginClient); err != nil {
		t.Fatalf("consecutive batches in one append: %v", err)
	}
	bad := append(psBatch(1, 4, 2, 6, 1, false), psBatch(1, 4, 4, 7, 1, false)...)
	if _, err := m.CheckAppend(bad, OriginClient); !errors.Is(err, kerr.OutOfOrderSequenceNumber) {
		t.Fatalf("gap inside one append: %v", err)
	}
	// Sequence wraps from MaxInt32 to 0.
	mustAppend(t, m, psBatch(9, 0, 2147483646, 20, 2, false))
	mustAppend(t, m, psBatch(9, 0, 0, 22, 1, false))
}

// "a batch whose (producer, epoch, first/last sequence) equals one of the
// last 5 batches remembered for the producer is not appended; the produce
// response returns the original base offset".
func TestProducerDuplicateDetection(t *testing.T) {
	m := newTestPSM(t)
	var batches [][]byte
	for i := 0; i < 6; i++ {
		b := psBatch(7, 0, int32(i*2), int64(100+i*2), 2, false)
		batches = append(batches, b)
		mustAppend(t, m, b)
	}
	for i := 1; i < 6; i++ {
		retry := psBatch(7, 0, int32(i*2), 0, 2, false) // resent, offsets not assigned
		dup, err := m.CheckAppend(retry, OriginClient)
		if err != nil || dup == nil || dup.FirstOffset != int64(100+i*2) || dup.LastOffset != int64(101+i*2) ||
			dup.Timestamp != 1700000000000+int64(100+i*2) {
			t.Fatalf("batch %d: dup %+v err %v", i, dup, err)
		}
	}
	// The oldest of six is forgotten: it is now out of order, not a duplicate.
	if dup, err := m.CheckAppend(psBatch(7, 0, 0, 0, 2, false), OriginClient); dup != nil || !errors.Is(err, kerr.OutOfOrderSequenceNumber) {
		t.Fatalf("sixth-oldest batch: dup %v err %v", dup, err)
	}
	// Same range with another epoch is not a duplicate.
	if dup, _ := m.CheckAppend(psBatch(7, 1, 10, 0, 2, false), OriginClient); dup != nil {
		t.Fatal("duplicate across epochs")
	}
	// Single-batch Check agrees.
	b := psBatch(7, 0, 10, 0, 2, false)
	if dup, err := m.Check(b, psHeader(t, b), OriginClient); err != nil || dup == nil || dup.FirstOffset != 110 {
		t.Fatalf("Check: %v %v", dup, err)
	}
}

func TestProducerTransactions(t *testing.T) {
	m := newTestPSM(t)
	mustAppend(t, m, psBatch(1, 0, 0, 10, 2, true))
	mustAppend(t, m, psBatch(2, 0, 0, 12, 1, true))
	if off, ok := m.FirstUnstableOffset(); !ok || off != 10 {
		t.Fatalf("first unstable %d %v", off, ok)
	}
	if _, err := m.CheckAppend(psBatch(1, 0, 2, 0, 1, false), OriginClient); !errors.Is(err, kerr.InvalidTxnState) {
		t.Fatalf("non-transactional write in a transaction: %v", err)
	}
	abort := record.BuildControlBatch(13, 0, 1, 0, record.ControlAbort, 5, 1700000000013)
	if _, err := m.CheckAppend(abort, OriginCoordinator); err != nil {
		t.Fatal(err)
	}
	txns, err := m.Append(abort)
	if err != nil {
		t.Fatal(err)
	}
	want := []CompletedTxn{{ProducerID: 1, FirstOffset: 10, LastOffset: 13, IsAborted: true, LastStableOffset: 12}}
	if !reflect.DeepEqual(txns, want) {
		t.Fatalf("completed %+v", txns)
	}
	if m.MapEndOffset() != 14 {
		t.Fatalf("map end %d", m.MapEndOffset())
	}
	// Decided but not yet replicated: still unstable until the HW passes the marker.
	if off, _ := m.FirstUnstableOffset(); off != 10 {
		t.Fatalf("first unstable %d", off)
	}
	m.OnHighWatermarkUpdated(14)
	if off, _ := m.FirstUnstableOffset(); off != 12 {
		t.Fatalf("first unstable after HW %d", off)
	}
	// A zombie coordinator (older coordinator epoch) is fenced.
	zombie := record.BuildControlBatch(14, 0, 1, 0, record.ControlCommit, 4, 0)
	if _, err := m.CheckAppend(zombie, OriginCoordinator); !errors.Is(err, kerr.TransactionCoordinatorFenced) {
		t.Fatalf("zombie marker: %v", err)
	}
	commit := record.BuildControlBatch(14, 0, 2, 0, record.ControlCommit, 1, 0)
	txns, _ = m.Append(commit)
	if len(txns) != 1 || txns[0].IsAborted || txns[0].LastStableOffset != 15 {
		t.Fatalf("commit %+v", txns)
	}
	m.OnHighWatermarkUpdated(15)
	if _, ok := m.FirstUnstableOffset(); ok {
		t.Fatal("no transaction should be open")
	}
}

// A version 1 snapshot of one producer (id 4242, epoch 0, offsets
// 1000-1009, sequences 0-9) as Kafka writes it, byte for byte.
func TestProducerSnapshotGolden(t *testing.T) {
	want, err := hex.DecodeString("0001284b096e00000001000000000000" +
		"10920000000000090000000000000" + "3f1" +
		"00000009000001" + "8bcfe56800" + "ffffffff" +
		"ffffffffffffffff")
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 56 {
		t.Fatalf("golden is %d bytes", len(want))
	}
	m := newTestPSM(t)
	// Producer 4242, epoch 0, last batch offsets 1000-1009, sequences 0-9.
	o := record.DefaultBuildOptions()
	o.BaseOffset, o.ProducerID, o.ProducerEpoch, o.BaseSequence = 1000, 4242, 0, 0
	o.BaseTimestamp = 1700000000000
	recs := make([]record.Record, 10)
	for i := range recs {
		recs[i] = record.Record{OffsetDelta: int32(i), Key: []byte("k")}
	}
	mustAppend(t, m, record.Build(o, recs))
	if err := m.TakeSnapshot(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(m.Dir(), "00000000000000001010.snapshot")
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("snapshot bytes\n got %x\nwant %x", got, want)
	}
	entries, err := DecodeProducerSnapshot(want)
	if err != nil || len(entries) != 1 || entries[0].ProducerID != 4242 || entries[0].LastSeq() != 9 ||
		entries[0].LastDataOffset() != 1009 || entries[0].Batches[0].FirstOffset() != 1000 {
		t.Fatalf("decoded %+v %v", entries, err)
	}
}

func TestProducerSnapshotReload(t *testing.T) {
	m := newTestPSM(t)
	mustAppend(t, m, psBatch(1, 0, 0, 0, 5, false))
	mustAppend(t, m, psBatch(2, 1, 0, 5, 5, true))
	if err := m.TakeSnapshot(); err != nil { // at 10
		t.Fatal(err)
	}
	mustAppend(t, m, psBatch(1, 0, 5, 10, 5, false))
	if err := m.TakeSnapshot(); err != nil { // at 15
		t.Fatal(err)
	}
	if got := m.Snapshots(); !reflect.DeepEqual(got, []int64{10, 15}) {
		t.Fatalf("snapshots %v", got)
	}
	if err := m.TakeSnapshot(); err != nil || len(m.Snapshots()) != 2 {
		t.Fatal("a snapshot at the same offset must not be rewritten")
	}

	// Truncate to 12: snapshot 15 goes, state reloads from 10, the caller replays.
	now := int64(1700000000000)
	if err := m.TruncateAndReload(0, 12, now); err != nil {
		t.Fatal(err)
	}
	if m.MapEndOffset() != 10 || !reflect.DeepEqual(m.Snapshots(), []int64{10}) {
		t.Fatalf("map end %d snapshots %v", m.MapEndOffset(), m.Snapshots())
	}
	if e := m.LastEntry(1); e == nil || e.LastSeq() != 4 {
		t.Fatalf("producer 1 after reload %+v", e)
	}
	if off, ok := m.FirstUnstableOffset(); !ok || off != 5 {
		t.Fatal("open transaction must survive a snapshot")
	}

	// A fresh manager on the same directory; corrupt newest snapshot is
	// deleted and the older one used.
	if err := WriteProducerSnapshot(ProducerSnapshotPath(m.Dir(), 11), nil); err != nil {
		t.Fatal(err)
	}
	p11 := ProducerSnapshotPath(m.Dir(), 11)
	b, _ := os.ReadFile(p11)
	b[7] ^= 1
	if err := os.WriteFile(p11, b, 0o644); err != nil {
		t.Fatal(err)
	}
	m2, err := NewProducerStateManager(m.Dir(), ProducerStateConfig{ExpirationMs: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if err := m2.TruncateAndReload(0, 12, now); err != nil {
		t.Fatal(err)
	}
	if m2.MapEndOffset() != 10 || m2.LastEntry(2) == nil {
		t.Fatalf("map end %d", m2.MapEndOffset())
	}
	if _, err := os.Stat(p11); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("corrupt snapshot not deleted")
	}
	// Expired producers (no open transaction) are not loaded.
	m3, _ := NewProducerStateManager(m.Dir(), ProducerStateConfig{ExpirationMs: 1000})
	if err := m3.TruncateAndReload(0, 12, now+10_000); err != nil {
		t.Fatal(err)
	}
	if m3.LastEntry(1) != nil || m3.LastEntry(2) == nil {
		t.Fatal("expiry at load wrong")
	}
	m3.RemoveExpiredProducers(now + 10_000)
	if m3.LastEntry(2) == nil {
		t.Fatal("a producer with an open transaction never expires")
	}
	// Producers whose data is entirely below the log start offset are
	// dropped when it moves and when loading.
	m4, _ := NewProducerStateManager(m.Dir(), ProducerStateConfig{ExpirationMs: 1 << 40})
	if err := m4.TruncateAndReload(5, 12, now); err != nil {
		t.Fatal(err)
	}
	if m4.LastEntry(1) != nil || m4.LastEntry(2) == nil {
		t.Fatal("load must drop producer 1 (last offset 4 < log start 5) and keep 2 (open transaction)")
	}
	m5, _ := NewProducerStateManager(m.Dir(), ProducerStateConfig{ExpirationMs: 1 << 40})
	if err := m5.TruncateAndReload(0, 12, now); err != nil || m5.LastEntry(1) == nil {
		t.Fatalf("reload: %v", err)
	}
	m5.OnLogStartOffsetIncremented(5)
	if m5.LastEntry(1) != nil || m5.LastEntry(2) == nil || m5.MapEndOffset() != 10 {
		t.Fatal("raising the log start offset must drop producer 1 only")
	}
	if err := m3.TruncateFullyAndStartAt(50); err != nil || len(m3.Snapshots()) != 0 || m3.MapEndOffset() != 50 || !m3.IsEmpty() {
		t.Fatal("truncate fully")
	}
}

func TestRemoveStraySnapshots(t *testing.T) {
	m := newTestPSM(t)
	for _, off := range []int64{0, 5, 7, 10, 30} {
		if err := WriteProducerSnapshot(ProducerSnapshotPath(m.Dir(), off), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(m.Dir(), "junk.snapshot"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.RemoveStraySnapshots([]int64{0, 10, 20}); err != nil {
		t.Fatal(err)
	}
	// 5 and 7 are strays below the last segment; 30 is the clean-shutdown one.
	if got := m.Snapshots(); !reflect.DeepEqual(got, []int64{0, 10, 30}) {
		t.Fatalf("snapshots %v", got)
	}
	ents, _ := os.ReadDir(m.Dir())
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Count(strings.Join(names, " "), ".snapshot") != 4 { // three plus junk
		t.Fatalf("files %v", names)
	}
	if err := m.DeleteSnapshotsBefore(10); err != nil || !reflect.DeepEqual(m.Snapshots(), []int64{10, 30}) {
		t.Fatalf("delete before: %v", m.Snapshots())
	}
}

// FuzzProducerSnapshot: decoding never panics; whatever decodes
// re-encodes to bytes that decode to the same entries, and an accepted
// input has a valid CRC and exactly count*46 entry bytes.
func FuzzProducerSnapshot(f *testing.F) {
	f.Add(EncodeProducerSnapshot(nil))
	e := newProducerStateEntry(4242)
	e.ProducerEpoch = 0
	e.addBatch(0, 9, 1009, 9, 1700000000000)
	f.Add(EncodeProducerSnapshot([]ProducerStateEntry{*e}))
	f.Add([]byte{0, 1, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := DecodeProducerSnapshot(b)
		if err != nil {
			if !errors.Is(err, ErrCorruptProducerSnapshot) {
				t.Fatalf("unexpected error kind %v", err)
			}
			return
		}
		if len(b) != producerSnapshotHeader+producerSnapshotEntrySize*len(entries) {
			t.Fatal("length not checked")
		}
		again, err := DecodeProducerSnapshot(EncodeProducerSnapshot(entries))
		if err != nil || !reflect.DeepEqual(again, entries) {
			t.Fatalf("re-encode: %v", err)
		}
	})
}
