// Command kafka-get-offsets is Kafka 3.x's kafka.tools.GetOffsetShell: it
// lists the topics (internal ones unless --exclude-internal-topics),
// filters their partitions with --topic/--partitions or --topic-partitions
// patterns, asks the leaders for the offset at --time (ListOffsets, API
// key 2) and prints "topic:partition:offset" lines sorted by topic and
// partition. Run it through bin/kafka-get-offsets.sh.
//
// Topic patterns are regular expressions matched against the whole topic
// name, as Java's String.matches does; Go's RE2 syntax stands in for
// java.util.regex (back references and look-arounds are refused).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
	"github.com/klassik/klassik/broker/common"
)

const helpText = "An interactive shell for getting topic-partition offsets."

// topicPartitionPattern is GetOffsetShell's TopicPartitionPattern.
const topicPartitionPattern = `([^:,]*)(?::(?:([0-9]*)|(?:([0-9]*)-([0-9]*))))?`

var topicPartitionRE = regexp.MustCompile(`^` + topicPartitionPattern + `$`)

// The tool's parser has no --help or --version (a plain joptsimple
// OptionParser without abbreviations).
var specs = []admintool.Spec{
	{Name: "broker-list", HasArg: true, ArgName: "String: HOST1:PORT1,...,HOST3:PORT3", Help: "DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is specified. The server(s) to connect to in the form HOST1:PORT1,HOST2:PORT2."},
	{Name: "bootstrap-server", HasArg: true, ArgName: "String: HOST1:PORT1,...,HOST3:PORT3", Help: "REQUIRED. The server(s) to connect to in the form HOST1:PORT1,HOST2:PORT2."},
	{Name: "topic-partitions", HasArg: true, ArgName: "String: topic1:1,topic2:0-3,topic3,topic4:5-,topic5:-3", Help: "Comma separated list of topic-partition patterns to get the offsets for, with the format of '" + topicPartitionPattern + "'. The first group is an optional regex for the topic name, if omitted, it matches any topic name. The section after ':' describes a 'partition' pattern, which can be: a number, a range in the format of 'NUMBER-NUMBER' (lower inclusive, upper exclusive), an inclusive lower bound in the format of 'NUMBER-', an exclusive upper bound in the format of '-NUMBER' or may be omitted to accept all partitions."},
	{Name: "topic", HasArg: true, ArgName: "String: topic", Help: "The topic to get the offsets for. It also accepts a regular expression. If not present, all authorized topics are queried. Cannot be used if --topic-partitions is present."},
	{Name: "partitions", HasArg: true, ArgName: "String: partition ids", Help: "Comma separated list of partition ids to get the offsets for. If not present, all partitions of the authorized topics are queried. Cannot be used if --topic-partitions is present."},
	{Name: "time", HasArg: true, ArgName: "String: <timestamp> / -1 or latest / -2 or earliest / -3 or max-timestamp", Help: "timestamp of the offsets before that. [Note: No offset is returned, if the timestamp greater than recently committed record timestamp is given.] (default: latest)"},
	{Name: "command-config", HasArg: true, ArgName: "String: config file", Help: "Property file containing configs to be passed to Admin Client."},
	{Name: "exclude-internal-topics", Help: "By default, internal topics are included. If specified, internal topics are excluded."},
}

// ListOffsets' special timestamps.
const (
	latestTimestamp   = -1
	earliestTimestamp = -2
	maxTimestamp      = -3
)

func main() {
	admintool.Main(func(ctx context.Context) int { return run(ctx, os.Args[1:], os.Stdout, os.Stderr) })
}

// request is a validated command line.
type request struct {
	bootstrap     string
	commandConfig string
	excludeInt    bool
	timestamp     int64
	filter        filter
}

// toolError is an exception GetOffsetShell.main catches: it prints
// "Error occurred: <message>" on stdout and exits 1.
type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }

func fail(format string, args ...any) error { return &toolError{msg: fmt.Sprintf(format, args...)} }

func parse(args []string) (*request, error) {
	if len(args) == 0 {
		return nil, admintool.Usagef("%s", helpText)
	}
	o, err := admintool.Parse(specs, args)
	if err != nil {
		var ue *admintool.UsageError
		if errors.As(err, &ue) {
			// joptsimple's OptionException escapes to main's catch.
			return nil, fail("%s", ue.Msg)
		}
		return nil, err
	}
	if !o.Has("bootstrap-server") && !o.Has("broker-list") {
		return nil, fail("Missing required option(s) [bootstrap-server]")
	}
	req := &request{commandConfig: o.Value("command-config"), excludeInt: o.Has("exclude-internal-topics")}
	req.bootstrap = o.Value("broker-list")
	if o.Has("bootstrap-server") {
		req.bootstrap = o.Value("bootstrap-server")
	}
	if !validHostPorts(req.bootstrap) {
		return nil, admintool.Usagef("Please provide valid host:port like host1:9091,host2:9092\n ")
	}
	if o.Has("topic-partitions") && (o.Has("topic") || o.Has("partitions")) {
		return nil, fail("--topic-partitions cannot be used with --topic or --partitions")
	}
	t := "latest"
	if o.Has("time") {
		t = o.Value("time")
	}
	if req.timestamp, err = parseTime(t); err != nil {
		return nil, err
	}
	if o.Has("topic-partitions") {
		req.filter, err = parsePatternList(o.Value("topic-partitions"))
	} else {
		topic := ".*"
		if o.Has("topic") {
			topic = o.Value("topic")
		}
		req.filter, err = topicAndPartitions(topic, o.Value("partitions"))
	}
	if err != nil {
		return nil, err
	}
	return req, nil
}

