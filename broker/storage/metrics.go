package storage

import (
	"errors"
	"math"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	gometrics "github.com/rcrowley/go-metrics"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage/record"
)

// logStats are the metrics all logs of a manager share: Kafka's
// kafka.log:type=LogFlushStats,name=LogFlushRateAndTimeMs (one sample
// per segment fsync, as LogSegment.flush times itself) and the
// all-topics BrokerTopicMetrics meters Kafka's LogValidator and
// Log.analyzeAndValidateRecords mark when they refuse records.
type logStats struct {
	flush                                                        gometrics.Timer
	invalidCRC, invalidMagic, invalidOffsetOrSequence, noKeyComp gometrics.Meter
}

// nopLogStats serves logs opened without a manager's registry.
var nopLogStats = &logStats{flush: gometrics.NilTimer{}, invalidCRC: gometrics.NilMeter{},
	invalidMagic: gometrics.NilMeter{}, invalidOffsetOrSequence: gometrics.NilMeter{}, noKeyComp: gometrics.NilMeter{}}

func newLogStats(r gometrics.Registry) *logStats {
	if r == nil {
		return nopLogStats
	}
	const btm = "kafka.server.BrokerTopicMetrics."
	return &logStats{
		flush:                   gometrics.GetOrRegisterTimer("kafka.log.LogFlushStats.LogFlushRateAndTimeMs", r),
		invalidCRC:              gometrics.GetOrRegisterMeter(btm+"InvalidMessageCrcRecordsPerSec", r),
		invalidMagic:            gometrics.GetOrRegisterMeter(btm+"InvalidMagicNumberRecordsPerSec", r),
		invalidOffsetOrSequence: gometrics.GetOrRegisterMeter(btm+"InvalidOffsetOrSequenceRecordsPerSec", r),
		noKeyComp:               gometrics.GetOrRegisterMeter(btm+"NoKeyCompactedTopicRecordsPerSec", r),
	}
}

// invalid counts a refused append by the kind of its error (once per
// append, as Kafka marks once before throwing).
func (s *logStats) invalid(err error) {
	switch {
	case errors.Is(err, record.ErrInvalidCRC):
		s.invalidCRC.Mark(1)
	case errors.Is(err, record.ErrNoKey):
		s.noKeyComp.Mark(1)
	case errors.Is(err, record.ErrInvalidOffsetOrSequence):
		s.invalidOffsetOrSequence.Mark(1)
	case errors.Is(err, record.ErrInvalidMagic):
		s.invalidMagic.Mark(1)
	}
}

// flushSegment fsyncs s, timing it.
func (l *Log) flushSegment(s *Segment) error {
	start := time.Now()
	err := s.flush()
	l.stats.flush.UpdateSince(start)
	return err
}

// Kafka's per-log gauges (kafka.log:type=Log,name=...,topic=...,partition=...),
// registered while the manager holds the log and read at scrape time.
var logGaugeNames = [...]string{"Size", "NumLogSegments", "LogStartOffset", "LogEndOffset"}

func logGaugeName(name string, tp common.TopicPartition) string {
	return "kafka.log.Log." + name + ".topic=" + tp.Topic + ".partition=" + strconv.Itoa(int(tp.Partition))
}

// registerManagerMetrics registers Kafka's LogManager gauges:
// OfflineLogDirectoryCount and, per directory (logDirectory=<absolute
// path>), LogDirectoryOffline (1 once the directory failed).
func (m *LogManager) registerManagerMetrics() {
	r := m.cfg.Metrics
	if r == nil {
		return
	}
	r.GetOrRegister("kafka.log.LogManager.OfflineLogDirectoryCount", gometrics.NewFunctionalGauge(func() int64 {
		return int64(len(m.OfflineDirs()))
	}))
	for _, d := range m.dirs {
		abs, err := filepath.Abs(d.path)
		if err != nil {
			abs = d.path
		}
		path := d.path
		r.GetOrRegister("kafka.log.LogManager.LogDirectoryOffline.logDirectory="+abs, gometrics.NewFunctionalGauge(func() int64 {
			if m.IsOffline(path) {
				return 1
			}
			return 0
		}))
	}
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

// cleanerMetrics are Kafka's LogCleaner and LogCleanerManager gauges
// (kafka.log:type=LogCleaner / LogCleanerManager), registered when the
// manager runs a cleaner, from the last pass: max-buffer-utilization-percent
// (the offset map's fill), cleaner-recopy-percent (bytes written over bytes
// read), max-clean-time-secs, DeadThreadCount (the one cleaner goroutine
// never dies: 0), max-dirty-percent (the dirtiest cleanable log's ratio at
// the last selection) and time-since-last-run-ms. Written by the cleaner
// goroutine, read at scrape time.
type cleanerMetrics struct {
	lastRun           atomic.Int64  // unix ms of the last selection
	bufferUtilization atomic.Uint64 // float64 bits, 0..1
	bytesRead         atomic.Int64
	bytesWritten      atomic.Int64
	elapsed           atomic.Int64 // ns of the last pass
	dirtyRatio        atomic.Uint64
}

func registerCleanerMetrics(r gometrics.Registry, now func() time.Time) *cleanerMetrics {
	m := &cleanerMetrics{}
	m.lastRun.Store(now().UnixMilli())
	if r == nil {
		return m
	}
	f := func(name string, v func() float64) {
		r.GetOrRegister(name, gometrics.NewFunctionalGaugeFloat64(v))
	}
	i := func(name string, v func() int64) { r.GetOrRegister(name, gometrics.NewFunctionalGauge(v)) }
	const lc, lcm = "kafka.log.LogCleaner.", "kafka.log.LogCleanerManager."
	f(lc+"max-buffer-utilization-percent", func() float64 { return 100 * math.Float64frombits(m.bufferUtilization.Load()) })
	i(lc+"cleaner-recopy-percent", func() int64 { return 100 * m.bytesWritten.Load() / max(m.bytesRead.Load(), 1) })
	f(lc+"max-clean-time-secs", func() float64 { return time.Duration(m.elapsed.Load()).Seconds() })
	i(lc+"DeadThreadCount", func() int64 { return 0 })
	i(lcm+"max-dirty-percent", func() int64 { return int64(100 * math.Float64frombits(m.dirtyRatio.Load())) })
	i(lcm+"time-since-last-run-ms", func() int64 { return now().UnixMilli() - m.lastRun.Load() })
	return m
}

// selected records a selection of the filthiest log (ratio 0: none).
func (m *cleanerMetrics) selected(now time.Time, ratio float64) {
	m.lastRun.Store(now.UnixMilli())
	m.dirtyRatio.Store(math.Float64bits(max(ratio, 0)))
}

// cleaned records a finished pass.
func (m *cleanerMetrics) cleaned(st CleanStats, utilization float64, elapsed time.Duration) {
	m.bufferUtilization.Store(math.Float64bits(utilization))
	m.bytesRead.Store(st.BytesRead)
	m.bytesWritten.Store(st.BytesWritten)
	m.elapsed.Store(int64(elapsed))
}
