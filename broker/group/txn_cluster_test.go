package group_test

// Consume-transform-produce with franz-go's GroupTransactSession on a real
// cluster (real ZooKeeper, in-process brokers): the session commits its
// group's offsets with TxnOffsetCommit v3 (generation and member id,
// KIP-447) inside each transaction and fetches them with require_stable.
// Every input record reaches the output exactly once, an aborted round
// leaves neither output nor offsets, and the group's committed offsets end
// at the input's end.

import (
	"context"
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker/testcluster"
)

// TestMain shares one real ZooKeeper server between the cluster tests of
// this package (started only by the first test that needs it).
func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }

func TestGroupTransactSessionCopiesExactlyOnce(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Overrides: map[string]string{
		"transaction.state.log.num.partitions": "3", "offsets.topic.num.partitions": "3",
		"group.initial.rebalance.delay.ms": "0"}})
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	c.CreateTopic("ctp-in", 2, 3, nil)
	c.CreateTopic("ctp-out", 2, 3, nil)
	c.WaitLeaders(30*time.Second, "ctp-in", 2)
	c.WaitLeaders(30*time.Second, "ctp-out", 2)

	const n = 300
	in := c.Client(kgo.DefaultProduceTopic("ctp-in"))
	for i := 0; i < n; i++ {
		if err := in.ProduceSync(ctx, &kgo.Record{Key: []byte(fmt.Sprint(i % 7)), Value: []byte(fmt.Sprintf("v-%03d", i))}).FirstErr(); err != nil {
			t.Fatalf("produce input: %v", err)
		}
	}

	sess, err := kgo.NewGroupTransactSession(
		kgo.SeedBrokers(c.Bootstrap()...),
		kgo.TransactionalID("ctp"),
		kgo.ConsumerGroup("ctp-group"),
		kgo.ConsumeTopics("ctp-in"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RequireStableFetchOffsets(),
		kgo.DefaultProduceTopic("ctp-out"),
		kgo.FetchMaxWait(200*time.Millisecond),
		kgo.TransactionTimeout(60*time.Second),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()

	copied, rounds, aborted := 0, 0, false
	for copied < n {
		fs := sess.PollRecords(ctx, 40)
		if ctx.Err() != nil {
			t.Fatalf("copied %d of %d before the deadline", copied, n)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Logf("fetch %s-%d: %v", topic, p, err) })
		recs := fs.Records()
		if len(recs) == 0 {
			continue
		}
		if err := sess.Begin(); err != nil {
			t.Fatalf("begin: %v", err)
		}
		outRecs := make([]*kgo.Record, 0, len(recs))
		for _, r := range recs {
			outRecs = append(outRecs, &kgo.Record{Key: r.Key, Value: r.Value})
		}
		// Synchronously, so an aborted round's records are in the log.
		if err := sess.ProduceSync(ctx, outRecs...).FirstErr(); err != nil {
			t.Fatalf("produce output: %v", err)
		}
		// The third round is aborted: its output is dropped by
		// read_committed consumers and its offsets are not committed, so
		// the session goes back to the committed ones and the same records
		// come again.
		try := kgo.TryCommit
		if rounds == 2 && !aborted {
			try, aborted = kgo.TryAbort, true
		}
		committed, err := sess.End(ctx, try)
		if err != nil {
			t.Fatalf("end transaction: %v", err)
		}
		rounds++
		if committed {
			copied += len(recs)
		}
	}
	t.Logf("copied %d records in %d transactions", copied, rounds)
	if !aborted || rounds < 4 {
		t.Fatalf("%d rounds, aborted %v: the test did not exercise an abort between commits", rounds, aborted)
	}
	if copied != n {
		t.Fatalf("copied %d records, want %d (a record came twice)", copied, n)
	}

	// The output, read_committed: every input value exactly once.
	out := c.Client(kgo.ConsumeTopics("ctp-out"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	var got []string
	for len(got) < n {
		fs := out.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d output records", len(got), n)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	sort.Strings(got)
	for i, v := range got {
		if want := fmt.Sprintf("v-%03d", i); v != want {
			t.Fatalf("output record %d is %s, want %s (lost or duplicated)", i, v, want)
		}
	}

	// The group's committed offsets are at the input's end.
	adm := kadm.NewClient(c.Client())
	ends, err := adm.ListEndOffsets(ctx, "ctp-in")
	if err != nil {
		t.Fatal(err)
	}
	offs, err := adm.FetchOffsets(ctx, "ctp-group")
	if err != nil {
		t.Fatal(err)
	}
	ends.Each(func(e kadm.ListedOffset) {
		o, ok := offs.Lookup("ctp-in", e.Partition)
		if !ok || o.At != e.Offset {
			t.Errorf("committed offset of ctp-in-%d: %+v (found %v), want %d", e.Partition, o, ok, e.Offset)
		}
	})
}
