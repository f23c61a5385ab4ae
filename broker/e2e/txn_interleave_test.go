package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/testcluster"
)

// TestTxnInterleavedAndTimedOut: transactions of several producers
// overlapping on one partition, and one abandoned, as the last stable
// offset and the aborted-transactions index must handle them (KIP-98):
//
//	offsets 0-4    a-0..a-4   producer a, open
//	offsets 5-9    b-0..b-4   producer b
//	offsets 10-14  a-5..a-9   producer a
//	offset 15      b's COMMIT marker
//	offset 16      a's ABORT marker
//	offsets 17-19  c-0..c-2   producer c, transaction.timeout.ms 2 s, never ended
//	offset 20      the coordinator's ABORT marker for c, after its timeout
//	offset 21      END sentinel
//
// The last stable offset (ListOffsets isolation_level=1) stays at a's
// first offset, 0, while a is open, even after b commits; it reaches
// the high watermark once a aborts; it waits at c's first offset until
// the coordinator aborts c on its own (transaction.abort.timed.out.
// transaction.cleanup.interval.ms is 500 ms here), and c's commit then
// fails fenced. read_committed consumers (franz-go and librdkafka) read
// exactly b-0..b-4; read_uncommitted ones everything but the markers.
func TestTxnInterleavedAndTimedOut(t *testing.T) {
	requirePython(t, "confluent_kafka", "python3-confluent-kafka")
	c := startTxnCluster(t)
	const topic = "txn-interleave"
	c.CreateTopic(topic, 1, 3, nil)
	c.WaitLeaders(30*time.Second, topic, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	log := kgoLogger(clientLog(t, "franz-go"))
	producer := func(id string, timeout time.Duration) *kgo.Client {
		return c.Client(log, kgo.TransactionalID(id), kgo.TransactionTimeout(timeout), kgo.DefaultProduceTopic(topic),
			kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}
	records := func(label string, from, to int) []*kgo.Record {
		var rs []*kgo.Record
		for i := from; i < to; i++ {
			k := fmt.Sprintf("%s-%d", label, i)
			rs = append(rs, &kgo.Record{Key: []byte(k), Value: []byte(k)})
		}
		return rs
	}
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	offsetsCl := c.Client()
	// offsets returns the partition's last stable offset and high
	// watermark as its leader answers ListOffsets.
	offsets := func() (lso, hw int64) {
		t.Helper()
		get := func(iso int8) int64 {
			req := kmsg.NewPtrListOffsetsRequest()
			req.IsolationLevel = iso
			rt := kmsg.NewListOffsetsRequestTopic()
			rt.Topic = topic
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Timestamp = -1
			rp.CurrentLeaderEpoch = -1
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			resp, err := req.RequestWith(ctx, offsetsCl)
			if err == nil {
				err = kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
			}
			if err != nil {
				t.Fatalf("ListOffsets isolation %d: %v", iso, err)
			}
			return resp.Topics[0].Partitions[0].Offset
		}
		return get(1), get(0)
	}
	expect := func(when string, wantLSO, wantHW int64) {
		t.Helper()
		lso, hw := offsets()
		if lso != wantLSO || hw != wantHW {
			t.Errorf("%s: last stable offset %d, high watermark %d; want %d and %d", when, lso, hw, wantLSO, wantHW)
		}
	}
	waitStable := func(when string, want int64, timeout time.Duration) {
		t.Helper()
		var lso, hw int64
		if !testcluster.Poll(timeout, func() bool { lso, hw = offsets(); return lso == want && hw == want }) {
			t.Errorf("%s: last stable offset %d, high watermark %d after %v; want both %d", when, lso, hw, timeout, want)
		}
	}

	a, b := producer("txn-interleave-a", 30*time.Second), producer("txn-interleave-b", 30*time.Second)
	must("a begin", a.BeginTransaction())
	must("a produce a-0..4", a.ProduceSync(ctx, records("a", 0, 5)...).FirstErr())
	must("b begin", b.BeginTransaction())
	must("b produce b-0..4", b.ProduceSync(ctx, records("b", 0, 5)...).FirstErr())
	expect("a and b open", 0, 10)
	must("a produce a-5..9", a.ProduceSync(ctx, records("a", 5, 10)...).FirstErr())
	must("b commit", b.EndTransaction(ctx, kgo.TryCommit))
	// EndTxn is answered before the marker is written: wait for it.
	var lso, hw int64
	testcluster.Poll(10*time.Second, func() bool { lso, hw = offsets(); return hw == 16 })
	if lso != 0 || hw != 16 {
		t.Errorf("b committed, a open: last stable offset %d, high watermark %d; want 0 and 16", lso, hw)
	}
	must("a abort", a.EndTransaction(ctx, kgo.TryAbort))
	waitStable("a aborted", 17, 10*time.Second)

	cp := producer("txn-interleave-c", 2*time.Second)
	must("c begin", cp.BeginTransaction())
	must("c produce c-0..2", cp.ProduceSync(ctx, records("c", 0, 3)...).FirstErr())
	expect("c open", 17, 20)
	start := time.Now()
	waitStable("c abandoned past its 2 s timeout", 21, 30*time.Second)
	t.Logf("the coordinator aborted c %v after its last record", time.Since(start).Round(100*time.Millisecond))
	err := cp.EndTransaction(ctx, kgo.TryCommit)
	switch {
	case err == nil:
		t.Errorf("c's commit after the coordinator aborted it on timeout succeeded")
	case errors.Is(err, kerr.ProducerFenced), errors.Is(err, kerr.InvalidProducerEpoch):
		t.Logf("c's commit after its timeout: %v", err)
	default:
		t.Errorf("c's commit after its timeout: %v, want PRODUCER_FENCED or INVALID_PRODUCER_EPOCH", err)
	}

	prod := c.Client(kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	must("sentinel", prod.ProduceSync(ctx, &kgo.Record{Key: []byte(txnSentinel), Value: []byte(txnSentinel)}).FirstErr())

	keys := func(label string, from, to int) []string {
		var ks []string
		for i := from; i < to; i++ {
			ks = append(ks, fmt.Sprintf("%s-%d", label, i))
		}
		return ks
	}
	wantCommitted := keys("b", 0, 5)
	wantAll := append(append(append(append(keys("a", 0, 5), keys("b", 0, 5)...), keys("a", 5, 10)...), keys("c", 0, 3)...), txnSentinel)
	wantCommitted = append(wantCommitted, txnSentinel)
	check := func(who string, committed bool, got []txnRecord) {
		t.Helper()
		want := wantAll
		if committed {
			want = wantCommitted
		}
		var ks []string
		for _, r := range got {
			ks = append(ks, r.key+"@"+strconv.FormatInt(r.offset, 10))
		}
		var plain []string
		for _, r := range got {
			plain = append(plain, r.key)
		}
		if strings.Join(plain, ",") != strings.Join(want, ",") {
			t.Errorf("%s (read_committed %v) read %s\n  want %s", who, committed, strings.Join(ks, ","), strings.Join(want, ","))
		}
	}
	s := txnSpec{client: "interleave", topic: topic}
	script := filepath.Join(clientsDir(t), "confluent_kafka_txn.py")
	for _, committed := range []bool{true, false} {
		check("franz-go", committed, readUntilSentinel(t, c, topic, committed))
		iso := "read_uncommitted"
		if committed {
			iso = "read_committed"
		}
		out := runTxnClient(t, c, s, 60*time.Second, "/usr/bin/python3", script, "consume", "--bootstrap", strings.Join(c.Bootstrap(), ","),
			"--topic", topic, "--input", "-", "--group", "-", "--txn-id", "-", "--prefix", "-", "--partitions", "1",
			"--small", "0", "--input-count", "0", "--isolation", iso)
		check("confluent-kafka", committed, parseTxnLines(t, out).recs)
	}
}

// readUntilSentinel reads partition 0 of topic from the start with
// franz-go until the sentinel.
func readUntilSentinel(t *testing.T, c txnCluster, topic string, committed bool) []txnRecord {
	t.Helper()
	iso := kgo.ReadUncommitted()
	if committed {
		iso = kgo.ReadCommitted()
	}
	cl := c.Client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(iso), kgo.FetchMaxWait(500*time.Millisecond))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var recs []txnRecord
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Errorf("franz-go consumer of %s (read_committed %v): no sentinel within 30s; read %d records", topic, committed, len(recs))
			return recs
		}
		done := false
		fs.EachRecord(func(r *kgo.Record) {
			recs = append(recs, txnRecord{p: r.Partition, offset: r.Offset, key: string(r.Key), value: string(r.Value)})
			done = done || string(r.Key) == txnSentinel
		})
		if done {
			return recs
		}
	}
}
