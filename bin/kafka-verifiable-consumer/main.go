// Command kafka-verifiable-consumer is Kafka 2.8's
// org.apache.kafka.tools.VerifiableConsumer: a group member of one topic
// that prints Kafka's JSON event lines on stdout: startup_complete,
// partitions_assigned / partitions_revoked on rebalances, records_consumed
// with a per-partition summary (and record_data per record with
// --verbose), offsets_committed after each synchronous commit (unless
// --enable-autocommit), and shutdown_complete once it stops at
// --max-messages or on a signal. Run it through
// bin/kafka-verifiable-consumer.sh.
//
// Goroutines: main polls and commits; franz-go calls the rebalance
// callbacks, which print under the printer's lock.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/bin/internal/clitools/security"
	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
	"github.com/klassik/klassik/bin/kafka-verifiable-producer/verifiable"
	"github.com/klassik/klassik/config"
)

const assignorPkg = "org.apache.kafka.clients.consumer."

var parser = &verifiable.Parser{
	Prog:        "verifiable-consumer",
	Description: "This tool consumes messages from a specific topic and emits consumer events (e.g. group rebalances, received messages, and offsets committed) as JSON objects to STDOUT.",
	Exclusive:   []string{"bootstrap-server", "broker-list"},
	Args: []verifiable.Arg{
		{Name: "bootstrap-server", Metavar: "HOST1:PORT1[,HOST2:PORT2[...]]", Help: "REQUIRED unless --broker-list(deprecated) is specified. The server(s) to connect to. Comma-separated list of Kafka brokers in the form HOST1:PORT1,HOST2:PORT2,..."},
		{Name: "broker-list", Metavar: "HOST1:PORT1[,HOST2:PORT2[...]]", Help: "DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is specified.  Comma-separated list of Kafka brokers in the form HOST1:PORT1,HOST2:PORT2,..."},
		{Name: "topic", Metavar: "TOPIC", Required: true, Help: "Consumes messages from this topic."},
		{Name: "group-id", Metavar: "GROUP_ID", Required: true, Help: "The groupId shared among members of the consumer group"},
		{Name: "group-instance-id", Metavar: "GROUP_INSTANCE_ID", Help: "A unique identifier of the consumer instance"},
		{Name: "max-messages", Kind: verifiable.Integer, Metavar: "MAX-MESSAGES", Default: "-1", Help: "Consume this many messages. If -1 (the default), the consumer will consume until the process is killed externally"},
		{Name: "session-timeout", Kind: verifiable.Integer, Metavar: "TIMEOUT_MS", Default: "30000", Help: "Set the consumer's session timeout"},
		{Name: "verbose", Kind: verifiable.Flag, Help: "Enable to log individual consumed records (default: false)"},
		{Name: "enable-autocommit", Kind: verifiable.Flag, Help: "Enable offset auto-commit on consumer (default: false)"},
		{Name: "reset-policy", Metavar: "RESET_POLICY", Default: "earliest", Help: "Set reset policy (must be either 'earliest', 'latest', or 'none'"},
		{Name: "assignment-strategy", Metavar: "ASSIGNMENT_STRATEGY", Default: assignorPkg + "RangeAssignor", Help: "Set assignment strategy (e.g. " + assignorPkg + "RoundRobinAssignor)"},
		{Name: "consumer.config", Metavar: "CONFIG_FILE", Help: "Consumer config properties file (config options shared with command line parameters will be overridden)."},
	},
}

// balancers maps Kafka's assignor classes to franz-go's balancers.
var balancers = map[string]func() kgo.GroupBalancer{
	assignorPkg + "RangeAssignor":             kgo.RangeBalancer,
	assignorPkg + "RoundRobinAssignor":        kgo.RoundRobinBalancer,
	assignorPkg + "StickyAssignor":            kgo.StickyBalancer,
	assignorPkg + "CooperativeStickyAssignor": kgo.CooperativeStickyBalancer,
}

func main() {
	admintool.Main(func(ctx context.Context) int { return run(ctx, os.Args[1:], os.Stdout, os.Stderr) })
}

