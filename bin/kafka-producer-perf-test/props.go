package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/bin/internal/clitools"
	"github.com/klassik/klassik/bin/internal/clitools/security"
	"github.com/klassik/klassik/config"
)

// producerSettings are the franz-go options for a KafkaProducer
// configured by props, and what the tool needs to know of them.
type producerSettings struct {
	opts          []kgo.Opt
	clientID      string
	transactional bool
}

// unsupportedProducerKeys are Kafka 2.8 producer properties Klassik's
// tool cannot honour with franz-go; setting one is an error naming it,
// so that a measurement never silently runs with another configuration
// than the one asked for.
var unsupportedProducerKeys = []string{"client.dns.lookup", "interceptor.classes", "max.block.ms",
	"metadata.max.idle.ms", "metric.reporters", "metrics.num.samples", "metrics.recording.level",
	"metrics.sample.window.ms", "partitioner.class", "receive.buffer.bytes", "reconnect.backoff.max.ms",
	"reconnect.backoff.ms", "send.buffer.bytes", "socket.connection.setup.timeout.max.ms"}

// honouredProducerKeys are read by producerOptions (the serializers are
// set by the tool itself, as Kafka's overrides them).
var honouredProducerKeys = []string{"acks", "batch.size", "bootstrap.servers", "buffer.memory", "client.id",
	"compression.type", "connections.max.idle.ms", "delivery.timeout.ms", "enable.idempotence",
	"key.serializer", "linger.ms", "max.in.flight.requests.per.connection", "max.request.size",
	"metadata.max.age.ms", "request.timeout.ms", "retries", "retry.backoff.ms",
	"socket.connection.setup.timeout.ms", "transaction.timeout.ms", "transactional.id", "value.serializer"}

