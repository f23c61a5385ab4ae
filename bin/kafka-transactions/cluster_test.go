package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/broker/storage/record"
	"github.com/klassik/klassik/broker/testcluster"
)

func TestMain(m *testing.M) { os.Exit(clitest.Main(m)) }

// script runs bin/kafka-transactions.sh as a process, as an operator
// would, and returns its stdout, stderr and exit status.
func script(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return clitest.Script(t, []string{"COLUMNS=80"}, "kafka-transactions.sh", args...)
}

// tableLines renders headers and rows the way Kafka's prettyPrintTable
// lays them out: each cell padded to its column's widest value, then a tab.
func tableLines(headers []string, rows ...[]string) []string {
	widths := make([]int, len(headers))
	for _, r := range append([][]string{headers}, rows...) {
		for i, c := range r {
			widths[i] = max(widths[i], len(c))
		}
	}
	var lines []string
	for _, r := range append([][]string{headers}, rows...) {
		var b strings.Builder
		for i, c := range r {
			fmt.Fprintf(&b, "%-*s\t", widths[i], c)
		}
		lines = append(lines, b.String())
	}
	return lines
}

// checkTable compares a command's stdout with the table of headers and
// rows: the header first, the rows in any order (Kafka's come from hash
// maps and broker answers).
func checkTable(t *testing.T, what, out string, headers []string, rows ...[]string) {
	t.Helper()
	want := tableLines(headers, rows...)
	got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if !strings.HasSuffix(out, "\n") || len(got) != len(want) || got[0] != want[0] {
		t.Fatalf("%s:\n%s\nwant:\n%s", what, out, strings.Join(want, "\n"))
	}
	rest, wantRest := slices.Clone(got[1:]), slices.Clone(want[1:])
	slices.Sort(rest)
	slices.Sort(wantRest)
	if !slices.Equal(rest, wantRest) {
		t.Fatalf("%s:\n%q\nwant (any order):\n%q", what, got, want)
	}
}

func itoa[T ~int16 | ~int32 | ~int64](n T) string { return strconv.FormatInt(int64(n), 10) }

// hangingTransaction leaves a transaction open on orders-<partition> that
// no coordinator knows of (the situation KIP-664's tool exists for): an
// idempotent producer id, never registered with a coordinator, writes one
// transactional batch straight to the leader. It returns the producer id, its epoch and the batch's offset.
func hangingTransaction(t *testing.T, ctx context.Context, c *testcluster.Cluster, partition int32) (int64, int16, int64) {
	t.Helper()
	ireq := kmsg.NewPtrInitProducerIDRequest()
	iresp, err := ireq.RequestWith(ctx, c.Client())
	if err != nil || iresp.ErrorCode != 0 {
		t.Fatalf("InitProducerId: %v %+v", err, iresp)
	}
	o := record.DefaultBuildOptions()
	o.Transactional, o.ProducerID, o.ProducerEpoch, o.BaseSequence = true, iresp.ProducerID, iresp.ProducerEpoch, 0
	o.BaseTimestamp = time.Now().UnixMilli()
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 10000
	// Kafka requires a transactional id on a Produce with transactional
	// batches, but does not check that the producer id is that id's.
	req.TransactionID = kmsg.StringPtr("ghost")
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "orders"
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Partition, pp.Records = partition, record.Build(o, []record.Record{{Value: []byte("stuck")}})
	pt.Partitions = []kmsg.ProduceRequestTopicPartition{pp}
	req.Topics = []kmsg.ProduceRequestTopic{pt}
	resp, err := req.RequestWith(ctx, c.Direct(0))
	if err != nil || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("transactional produce without a coordinator: %v %+v", err, resp)
	}
	return iresp.ProducerID, iresp.ProducerEpoch, resp.Topics[0].Partitions[0].BaseOffset
}

// producersOf is what DescribeProducers answers for orders-<partition>,
// through kadm.
func producersOf(t *testing.T, ctx context.Context, adm *kadm.Client, partition int32) []kadm.DescribedProducer {
	t.Helper()
	d, err := adm.DescribeProducers(ctx, kadm.TopicsSet{"orders": {partition: {}}})
	if err != nil {
		t.Fatalf("DescribeProducers: %v", err)
	}
	p := d["orders"].Partitions[partition]
	if p.Err != nil {
		t.Fatalf("DescribeProducers orders-%d: %v", partition, p.Err)
	}
	var out []kadm.DescribedProducer
	for _, s := range p.ActiveProducers {
		out = append(out, s)
	}
	return out
}