// validHostPorts is ToolsUtils.validatePortOrDie's check: every
// comma-separated entry ends in :port.
var hostPortRE = regexp.MustCompile(`^.*?\[?([0-9a-zA-Z\-%._:]*)\]?:([0-9]+)$`)

func validHostPorts(list string) bool {
	parts := strings.Split(list, ",")
	for _, p := range parts {
		if !hostPortRE.MatchString(p) {
			return false
		}
	}
	return len(parts) > 0
}

func parseTime(s string) (int64, error) {
	switch s {
	case "earliest":
		return earliestTimestamp, nil
	case "latest":
		return latestTimestamp, nil
	case "max-timestamp":
		return maxTimestamp, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fail("Malformed time argument %s, please use -1 or latest / -2 or earliest / -3 or max-timestamp, or a specified long format timestamp", s)
	}
	return n, nil
}

// topicFilter is Kafka's IncludeList: the regex with commas read as
// alternatives, blanks and surrounding quotes removed, matching whole
// names.
type topicFilter struct{ re *regexp.Regexp }

var leadingQuotes, trailingQuotes = regexp.MustCompile(`^["']+`), regexp.MustCompile(`["']+$`)

func newTopicFilter(raw string) (topicFilter, error) {
	r := strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(raw), ",", "|"), " ", "")
	r = trailingQuotes.ReplaceAllString(leadingQuotes.ReplaceAllString(r, ""), "")
	re, err := regexp.Compile(`^(?:` + r + `)$`)
	if err != nil {
		return topicFilter{}, fail("%s is an invalid regex.", r)
	}
	return topicFilter{re: re}, nil
}

// rule is one topic pattern with its partition condition.
type rule struct {
	topic topicFilter
	// set (when not nil and not empty) lists the allowed partitions;
	// otherwise [lo, hi) bounds them.
	set    []int32
	lo, hi int64
}

func (r rule) topicAllowed(topic string) bool { return r.topic.re.MatchString(topic) }

func (r rule) allowed(tp common.TopicPartition) bool {
	if !r.topicAllowed(tp.Topic) {
		return false
	}
	if r.set != nil {
		return slices.Contains(r.set, tp.Partition)
	}
	return int64(tp.Partition) >= r.lo && int64(tp.Partition) < r.hi
}

// filter is a union of rules (CompositeTopicPartitionFilter).
type filter []rule

func (f filter) topicAllowed(topic string) bool {
	return slices.ContainsFunc(f, func(r rule) bool { return r.topicAllowed(topic) })
}

func (f filter) allowed(tp common.TopicPartition) bool {
	return slices.ContainsFunc(f, func(r rule) bool { return r.allowed(tp) })
}

// parsePatternList reads --topic-partitions.
func parsePatternList(spec string) (filter, error) {
	var f filter
	for _, s := range javaSplit(spec, ",") {
		m := topicPartitionRE.FindStringSubmatch(s)
		if m == nil {
			return nil, fail("Invalid rule specification: %s", s)
		}
		topic := m[1]
		if topic == "" {
			topic = ".*"
		}
		tf, err := newTopicFilter(topic)
		if err != nil {
			return nil, err
		}
		r := rule{topic: tf, lo: 0, hi: math.MaxInt32}
		if m[2] != "" {
			n, err := javaInt(m[2])
			if err != nil {
				return nil, err
			}
			r.lo, r.hi = n, n+1
		} else {
			if m[3] != "" {
				if r.lo, err = javaInt(m[3]); err != nil {
					return nil, err
				}
			}
			if m[4] != "" {
				if r.hi, err = javaInt(m[4]); err != nil {
					return nil, err
				}
			}
		}
		f = append(f, r)
	}
	return f, nil
}

// javaInt is String.toInt: an out-of-range number is a
// NumberFormatException, whose message main prints.
func javaInt(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, fail("For input string: \"%s\"", s)
	}
	return n, nil
}

