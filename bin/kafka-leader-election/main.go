// Command kafka-leader-election elects partition leaders (preferred or
// unclean) through the ElectLeaders API, with the options and output of
// Kafka's kafka-leader-election.sh. Run it through
// bin/kafka-leader-election.sh.
package main

import (
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/klassik/klassik/broker/common"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
)

const helpText = "This tool attempts to elect a new leader for a set of topic partitions. The type of elections supported are preferred replicas and unclean replicas."

// defaultTimeout is the tool's fixed 30 s admin timeout (Kafka passes it as
// default.api.timeout.ms, and half of it as request.timeout.ms).
const defaultTimeout = 30 * time.Second

var specs = append([]admintool.Spec{
	{Name: "bootstrap-server", HasArg: true, ArgName: "String: host:port", Help: "A hostname and port for the broker to connect to, in the form host:port. Multiple comma separated URLs can be given. REQUIRED."},
	{Name: "admin.config", HasArg: true, ArgName: "String: config file", Help: "Configuration properties files to pass to the admin client"},
	{Name: "path-to-json-file", HasArg: true, ArgName: "String: Path to JSON file", Help: `The JSON file with the list  of partition for which leader elections should be performed. This is an example format. {"partitions": [{"topic": "foo", "partition": 1}, {"topic": "foobar", "partition": 2}]} Not allowed if --all-topic-partitions or --topic flags are specified.`},
	{Name: "topic", HasArg: true, ArgName: "String: topic name", Help: "Name of topic for which to perform an election. Not allowed if --path-to-json-file or --all-topic-partitions is specified."},
	{Name: "partition", HasArg: true, ArgName: "Integer: partition id", Help: "Partition id for which to perform an election. REQUIRED if --topic is specified."},
	{Name: "all-topic-partitions", Help: "Perform election on all of the eligible topic partitions based on the type of election (see the --election-type flag). Not allowed if --topic or --path-to-json-file is specified."},
	{Name: "election-type", HasArg: true, ArgName: "[PREFERRED,UNCLEAN]: election type", Help: `Type of election to attempt. Possible values are "preferred" for preferred leader election or "unclean" for unclean leader election. If preferred election is selection, the election is only performed if the current leader is not the preferred leader for the topic partition. If unclean election is selected, the election is only performed if there are no leader for the topic partition. REQUIRED.`},
}, admintool.HelpSpecs...)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, defaultTimeout))
}

// request is a validated command line.
type request struct {
	bootstrap    string
	adminConfig  string
	electionType int8
	// partitions is nil for --all-topic-partitions.
	partitions []common.TopicPartition
}

// parse validates the command line as LeaderElectionCommand.validate does.
// special is "help" or "version" when the tool should only print those.
func parse(args []string) (req *request, special string, err error) {
	o, special, err := admintool.ParseAdminCommand(specs, args)
	if o == nil {
		return nil, special, err
	}
	req = &request{}
	// joptsimple converts --election-type when parsing, before validate.
	if o.Has("election-type") {
		switch v := o.Value("election-type"); strings.ToUpper(v) {
		case "PREFERRED":
			req.electionType = admintool.ElectionPreferred
		case "UNCLEAN":
			req.electionType = admintool.ElectionUnclean
		default:
			return nil, "", admintool.Usagef("Cannot parse argument '%s' of option election-type", v)
		}
	}
	if o.Has("partition") {
		if _, err := strconv.ParseInt(o.Value("partition"), 10, 32); err != nil {
			return nil, "", admintool.Usagef("Cannot parse argument '%s' of option partition", o.Value("partition"))
		}
	}
	var missing []string
	if !o.Has("bootstrap-server") {
		missing = append([]string{"bootstrap-server"}, missing...)
	}
	if !o.Has("election-type") {
		missing = append([]string{"election-type"}, missing...)
	}
	if len(missing) > 0 {
		return nil, "", &admintool.CommandFailed{Msg: "Missing required option(s): " + strings.Join(missing, ", ")}
	}
	n := 0
	for _, name := range []string{"topic", "all-topic-partitions", "path-to-json-file"} {
		if o.Has(name) {
			n++
		}
	}
	if n != 1 {
		return nil, "", &admintool.CommandFailed{Msg: "One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file"}
	}
	switch {
	case o.Has("topic") && !o.Has("partition"):
		return nil, "", &admintool.CommandFailed{Msg: "Missing required option(s): partition"}
	case !o.Has("topic") && o.Has("partition"):
		return nil, "", &admintool.CommandFailed{Msg: "Option partition is only allowed if topic is used"}
	}
	req.bootstrap = o.Value("bootstrap-server")
	req.adminConfig = o.Value("admin.config")
	switch {
	case o.Has("topic"):
		p, _ := strconv.ParseInt(o.Value("partition"), 10, 32)
		req.partitions = []common.TopicPartition{{Topic: o.Value("topic"), Partition: int32(p)}}
	case o.Has("path-to-json-file"):
		data, err := admintool.ReadFile(o.Value("path-to-json-file"))
		if err != nil {
			return nil, "", err
		}
		req.partitions, err = parseElectionData(data)
		if err != nil {
			return nil, "", err
		}
	}
	return req, "", nil
}

