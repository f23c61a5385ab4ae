package storage

// Loading a partition directory at start-up (Kafka's LogLoader): clean up
// what an interrupted operation left, open the segments, recover what an
// unclean shutdown may have torn, and restore the log's offsets, leader
// epochs and producer state.

import (
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/klassik/klassik/broker/common"
)

// producerIDExpirationMs is producer.id.expiration.ms (Kafka's default).
const producerIDExpirationMs = 86400000

// loadParams is what a LogManager knows about a partition before loading.
type loadParams struct {
	dir            string
	tp             common.TopicPartition
	cfg            LogConfig
	recoveryPoint  int64 // from recovery-point-offset-checkpoint (0 if absent)
	logStartOffset int64 // from log-start-offset-checkpoint (0 if absent)
	highWatermark  int64 // from replication-offset-checkpoint (0 if absent)
	cleanShutdown  bool
	// fresh: dir was just made empty by the caller (a log being
	// created), so the steps that look for files there are skipped:
	// there is nothing to clean up, load or recover.
	fresh bool
	// parentEntry, if set, fsyncs the log directory holding dir, whose
	// entry for dir is not yet known durable (a log just created): the
	// log's first flush of data calls it.
	parentEntry *dirSyncer
	clock       func() time.Time
	logger      *slog.Logger
	stats       *logStats // nil: none
}

// OpenLog opens (creating if needed) a standalone log in dir without a
// LogManager, as an unclean start with recovery point 0: every segment is
// recovered, which may truncate torn data and rewrite indexes. For tests
// and offline tools; never point it at a directory a broker is using.
func OpenLog(dir string, tp common.TopicPartition, cfg LogConfig, clock func() time.Time) (*Log, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return loadLog(loadParams{dir: dir, tp: tp, cfg: cfg, clock: clock})
}

// logLoader carries one partition's load from step to step.
type logLoader struct {
	p      loadParams
	l      *Log
	now    time.Time
	crcBuf []byte

	minCleaned  int64    // smallest base offset of a .cleaned file (-1: none)
	swaps       []string // .swap file names found in step 1
	bases       []int64  // base offsets of the .log files, ascending
	recoverFrom int      // index of the first segment step 4 recovers (len(bases): none)
	tornAt      int      // index of the first segment recovery had to truncate (-1: none)
	rebuildFrom int64    // base of the first segment whose data recovery re-validated (-1: none)
	leo         int64    // log end offset once step 5 has run
	logStart    int64    // log start offset once step 8 has run
}

// loadLog loads the partition directory p.dir into a Log, in Kafka's order:
//
//  1. delete temporary files (.deleted, .cleaned, checkpoint .tmp), and
//     every .swap at or above the smallest .cleaned base (never completed);
//  2. complete the interrupted swaps that remain;
//  3. open the segments, deleting indexes without a .log and recovering a
//     segment whose index is missing or fails its sanity checks;
//  4. after an unclean shutdown, recover every segment from the one holding
//     the recovery point on, and delete all segments after a torn one;
//  5. if the log ends below the checkpointed log start offset, delete every
//     segment; with none left, create an empty one at the log start offset;
//  6. give the active segment's indexes their full size back;
//  7. truncate the leader epoch cache to the log end (from the end) and to
//     the log start (from the start);
//  8. set the log start offset (at least the first segment's base) and the
//     recovery point (the log end after a clean shutdown, else the lower of
//     the checkpointed one and the log end);
//  9. rebuild producer state from the snapshots plus a replay.
//
// Step 8 runs before step 7 so the epoch cache is cut at the final start.
func loadLog(p loadParams) (*Log, error) {
	if p.clock == nil {
		p.clock = time.Now
	}
	if p.logger == nil {
		p.logger = slog.Default()
	}
	if p.stats == nil {
		p.stats = nopLogStats
	}
	if err := p.cfg.validate(); err != nil {
		return nil, err
	}
	l := &Log{dir: p.dir, tp: p.tp, clock: p.clock, cfg: p.cfg, stats: p.stats,
		logger: p.logger.With("topic", p.tp.Topic, "partition", p.tp.Partition)}
	epochFile := filepath.Join(p.dir, leaderEpochCheckpointFile)
	if p.fresh {
		l.epochs = &LeaderEpochCache{path: epochFile, leo: l.logEndOffset.Load}
	} else {
		var err error
		if l.epochs, err = loadLeaderEpochCache(epochFile, l.logEndOffset.Load); err != nil {
			return nil, err
		}
	}
	// New epochs are written by the flusher (see leaderepoch.go); until it
	// starts below, the kick does nothing and recovery's epochs wait.
	l.epochs.kick = l.kickFlusher
	ld := &logLoader{p: p, l: l, now: p.clock(), crcBuf: make([]byte, 64<<10), minCleaned: -1, tornAt: -1, rebuildFrom: -1}
	for _, step := range []func() error{
		ld.removeTemporaryFiles, // 1
		ld.completeSwaps,        // 2
		ld.listSegments,         // 3: which segments exist
		ld.openSegments,         // 3
		ld.recoverTail,          // 4
		ld.checkLogEnd,          // 5
		ld.reactivateActive,     // 6
		ld.setStartAndRecovery,  // 8
		ld.truncateEpochs,       // 7
		ld.rebuildProducerState, // 9
	} {
		if err := step(); err != nil {
			ld.closeSegments()
			return nil, err
		}
	}
	l.setHighWatermarkLocked(p.highWatermark)
	l.lastFlushTime = ld.now
	if p.parentEntry != nil {
		l.parentUnsynced.Store(p.parentEntry)
	}
	l.startFlusher()
	if l.epochs.Unwritten() {
		l.kickFlusher() // epochs the recovery assigned again
	}
	return l, nil
}

