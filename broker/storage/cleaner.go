package storage

// Log compaction (Kafka's LogCleaner, Cleaner, LogCleanerManager): keep
// at least the latest record of every key of a cleanup.policy=compact log,
// drop older values and, after delete.retention.ms, tombstones, without
// changing any retained offset.
//
// One pass over a log:
//
//  1. Under Log.mu (read) take a snapshot of the segment list (pointers,
//     sizes, timestamps). Everything after that reads segment files with
//     pread and no lock: bytes of an inactive segment below its snapshot
//     size never change.
//  2. Dirty section = [first dirty offset (cleaner-offset-checkpoint),
//     first uncleanable offset) rounded to whole inactive segments.
//  3. Scan the log's batch headers once for transactions (which data
//     batches were aborted) and each producer's last data batch.
//  4. Fill the OffsetMap (MD5(key) -> latest offset) from the dirty
//     section until it holds log.cleaner.io.buffer.load.factor of its
//     slots; endOffset is where mapping stopped.
//  5. Group every segment below endOffset into runs that fit one segment
//     and rewrite each run into "<base>.log.cleaned" (+ indexes).
//  6. Swap under Log.mu (write): only if the source segments are still the
//     same objects with the same sizes (a truncation or retention in
//     between aborts the swap); rename .cleaned -> .swap, the sources to
//     .deleted (removed after file.delete.delay.ms by the Log's pending
//     queue), .swap -> final names, and open the new segment.
//  7. Record endOffset in cleaner-offset-checkpoint of the log's directory.
//
// Transaction markers stay while any batch of their transaction remains
// (even an emptied one); a marker of an empty transaction gets a delete
// horizon and goes after it, like a tombstone.
//
// Simplification against Kafka 3.4, on the safe side (it keeps more data,
// never less): every producer seen in the log counts as active, so the
// batch holding its last data is kept (possibly emptied) regardless of
// producer.id.expiration.ms.

import (
	"errors"
	"log/slog"
	"math"
	"path/filepath"
	"sync"
	"time"
)

// CleanerConfig holds the broker's log.cleaner.* settings.
type CleanerConfig struct {
	// DedupeBufferSize is log.cleaner.dedupe.buffer.size (134217728): the
	// OffsetMap's memory.
	DedupeBufferSize int64
	// IOBufferLoadFactor is log.cleaner.io.buffer.load.factor (0.9): how
	// full the map may get before a pass stops mapping.
	IOBufferLoadFactor float64
	// BackoffMs is log.cleaner.backoff.ms (15000): sleep when no log needs
	// cleaning.
	BackoffMs int64
	// Clock gives the cleaning time (delete horizons, compaction lags).
	Clock func() time.Time
	// Logger receives one line per cleaned log.
	Logger *slog.Logger
	// IOBufferSize (log.cleaner.io.buffer.size) and IOMaxBytesPerSecond
	// (log.cleaner.io.max.bytes.per.second): see CleanerSettings.
	IOBufferSize        int
	IOMaxBytesPerSecond float64
}

// DefaultCleanerConfig returns Kafka's defaults.
func DefaultCleanerConfig() CleanerConfig {
	return CleanerConfig{DedupeBufferSize: 134217728, IOBufferLoadFactor: 0.9, BackoffMs: 15000}
}

// CleanStats summarises one pass over one log.
type CleanStats struct {
	FirstDirtyOffset, EndOffset   int64
	SegmentsRead, SegmentsWritten int
	BytesRead, BytesWritten       int64
	RecordsRead, RecordsRetained  int64
	// Aborted is true when the swap was abandoned because the log changed
	// (truncation, retention, close) while it was being cleaned.
	Aborted bool
}

// ErrCleanerStopped reports a pass interrupted by Shutdown.
var ErrCleanerStopped = errors.New("storage: log cleaner stopped")

// Cleaner compacts the logs of a LogManager with one background goroutine
// (log.cleaner.threads = 1).
type Cleaner struct {
	m      *LogManager
	cfg    CleanerConfig
	logger *slog.Logger

	stop     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup

	// mu guards the following: the offset map (allocated on first use,
	// reused across passes) and the checkpoint file writes. CleanOnce
	// holds it for a whole pass, so passes never overlap.
	mu      sync.Mutex
	offsets *OffsetMap

	metrics  *cleanerMetrics // metrics.go; never nil
	throttle *ioThrottler    // log.cleaner.io.max.bytes.per.second
}

