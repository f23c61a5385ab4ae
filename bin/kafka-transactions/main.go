// Command kafka-transactions lists and describes transactions and the
// producers of a partition, finds hanging transactions and aborts them,
// with the command line, tables, messages and exit statuses of Apache
// Kafka 3.0's kafka-transactions.sh (org.apache.kafka.tools.TransactionsCommand).
// Run it through bin/kafka-transactions.sh.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
	"github.com/klassik/klassik/broker/common"
)

func main() {
	admintool.Main(func(ctx context.Context) int { return run(ctx, os.Args[1:], os.Stdout, os.Stderr) })
}

// Admin client defaults (request.timeout.ms, default.api.timeout.ms).
const (
	defaultRequestTimeout = 30 * time.Second
	defaultAPITimeout     = 60 * time.Second
)

// maxBatchSize bounds the topics and partitions find-hanging asks about in
// one request.
const maxBatchSize = 500

// exitError is printErrorAndExit: the message on stderr, status 1.
type exitError struct{ msg string }

func (e *exitError) Error() string { return e.msg }

// failed is printErrorAndExit(message, cause).
func failed(msg string, cause error) error {
	return &exitError{msg: msg + ": " + cause.Error() + "." + " Enable debug logging for additional detail."}
}

func failedf(format string, args ...any) error { return &exitError{msg: fmt.Sprintf(format, args...)} }

// run executes one command line. Argument mistakes print the usage and
// the error on stderr (status 1), as does --help after printing the help
// on stdout; a failed command prints its message on stderr (status 1).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	ns, outcome, err := newParser().parse(args, stdout)
	var pe *parseError
	switch {
	case errors.As(err, &pe):
		printError(stderr, pe)
		return 1
	case outcome == outcomeVersion:
		return 0
	case outcome == outcomeHelp:
		return 1
	}
	o := optionsFrom(ns)
	if err := execute(ctx, o, stdout); err != nil {
		fmt.Fprintln(stderr, err.Error())
		return 1
	}
	return 0
}

// tool is one run's admin connection and clock.
type tool struct {
	a          *admin
	apiTimeout time.Duration
	now        func() time.Time
}

func execute(ctx context.Context, o *options, stdout io.Writer) error {
	props := map[string]string{}
	if o.commandConfig != "" {
		var err error
		if props, err = admintool.LoadProperties(o.commandConfig); err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) && errors.Is(err, fs.ErrNotExist) {
				err = errors.New(pe.Path) // Java's NoSuchFileException message
			}
			return failed("Failed to load admin client properties", err)
		}
	}
	apiTimeout := defaultAPITimeout
	if v, ok := props["default.api.timeout.ms"]; ok {
		ms, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || ms < 0 {
			return failedf("Invalid value %s for configuration default.api.timeout.ms", v)
		}
		apiTimeout = time.Duration(ms) * time.Millisecond
	}
	cl, _, err := admintool.NewClient(o.bootstrap, "adminclient-1", defaultRequestTimeout, props)
	if err != nil {
		return &exitError{msg: err.Error()}
	}
	defer cl.Close()
	t := &tool{a: &admin{cl: cl, adm: kadm.NewClient(cl)}, apiTimeout: apiTimeout, now: time.Now}
	switch o.command {
	case "list":
		return t.list(ctx, stdout)
	case "describe":
		return t.describe(ctx, o, stdout)
	case "describe-producers":
		return t.describeProducers(ctx, o, stdout)
	case "abort":
		return t.abort(ctx, o)
	case "find-hanging":
		return t.findHanging(ctx, o, stdout)
	}
	return failedf("Unexpected command %s", o.command)
}

// call bounds one admin call by default.api.timeout.ms.
func (t *tool) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, t.apiTimeout)
}

func (t *tool) list(ctx context.Context, stdout io.Writer) error {
	c, cancel := t.call(ctx)
	defer cancel()
	byBroker, err := t.a.listTransactions(c, nil)
	if err != nil {
		return failed("Failed to list transactions", err)
	}
	prettyPrintTable(stdout, listHeaders, listRows(byBroker))
	return nil
}