func producerRows(states []kadm.DescribedProducer) [][]string {
	var rows [][]string
	for _, s := range states {
		start := "None"
		if s.CurrentTxnStartOffset >= 0 {
			start = itoa(s.CurrentTxnStartOffset)
		}
		rows = append(rows, []string{itoa(s.ProducerID), itoa(s.ProducerEpoch), itoa(max(s.CoordinatorEpoch, -1)),
			itoa(s.LastSequence), itoa(s.LastTimestamp), start})
	}
	return rows
}

func findProducer(t *testing.T, states []kadm.DescribedProducer, pid int64) kadm.DescribedProducer {
	t.Helper()
	for _, s := range states {
		if s.ProducerID == pid {
			return s
		}
	}
	t.Fatalf("producer %d not among %+v", pid, states)
	return kadm.DescribedProducer{}
}

// Every command against a real cluster, on real transactions of franz-go
// transactional producers: tx-committed committed three records to
// orders-0, tx-open has two records on orders-1 and stays open, and two
// hanging transactions (open on a partition, unknown to any coordinator)
// are found and aborted, one by its start offset and one by producer id
// and epoch (the form for brokers older than 3.0).
func TestTransactionsOnCluster(t *testing.T) {
	c := clitest.StartWithTopic(t, testcluster.Options{Brokers: 1}, "orders", 2, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute) // bounds a failure only
	defer cancel()
	bs := strings.Join(c.Bootstrap(), ",")
	broker := c.BrokerID(0)
	adm := c.Admin()
	const timeoutMs = 300000

	produce := func(cl *kgo.Client, partition int32, n int) {
		t.Helper()
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		var recs []*kgo.Record
		for i := range n {
			recs = append(recs, &kgo.Record{Topic: "orders", Partition: partition, Value: []byte(fmt.Sprint(i))})
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("transactional produce: %v", err)
		}
	}
	txnClient := func(id string) *kgo.Client {
		return c.Client(kgo.TransactionalID(id), kgo.TransactionTimeout(timeoutMs*time.Millisecond),
			kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}
	committed := txnClient("tx-committed")
	produce(committed, 0, 3)
	if err := committed.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("commit: %v", err)
	}
	open := txnClient("tx-open")
	produce(open, 1, 2)

	var described kadm.DescribedTransactions
	c.WaitFor(time.Minute, "tx-committed CompleteCommit and tx-open Ongoing", func() bool {
		d, err := adm.DescribeTransactions(ctx, "tx-committed", "tx-open")
		described = d
		return err == nil && d["tx-committed"].State == "CompleteCommit" && d["tx-open"].State == "Ongoing"
	})
	txC, txO := described["tx-committed"], described["tx-open"]

	// list: both transactional ids on their coordinator.
	out, errOut, code := script(t, "--bootstrap-server", bs, "list")
	if code != 0 || errOut != "" {
		t.Fatalf("list: exit %d stderr %q", code, errOut)
	}
	checkTable(t, "list", out, listHeaders,
		[]string{"tx-committed", itoa(txC.Coordinator), itoa(txC.ProducerID), "CompleteCommit"},
		[]string{"tx-open", itoa(txO.Coordinator), itoa(txO.ProducerID), "Ongoing"})

	// describe: the open transaction's one partition, and the committed
	// one, which keeps its last start time (the coordinator's
	// txnStartTimestamp survives the transition to CompleteCommit). The
	// duration grows with the clock, so it is checked as a number.
	describe := func(id string, d kadm.DescribedTransaction, partitions string) {
		t.Helper()
		before := time.Now().UnixMilli()
		out, errOut, code := script(t, "--bootstrap-server", bs, "describe", "--transactional-id", id)
		after := time.Now().UnixMilli()
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if code != 0 || errOut != "" || len(lines) != 2 {
			t.Fatalf("describe %s: exit %d stderr %q\n%s", id, code, errOut, out)
		}
		cells := strings.Split(strings.TrimSuffix(lines[1], "\t"), "\t")
		durationCell := strings.TrimSpace(cells[len(cells)-2])
		duration, err := strconv.ParseInt(durationCell, 10, 64)
		if err != nil || duration < before-d.StartTimestamp || duration > after-d.StartTimestamp {
			t.Fatalf("describe %s: duration %q not within [%d, %d]", id, durationCell, before-d.StartTimestamp, after-d.StartTimestamp)
		}
		checkTable(t, "describe "+id, out, describeHeaders, []string{itoa(d.Coordinator), id, itoa(d.ProducerID),
			itoa(d.ProducerEpoch), d.State, itoa(int32(timeoutMs)), itoa(d.StartTimestamp), durationCell, partitions})
	}
	describe("tx-open", txO, "orders-1")
	describe("tx-committed", txC, "")

	// describe of an id nobody used.
	out, errOut, code = script(t, "--bootstrap-server", bs, "describe", "--transactional-id", "nobody")
	if code != 1 || out != "" || errOut != "Failed to describe transaction state of transactional-id `nobody`: "+
		"DescribeTransactions request for transactionalId `nobody` failed because the ID could not be found. Enable debug logging for additional detail.\n" {
		t.Fatalf("describe unknown id: exit %d stdout %q stderr %q", code, out, errOut)
	}

	// Two hanging transactions, one per partition.
	h1, h1Epoch, h1Offset := hangingTransaction(t, ctx, c, 0)
	h2, h2Epoch, _ := hangingTransaction(t, ctx, c, 1)

	// describe-producers, from the leader and from the broker by id.
	for p, names := range map[int32][]int64{0: {txC.ProducerID, h1}, 1: {txO.ProducerID, h2}} {
		states := producersOf(t, ctx, adm, p)
		if len(states) != 2 {
			t.Fatalf("orders-%d: producers %+v, want %v", p, states, names)
		}
		for _, args := range [][]string{{"describe-producers", "--topic", "orders", "--partition", itoa(p)},
			{"describe-producers", "--topic", "orders", "--partition", itoa(p), "--broker-id", itoa(broker)}} {
			out, errOut, code := script(t, append([]string{"--bootstrap-server", bs}, args...)...)
			if code != 0 || errOut != "" {
				t.Fatalf("%v: exit %d stderr %q", args, code, errOut)
			}
			checkTable(t, strings.Join(args, " "), out, describeProducersHeaders, producerRows(states)...)
		}
	}
	open1 := findProducer(t, producersOf(t, ctx, adm, 1), txO.ProducerID)
	if open1.CurrentTxnStartOffset != 0 || open1.LastSequence != 1 {
		t.Fatalf("tx-open on orders-1: %+v", open1)
	}

	// find-hanging: nothing is older than 15 minutes; with no age limit the
	// two hanging transactions, but not tx-open, whose coordinator still
	// covers orders-1.
	for _, args := range [][]string{{"--broker-id", itoa(broker)}, {"--topic", "orders"}, {"--topic", "orders", "--partition", "0"}} {
		out, errOut, code := script(t, append([]string{"--bootstrap-server", bs, "find-hanging"}, args...)...)
		if code != 0 || errOut != "" {
			t.Fatalf("find-hanging %v: exit %d stderr %q", args, code, errOut)
		}
		checkTable(t, "find-hanging", out, findHangingHeaders)
	}
	hangingRow := func(p int32, s kadm.DescribedProducer) []string {
		return []string{"orders", itoa(p), itoa(s.ProducerID), itoa(s.ProducerEpoch), itoa(max(s.CoordinatorEpoch, -1)),
			itoa(s.CurrentTxnStartOffset), itoa(s.LastTimestamp), "0"}
	}
	s1 := findProducer(t, producersOf(t, ctx, adm, 0), h1)
	s2 := findProducer(t, producersOf(t, ctx, adm, 1), h2)
	out, errOut, code = script(t, "--bootstrap-server", bs, "find-hanging", "--broker-id", itoa(broker), "--max-transaction-timeout", "0")
	if code != 0 || errOut != "" {
		t.Fatalf("find-hanging: exit %d stderr %q", code, errOut)
	}
	checkTable(t, "find-hanging --max-transaction-timeout 0", out, findHangingHeaders, hangingRow(0, s1), hangingRow(1, s2))

	// abort: a start offset with no transaction is refused.
	out, errOut, code = script(t, "--bootstrap-server", bs, "abort", "--topic", "orders", "--partition", "0", "--start-offset", "999")
	if code != 1 || out != "" || errOut != "Could not find any open transactions starting at offset 999 on partition orders-0\n" {
		t.Fatalf("abort at 999: exit %d stdout %q stderr %q", code, out, errOut)
	}
	// By start offset (3.0 brokers), then by producer id and epoch.
	out, errOut, code = script(t, "--bootstrap-server", bs, "abort", "--topic", "orders", "--partition", "0", "--start-offset", itoa(h1Offset))
	if code != 0 || out != "" || errOut != "" {
		t.Fatalf("abort --start-offset: exit %d stdout %q stderr %q", code, out, errOut)
	}
	out, errOut, code = script(t, "--bootstrap-server", bs, "abort", "--topic", "orders", "--partition", "1",
		"--producer-id", itoa(h2), "--producer-epoch", itoa(h2Epoch), "--coordinator-epoch", "-1")
	if code != 0 || out != "" || errOut != "" {
		t.Fatalf("abort --producer-id: exit %d stdout %q stderr %q", code, out, errOut)
	}
	if s := findProducer(t, producersOf(t, ctx, adm, 0), h1); s.CurrentTxnStartOffset != -1 || s.ProducerEpoch != h1Epoch {
		t.Fatalf("after abort, orders-0 producer %d: %+v", h1, s)
	}
	if s := findProducer(t, producersOf(t, ctx, adm, 1), h2); s.CurrentTxnStartOffset != -1 {
		t.Fatalf("after abort, orders-1 producer %d: %+v", h2, s)
	}
	out, _, code = script(t, "--bootstrap-server", bs, "find-hanging", "--broker-id", itoa(broker), "--max-transaction-timeout", "0")
	if code != 0 {
		t.Fatalf("find-hanging after abort: exit %d", code)
	}
	checkTable(t, "find-hanging after abort", out, findHangingHeaders)

	if err := open.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("commit tx-open: %v", err)
	}
}

