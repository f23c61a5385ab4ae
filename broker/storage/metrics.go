package storage

import (
	"strconv"

	gometrics "github.com/rcrowley/go-metrics"

	"github.com/klassik/klassik/broker/common"
)

// Kafka's per-log gauges (kafka.log:type=Log,name=...,topic=...,partition=...),
// registered while the manager holds the log and read at scrape time.
var logGaugeNames = [...]string{"Size", "NumLogSegments", "LogStartOffset", "LogEndOffset"}

func logGaugeName(name string, tp common.TopicPartition) string {
	return "kafka.log.Log." + name + ".topic=" + tp.Topic + ".partition=" + strconv.Itoa(int(tp.Partition))
}

// registerLogMetrics registers l's gauges (no-op without a registry).
func (m *LogManager) registerLogMetrics(tp common.TopicPartition, l *Log) {
	r := m.cfg.Metrics
	if r == nil {
		return
	}
	fs := [...]func() int64{l.Size, func() int64 { return int64(l.NumSegments()) }, l.LogStartOffset, l.LogEndOffset}
	for i, n := range logGaugeNames {
		name := logGaugeName(n, tp)
		r.Unregister(name) // a log re-created after a deletion
		_ = r.Register(name, gometrics.NewFunctionalGauge(fs[i]))
	}
}

// unregisterLogMetrics removes tp's gauges.
func (m *LogManager) unregisterLogMetrics(tp common.TopicPartition) {
	r := m.cfg.Metrics
	if r == nil {
		return
	}
	for _, n := range logGaugeNames {
		r.Unregister(logGaugeName(n, tp))
	}
}