func (ld *logLoader) closeSegments() {
	for _, s := range ld.l.segments {
		s.close()
	}
}

// removeSegmentFiles closes s and deletes its files.
func (ld *logLoader) removeSegmentFiles(s *Segment) {
	s.close()
	for _, suf := range []string{logFileSuffix, indexFileSuffix, timeIndexFileSuffix, txnIndexFileSuffix} {
		os.Remove(segmentPath(ld.p.dir, s.baseOffset, suf))
	}
}

// removeTemporaryFiles is step 1; it notes the .swap files for step 2.
func (ld *logLoader) removeTemporaryFiles() error {
	if ld.p.fresh {
		return nil
	}
	entries, err := os.ReadDir(ld.p.dir)
	if err != nil {
		return fmt.Errorf("storage: list %s: %w", ld.p.dir, err)
	}
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(ld.p.dir, name)
		switch {
		case strings.HasSuffix(name, deletedFileSuffix), strings.HasSuffix(name, checkpointTmpSuffix):
			os.Remove(path)
		case strings.HasSuffix(name, cleanedFileSuffix):
			if off, err := offsetFromFileName(name); err == nil && (ld.minCleaned < 0 || off < ld.minCleaned) {
				ld.minCleaned = off
			}
			os.Remove(path)
		case strings.HasSuffix(name, swapFileSuffix):
			ld.swaps = append(ld.swaps, name)
		}
	}
	return nil
}

// completeSwaps is step 2. Only a .log.swap decides; index swaps are
// deleted and the indexes rebuilt by recovery.
func (ld *logLoader) completeSwaps() error {
	dir := ld.p.dir
	for _, name := range ld.swaps {
		off, err := offsetFromFileName(name)
		path := filepath.Join(dir, name)
		if err != nil || (ld.minCleaned >= 0 && off >= ld.minCleaned) {
			os.Remove(path)
			continue
		}
		final := strings.TrimSuffix(name, swapFileSuffix)
		if !strings.HasSuffix(final, logFileSuffix) {
			os.Remove(path)
			continue
		}
		if err := os.Rename(path, filepath.Join(dir, final)); err != nil {
			return fmt.Errorf("storage: complete swap %s: %w", name, err)
		}
		// The swapped-in log replaces its indexes; drop them so they are
		// rebuilt.
		os.Remove(segmentPath(dir, off, indexFileSuffix))
		os.Remove(segmentPath(dir, off, timeIndexFileSuffix))
		// A cleaned segment may have merged several source segments. If
		// the crash came before those were renamed away, they still cover
		// offsets the swapped-in segment now holds: remove every segment
		// whose base lies inside it, so no offset is held twice.
		if err := removeSegmentsCoveredBySwap(dir, off, filepath.Join(dir, final)); err != nil {
			return err
		}
	}
	return nil
}

