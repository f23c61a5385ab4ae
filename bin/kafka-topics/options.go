package main

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/klassik/klassik/config"
)

// option describes one command-line option of kafka-topics.sh (Kafka's
// TopicCommandOptions).
type option struct {
	name    string
	hasArg  bool
	multi   bool // may be repeated (--config, --delete-config)
	argName string
	help    string
}

var optionTable = []option{
	{name: "alter", help: "Alter the number of partitions, replica assignment, and/or configuration for the topic."},
	{name: "at-min-isr-partitions", help: "if set when describing topics, only show partitions whose isr count is equal to the configured minimum. Not supported with the --zookeeper option."},
	{name: "bootstrap-server", hasArg: true, argName: "server to connect to", help: "REQUIRED: The Kafka server to connect to. In case of providing this, a direct Zookeeper connection won't be required."},
	{name: "command-config", hasArg: true, argName: "command config property file", help: "Property file containing configs to be passed to Admin Client. Only client.id and request.timeout.ms are honoured."},
	{name: "config", hasArg: true, multi: true, argName: "name=value", help: "A topic configuration override for the topic being created or altered. The valid configurations are: " + strings.Join(topicConfigNames(), ", ") + ". It is supported only in combination with --create if --bootstrap-server option is used."},
	{name: "create", help: "Create a new topic."},
	{name: "delete", help: "Delete a topic"},
	{name: "delete-config", hasArg: true, multi: true, argName: "name", help: "A topic configuration override to be removed for an existing topic (see the list of configurations under the --config option). Not supported with the --bootstrap-server option."},
	{name: "describe", help: "List details for the given topics."},
	{name: "disable-rack-aware", help: "Disable rack aware replica assignment"},
	{name: "exclude-internal", help: "exclude internal topics when running list or describe command. The internal topics will be listed by default"},
	{name: "force", help: "Suppress console prompts"},
	{name: "help", help: "Print usage information."},
	{name: "if-exists", help: "if set when altering or deleting or describing topics, the action will only execute if the topic exists."},
	{name: "if-not-exists", help: "if set when creating topics, the action will only execute if the topic does not already exist."},
	{name: "list", help: "List all available topics."},
	{name: "partitions", hasArg: true, argName: "# of partitions", help: "The number of partitions for the topic being created or altered (WARNING: If partitions are increased for a topic that has a key, the partition logic or ordering of the messages will be affected). If not supplied for create, defaults to the cluster default."},
	{name: "replica-assignment", hasArg: true, argName: "broker_id_for_part1_replica1 : broker_id_for_part1_replica2 , broker_id_for_part2_replica1 : broker_id_for_part2_replica2 , ...", help: "A list of manual partition-to-broker assignments for the topic being created or altered."},
	{name: "replication-factor", hasArg: true, argName: "replication factor", help: "The replication factor for each partition in the topic being created. If not supplied, defaults to the cluster default."},
	{name: "topic", hasArg: true, argName: "topic", help: `The topic to create, alter, describe or delete. It also accepts a regular expression, except for --create option. Put topic name in double quotes and use the '\' prefix to escape regular expression symbols; e.g. "test\.topic".`},
	{name: "topics-with-overrides", help: "if set when describing topics, only show topics that have overridden configs"},
	{name: "unavailable-partitions", help: "if set when describing topics, only show partitions whose leader is not available"},
	{name: "under-min-isr-partitions", help: "if set when describing topics, only show partitions whose isr count is less than the configured minimum. Not supported with the --zookeeper option."},
	{name: "under-replicated-partitions", help: "if set when describing topics, only show under replicated partitions"},
	{name: "version", help: "Display Kafka version."},
	{name: "zookeeper", hasArg: true, argName: "hosts", help: "DEPRECATED, The connection string for the zookeeper connection in the form host:port. Multiple hosts can be given to allow fail-over."},
}

func topicConfigNames() []string {
	var out []string
	for _, t := range config.TopicConfigs() {
		out = append(out, t.Name)
	}
	return out
}

// usageError is a command-line mistake: the message is printed followed by
// the option list, and the exit status is 1 (Kafka's printUsageAndDie).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{msg: fmt.Sprintf(format, args...)} }

// parsedArgs holds the raw option values in command-line order.
type parsedArgs struct {
	values map[string][]string
}

func (p parsedArgs) has(name string) bool { _, ok := p.values[name]; return ok }

