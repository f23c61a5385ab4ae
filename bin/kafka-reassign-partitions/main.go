// Command kafka-reassign-partitions moves partition replicas between
// brokers, with the options, JSON formats and output of Kafka's
// kafka-reassign-partitions.sh (--bootstrap-server and the deprecated
// --zookeeper mode). Run it through bin/kafka-reassign-partitions.sh.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
	"github.com/klassik/klassik/controller"
)

const helpText = "This tool helps to move topic partitions between replicas."

const (
	cannotExecuteBecauseOfExisting = "Cannot execute because there is an existing partition assignment.  Use --additional to override this and create a new partition assignment in addition to the existing one. The --additional flag can also be used to change the throttle by resubmitting the current reassignment."
	youMustRunVerifyPeriodically   = "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed."
)

var specs = append([]admintool.Spec{
	{Name: "verify", Help: "Verify if the reassignment completed as specified by the --reassignment-json-file option. If there is a throttle engaged for the replicas specified, and the rebalance has completed, the throttle will be removed"},
	{Name: "generate", Help: "Generate a candidate partition reassignment configuration. Note that this only generates a candidate assignment, it does not execute it."},
	{Name: "execute", Help: "Kick off the reassignment as specified by the --reassignment-json-file option."},
	{Name: "cancel", Help: "Cancel an active reassignment."},
	{Name: "list", Help: "List all active partition reassignments."},
	{Name: "bootstrap-server", HasArg: true, ArgName: "String: Server(s) to use for bootstrapping", Help: "the server(s) to use for bootstrapping. REQUIRED if an absolute path of the log directory is specified for any replica in the reassignment json file, or if --zookeeper is not given."},
	{Name: "command-config", HasArg: true, ArgName: "String: Admin client property file", Help: "Property file containing configs to be passed to Admin Client."},
	{Name: "zookeeper", HasArg: true, ArgName: "String: urls", Help: "DEPRECATED: The connection string for the zookeeper connection in the form host:port. Multiple URLS can be given to allow fail-over.  Please use --bootstrap-server instead."},
	{Name: "reassignment-json-file", HasArg: true, ArgName: "String: manual assignment json file path", Help: `The JSON file with the partition reassignment configurationThe format to use is - {"partitions": [{"topic": "foo", "partition": 1, "replicas": [1,2,3], "log_dirs": ["dir1","dir2","dir3"] }], "version":1} Note that "log_dirs" is optional. When it is specified, its length must equal the length of the replicas list. The value in this list can be either "any" or the absolution path of the log directory on the broker. If absolute log directory path is specified, the replica will be moved to the specified log directory on the broker.`},
	{Name: "topics-to-move-json-file", HasArg: true, ArgName: "String: topics to reassign json file path", Help: `Generate a reassignment configuration to move the partitions of the specified topics to the list of brokers specified by the --broker-list option. The format to use is - {"topics": [{"topic": "foo"},{"topic": "foo1"}], "version":1}`},
	{Name: "broker-list", HasArg: true, ArgName: "String: brokerlist", Help: `The list of brokers to which the partitions need to be reassigned in the form "0,1,2". This is required if --topics-to-move-json-file is used to generate reassignment configuration`},
	{Name: "disable-rack-aware", Help: "Disable rack aware replica assignment"},
	{Name: "throttle", HasArg: true, ArgName: "Long: throttle", Help: "The movement of partitions between brokers will be throttled to this value (bytes/sec). This option can be included with --execute when a reassignment is started, and it can be altered by resubmitting the current reassignment along with the --additional flag. The throttle rate should be at least 1 KB/s. (default: -1)"},
	{Name: "replica-alter-log-dirs-throttle", HasArg: true, ArgName: "Long: replicaAlterLogDirsThrottle", Help: "The movement of replicas between log directories on the same broker will be throttled to this value (bytes/sec). This option can be included with --execute when a reassignment is started, and it can be altered by resubmitting the current reassignment along with the --additional flag. The throttle rate should be at least 1 KB/s. (default: -1)"},
	{Name: "timeout", HasArg: true, ArgName: "Long: timeout", Help: "The maximum time in ms to wait for log directory replica assignment to begin. (default: 10000)"},
	{Name: "additional", Help: "Execute this reassignment in addition to any other ongoing ones. This option can also be used to change the throttle of an ongoing reassignment."},
	{Name: "preserve-throttles", Help: "Do not modify broker or topic throttles."},
}, admintool.HelpSpecs...)

var actions = []string{"generate", "execute", "verify", "cancel", "list"}

