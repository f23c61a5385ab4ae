package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/bin/internal/clitools"
	"github.com/klassik/klassik/bin/internal/clitools/security"
	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
	"github.com/klassik/klassik/config"
)

const toolHelp = "This tool helps in performance test for the full zookeeper consumer"

var specs = append([]admintool.Spec{
	{Name: "messages", HasArg: true, ArgName: "Long: count", Help: "REQUIRED: The number of messages to send or consume"},
	{Name: "reporting-interval", HasArg: true, ArgName: "Integer: interval_ms", Help: "Interval in milliseconds at which to print progress info. (default: 5000)"},
	{Name: "date-format", HasArg: true, ArgName: "String: date format", Help: "The date format to use for formatting the time field. See java.text.SimpleDateFormat for options. (default: yyyy-MM-dd HH:mm:ss:SSS)"},
	{Name: "hide-header", Help: "If set, skips printing the header for the stats "},
	{Name: "broker-list", HasArg: true, ArgName: "String: broker-list", Help: "DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is specified.  The broker list string in the form HOST1:PORT1,HOST2:PORT2."},
	{Name: "bootstrap-server", HasArg: true, ArgName: "String: server to connect to", Help: "REQUIRED unless --broker-list(deprecated) is specified. The server(s) to connect to."},
	{Name: "topic", HasArg: true, ArgName: "String: topic", Help: "REQUIRED: The topic to consume from."},
	{Name: "group", HasArg: true, ArgName: "String: gid", Help: "The group id to consume on. (default: perf-consumer-<a random number below 100000>)"},
	{Name: "fetch-size", HasArg: true, ArgName: "Integer: size", Help: "The amount of data to fetch in a single request. (default: 1048576)"},
	{Name: "from-latest", Help: "If the consumer does not already have an established offset to consume from, start with the latest message present in the log rather than the earliest message."},
	{Name: "socket-buffer-size", HasArg: true, ArgName: "Integer: size", Help: "The size of the tcp RECV size. (default: 2097152)"},
	{Name: "threads", HasArg: true, ArgName: "Integer: count", Help: "DEPRECATED AND IGNORED: Number of processing threads. (default: 10)"},
	{Name: "num-fetch-threads", HasArg: true, ArgName: "Integer: count", Help: "DEPRECATED AND IGNORED: Number of fetcher threads. (default: 1)"},
	{Name: "consumer.config", HasArg: true, ArgName: "String: config file", Help: "Consumer config properties file."},
	{Name: "print-metrics", Help: "Print out the metrics."},
	{Name: "show-detailed-stats", Help: "If set, stats are reported for each reporting interval as configured by reporting-interval"},
	{Name: "timeout", HasArg: true, ArgName: "Long: milliseconds", Help: "The maximum allowed time in milliseconds between returned records. (default: 10000)"},
}, admintool.HelpSpecs...)

// options are ConsumerPerfConfig's.
type options struct {
	topic             string
	numMessages       int64
	reportingInterval int64
	showDetailedStats bool
	hideHeader        bool
	printMetrics      bool
	dateFormat        *dateFormat
	timeout           int64 // ms between returned records
	maxPollRecords    int
	clientID          string
	kgoOpts           []kgo.Opt
	// warning is printed first (the deprecated thread options).
	warning string
	// logWarnings are the consumer's log lines on stderr (unknown keys).
	logWarnings []string
}

// illegalArgument is an IllegalArgumentException ConsumerPerfConfig
// throws out of main.
type illegalArgument struct{ msg string }

func (e *illegalArgument) Error() string {
	return "Exception in thread \"main\" java.lang.IllegalArgumentException: " + e.msg
}

