package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/klassik/klassik/bin/internal/clitools"
	"github.com/klassik/klassik/bin/internal/clitools/security"
	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
)

const toolHelp = "This tool helps to list all consumer groups, describe a consumer group, delete consumer group info, or reset consumer group offsets."

var specs = append([]admintool.Spec{
	{Name: "bootstrap-server", HasArg: true, ArgName: "String: server to connect to", Help: "REQUIRED: The server(s) to connect to."},
	{Name: "zookeeper", HasArg: true, ArgName: "String: urls", Help: "The classic mode for groups of ZooKeeper-based consumers: the connection string for the zookeeper connection in the form host:port."},
	{Name: "group", HasArg: true, ArgName: "String: consumer group", Help: "The consumer group we wish to act on."},
	{Name: "topic", HasArg: true, ArgName: "String: topic", Help: "The topic whose consumer group information should be deleted or topic whose should be included in the reset offset process. In `reset-offsets` case, partitions can be specified using this format: `topic1:0,1,2`, where 0,1,2 are the partition to be included in the process. Reset-offsets also supports multiple topic inputs."},
	{Name: "all-topics", Help: "Consider all topics assigned to a group in the `reset-offsets` process."},
	{Name: "list", Help: "List all consumer groups."},
	{Name: "describe", Help: "Describe consumer group and list offset lag (number of messages not yet processed) related to given group."},
	{Name: "all-groups", Help: "Apply to all consumer groups."},
	{Name: "delete", Help: "Pass in groups to delete topic partition offsets and ownership information over the entire consumer group. For instance --group g1 --group g2"},
	{Name: "timeout", HasArg: true, ArgName: "Long: timeout (ms)", Help: "The timeout that can be set for some use cases. (default: 5000)"},
	{Name: "command-config", HasArg: true, ArgName: "String: command config property file", Help: "Property file containing configs to be passed to Admin Client and Consumer."},
	{Name: "reset-offsets", Help: "Reset offsets of consumer group. Supports one consumer group at the time, and instances should be inactive. Has 2 execution options: --dry-run (the default) to plan which offsets to reset, and --execute to update the offsets."},
	{Name: "delete-offsets", Help: "Delete offsets of consumer group. Supports one consumer group at the time, and multiple topics."},
	{Name: "export", Help: "Export operation execution to a CSV file. Supported operations: reset-offsets."},
	{Name: "from-file", HasArg: true, ArgName: "String: path to CSV file", Help: "Reset offsets to values defined in CSV file."},
	{Name: "dry-run", Help: "Only show results without executing changes on Consumer Groups. Supported operations: reset-offsets."},
	{Name: "execute", Help: "Execute operation. Supported operations: reset-offsets."},
	{Name: "to-offset", HasArg: true, ArgName: "Long: offset", Help: "Reset offsets to a specific offset."},
	{Name: "to-datetime", HasArg: true, ArgName: "String: datetime", Help: "Reset offsets to offset from datetime. Format: 'YYYY-MM-DDTHH:mm:SS.sss'"},
	{Name: "by-duration", HasArg: true, ArgName: "String: duration", Help: "Reset offsets to offset by duration from current timestamp. Format: 'PnDTnHnMnS'"},
	{Name: "to-earliest", Help: "Reset offsets to earliest offset."},
	{Name: "to-latest", Help: "Reset offsets to latest offset."},
	{Name: "to-current", Help: "Reset offsets to current offset."},
	{Name: "shift-by", HasArg: true, ArgName: "Long: number-of-offsets", Help: "Reset offsets shifting current offset by 'n', where 'n' can be positive or negative."},
	{Name: "members", Help: "Describe members of the group. This option may be used with '--describe' and '--bootstrap-server' options only."},
	{Name: "verbose", Help: "Provide additional information, if any, when describing the group."},
	{Name: "offsets", Help: "Describe the group and list all topic partitions in the group along with their offset lag. This is the default sub-action of and may be used with '--describe' and '--bootstrap-server' options only."},
	{Name: "state", HasArg: true, ArgName: "String", Help: "When specified with '--describe', includes the state of the group. When specified with '--list', it displays the state of all groups. It can also be used to list groups with specific states."},
}, admintool.HelpSpecs...)

var resetScenarios = []string{"to-offset", "to-datetime", "by-duration", "to-earliest", "to-latest", "to-current", "shift-by", "from-file"}

type options struct {
	p         *admintool.Options
	bootstrap string
	zookeeper string
	action    string
	groups    []string
	allGroups bool
	topics    []string
	timeout   time.Duration
	props     map[string]string
	// state is the --state value; hasState tells it was given (it takes
	// an optional value).
	state    string
	hasState bool
	scenario string
	execute  bool
}