// consumer is a VerifiableConsumer.
type consumer struct {
	cl          *kgo.Client
	out         *verifiable.Printer
	topic       string
	maxMessages int64
	consumed    int64
	autoCommit  bool
	verbose     bool
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stdout, parser.Help())
		return 0
	}
	v, help, err := parser.Parse(args)
	if help {
		fmt.Fprint(stdout, parser.Help())
		return 0
	}
	if err != nil {
		parser.HandleError(stderr, err)
		return 1
	}
	c, err := newConsumer(v, stdout)
	if err != nil {
		var ae *verifiable.Error
		if errors.As(err, &ae) {
			parser.HandleError(stderr, err)
		} else {
			fmt.Fprintf(stderr, "Exception in thread \"main\" org.apache.kafka.common.KafkaException: Failed to construct kafka consumer\nCaused by: %v\n", err)
		}
		return 1
	}
	c.run(ctx, stderr)
	return 0
}

func newConsumer(v verifiable.Values, stdout io.Writer) (*consumer, error) {
	c := &consumer{out: verifiable.NewPrinter(stdout), topic: v.String("topic"), maxMessages: v.Int("max-messages", -1),
		autoCommit: v.Has("enable-autocommit"), verbose: v.Has("verbose")}
	props := map[string]string{}
	if v.Has("consumer.config") {
		file, err := admintool.LoadProperties(v.String("consumer.config"))
		if err != nil {
			return nil, &verifiable.Error{Msg: err.Error()}
		}
		props = file
	}
	bootstrap := v.String("broker-list")
	if v.Has("bootstrap-server") {
		bootstrap = v.String("bootstrap-server")
	}
	opts := []kgo.Opt{kgo.SeedBrokers(config.SplitList(bootstrap)...), kgo.ConsumerGroup(v.String("group-id")),
		kgo.ConsumeTopics(c.topic), kgo.SessionTimeout(time.Duration(v.Int("session-timeout", 30000)) * time.Millisecond),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			c.partitionsEvent("partitions_assigned", m)
		}),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			c.partitionsEvent("partitions_revoked", m)
		}),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			c.partitionsEvent("partitions_revoked", m)
		}),
	}
	if id := props["client.id"]; id != "" {
		opts = append(opts, kgo.ClientID(id))
	}
	if v.Has("group-instance-id") {
		opts = append(opts, kgo.InstanceID(v.String("group-instance-id")))
	}
	policy := v.String("reset-policy")
	if !v.Has("reset-policy") {
		policy = "earliest"
	}
	switch policy {
	case "earliest":
		opts = append(opts, kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	case "latest":
		opts = append(opts, kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()))
	case "none":
		opts = append(opts, kgo.ConsumeResetOffset(kgo.NoResetOffset()))
	default:
		return nil, fmt.Errorf("org.apache.kafka.common.config.ConfigException: Invalid value %s for configuration auto.offset.reset: String must be one of: latest, earliest, none", policy)
	}
	strategy := assignorPkg + "RangeAssignor"
	if v.Has("assignment-strategy") {
		strategy = v.String("assignment-strategy")
	}
	var bs []kgo.GroupBalancer
	for _, name := range config.SplitList(strategy) {
		b, ok := balancers[name]
		if !ok {
			return nil, fmt.Errorf("org.apache.kafka.common.KafkaException: Class %s cannot be found", name)
		}
		bs = append(bs, b())
	}
	opts = append(opts, kgo.Balancers(bs...))
	if c.autoCommit {
		opts = append(opts, kgo.AutoCommitInterval(5*time.Second))
	} else {
		opts = append(opts, kgo.DisableAutoCommit())
	}
	secOpts, err := security.Opts(props)
	if err != nil {
		return nil, err
	}
	if c.cl, err = kgo.NewClient(append(opts, secOpts...)...); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *consumer) finished() bool { return c.maxMessages >= 0 && c.consumed >= c.maxMessages }

// partitionsEvent prints a rebalance callback's partitions, sorted.
func (c *consumer) partitionsEvent(name string, m map[string][]int32) {
	var parts []verifiable.Object
	topics := make([]string, 0, len(m))
	for t := range m {
		topics = append(topics, t)
	}
	slices.Sort(topics)
	for _, t := range topics {
		ps := slices.Clone(m[t])
		slices.Sort(ps)
		for _, p := range ps {
			parts = append(parts, verifiable.Object{{Key: "topic", Value: t}, {Key: "partition", Value: p}})
		}
	}
	if parts == nil {
		parts = []verifiable.Object{}
	}
	c.out.Event(name, verifiable.Field{Key: "partitions", Value: parts})
}