func (t *tool) describe(ctx context.Context, o *options, stdout io.Writer) error {
	c, cancel := t.call(ctx)
	defer cancel()
	id := o.transactionalID
	descs, errs := t.a.describeTransactions(c, []string{id})
	if err := errs[id]; err != nil {
		return failed("Failed to describe transaction state of transactional-id `"+id+"`", err)
	}
	prettyPrintTable(stdout, describeHeaders, [][]string{describeRow(id, *descs[id], t.now())})
	return nil
}

func (t *tool) describeProducers(ctx context.Context, o *options, stdout io.Writer) error {
	c, cancel := t.call(ctx)
	defer cancel()
	tp := common.TopicPartition{Topic: o.topic, Partition: *o.partition}
	res := t.a.describeProducers(c, []common.TopicPartition{tp}, o.brokerID)[tp]
	if res.err != nil {
		clause := "leader"
		if o.brokerID != nil {
			clause = fmt.Sprintf("broker %d", *o.brokerID)
		}
		return failed(fmt.Sprintf("Failed to describe producers for partition %s on %s", tp, clause), res.err)
	}
	prettyPrintTable(stdout, describeProducersHeaders, describeProducersRows(res.states))
	return nil
}

func (t *tool) abort(ctx context.Context, o *options) error {
	tp := common.TopicPartition{Topic: o.topic, Partition: *o.partition}
	if o.startOffset == nil && o.producerID == nil {
		return failedf("The transaction to abort must be identified either with --start-offset (for brokers on 3.0 or above) " +
			"or with --producer-id, --producer-epoch, and --coordinator-epoch (for older brokers)")
	}
	var spec abortSpec
	if o.startOffset == nil {
		if o.producerEpoch == nil {
			return failedf("Missing required argument --producer-epoch")
		}
		if o.coordinatorEpoch == nil {
			return failedf("Missing required argument --coordinator-epoch")
		}
		// A transaction that hung before its producer id ever committed or
		// aborted shows coordinator epoch -1; 0 is never above a real one.
		spec = abortSpec{tp: tp, producerID: *o.producerID, producerEpoch: *o.producerEpoch, coordinatorEpoch: max(*o.coordinatorEpoch, 0)}
	} else {
		c, cancel := t.call(ctx)
		res := t.a.describeProducers(c, []common.TopicPartition{tp}, nil)[tp]
		cancel()
		if res.err != nil {
			return failed("Failed to validate producer state for partition "+tp.String(), res.err)
		}
		i := slices.IndexFunc(res.states, func(s producerState) bool { return s.hasTxn() && s.txnStartOffset == *o.startOffset })
		if i < 0 {
			return failedf("Could not find any open transactions starting at offset %d on partition %s", *o.startOffset, tp)
		}
		s := res.states[i]
		spec = abortSpec{tp: tp, producerID: s.producerID, producerEpoch: int16(s.producerEpoch), coordinatorEpoch: s.coordinatorEpochOr(0)}
	}
	c, cancel := t.call(ctx)
	defer cancel()
	if err := t.a.abortTransaction(c, spec); err != nil {
		return failed("Failed to abort transaction "+spec.String(), err)
	}
	return nil
}