// parseElectionData reads --path-to-json-file with Kafka's messages.
func parseElectionData(data []byte) ([]common.TopicPartition, error) {
	l, err := admintool.ParsePartitionList(data)
	switch {
	case errors.Is(err, admintool.ErrNotJSON):
		return nil, &admintool.AdminOperation{Msg: "Replica election data is empty"}
	case errors.Is(err, admintool.ErrNoPartitions):
		return nil, &admintool.AdminOperation{Msg: `Replica election data is missing "partitions" field`}
	case err != nil:
		return nil, &admintool.AdminOperation{Msg: err.Error()}
	case len(l.Duplicates) > 0:
		return nil, &admintool.AdminOperation{Msg: "Replica election data contains duplicate partitions: " + admintool.JoinPartitions(l.Duplicates, ",")}
	}
	// Kafka turns the list into a set; an empty list elects nothing.
	if l.Partitions == nil {
		l.Partitions = []common.TopicPartition{}
	}
	return l.Partitions, nil
}

// run executes one command and returns the exit status.
func run(args []string, stdout, stderr io.Writer, timeout time.Duration) int {
	req, special, err := parse(args)
	if code, done := admintool.CommandLine(special, err, admintool.UsageAndDie, helpText, specs, stdout, stderr); done {
		return code
	}
	if err != nil {
		return fail(err, stderr)
	}
	props, err := admintool.LoadOptionalProperties(req.adminConfig)
	if err != nil {
		return fail(err, stderr)
	}
	// Kafka sets request.timeout.ms to half the tool's timeout.
	if _, ok := props["request.timeout.ms"]; !ok {
		props["request.timeout.ms"] = strconv.FormatInt((timeout / 2).Milliseconds(), 10)
	}
	cl, reqTimeout, err := admintool.NewClient(req.bootstrap, "leader-election-tool", timeout, props)
	if err != nil {
		return fail(err, stderr)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := elect(ctx, stdout, req, func(ctx context.Context, typ int8, tps []common.TopicPartition) (admintool.ElectionResults, error) {
		return admintool.ElectLeaders(ctx, cl, typ, tps, reqTimeout)
	}); err != nil {
		return fail(err, stderr)
	}
	return 0
}

// electFunc performs the ElectLeaders call (a seam for tests).
type electFunc func(ctx context.Context, typ int8, tps []common.TopicPartition) (admintool.ElectionResults, error)

// elect is LeaderElectionCommand.electLeaders: one request, then the
// success, no-op and failure lines.
func elect(ctx context.Context, out io.Writer, req *request, call electFunc) error {
	typeName := admintool.ElectionTypeName(req.electionType)
	res, err := call(ctx, req.electionType, req.partitions)
	return admintool.ReportElection(out, res, err, admintool.ElectionReport{
		Succeeded: "Successfully completed leader election (" + typeName + ") for partitions ",
		Noop:      "Valid replica already elected for partitions ",
		Failed:    "Error completing leader election (" + typeName + ") for partition: ",
		Summary:   "%d replica(s) could not be elected",
	})
}

// fail prints an error escaping the tool the way Kafka's JVM shows it and
// returns the exit status 1.
func fail(err error, stderr io.Writer) int { return admintool.Fail(err, specs, stderr) }
