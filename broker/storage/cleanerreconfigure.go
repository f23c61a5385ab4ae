package storage

// Dynamic log cleaner settings (Kafka's LogCleaner.reconfigure: the
// cleaner is stopped and started again with the new configuration) and
// the cleaner's I/O throttle (Kafka's Throttler, "cleaner-io").

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// CleanerSettings are the log.cleaner.* keys Kafka reconfigures live
// (LogCleaner.ReconfigurableConfigs). Zero values take Kafka's defaults.
type CleanerSettings struct {
	// Threads is log.cleaner.threads. Klassik runs one cleaner goroutine;
	// like each of Kafka's threads, a pass gets DedupeBufferSize/Threads
	// of offset map, so the memory in use is the same as Kafka's.
	Threads int
	// DedupeBufferSize is log.cleaner.dedupe.buffer.size.
	DedupeBufferSize int64
	// IOBufferSize is log.cleaner.io.buffer.size: the initial size of the
	// pass's read buffer (grown to the largest batch as needed).
	IOBufferSize int
	// IOBufferLoadFactor is log.cleaner.io.buffer.load.factor.
	IOBufferLoadFactor float64
	// IOMaxBytesPerSecond is log.cleaner.io.max.bytes.per.second, applied
	// to the bytes the cleaner reads.
	IOMaxBytesPerSecond float64
	// BackoffMs is log.cleaner.backoff.ms.
	BackoffMs int64
}

// cleanerConfig is the cleaner configuration for s.
func (s CleanerSettings) cleanerConfig() CleanerConfig {
	cfg := DefaultCleanerConfig()
	if s.DedupeBufferSize > 0 {
		cfg.DedupeBufferSize = s.DedupeBufferSize
	}
	if s.Threads > 1 {
		cfg.DedupeBufferSize /= int64(s.Threads)
	}
	if s.IOBufferLoadFactor > 0 && s.IOBufferLoadFactor <= 1 {
		cfg.IOBufferLoadFactor = s.IOBufferLoadFactor
	}
	if s.BackoffMs > 0 {
		cfg.BackoffMs = s.BackoffMs
	}
	cfg.IOBufferSize = s.IOBufferSize
	cfg.IOMaxBytesPerSecond = s.IOMaxBytesPerSecond
	return cfg
}

// ReconfigureCleaner restarts the log cleaner with s: a pass in progress
// is interrupted between batches (its partial output is discarded, the
// next pass starts from the checkpoint), and the new cleaner starts at
// once. It does nothing when log.cleaner.enable is off or the manager is
// not running.
func (m *LogManager) ReconfigureCleaner(s CleanerSettings) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cfg.CleanerSettings = s
	m.cfg.CleanerDedupeBufferSize = s.DedupeBufferSize
	if !m.started || m.shutdown || m.cleaner == nil {
		return
	}
	old := m.cleaner
	// Shutdown waits for the goroutine, which never takes m.mu.
	_ = old.Shutdown()
	c := newManagerCleaner(m)
	c.metrics = old.metrics
	m.cleaner = c
	c.Startup()
	m.logger.Info(fmt.Sprintf("log cleaner restarted: threads=%d dedupe.buffer.size=%d io.buffer.size=%d load.factor=%g io.max.bytes.per.second=%g backoff.ms=%d",
		s.Threads, c.cfg.DedupeBufferSize, c.cfg.IOBufferSize, c.cfg.IOBufferLoadFactor, c.cfg.IOMaxBytesPerSecond, c.cfg.BackoffMs))
}

// CleanerConfigInUse is the running cleaner's configuration (tests).
func (m *LogManager) CleanerConfigInUse() (CleanerConfig, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cleaner == nil {
		return CleanerConfig{}, false
	}
	return m.cleaner.cfg, true
}

// ioThrottler is Kafka's Throttler with throttleDown: every 300 ms it
// compares the bytes seen with the desired rate and sleeps long enough to
// bring the rate back to it.
type ioThrottler struct {
	rate  float64 // bytes per second; ≤ 0 or +Inf: no throttle
	check time.Duration
	stop  <-chan struct{}
	now   func() time.Time

	mu          sync.Mutex // guards the following
	periodStart time.Time
	observed    float64
}

func newIOThrottler(rate float64, stop <-chan struct{}, now func() time.Time) *ioThrottler {
	return &ioThrottler{rate: rate, check: 300 * time.Millisecond, stop: stop, now: now, periodStart: now()}
}

func (t *ioThrottler) maybeThrottle(n int) {
	if t == nil || t.rate <= 0 || math.IsInf(t.rate, 1) || t.rate >= math.MaxFloat64 {
		return
	}
	t.mu.Lock()
	t.observed += float64(n)
	now := t.now()
	elapsed := now.Sub(t.periodStart)
	var sleep time.Duration
	if elapsed > t.check && t.observed > 0 {
		if t.observed/elapsed.Seconds() > t.rate {
			sleep = time.Duration(t.observed/t.rate*float64(time.Second)) - elapsed
		}
		t.periodStart, t.observed = now, 0
	}
	t.mu.Unlock()
	if sleep <= 0 {
		return
	}
	timer := time.NewTimer(sleep)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-t.stop:
	}
	t.mu.Lock()
	t.periodStart = t.now()
	t.mu.Unlock()
}