// Failures of the calls themselves: an unknown topic times out after
// default.api.timeout.ms from --command-config, and a missing
// --command-config file is reported before anything is asked.
func TestCommandFailures(t *testing.T) {
	c := clitest.StartWithTopic(t, testcluster.Options{Brokers: 1}, "orders", 1, 1)
	bs := strings.Join(c.Bootstrap(), ",")
	cfg := clitest.WriteFile(t, "default.api.timeout.ms=2000\n")
	out, errOut, code := script(t, "--bootstrap-server", bs, "--command-config", cfg, "describe-producers", "--topic", "nope", "--partition", "0")
	if code != 1 || out != "" || !strings.HasPrefix(errOut, "Failed to describe producers for partition nope-0 on leader: ") ||
		!strings.HasSuffix(errOut, ". Enable debug logging for additional detail.\n") {
		t.Fatalf("unknown topic: exit %d stdout %q stderr %q", code, out, errOut)
	}
	t.Logf("unknown topic: %s", errOut)
	missing := filepath.Join(t.TempDir(), "admin.properties")
	out, errOut, code = script(t, "--bootstrap-server", bs, "--command-config", missing, "list")
	if code != 1 || out != "" || errOut != "Failed to load admin client properties: "+missing+". Enable debug logging for additional detail.\n" {
		t.Fatalf("missing config: exit %d stdout %q stderr %q", code, out, errOut)
	}
}

