package main

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
	"github.com/klassik/klassik/config"
)

// specs are kafka-topics.sh's options (Kafka's TopicCommandOptions).
var specs = []admintool.Spec{
	{Name: "alter", Help: "Alter the number of partitions, replica assignment, and/or configuration for the topic."},
	{Name: "at-min-isr-partitions", Help: "if set when describing topics, only show partitions whose isr count is equal to the configured minimum. Not supported with the --zookeeper option."},
	{Name: "bootstrap-server", HasArg: true, ArgName: "server to connect to", Help: "REQUIRED: The Kafka server to connect to. In case of providing this, a direct Zookeeper connection won't be required."},
	{Name: "command-config", HasArg: true, ArgName: "command config property file", Help: "Property file containing configs to be passed to Admin Client. Honoured: client.id, request.timeout.ms and the security properties (security.protocol, sasl.*, ssl.*)."},
	{Name: "config", HasArg: true, Multi: true, ArgName: "name=value", Help: "A topic configuration override for the topic being created or altered. The valid configurations are: " + strings.Join(topicConfigNames(), ", ") + ". It is supported only in combination with --create if --bootstrap-server option is used."},
	{Name: "create", Help: "Create a new topic."},
	{Name: "delete", Help: "Delete a topic"},
	{Name: "delete-config", HasArg: true, Multi: true, ArgName: "name", Help: "A topic configuration override to be removed for an existing topic (see the list of configurations under the --config option). Not supported with the --bootstrap-server option."},
	{Name: "describe", Help: "List details for the given topics."},
	{Name: "disable-rack-aware", Help: "Disable rack aware replica assignment"},
	{Name: "exclude-internal", Help: "exclude internal topics when running list or describe command. The internal topics will be listed by default"},
	{Name: "force", Help: "Suppress console prompts"},
	{Name: "help", Help: "Print usage information."},
	{Name: "if-exists", Help: "if set when altering or deleting or describing topics, the action will only execute if the topic exists."},
	{Name: "if-not-exists", Help: "if set when creating topics, the action will only execute if the topic does not already exist."},
	{Name: "list", Help: "List all available topics."},
	{Name: "partitions", HasArg: true, ArgName: "# of partitions", Help: "The number of partitions for the topic being created or altered (WARNING: If partitions are increased for a topic that has a key, the partition logic or ordering of the messages will be affected). If not supplied for create, defaults to the cluster default."},
	{Name: "replica-assignment", HasArg: true, ArgName: "broker_id_for_part1_replica1 : broker_id_for_part1_replica2 , broker_id_for_part2_replica1 : broker_id_for_part2_replica2 , ...", Help: "A list of manual partition-to-broker assignments for the topic being created or altered."},
	{Name: "replication-factor", HasArg: true, ArgName: "replication factor", Help: "The replication factor for each partition in the topic being created. If not supplied, defaults to the cluster default."},
	{Name: "topic", HasArg: true, ArgName: "topic", Help: `The topic to create, alter, describe or delete. It also accepts a regular expression, except for --create option. Put topic name in double quotes and use the '\' prefix to escape regular expression symbols; e.g. "test\.topic".`},
	{Name: "topics-with-overrides", Help: "if set when describing topics, only show topics that have overridden configs"},
	{Name: "unavailable-partitions", Help: "if set when describing topics, only show partitions whose leader is not available"},
	{Name: "under-min-isr-partitions", Help: "if set when describing topics, only show partitions whose isr count is less than the configured minimum. Not supported with the --zookeeper option."},
	{Name: "under-replicated-partitions", Help: "if set when describing topics, only show under replicated partitions"},
	{Name: "version", Help: "Display Kafka version."},
	{Name: "zookeeper", HasArg: true, ArgName: "hosts", Help: "DEPRECATED, The connection string for the zookeeper connection in the form host:port. Multiple hosts can be given to allow fail-over."},
}

