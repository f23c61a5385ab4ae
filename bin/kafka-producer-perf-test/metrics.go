package main

import (
	"io"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/bin/internal/clitools"
)

// metrics counts, through franz-go's hooks, the producer metrics of
// Kafka's KafkaProducer.metrics() that mean the same for franz-go, for
// --print-metrics. Kafka's rates are windowed (two 30 s samples); these
// are over the whole run, which is the same for runs shorter than the
// window. Metrics of the Java client's internals (buffer pool, waiting
// threads, the I/O thread's select loop) have no counterpart and are not
// printed.
type metrics struct {
	clientID, topic string
	start           time.Time

	// mu guards the following.
	mu                            sync.Mutex
	records, errors               int64
	batches                       int64
	batchBytes, batchUncompressed int64
	batchMax                      int64
	requests, produceRequests     int64
	out, in                       int64
	latencySum, latencyMax        time.Duration
	connections                   int64
}

func newMetrics(clientID, topic string) *metrics {
	return &metrics{clientID: clientID, topic: topic, start: time.Now()}
}

var (
	_ kgo.HookProduceBatchWritten     = (*metrics)(nil)
	_ kgo.HookProduceRecordUnbuffered = (*metrics)(nil)
	_ kgo.HookBrokerWrite             = (*metrics)(nil)
	_ kgo.HookBrokerRead              = (*metrics)(nil)
	_ kgo.HookBrokerE2E               = (*metrics)(nil)
	_ kgo.HookBrokerConnect           = (*metrics)(nil)
)

func (m *metrics) OnProduceBatchWritten(_ kgo.BrokerMetadata, _ string, _ int32, b kgo.ProduceBatchMetrics) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.batches++
	m.batchBytes += int64(b.CompressedBytes)
	m.batchUncompressed += int64(b.UncompressedBytes)
	m.batchMax = max(m.batchMax, int64(b.CompressedBytes))
}

func (m *metrics) OnProduceRecordUnbuffered(_ *kgo.Record, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		m.errors++
		return
	}
	m.records++
}

func (m *metrics) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, n int, _, _ time.Duration, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.out += int64(n)
	if err == nil {
		m.requests++
		if key == 0 {
			m.produceRequests++
		}
	}
}

func (m *metrics) OnBrokerRead(_ kgo.BrokerMetadata, _ int16, n int, _, _ time.Duration, _ error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.in += int64(n)
}

func (m *metrics) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e kgo.BrokerE2E) {
	if key != 0 || e.Err() != nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	d := e.DurationE2E()
	m.latencySum += d
	m.latencyMax = max(m.latencyMax, d)
}

func (m *metrics) OnBrokerConnect(_ kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err != nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.connections++
}

// values are the metrics under Kafka's "group:name:{tags}" names.
func (m *metrics) values() map[string]float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	secs := time.Since(m.start).Seconds()
	div := func(a, b float64) float64 {
		if b == 0 {
			return 0 // Kafka's Avg of no samples is NaN; 0 reads better and is what its rates give
		}
		return a / b
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	tags := "{client-id=" + m.clientID + "}"
	topicTags := "{client-id=" + m.clientID + ", topic=" + m.topic + "}"
	v := map[string]float64{}
	set := func(group, tags, name string, x float64) { v[group+":"+name+":"+tags] = x }
	for _, g := range []struct{ group, tags string }{{"producer-metrics", tags}, {"producer-topic-metrics", topicTags}} {
		set(g.group, g.tags, "record-send-total", float64(m.records))
		set(g.group, g.tags, "record-send-rate", div(float64(m.records), secs))
		set(g.group, g.tags, "record-error-total", float64(m.errors))
		set(g.group, g.tags, "record-error-rate", div(float64(m.errors), secs))
		set(g.group, g.tags, "byte-total", float64(m.batchBytes))
		set(g.group, g.tags, "byte-rate", div(float64(m.batchBytes), secs))
		set(g.group, g.tags, "compression-rate", div(float64(m.batchBytes), float64(m.batchUncompressed)))
	}
	delete(v, "producer-metrics:byte-total:"+tags)
	delete(v, "producer-metrics:byte-rate:"+tags)
	delete(v, "producer-metrics:compression-rate:"+tags)
	set("producer-metrics", tags, "batch-size-avg", div(float64(m.batchBytes), float64(m.batches)))
	set("producer-metrics", tags, "batch-size-max", float64(m.batchMax))
	set("producer-metrics", tags, "compression-rate-avg", div(float64(m.batchBytes), float64(m.batchUncompressed)))
	set("producer-metrics", tags, "records-per-request-avg", div(float64(m.records), float64(m.produceRequests)))
	set("producer-metrics", tags, "request-total", float64(m.requests))
	set("producer-metrics", tags, "request-rate", div(float64(m.requests), secs))
	set("producer-metrics", tags, "outgoing-byte-total", float64(m.out))
	set("producer-metrics", tags, "outgoing-byte-rate", div(float64(m.out), secs))
	set("producer-metrics", tags, "incoming-byte-total", float64(m.in))
	set("producer-metrics", tags, "incoming-byte-rate", div(float64(m.in), secs))
	set("producer-metrics", tags, "request-latency-avg", div(ms(m.latencySum), float64(m.produceRequests)))
	set("producer-metrics", tags, "request-latency-max", ms(m.latencyMax))
	set("producer-metrics", tags, "connection-creation-total", float64(m.connections))
	return v
}

// print is ToolsUtils.printMetrics of the values.
func (m *metrics) print(w io.Writer) { clitools.PrintMetrics(w, m.values()) }