// javaSplit is String.split: trailing empty strings are dropped.
func javaSplit(s, sep string) []string {
	parts := strings.Split(s, sep)
	for len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// topicAndPartitions is the --topic/--partitions filter.
func topicAndPartitions(topic, partitions string) (filter, error) {
	tf, err := newTopicFilter(topic)
	if err != nil {
		return nil, err
	}
	r := rule{topic: tf, lo: 0, hi: math.MaxInt64}
	if partitions != "" {
		r.set = []int32{}
		for _, p := range javaSplit(partitions, ",") {
			n, err := strconv.ParseInt(p, 10, 32)
			if err != nil {
				return nil, fail("--partitions expects a comma separated list of numeric partition ids, but received: %s", partitions)
			}
			r.set = append(r.set, int32(n))
		}
	}
	return filter{r}, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	req, err := parse(args)
	if err == nil {
		err = fetchOffsets(ctx, req, stdout, stderr)
	}
	if err == nil {
		return 0
	}
	var ue *admintool.UsageError
	if errors.As(err, &ue) {
		fmt.Fprintln(stderr, ue.Msg)
		fmt.Fprint(stderr, admintool.Usage(specs))
		return 1
	}
	var te *toolError
	if errors.As(err, &te) {
		fmt.Fprintf(stdout, "Error occurred: %s\n", te.msg)
		return 1
	}
	fmt.Fprintf(stdout, "Error occurred: %s\n", javaMessage(err))
	return 1
}

// javaMessage is getMessage of the exception the Java client raises.
func javaMessage(err error) string {
	var ke *admintool.KafkaError
	if errors.As(admintool.ClientError(err, "LIST_OFFSETS"), &ke) {
		return ke.Message
	}
	return err.Error()
}

func fetchOffsets(ctx context.Context, req *request, stdout, stderr io.Writer) error {
	props, err := admintool.LoadOptionalProperties(req.commandConfig)
	if err != nil {
		return err
	}
	props["client.id"] = "GetOffsetShell"
	cl, timeout, err := admintool.NewClient(req.bootstrap, "GetOffsetShell", 30*time.Second, props)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*timeout)
	defer cancel()
	tps, err := listPartitions(ctx, cl, req)
	if err != nil {
		return err
	}
	if len(tps) == 0 {
		return fail("Could not match any topic-partitions with the specified filters")
	}
	offsets, errs, err := listOffsets(ctx, cl, tps, req.timestamp)
	if err != nil {
		return err
	}
	admintool.SortPartitions(tps)
	for _, tp := range tps {
		if e, ok := errs[tp]; ok {
			fmt.Fprintf(stderr, "Skip getting offsets for topic-partition %s:%d due to error: %s\n", tp.Topic, tp.Partition, e)
			continue
		}
		if off, ok := offsets[tp]; ok && off != -1 {
			fmt.Fprintf(stdout, "%s:%d:%d\n", tp.Topic, tp.Partition, off)
		}
	}
	return nil
}

// listPartitions is listPartitionInfos: every topic the metadata lists
// (internal ones unless excluded) that the filter allows, then their
// allowed partitions.
func listPartitions(ctx context.Context, cl *kgo.Client, req *request) ([]common.TopicPartition, error) {
	mreq := kmsg.NewPtrMetadataRequest()
	resp, err := mreq.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	var tps []common.TopicPartition
	for _, t := range resp.Topics {
		if t.Topic == nil || (req.excludeInt && t.IsInternal) || !req.filter.topicAllowed(*t.Topic) {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			continue
		}
		for _, p := range t.Partitions {
			tp := common.TopicPartition{Topic: *t.Topic, Partition: p.Partition}
			if req.filter.allowed(tp) {
				tps = append(tps, tp)
			}
		}
	}
	return tps, nil
}

// listOffsets asks each partition's leader for the offset at timestamp;
// per-partition failures come back as the Java exception's message.
func listOffsets(ctx context.Context, cl *kgo.Client, tps []common.TopicPartition, timestamp int64) (map[common.TopicPartition]int64, map[common.TopicPartition]string, error) {
	lreq := kmsg.NewPtrListOffsetsRequest()
	lreq.ReplicaID = -1
	for _, g := range admintool.GroupByTopic(tps) {
		t := kmsg.NewListOffsetsRequestTopic()
		t.Topic = g.Topic
		for _, p := range g.Partitions {
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = p, timestamp, -1
			t.Partitions = append(t.Partitions, rp)
		}
		lreq.Topics = append(lreq.Topics, t)
	}
	offsets := map[common.TopicPartition]int64{}
	errs := map[common.TopicPartition]string{}
	for _, sh := range cl.RequestSharded(ctx, lreq) {
		if sh.Err != nil {
			req, ok := sh.Req.(*kmsg.ListOffsetsRequest)
			if !ok {
				return nil, nil, sh.Err
			}
			for _, t := range req.Topics {
				for _, p := range t.Partitions {
					errs[common.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = javaMessage(sh.Err)
				}
			}
			continue
		}
		resp := sh.Resp.(*kmsg.ListOffsetsResponse)
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				tp := common.TopicPartition{Topic: t.Topic, Partition: p.Partition}
				if ke := admintool.NewKafkaError(p.ErrorCode, nil); ke != nil {
					errs[tp] = ke.Message
					continue
				}
				offsets[tp] = p.Offset
			}
		}
	}
	return offsets, errs, nil
}
