package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/bin/internal/clitools"
	"github.com/klassik/klassik/bin/internal/clitools/security"
	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
	"github.com/klassik/klassik/config"
)

const toolHelp = "This tool helps to read data from standard input and publish it to Kafka."

var specs = append([]admintool.Spec{
	{Name: "topic", HasArg: true, ArgName: "String: topic", Help: "REQUIRED: The topic id to produce messages to."},
	{Name: "broker-list", HasArg: true, ArgName: "String: broker-list", Help: "DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is specified.  The broker list string in the form HOST1:PORT1,HOST2:PORT2."},
	{Name: "bootstrap-server", HasArg: true, ArgName: "String: server to connect to", Help: "REQUIRED unless --broker-list(deprecated) is specified. The server(s) to connect to. The broker list string in the form HOST1:PORT1,HOST2:PORT2."},
	{Name: "sync", Help: "If set message send requests to the brokers are synchronously, one at a time as they arrive."},
	{Name: "compression-codec", HasArg: true, ArgName: "String: compression-codec", Help: "The compression codec: either 'none', 'gzip', 'snappy', 'lz4', or 'zstd'.If specified without value, then it defaults to 'gzip'"},
	{Name: "batch-size", HasArg: true, ArgName: "Integer: size", Help: "Number of messages to send in a single batch if they are not being sent synchronously. (default: 200)"},
	{Name: "message-send-max-retries", HasArg: true, ArgName: "Integer", Help: "This property specifies the number of retries before the producer give up and drop this message. (default: 3)"},
	{Name: "retry-backoff-ms", HasArg: true, ArgName: "Long", Help: "The amount of time that the producer waits before refreshing the metadata. (default: 100)"},
	{Name: "timeout", HasArg: true, ArgName: "Long: timeout_ms", Help: "If set and the producer is running in asynchronous mode, this gives the maximum amount of time a message will queue awaiting sufficient batch size. The value is given in ms. (default: 1000)"},
	{Name: "request-required-acks", HasArg: true, ArgName: "String: request required acks", Help: "The required acks of the producer requests (default: 1)"},
	{Name: "request-timeout-ms", HasArg: true, ArgName: "Integer: request timeout ms", Help: "The ack timeout of the producer requests. Value must be non-negative and non-zero (default: 1500)"},
	{Name: "metadata-expiry-ms", HasArg: true, ArgName: "Long: metadata expiration interval", Help: "The period of time in milliseconds after which we force a refresh of metadata even if we haven't seen any leadership changes. (default: 300000)"},
	{Name: "max-block-ms", HasArg: true, ArgName: "Long: max block on send", Help: "The max time that the producer will block for during a send request (default: 60000)"},
	{Name: "max-memory-bytes", HasArg: true, ArgName: "Long: total memory in bytes", Help: "The total memory used by the producer to buffer records waiting to be sent to the server. (default: 33554432)"},
	{Name: "max-partition-memory-bytes", HasArg: true, ArgName: "Long: memory in bytes per partition", Help: "The buffer size allocated for a partition. (default: 16384)"},
	{Name: "socket-buffer-size", HasArg: true, ArgName: "Integer: size", Help: "The size of the tcp RECV size. (default: 102400)"},
	{Name: "line-reader", HasArg: true, ArgName: "String: reader_class", Help: "The class name of the class to use for reading lines from standard in. (default: kafka.tools.ConsoleProducer$LineMessageReader)"},
	{Name: "property", HasArg: true, ArgName: "String: prop", Help: "A mechanism to pass user-defined properties in the form key=value to the message reader: parse.key, key.separator, ignore.error."},
	{Name: "producer-property", HasArg: true, ArgName: "String: producer_prop", Help: "A mechanism to pass user-defined properties in the form key=value to the producer. "},
	{Name: "producer.config", HasArg: true, ArgName: "String: config file", Help: "Producer config properties file. Note that [producer-property] takes precedence over this config."},
}, admintool.HelpSpecs...)

type options struct {
	topic        string
	sync         bool
	reader       readerConfig
	kgoOpts      []kgo.Opt
	closeTimeout time.Duration
	// Resolved producer settings, kept for tests.
	acks        string
	compression string
	linger      time.Duration
	clientID    string
}