// newManagerCleaner is the cleaner a LogManager runs when
// log.cleaner.enable is set: log.cleaner.dedupe.buffer.size from the
// manager's config, the manager's clock and logger.
func newManagerCleaner(m *LogManager) *Cleaner {
	s := m.cfg.CleanerSettings
	s.DedupeBufferSize = m.cfg.CleanerDedupeBufferSize
	cfg := s.cleanerConfig()
	cfg.Clock = m.clock
	cfg.Logger = m.logger
	c := NewCleaner(m, cfg)
	c.metrics = registerCleanerMetrics(m.cfg.Metrics, m.clock)
	return c
}

// NewCleaner creates a cleaner for m's logs; Startup starts its goroutine.
func NewCleaner(m *LogManager, cfg CleanerConfig) *Cleaner {
	if cfg.DedupeBufferSize <= 0 {
		cfg.DedupeBufferSize = DefaultCleanerConfig().DedupeBufferSize
	}
	if cfg.IOBufferLoadFactor <= 0 || cfg.IOBufferLoadFactor > 1 {
		cfg.IOBufferLoadFactor = 0.9
	}
	if cfg.BackoffMs <= 0 {
		cfg.BackoffMs = 15000
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	c := &Cleaner{m: m, cfg: cfg, logger: logger.With("component", "log-cleaner"), stop: make(chan struct{}),
		metrics: registerCleanerMetrics(nil, cfg.Clock)}
	c.throttle = newIOThrottler(cfg.IOMaxBytesPerSecond, c.stop, time.Now)
	return c
}

// Startup starts the cleaner goroutine (owned by the Cleaner, stopped by
// Shutdown).
func (c *Cleaner) Startup() {
	c.wg.Add(1)
	go c.run()
}

// Shutdown stops the goroutine, interrupting a pass between batches, and
// waits for it.
func (c *Cleaner) Shutdown() error {
	c.stopOnce.Do(func() { close(c.stop) })
	c.wg.Wait()
	return nil
}

func (c *Cleaner) stopped() bool {
	select {
	case <-c.stop:
		return true
	default:
		return false
	}
}

func (c *Cleaner) run() {
	defer c.wg.Done()
	for !c.stopped() {
		cleaned, err := c.CleanOnce()
		if err != nil && !errors.Is(err, ErrCleanerStopped) {
			c.logger.Warn("log cleaning failed", "err", err)
		}
		if cleaned {
			continue
		}
		t := time.NewTimer(time.Duration(c.cfg.BackoffMs) * time.Millisecond)
		select {
		case <-c.stop:
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// cleanerSegment is the snapshot of one segment taken under Log.mu.
type cleanerSegment struct {
	seg            *Segment
	base, next     int64 // next: following base offset, or the log end offset
	size           int64
	largestTs      int64
	firstBatchTs   int64
	offIdxBytes    int
	timeIdxBytes   int
	active         bool
	lastModifiedMs int64
}

type cleanerLogSnapshot struct {
	segs     []cleanerSegment
	cfg      LogConfig
	logStart int64
	logEnd   int64
	hw       int64 // the last stable offset, at most the high watermark
}

func snapshotForCleaning(l *Log) (cleanerLogSnapshot, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return cleanerLogSnapshot{}, false
	}
	s := cleanerLogSnapshot{cfg: l.cfg, logStart: l.logStartOffset.Load(), logEnd: l.logEndOffset.Load(), hw: l.highWatermark.Load()}
	// The cleaner stops at the last stable offset: min(first unstable
	// offset, high watermark).
	if l.producers != nil {
		if fuo, ok := l.producers.FirstUnstableOffset(); ok && fuo < s.hw {
			s.hw = fuo
		}
	}
	for i, seg := range l.segments {
		cs := cleanerSegment{seg: seg, base: seg.baseOffset, size: seg.size, largestTs: seg.LargestTimestamp(),
			firstBatchTs: seg.firstBatchTimestamp, offIdxBytes: seg.offsetIdx.sizeInBytes(),
			timeIdxBytes: seg.timeIdx.sizeInBytes(), active: i == len(l.segments)-1, next: s.logEnd}
		if i+1 < len(l.segments) {
			cs.next = l.segments[i+1].baseOffset
		}
		if fi, err := seg.log.Stat(); err == nil {
			cs.lastModifiedMs = fi.ModTime().UnixMilli()
		}
		s.segs = append(s.segs, cs)
	}
	return s, true
}

// cleanableRange computes the first dirty offset (the checkpointed one,
// reset to the log start if outside the log), the first uncleanable offset
// (the lowest of the last stable offset, the active segment's base and the
// first segment younger than min.compaction.lag.ms, at a segment
// boundary) and whether max.compaction.lag.ms forces a pass.
func cleanableRange(s *cleanerLogSnapshot, checkpointed int64, haveCheckpoint bool, nowMs int64) (firstDirty, uncleanable int64, mustClean bool) {
	firstDirty = s.logStart
	if haveCheckpoint && checkpointed >= s.logStart && checkpointed <= s.logEnd {
		firstDirty = checkpointed
	}
	// s.hw is the last stable offset; the pass also lowers the bound to
	// the first undecided transaction its own scan finds (cleanLogLocked),
	// so open transactions are never compacted.
	uncleanable = min(s.hw, s.segs[len(s.segs)-1].base)
	if lag := s.cfg.MinCompactionLagMs; lag > 0 {
		for _, cs := range s.segs {
			if cs.active || cs.next <= firstDirty {
				continue
			}
			if cs.largestTs > nowMs-lag {
				uncleanable = min(uncleanable, cs.base)
				break
			}
		}
	}
	uncleanable = max(roundDownToSegment(s, uncleanable), firstDirty)
	if maxLag := s.cfg.MaxCompactionLagMs; maxLag > 0 && maxLag < math.MaxInt64 {
		for _, cs := range s.segs {
			if cs.active || cs.next <= firstDirty || cs.next > uncleanable {
				continue
			}
			if cs.firstBatchTs >= 0 && cs.firstBatchTs < nowMs-maxLag {
				mustClean = true
			}
		}
	}
	return firstDirty, uncleanable, mustClean
}

// roundDownToSegment returns the end of the last whole inactive segment
// ending at or below off (or the first base offset).
func roundDownToSegment(s *cleanerLogSnapshot, off int64) int64 {
	bound := s.segs[0].base
	for _, cs := range s.segs {
		if cs.active || cs.next > off {
			break
		}
		bound = cs.next
	}
	return bound
}

// cleanableRatio is cleanableBytes / (cleanBytes + cleanableBytes).
func cleanableRatio(s *cleanerLogSnapshot, firstDirty, uncleanable int64) (ratio float64, cleanable int64) {
	var clean int64
	for _, cs := range s.segs {
		if cs.base < firstDirty {
			clean += cs.size
		}
		if cs.next > firstDirty && cs.base < uncleanable && !cs.active {
			cleanable += cs.size
		}
	}
	if clean+cleanable == 0 {
		return 0, 0
	}
	return float64(cleanable) / float64(clean+cleanable), cleanable
}

// cleanerCheckpointMu serialises every read-modify-write of a
// cleaner-offset-checkpoint file and of Log.cleanerFloor: the cleaner's
// and the truncations' (Log.lowerCleanerCheckpointLocked). It is a leaf
// lock, taken under Log.mu by truncation and alone by the cleaner.
var cleanerCheckpointMu sync.Mutex

// readCleanerCheckpoint returns l's checkpointed clean offset, lowered to
// any truncation since the last read (in case the truncation could not
// rewrite the file), and resets l's truncation floor: a later truncation
// lowers it again for the pass's final write.
func readCleanerCheckpoint(l *Log) (int64, bool, error) {
	cleanerCheckpointMu.Lock()
	defer cleanerCheckpointMu.Unlock()
	cp, err := ReadOffsetCheckpoint(cleanerCheckpointPath(l))
	if err != nil {
		return 0, false, err
	}
	off, ok := cp[l.tp]
	if f := l.cleanerFloor.Load(); ok && f != 0 && f-1 < off {
		off = f - 1
	}
	l.cleanerFloor.Store(0)
	return off, ok, nil
}

func cleanerCheckpointPath(l *Log) string {
	return filepath.Join(filepath.Dir(l.Dir()), cleanerOffsetCheckpointFile)
}

// CleanOnce cleans the compacted log with the highest cleanable ratio above
// its min.cleanable.dirty.ratio (or one that max.compaction.lag.ms forces),
// then applies retention to every compacted log, as a cleaner thread's
// loop iteration does. It reports whether a log was cleaned.
func (c *Cleaner) CleanOnce() (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.cfg.Clock()
	var (
		best                       *Log
		bestRatio                  = -1.0
		bestDirty, bestUncleanable int64
		bestForced                 bool
	)
	logs := c.m.AllLogs()
	for _, l := range logs {
		snap, ok := snapshotForCleaning(l)
		if !ok || !snap.cfg.CleanupPolicyCompact || len(snap.segs) == 0 {
			continue
		}
		// Read per log (not once per directory) so that each log's
		// truncation floor is reset together with the entry it guards.
		off, have, err := readCleanerCheckpoint(l)
		if err != nil {
			return false, err
		}
		dirty, uncleanable, forced := cleanableRange(&snap, off, have, now.UnixMilli())
		ratio, cleanable := cleanableRatio(&snap, dirty, uncleanable)
		if cleanable == 0 {
			continue
		}
		if (ratio > snap.cfg.MinCleanableDirtyRatio || forced) && ratio > bestRatio {
			best, bestRatio, bestDirty, bestUncleanable, bestForced = l, ratio, dirty, uncleanable, forced
		}
	}
	var cleanErr error
	c.metrics.selected(now, bestRatio)
	if best != nil {
		st, err := c.cleanLogLocked(best, bestDirty, bestUncleanable, now)
		cleanErr = err
		if err == nil {
			util := 0.0
			if c.offsets != nil {
				util = c.offsets.Utilization()
			}
			c.metrics.cleaned(st, util, c.cfg.Clock().Sub(now))
			c.logger.Info("cleaned log", "topic", best.tp.Topic, "partition", best.tp.Partition,
				"first_dirty", st.FirstDirtyOffset, "end_offset", st.EndOffset, "ratio", bestRatio, "forced", bestForced,
				"bytes_read", st.BytesRead, "bytes_written", st.BytesWritten, "aborted", st.Aborted)
		}
	}
	// Retention for compacted logs (cleanup.policy=compact,delete and the
	// log start offset) runs after each pass, as Kafka's cleaner thread
	// does.
	for _, l := range logs {
		if l.Config().CleanupPolicyCompact {
			if _, err := l.DeleteOldSegments(); err != nil && !errors.Is(err, ErrLogClosed) && cleanErr == nil {
				cleanErr = err
			}
		}
	}
	return best != nil, cleanErr
}

// CleanLog runs one pass over l now, whatever its dirty ratio (tests and
// tools); l must be a compacted log of the cleaner's LogManager or a
// standalone log whose directory's cleaner-offset-checkpoint may be
// written.
func (c *Cleaner) CleanLog(l *Log) (CleanStats, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.cfg.Clock()
	snap, ok := snapshotForCleaning(l)
	if !ok {
		return CleanStats{}, ErrLogClosed
	}
	off, have, err := readCleanerCheckpoint(l)
	if err != nil {
		return CleanStats{}, err
	}
	dirty, uncleanable, _ := cleanableRange(&snap, off, have, now.UnixMilli())
	return c.cleanLogLocked(l, dirty, uncleanable, now)
}

// offsetMapLocked returns a cleared map able to hold keys distinct keys
// at the load factor, never larger than log.cleaner.dedupe.buffer.size.
// Kafka allocates the whole buffer up front; sizing it to the dirty
// section keeps small brokers (and test clusters running several brokers
// in one process) from holding 128 MiB per cleaner for a few keys. The map
// is kept and reused while it is large enough.
func (c *Cleaner) offsetMapLocked(keys int64) *OffsetMap {
	limit := min(c.cfg.DedupeBufferSize, math.MaxInt32)
	want := min(int64(float64(keys)/c.cfg.IOBufferLoadFactor+1)*offsetMapEntrySize, limit)
	want = max(want, min(64<<10, limit))
	if c.offsets == nil || int64(len(c.offsets.slots)) < want {
		c.offsets = nil // let the old table go before allocating the new one
		c.offsets = NewOffsetMap(int(want))
	}
	c.offsets.Clear()
	return c.offsets
}
