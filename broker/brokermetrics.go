package broker

import (
	"bufio"
	"bytes"
	"os"
	"strconv"

	gometrics "github.com/rcrowley/go-metrics"
)

// WithoutRequestMetrics turns off the per-request instrumentation (the
// network's RequestMetrics and the replica manager's BrokerTopicMetrics),
// so a benchmark can measure what it costs. Not a broker config key:
// Kafka has none.
func WithoutRequestMetrics() Option { return func(o *options) { o.withoutRequestMetrics = true } }

// Kafka 2.8's BrokerState values (kafka.server:type=KafkaServer,
// name=BrokerState). Klassik recovers logs inside STARTING; it has no
// separate RECOVERY phase (2).
const (
	brokerNotRunning                int64 = 0
	brokerStarting                  int64 = 1
	brokerRunning                   int64 = 3
	brokerPendingControlledShutdown int64 = 6
	brokerShuttingDown              int64 = 7
)

// registerMetrics registers, in the broker's registry, the metrics of the
// components that do not take the registry in their config: the group
// coordinator's GroupMetadataManager gauges and the transaction
// coordinator's; and the broker's own KafkaServer gauges (BrokerState,
// and the process's disk bytes as Kafka's LinuxIoMetricsCollector reads
// them from /proc/self/io, when that file is readable). The rest register
// themselves (network, replica, controller, storage, ZooKeeper client)
// from their Config.Metrics.
func (b *Broker) registerMetrics() {
	b.groups.RegisterMetrics(b.metrics)
	b.txn.RegisterMetrics(b.metrics)
	const p = "kafka.server.KafkaServer."
	b.metrics.GetOrRegister(p+"BrokerState", gometrics.NewFunctionalGauge(b.state.Load))
	if _, ok := procIO("read_bytes"); ok {
		b.metrics.GetOrRegister(p+"linux-disk-read-bytes", gometrics.NewFunctionalGauge(func() int64 { n, _ := procIO("read_bytes"); return n }))
		b.metrics.GetOrRegister(p+"linux-disk-write-bytes", gometrics.NewFunctionalGauge(func() int64 { n, _ := procIO("write_bytes"); return n }))
	}
}

// procIO reads one field of /proc/self/io (the bytes this process made
// the storage layer read or write).
func procIO(field string) (int64, bool) {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := bytes.Cut(sc.Bytes(), []byte(": "))
		if ok && string(k) == field {
			n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
