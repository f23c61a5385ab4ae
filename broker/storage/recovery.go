package storage

// Loading a partition directory and crash recovery (Kafka's LogLoader and
// LogSegment.recover, log-format.md §9).

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage/record"
)

// recoverSegment rebuilds the indexes of s from its .log, validating every
// batch (structure, CRC, offsets), and truncates the file at the first
// invalid byte. It returns the number of bytes truncated. epochs, if not
// nil, is updated from the batches' leader epochs.
func recoverSegment(s *Segment, epochs *LeaderEpochCache, crcBuf []byte) (int64, error) {
	if err := s.offsetIdx.reset(); err != nil {
		return 0, err
	}
	if err := s.timeIdx.reset(); err != nil {
		return 0, err
	}
	fi, err := s.log.Stat()
	if err != nil {
		return 0, err
	}
	fileSize := fi.Size()
	s.size = fileSize
	s.maxTimestampSoFar, s.offsetOfMaxTimestampSoFar = -1, s.baseOffset
	s.bytesSinceLastIndexEntry = 0
	s.firstBatchTimestamp = -1

	var pos int64
	prevNext := s.baseOffset
	for pos < fileSize {
		h, err := s.readHeader(pos)
		if err != nil {
			break // torn or garbage header
		}
		end := pos + int64(h.Size())
		if end > fileSize || h.BaseOffset < prevNext || h.LastOffsetDelta < 0 ||
			h.LastOffset()-s.baseOffset > maxRelativeOffset {
			break
		}
		ok, err := checkCRCAt(s.log, pos, h, crcBuf)
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		if h.MaxTimestamp > s.maxTimestampSoFar {
			s.maxTimestampSoFar, s.offsetOfMaxTimestampSoFar = h.MaxTimestamp, h.LastOffset()
		}
		if pos == 0 {
			s.firstBatchTimestamp = h.MaxTimestamp
		}
		if s.bytesSinceLastIndexEntry > int64(s.indexIntervalBytes) {
			if err := s.offsetIdx.Append(h.LastOffset(), int32(pos)); err != nil {
				return 0, err
			}
			if err := s.timeIdx.MaybeAppend(s.maxTimestampSoFar, s.offsetOfMaxTimestampSoFar, false); err != nil {
				return 0, err
			}
			s.bytesSinceLastIndexEntry = 0
		}
		s.bytesSinceLastIndexEntry += int64(h.Size())
		if epochs != nil && h.PartitionLeaderEpoch >= 0 && h.PartitionLeaderEpoch > epochs.LatestEpoch() {
			if err := epochs.Assign(h.PartitionLeaderEpoch, h.BaseOffset); err != nil {
				return 0, err
			}
		}
		prevNext = h.NextOffset()
		pos = end
	}
	truncated := fileSize - pos
	if truncated > 0 {
		if err := s.log.Truncate(pos); err != nil {
			return 0, fmt.Errorf("storage: truncate torn tail of segment %d: %w", s.baseOffset, err)
		}
	}
	s.size = pos
	if err := s.truncateTxnIndex(prevNext); err != nil {
		return 0, err
	}
	if err := s.timeIdx.MaybeAppend(s.maxTimestampSoFar, s.offsetOfMaxTimestampSoFar, true); err != nil {
		return 0, err
	}
	if err := s.offsetIdx.trim(); err != nil {
		return 0, err
	}
	if err := s.timeIdx.trim(); err != nil {
		return 0, err
	}
	return truncated, nil
}

// checkCRCAt streams the batch at pos through CRC-32C with a bounded
// buffer, so recovery memory does not grow with batch size.
func checkCRCAt(f *os.File, pos int64, h batchHeader, buf []byte) (bool, error) {
	r := io.NewSectionReader(f, pos+offAttributes, int64(h.Size())-offAttributes)
	var crc uint32
	for {
		n, err := r.Read(buf)
		crc = crc32.Update(crc, castagnoli, buf[:n])
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return false, fmt.Errorf("storage: read segment: %w", err)
		}
	}
	return crc == h.CRC, nil
}

