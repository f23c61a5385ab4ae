package e2e_test

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The transactions suite (txn_driver_test.go) with franz-go: the first
// producer is a GroupTransactSession consuming the input topic in the
// group and producing the transformed records (consume-transform-produce,
// KIP-447 offsets through TxnOffsetCommit with the member's generation);
// franz-go's GroupTransactSession commits offsets only on commit, so B
// sends none. The second producer is a plain transactional client.

func TestTxnFranzGo(t *testing.T) {
	c := startTxnCluster(t)
	s := newTxnSpec(c, "franz-go")
	prepareTxnTopics(t, c, s)
	var out txnOut
	runKgoTxnStory(t, c, s, &out)
	verifyTxnStory(t, c, s, parseTxnLines(t, out.Bytes()), nil)
}

// txnOut collects a Go client's report lines.
type txnOut struct{ bytes.Buffer }

func (o *txnOut) line(format string, args ...any) { fmt.Fprintf(o, format+"\n", args...) }

// txnRecords builds transaction label's records for topic.
func txnRecords(s txnSpec, label string, n int) []*kgo.Record {
	var recs []*kgo.Record
	for i := 0; i < n; i++ {
		recs = append(recs, &kgo.Record{Topic: s.topic, Partition: int32(i % txnPartitions),
			Key: []byte(fmt.Sprintf("%s-%d", label, i)), Value: []byte(fmt.Sprintf("%s-%s-%d", s.client, label, i))})
	}
	return recs
}

// pollInput polls sess until every input record "in-<i>" was handed out
// and returns their indexes in ascending order.
func pollInput(t *testing.T, ctx context.Context, c txnCluster, s txnSpec, sess *kgo.GroupTransactSession, step string) []int {
	t.Helper()
	seen := map[int]bool{}
	for len(seen) < txnInput {
		fs := sess.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("franz-go %s: %d of %d input records polled before the deadline; %s", step, len(seen), txnInput, txnOffsetsReport(c, s))
		}
		fs.EachError(func(topic string, p int32, err error) { t.Logf("franz-go %s: fetch %s-%d: %v", step, topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			i, err := strconv.Atoi(strings.TrimPrefix(string(r.Value), "in-"))
			if err != nil {
				t.Fatalf("unexpected input record %q", r.Value)
			}
			seen[i] = true
		})
	}
	var idx []int
	for i := range seen {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	return idx
}

func runKgoTxnStory(t *testing.T, c txnCluster, s txnSpec, out *txnOut) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	log := kgoLogger(clientLog(t, "franz-go"))
	fail := func(step string, err error) {
		t.Helper()
		t.Fatalf("franz-go %s: %v\n%s", step, err, txnOffsetsReport(c, s))
	}
	sess, err := kgo.NewGroupTransactSession(
		kgo.SeedBrokers(c.Bootstrap()...),
		log,
		kgo.TransactionalID(s.txnID),
		kgo.TransactionTimeout(30*time.Second),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ConsumerGroup(s.group),
		kgo.ConsumeTopics(s.input),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RequireStableFetchOffsets(),
		kgo.FetchMaxWait(500*time.Millisecond),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	offsetsClient := c.Client()
	end := func(step string, try kgo.TransactionEndTry, wantCommitted bool) {
		t.Helper()
		committed, err := sess.End(ctx, try)
		if err != nil {
			fail(step, err)
		}
		if committed != wantCommitted {
			fail(step, fmt.Errorf("End(%v) reported committed=%v", try, committed))
		}
		out.line("STEP %s", step)
	}
	offsets := func(label string) {
		t.Helper()
		line, err := groupOffsetsLine(ctx, offsetsClient, s.group, s.input)
		if err != nil {
			fail("offsets "+label, err)
		}
		out.line("OFFSETS %s %s", label, line)
	}

	// A: committed, before anything is consumed.
	if err := sess.Begin(); err != nil {
		fail("begin A", err)
	}
	if err := sess.ProduceSync(ctx, txnRecords(s, "A", txnSmall)...).FirstErr(); err != nil {
		fail("produce A", err)
	}
	end("commit A", kgo.TryCommit, true)

	// B: the input consumed, records produced, aborted: the session
	// rewinds to the committed offsets (none).
	pollInput(t, ctx, c, s, sess, "poll for B")
	if err := sess.Begin(); err != nil {
		fail("begin B", err)
	}
	if err := sess.ProduceSync(ctx, txnRecords(s, "B", txnSmall)...).FirstErr(); err != nil {
		fail("produce B", err)
	}
	end("abort B", kgo.TryAbort, false)
	offsets("after-abort")

	// C: the input again, one output per input record, committed with
	// the consumed offsets.
	idx := pollInput(t, ctx, c, s, sess, "poll for C")
	if err := sess.Begin(); err != nil {
		fail("begin C", err)
	}
	all := txnRecords(s, "C", txnInput)
	var recs []*kgo.Record
	for _, i := range idx {
		recs = append(recs, all[i])
	}
	if err := sess.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		fail("produce C", err)
	}
	end("commit C", kgo.TryCommit, true)
	offsets("after-commit")

	// F: written, then a second producer with the same transactional id
	// initialises and the first one's commit is fenced.
	if err := sess.Begin(); err != nil {
		fail("begin F", err)
	}
	if err := sess.ProduceSync(ctx, txnRecords(s, "F", txnSmall)...).FirstErr(); err != nil {
		fail("produce F", err)
	}
	out.line("STEP written F")
	second := c.Client(log, kgo.TransactionalID(s.txnID), kgo.TransactionTimeout(30*time.Second), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if _, _, err := second.ProducerID(ctx); err != nil {
		fail("init second", err)
	}
	out.line("STEP init second")
	committed, err := sess.End(ctx, kgo.TryCommit)
	switch {
	case err != nil:
		out.line("FENCED %v", err)
	case committed:
		out.line("STEP commit F (not fenced)")
	default:
		out.line("STEP end F: not committed, no error")
	}

	// E: the second producer commits.
	if err := second.BeginTransaction(); err != nil {
		fail("begin E", err)
	}
	if err := second.ProduceSync(ctx, txnRecords(s, "E", txnSmall)...).FirstErr(); err != nil {
		fail("produce E", err)
	}
	if err := second.EndTransaction(ctx, kgo.TryCommit); err != nil {
		fail("commit E", err)
	}
	out.line("STEP commit E")
}