func parseOptions(args []string) (*options, string, error) {
	args = admintool.DefaultOptionalArg(args, "compression-codec", "gzip")
	p, special, err := admintool.ParseCommand(specs, args, toolHelp)
	if p == nil {
		return nil, special, err
	}
	if !p.Has("topic") {
		return nil, "", admintool.Usagef(`Missing required argument "[topic]"`)
	}
	servers := p.Value("bootstrap-server")
	if servers == "" {
		servers = p.Value("broker-list")
	}
	if servers == "" {
		return nil, "", admintool.Usagef(`Missing required argument "[bootstrap-server]"`)
	}
	for _, s := range config.SplitList(servers) {
		i := strings.LastIndex(s, ":")
		if i < 0 {
			return nil, "", admintool.Usagef("Please provide valid host:port like host1:9091,host2:9092\n ")
		}
		if _, err := strconv.ParseUint(s[i+1:], 10, 16); err != nil {
			return nil, "", admintool.Usagef("Please provide valid host:port like host1:9091,host2:9092\n ")
		}
	}
	o := &options{topic: p.Value("topic"), sync: p.Has("sync"), closeTimeout: 60 * time.Second}
	readerProps, err := clitools.KeyValues(p, "property")
	if err != nil {
		return nil, "", err
	}
	if o.reader, err = newReaderConfig(readerProps); err != nil {
		return nil, "", err
	}
	if p.Has("line-reader") && p.Value("line-reader") != "kafka.tools.ConsoleProducer$LineMessageReader" {
		return nil, "", fmt.Errorf("line reader class %s is not available (only kafka.tools.ConsoleProducer$LineMessageReader)", p.Value("line-reader"))
	}
	fileProps, extra, err := clitools.ClientProperties(p, "producer.config", "producer-property")
	if err != nil {
		return nil, "", err
	}
	props := clitools.Merge(fileProps, extra)
	// The command-line options override the properties only when given,
	// as CommandLineUtils.maybeMergeOptions does; compression.type is
	// always set from --compression-codec (default none).
	props["compression.type"] = "none"
	if p.Has("compression-codec") {
		props["compression.type"] = p.Value("compression-codec")
	}
	for opt, key := range map[string]string{"timeout": "linger.ms", "request-required-acks": "acks",
		"request-timeout-ms": "request.timeout.ms", "message-send-max-retries": "retries",
		"retry-backoff-ms": "retry.backoff.ms", "max-block-ms": "max.block.ms", "metadata-expiry-ms": "metadata.max.age.ms",
		"max-partition-memory-bytes": "batch.size", "max-memory-bytes": "buffer.memory", "socket-buffer-size": "send.buffer.bytes"} {
		if p.Has(opt) {
			props[key] = p.Value(opt)
		} else if _, ok := props[key]; !ok {
			if def, ok := optionDefaults[key]; ok {
				props[key] = def
			}
		}
	}
	if err := o.producerOpts(servers, props); err != nil {
		return nil, "", err
	}
	return o, "", nil
}

// optionDefaults are the defaults of the command-line options that map to
// producer properties (applied when neither the option nor the property is
// given).
var optionDefaults = map[string]string{"linger.ms": "1000", "acks": "1", "request.timeout.ms": "1500", "retries": "3",
	"retry.backoff.ms": "100", "max.block.ms": "60000", "metadata.max.age.ms": "300000"}

// producerOpts maps the Java producer properties onto franz-go options.
func (o *options) producerOpts(servers string, props map[string]string) error {
	o.clientID = props["client.id"]
	if o.clientID == "" {
		o.clientID = "console-producer"
	}
	opts := []kgo.Opt{kgo.SeedBrokers(config.SplitList(servers)...), kgo.ClientID(o.clientID), kgo.DefaultProduceTopic(o.topic)}
	o.acks = strings.TrimSpace(props["acks"])
	idempotent, err := clitools.Bool(props, "enable.idempotence", false)
	if err != nil {
		return err
	}
	acks, ok := acksByName[o.acks]
	if !ok {
		return fmt.Errorf("Invalid value %s for configuration acks: String must be one of: all, -1, 0, 1", o.acks)
	}
	opts = append(opts, kgo.RequiredAcks(acks))
	if !idempotent {
		opts = append(opts, kgo.DisableIdempotentWrite())
	} else if o.acks != "all" && o.acks != "-1" {
		return fmt.Errorf("Must set acks to all in order to use the idempotent producer. Otherwise we cannot guarantee idempotence.")
	}
	o.compression = props["compression.type"]
	codec, ok := codecByName[o.compression]
	if !ok {
		return fmt.Errorf("Invalid value %s for configuration compression.type: String must be one of: none, gzip, snappy, lz4, zstd", o.compression)
	}
	opts = append(opts, kgo.ProducerBatchCompression(codec))
	if o.linger, err = clitools.Millis(props, "linger.ms", time.Second); err != nil {
		return err
	}
	if o.linger > 0 {
		opts = append(opts, kgo.ProducerLinger(o.linger))
	}
	if d, err := clitools.Millis(props, "request.timeout.ms", 1500*time.Millisecond); err != nil {
		return err
	} else if d > 0 {
		// Java's request.timeout.ms bounds one produce request; franz-go's
		// closest knob is the produce request timeout.
		opts = append(opts, kgo.ProduceRequestTimeout(max(d, time.Second)))
	}
	if d, err := clitools.Millis(props, "max.block.ms", time.Minute); err != nil {
		return err
	} else {
		o.closeTimeout = max(d, time.Second)
		opts = append(opts, kgo.RecordDeliveryTimeout(max(d, time.Second)))
	}
	if d, err := clitools.Millis(props, "retry.backoff.ms", 100*time.Millisecond); err != nil {
		return err
	} else {
		opts = append(opts, kgo.RetryBackoffFn(func(int) time.Duration { return d }))
	}
	if d, err := clitools.Millis(props, "metadata.max.age.ms", 5*time.Minute); err != nil {
		return err
	} else if d > 0 {
		opts = append(opts, kgo.MetadataMaxAge(d))
	}
	if v, ok := props["batch.size"]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n <= 0 {
			return fmt.Errorf("Invalid value %s for configuration batch.size", v)
		}
		opts = append(opts, kgo.ProducerBatchMaxBytes(int32(max(n, 1024))))
	}
	secOpts, err := security.Opts(props)
	if err != nil {
		return err
	}
	o.kgoOpts = append(opts, secOpts...)
	return nil
}

// acksByName are the values of the producer property acks.
var acksByName = map[string]kgo.Acks{"all": kgo.AllISRAcks(), "-1": kgo.AllISRAcks(), "1": kgo.LeaderAck(), "0": kgo.NoAck()}

// codecByName are the values of compression.type ("" is its default, none).
var codecByName = map[string]kgo.CompressionCodec{
	"": kgo.NoCompression(), "none": kgo.NoCompression(), "gzip": kgo.GzipCompression(),
	"snappy": kgo.SnappyCompression(), "lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
}