// listSegments finds the .log files (sorted into ld.bases) and deletes the
// index files that have no .log.
func (ld *logLoader) listSegments() error {
	if ld.p.fresh {
		return nil
	}
	entries, _ := os.ReadDir(ld.p.dir)
	logs := map[int64]bool{}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), logFileSuffix) {
			off, err := offsetFromFileName(e.Name())
			if err != nil {
				return fmt.Errorf("storage: %s: bad segment file name %q", ld.p.dir, e.Name())
			}
			logs[off] = true
		}
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasSuffix(name, indexFileSuffix) || strings.HasSuffix(name, timeIndexFileSuffix) || strings.HasSuffix(name, txnIndexFileSuffix) {
			if off, err := offsetFromFileName(name); err != nil || !logs[off] {
				os.Remove(filepath.Join(ld.p.dir, name))
			}
		}
	}
	ld.bases = make([]int64, 0, len(logs))
	for b := range logs {
		ld.bases = append(ld.bases, b)
	}
	sort.Slice(ld.bases, func(i, j int) bool { return ld.bases[i] < ld.bases[j] })
	return nil
}

// openSegments is step 3: it opens every segment and recovers those whose
// offset index is missing or whose indexes fail the sanity checks. The
// segments step 4 recovers anyway (unclean shutdown, from the recovery
// point's segment on) skip the check.
func (ld *logLoader) openSegments() error {
	p, l, bases := ld.p, ld.l, ld.bases
	ld.recoverFrom = len(bases)
	if !p.cleanShutdown {
		// The floor segment of the recovery point.
		ld.recoverFrom = max(sort.Search(len(bases), func(i int) bool { return bases[i] > p.recoveryPoint })-1, 0)
	}
	for i, b := range bases {
		_, statErr := os.Stat(segmentPath(p.dir, b, indexFileSuffix))
		missingIndex := os.IsNotExist(statErr)
		// After a clean shutdown every file is durable as found (that
		// shutdown fsync'd it before writing its marker); recovery and
		// index rebuilds mark what they change.
		s, err := openSegment(p.dir, b, &l.cfg, ld.now, 0, false, p.cleanShutdown)
		if err != nil {
			return err
		}
		l.segments = append(l.segments, s)
		if i >= ld.recoverFrom {
			continue
		}
		bad := missingIndex && s.size > 0
		if !bad {
			next := int64(math.MaxInt64)
			if i+1 < len(bases) {
				next = bases[i+1]
			}
			if e1, e2 := s.offsetIdx.sanityCheck(s.size), s.timeIdx.sanityCheck(next); e1 != nil || e2 != nil {
				l.logger.Warn("rebuilding corrupt index", "segment", b, "offset_index_err", e1, "time_index_err", e2)
				bad = true
			}
		}
		if bad {
			truncated, err := recoverSegment(s, nil, ld.crcBuf)
			if err != nil {
				return err
			}
			s.loadTimestamps()
			if truncated > 0 && ld.tornAt < 0 {
				ld.tornAt = i
			}
		}
	}
	return nil
}

// recoverTail is step 4: after an unclean shutdown it recovers the
// unflushed tail, stopping at the first torn segment, and deletes every
// segment after a torn one, since nothing after a gap can be trusted to
// follow it.
func (ld *logLoader) recoverTail() error {
	l := ld.l
	if ld.tornAt < 0 {
		if ld.recoverFrom < len(l.segments) {
			l.epochs.dropFromAtLoad(l.segments[ld.recoverFrom].baseOffset)
		}
		for i := ld.recoverFrom; i < len(l.segments); i++ {
			s := l.segments[i]
			// Kafka logs the same per segment; a test counts these lines.
			l.logger.Info("recovering unflushed segment", "segment", s.baseOffset, "recovery_point", ld.p.recoveryPoint)
			l.recoveredAtLoad++
			truncated, err := recoverSegment(s, l.epochs, ld.crcBuf)
			if err != nil {
				return err
			}
			s.loadTimestamps()
			if truncated > 0 {
				ld.tornAt = i
				break
			}
		}
	}
	if ld.recoverFrom < len(l.segments) {
		ld.rebuildFrom = l.segments[ld.recoverFrom].baseOffset
	}
	if ld.tornAt < 0 {
		return nil
	}
	torn := l.segments[ld.tornAt]
	if ld.rebuildFrom < 0 || torn.baseOffset < ld.rebuildFrom {
		ld.rebuildFrom = torn.baseOffset
	}
	l.logger.Warn("truncated torn log tail; deleting later segments", "segment", torn.baseOffset, "later_segments", len(l.segments)-ld.tornAt-1)
	for _, later := range l.segments[ld.tornAt+1:] {
		ld.removeSegmentFiles(later)
	}
	l.segments = l.segments[:ld.tornAt+1]
	return nil
}