func topicConfigNames() []string {
	var out []string
	for _, t := range config.TopicConfigs() {
		out = append(out, t.Name)
	}
	return out
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
// no options and special "help" or "version".
func parseOptions(args []string) (*topicOptions, string, error) {
	p, special, err := admintool.ParseCommandWith(specs, args, "Create, delete, describe, or change a topic.",
		admintool.Rules{Abbreviations: true, SingleValued: true, NonOptionHint: " such as --topic"})
	if p == nil {
		return nil, special, err
	}
	chosen, ok := p.OneOf(actions)
	if !ok {
		return nil, "", admintool.Usagef("Command must include exactly one action: --list, --describe, --create, --alter or --delete")
	}
	o := &topicOptions{action: action(chosen)}
	if p.Has("bootstrap-server") == p.Has("zookeeper") {
		return nil, "", fmt.Errorf("Only one of --bootstrap-server or --zookeeper must be specified")
	}
	o.bootstrapServer, _ = p.Lookup("bootstrap-server")
	o.zookeeper, _ = p.Lookup("zookeeper")
	o.topic, o.hasTopic = p.Lookup("topic")

	if p.Has("describe") && p.Has("if-exists") && !o.hasTopic {
		return nil, "", admintool.Usagef("Missing required argument \"[topic]\"")
	}
	if !p.Has("list") && !p.Has("describe") && !o.hasTopic {
		return nil, "", admintool.Usagef("Missing required argument \"[topic]\"")
	}
	if p.Has("create") && !p.Has("replica-assignment") && p.Has("zookeeper") {
		var missing []string
		for _, r := range []string{"partitions", "replication-factor"} {
			if !p.Has(r) {
				missing = append(missing, r)
			}
		}
		if len(missing) > 0 {
			return nil, "", admintool.Usagef("Missing required argument \"[%s]\"", strings.Join(missing, ", "))
		}
	}
	if p.Has("bootstrap-server") && p.Has("alter") {
		if p.Has("config") {
			return nil, "", admintool.Usagef("Option \"[bootstrap-server, config]\" can't be used with option \"[alter]\" (the kafka-configs CLI supports altering topic configs with a --bootstrap-server option)")
		}
		if !p.Has("partitions") {
			return nil, "", admintool.Usagef("Missing required argument \"[partitions]\"")
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
		if !p.Has(v.opt) {
			continue
		}
		var bad []string
		for _, a := range actions {
			if p.Has(a) && !slices.Contains(v.actions, a) {
				bad = append(bad, a)
			}
		}
		for _, a := range v.also {
			if p.Has(a) {
				bad = append(bad, a)
			}
		}
		if len(bad) > 0 {
			return nil, "", admintool.Usagef("Option \"[%s]\" can't be used with option \"[%s]\"", v.opt, strings.Join(bad, ", "))
		}
	}
	if p.Has("create") && p.Has("replica-assignment") {
		for _, c := range []string{"partitions", "replication-factor"} {
			if p.Has(c) {
				return nil, "", admintool.Usagef("Option \"[replica-assignment]\" can't be used with option \"[%s]\"", c)
			}
		}
	}

	if v, ok := p.Lookup("partitions"); ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil {
			return nil, "", admintool.Usagef("Cannot parse argument '%s' of option partitions", v)
		}
		o.partitions, o.hasPartitions = int32(n), true
	}
	if v, ok := p.Lookup("replication-factor"); ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil {
			return nil, "", admintool.Usagef("Cannot parse argument '%s' of option replication-factor", v)
		}
		if n < 1 || n > 32767 {
			return nil, "", fmt.Errorf("The replication factor must be between 1 and 32767 inclusive")
		}
		o.replicationFact, o.hasReplication = int16(n), true
	}
	if o.hasPartitions && o.partitions < 1 {
		return nil, "", fmt.Errorf("The partitions must be greater than 0")
	}
	if v, ok := p.Lookup("replica-assignment"); ok && v != "" {
		ra, err := parseReplicaAssignment(v)
		if err != nil {
			return nil, "", err
		}
		o.replicaAssign = ra
	}
	if cs := p.Values("config"); len(cs) > 0 {
		o.configs, o.configOrder, err = parseTopicConfigs(cs)
		if err != nil {
			return nil, "", err
		}
	}
	for _, d := range p.Values("delete-config") {
		d = strings.TrimSpace(d)
		if _, ok := config.LookupTopicConfig(d); !ok {
			return nil, "", fmt.Errorf("Unknown topic config name: %s", d)
		}
		o.deleteConfigs = append(o.deleteConfigs, d)
	}
	if f, ok := p.Lookup("command-config"); ok {
		props, err := admintool.LoadProperties(f)
		if err != nil {
			return nil, "", err
		}
		o.commandConfig = props
	}
	o.ifExists = p.Has("if-exists")
	o.ifNotExists = p.Has("if-not-exists")
	o.excludeInternal = p.Has("exclude-internal")
	o.disableRackAware = p.Has("disable-rack-aware")
	o.underReplicated = p.Has("under-replicated-partitions")
	o.unavailable = p.Has("unavailable-partitions")
	o.underMinIsr = p.Has("under-min-isr-partitions")
	o.atMinIsr = p.Has("at-min-isr-partitions")
	o.withOverrides = p.Has("topics-with-overrides")
	return o, "", nil
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
func usageText() string { return admintool.UsageAt(specs, 41) }