// requiredArgs and permittedArgs are Kafka's per-action option rules.
var requiredArgs = map[string][]string{
	"verify":   {"reassignment-json-file"},
	"generate": {"topics-to-move-json-file", "broker-list"},
	"execute":  {"reassignment-json-file"},
	"cancel":   {"reassignment-json-file"},
	"list":     nil,
}

var permittedArgs = map[string][]string{
	"verify":   {"bootstrap-server", "command-config", "preserve-throttles", "zookeeper"},
	"generate": {"bootstrap-server", "broker-list", "command-config", "disable-rack-aware", "zookeeper"},
	"execute":  {"additional", "bootstrap-server", "command-config", "throttle", "replica-alter-log-dirs-throttle", "timeout", "zookeeper"},
	"cancel":   {"bootstrap-server", "command-config", "preserve-throttles", "timeout"},
	"list":     {"bootstrap-server", "command-config"},
}

// options is a validated command line.
type options struct {
	action            string
	bootstrap         string
	zookeeper         string
	commandConfig     string
	reassignmentFile  string
	topicsFile        string
	brokerList        string
	disableRackAware  bool
	throttle          int64
	logDirThrottle    int64
	timeout           time.Duration
	additional        bool
	preserveThrottles bool
}

// runtimeError is a RuntimeException escaping main (printed by the JVM on
// stderr).
type runtimeError struct{ msg string }

func (e *runtimeError) Error() string { return e.msg }

// parse is validateAndParseArgs. special is "help" or "version".
func parse(args []string) (*options, string, error) {
	o, special, err := admintool.ParseAdminCommand(specs, args)
	if o == nil {
		return nil, special, err
	}
	action, ok := o.OneOf(actions)
	if !ok {
		return nil, "", admintool.Usagef("Command must include exactly one action: --generate, --execute, --verify, --cancel, --list")
	}
	if !o.Has("zookeeper") && !o.Has("bootstrap-server") {
		return nil, "", admintool.Usagef("Please specify --bootstrap-server")
	}
	for _, r := range requiredArgs[action] {
		if !o.Has(r) {
			return nil, "", admintool.Usagef(`Missing required argument "[%s]"`, r)
		}
	}
	for _, g := range o.Given() {
		if g != action && !slices.Contains(requiredArgs[action], g) && !slices.Contains(permittedArgs[action], g) {
			return nil, "", admintool.Usagef(`Option "[%s]" can't be used with action "[%s]"`, g, action)
		}
	}
	if !o.Has("bootstrap-server") {
		for _, b := range []string{"additional", "cancel", "command-config", "replica-alter-log-dirs-throttle", "list", "timeout"} {
			if o.Has(b) {
				return nil, "", &runtimeError{fmt.Sprintf(`You must specify --bootstrap-server when using "[%s]"`, b)}
			}
		}
	}
	opts := &options{
		action: action, bootstrap: o.Value("bootstrap-server"), zookeeper: o.Value("zookeeper"),
		commandConfig: o.Value("command-config"), reassignmentFile: o.Value("reassignment-json-file"),
		topicsFile: o.Value("topics-to-move-json-file"), brokerList: o.Value("broker-list"),
		disableRackAware: o.Has("disable-rack-aware"), additional: o.Has("additional"),
		preserveThrottles: o.Has("preserve-throttles"),
		throttle:          -1, logDirThrottle: -1, timeout: 10 * time.Second,
	}
	longOpt := func(name string, into *int64) error {
		if !o.Has(name) {
			return nil
		}
		v, err := strconv.ParseInt(o.Value(name), 10, 64)
		if err != nil {
			return admintool.Usagef("Cannot parse argument '%s' of option %s", o.Value(name), name)
		}
		*into = v
		return nil
	}
	var timeoutMs int64 = 10000
	for name, into := range map[string]*int64{"throttle": &opts.throttle, "replica-alter-log-dirs-throttle": &opts.logDirThrottle, "timeout": &timeoutMs} {
		if err := longOpt(name, into); err != nil {
			return nil, "", err
		}
	}
	opts.timeout = time.Duration(timeoutMs) * time.Millisecond
	return opts, "", nil
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// tool carries what the actions share.
type tool struct {
	out io.Writer
	// fixedStartIndex is passed to controller.AssignReplicasToBrokers by
	// --generate: -1 draws Kafka's random start, tests fix it.
	fixedStartIndex int
}

// terse is Kafka's TerseReassignmentFailureException: only the message is
// printed.
type terse struct{ msg string }

func (e *terse) Error() string { return e.msg }

func run(args []string, stdout, stderr io.Writer) int {
	return (&tool{out: stdout, fixedStartIndex: -1}).run(args, stderr)
}

func (t *tool) run(args []string, stderr io.Writer) int {
	opts, special, err := parse(args)
	if code, done := admintool.CommandLine(special, err, admintool.UsageAndDie, helpText, specs, t.out, stderr); done {
		return code
	}
	var re *runtimeError
	switch {
	case errors.As(err, &re):
		fmt.Fprint(stderr, admintool.Uncaught("java.lang.RuntimeException", re.msg))
		return 1
	case err != nil:
		fmt.Fprintf(t.out, "Error: %v\n", err)
		return 1
	}
	if err := t.handle(opts); err != nil {
		var te *terse
		if errors.As(err, &te) {
			fmt.Fprintln(t.out, te.msg)
		} else {
			fmt.Fprintf(t.out, "Error: %s\n", errorMessage(err))
		}
		return 1
	}
	return 0
}

// errorMessage is Throwable.getMessage of what the Java tool would have
// caught: an admin future's ExecutionException carries its cause's
// toString.
func errorMessage(err error) string {
	var ke *admintool.KafkaError
	if errors.As(err, &ke) {
		return ke.String()
	}
	return err.Error()
}

// handle runs the action on the backend the command line chose; the
// ZooKeeper backend offers only verify, generate and execute.
func (t *tool) handle(opts *options) error {
	var actions map[string]func() error
	if opts.bootstrap != "" {
		if opts.zookeeper != "" {
			fmt.Fprintln(t.out, "Warning: ignoring deprecated --zookeeper option because --bootstrap-server was specified.  The --zookeeper option will be removed in a future version of Kafka.")
		}
		a, err := newAdminBackend(opts)
		if err != nil {
			return err
		}
		defer a.close()
		actions = map[string]func() error{
			"verify":   func() error { return t.verifyAdmin(a, opts) },
			"generate": func() error { return t.generate(a, opts) },
			"execute":  func() error { return t.executeAdmin(a, opts) },
			"cancel":   func() error { return t.cancelAdmin(a, opts) },
			"list":     func() error { return t.listAdmin(a) },
		}
	} else {
		fmt.Fprintln(t.out, "Warning: --zookeeper is deprecated, and will be removed in a future version of Kafka.")
		z, err := newZkBackend(opts.zookeeper)
		if err != nil {
			return err
		}
		defer z.close()
		actions = map[string]func() error{
			"verify":   func() error { return t.verifyZk(z, opts) },
			"generate": func() error { return t.generate(z, opts) },
			"execute":  func() error { return t.executeZk(z, opts) },
		}
	}
	if act, ok := actions[opts.action]; ok {
		return act()
	}
	return errors.New("Unsupported action.")
}

// readFile is Utils.readFileAsString; a missing file fails with its path
// alone, the message of Java's NoSuchFileException.
func readFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, errors.New(path)
	}
	return data, err
}

