// Command kafka-log-dirs queries the log directories of brokers
// (DescribeLogDirs) with the options and output of Kafka's
// kafka-log-dirs.sh (kafka.admin.LogDirsCommand). Run it through
// bin/kafka-log-dirs.sh.
//
//	kafka-log-dirs.sh --bootstrap-server host:9092 --describe [--broker-list 1,2] [--topic-list a,b] [--command-config admin.properties]
//
// It prints "Querying brokers for log directories information", then
// "Received log directory information from brokers <ids>" and one JSON
// line, {"version":1,"brokers":[{"broker":1,"logDirs":[{"logDir":...,
// "error":null,"partitions":[{"partition":"t-0","size":..,"offsetLag":0,
// "isFuture":false}]}]}]}. Brokers come in ascending id order, log
// directories and partitions in the iteration order of the Java HashMaps
// Kafka's admin client fills (jvm.HashMapOrder), so the line is Kafka's byte
// for byte. Without --broker-list every broker of the cluster's metadata is
// asked; a broker answering no directory at all (no Describe on the
// Cluster) fails the tool with ClusterAuthorizationException, as the Java
// admin client does.
//
// Differences: an id in --broker-list that no live broker has fails at
// once instead of after the admin client's 60 s node-assignment timeout.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
	"github.com/klassik/klassik/broker/common/jvm"
)

const helpText = "This tool helps to query log directory usage on the specified brokers."

// timeout is the Java admin client's default.api.timeout.ms.
const timeout = 60 * time.Second

var specs = append([]admintool.Spec{
	{Name: "bootstrap-server", HasArg: true, ArgName: "String: The server(s) to use for bootstrapping", Help: "REQUIRED: the server(s) to use for bootstrapping"},
	{Name: "broker-list", HasArg: true, ArgName: "String: Broker list", Help: `The list of brokers to be queried in the form "0,1,2". All brokers in the cluster will be queried if no broker list is specified`},
	{Name: "command-config", HasArg: true, ArgName: "String: Admin client property file", Help: "Property file containing configs to be passed to Admin Client."},
	{Name: "describe", Help: "Describe the specified log directories on the specified brokers."},
	{Name: "topic-list", HasArg: true, ArgName: "String: Topic list", Help: `The list of topics to be queried in the form "topic1,topic2,topic3". All topics will be queried if no topic list is specified (default: )`},
}, admintool.HelpSpecs...)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options is a validated command line.
type options struct {
	bootstrap     string
	commandConfig string
	topics        []string // empty: every topic
	brokers       []int32  // nil: every broker of the cluster
}

// parse validates the command line as LogDirsCommandOptions does: no
// argument or --help prints the help on stderr (status 1), and
// --bootstrap-server and --describe are required.
func parse(args []string) (*options, string, error) {
	o, special, err := admintool.ParseAdminCommand(specs, args)
	if o == nil {
		return nil, special, err
	}
	for _, req := range []string{"bootstrap-server", "describe"} {
		if !o.Has(req) {
			return nil, "", admintool.Usagef(`Missing required argument "[%s]"`, req)
		}
	}
	opts := &options{bootstrap: o.Value("bootstrap-server"), commandConfig: o.Value("command-config")}
	for _, t := range strings.Split(o.Value("topic-list"), ",") {
		if t != "" {
			opts.topics = append(opts.topics, t)
		}
	}
	if o.Has("broker-list") {
		opts.brokers = []int32{}
		for _, s := range strings.Split(o.Value("broker-list"), ",") {
			if s == "" {
				continue
			}
			id, err := strconv.ParseInt(s, 10, 32)
			if err != nil {
				return nil, "", &numberFormat{s}
			}
			opts.brokers = append(opts.brokers, int32(id))
		}
	}
	return opts, "", nil
}

// numberFormat is Java's NumberFormatException from String.toInt, which
// escapes LogDirsCommand.main.
type numberFormat struct{ input string }

func (e *numberFormat) Error() string { return fmt.Sprintf("For input string: %q", e.input) }

func run(args []string, stdout, stderr io.Writer) int {
	opts, special, err := parse(args)
	if code, done := admintool.CommandLine(special, err, admintool.UsageAndDie, helpText, specs, stdout, stderr); done {
		return code
	}
	var nf *numberFormat
	if errors.As(err, &nf) {
		fmt.Fprint(stderr, admintool.Uncaught("java.lang.NumberFormatException", nf.Error()))
		return 1
	}
	if err != nil {
		return admintool.Fail(err, specs, stderr)
	}
	props, err := admintool.LoadOptionalProperties(opts.commandConfig)
	if err != nil {
		return admintool.Fail(err, specs, stderr)
	}
	cl, reqTimeout, err := admintool.NewClient(opts.bootstrap, "log-dirs-tool", timeout, props)
	if err != nil {
		return admintool.Fail(err, specs, stderr)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), reqTimeout)
	defer cancel()
	if err := describe(ctx, cl, opts, stdout); err != nil {
		return admintool.Fail(err, specs, stderr)
	}
	return 0
}