func parseOptions(args []string) (*options, string, error) {
	args = admintool.DefaultOptionalArg(args, "timeout", "10000")
	if len(args) == 0 {
		return nil, "", admintool.Usagef("%s", toolHelp)
	}
	p, err := admintool.Parse(specs, args)
	if err != nil {
		return nil, "", err
	}
	// joptsimple's requiredUnless check comes with the parse.
	if !p.Has("bootstrap-server") && !p.Has("broker-list") {
		return nil, "", admintool.Usagef("Missing required option(s) [bootstrap-server]")
	}
	o := &options{}
	if p.Has("threads") || p.Has("num-fetch-threads") {
		o.warning = "WARNING: option [threads] and [num-fetch-threads] have been deprecated and will be ignored by the test"
	}
	switch {
	case p.Has("help"):
		return o, "help", nil
	case p.Has("version"):
		return o, "version", nil
	}
	for _, req := range []string{"topic", "messages"} {
		if !p.Has(req) {
			return o, "", admintool.Usagef(`Missing required argument "[%s]"`, req)
		}
	}
	num := func(name string, def int64, bits int) (int64, error) {
		v, ok := p.Lookup(name)
		if !ok {
			return def, nil
		}
		n, err := strconv.ParseInt(v, 10, bits)
		if err != nil {
			return 0, admintool.Usagef("Cannot parse argument '%s' of option %s", v, name)
		}
		return n, nil
	}
	var nums [6]int64
	for i, n := range []struct {
		name string
		def  int64
		bits int
	}{{"messages", 0, 64}, {"reporting-interval", 5000, 32}, {"fetch-size", 1024 * 1024, 32},
		{"socket-buffer-size", 2 * 1024 * 1024, 32}, {"threads", 10, 32}, {"timeout", 10000, 64}} {
		if nums[i], err = num(n.name, n.def, n.bits); err != nil {
			return o, "", err
		}
	}
	if _, err := num("num-fetch-threads", 1, 32); err != nil {
		return o, "", err
	}
	o.topic, o.numMessages, o.reportingInterval, o.timeout = p.Value("topic"), nums[0], nums[1], nums[5]
	o.showDetailedStats, o.hideHeader, o.printMetrics = p.Has("show-detailed-stats"), p.Has("hide-header"), p.Has("print-metrics")

	props := map[string]string{}
	if p.Has("consumer.config") {
		if props, err = admintool.LoadProperties(p.Value("consumer.config")); err != nil {
			return o, "", err
		}
	}
	servers := p.Value("broker-list")
	if p.Has("bootstrap-server") {
		servers = p.Value("bootstrap-server")
	}
	group := p.Value("group")
	if !p.Has("group") {
		group = fmt.Sprintf("perf-consumer-%d", rand.IntN(100000))
	}
	props["bootstrap.servers"] = servers
	props["group.id"] = group
	props["receive.buffer.bytes"] = strconv.FormatInt(nums[3], 10)
	props["max.partition.fetch.bytes"] = strconv.FormatInt(nums[2], 10)
	props["auto.offset.reset"] = "earliest"
	if p.Has("from-latest") {
		props["auto.offset.reset"] = "latest"
	}
	props["key.deserializer"] = "org.apache.kafka.common.serialization.ByteArrayDeserializer"
	props["value.deserializer"] = "org.apache.kafka.common.serialization.ByteArrayDeserializer"
	props["check.crcs"] = "false"
	if o.reportingInterval <= 0 {
		return o, "", &illegalArgument{"Reporting interval must be greater than 0."}
	}
	df := "yyyy-MM-dd HH:mm:ss:SSS"
	if p.Has("date-format") {
		df = p.Value("date-format")
	}
	if o.dateFormat, err = parseDateFormat(df); err != nil {
		return o, "", &illegalArgument{err.Error()}
	}
	if err := o.consumerOpts(props); err != nil {
		return o, "", err
	}
	return o, "", nil
}

// unsupportedConsumerKeys are Kafka 2.8 consumer properties franz-go
// cannot honour; setting one is an error naming it.
var unsupportedConsumerKeys = []string{"client.dns.lookup", "default.api.timeout.ms", "exclude.internal.topics",
	"interceptor.classes", "metadata.max.idle.ms", "metric.reporters", "metrics.num.samples", "metrics.recording.level",
	"metrics.sample.window.ms", "reconnect.backoff.max.ms", "reconnect.backoff.ms", "request.timeout.ms",
	"send.buffer.bytes", "socket.connection.setup.timeout.max.ms"}

