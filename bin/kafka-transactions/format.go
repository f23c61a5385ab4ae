package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/klassik/klassik/broker/common"
)

// The column headers of each command's table, as Kafka 3.0 prints them.
var (
	listHeaders = []string{"TransactionalId", "Coordinator", "ProducerId", "TransactionState"}

	describeHeaders = []string{"CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch",
		"TransactionState", "TransactionTimeoutMs", "CurrentTransactionStartTimeMs",
		"TransactionDurationMs", "TopicPartitions"}

	describeProducersHeaders = []string{"ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch",
		"LastSequence", "LastTimestamp", "CurrentTransactionStartOffset"}

	findHangingHeaders = []string{"Topic", "Partition", "ProducerId", "ProducerEpoch",
		"CoordinatorEpoch", "StartOffset", "LastTimestamp", "Duration(min)"}
)

// producerState is one active producer of a partition (the admin client's
// ProducerState): a coordinator epoch or start offset below zero is
// absent.
type producerState struct {
	producerID       int64
	producerEpoch    int32
	lastSequence     int32
	lastTimestamp    int64
	coordinatorEpoch int32
	txnStartOffset   int64
}

func (s producerState) hasTxn() bool { return s.txnStartOffset >= 0 }

// coordinatorEpochOr is OptionalInt.orElse.
func (s producerState) coordinatorEpochOr(def int32) int32 {
	if s.coordinatorEpoch < 0 {
		return def
	}
	return s.coordinatorEpoch
}

// transactionListing is one entry of ListTransactions.
type transactionListing struct {
	transactionalID string
	producerID      int64
	state           string
}

// transactionDescription is one entry of DescribeTransactions; a start
// time below zero is absent.
type transactionDescription struct {
	coordinatorID int32
	state         string
	producerID    int64
	producerEpoch int16
	timeoutMs     int32
	startTimeMs   int64
	partitions    []common.TopicPartition
}

// transactionState is the admin client's TransactionState.parse: a state
// it does not know (the broker's Dead) shows as Unknown.
func transactionState(s string) string {
	switch s {
	case "Ongoing", "PrepareAbort", "PrepareCommit", "CompleteAbort", "CompleteCommit", "Empty", "PrepareEpochFence":
		return s
	}
	return "Unknown"
}

// prettyPrintTable pads every cell to its column's widest value and ends
// each cell, the last one too, with a tab.
func prettyPrintTable(w io.Writer, headers []string, rows [][]string) {
	widths := make([]int, len(headers))
	for i, h := range headers {
		widths[i] = len(h)
	}
	for _, r := range rows {
		for i := range headers {
			widths[i] = max(widths[i], len(r[i]))
		}
	}
	var b strings.Builder
	for _, r := range append([][]string{headers}, rows...) {
		for i, cell := range r {
			b.WriteString(cell + strings.Repeat(" ", widths[i]-len(cell)) + "\t")
		}
		b.WriteString("\n")
	}
	fmt.Fprint(w, b.String())
}

// brokerListings are the transactions one coordinator listed, in its
// order.
type brokerListings struct {
	brokerID int32
	listings []transactionListing
}

// listRows: per coordinator by id, its transactions in the order it sent.
func listRows(byBroker []brokerListings) [][]string {
	sorted := slices.Clone(byBroker)
	slices.SortStableFunc(sorted, func(a, b brokerListings) int { return int(a.brokerID) - int(b.brokerID) })
	var rows [][]string
	for _, bl := range sorted {
		for _, l := range bl.listings {
			rows = append(rows, []string{l.transactionalID, strconv.Itoa(int(bl.brokerID)),
				strconv.FormatInt(l.producerID, 10), transactionState(l.state)})
		}
	}
	return rows
}