// checkLogEnd is step 5: it finds the log end offset, deletes every segment
// if the log ends below the checkpointed log start offset (the segments
// vanished from disk), and creates an empty segment when none is left.
func (ld *logLoader) checkLogEnd() error {
	l := ld.l
	if len(l.segments) > 0 {
		act := l.activeLocked()
		leo, err := act.nextOffset()
		if err != nil {
			// A clean-shutdown segment that does not parse: recover it.
			if _, rerr := recoverSegment(act, l.epochs, ld.crcBuf); rerr != nil {
				return rerr
			}
			act.loadTimestamps()
			if leo, err = act.nextOffset(); err != nil {
				return err
			}
		}
		ld.leo = leo
		if leo < ld.p.logStartOffset {
			for _, s := range l.segments {
				ld.removeSegmentFiles(s)
			}
			l.segments = nil
			if err := l.epochs.Clear(); err != nil {
				return err
			}
		}
	}
	if len(l.segments) == 0 {
		create := createSegment
		if ld.p.fresh {
			create = openNewSegment // no stale files to remove first
		}
		s, err := create(ld.p.dir, ld.p.logStartOffset, &l.cfg, ld.now, 0)
		if err != nil {
			return err
		}
		l.segments = []*Segment{s}
		ld.leo = ld.p.logStartOffset
	}
	return nil
}

// reactivateActive is step 6: the active segment's indexes go back to their
// full size, and the log end offset is published.
func (ld *logLoader) reactivateActive() error {
	l := ld.l
	act := l.activeLocked()
	act.rollJitterMs = l.jitter()
	if err := l.reactivateLocked(act); err != nil {
		return err
	}
	l.logEndOffset.Store(ld.leo)
	return nil
}

// setStartAndRecovery is step 8.
func (ld *logLoader) setStartAndRecovery() error {
	l, p := ld.l, ld.p
	ls := max(p.logStartOffset, l.segments[0].baseOffset)
	ls = min(ls, ld.leo)
	ld.logStart = ls
	l.logStartOffset.Store(ls)
	if p.cleanShutdown {
		// checkLogEnd may have recovered the active segment and assigned
		// epochs: they reach the file before the recovery point covers them.
		if err := l.epochs.Sync(); err != nil {
			return err
		}
		l.recoveryPoint = ld.leo
	} else {
		l.recoveryPoint = min(p.recoveryPoint, ld.leo)
	}
	return nil
}

// truncateEpochs is step 7 (in memory: see truncateAtLoad).
func (ld *logLoader) truncateEpochs() error {
	ld.l.epochs.truncateAtLoad(ld.logStart, ld.leo)
	return nil
}

// rebuildProducerState is step 9: producer state from the snapshots plus a
// replay. Segments whose data was re-validated after a crash get their
// .txnindex rebuilt from the replayed control batches.
func (ld *logLoader) rebuildProducerState() error {
	l := ld.l
	psCfg := ProducerStateConfig{ExpirationMs: producerIDExpirationMs}
	if ld.p.fresh {
		l.producers = newEmptyProducerStateManager(ld.p.dir, psCfg)
	} else {
		var err error
		if l.producers, err = NewProducerStateManager(ld.p.dir, psCfg); err != nil {
			return err
		}
		if err := l.producers.RemoveStraySnapshots(segmentBases(l.segments)); err != nil {
			return err
		}
	}
	txnIndexFrom := int64(-1)
	if ld.rebuildFrom >= 0 {
		txnIndexFrom = ld.rebuildFrom
		for _, s := range l.segments {
			if s.baseOffset >= ld.rebuildFrom {
				if err := os.Remove(segmentPath(ld.p.dir, s.baseOffset, txnIndexFileSuffix)); err != nil && !os.IsNotExist(err) {
					return err
				}
			}
		}
	}
	return l.rebuildProducerStateLocked(ld.now, txnIndexFrom)
}