// honouredConsumerKeys are read by consumerOpts. receive.buffer.bytes,
// which the tool always sets from --socket-buffer-size, is left to the
// kernel's autotuning of the socket buffer; the deserializers are the
// tool's own.
var honouredConsumerKeys = []string{"allow.auto.create.topics", "auto.commit.interval.ms", "auto.offset.reset",
	"bootstrap.servers", "check.crcs", "client.id", "client.rack", "connections.max.idle.ms", "enable.auto.commit",
	"fetch.max.bytes", "fetch.max.wait.ms", "fetch.min.bytes", "group.id", "group.instance.id",
	"heartbeat.interval.ms", "isolation.level", "key.deserializer", "max.partition.fetch.bytes",
	"max.poll.interval.ms", "max.poll.records", "metadata.max.age.ms", "partition.assignment.strategy",
	"receive.buffer.bytes", "retry.backoff.ms", "session.timeout.ms", "socket.connection.setup.timeout.ms",
	"value.deserializer"}

// balancers are the assignors of partition.assignment.strategy.
var balancers = map[string]func() kgo.GroupBalancer{
	"org.apache.kafka.clients.consumer.RangeAssignor":             kgo.RangeBalancer,
	"org.apache.kafka.clients.consumer.RoundRobinAssignor":        kgo.RoundRobinBalancer,
	"org.apache.kafka.clients.consumer.StickyAssignor":            kgo.StickyBalancer,
	"org.apache.kafka.clients.consumer.CooperativeStickyAssignor": kgo.CooperativeStickyBalancer,
}

