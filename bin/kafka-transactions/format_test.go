package main

// The cases of apache/kafka 3.0:tools/src/test/java/org/apache/kafka/tools/TransactionsCommandTest.java,
// ported to the table builders: the same admin answers, the same rows. Kafka's
// test compares cells split on white space; these compare the whole lines,
// with prettyPrintTable's padding and tabs.

import (
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"
)

func table(headers []string, rows [][]string) string {
	var b strings.Builder
	prettyPrintTable(&b, headers, rows)
	return b.String()
}

func checkLines(t *testing.T, got string, want ...string) {
	t.Helper()
	if w := strings.Join(want, "\n") + "\n"; got != w {
		t.Fatalf("got:\n%q\nwant:\n%q", got, w)
	}
}

// testDescribeProducersLeader / testDescribeProducersSpecificReplica.
func TestDescribeProducersTable(t *testing.T) {
	got := table(describeProducersHeaders, describeProducersRows([]producerState{
		{producerID: 12345, producerEpoch: 15, lastSequence: 1300, lastTimestamp: 1599509565, coordinatorEpoch: 20, txnStartOffset: 990},
		{producerID: 98765, producerEpoch: 30, lastSequence: 2300, lastTimestamp: 1599509599, coordinatorEpoch: -1, txnStartOffset: -1},
	}))
	checkLines(t, got,
		"ProducerId\tProducerEpoch\tLatestCoordinatorEpoch\tLastSequence\tLastTimestamp\tCurrentTransactionStartOffset\t",
		"12345     \t15           \t20                    \t1300        \t1599509565   \t990                          \t",
		"98765     \t30           \t-1                    \t2300        \t1599509599   \tNone                         \t")
}

// testListTransactions: brokers in id order, each one's listings in its
// order; the admin client's names of the states.
func TestListTable(t *testing.T) {
	got := table(listHeaders, listRows([]brokerListings{
		{brokerID: 1, listings: []transactionListing{{"baz", 13579, "CompleteCommit"}}},
		{brokerID: 0, listings: []transactionListing{{"foo", 12345, "Ongoing"}, {"bar", 98765, "PrepareAbort"}}},
	}))
	checkLines(t, got,
		"TransactionalId\tCoordinator\tProducerId\tTransactionState\t",
		"foo            \t0          \t12345     \tOngoing         \t",
		"bar            \t0          \t98765     \tPrepareAbort    \t",
		"baz            \t1          \t13579     \tCompleteCommit  \t")
	if s := transactionState("Dead"); s != "Unknown" {
		t.Fatalf("Dead shows as %q", s)
	}
}

// testDescribeTransaction: the duration is the tool's clock minus the
// start time.
func TestDescribeTable(t *testing.T) {
	start := time.UnixMilli(1_700_000_000_000)
	d := transactionDescription{coordinatorID: 5, state: "Ongoing", producerID: 12345, producerEpoch: 15, timeoutMs: 10000,
		startTimeMs: start.UnixMilli(), partitions: []common.TopicPartition{{Topic: "bar", Partition: 0}}}
	got := table(describeHeaders, [][]string{describeRow("foo", d, start.Add(5*time.Second))})
	checkLines(t, got,
		"CoordinatorId\tTransactionalId\tProducerId\tProducerEpoch\tTransactionState\tTransactionTimeoutMs\tCurrentTransactionStartTimeMs\tTransactionDurationMs\tTopicPartitions\t",
		"5            \tfoo            \t12345     \t15           \tOngoing         \t10000               \t1700000000000                \t5000                 \tbar-0          \t")

	// No transaction in progress: no start time, no duration.
	d = transactionDescription{coordinatorID: 1, state: "Empty", producerID: 3, producerEpoch: 0, timeoutMs: 60000, startTimeMs: -1}
	if row := strings.Join(describeRow("idle", d, start), " "); row != "1 idle 3 0 Empty 60000 None None " {
		t.Fatalf("%q", row)
	}
}

// The find-hanging cases: a candidate is an open transaction older than
// the maximum timeout; it hangs unless the coordinator's transaction of
// the same producer still covers its partition.
func TestFindHanging(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	tp := common.TopicPartition{Topic: "foo", Partition: 5}
	old := producerState{producerID: 132, producerEpoch: 5, lastSequence: 500, lastTimestamp: now.Add(-60 * time.Minute).UnixMilli(),
		coordinatorEpoch: 19, txnStartOffset: 29384}
	maxTimeout := 15 * time.Minute

	// testFindHangingSpecifiedTopicPartition: a transaction written to
	// just now is no candidate.
	recent := old
	recent.lastTimestamp = now.UnixMilli()
	if c := candidateOpenTransactions(map[common.TopicPartition][]producerState{tp: {recent}}, []common.TopicPartition{tp}, maxTimeout, now); len(c) != 0 {
		t.Fatalf("recent transaction is a candidate: %+v", c)
	}
	noTxn := old
	noTxn.txnStartOffset = -1
	candidates := candidateOpenTransactions(map[common.TopicPartition][]producerState{tp: {old, noTxn}}, []common.TopicPartition{tp}, maxTimeout, now)
	if len(candidates) != 1 || candidates[0].state != old {
		t.Fatalf("candidates %+v", candidates)
	}

	hangingTable := table(findHangingHeaders, hangingRows(candidates, now))
	wantHanging := []string{
		"Topic\tPartition\tProducerId\tProducerEpoch\tCoordinatorEpoch\tStartOffset\tLastTimestamp\tDuration(min)\t",
		"foo  \t5        \t132       \t5            \t19              \t29384      \t1699996400000\t60           \t",
	}
	checkLines(t, hangingTable, wantHanging...)

	ongoing := func(tps ...common.TopicPartition) *transactionDescription {
		return &transactionDescription{coordinatorID: 1, state: "Ongoing", producerID: 132, producerEpoch: 5, timeoutMs: 60000,
			startTimeMs: now.UnixMilli(), partitions: tps}
	}
	cases := []struct {
		name    string
		ids     map[int64]string
		descs   map[string]*transactionDescription
		hanging bool
	}{
		{"testFindHangingNoMappedTransactionalId", map[int64]string{}, map[string]*transactionDescription{}, true},
		{"testFindHangingWithNoTransactionDescription", map[int64]string{132: "bar"}, map[string]*transactionDescription{"bar": nil}, true},
		{"testFindHangingDoesNotFilterByTransactionInProgressWithDifferentPartitions", map[int64]string{132: "bar"},
			map[string]*transactionDescription{"bar": ongoing(common.TopicPartition{Topic: "foo", Partition: 10})}, true},
		{"testFindHangingFilterByTransactionInProgressWithSamePartition", map[int64]string{132: "bar"},
			map[string]*transactionDescription{"bar": ongoing(tp)}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := filterHanging(candidates, c.ids, c.descs)
			if c.hanging != (len(got) == 1) || len(got) > 1 {
				t.Fatalf("hanging %+v", got)
			}
			if !c.hanging {
				checkLines(t, table(findHangingHeaders, hangingRows(got, now)), wantHanging[0])
			}
		})
	}
}
