// Command kafka-producer-perf-test is Kafka 2.8's
// org.apache.kafka.tools.ProducerPerformance: it sends --num-records
// records of --record-size random capital letters (or payloads picked at
// random from --payload-file) to one topic, as fast as it can or at
// about --throughput records a second, and prints Kafka's lines: a
// progress line every 5 s ("... records sent, ... records/sec (... MB/sec),
// ... ms avg latency, ... ms max latency.") and the summary with the
// 50th, 95th, 99th and 99.9th latency percentiles. --transaction-duration-ms
// wraps the sends in transactions of that age. Run it through
// bin/kafka-producer-perf-test.sh.
//
// Kafka classes and their Go files (apache/kafka 2.8, tools):
//
//	ProducerPerformance (main, argParser)   main.go
//	ProducerPerformance.Stats, PerfCallback stats.go (the figures, the latency sample
//	                                          and the percentiles; Java's String.format
//	                                          through jvm.FormatFixed)
//	ThroughputThrottler                     throttle.go
//	java.util.Random                        random.go (the same payload bytes and
//	                                          payload choices as Kafka's seed 0)
//	ProducerConfig (the KafkaProducer)      props.go (onto franz-go options; a Kafka
//	                                          property franz-go cannot honour is an error)
//	ToolsUtils.printMetrics                 metrics.go (the producer metrics Klassik
//	                                          can count, under Kafka's names)
//
// Goroutines: main sends; franz-go runs the completion callbacks, which
// record into stats under its lock.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
	"github.com/klassik/klassik/bin/kafka-verifiable-producer/verifiable"
)

var parser = &verifiable.Parser{
	Prog:             "producer-performance",
	Description:      "This tool is used to verify the producer performance.",
	Exclusive:        []string{"record-size", "payload-file"},
	GroupDescription: "either --record-size or --payload-file must be specified but not both.",
	Args: []verifiable.Arg{
		{Name: "topic", Metavar: "TOPIC", Required: true, Help: "produce messages to this topic"},
		{Name: "num-records", Kind: verifiable.Long, Metavar: "NUM-RECORDS", Required: true, Help: "number of messages to produce"},
		{Name: "record-size", Kind: verifiable.Integer, Metavar: "RECORD-SIZE", Help: "message size in bytes. Note that you must provide exactly one of --record-size or --payload-file."},
		{Name: "payload-file", Metavar: "PAYLOAD-FILE", Help: "file to read the message payloads from. This works only for UTF-8 encoded text files. Payloads will be read from this file and a payload will be randomly selected when sending messages. Note that you must provide exactly one of --record-size or --payload-file."},
		{Name: "payload-delimiter", Metavar: "PAYLOAD-DELIMITER", Default: `\n`, Help: "provides delimiter to be used when --payload-file is provided. Defaults to new line. Note that this parameter will be ignored if --payload-file is not provided."},
		{Name: "throughput", Kind: verifiable.Integer, Metavar: "THROUGHPUT", Required: true, Help: "throttle maximum message throughput to *approximately* THROUGHPUT messages/sec. Set this to -1 to disable throttling."},
		{Name: "producer-props", Kind: verifiable.List, Metavar: "PROP-NAME=PROP-VALUE", Help: "kafka producer related configuration properties like bootstrap.servers,client.id etc. These configs take precedence over those passed via --producer.config."},
		{Name: "producer.config", Metavar: "CONFIG-FILE", Help: "producer config properties file."},
		{Name: "print-metrics", Kind: verifiable.Flag, Default: "false", Help: "print out metrics at the end of the test."},
		{Name: "transactional-id", Metavar: "TRANSACTIONAL-ID", Default: "performance-producer-default-transactional-id", Help: "The transactionalId to use if transaction-duration-ms is > 0. Useful when testing the performance of concurrent transactions."},
		{Name: "transaction-duration-ms", Kind: verifiable.Long, Metavar: "TRANSACTION-DURATION", Default: "0", Help: "The max age of each transaction. The commitTransaction will be called after this time has elapsed. Transactions are only enabled if this value is positive."},
	},
}

func main() {
	admintool.Main(func(ctx context.Context) int { return run(ctx, os.Args[1:], os.Stdout, os.Stderr) })
}

