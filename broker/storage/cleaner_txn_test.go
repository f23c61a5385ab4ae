package storage

import (
	"maps"
	"os"
	"strings"
	"testing"

	"github.com/klassik/klassik/broker/storage/record"
)

// readCommittedView reads the log as a read_committed consumer of a
// compacted topic does: batches below the LSO, without control batches,
// dropping the data batches of aborted transactions (the aborted list
// from CollectAbortedTransactions, Kafka's consumer rule: a batch of an
// aborted producer from the transaction's first offset up to its marker),
// folded into the latest value per key.
func readCommittedView(t *testing.T, l *Log) map[string]string {
	t.Helper()
	lso := l.LastStableOffset()
	aborted, err := l.CollectAbortedTransactions(0, lso)
	if err != nil {
		t.Fatal(err)
	}
	view := map[string]string{}
	for _, base := range l.SegmentBaseOffsets() {
		data, err := os.ReadFile(segmentPath(l.Dir(), base, logFileSuffix))
		if err != nil {
			t.Fatal(err)
		}
		err = record.ForEachBatch(data, func(b []byte, h record.BatchHeader) error {
			if h.BaseOffset >= lso || h.IsControl() {
				return nil
			}
			for _, a := range aborted {
				if h.IsTransactional() && h.ProducerID == a.ProducerID && h.BaseOffset >= a.FirstOffset && h.BaseOffset <= a.LastOffset {
					return nil
				}
			}
			return record.ForEachRecord(b, func(r *record.Record) error {
				if r.Value == nil {
					delete(view, string(r.Key))
				} else {
					view[string(r.Key)] = string(r.Value)
				}
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return view
}

// "The cleaner removes the records of aborted transactions and keeps
// transaction markers while data of their transaction remains"
// (LogCleaner): written through the leader's and the coordinator's append
// paths (producer state, .txnindex, LSO as in production), a compacted log
// reads the same to a read_committed consumer before and after cleaning,
// no aborted value survives, the markers of transactions with data left
// stay, and the open transaction's segments are not cleaned.
func TestCleanerKeepsReadCommittedView(t *testing.T) {
	l, clock, ts := openCompactedLog(t, nil)
	txn := func(pid int64, seq int32, kv ...string) {
		t.Helper()
		o := record.DefaultBuildOptions()
		o.BaseTimestamp = ts
		o.ProducerID, o.ProducerEpoch, o.BaseSequence, o.Transactional = pid, 0, seq, true
		var recs []record.Record
		for i := 0; i+1 < len(kv); i += 2 {
			recs = append(recs, record.Record{OffsetDelta: int32(i / 2), Key: []byte(kv[i]), Value: []byte(kv[i+1])})
		}
		if _, err := l.AppendAsLeader(record.Build(o, recs), 0); err != nil {
			t.Fatal(err)
		}
	}
	end := func(pid int64, t2 record.ControlType) {
		t.Helper()
		if _, err := l.AppendAsCoordinator(record.BuildControlBatch(0, -1, pid, 0, t2, 1, ts), 0); err != nil {
			t.Fatal(err)
		}
	}
	plain := func(kv ...string) {
		t.Helper()
		o := record.DefaultBuildOptions()
		o.BaseTimestamp = ts
		var recs []record.Record
		for i := 0; i+1 < len(kv); i += 2 {
			recs = append(recs, record.Record{OffsetDelta: int32(i / 2), Key: []byte(kv[i]), Value: []byte(kv[i+1])})
		}
		if _, err := l.AppendAsLeader(record.Build(o, recs), 0); err != nil {
			t.Fatal(err)
		}
	}
	plain("k1", "v1", "k2", "v2")
	txn(1, 0, "k1", "committed-1", "k3", "committed-3")
	txn(2, 0, "k1", "aborted-1", "k4", "aborted-4")
	txn(1, 2, "k2", "committed-2")
	end(2, record.ControlAbort)
	end(1, record.ControlCommit)
	clRoll(t, l)
	txn(3, 0, "k5", "aborted-5")
	plain("k2", "v2-later")
	end(3, record.ControlAbort)
	clRoll(t, l)
	txn(4, 0, "k6", "open-6") // stays open: this segment and later ones are uncleanable
	clRoll(t, l)
	plain("k7", "v7")
	l.SetHighWatermark(l.LogEndOffset())

	want := map[string]string{"k1": "committed-1", "k2": "v2-later", "k3": "committed-3"}
	if got := readCommittedView(t, l); !maps.Equal(got, want) {
		t.Fatalf("before cleaning: %v", got)
	}
	abortedIn := func() int {
		recs, _ := clReadLog(t, l)
		n := 0
		for _, r := range recs {
			if strings.HasPrefix(r.Value, "aborted") {
				n++
			}
		}
		return n
	}
	if n := abortedIn(); n != 3 {
		t.Fatalf("aborted records before cleaning: %d", n)
	}
	c := newTestCleaner(clock)
	if st := clCleanAll(t, c, l); st.SegmentsRead == 0 {
		t.Fatalf("nothing cleaned: %+v", st)
	}
	if got := readCommittedView(t, l); !maps.Equal(got, want) {
		t.Fatalf("after cleaning: %v, want %v", got, want)
	}
	if n := abortedIn(); n != 0 {
		t.Fatalf("%d aborted records survived cleaning", n)
	}
	_, hdrs := clReadLog(t, l)
	markers := map[int64]int{}
	open := false
	for _, h := range hdrs {
		if h.IsControl() {
			markers[h.ProducerID]++
		}
		if h.ProducerID == 4 && h.NumRecords == 1 {
			open = true
		}
	}
	// Producers 1, 2 and 3 each keep a data batch (2 and 3 an emptied
	// one: a producer's last batch stays), so their markers stay.
	if markers[1] != 1 || markers[2] != 1 || markers[3] != 1 || !open {
		t.Fatalf("markers %v, open transaction kept %v; batches %+v", markers, open, hdrs)
	}

	// Once producer 4 commits, a consumer sees its record and the one
	// behind it, before and after another cleaning.
	end(4, record.ControlCommit)
	l.SetHighWatermark(l.LogEndOffset())
	want["k6"], want["k7"] = "open-6", "v7"
	if got := readCommittedView(t, l); !maps.Equal(got, want) {
		t.Fatalf("after producer 4 committed: %v", got)
	}
	clRoll(t, l)
	clCleanAll(t, c, l)
	if got := readCommittedView(t, l); !maps.Equal(got, want) {
		t.Fatalf("after cleaning again: %v, want %v", got, want)
	}
}