// producerIDExpirationMs is producer.id.expiration.ms (Kafka's default).
const producerIDExpirationMs = 86400000

func segmentBases(segs []*Segment) []int64 {
	out := make([]int64, len(segs))
	for i, s := range segs {
		out[i] = s.baseOffset
	}
	return out
}

// loadParams is what a LogManager knows about a partition before loading.
type loadParams struct {
	dir            string
	tp             common.TopicPartition
	cfg            LogConfig
	recoveryPoint  int64 // from recovery-point-offset-checkpoint (0 if absent)
	logStartOffset int64 // from log-start-offset-checkpoint (0 if absent)
	highWatermark  int64 // from replication-offset-checkpoint (0 if absent)
	cleanShutdown  bool
	clock          func() time.Time
	logger         *slog.Logger
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

// loadLog implements §9.2.
func loadLog(p loadParams) (*Log, error) {
	if p.clock == nil {
		p.clock = time.Now
	}
	if p.logger == nil {
		p.logger = slog.Default()
	}
	if err := p.cfg.validate(); err != nil {
		return nil, err
	}
	now := p.clock()
	l := &Log{dir: p.dir, tp: p.tp, clock: p.clock, cfg: p.cfg,
		logger: p.logger.With("topic", p.tp.Topic, "partition", p.tp.Partition)}
	var err error
	l.epochs, err = loadLeaderEpochCache(filepath.Join(p.dir, leaderEpochCheckpointFile), l.logEndOffset.Load)
	if err != nil {
		return nil, err
	}

	entries, err := os.ReadDir(p.dir)
	if err != nil {
		return nil, fmt.Errorf("storage: list %s: %w", p.dir, err)
	}
	// Step 1: temporary files.
	logs := map[int64]bool{}
	var swaps []string
	minCleaned := int64(-1)
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(p.dir, name)
		switch {
		case strings.HasSuffix(name, deletedFileSuffix), strings.HasSuffix(name, checkpointTmpSuffix):
			os.Remove(path)
		case strings.HasSuffix(name, cleanedFileSuffix):
			if off, err := offsetFromFileName(name); err == nil && (minCleaned < 0 || off < minCleaned) {
				minCleaned = off
			}
			os.Remove(path)
		case strings.HasSuffix(name, swapFileSuffix):
			swaps = append(swaps, name)
		}
	}
	// Step 2: complete interrupted swaps (only .log.swap decides; index swaps
	// are rebuilt by recovery).
	for _, name := range swaps {
		off, err := offsetFromFileName(name)
		path := filepath.Join(p.dir, name)
		if err != nil || (minCleaned >= 0 && off >= minCleaned) {
			os.Remove(path)
			continue
		}
		final := strings.TrimSuffix(name, swapFileSuffix)
		if strings.HasSuffix(final, logFileSuffix) {
			if err := os.Rename(path, filepath.Join(p.dir, final)); err != nil {
				return nil, fmt.Errorf("storage: complete swap %s: %w", name, err)
			}
			// The swapped-in log replaces its indexes; drop them so they are
			// rebuilt.
			os.Remove(segmentPath(p.dir, off, indexFileSuffix))
			os.Remove(segmentPath(p.dir, off, timeIndexFileSuffix))
			// A cleaned segment may have merged several source segments. If
			// the crash came before those were renamed away, they still
			// cover offsets the swapped-in segment now holds: remove every
			// segment whose base lies inside it, so no offset is held twice.
			if err := removeSegmentsCoveredBySwap(p.dir, off, filepath.Join(p.dir, final)); err != nil {
				return nil, err
			}
		} else {
			os.Remove(path)
		}
	}
	entries, _ = os.ReadDir(p.dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), logFileSuffix) {
			off, err := offsetFromFileName(e.Name())
			if err != nil {
				return nil, fmt.Errorf("storage: %s: bad segment file name %q", p.dir, e.Name())
			}
			logs[off] = true
		}
	}
	// Orphan indexes.
	for _, e := range entries {
		name := e.Name()
		if strings.HasSuffix(name, indexFileSuffix) || strings.HasSuffix(name, timeIndexFileSuffix) || strings.HasSuffix(name, txnIndexFileSuffix) {
			if off, err := offsetFromFileName(name); err != nil || !logs[off] {
				os.Remove(filepath.Join(p.dir, name))
			}
		}
	}
	bases := make([]int64, 0, len(logs))
	for b := range logs {
		bases = append(bases, b)
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })

	crcBuf := make([]byte, 64<<10)
	closeAll := func() {
		for _, s := range l.segments {
			s.close()
		}
	}
	// Step 3: open segments; recover those whose indexes are missing or
	// fail the sanity checks. Segments step 4 recovers anyway (unclean
	// shutdown, at or above the recovery point's segment) skip the check.
	recoverFrom := len(bases)
	if !p.cleanShutdown {
		recoverFrom = sort.Search(len(bases), func(i int) bool { return bases[i] > p.recoveryPoint }) - 1
		if recoverFrom < 0 {
			recoverFrom = 0
		}
	}
	tornAt := -1 // index of the first segment recovery had to truncate
	for i, b := range bases {
		_, statErr := os.Stat(segmentPath(p.dir, b, indexFileSuffix))
		missingIndex := os.IsNotExist(statErr)
		s, err := openSegment(p.dir, b, &l.cfg, now, 0, false)
		if err != nil {
			closeAll()
			return nil, err
		}
		l.segments = append(l.segments, s)
		if i >= recoverFrom {
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
			truncated, err := recoverSegment(s, nil, crcBuf)
			if err != nil {
				closeAll()
				return nil, err
			}
			s.loadTimestamps()
			if truncated > 0 && tornAt < 0 {
				tornAt = i
			}
		}
	}
	// Step 4: recover the unflushed tail after an unclean shutdown.
	if tornAt < 0 {
		for i := recoverFrom; i < len(l.segments); i++ {
			s := l.segments[i]
			truncated, err := recoverSegment(s, l.epochs, crcBuf)
			if err != nil {
				closeAll()
				return nil, err
			}
			s.loadTimestamps()
			if truncated > 0 {
				tornAt = i
				break
			}
		}
	}
	rebuildFrom := int64(-1) // base of the first segment whose data recovery re-validated
	if recoverFrom < len(l.segments) {
		rebuildFrom = l.segments[recoverFrom].baseOffset
	}
	if tornAt >= 0 && (rebuildFrom < 0 || l.segments[tornAt].baseOffset < rebuildFrom) {
		rebuildFrom = l.segments[tornAt].baseOffset
	}
	if tornAt >= 0 {
		// Nothing after a torn segment can be trusted to follow it.
		s := l.segments[tornAt]
		l.logger.Warn("truncated torn log tail; deleting later segments", "segment", s.baseOffset, "later_segments", len(l.segments)-tornAt-1)
		for _, later := range l.segments[tornAt+1:] {
			later.close()
			for _, suf := range []string{logFileSuffix, indexFileSuffix, timeIndexFileSuffix, txnIndexFileSuffix} {
				os.Remove(segmentPath(p.dir, later.baseOffset, suf))
			}
		}
		l.segments = l.segments[:tornAt+1]
	}
	// Step 5.
	var leo int64
	if len(l.segments) > 0 {
		act := l.activeLocked()
		leo, err = act.nextOffset()
		if err != nil {
			// A clean-shutdown segment that does not parse: recover it.
			if _, rerr := recoverSegment(act, l.epochs, crcBuf); rerr != nil {
				closeAll()
				return nil, rerr
			}
			act.loadTimestamps()
			if leo, err = act.nextOffset(); err != nil {
				closeAll()
				return nil, err
			}
		}
		if leo < p.logStartOffset {
			for _, s := range l.segments {
				s.close()
				for _, suf := range []string{logFileSuffix, indexFileSuffix, timeIndexFileSuffix, txnIndexFileSuffix} {
					os.Remove(segmentPath(p.dir, s.baseOffset, suf))
				}
			}
			l.segments = nil
			if err := l.epochs.Clear(); err != nil {
				return nil, err
			}
		}
	}
	if len(l.segments) == 0 {
		s, err := createSegment(p.dir, p.logStartOffset, &l.cfg, now, 0)
		if err != nil {
			return nil, err
		}
		l.segments = []*Segment{s}
		leo = p.logStartOffset
	}
	// Step 6: the active segment's indexes go back to full size.
	act := l.activeLocked()
	act.rollJitterMs = l.jitter()
	if err := l.reactivateLocked(act); err != nil {
		closeAll()
		return nil, err
	}
	l.logEndOffset.Store(leo)
	// Step 8 (before 7 so truncateFromStart sees the final start).
	ls := p.logStartOffset
	if fb := l.segments[0].baseOffset; fb > ls {
		ls = fb
	}
	if ls > leo {
		ls = leo
	}
	l.logStartOffset.Store(ls)
	if p.cleanShutdown {
		l.recoveryPoint = leo
	} else {
		l.recoveryPoint = min(p.recoveryPoint, leo)
	}
	// Step 7.
	if err := l.epochs.TruncateFromEnd(leo); err != nil {
		return nil, err
	}
	if err := l.epochs.TruncateFromStart(ls); err != nil {
		return nil, err
	}
	// Step 9: producer state from snapshots plus replay.
	if l.producers, err = NewProducerStateManager(p.dir, ProducerStateConfig{ExpirationMs: producerIDExpirationMs}); err != nil {
		closeAll()
		return nil, err
	}
	if err := l.producers.RemoveStraySnapshots(segmentBases(l.segments)); err != nil {
		closeAll()
		return nil, err
	}
	// Segments whose data was re-validated after a crash get their
	// .txnindex rebuilt from the replayed control batches.
	txnIndexFrom := int64(-1)
	if rebuildFrom >= 0 {
		txnIndexFrom = rebuildFrom
		for _, s := range l.segments {
			if s.baseOffset >= rebuildFrom {
				if err := os.Remove(segmentPath(p.dir, s.baseOffset, txnIndexFileSuffix)); err != nil && !os.IsNotExist(err) {
					closeAll()
					return nil, err
				}
			}
		}
	}
	if err := l.rebuildProducerStateLocked(now, txnIndexFrom); err != nil {
		closeAll()
		return nil, err
	}
	l.setHighWatermarkLocked(p.highWatermark)
	l.lastFlushTime = now
	l.startFlusher()
	return l, nil
}

