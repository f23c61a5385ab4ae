package txn

import (
	"sync/atomic"

	gometrics "github.com/rcrowley/go-metrics"
)

// metrics holds the values behind Kafka's transaction coordinator
// metrics; they are maintained whether or not RegisterMetrics is called.
type metrics struct {
	// unknownDestination: partitions whose markers wait for a leader
	// (Kafka's UnknownDestinationQueueSize).
	unknownDestination atomic.Int64
	// logAppendRetries: completed transactions whose CompleteCommit/Abort
	// write waits to be retried (Kafka's LogAppendRetryQueueSize).
	logAppendRetries atomic.Int64
	// loadTime records each partition load in milliseconds (Kafka's
	// partition-load-time-max and -avg).
	loadTime gometrics.Histogram
}

func newMetrics() *metrics {
	return &metrics{loadTime: gometrics.NewHistogram(gometrics.NewExpDecaySample(1028, 0.015))}
}

// RegisterMetrics registers Kafka's transaction coordinator metrics in r:
// kafka.coordinator.transaction.TransactionMarkerChannelManager
// .UnknownDestinationQueueSize and .LogAppendRetryQueueSize (gauges) and
// transaction-coordinator-metrics.partition-load-time (a histogram in
// milliseconds: its max and mean are Kafka's partition-load-time-max
// and -avg).
func (c *Coordinator) RegisterMetrics(r gometrics.Registry) {
	if r == nil {
		return
	}
	prefix := "kafka.coordinator.transaction.TransactionMarkerChannelManager."
	_ = r.Register(prefix+"UnknownDestinationQueueSize", gometrics.NewFunctionalGauge(c.metrics.unknownDestination.Load))
	_ = r.Register(prefix+"LogAppendRetryQueueSize", gometrics.NewFunctionalGauge(c.metrics.logAppendRetries.Load))
	_ = r.Register("transaction-coordinator-metrics.partition-load-time", c.metrics.loadTime)
}