// describeRow is the one row of describe; now is the tool's clock.
func describeRow(transactionalID string, d transactionDescription, now time.Time) []string {
	start, duration := "None", "None"
	if d.startTimeMs >= 0 {
		start = strconv.FormatInt(d.startTimeMs, 10)
		duration = strconv.FormatInt(now.UnixMilli()-d.startTimeMs, 10)
	}
	tps := make([]string, 0, len(d.partitions))
	for _, tp := range sortedPartitions(d.partitions) {
		tps = append(tps, tp.String())
	}
	return []string{strconv.Itoa(int(d.coordinatorID)), transactionalID, strconv.FormatInt(d.producerID, 10),
		strconv.Itoa(int(d.producerEpoch)), transactionState(d.state), strconv.Itoa(int(d.timeoutMs)),
		start, duration, strings.Join(tps, ",")}
}

func sortedPartitions(tps []common.TopicPartition) []common.TopicPartition {
	s := slices.Clone(tps)
	slices.SortFunc(s, func(a, b common.TopicPartition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition) - int(b.Partition)
	})
	return s
}

// describeProducersRows: one row per active producer, in the broker's
// order.
func describeProducersRows(states []producerState) [][]string {
	rows := make([][]string, 0, len(states))
	for _, s := range states {
		start := "None"
		if s.hasTxn() {
			start = strconv.FormatInt(s.txnStartOffset, 10)
		}
		rows = append(rows, []string{strconv.FormatInt(s.producerID, 10), strconv.Itoa(int(s.producerEpoch)),
			strconv.Itoa(int(s.coordinatorEpochOr(-1))), strconv.Itoa(int(s.lastSequence)),
			strconv.FormatInt(s.lastTimestamp, 10), start})
	}
	return rows
}

// openTransaction is a partition's open transaction found by find-hanging.
type openTransaction struct {
	tp    common.TopicPartition
	state producerState
}

// hangingRows: one row per hanging transaction, its age in whole minutes
// since the producer last wrote.
func hangingRows(txns []openTransaction, now time.Time) [][]string {
	rows := make([][]string, 0, len(txns))
	for _, t := range txns {
		minutes := (now.UnixMilli() - t.state.lastTimestamp) / time.Minute.Milliseconds()
		start := t.state.txnStartOffset
		if start < 0 {
			start = -1
		}
		rows = append(rows, []string{t.tp.Topic, strconv.Itoa(int(t.tp.Partition)),
			strconv.FormatInt(t.state.producerID, 10), strconv.Itoa(int(t.state.producerEpoch)),
			strconv.Itoa(int(t.state.coordinatorEpochOr(-1))), strconv.FormatInt(start, 10),
			strconv.FormatInt(t.state.lastTimestamp, 10), strconv.FormatInt(minutes, 10)})
	}
	return rows
}

// candidateOpenTransactions picks the partitions' open transactions whose
// producer has not written for longer than maxTimeout: only those can be
// hanging.
func candidateOpenTransactions(byPartition map[common.TopicPartition][]producerState, order []common.TopicPartition, maxTimeout time.Duration, now time.Time) []openTransaction {
	var out []openTransaction
	for _, tp := range order {
		for _, s := range byPartition[tp] {
			if s.hasTxn() && now.UnixMilli()-s.lastTimestamp > maxTimeout.Milliseconds() {
				out = append(out, openTransaction{tp: tp, state: s})
			}
		}
	}
	return out
}

// filterHanging keeps the open transactions the coordinator will not
// finish: those whose producer id maps to no transactional id, whose
// transactional id the coordinator does not know (nil description), or
// whose partition is not among the ones the coordinator's transaction
// still covers.
func filterHanging(open []openTransaction, transactionalIDs map[int64]string, descriptions map[string]*transactionDescription) []openTransaction {
	var out []openTransaction
	for _, t := range open {
		id, ok := transactionalIDs[t.state.producerID]
		if !ok {
			out = append(out, t)
			continue
		}
		d := descriptions[id]
		if d == nil || !slices.Contains(d.partitions, t.tp) {
			out = append(out, t)
		}
	}
	return out
}
