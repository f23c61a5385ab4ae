package broker_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/testcluster"
)

// txnCoordinatorIndex asks a broker which broker coordinates the
// transactional id and returns that broker's index in the cluster.
func txnCoordinatorIndex(t *testing.T, ctx context.Context, c *testcluster.Cluster, id string) int {
	t.Helper()
	var idx int
	c.WaitFor(30*time.Second, "a transaction coordinator for "+id, func() bool {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version, req.CoordinatorType, req.CoordinatorKey = 3, 1, id
		resp, err := req.RequestWith(ctx, c.Client())
		if err != nil || resp.ErrorCode != 0 {
			return false
		}
		idx = c.Index(resp.NodeID)
		return idx >= 0
	})
	return idx
}

// consumeAll reads topic from the start with the isolation level until
// want records arrived, and returns their values sorted.
func consumeTxnTopic(t *testing.T, ctx context.Context, c *testcluster.Cluster, topic string, committed bool, want int) []string {
	t.Helper()
	iso := kgo.ReadUncommitted()
	if committed {
		iso = kgo.ReadCommitted()
	}
	cl := c.Client(kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(iso), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	defer cl.Close()
	var got []string
	for len(got) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%s (read_committed=%v): %d records after the deadline, want %d: %v", topic, committed, len(got), want, got)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	// Nothing beyond them: a further record (an aborted one leaking into
	// read_committed, a duplicate) would show up in the next fetches.
	extraCtx, cancelExtra := context.WithTimeout(ctx, 2*time.Second)
	defer cancelExtra()
	for extraCtx.Err() == nil {
		cl.PollFetches(extraCtx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	sort.Strings(got)
	return got
}

func txnValues(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%03d", prefix, i)
	}
	sort.Strings(out)
	return out
}

func produceTxn(t *testing.T, ctx context.Context, p *kgo.Client, topic, prefix string, n int, commit bool) {
	t.Helper()
	if err := p.BeginTransaction(); err != nil {
		t.Fatalf("begin: %v", err)
	}
	for i := 0; i < n; i++ {
		p.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprintf("%s-%03d", prefix, i))}, nil)
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if err := p.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatalf("end transaction (commit=%v): %v", commit, err)
	}
}

// TestTransactionsCommitAbortAndCoordinatorFailover: a transactional
// producer commits one transaction and aborts another; read_committed
// consumers see exactly the committed records and read_uncommitted ones
// see both. Then a transaction is left open while its coordinator broker
// is killed: the producer commits through the new coordinator (the
// partition's new leader, which loads the Ongoing state from
// __transaction_state) and read_committed consumers see it, on every
// broker.
func TestTransactionsCommitAbortAndCoordinatorFailover(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Overrides: map[string]string{
		"transaction.state.log.num.partitions": "5", "min.insync.replicas": "2"}})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	c.CreateTopic("txn-data", 3, 3, nil)
	c.WaitLeaders(30*time.Second, "txn-data", 3)

	const id = "txn-failover"
	p := c.Client(kgo.TransactionalID(id), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.TransactionTimeout(60*time.Second))
	defer p.Close()
	produceTxn(t, ctx, p, "txn-data", "committed", 30, true)
	produceTxn(t, ctx, p, "txn-data", "aborted", 20, false)

	if got, want := consumeTxnTopic(t, ctx, c, "txn-data", true, 30), txnValues("committed", 30); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("read_committed: %v, want %v", got, want)
	}
	all := append(txnValues("committed", 30), txnValues("aborted", 20)...)
	sort.Strings(all)
	if got := consumeTxnTopic(t, ctx, c, "txn-data", false, 50); fmt.Sprint(got) != fmt.Sprint(all) {
		t.Fatalf("read_uncommitted: %v, want %v", got, all)
	}

	// A transaction open while its coordinator dies.
	coord := txnCoordinatorIndex(t, ctx, c, id)
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		if err := p.ProduceSync(ctx, &kgo.Record{Topic: "txn-data", Value: []byte(fmt.Sprintf("failover-%03d", i))}).FirstErr(); err != nil {
			t.Fatalf("produce in the open transaction: %v", err)
		}
	}
	c.KillBroker(coord)
	if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("commit after the coordinator died: %v", err)
	}
	newCoord := txnCoordinatorIndex(t, ctx, c, id)
	if newCoord == coord {
		t.Fatalf("broker %d still named coordinator after it was killed", c.BrokerID(coord))
	}
	want := append(txnValues("committed", 30), txnValues("failover", 10)...)
	sort.Strings(want)
	if got := consumeTxnTopic(t, ctx, c, "txn-data", true, 40); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("read_committed after the failover: %v, want %v", got, want)
	}
	c.RestartBroker(coord)
	c.WaitLeaders(30*time.Second, "txn-data", 3)
}