func (t *tool) findHanging(ctx context.Context, o *options, stdout io.Writer) error {
	if !o.hasTopic && o.brokerID == nil {
		return failedf("The `find-hanging` command requires either --topic or --broker-id to limit the scope of the search")
	}
	if o.partition != nil && !o.hasTopic {
		return failedf("The --partition argument requires --topic to be provided")
	}
	maxTimeout := time.Duration(o.maxTransactionTimeoutMinutes) * time.Minute
	tps, err := t.partitionsToSearch(ctx, o)
	if err != nil {
		return err
	}
	candidates, err := t.candidates(ctx, o.brokerID, maxTimeout, tps)
	if err != nil {
		return err
	}
	if len(candidates) == 0 {
		prettyPrintTable(stdout, findHangingHeaders, nil)
		return nil
	}
	// Grouped by producer id, as Kafka's map of them iterates.
	slices.SortStableFunc(candidates, func(x, y openTransaction) int { return compareInt64(x.state.producerID, y.state.producerID) })
	var pids []int64
	for _, c := range candidates {
		if !slices.Contains(pids, c.state.producerID) {
			pids = append(pids, c.state.producerID)
		}
	}
	c, cancel := t.call(ctx)
	byBroker, err := t.a.listTransactions(c, pids)
	cancel()
	if err != nil {
		return failed(fmt.Sprintf("Failed to list transactions for %d producers", len(pids)), err)
	}
	txnIDs := map[int64]string{}
	for _, bl := range byBroker {
		for _, l := range bl.listings {
			if slices.Contains(pids, l.producerID) {
				txnIDs[l.producerID] = l.transactionalID
			}
		}
	}
	var ids []string
	for _, id := range txnIDs {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	descs := map[string]*transactionDescription{}
	if len(ids) > 0 {
		c, cancel := t.call(ctx)
		got, errs := t.a.describeTransactions(c, ids)
		cancel()
		for _, id := range ids {
			var nf *errTransactionalIDNotFound
			switch err := errs[id]; {
			case err == nil:
				descs[id] = got[id]
			case errors.As(err, &nf):
				descs[id] = nil
			default:
				return failed(fmt.Sprintf("Failed to describe %d transactions", len(txnIDs)), err)
			}
		}
	}
	prettyPrintTable(stdout, findHangingHeaders, hangingRows(filterHanging(candidates, txnIDs, descs), t.now()))
	return nil
}

func compareInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// partitionsToSearch is the one partition asked for, or the partitions of
// the topic (or of every topic) with a replica on the broker, when given.
func (t *tool) partitionsToSearch(ctx context.Context, o *options) ([]common.TopicPartition, error) {
	var topics []string
	switch {
	case o.hasTopic && o.partition != nil:
		return []common.TopicPartition{{Topic: o.topic, Partition: *o.partition}}, nil
	case o.hasTopic:
		topics = []string{o.topic}
	default:
		c, cancel := t.call(ctx)
		var err error
		topics, err = t.a.listTopics(c)
		cancel()
		if err != nil {
			return nil, failed("Failed to list topics", err)
		}
	}
	var tps []common.TopicPartition
	for batch := range slices.Chunk(topics, maxBatchSize) {
		c, cancel := t.call(ctx)
		infos, err := t.a.describeTopics(c, batch)
		cancel()
		if err != nil {
			return nil, failed(fmt.Sprintf("Failed to describe %d topics", len(batch)), err)
		}
		for _, topic := range batch {
			for _, p := range infos[topic].partitions {
				if o.brokerID == nil || slices.Contains(p.replicas, *o.brokerID) {
					tps = append(tps, common.TopicPartition{Topic: topic, Partition: p.partition})
				}
			}
		}
	}
	return tps, nil
}

// candidates are the open transactions of tps older than maxTimeout.
func (t *tool) candidates(ctx context.Context, brokerID *int32, maxTimeout time.Duration, tps []common.TopicPartition) ([]openTransaction, error) {
	var out []openTransaction
	for batch := range slices.Chunk(tps, maxBatchSize) {
		c, cancel := t.call(ctx)
		res := t.a.describeProducers(c, batch, brokerID)
		cancel()
		byPartition := map[common.TopicPartition][]producerState{}
		for _, tp := range batch {
			if err := res[tp].err; err != nil {
				broker := "Optional.empty"
				if brokerID != nil {
					broker = fmt.Sprintf("Optional[%d]", *brokerID)
				}
				return nil, failed(fmt.Sprintf("Failed to describe producers for %d partitions on broker %s", len(batch), broker), err)
			}
			byPartition[tp] = res[tp].states
		}
		out = append(out, candidateOpenTransactions(byPartition, batch, maxTimeout, t.now())...)
	}
	return out, nil
}
