package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/klassik/klassik/bin/internal/clitools"
	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
)

const toolHelp = "This tool helps to read data from Kafka topics and outputs it to standard output."

var specs = append([]admintool.Spec{
	{Name: "bootstrap-server", HasArg: true, ArgName: "String: server to connect to", Help: "REQUIRED (unless --zookeeper is given): The server(s) to connect to."},
	{Name: "zookeeper", HasArg: true, ArgName: "String: urls", Help: "The classic ZooKeeper-based consumer: the connection string for the zookeeper connection in the form host:port. Multiple URLS can be given to allow fail-over."},
	{Name: "topic", HasArg: true, ArgName: "String: topic", Help: "The topic id to consume on."},
	{Name: "whitelist", HasArg: true, ArgName: "String: whitelist", Help: "Regular expression specifying whitelist of topics to include for consumption."},
	{Name: "partition", HasArg: true, ArgName: "Integer: partition", Help: "The partition to consume from. Consumption starts from the end of the partition unless '--offset' is specified."},
	{Name: "offset", HasArg: true, ArgName: "String: consume offset", Help: "The offset id to consume from (a non-negative number), or 'earliest' which means from beginning, or 'latest' which means from end (default: latest)"},
	{Name: "consumer-property", HasArg: true, ArgName: "String: consumer_prop", Help: "A mechanism to pass user-defined properties in the form key=value to the consumer."},
	{Name: "consumer.config", HasArg: true, ArgName: "String: config file", Help: "Consumer config properties file. Note that [consumer-property] takes precedence over this config."},
	{Name: "formatter", HasArg: true, ArgName: "String: class", Help: "The name of a class to use for formatting kafka messages for display. (default: kafka.tools.DefaultMessageFormatter)"},
	{Name: "property", HasArg: true, ArgName: "String: prop", Help: "The properties to initialize the message formatter. Default properties include:\n print.timestamp=true|false\n print.key=true|false\n print.offset=true|false\n print.partition=true|false\n print.headers=true|false\n print.value=true|false\n key.separator=<key.separator>\n line.separator=<line.separator>\n headers.separator=<line.separator>\n null.literal=<null.literal>\n key.deserializer=<key.deserializer>\n value.deserializer=<value.deserializer>\n header.deserializer=<header.deserializer>\n\nUsers can also pass in customized properties for their formatter; more specifically, users can pass in properties keyed with 'key.deserializer.', 'value.deserializer.' and 'headers.deserializer.' prefixes to configure their deserializers."},
	{Name: "from-beginning", Help: "If the consumer does not already have an established offset to consume from, start with the earliest message present in the log rather than the latest message."},
	{Name: "max-messages", HasArg: true, ArgName: "Integer: num_messages", Help: "The maximum number of messages to consume before exiting. If not set, consumption is continual."},
	{Name: "timeout-ms", HasArg: true, ArgName: "Integer: timeout_ms", Help: "If specified, exit if no message is available for consumption for the specified interval."},
	{Name: "skip-message-on-error", Help: "If there is an error when processing a message, skip it instead of halt."},
	{Name: "key-deserializer", HasArg: true, ArgName: "String: deserializer for key"},
	{Name: "value-deserializer", HasArg: true, ArgName: "String: deserializer for values"},
	{Name: "enable-systest-events", Help: "Log lifecycle events of the consumer in addition to logging consumed messages. (This is specific for system tests.)"},
	{Name: "isolation-level", HasArg: true, ArgName: "String", Help: "Set to read_committed in order to filter out transactional messages which are not committed. Set to read_uncommitted to read all messages. (default: read_uncommitted)"},
	{Name: "group", HasArg: true, ArgName: "String: consumer group id", Help: "The consumer group id of the consumer."},
	{Name: "delete-consumer-offsets", Help: "If specified, the consumer path in zookeeper is deleted when starting up (--zookeeper only)."},
}, admintool.HelpSpecs...)

// options is a validated command line (Kafka's ConsoleConsumer.ConsumerConfig).
type options struct {
	bootstrap, zookeeper string
	topic, whitelist     string
	partition            int32
	hasPartition         bool
	offset               string // "earliest", "latest" or a number; "" = not given
	fromBeginning        bool
	maxMessages          int64 // -1 = unlimited
	timeout              time.Duration
	skipOnError          bool
	readCommitted        bool
	group                string
	groupPassed          bool
	deleteOffsets        bool
	consumerProps        map[string]string
	systestEvents        bool // --enable-systest-events: "shutdown_complete" at exit
	formatter            messageFormatter
}