func (p parsedArgs) value(name string) (string, bool) {
	v, ok := p.values[name]
	if !ok || len(v) == 0 {
		return "", false
	}
	return v[len(v)-1], true
}

// lookupOption finds an option by exact name or by unique prefix, as
// joptsimple (Kafka's option parser) allows abbreviations.
func lookupOption(name string) (*option, error) {
	var matches []*option
	for i := range optionTable {
		o := &optionTable[i]
		if o.name == name {
			return o, nil
		}
		if strings.HasPrefix(o.name, name) {
			matches = append(matches, o)
		}
	}
	switch len(matches) {
	case 0:
		return nil, usagef("%s is not a recognized option", name)
	case 1:
		return matches[0], nil
	}
	var names []string
	for _, m := range matches {
		names = append(names, m.name)
	}
	return nil, usagef("Option '%s' is ambiguous; possibilities: %s", name, strings.Join(names, ", "))
}

// parseArgs splits the command line into options, accepting "--name value"
// and "--name=value".
func parseArgs(args []string) (parsedArgs, error) {
	p := parsedArgs{values: map[string][]string{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "--") || a == "--" {
			return p, usagef("Found non-option argument '%s'; all arguments must be options such as --topic", a)
		}
		name, val, hasVal := strings.Cut(a[2:], "=")
		o, err := lookupOption(name)
		if err != nil {
			return p, err
		}
		if !o.hasArg {
			if hasVal {
				return p, usagef("Option %s does not take an argument", o.name)
			}
			p.values[o.name] = append(p.values[o.name], "")
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return p, usagef("Option %s requires an argument", o.name)
			}
			i++
			val = args[i]
		}
		if !o.multi && len(p.values[o.name]) > 0 {
			// Kafka's tool asks joptsimple for a single value, which fails
			// when the option was repeated.
			return p, usagef("Found multiple arguments for option %s, but you asked for only one", o.name)
		}
		p.values[o.name] = append(p.values[o.name], val)
	}
	return p, nil
}

// action is the one command the invocation performs.
type action string

const (
	actionCreate   action = "create"
	actionList     action = "list"
	actionDescribe action = "describe"
	actionAlter    action = "alter"
	actionDelete   action = "delete"
)

// topicOptions is the validated command line.
type topicOptions struct {
	action           action
	bootstrapServer  string
	zookeeper        string
	commandConfig    map[string]string
	topic            string
	hasTopic         bool
	partitions       int32
	hasPartitions    bool
	replicationFact  int16
	hasReplication   bool
	replicaAssign    map[int32][]int32 // nil when not given
	configs          map[string]string
	configOrder      []string
	deleteConfigs    []string
	ifExists         bool
	ifNotExists      bool
	excludeInternal  bool
	disableRackAware bool

	underReplicated bool
	unavailable     bool
	underMinIsr     bool
	atMinIsr        bool
	withOverrides   bool
}

// reportFilter reports whether any of the partition filters is set.
func (o *topicOptions) reportFilter() bool {
	return o.underReplicated || o.unavailable || o.underMinIsr || o.atMinIsr
}

var actions = []string{"create", "list", "alter", "describe", "delete"}