// run is VerifiableConsumer.run: poll, summarize, commit, until the limit
// or a signal; then close (which revokes) and shutdown_complete.
func (c *consumer) run(ctx context.Context, stderr io.Writer) {
	c.out.Event("startup_complete")
	defer func() {
		c.cl.Close()
		c.out.Event("shutdown_complete")
	}()
	for !c.finished() {
		fs := c.cl.PollFetches(ctx)
		if ctx.Err() != nil || fs.IsClientClosed() {
			return
		}
		var fatal error
		fs.EachError(func(_ string, _ int32, err error) {
			if !kerr.IsRetriable(err) && !errors.Is(err, context.Canceled) && fatal == nil {
				fatal = err
			}
		})
		if fs.NumRecords() == 0 {
			if fatal != nil {
				fmt.Fprintf(stderr, "[%s] ERROR Error during processing, terminating consumer process:  (org.apache.kafka.tools.VerifiableConsumer)\n%v\n",
					time.Now().Format("2006-01-02 15:04:05,000"), fatal)
				return
			}
			continue
		}
		offsets := c.onRecords(fs)
		if !c.autoCommit {
			c.commitSync(ctx, offsets)
		}
	}
}

// committed is one partition's next offset to commit, in poll order.
type committed struct {
	topic     string
	partition int32
	offset    int64
}

// onRecords prints record_data (with --verbose) and records_consumed for
// one poll, cut at --max-messages, and returns the offsets to commit.
func (c *consumer) onRecords(fs kgo.Fetches) []committed {
	var offsets []committed
	summaries := []verifiable.Object{}
	fs.EachPartition(func(p kgo.FetchTopicPartition) {
		if c.finished() || len(p.Records) == 0 {
			return
		}
		recs := p.Records
		if c.maxMessages >= 0 && c.consumed+int64(len(recs)) > c.maxMessages {
			recs = recs[:c.maxMessages-c.consumed]
		}
		if len(recs) == 0 {
			return
		}
		minOff, maxOff := recs[0].Offset, recs[len(recs)-1].Offset
		offsets = append(offsets, committed{p.Topic, p.Partition, maxOff + 1})
		summaries = append(summaries, verifiable.Object{{Key: "topic", Value: p.Topic}, {Key: "partition", Value: p.Partition},
			{Key: "count", Value: int64(len(recs))}, {Key: "minOffset", Value: minOff}, {Key: "maxOffset", Value: maxOff}})
		if c.verbose {
			for _, r := range recs {
				var key *string
				if r.Key != nil {
					k := string(r.Key)
					key = &k
				}
				var value *string
				if r.Value != nil {
					v := string(r.Value)
					value = &v
				}
				c.out.Event("record_data", verifiable.Field{Key: "key", Value: key}, verifiable.Field{Key: "value", Value: value},
					verifiable.Field{Key: "topic", Value: r.Topic}, verifiable.Field{Key: "partition", Value: r.Partition},
					verifiable.Field{Key: "offset", Value: r.Offset})
			}
		}
		c.consumed += int64(len(recs))
	})
	c.out.Event("records_consumed", verifiable.Field{Key: "count", Value: int64(fs.NumRecords())}, verifiable.Field{Key: "partitions", Value: summaries})
	return offsets
}

// commitSync commits the offsets of one poll and prints
// offsets_committed with the outcome.
func (c *consumer) commitSync(ctx context.Context, offsets []committed) {
	if len(offsets) == 0 {
		return
	}
	m := map[string]map[int32]kgo.EpochOffset{}
	for _, o := range offsets {
		if m[o.topic] == nil {
			m[o.topic] = map[int32]kgo.EpochOffset{}
		}
		m[o.topic][o.partition] = kgo.EpochOffset{Epoch: -1, Offset: o.offset}
	}
	var cerr error
	c.cl.CommitOffsetsSync(context.WithoutCancel(ctx), m, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			cerr = err
			return
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if e := kerr.ErrorForCode(p.ErrorCode); e != nil && cerr == nil {
					cerr = e
				}
			}
		}
	})
	list := make([]verifiable.Object, 0, len(offsets))
	for _, o := range offsets {
		list = append(list, verifiable.Object{{Key: "topic", Value: o.topic}, {Key: "partition", Value: o.partition}, {Key: "offset", Value: o.offset}})
	}
	fields := []verifiable.Field{{Key: "offsets", Value: list}}
	if cerr != nil {
		fields = append(fields, verifiable.Field{Key: "error", Value: commitMessage(cerr)})
	}
	fields = append(fields, verifiable.Field{Key: "success", Value: cerr == nil})
	c.out.Event("offsets_committed", fields...)
}

// commitMessage is getMessage of the Java consumer's commit exception.
func commitMessage(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return admintool.NewKafkaError(ke.Code, nil).Message
	}
	return strings.TrimSpace(err.Error())
}