// parseOptions applies ConsoleConsumer's checks, in its order, with its
// messages.
func parseOptions(args []string) (*options, string, error) {
	p, special, err := admintool.ParseCommand(specs, args, toolHelp)
	if p == nil {
		return nil, special, err
	}
	o := &options{bootstrap: p.Value("bootstrap-server"), zookeeper: p.Value("zookeeper"), topic: p.Value("topic"),
		whitelist: p.Value("whitelist"), fromBeginning: p.Has("from-beginning"), maxMessages: -1,
		skipOnError: p.Has("skip-message-on-error"), deleteOffsets: p.Has("delete-consumer-offsets"),
		systestEvents: p.Has("enable-systest-events")}
	if err := clitools.CheckConnection(o.bootstrap, o.zookeeper); err != nil {
		return nil, "", err
	}
	fileProps, extra, err := clitools.ClientProperties(p, "consumer.config", "consumer-property")
	if err != nil {
		return nil, "", err
	}
	o.consumerProps = clitools.Merge(fileProps, extra)
	fprops, err := clitools.KeyValues(p, "property")
	if err != nil {
		return nil, "", err
	}
	// --key-deserializer and --value-deserializer become the formatter's
	// key.deserializer and value.deserializer properties.
	if v := p.Value("key-deserializer"); v != "" {
		fprops["key.deserializer"] = v
	}
	if v := p.Value("value-deserializer"); v != "" {
		fprops["value.deserializer"] = v
	}
	class := defaultFormatterClass
	if p.Has("formatter") {
		class = p.Value("formatter")
	}
	if o.formatter, err = newMessageFormatter(class, fprops); err != nil {
		return nil, "", err
	}
	if n := btoi(o.topic != "") + btoi(o.whitelist != ""); n != 1 {
		return nil, "", admintool.Usagef("Exactly one of whitelist/topic is required.")
	}
	if p.Has("partition") {
		n, err := strconv.ParseInt(p.Value("partition"), 10, 32)
		if err != nil || n < 0 {
			return nil, "", admintool.Usagef("Cannot parse argument '%s' of option partition", p.Value("partition"))
		}
		o.partition, o.hasPartition = int32(n), true
		if o.topic == "" {
			return nil, "", admintool.Usagef("The topic is required when partition is specified.")
		}
		if o.fromBeginning && p.Has("offset") {
			return nil, "", admintool.Usagef("Options from-beginning and offset cannot be specified together.")
		}
	} else if p.Has("offset") {
		return nil, "", admintool.Usagef("The partition is required when offset is specified.")
	}
	if p.Has("offset") {
		o.offset = strings.ToLower(p.Value("offset"))
		if o.offset != "earliest" && o.offset != "latest" {
			if n, err := strconv.ParseInt(o.offset, 10, 64); err != nil || n < 0 {
				return nil, "", admintool.Usagef("The provided offset value '%s' is incorrect. Valid values are 'earliest', 'latest', or a non-negative long.", p.Value("offset"))
			}
		}
	}
	if p.Has("max-messages") {
		n, err := strconv.ParseInt(p.Value("max-messages"), 10, 32)
		if err != nil {
			return nil, "", admintool.Usagef("Cannot parse argument '%s' of option max-messages", p.Value("max-messages"))
		}
		o.maxMessages = n
	}
	if p.Has("timeout-ms") {
		n, err := strconv.ParseInt(p.Value("timeout-ms"), 10, 32)
		if err != nil {
			return nil, "", admintool.Usagef("Cannot parse argument '%s' of option timeout-ms", p.Value("timeout-ms"))
		}
		if n >= 0 {
			o.timeout = time.Duration(n) * time.Millisecond
		}
	}
	if p.Has("isolation-level") {
		switch v := p.Value("isolation-level"); v {
		case "read_committed":
			o.readCommitted = true
		case "read_uncommitted":
		default:
			return nil, "", fmt.Errorf("Invalid value %s for configuration isolation.level: String must be one of: read_committed, read_uncommitted", v)
		}
	}
	// The group may come from --group, --consumer-property or the config
	// file; all given values must agree.
	seen := map[string]bool{}
	var ids []string
	for _, g := range []string{p.Value("group"), extra["group.id"], fileProps["group.id"]} {
		if g != "" && !seen[g] {
			seen[g] = true
			ids = append(ids, g)
		}
	}
	if len(ids) > 1 {
		return nil, "", admintool.Usagef("The group ids provided in different places (directly using '--group', via '--consumer-property', or via '--consumer.config') do not match. Detected group ids: '%s'", strings.Join(ids, "', '"))
	}
	if len(ids) == 1 {
		o.group, o.groupPassed = ids[0], true
	}
	if o.groupPassed && o.hasPartition {
		return nil, "", admintool.Usagef("Options group and partition cannot be specified together.")
	}
	if o.zookeeper != "" && o.hasPartition {
		return nil, "", admintool.Usagef("Option [partition] cannot be used with option [zookeeper]")
	}
	if o.zookeeper != "" && o.whitelist != "" {
		return nil, "", admintool.Usagef("--whitelist is not supported with --zookeeper; use --topic")
	}
	return o, "", nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