// brokerLister is what either backend tells of the cluster's brokers.
type brokerLister interface {
	allBrokers() ([]controller.BrokerMetadata, error)
}

// brokerIDs lists the ids of b's brokers, sorted.
func brokerIDs(b brokerLister) ([]int32, error) {
	all, err := b.allBrokers()
	if err != nil {
		return nil, err
	}
	ids := make([]int32, len(all))
	for i, m := range all {
		ids[i] = m.ID
	}
	slices.Sort(ids)
	return ids, nil
}

// listedBrokers returns those of b's brokers whose id is in ids, with their
// racks.
func listedBrokers(b brokerLister, ids []int32) ([]controller.BrokerMetadata, error) {
	all, err := b.allBrokers()
	if err != nil {
		return nil, err
	}
	var out []controller.BrokerMetadata
	for _, m := range all {
		if slices.Contains(ids, m.ID) {
			out = append(out, m)
		}
	}
	return out, nil
}

// assignmentSource is what --generate needs from either backend.
type assignmentSource interface {
	brokerLister
	replicaAssignmentForTopics(topics []string) (assignment, error)
}

// generate is generateAssignment: a new placement of every partition of the
// listed topics on the listed brokers, with each topic's replication factor.
func (t *tool) generate(src assignmentSource, opts *options) error {
	data, err := readFile(opts.topicsFile)
	if err != nil {
		return err
	}
	ids, topics, err := parseGenerateAssignmentArgs(data, opts.brokerList)
	if err != nil {
		return err
	}
	current, err := src.replicaAssignmentForTopics(topics)
	if err != nil {
		return err
	}
	brokers, err := listedBrokers(src, ids)
	if err != nil {
		return err
	}
	if !opts.disableRackAware {
		withRack := 0
		for _, b := range brokers {
			if b.Rack != nil {
				withRack++
			}
		}
		if withRack != 0 && withRack != len(brokers) {
			return &adminOperation{"Not all brokers have rack information. Add --disable-rack-aware in command line to make replica assignment without rack information."}
		}
	} else {
		brokers = controller.ApplyRackAwareMode(brokers, controller.RackAwareDisabled)
	}
	proposed, err := t.calculateAssignment(current, brokers)
	if err != nil {
		return err
	}
	fmt.Fprintf(t.out, "Current partition replica assignment\n%s\n\n", formatAssignmentJSON(current))
	fmt.Fprintf(t.out, "Proposed partition reassignment configuration\n%s\n", formatAssignmentJSON(proposed))
	return nil
}