// parseOptions applies ConsumerGroupCommandOptions.checkArgs with Kafka's
// messages (joptsimple prints options as "[name]").
func parseOptions(args []string) (*options, string, error) {
	args = admintool.DefaultOptionalArg(args, "state", "")
	p, special, err := admintool.ParseCommand(specs, args, toolHelp)
	if p == nil {
		return nil, special, err
	}
	o := &options{p: p, bootstrap: p.Value("bootstrap-server"), zookeeper: p.Value("zookeeper"),
		allGroups: p.Has("all-groups"), timeout: 5 * time.Second, hasState: p.Has("state"), state: p.Value("state"),
		execute: p.Has("execute")}
	o.groups, o.topics = p.Values("group"), p.Values("topic")
	var ok bool
	if o.action, ok = p.OneOf([]string{"list", "describe", "delete", "reset-offsets", "delete-offsets"}); !ok {
		return nil, "", admintool.Usagef("Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets")
	}
	if err := clitools.CheckConnection(o.bootstrap, o.zookeeper); err != nil {
		return nil, "", err
	}
	if p.Has("timeout") {
		n, err := strconv.ParseInt(p.Value("timeout"), 10, 64)
		if err != nil || n <= 0 {
			return nil, "", admintool.Usagef("Cannot parse argument '%s' of option timeout", p.Value("timeout"))
		}
		o.timeout = time.Duration(n) * time.Millisecond
	}
	o.props = map[string]string{}
	if p.Has("command-config") {
		if o.props, err = admintool.LoadProperties(p.Value("command-config")); err != nil {
			return nil, "", err
		}
	}
	if o.zookeeper != "" {
		// The ZooKeeper mode reads log end offsets from the brokers over
		// PLAINTEXT, as the old consumer did.
		if err := security.RequirePlaintext(o.props, "kafka-consumer-groups --zookeeper"); err != nil {
			return nil, "", err
		}
	}
	scope := "[group], [all-groups]"
	switch o.action {
	case "describe":
		if len(o.groups) == 0 && !o.allGroups {
			return nil, "", admintool.Usagef("Option [describe] takes one of these options: %s", scope)
		}
		n := 0
		for _, s := range []string{"members", "offsets", "state"} {
			if p.Has(s) {
				n++
			}
		}
		if n > 1 {
			return nil, "", admintool.Usagef("Option [describe] takes at most one of these options: [members], [offsets], [state]")
		}
		if o.hasState && o.state != "" {
			return nil, "", admintool.Usagef("Option [describe] does not take a value for [state]")
		}
		if o.zookeeper != "" && (p.Has("members") || p.Has("state") || p.Has("all-groups")) {
			return nil, "", admintool.Usagef("Option [members], [state] and [all-groups] may be used with --bootstrap-server only")
		}
	case "delete":
		if len(o.groups) == 0 && !o.allGroups {
			return nil, "", admintool.Usagef("Option [delete] takes one of these options: %s", scope)
		}
		if p.Has("topic") {
			return nil, "", admintool.Usagef("The consumer does not support topic-specific offset deletion from a consumer group.")
		}
	case "delete-offsets":
		if len(o.groups) == 0 || len(o.topics) == 0 {
			return nil, "", admintool.Usagef("Option [delete-offsets] takes the following options: [group], [topic]")
		}
		if o.zookeeper != "" {
			return nil, "", admintool.Usagef("Option [delete-offsets] is not valid with [zookeeper]")
		}
	case "reset-offsets":
		if o.zookeeper != "" {
			return nil, "", admintool.Usagef("Option [reset-offsets] is not valid with [zookeeper]")
		}
		if p.Has("dry-run") && p.Has("execute") {
			return nil, "", admintool.Usagef("Option [reset-offsets] only accepts one of [execute] and [dry-run]")
		}
		if len(o.groups) == 0 && !o.allGroups {
			return nil, "", admintool.Usagef("Option [reset-offsets] takes one of these options: %s", scope)
		}
		for _, s := range resetScenarios {
			if p.Has(s) {
				if o.scenario != "" {
					return nil, "", admintool.Usagef("Option \"[%s]\" can't be used with option \"[%s]\"", o.scenario, s)
				}
				o.scenario = s
			}
		}
		if o.scenario == "" {
			return nil, "", admintool.Usagef("Option '[reset-offsets]' requires one of the following scenarios: [[to-offset], [to-datetime], [by-duration], [to-earliest], [to-latest], [to-current], [shift-by], [from-file]]")
		}
		// --from-file brings its own partitions; every other scenario
		// needs a scope.
		if !p.Has("all-topics") && !p.Has("topic") && o.scenario != "from-file" {
			return nil, "", admintool.Usagef("One of the reset scopes should be defined: --all-topics, --topic.")
		}
		if p.Has("all-topics") && p.Has("topic") {
			return nil, "", admintool.Usagef("Option \"[all-topics]\" can't be used with option \"[topic]\"")
		}
		for _, name := range []string{"to-offset", "shift-by"} {
			if p.Has(name) {
				if _, err := strconv.ParseInt(p.Value(name), 10, 64); err != nil {
					return nil, "", admintool.Usagef("Cannot parse argument '%s' of option %s", p.Value(name), name)
				}
			}
		}
		if p.Has("to-datetime") {
			if _, err := parseDateTime(p.Value("to-datetime")); err != nil {
				return nil, "", err
			}
		}
		if p.Has("by-duration") {
			if _, err := parseDuration(p.Value("by-duration")); err != nil {
				return nil, "", err
			}
		}
	}
	for _, only := range []string{"members", "offsets", "verbose"} {
		if p.Has(only) && o.action != "describe" {
			return nil, "", admintool.Usagef("Option [%s] can only be used with [describe]", only)
		}
	}
	return o, "", nil
}