func TestScriptVersion(t *testing.T) { clitest.CheckScriptVersion(t, "kafka-transactions.sh") }

// list asks every broker for the transactions it coordinates: with three
// coordinators each id appears once, on the broker FindCoordinator names,
// the brokers' lists one after another by broker id.
func TestListAcrossCoordinators(t *testing.T) {
	c := clitest.StartWithTopic(t, testcluster.Options{Brokers: 3, Overrides: map[string]string{
		"transaction.state.log.num.partitions": "6", "transaction.state.log.replication.factor": "1",
		"transaction.state.log.min.isr": "1"}}, "orders", 3, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // bounds a failure only
	defer cancel()
	adm := c.Admin()
	var ids []string
	coordinators := map[int32]bool{}
	for i := 0; len(coordinators) < 2 || i < 4; i++ {
		if i == 20 {
			t.Fatalf("20 transactional ids, coordinators %v", coordinators)
		}
		id := fmt.Sprintf("multi-%d", i)
		cl := c.Client(kgo.TransactionalID(id), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Partition: int32(i % 3), Value: []byte(id)}).FirstErr(); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatalf("%s: commit: %v", id, err)
		}
		cl.Close()
		ids = append(ids, id)
		fc := adm.FindTxnCoordinators(ctx, id)
		if fc[id].Err != nil {
			t.Fatalf("%s: FindCoordinator: %v", id, fc[id].Err)
		}
		coordinators[fc[id].NodeID] = true
	}
	var rows [][]string
	c.WaitFor(time.Minute, "every transaction CompleteCommit", func() bool {
		d, err := adm.DescribeTransactions(ctx, ids...)
		if err != nil {
			return false
		}
		rows = nil
		for _, id := range ids {
			if d[id].State != "CompleteCommit" {
				return false
			}
			rows = append(rows, []string{id, itoa(d[id].Coordinator), itoa(d[id].ProducerID), "CompleteCommit"})
		}
		return true
	})
	out, errOut, code := script(t, "--bootstrap-server", strings.Join(c.Bootstrap(), ","), "list")
	if code != 0 || errOut != "" {
		t.Fatalf("list: exit %d stderr %q", code, errOut)
	}
	checkTable(t, "list", out, listHeaders, rows...)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")[1:]
	last := int64(-1)
	for _, l := range lines {
		n, err := strconv.ParseInt(strings.TrimSpace(strings.Split(l, "\t")[1]), 10, 32)
		if err != nil || n < last {
			t.Fatalf("coordinators out of order:\n%s", out)
		}
		last = n
	}
}