// calculateAssignment places each topic anew with
// controller.AssignReplicasToBrokers, keeping its partition count and the
// replication factor of its lowest partition.
func (t *tool) calculateAssignment(current assignment, brokers []controller.BrokerMetadata) (assignment, error) {
	byTopic := map[string][]tp{}
	for _, k := range current.sortedKeys() {
		byTopic[k.Topic] = append(byTopic[k.Topic], k)
	}
	out := assignment{}
	for _, topic := range current.topics() {
		parts := byTopic[topic]
		rf := len(current[parts[0]])
		placed, err := controller.AssignReplicasToBrokers(brokers, len(parts), rf, t.fixedStartIndex, 0)
		if err != nil {
			return nil, &adminOperation{kafkaSentence(err)}
		}
		for p, reps := range placed {
			out[tp{Topic: topic, Partition: p}] = reps
		}
	}
	return out, nil
}

// kafkaSentence turns a controller error wrapping a kerr code ("NAME:
// description: detail") into Kafka's exception message: the detail with a
// leading capital and a final period.
func kafkaSentence(err error) string {
	msg := err.Error()
	var ke *kerr.Error
	if errors.As(err, &ke) {
		msg = strings.TrimPrefix(msg, ke.Error()+": ")
	}
	if msg == "" {
		return msg
	}
	msg = strings.ToUpper(msg[:1]) + msg[1:]
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return msg
}

// parseGenerateAssignmentArgs checks --broker-list and the topics file.
func parseGenerateAssignmentArgs(topicsJSON []byte, brokerList string) ([]int32, []string, error) {
	var ids []int32
	for _, s := range strings.Split(brokerList, ",") {
		v, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return nil, nil, fmt.Errorf("For input string: %q", s)
		}
		ids = append(ids, int32(v))
	}
	if d := duplicates(ids); len(d) > 0 {
		return nil, nil, &adminFailed{"Broker list contains duplicate entries: " + joinInts(d, ",")}
	}
	topics, err := parseTopicsData(topicsJSON)
	if err != nil {
		return nil, nil, err
	}
	if d := duplicates(topics); len(d) > 0 {
		return nil, nil, &adminFailed{"List of topics to reassign contains duplicate entries: " + strings.Join(d, ",")}
	}
	return ids, topics, nil
}

// partitionState is one line of the verify report.
type partitionState struct {
	current, target []int32
	done            bool
}

// statesToString is partitionReassignmentStatesToString.
func statesToString(states map[tp]partitionState) string {
	lines := []string{"Status of partition reassignment:"}
	keys := make([]tp, 0, len(states))
	for k := range states {
		keys = append(keys, k)
	}
	for _, k := range admintool.SortPartitions(keys) {
		s := states[k]
		switch {
		case !s.done:
			lines = append(lines, fmt.Sprintf("Reassignment of partition %s is still in progress.", k))
		case slices.Equal(s.current, s.target):
			lines = append(lines, fmt.Sprintf("Reassignment of partition %s is complete.", k))
		default:
			lines = append(lines, fmt.Sprintf("There is no active reassignment of partition %s, but replica set is %s rather than %s.", k, joinInts(s.current, ","), joinInts(s.target, ",")))
		}
	}
	return strings.Join(lines, "\n")
}

// currentAssignmentToString is currentPartitionReplicaAssignmentToString:
// the rollback JSON of the proposed partitions.
func currentAssignmentToString(proposed, current assignment) string {
	filtered := assignment{}
	for k, v := range current {
		if _, ok := proposed[k]; ok {
			filtered[k] = v
		}
	}
	return fmt.Sprintf("Current partition replica assignment\n\n%s\n\nSave this to use as the --reassignment-json-file option during rollback", formatAssignmentJSON(filtered))
}

// startedMessage is "Successfully started partition reassignment(s) for ...".
func startedMessage(proposed assignment) string {
	plural := "s"
	if len(proposed) == 1 {
		plural = ""
	}
	return fmt.Sprintf("Successfully started partition reassignment%s for %s", plural, admintool.JoinPartitions(proposed.sortedKeys(), ","))
}

func int32Strings(xs []int32) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = strconv.Itoa(int(x))
	}
	return out
}