// topicPartitions is one --topic argument: "t" (every partition) or
// "t:0,1,2".
type topicArg struct {
	topic      string
	partitions []int32 // nil = all
}

// parseTopicArg reads one --topic value of --reset-offsets.
func parseTopicArg(arg string) (topicArg, error) {
	t, ps, ok := strings.Cut(arg, ":")
	if !ok {
		return topicArg{topic: arg}, nil
	}
	if t == "" || strings.Contains(ps, ":") || ps == "" {
		return topicArg{}, fmt.Errorf("Invalid topic arg '%s', expected topic name and partitions", arg)
	}
	out := topicArg{topic: t}
	for _, s := range strings.Split(ps, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
		if err != nil {
			return topicArg{}, fmt.Errorf("Invalid partition '%s' specified in topic arg '%s''", s, arg)
		}
		out.partitions = append(out.partitions, int32(n))
	}
	return out, nil
}

// parseDateTime is Kafka's Utils.getDateTime: "yyyy-MM-ddTHH:mm:ss.SSS"
// with an optional zone ("Z", "+hh:mm", "-hhmm"); without a zone the local
// time zone applies.
func parseDateTime(s string) (time.Time, error) {
	for _, layout := range []string{"2006-01-02T15:04:05.000Z07:00", "2006-01-02T15:04:05.000Z0700", "2006-01-02T15:04:05.000Z"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	if t, err := time.ParseInLocation("2006-01-02T15:04:05.000", s, time.Local); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("Error parsing timestamp '%s', the timestamp should be in the format yyyy-MM-dd'T'HH:mm:ss.SSS", s)
}

// parseDuration reads the ISO-8601 form Java's Duration.parse accepts for
// --by-duration: PnDTnHnMnS (fractional seconds allowed).
func parseDuration(s string) (time.Duration, error) {
	bad := fmt.Errorf("Text cannot be parsed to a Duration: %s", s)
	u := strings.ToUpper(s)
	neg := false
	if strings.HasPrefix(u, "-") {
		neg, u = true, u[1:]
	}
	if !strings.HasPrefix(u, "P") || len(u) < 3 {
		return 0, bad
	}
	u = u[1:]
	var d time.Duration
	datePart, timePart, hasT := strings.Cut(u, "T")
	if hasT && timePart == "" {
		return 0, bad
	}
	if datePart != "" {
		n, ok := strings.CutSuffix(datePart, "D")
		v, err := strconv.ParseInt(n, 10, 64)
		if !ok || err != nil {
			return 0, bad
		}
		d += time.Duration(v) * 24 * time.Hour
	}
	for timePart != "" {
		i := strings.IndexAny(timePart, "HMS")
		if i <= 0 {
			return 0, bad
		}
		v, err := strconv.ParseFloat(timePart[:i], 64)
		if err != nil {
			return 0, bad
		}
		unit := map[byte]time.Duration{'H': time.Hour, 'M': time.Minute, 'S': time.Second}[timePart[i]]
		d += time.Duration(v * float64(unit))
		timePart = timePart[i+1:]
	}
	if neg {
		d = -d
	}
	return d, nil
}