// parseOptions turns arguments into topicOptions, applying the checks of
// Kafka's TopicCommandOptions.checkArgs. A help/version request returns
// (nil, nil) with helpOrVersion set.
func parseOptions(args []string) (*topicOptions, string, error) {
	if len(args) == 0 {
		return nil, "", usagef("Create, delete, describe, or change a topic.")
	}
	p, err := parseArgs(args)
	if err != nil {
		return nil, "", err
	}
	if p.has("help") {
		return nil, "help", nil
	}
	if p.has("version") {
		return nil, "version", nil
	}
	var chosen []string
	for _, a := range actions {
		if p.has(a) {
			chosen = append(chosen, a)
		}
	}
	if len(chosen) != 1 {
		return nil, "", usagef("Command must include exactly one action: --list, --describe, --create, --alter or --delete")
	}
	o := &topicOptions{action: action(chosen[0])}
	if p.has("bootstrap-server") == p.has("zookeeper") {
		return nil, "", fmt.Errorf("Only one of --bootstrap-server or --zookeeper must be specified")
	}
	o.bootstrapServer, _ = p.value("bootstrap-server")
	o.zookeeper, _ = p.value("zookeeper")
	o.topic, o.hasTopic = p.value("topic")

	if p.has("describe") && p.has("if-exists") && !o.hasTopic {
		return nil, "", usagef("Missing required argument \"[topic]\"")
	}
	if !p.has("list") && !p.has("describe") && !o.hasTopic {
		return nil, "", usagef("Missing required argument \"[topic]\"")
	}
	if p.has("create") && !p.has("replica-assignment") && p.has("zookeeper") {
		var missing []string
		for _, r := range []string{"partitions", "replication-factor"} {
			if !p.has(r) {
				missing = append(missing, r)
			}
		}
		if len(missing) > 0 {
			return nil, "", usagef("Missing required argument \"[%s]\"", strings.Join(missing, ", "))
		}
	}
	if p.has("bootstrap-server") && p.has("alter") {
		if p.has("config") {
			return nil, "", usagef("Option \"[bootstrap-server, config]\" can't be used with option \"[alter]\" (the kafka-configs CLI supports altering topic configs with a --bootstrap-server option)")
		}
		if !p.has("partitions") {
			return nil, "", usagef("Missing required argument \"[partitions]\"")
		}
	}

	// Options only valid with some actions (checkInvalidArgs).
	validWith := []struct {
		opt     string
		actions []string
		also    []string // further conflicting options
	}{
		{"config", []string{"alter", "create"}, nil},
		{"delete-config", []string{"alter"}, []string{"bootstrap-server"}},
		{"partitions", []string{"alter", "create"}, nil},
		{"replication-factor", []string{"create"}, nil},
		{"replica-assignment", []string{"create", "alter"}, nil},
		{"under-replicated-partitions", []string{"describe"}, []string{"under-min-isr-partitions", "at-min-isr-partitions", "unavailable-partitions", "topics-with-overrides"}},
		{"under-min-isr-partitions", []string{"describe"}, []string{"under-replicated-partitions", "at-min-isr-partitions", "unavailable-partitions", "topics-with-overrides", "zookeeper"}},
		{"at-min-isr-partitions", []string{"describe"}, []string{"under-replicated-partitions", "under-min-isr-partitions", "unavailable-partitions", "topics-with-overrides", "zookeeper"}},
		{"unavailable-partitions", []string{"describe"}, []string{"under-replicated-partitions", "under-min-isr-partitions", "at-min-isr-partitions", "topics-with-overrides"}},
		{"topics-with-overrides", []string{"describe"}, []string{"under-replicated-partitions", "under-min-isr-partitions", "at-min-isr-partitions", "unavailable-partitions"}},
		{"if-exists", []string{"alter", "delete", "describe"}, nil},
		{"if-not-exists", []string{"create"}, nil},
		{"exclude-internal", []string{"list", "describe"}, nil},
	}
	for _, v := range validWith {
		if !p.has(v.opt) {
			continue
		}
		var bad []string
		for _, a := range actions {
			if p.has(a) && !slices.Contains(v.actions, a) {
				bad = append(bad, a)
			}
		}
		for _, a := range v.also {
			if p.has(a) {
				bad = append(bad, a)
			}
		}
		if len(bad) > 0 {
			return nil, "", usagef("Option \"[%s]\" can't be used with option \"[%s]\"", v.opt, strings.Join(bad, ", "))
		}
	}
	if p.has("create") && p.has("replica-assignment") {
		for _, c := range []string{"partitions", "replication-factor"} {
			if p.has(c) {
				return nil, "", usagef("Option \"[replica-assignment]\" can't be used with option \"[%s]\"", c)
			}
		}
	}

	if v, ok := p.value("partitions"); ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil {
			return nil, "", usagef("Cannot parse argument '%s' of option partitions", v)
		}
		o.partitions, o.hasPartitions = int32(n), true
	}
	if v, ok := p.value("replication-factor"); ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil {
			return nil, "", usagef("Cannot parse argument '%s' of option replication-factor", v)
		}
		if n < 1 || n > 32767 {
			return nil, "", fmt.Errorf("The replication factor must be between 1 and 32767 inclusive")
		}
		o.replicationFact, o.hasReplication = int16(n), true
	}
	if o.hasPartitions && o.partitions < 1 {
		return nil, "", fmt.Errorf("The partitions must be greater than 0")
	}
	if v, ok := p.value("replica-assignment"); ok && v != "" {
		ra, err := parseReplicaAssignment(v)
		if err != nil {
			return nil, "", err
		}
		o.replicaAssign = ra
	}
	if cs := p.values["config"]; len(cs) > 0 {
		o.configs, o.configOrder, err = parseTopicConfigs(cs)
		if err != nil {
			return nil, "", err
		}
	}
	for _, d := range p.values["delete-config"] {
		d = strings.TrimSpace(d)
		if _, ok := config.LookupTopicConfig(d); !ok {
			return nil, "", fmt.Errorf("Unknown topic config name: %s", d)
		}
		o.deleteConfigs = append(o.deleteConfigs, d)
	}
	if f, ok := p.value("command-config"); ok {
		props, err := loadCommandConfig(f)
		if err != nil {
			return nil, "", err
		}
		o.commandConfig = props
	}
	o.ifExists = p.has("if-exists")
	o.ifNotExists = p.has("if-not-exists")
	o.excludeInternal = p.has("exclude-internal")
	o.disableRackAware = p.has("disable-rack-aware")
	o.underReplicated = p.has("under-replicated-partitions")
	o.unavailable = p.has("unavailable-partitions")
	o.underMinIsr = p.has("under-min-isr-partitions")
	o.atMinIsr = p.has("at-min-isr-partitions")
	o.withOverrides = p.has("topics-with-overrides")
	return o, "", nil
}

