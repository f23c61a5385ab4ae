// Command kafka-verifiable-producer is Kafka 2.8's
// org.apache.kafka.tools.VerifiableProducer: it produces the integers 0,
// 1, 2, ... (optionally "<prefix>.<n>", with repeating keys) to one topic,
// no retries, and prints Kafka's JSON event lines on stdout:
// startup_complete, producer_send_success / producer_send_error per
// record, and at the end (the message limit or a signal) shutdown_complete
// and tool_data with sent, acked, target_throughput and avg_throughput.
// Run it through bin/kafka-verifiable-producer.sh.
//
// Goroutines: main sends; franz-go runs the acknowledgement callbacks,
// which print under the printer's lock.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/bin/internal/clitools/security"
	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
	"github.com/klassik/klassik/bin/kafka-verifiable-producer/verifiable"
	"github.com/klassik/klassik/config"
)

var parser = &verifiable.Parser{
	Prog:        "verifiable-producer",
	Description: "This tool produces increasing integers to the specified topic and prints JSON metadata to stdout on each \"send\" request, making externally visible which messages have been acked and which have not.",
	Exclusive:   []string{"bootstrap-server", "broker-list"},
	Args: []verifiable.Arg{
		{Name: "topic", Metavar: "TOPIC", Required: true, Help: "Produce messages to this topic."},
		{Name: "bootstrap-server", Metavar: "HOST1:PORT1[,HOST2:PORT2[...]]", Help: "REQUIRED: The server(s) to connect to. Comma-separated list of Kafka brokers in the form HOST1:PORT1,HOST2:PORT2,..."},
		{Name: "broker-list", Metavar: "HOST1:PORT1[,HOST2:PORT2[...]]", Help: "DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is specified.  Comma-separated list of Kafka brokers in the form HOST1:PORT1,HOST2:PORT2,..."},
		{Name: "max-messages", Kind: verifiable.Integer, Metavar: "MAX-MESSAGES", Default: "-1", Help: "Produce this many messages. If -1, produce messages until the process is killed externally."},
		{Name: "throughput", Kind: verifiable.Integer, Metavar: "THROUGHPUT", Default: "-1", Help: "If set >= 0, throttle maximum message throughput to *approximately* THROUGHPUT messages/sec."},
		{Name: "acks", Kind: verifiable.Integer, Metavar: "ACKS", Default: "-1", Choices: []string{"0", "1", "-1"}, Help: "Acks required on each produced message. See Kafka docs on acks for details."},
		{Name: "producer.config", Metavar: "CONFIG_FILE", Help: "Producer config properties file."},
		{Name: "message-create-time", Kind: verifiable.Long, Metavar: "CREATETIME", Default: "-1", Help: "Send messages with creation time starting at the arguments value, in milliseconds since epoch"},
		{Name: "value-prefix", Kind: verifiable.Integer, Metavar: "VALUE-PREFIX", Help: "If specified, each produced value will have this prefix with a dot separator"},
		{Name: "repeating-keys", Kind: verifiable.Integer, Metavar: "REPEATING-KEYS", Help: "If specified, each produced record will have a key starting at 0 increment by 1 up to the number specified (exclusive), then the key is set to 0 again"},
	},
}

func main() {
	admintool.Main(func(ctx context.Context) int { return run(ctx, os.Args[1:], os.Stdout, os.Stderr) })
}

// producer is a VerifiableProducer.
type producer struct {
	cl            *kgo.Client
	out           *verifiable.Printer
	topic         string
	throughput    int64
	maxMessages   int64
	valuePrefix   *int64
	createTime    *int64
	repeatingKeys int64 // 0 = no keys
	noAck         bool  // acks=0: no offsets come back
	keyCounter    int64
	start         time.Time
	sent          int64
	acked         atomic.Int64
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stdout, parser.Help())
		return 0
	}
	v, help, err := parser.Parse(args)
	if help {
		fmt.Fprint(stdout, parser.Help())
		return 0
	}
	if err != nil {
		parser.HandleError(stderr, err)
		return 1
	}
	p, err := newProducer(v, stdout)
	if err != nil {
		var ae *verifiable.Error
		if errors.As(err, &ae) {
			parser.HandleError(stderr, err)
		} else {
			fmt.Fprintf(stderr, "Exception in thread \"main\" org.apache.kafka.common.KafkaException: Failed to construct kafka producer\nCaused by: %v\n", err)
		}
		return 1
	}
	startMs := time.Now()
	p.run(ctx)
	// The shutdown hook: flush and close, then the summary.
	p.close()
	elapsed := time.Since(startMs).Milliseconds()
	avg := 1000 * (float64(p.acked.Load()) / float64(elapsed))
	p.out.Event("tool_data", verifiable.Field{Key: "sent", Value: p.sent}, verifiable.Field{Key: "acked", Value: p.acked.Load()},
		verifiable.Field{Key: "target_throughput", Value: p.throughput}, verifiable.Field{Key: "avg_throughput", Value: avg})
	return 0
}

