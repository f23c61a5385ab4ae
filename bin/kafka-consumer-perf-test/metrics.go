package main

import (
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// fetchMetrics counts, through franz-go's hooks, the consumer metrics of
// Kafka's KafkaConsumer.metrics() that mean the same for franz-go, for
// --print-metrics (rates over the whole run, where Kafka's are windowed).
type fetchMetrics struct {
	clientID, topic string
	start           time.Time

	// mu guards the following.
	mu                sync.Mutex
	records, bytes    int64
	fetches           int64
	fetchLatency      time.Duration
	fetchLatencyMax   time.Duration
	requests, out, in int64
}

func newFetchMetrics(clientID, topic string) *fetchMetrics {
	return &fetchMetrics{clientID: clientID, topic: topic, start: time.Now()}
}

var (
	_ kgo.HookFetchBatchRead = (*fetchMetrics)(nil)
	_ kgo.HookBrokerE2E      = (*fetchMetrics)(nil)
)

func (m *fetchMetrics) OnFetchBatchRead(_ kgo.BrokerMetadata, _ string, _ int32, b kgo.FetchBatchMetrics) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.records += int64(b.NumRecords)
	m.bytes += int64(b.UncompressedBytes)
}

func (m *fetchMetrics) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e kgo.BrokerE2E) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests++
	m.out += int64(e.BytesWritten)
	m.in += int64(e.BytesRead)
	if key == 1 && e.Err() == nil {
		m.fetches++
		d := e.DurationE2E()
		m.fetchLatency += d
		m.fetchLatencyMax = max(m.fetchLatencyMax, d)
	}
}

// values are the metrics under Kafka's "group:name:{tags}" names.
func (m *fetchMetrics) values() map[string]float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	secs := time.Since(m.start).Seconds()
	div := func(a, b float64) float64 {
		if b == 0 {
			return 0
		}
		return a / b
	}
	tags := "{client-id=" + m.clientID + "}"
	topicTags := "{client-id=" + m.clientID + ", topic=" + m.topic + "}"
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	const fm = "consumer-fetch-manager-metrics:"
	return map[string]float64{
		fm + "records-consumed-total:" + tags:          float64(m.records),
		fm + "records-consumed-rate:" + tags:           div(float64(m.records), secs),
		fm + "bytes-consumed-total:" + tags:            float64(m.bytes),
		fm + "bytes-consumed-rate:" + tags:             div(float64(m.bytes), secs),
		fm + "records-consumed-total:" + topicTags:     float64(m.records),
		fm + "bytes-consumed-total:" + topicTags:       float64(m.bytes),
		fm + "fetch-total:" + tags:                     float64(m.fetches),
		fm + "fetch-rate:" + tags:                      div(float64(m.fetches), secs),
		fm + "fetch-latency-avg:" + tags:               div(ms(m.fetchLatency), float64(m.fetches)),
		fm + "fetch-latency-max:" + tags:               ms(m.fetchLatencyMax),
		fm + "records-per-request-avg:" + tags:         div(float64(m.records), float64(m.fetches)),
		"consumer-metrics:request-total:" + tags:       float64(m.requests),
		"consumer-metrics:outgoing-byte-total:" + tags: float64(m.out),
		"consumer-metrics:incoming-byte-total:" + tags: float64(m.in),
	}
}