// describe is LogDirsCommand.describe.
func describe(ctx context.Context, cl *kgo.Client, opts *options, out io.Writer) error {
	brokers := opts.brokers
	if brokers == nil {
		md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
		if err != nil {
			return &admintool.ExecutionError{Cause: admintool.ClientError(err, "DESCRIBE_CLUSTER")}
		}
		for _, b := range md.Brokers {
			brokers = append(brokers, b.NodeID)
		}
	}
	fmt.Fprintln(out, "Querying brokers for log directories information")
	byBroker := map[int32][]dirInfo{}
	for _, id := range brokers {
		dirs, err := describeBroker(ctx, cl, id)
		if err != nil {
			return &admintool.ExecutionError{Cause: err}
		}
		byBroker[id] = dirs
	}
	ids := make([]string, len(brokers))
	for i, id := range brokers {
		ids[i] = strconv.Itoa(int(id))
	}
	fmt.Fprintf(out, "Received log directory information from brokers %s\n", strings.Join(ids, ","))
	fmt.Fprintln(out, formatJSON(byBroker, opts.topics))
	return nil
}

// dirInfo is one log directory of a DescribeLogDirs answer, in the order
// of the Java admin client's HashMap.
type dirInfo struct {
	path  string
	error string // exception class name, "" for none
	parts []partInfo
}

type partInfo struct {
	topic     string
	partition int32
	size      int64
	offsetLag int64
	isFuture  bool
}

// describeBroker sends DescribeLogDirs (every topic) to one broker.
func describeBroker(ctx context.Context, cl *kgo.Client, id int32) ([]dirInfo, error) {
	if err := waitForBroker(ctx, cl, id); err != nil {
		return nil, err
	}
	req := kmsg.NewPtrDescribeLogDirsRequest()
	req.Topics = nil
	resp, err := req.RequestWith(ctx, cl.Broker(int(id)))
	if err != nil {
		return nil, admintool.ClientError(err, "DESCRIBE_LOG_DIRS")
	}
	if resp.ErrorCode != 0 {
		return nil, admintool.NewKafkaError(resp.ErrorCode, nil)
	}
	if len(resp.Dirs) == 0 {
		// No directory at all means Describe on the Cluster was refused.
		return nil, admintool.NewKafkaError(kerr.ClusterAuthorizationFailed.Code, nil)
	}
	var dirs []dirInfo
	for _, d := range resp.Dirs {
		di := dirInfo{path: d.Dir}
		if ke := admintool.NewKafkaError(d.ErrorCode, nil); ke != nil {
			di.error = "org.apache.kafka.common.errors." + ke.Class
		}
		for _, t := range d.Topics {
			for _, p := range t.Partitions {
				di.parts = append(di.parts, partInfo{t.Topic, p.Partition, p.Size, p.OffsetLag, p.IsFuture})
			}
		}
		dirs = append(dirs, di)
	}
	return dirs, nil
}

// waitForBroker checks that id is a broker of the cluster's metadata (the
// Java client's node assignment).
func waitForBroker(ctx context.Context, cl *kgo.Client, id int32) error {
	md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil {
		return admintool.ClientError(err, "DESCRIBE_LOG_DIRS")
	}
	if !slices.ContainsFunc(md.Brokers, func(b kadm.BrokerDetail) bool { return b.NodeID == id }) {
		return &admintool.KafkaError{Code: kerr.RequestTimedOut.Code, Class: "TimeoutException",
			Message: "Timed out waiting for a node assignment. Call: describeLogDirs"}
	}
	return nil
}

// formatJSON is LogDirsCommand.formatAsJson: Kafka's Json.encodeAsString
// of version, brokers, each broker's log dirs and their partitions
// (filtered by topic when topics is not empty).
func formatJSON(byBroker map[int32][]dirInfo, topics []string) string {
	ids := make([]int32, 0, len(byBroker))
	for id := range byBroker {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var b strings.Builder
	b.WriteString(`{"version":1,"brokers":[`)
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"broker":%d,"logDirs":[`, id)
		dirs := byBroker[id]
		for j, di := range jvm.HashMapOrder(dirs, len(dirs), func(d dirInfo) int32 { return jvm.StringHashCode(d.path) }) {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"logDir":` + jsonString(di.path) + `,"error":`)
			if di.error == "" {
				b.WriteString("null")
			} else {
				b.WriteString(jsonString(di.error))
			}
			b.WriteString(`,"partitions":[`)
			// The admin client's map, then the filtered copy, both
			// HashMaps of default capacity.
			parts := jvm.HashMapOrder(di.parts, -1, partHash)
			var kept []partInfo
			for _, p := range parts {
				if len(topics) == 0 || slices.Contains(topics, p.topic) {
					kept = append(kept, p)
				}
			}
			for k, p := range jvm.HashMapOrder(kept, -1, partHash) {
				if k > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"partition":%s,"size":%d,"offsetLag":%d,"isFuture":%t}`,
					jsonString(p.topic+"-"+strconv.Itoa(int(p.partition))), p.size, p.offsetLag, p.isFuture)
			}
			b.WriteString("]}")
		}
		b.WriteString("]}")
	}
	b.WriteString("]}")
	return b.String()
}

func partHash(p partInfo) int32 { return jvm.TopicPartitionHashCode(p.topic, p.partition) }

// jsonString quotes s as Jackson does: only '"', '\\' and control
// characters are escaped (the usual short forms, \u00XX otherwise).
func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
