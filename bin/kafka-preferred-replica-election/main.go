// Command kafka-preferred-replica-election moves partition leadership back
// to the preferred replicas, with the options and output of Kafka's
// deprecated kafka-preferred-replica-election.sh: --zookeeper writes
// /admin/preferred_replica_election for the controller, --bootstrap-server
// calls ElectLeaders (PREFERRED). Run it through
// bin/kafka-preferred-replica-election.sh.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/klassik/klassik/broker/common"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
)

const (
	deprecation = "This tool is deprecated. Please use kafka-leader-election tool. Tracking issue: KAFKA-8405"
	helpText    = "This tool helps to causes leadership for each partition to be transferred back to the 'preferred replica', it can be used to balance leadership among the servers."
	// defaultTimeout is the tool's fixed 30 s: the ZooKeeper session and
	// connection timeout, and the admin client's request timeout.
	defaultTimeout = 30 * time.Second
)

var specs = append([]admintool.Spec{
	{Name: "path-to-json-file", HasArg: true, ArgName: "String: list of partitions for which preferred replica leader election needs to be triggered", Help: `The JSON file with the list of partitions for which preferred replica leader election should be done, in the following format - {"partitions": [{"topic": "foo", "partition": 1}, {"topic": "foobar", "partition": 2}]} Defaults to all existing partitions`},
	{Name: "zookeeper", HasArg: true, ArgName: "String: urls", Help: "DEPRECATED. The connection string for the zookeeper connection in the form host:port. Multiple URLS can be given to allow fail-over. Replaced by --bootstrap-server, REQUIRED unless --bootstrap-server is given."},
	{Name: "bootstrap-server", HasArg: true, ArgName: "String: host:port", Help: "A hostname and port for the broker to connect to, in the form host:port. Multiple comma-separated URLs can be given. REQUIRED unless --zookeeper is given."},
	{Name: "admin.config", HasArg: true, ArgName: "String: config file", Help: "Admin client config properties file to pass to the admin client when --bootstrap-server is given."},
}, admintool.HelpSpecs...)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, defaultTimeout))
}

// request is a validated command line.
type request struct {
	zookeeper   string
	bootstrap   string
	adminConfig string
	// partitions is nil when no file was given: every partition.
	partitions []common.TopicPartition
}

func parse(args []string) (req *request, special string, err error) {
	o, special, err := admintool.ParseAdminCommand(specs, args)
	if o == nil {
		return nil, special, err
	}
	// joptsimple's mutuallyExclusive and availableIf rules.
	if o.Has("zookeeper") && o.Has("bootstrap-server") {
		return nil, "", admintool.Usagef("Option(s) [%s] are unavailable given other options on the command line", o.Given()[indexAfterFirst(o.Given(), "zookeeper", "bootstrap-server")])
	}
	if o.Has("admin.config") && !o.Has("bootstrap-server") {
		return nil, "", admintool.Usagef("Option(s) [admin.config] are unavailable given other options on the command line")
	}
	if !o.Has("zookeeper") && !o.Has("bootstrap-server") {
		return nil, "", admintool.Usagef("Exactly one of '[bootstrap-server]' or '[zookeeper]' must be provided")
	}
	req = &request{zookeeper: o.Value("zookeeper"), bootstrap: o.Value("bootstrap-server"), adminConfig: o.Value("admin.config")}
	if o.Has("path-to-json-file") {
		data, err := admintool.ReadFile(o.Value("path-to-json-file"))
		if err != nil {
			return nil, "", err
		}
		if req.partitions, err = parseElectionData(data); err != nil {
			return nil, "", err
		}
	}
	return req, "", nil
}

// indexAfterFirst returns the position in given of whichever of a and b
// came second (joptsimple reports the later of two exclusive options).
func indexAfterFirst(given []string, a, b string) int {
	seen := 0
	for i, g := range given {
		if g == a || g == b {
			seen++
			if seen == 2 {
				return i
			}
		}
	}
	return len(given) - 1
}