// consumerOpts maps the Java consumer properties onto franz-go, with
// Kafka 2.8's defaults (RangeAssignor, auto-commit every 5 s,
// max.poll.records 500, read_uncommitted).
func (o *options) consumerOpts(props map[string]string) error {
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range props {
			if !yield(k) {
				return
			}
		}
	}) {
		switch {
		case slices.Contains(unsupportedConsumerKeys, k):
			return fmt.Errorf("client property %s=%s is not supported by Klassik's kafka-consumer-perf-test", k, props[k])
		case slices.Contains(honouredConsumerKeys, k), strings.HasPrefix(k, "ssl."), strings.HasPrefix(k, "sasl."),
			strings.HasPrefix(k, "security."):
		default:
			o.logWarnings = append(o.logWarnings, fmt.Sprintf("WARN The configuration '%s' was supplied but isn't a known config. (org.apache.kafka.clients.consumer.ConsumerConfig)", k))
		}
	}
	group := props["group.id"]
	o.clientID = props["client.id"]
	if o.clientID == "" {
		o.clientID = "consumer-" + group + "-1"
	}
	opts := []kgo.Opt{kgo.SeedBrokers(config.SplitList(props["bootstrap.servers"])...), kgo.ClientID(o.clientID),
		kgo.ConsumerGroup(group), kgo.ConsumeTopics(o.topic)}
	switch v := strings.TrimSpace(props["auto.offset.reset"]); v {
	case "earliest":
		opts = append(opts, kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	case "latest":
		opts = append(opts, kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()))
	default:
		return fmt.Errorf("Invalid value %s for configuration auto.offset.reset: String must be one of: latest, earliest, none", v)
	}
	intProp := func(key string, def, least int64) (int64, error) {
		v, ok := props[key]
		if !ok {
			return def, nil
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil || n < least {
			return 0, fmt.Errorf("Invalid value %s for configuration %s", v, key)
		}
		return n, nil
	}
	for _, c := range []struct {
		key         string
		def, least  int64
		opt         func(int64) kgo.Opt
		alwaysApply bool
	}{
		{"max.partition.fetch.bytes", 1048576, 1, func(n int64) kgo.Opt { return kgo.FetchMaxPartitionBytes(int32(n)) }, true},
		{"fetch.max.bytes", 52428800, 1, func(n int64) kgo.Opt { return kgo.FetchMaxBytes(int32(n)) }, true},
		{"fetch.min.bytes", 1, 1, func(n int64) kgo.Opt { return kgo.FetchMinBytes(int32(n)) }, true},
		{"fetch.max.wait.ms", 500, 0, func(n int64) kgo.Opt { return kgo.FetchMaxWait(time.Duration(max(n, 1)) * time.Millisecond) }, true},
		{"auto.commit.interval.ms", 5000, 1, func(n int64) kgo.Opt { return kgo.AutoCommitInterval(time.Duration(n) * time.Millisecond) }, true},
		{"session.timeout.ms", 10000, 1, func(n int64) kgo.Opt { return kgo.SessionTimeout(time.Duration(n) * time.Millisecond) }, true},
		{"heartbeat.interval.ms", 3000, 1, func(n int64) kgo.Opt { return kgo.HeartbeatInterval(time.Duration(n) * time.Millisecond) }, true},
		{"max.poll.interval.ms", 300000, 1, func(n int64) kgo.Opt { return kgo.RebalanceTimeout(time.Duration(n) * time.Millisecond) }, true},
		{"metadata.max.age.ms", 300000, 1, func(n int64) kgo.Opt { return kgo.MetadataMaxAge(time.Duration(n) * time.Millisecond) }, false},
		{"retry.backoff.ms", 100, 0, func(n int64) kgo.Opt {
			return kgo.RetryBackoffFn(func(int) time.Duration { return time.Duration(n) * time.Millisecond })
		}, false},
		{"connections.max.idle.ms", 540000, 1, func(n int64) kgo.Opt { return kgo.ConnIdleTimeout(time.Duration(n) * time.Millisecond) }, false},
		{"socket.connection.setup.timeout.ms", 10000, 1, func(n int64) kgo.Opt { return kgo.DialTimeout(time.Duration(n) * time.Millisecond) }, false},
	} {
		n, err := intProp(c.key, c.def, c.least)
		if err != nil {
			return err
		}
		if _, given := props[c.key]; given || c.alwaysApply {
			opts = append(opts, c.opt(n))
		}
	}
	mpr, err := intProp("max.poll.records", 500, 1)
	if err != nil {
		return err
	}
	o.maxPollRecords = int(mpr)
	if auto, err := clitools.Bool(props, "enable.auto.commit", true); err != nil {
		return err
	} else if !auto {
		opts = append(opts, kgo.DisableAutoCommit())
	}
	if crc, err := clitools.Bool(props, "check.crcs", true); err != nil {
		return err
	} else if !crc {
		opts = append(opts, kgo.DisableFetchCRCValidation())
	}
	if create, err := clitools.Bool(props, "allow.auto.create.topics", true); err != nil {
		return err
	} else if create {
		opts = append(opts, kgo.AllowAutoTopicCreation())
	}
	switch v := strings.TrimSpace(props["isolation.level"]); v {
	case "", "read_uncommitted":
	case "read_committed":
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	default:
		return fmt.Errorf("Invalid value %s for configuration isolation.level: String must be one of: read_committed, read_uncommitted", v)
	}
	strategy := "org.apache.kafka.clients.consumer.RangeAssignor"
	if v, ok := props["partition.assignment.strategy"]; ok {
		strategy = v
	}
	var bals []kgo.GroupBalancer
	for _, name := range config.SplitList(strategy) {
		b, ok := balancers[name]
		if !ok {
			return fmt.Errorf("client property partition.assignment.strategy=%s is not supported by Klassik's kafka-consumer-perf-test", name)
		}
		bals = append(bals, b())
	}
	opts = append(opts, kgo.Balancers(bals...))
	if v := strings.TrimSpace(props["group.instance.id"]); v != "" {
		opts = append(opts, kgo.InstanceID(v))
	}
	if v := strings.TrimSpace(props["client.rack"]); v != "" {
		opts = append(opts, kgo.Rack(v))
	}
	secOpts, err := security.Opts(props)
	if err != nil {
		return err
	}
	o.kgoOpts = append(opts, secOpts...)
	return nil
}