// producerOptions maps the Java producer properties onto franz-go, with
// Kafka 2.8's defaults (acks=1 unless idempotent, linger.ms=0,
// batch.size=16384, max.in.flight.requests.per.connection=5, client.id
// producer-1). Keys that are no producer property are warned about, as
// Kafka's AbstractConfig.logUnused does.
func producerOptions(props map[string]string, topic string, largestPayload int, warn io.Writer) (*producerSettings, error) {
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range props {
			if !yield(k) {
				return
			}
		}
	})
	for _, k := range keys {
		switch {
		case slices.Contains(unsupportedProducerKeys, k):
			return nil, fmt.Errorf("client property %s=%s is not supported by Klassik's kafka-producer-perf-test", k, props[k])
		case slices.Contains(honouredProducerKeys, k), strings.HasPrefix(k, "ssl."), strings.HasPrefix(k, "sasl."),
			strings.HasPrefix(k, "security."):
		default:
			fmt.Fprintf(warn, "WARN The configuration '%s' was supplied but isn't a known config. (org.apache.kafka.clients.producer.ProducerConfig)\n", k)
		}
	}
	servers, ok := props["bootstrap.servers"]
	if !ok || strings.TrimSpace(servers) == "" {
		return nil, &javaException{"org.apache.kafka.common.config.ConfigException", `Missing required configuration "bootstrap.servers" which has no default value.`}
	}
	s := &producerSettings{clientID: props["client.id"]}
	if s.clientID == "" {
		s.clientID = "producer-1"
	}
	opts := []kgo.Opt{kgo.SeedBrokers(config.SplitList(servers)...), kgo.ClientID(s.clientID), kgo.DefaultProduceTopic(topic)}

	txnID := props["transactional.id"]
	s.transactional = txnID != ""
	idempotent, err := clitools.Bool(props, "enable.idempotence", s.transactional)
	if err != nil {
		return nil, err
	}
	if s.transactional && !idempotent {
		return nil, configError("Cannot set a transactional.id without also enabling idempotence.")
	}
	acks, acksSet := props["acks"]
	acks = strings.TrimSpace(acks)
	if !acksSet {
		acks = "1"
		if idempotent {
			acks = "all"
		}
	}
	kacks, ok := map[string]kgo.Acks{"all": kgo.AllISRAcks(), "-1": kgo.AllISRAcks(), "1": kgo.LeaderAck(), "0": kgo.NoAck()}[acks]
	if !ok {
		return nil, configError(fmt.Sprintf("Invalid value %s for configuration acks: String must be one of: all, -1, 0, 1", acks))
	}
	if idempotent && acks != "all" && acks != "-1" {
		return nil, configError("Must set acks to all in order to use the idempotent producer. Otherwise we cannot guarantee idempotence.")
	}
	opts = append(opts, kgo.RequiredAcks(kacks))
	inflight, err := intProp(props, "max.in.flight.requests.per.connection", 5, 1)
	if err != nil {
		return nil, err
	}
	if idempotent {
		if inflight > 5 {
			return nil, configError("Must set max.in.flight.requests.per.connection to at most 5 to use the idempotent producer.")
		}
		if s.transactional {
			opts = append(opts, kgo.TransactionalID(txnID))
		}
	} else {
		opts = append(opts, kgo.DisableIdempotentWrite(), kgo.MaxProduceRequestsInflightPerBroker(inflight))
	}
	codec, ok := map[string]kgo.CompressionCodec{"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(),
		"snappy": kgo.SnappyCompression(), "lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression()}[strings.TrimSpace(orDefault(props, "compression.type", "none"))]
	if !ok {
		return nil, configError(fmt.Sprintf("Invalid value %s for configuration compression.type: String must be one of: none, gzip, snappy, lz4, zstd", props["compression.type"]))
	}
	opts = append(opts, kgo.ProducerBatchCompression(codec))

	// Sizes. A Kafka batch holds up to batch.size bytes but never fewer
	// than one record (a larger record gets a batch of its own), where
	// franz-go's batch limit also caps a record: so the limit is at least
	// the largest payload with its batch and record headers, and at least
	// franz-go's floor of 512 bytes. max.request.size bounds a request
	// as Kafka's does.
	batch, err := intProp(props, "batch.size", 16384, 0)
	if err != nil {
		return nil, err
	}
	maxRequest, err := intProp(props, "max.request.size", 1048576, 1)
	if err != nil {
		return nil, err
	}
	batchLimit := min(max(batch, 512, largestPayload+recordOverhead), maxRequest)
	opts = append(opts, kgo.ProducerBatchMaxBytes(int32(batchLimit)), kgo.BrokerMaxWriteBytes(int32(max(maxRequest, batchLimit))))
	if _, ok := props["buffer.memory"]; ok {
		n, err := intProp(props, "buffer.memory", 33554432, 1)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.MaxBufferedBytes(n))
	}
	for _, d := range []struct {
		key string
		def time.Duration
		opt func(time.Duration) kgo.Opt
	}{
		{"linger.ms", 0, func(d time.Duration) kgo.Opt { return kgo.ProducerLinger(d) }},
		{"request.timeout.ms", 30 * time.Second, func(d time.Duration) kgo.Opt { return kgo.ProduceRequestTimeout(max(d, time.Millisecond)) }},
		{"delivery.timeout.ms", 120 * time.Second, func(d time.Duration) kgo.Opt { return kgo.RecordDeliveryTimeout(d) }},
		{"retry.backoff.ms", 100 * time.Millisecond, func(d time.Duration) kgo.Opt {
			return kgo.RetryBackoffFn(func(int) time.Duration { return d })
		}},
		{"metadata.max.age.ms", 5 * time.Minute, func(d time.Duration) kgo.Opt { return kgo.MetadataMaxAge(max(d, time.Millisecond)) }},
		{"connections.max.idle.ms", 9 * time.Minute, func(d time.Duration) kgo.Opt { return kgo.ConnIdleTimeout(max(d, time.Millisecond)) }},
		{"socket.connection.setup.timeout.ms", 10 * time.Second, func(d time.Duration) kgo.Opt { return kgo.DialTimeout(max(d, time.Millisecond)) }},
		{"transaction.timeout.ms", time.Minute, func(d time.Duration) kgo.Opt { return kgo.TransactionTimeout(d) }},
	} {
		v, err := clitools.Millis(props, d.key, d.def)
		if err != nil {
			return nil, configError(err.Error())
		}
		if _, given := props[d.key]; given || d.key == "linger.ms" {
			opts = append(opts, d.opt(v))
		}
	}
	if _, ok := props["retries"]; ok {
		n, err := intProp(props, "retries", 2147483647, 0)
		if err != nil {
			return nil, err
		}
		if n < 2147483647 {
			opts = append(opts, kgo.RecordRetries(n+1)) // franz-go counts tries
		}
	}
	secOpts, err := security.Opts(props)
	if err != nil {
		return nil, err
	}
	s.opts = append(opts, secOpts...)
	return s, nil
}

// recordOverhead bounds what a record batch of one record adds to its
// payload: the 61-byte batch header and a record's length, attributes,
// deltas, key and header count varints.
const recordOverhead = 61 + 32

func configError(msg string) error {
	return &javaException{"org.apache.kafka.common.config.ConfigException", msg}
}

func orDefault(props map[string]string, key, def string) string {
	if v, ok := props[key]; ok {
		return v
	}
	return def
}

// intProp reads an int property of at least least, or def when absent.
func intProp(props map[string]string, key string, def, least int) (int, error) {
	v, ok := props[key]
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	if err != nil {
		return 0, configError(fmt.Sprintf("Invalid value %s for configuration %s: Not a number of type INT", v, key))
	}
	if int(n) < least {
		return 0, configError(fmt.Sprintf("Invalid value %s for configuration %s: Value must be at least %d", v, key, least))
	}
	return int(n), nil
}