func newProducer(v verifiable.Values, stdout io.Writer) (*producer, error) {
	p := &producer{out: verifiable.NewPrinter(stdout), topic: v.String("topic"), throughput: v.Int("throughput", -1),
		maxMessages: v.Int("max-messages", -1), repeatingKeys: v.Int("repeating-keys", 0), start: time.Now()}
	if v.Has("value-prefix") {
		n := v.Int("value-prefix", 0)
		p.valuePrefix = &n
	}
	if ct := v.Int("message-create-time", -1); ct != -1 {
		p.createTime = &ct
	}
	bootstrap := v.String("broker-list")
	if v.Has("bootstrap-server") {
		bootstrap = v.String("bootstrap-server")
	}
	props := map[string]string{"acks": strconv.FormatInt(v.Int("acks", -1), 10)}
	if v.Has("producer.config") {
		file, err := admintool.LoadProperties(v.String("producer.config"))
		if err != nil {
			return nil, &verifiable.Error{Msg: err.Error()}
		}
		for k, val := range file {
			props[k] = val
		}
	}
	opts := []kgo.Opt{kgo.SeedBrokers(config.SplitList(bootstrap)...), kgo.DefaultProduceTopic(p.topic),
		kgo.DisableIdempotentWrite(), kgo.RecordRetries(1),
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)), kgo.ProducerLinger(0)}
	if id := props["client.id"]; id != "" {
		opts = append(opts, kgo.ClientID(id))
	}
	switch strings.TrimSpace(props["acks"]) {
	case "0":
		opts = append(opts, kgo.RequiredAcks(kgo.NoAck()))
		p.noAck = true
	case "1":
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()))
	case "-1", "all":
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	default:
		return nil, fmt.Errorf("org.apache.kafka.common.config.ConfigException: Invalid value %s for configuration acks: String must be one of: all, -1, 0, 1", props["acks"])
	}
	secOpts, err := security.Opts(props)
	if err != nil {
		return nil, err
	}
	if p.cl, err = kgo.NewClient(append(opts, secOpts...)...); err != nil {
		return nil, err
	}
	return p, nil
}

// value is "<prefix>.<n>" or "<n>".
func (p *producer) value(n int64) string {
	if p.valuePrefix != nil {
		return fmt.Sprintf("%d.%d", *p.valuePrefix, n)
	}
	return strconv.FormatInt(n, 10)
}

// key counts 0 .. repeating-keys-1 over and over; nil without
// --repeating-keys.
func (p *producer) key() *string {
	if p.repeatingKeys == 0 {
		return nil
	}
	k := strconv.FormatInt(p.keyCounter, 10)
	p.keyCounter++
	if p.keyCounter == p.repeatingKeys {
		p.keyCounter = 0
	}
	return &k
}

// run sends until the limit or ctx ends, throttled as Kafka's
// ThroughputThrottler throttles.
func (p *producer) run(ctx context.Context) {
	p.out.Event("startup_complete")
	start := time.Now()
	for i := int64(0); p.maxMessages < 0 || i < p.maxMessages; i++ {
		if ctx.Err() != nil {
			return
		}
		sendStart := time.Now()
		p.send(ctx, p.key(), p.value(i))
		if p.throughput >= 0 {
			elapsed := sendStart.Sub(start).Milliseconds()
			if elapsed > 0 && float64(i)/(float64(elapsed)/1000) > float64(p.throughput) {
				wait := time.Duration(1<<62 - 1)
				if p.throughput > 0 {
					wait = time.Second / time.Duration(p.throughput)
				}
				t := time.NewTimer(wait)
				select {
				case <-ctx.Done():
				case <-t.C:
				}
				t.Stop()
			}
		}
	}
}

func (p *producer) send(ctx context.Context, key *string, value string) {
	r := &kgo.Record{Topic: p.topic, Value: []byte(value)}
	if key != nil {
		r.Key = []byte(*key)
	}
	if p.createTime != nil {
		r.Timestamp = time.UnixMilli(*p.createTime)
		*p.createTime += time.Since(p.start).Milliseconds()
	}
	p.sent++
	// The send outlives a signal: close flushes it, as Kafka's does.
	p.cl.Produce(context.WithoutCancel(ctx), r, func(r *kgo.Record, err error) {
		if err != nil {
			class, msg := javaException(err)
			p.out.Event("producer_send_error", verifiable.Field{Key: "topic", Value: p.topic}, verifiable.Field{Key: "key", Value: key},
				verifiable.Field{Key: "value", Value: value}, verifiable.Field{Key: "exception", Value: "class " + class},
				verifiable.Field{Key: "message", Value: msg})
			return
		}
		p.acked.Add(1)
		offset := r.Offset
		if p.noAck {
			offset = -1
		}
		p.out.Event("producer_send_success", verifiable.Field{Key: "key", Value: key}, verifiable.Field{Key: "value", Value: value},
			verifiable.Field{Key: "topic", Value: r.Topic}, verifiable.Field{Key: "partition", Value: r.Partition},
			verifiable.Field{Key: "offset", Value: offset})
	})
}

// javaException is the class and message of the exception the Java
// producer hands its callback.
func javaException(err error) (class, msg string) {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		k := admintool.NewKafkaError(ke.Code, nil)
		return "org.apache.kafka.common.errors." + k.Class, k.Message
	}
	return "org.apache.kafka.common.errors.TimeoutException", err.Error()
}

// close is VerifiableProducer.close: every pending send completes, then
// shutdown_complete.
func (p *producer) close() {
	_ = p.cl.Flush(context.Background())
	p.cl.Close()
	p.out.Event("shutdown_complete")
}