// removeSegmentsCoveredBySwap deletes the segments (with their index files)
// whose base offset is above base and below the next offset of the completed
// swap segment at path.
func removeSegmentsCoveredBySwap(dir string, base int64, path string) error {
	next, err := segmentNextOffset(path)
	if err != nil {
		return fmt.Errorf("storage: complete swap %s: %w", path, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("storage: list %s: %w", dir, err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, logFileSuffix) {
			continue
		}
		off, err := offsetFromFileName(name)
		if err != nil || off <= base || off >= next {
			continue
		}
		for _, suffix := range []string{logFileSuffix, indexFileSuffix, timeIndexFileSuffix, txnIndexFileSuffix} {
			if err := os.Remove(segmentPath(dir, off, suffix)); err != nil && !os.IsNotExist(err) {
				return fmt.Errorf("storage: remove segment covered by swap: %w", err)
			}
		}
	}
	return nil
}

// segmentNextOffset is the offset after the last whole batch of the segment
// file at path, reading only batch headers; a torn tail is ignored (recovery
// truncates it later). An empty file yields -1, which covers nothing.
func segmentNextOffset(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	var hdr [record.BatchHeaderSize]byte
	next := int64(-1)
	for pos := int64(0); pos+record.BatchHeaderSize <= st.Size(); {
		if _, err := f.ReadAt(hdr[:], pos); err != nil {
			return 0, err
		}
		h, err := record.ParseBatchHeader(hdr[:])
		if err != nil || pos+int64(h.Size()) > st.Size() {
			break
		}
		next = h.LastOffset() + 1
		pos += int64(h.Size())
	}
	return next, nil
}