// nowMs is System.currentTimeMillis.
func nowMs() int64 { return time.Now().UnixMilli() }

// test is one perf test's settings.
type test struct {
	topic          string
	numRecords     int64
	throughput     int64
	payload        []byte   // --record-size
	payloads       [][]byte // --payload-file
	txnDuration    int64    // ms; > 0 enables transactions
	printMetrics   bool
	producer       *producerSettings
	reportInterval int64
}

// run executes the tool and returns its exit status. Like Kafka's, a
// command-line mistake exits 1 after the usage, no arguments print the
// help (status 0) and -h prints it and exits 1 (Kafka's handleError of
// argparse4j's help exception).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stdout, parser.Help())
		return 0
	}
	v, help, err := parser.Parse(args)
	if help {
		fmt.Fprint(stdout, parser.Help())
		return 1
	}
	if err != nil {
		parser.HandleError(stderr, err)
		return 1
	}
	t, err := newTest(v, stdout, stderr)
	if err != nil {
		var ae *verifiable.Error
		if errors.As(err, &ae) {
			parser.HandleError(stderr, err)
		} else {
			fmt.Fprintln(stderr, err)
		}
		return 1
	}
	if err := t.run(ctx, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

func newTest(v verifiable.Values, stdout, stderr io.Writer) (*test, error) {
	t := &test{topic: v.String("topic"), numRecords: v.Int("num-records", 0), throughput: v.Int("throughput", -1),
		txnDuration: v.Int("transaction-duration-ms", 0), printMetrics: v.Has("print-metrics"), reportInterval: 5000}
	if !v.Has("producer-props") && !v.Has("producer.config") {
		return nil, &verifiable.Error{Msg: "Either --producer-props or --producer.config must be specified."}
	}
	largest := 0
	if v.Has("payload-file") {
		var err error
		if t.payloads, err = readPayloads(v.String("payload-file"), v.String("payload-delimiter"), stdout); err != nil {
			return nil, err
		}
		for _, p := range t.payloads {
			largest = max(largest, len(p))
		}
	}
	props := map[string]string{}
	if v.Has("producer.config") {
		file, err := admintool.LoadProperties(v.String("producer.config"))
		if err != nil {
			return nil, &javaException{"java.nio.file.NoSuchFileException", v.String("producer.config")}
		}
		props = file
	}
	for _, p := range v.List("producer-props") {
		// Kafka splits on every '=' and wants exactly two pieces (Java's
		// split drops trailing empty ones, so "k=" has one).
		pieces := strings.Split(p, "=")
		for len(pieces) > 0 && pieces[len(pieces)-1] == "" {
			pieces = pieces[:len(pieces)-1]
		}
		if len(pieces) != 2 {
			return nil, &javaException{"java.lang.IllegalArgumentException", "Invalid property: " + p}
		}
		props[pieces[0]] = pieces[1]
	}
	if t.txnDuration > 0 {
		props["transactional.id"] = v.String("transactional-id")
		if !v.Has("transactional-id") {
			props["transactional.id"] = "performance-producer-default-transactional-id"
		}
	}
	if v.Has("record-size") {
		n := v.Int("record-size", 0)
		if n < 0 {
			return nil, &javaException{"java.lang.NegativeArraySizeException", fmt.Sprint(n)}
		}
		largest = int(n)
	}
	var err error
	if t.producer, err = producerOptions(props, t.topic, largest, stderr); err != nil {
		return nil, err
	}
	if t.producer.transactional && t.txnDuration <= 0 {
		// The KafkaProducer is transactional, but the tool never calls
		// initTransactions: Kafka's first send fails.
		return nil, &javaException{"java.lang.IllegalStateException", "Transactional method invoked on a non-transactional producer."}
	}
	if v.Has("record-size") {
		t.payload = make([]byte, largest)
		r := newJavaRandom(0)
		for i := range t.payload {
			t.payload[i] = byte(r.nextInt(26) + 65)
		}
	}
	return t, nil
}

// readPayloads reads --payload-file and splits it at the delimiter, a
// Java regular expression ("\n", the default, is the newline), dropping
// trailing empty payloads as Java's String.split does.
func readPayloads(path, delimiter string, stdout io.Writer) ([][]byte, error) {
	abs := path
	if !filepath.IsAbs(path) {
		// Path.toAbsolutePath: the working directory in front, not cleaned.
		if wd, err := os.Getwd(); err == nil {
			abs = wd + string(filepath.Separator) + path
		}
	}
	fmt.Fprintf(stdout, "Reading payloads from: %s\n", abs)
	data, err := os.ReadFile(path)
	if err != nil || len(data) == 0 {
		return nil, &javaException{"java.lang.IllegalArgumentException", "File does not exist or empty file provided."}
	}
	if delimiter == `\n` {
		delimiter = "\n"
	}
	re, err := regexp.Compile(delimiter)
	if err != nil {
		return nil, &javaException{"java.util.regex.PatternSyntaxException", err.Error()}
	}
	parts := re.Split(string(data), -1)
	// Java keeps no empty leading piece for a zero-width match at the
	// start, and drops the trailing empty pieces.
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	fmt.Fprintf(stdout, "Number of messages read: %d\n", len(parts))
	out := make([][]byte, len(parts))
	for i, p := range parts {
		out[i] = []byte(p)
	}
	return out, nil
}

// run is ProducerPerformance.main's loop after the parsing.
func (t *test) run(ctx context.Context, stdout, stderr io.Writer) error {
	var m *metrics
	opts := t.producer.opts
	if t.printMetrics {
		m = newMetrics(t.producer.clientID, t.topic)
		opts = append(opts, kgo.WithHooks(m))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return &javaException{"org.apache.kafka.common.KafkaException", "Failed to construct kafka producer: " + err.Error()}
	}
	defer cl.Close()
	txn := t.txnDuration > 0
	st, err := newStats(t.numRecords, t.reportInterval, nowMs, stdout)
	if err != nil {
		return err
	}
	startMs := nowMs()
	th := newThrottler(t.throughput, startMs)
	random := newJavaRandom(0)
	// A send outlives a signal: the flush at the end waits for it, as
	// Kafka's close does.
	sendCtx := context.WithoutCancel(ctx)
	var inTxn int64
	var txnStart int64
	commit := func() error {
		if err := cl.Flush(sendCtx); err != nil {
			return err
		}
		if err := cl.EndTransaction(sendCtx, kgo.TryCommit); err != nil {
			return &javaException{"org.apache.kafka.common.KafkaException", "committing the transaction: " + err.Error()}
		}
		return nil
	}
	for i := int64(0); i < t.numRecords && ctx.Err() == nil; i++ {
		if txn && inTxn == 0 {
			if err := cl.BeginTransaction(); err != nil {
				return &javaException{"org.apache.kafka.common.KafkaException", err.Error()}
			}
			txnStart = nowMs()
		}
		payload := t.payload
		if t.payloads != nil {
			if len(t.payloads) == 0 {
				return &javaException{"java.lang.IllegalArgumentException", "bound must be positive"}
			}
			payload = t.payloads[random.nextInt(int32(len(t.payloads)))]
		}
		sendStart := nowMs()
		iter, size := i, len(payload)
		cl.Produce(sendCtx, &kgo.Record{Topic: t.topic, Value: payload}, func(_ *kgo.Record, err error) {
			now := nowMs()
			st.record(iter, int32(now-sendStart), size, now)
			if err != nil {
				fmt.Fprintln(stderr, sendException(err))
			}
		})
		inTxn++
		if txn && t.txnDuration <= sendStart-txnStart {
			if err := commit(); err != nil {
				return err
			}
			inTxn = 0
		}
		if th.shouldThrottle(i, sendStart) {
			th.throttle(ctx)
		}
	}
	if txn && inTxn != 0 {
		if err := commit(); err != nil {
			return err
		}
	}
	// close() (or flush() with --print-metrics) waits for every send.
	if err := cl.Flush(sendCtx); err != nil {
		return err
	}
	if err := st.printTotal(); err != nil {
		return err
	}
	if m != nil {
		m.print(stdout)
	}
	return nil
}

// sendException is what Kafka's callback prints of a failed send
// (printStackTrace's first line).
func sendException(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return admintool.NewKafkaError(ke.Code, nil).String()
	}
	return "org.apache.kafka.common.errors.TimeoutException: " + err.Error()
}