func loadCommandConfig(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return config.ParseProperties(f)
}

// parseReplicaAssignment reads "0:1:2,1:2:0" (partition i = i-th group of
// broker ids), as Kafka's TopicCommand.parseReplicaAssignment.
func parseReplicaAssignment(s string) (map[int32][]int32, error) {
	out := map[int32][]int32{}
	for i, group := range strings.Split(s, ",") {
		var brokers []int32
		for _, b := range strings.Split(group, ":") {
			n, err := strconv.ParseInt(strings.TrimSpace(b), 10, 32)
			if err != nil {
				return nil, fmt.Errorf("For input string: %q", strings.TrimSpace(b))
			}
			brokers = append(brokers, int32(n))
		}
		var dups []string
		seen := map[int32]int{}
		for _, b := range brokers {
			seen[b]++
			if seen[b] == 2 {
				dups = append(dups, strconv.Itoa(int(b)))
			}
		}
		if len(dups) > 0 {
			return nil, fmt.Errorf("Partition replica lists may not contain duplicate entries: %s", strings.Join(dups, ","))
		}
		out[int32(i)] = brokers
		if len(brokers) != len(out[0]) {
			return nil, fmt.Errorf("Partition %d has different replication factor: %s", i, joinInt32(brokers))
		}
	}
	return out, nil
}

var configSplitRE = regexp.MustCompile(`\s*=\s*`)

// parseTopicConfigs reads repeated --config k=v, as Kafka's
// parseTopicConfigsToBeAdded: exactly one '=' per item, then LogConfig
// validation.
func parseTopicConfigs(items []string) (map[string]string, []string, error) {
	out := map[string]string{}
	var order []string
	for _, it := range items {
		parts := configSplitRE.Split(it, -1)
		if len(parts) != 2 {
			return nil, nil, errors.New(`Invalid topic config: all configs to be added must be in the format "key=val".`)
		}
		k, v := strings.TrimSpace(parts[0]), strings.TrimSpace(parts[1])
		if _, dup := out[k]; !dup {
			order = append(order, k)
		}
		out[k] = v
	}
	if err := config.ValidateTopicConfig(out); err != nil {
		return nil, nil, err
	}
	return out, order, nil
}

func joinInt32(v []int32) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(int(x))
	}
	return strings.Join(s, ",")
}

// usageText renders the option list like joptsimple's help formatter.
func usageText() string {
	var b strings.Builder
	b.WriteString("Option                                   Description\n")
	b.WriteString("------                                   -----------\n")
	opts := slices.Clone(optionTable)
	sort.Slice(opts, func(i, j int) bool { return opts[i].name < opts[j].name })
	for _, o := range opts {
		left := "--" + o.name
		if o.hasArg {
			left += " <" + o.argName + ">"
		}
		if len(left) > 40 {
			fmt.Fprintf(&b, "%s\n%-41s%s\n", left, "", o.help)
		} else {
			fmt.Fprintf(&b, "%-41s%s\n", left, o.help)
		}
	}
	return b.String()
}