// parseElectionData is parsePreferredReplicaElectionData with Kafka's
// messages.
func parseElectionData(data []byte) ([]common.TopicPartition, error) {
	l, err := admintool.ParsePartitionList(data)
	switch {
	case errors.Is(err, admintool.ErrNotJSON), errors.Is(err, admintool.ErrNoPartitions):
		return nil, &admintool.AdminOperation{Msg: "Preferred replica election data is empty"}
	case err != nil:
		return nil, &admintool.AdminOperation{Msg: err.Error()}
	case len(l.Duplicates) > 0:
		return nil, &admintool.AdminOperation{Msg: "Preferred replica election data contains duplicate partitions: " + admintool.JoinPartitions(l.Duplicates, ",")}
	}
	out := []common.TopicPartition{}
	seen := map[common.TopicPartition]bool{}
	for _, tp := range l.Partitions {
		if !seen[tp] {
			seen[tp] = true
			out = append(out, tp)
		}
	}
	return out, nil
}

// run executes one command and returns the exit status.
func run(args []string, stdout, stderr io.Writer, timeout time.Duration) int {
	fmt.Fprintln(stdout, deprecation)
	req, special, err := parse(args)
	if code, done := admintool.CommandLine(special, err, admintool.UsageAndDie, helpText, specs, stdout, stderr); done {
		return code
	}
	if err != nil {
		return fail(err, stderr)
	}
	if req.zookeeper != "" {
		fmt.Fprintln(stdout, "Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.")
		fmt.Fprintln(stdout, "Use --bootstrap-server instead to specify a broker to connect to.")
		zc, err := connectZk(req.zookeeper, timeout)
		if err != nil {
			return fail(&admintool.CommandFailed{Msg: "Admin command failed", Cause: err}, stderr)
		}
		defer zc.Close()
		if err := electViaZk(zc, req.partitions, stdout); err != nil {
			return fail(err, stderr)
		}
		return 0
	}
	return runBootstrap(req, stdout, stderr, timeout)
}

func runBootstrap(req *request, stdout, stderr io.Writer, timeout time.Duration) int {
	props, err := admintool.LoadOptionalProperties(req.adminConfig)
	if err != nil {
		return fail(err, stderr)
	}
	// Kafka sets request.timeout.ms to the timeout and the API timeout to
	// twice that.
	props["request.timeout.ms"] = strconv.FormatInt(timeout.Milliseconds(), 10)
	cl, reqTimeout, err := admintool.NewClient(req.bootstrap, "preferred-replica-election-tool", timeout, props)
	if err != nil {
		return fail(err, stderr)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*timeout)
	defer cancel()
	if err := electViaAdmin(ctx, stdout, req.partitions, func(ctx context.Context, tps []common.TopicPartition) (admintool.ElectionResults, error) {
		return admintool.ElectLeaders(ctx, cl, admintool.ElectionPreferred, tps, reqTimeout)
	}); err != nil {
		return fail(err, stderr)
	}
	return 0
}

// electFunc performs ElectLeaders(PREFERRED) (a seam for tests).
type electFunc func(ctx context.Context, tps []common.TopicPartition) (admintool.ElectionResults, error)

// electViaAdmin is AdminClientCommand.electPreferredLeaders.
func electViaAdmin(ctx context.Context, out io.Writer, tps []common.TopicPartition, call electFunc) error {
	res, err := call(ctx, tps)
	return admintool.ReportElection(out, res, err, admintool.ElectionReport{
		Succeeded: "Successfully completed preferred leader election for partitions ",
		Noop:      "Preferred replica already elected for partitions ",
		Failed:    "Error completing preferred leader election for partition: ",
		Summary:   "%d preferred replica(s) could not be elected",
	})
}

// fail prints an error escaping the tool as Kafka's JVM shows it; exit 1.
func fail(err error, stderr io.Writer) int { return admintool.Fail(err, specs, stderr) }
