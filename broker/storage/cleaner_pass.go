package storage

// One cleaning pass over one log: transaction scan, offset map, rewriting
// segment groups into .cleaned files and the swap. See cleaner.go.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/klassik/klassik/broker/storage/record"
)

// forEachSegmentBatch reads the batches of a snapshotted segment with
// pread, one at a time into *buf (grown as needed). withBody says whether
// a batch's full bytes are needed; otherwise only its header is read and
// fn gets the header bytes. Data past the snapshot size is never read.
func (c *Cleaner) forEachSegmentBatch(cs *cleanerSegment, buf *[]byte, withBody func(h record.BatchHeader) bool,
	fn func(pos int64, batch []byte, h record.BatchHeader) error) error {
	var hdr [record.BatchHeaderSize]byte
	for pos := int64(0); pos < cs.size; {
		if c.stopped() {
			return ErrCleanerStopped
		}
		n := min(int64(record.BatchHeaderSize), cs.size-pos)
		if _, err := cs.seg.log.ReadAt(hdr[:n], pos); err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("storage: cleaner read segment %d: %w", cs.base, err)
		}
		h, err := record.ParseBatchHeader(hdr[:n])
		if err != nil {
			return fmt.Errorf("storage: cleaner: segment %d position %d: %w", cs.base, pos, err)
		}
		size := int64(h.Size())
		if pos+size > cs.size {
			return fmt.Errorf("storage: cleaner: segment %d position %d: %w", cs.base, pos, record.ErrTruncated)
		}
		body := hdr[:n]
		if withBody(h) {
			if int64(cap(*buf)) < size {
				*buf = make([]byte, max(size, int64(c.cfg.IOBufferSize)))
			}
			body = (*buf)[:size]
			if _, err := cs.seg.log.ReadAt(body, pos); err != nil && !errors.Is(err, io.EOF) {
				return fmt.Errorf("storage: cleaner read segment %d: %w", cs.base, err)
			}
		}
		if err := fn(pos, body, h); err != nil {
			return err
		}
		c.throttle.maybeThrottle(len(body))
		pos += size
	}
	return nil
}

// cleanPass carries the state of one pass over one log.
type cleanPass struct {
	c         *Cleaner
	l         *Log
	snap      cleanerLogSnapshot
	nowMs     int64
	om        *OffsetMap
	mapLatest int64 // records above this offset were not mapped: keep them
	// aborted holds the base offsets of transactional data batches whose
	// transaction ended with an ABORT marker.
	aborted map[int64]bool
	// lastData is each producer's last data batch's last offset: that
	// batch is kept, emptied if need be, so producer state survives.
	lastData map[int64]int64
	// txnRetained marks producers with a data batch of their current
	// transaction written to the cleaned log in this pass; a marker
	// closing a transaction with nothing left is removable.
	txnRetained map[int64]bool
	buf         []byte
	stats       CleanStats
}

// scanTransactions fills aborted and lastData from every segment and
// returns the first offset of the earliest transaction still open (-1 if
// none) and the number of records at or above firstDirty (an upper bound
// of the keys the offset map will hold).
func (p *cleanPass) scanTransactions(firstDirty int64) (int64, int64, error) {
	open := map[int64][]int64{}
	var dirtyRecords int64
	for i := range p.snap.segs {
		cs := &p.snap.segs[i]
		err := p.c.forEachSegmentBatch(cs, &p.buf, func(h record.BatchHeader) bool { return h.IsControl() },
			func(_ int64, batch []byte, h record.BatchHeader) error {
				if h.LastOffset() >= firstDirty && !cs.active {
					dirtyRecords += int64(max(h.NumRecords, 0))
				}
				if !h.HasProducerID() {
					return nil
				}
				if !h.IsControl() {
					p.lastData[h.ProducerID] = h.LastOffset()
					if h.IsTransactional() {
						open[h.ProducerID] = append(open[h.ProducerID], h.BaseOffset)
					}
					return nil
				}
				recs, err := record.Records(batch)
				if err != nil || len(recs) == 0 {
					return nil // an emptied or unreadable marker completes nothing
				}
				_, t, err := record.ParseControlKey(recs[0].Key)
				if err != nil || t == record.ControlUnknown {
					return nil
				}
				if t == record.ControlAbort {
					for _, b := range open[h.ProducerID] {
						p.aborted[b] = true
					}
				}
				delete(open, h.ProducerID)
				return nil
			})
		if err != nil {
			return -1, 0, err
		}
	}
	firstOpen := int64(-1)
	for _, bases := range open {
		if firstOpen < 0 || bases[0] < firstOpen {
			firstOpen = bases[0]
		}
	}
	return firstOpen, dirtyRecords, nil
}

// buildOffsetMap maps each key of the dirty section [firstDirty,
// uncleanable) to its latest offset, skipping control batches and aborted
// transactions, until the map reaches its load factor; it returns
// endOffset, one past the last offset mapped.
func (p *cleanPass) buildOffsetMap(firstDirty, uncleanable int64) (int64, error) {
	maxDesired := int(float64(p.om.Slots()) * p.c.cfg.IOBufferLoadFactor)
	end := firstDirty
	errFull := errors.New("offset map full")
	for i := range p.snap.segs {
		cs := &p.snap.segs[i]
		if cs.active || cs.next <= firstDirty || cs.next > uncleanable {
			continue
		}
		err := p.c.forEachSegmentBatch(cs, &p.buf, func(h record.BatchHeader) bool {
			return !h.IsControl() && h.LastOffset() >= firstDirty
		}, func(_ int64, batch []byte, h record.BatchHeader) error {
			if h.LastOffset() < firstDirty {
				return nil
			}
			if !h.IsControl() && !(h.IsTransactional() && p.aborted[h.BaseOffset]) {
				if p.om.Size()+int(h.NumRecords) > maxDesired {
					if p.om.Size() == 0 {
						return fmt.Errorf("storage: cleaner: a batch of %d records does not fit the offset map (%d slots); raise log.cleaner.dedupe.buffer.size",
							h.NumRecords, p.om.Slots())
					}
					return errFull
				}
				err := record.ForEachRecord(batch, func(r *record.Record) error {
					if off := r.Offset(h); r.Key != nil && off >= firstDirty {
						return p.om.Put(r.Key, off)
					}
					return nil
				})
				if err != nil {
					return fmt.Errorf("storage: cleaner: batch at offset %d: %w", h.BaseOffset, err)
				}
			}
			end = h.NextOffset()
			return nil
		})
		if errors.Is(err, errFull) {
			return end, nil
		}
		if err != nil {
			return 0, err
		}
		end = cs.next
	}
	return end, nil
}

// groupSegments splits every segment below endOffset (the clean prefix
// too, so duplicates made obsolete by newer records go) into runs that fit
// in one segment: total .log size within segment.bytes, index sizes within
// segment.index.bytes, offset span within 2^31-1.
func (p *cleanPass) groupSegments(endOffset int64) [][]cleanerSegment {
	var groups [][]cleanerSegment
	var cur []cleanerSegment
	var logSize, idxSize, timeSize int64
	maxLog := p.snap.cfg.SegmentBytes
	maxIdx := int64(p.snap.cfg.SegmentIndexBytes)
	for _, cs := range p.snap.segs {
		if cs.active || cs.base >= endOffset {
			break
		}
		if len(cur) > 0 && (logSize+cs.size > maxLog || idxSize+int64(cs.offIdxBytes) > maxIdx ||
			timeSize+int64(cs.timeIdxBytes) > maxIdx || cs.next-1-cur[0].base > math.MaxInt32) {
			groups = append(groups, cur)
			cur, logSize, idxSize, timeSize = nil, 0, 0, 0
		}
		cur = append(cur, cs)
		logSize += cs.size
		idxSize += int64(cs.offIdxBytes)
		timeSize += int64(cs.timeIdxBytes)
	}
	if len(cur) > 0 {
		groups = append(groups, cur)
	}
	return groups
}

// filterBatch applies the cleaner's retention rules to one batch and
// returns the bytes to write (the input itself when unchanged), or nil to
// drop it. A record stays if its offset is beyond the mapped range, or if
// it has a key, is the latest offset for that key, and has a value or a
// tombstone still inside its delete horizon. Aborted batches go; control
// batches stay until their horizon passes and their transaction is gone;
// a producer's last data batch stays, emptied if need be.
func (p *cleanPass) filterBatch(batch []byte, h record.BatchHeader) ([]byte, error) {
	lastOfProducer := h.HasProducerID() && !h.IsControl() && p.lastData[h.ProducerID] == h.LastOffset()
	if h.IsControl() {
		return p.filterControlBatch(batch, h)
	}
	empty := func() ([]byte, error) {
		if !lastOfProducer {
			return nil, nil
		}
		o := record.OptionsFrom(h)
		o.Codec = record.None
		return record.BuildChecked(o, nil)
	}
	if h.IsTransactional() && p.aborted[h.BaseOffset] {
		p.stats.RecordsRead += int64(h.NumRecords)
		return empty()
	}
	recs, err := record.Records(batch)
	if err != nil {
		return nil, fmt.Errorf("storage: cleaner: batch at offset %d: %w", h.BaseOffset, err)
	}
	p.stats.RecordsRead += int64(len(recs))
	horizonPassed := h.HasDeleteHorizon() && p.nowMs >= h.DeleteHorizon()
	needHorizon := false
	kept := recs[:0]
	for _, r := range recs {
		off := r.Offset(h)
		keep := off > p.mapLatest ||
			(r.Key != nil && off >= p.om.Get(r.Key) && (r.Value != nil || !horizonPassed))
		if !keep {
			continue
		}
		if r.Value == nil && !h.HasDeleteHorizon() {
			needHorizon = true
		}
		kept = append(kept, r)
	}
	p.stats.RecordsRetained += int64(len(kept))
	if len(kept) == int(h.NumRecords) && !needHorizon {
		return batch, nil
	}
	if len(kept) == 0 {
		return empty()
	}
	o := record.OptionsFrom(h)
	if needHorizon {
		// KIP-534: the first pass retaining a tombstone stamps the batch
		// with its delete horizon; record timestamps are re-based on it.
		horizon := p.nowMs + p.snap.cfg.DeleteRetentionMs
		for i := range kept {
			kept[i].TimestampDelta = h.BaseTimestamp + kept[i].TimestampDelta - horizon
		}
		o.BaseTimestamp = horizon
		o.DeleteHorizon = true
	}
	return record.BuildChecked(o, kept)
}

// filterControlBatch keeps a transaction marker while data of its
// transaction remains; once the transaction is empty the marker gets a
// delete horizon on the first pass and is dropped by the first pass after
// the horizon, like a tombstone (KIP-534).
func (p *cleanPass) filterControlBatch(batch []byte, h record.BatchHeader) ([]byte, error) {
	nonEmpty := p.txnRetained[h.ProducerID]
	delete(p.txnRetained, h.ProducerID)
	if nonEmpty || !h.HasProducerID() {
		return batch, nil
	}
	if h.HasDeleteHorizon() {
		if p.nowMs >= h.DeleteHorizon() {
			return nil, nil
		}
		return batch, nil
	}
	recs, err := record.Records(batch)
	if err != nil || len(recs) == 0 {
		return batch, nil // keep what cannot be understood
	}
	horizon := p.nowMs + p.snap.cfg.DeleteRetentionMs
	for i := range recs {
		recs[i].TimestampDelta = h.BaseTimestamp + recs[i].TimestampDelta - horizon
	}
	o := record.OptionsFrom(h)
	o.BaseTimestamp, o.DeleteHorizon = horizon, true
	return record.BuildChecked(o, recs)
}

// cleanedWriter writes "<base>.log.cleaned" and its two indexes with the
// normal index maintenance of an append (Segment.indexBatch, one call per
// retained batch).
type cleanedWriter struct {
	dir        string
	base       int64
	interval   int64
	log        *os.File
	pos        int64
	sinceIndex int64
	idx, tidx  []byte
	lastIdxTs  int64
	lastIdxOff int64
	maxTs      int64
	offOfMaxTs int64
}

func newCleanedWriter(dir string, base int64, interval int32) (*cleanedWriter, error) {
	f, err := os.OpenFile(segmentPath(dir, base, logFileSuffix+cleanedFileSuffix), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("storage: cleaner: %w", err)
	}
	return &cleanedWriter{dir: dir, base: base, interval: int64(interval), log: f, lastIdxTs: -1, lastIdxOff: base,
		maxTs: -1, offOfMaxTs: base}, nil
}

func (w *cleanedWriter) maybeTimeEntry(ts, off int64) {
	if ts > w.lastIdxTs && off >= w.lastIdxOff {
		w.tidx = binary.BigEndian.AppendUint64(w.tidx, uint64(ts))
		w.tidx = binary.BigEndian.AppendUint32(w.tidx, uint32(off-w.base))
		w.lastIdxTs, w.lastIdxOff = ts, off
	}
}

func (w *cleanedWriter) append(b []byte) error {
	h, err := record.ParseBatchHeader(b)
	if err != nil {
		return err
	}
	if h.LastOffset()-w.base > math.MaxInt32 {
		return fmt.Errorf("storage: cleaner: offset %d does not fit segment %d", h.LastOffset(), w.base)
	}
	if h.MaxTimestamp > w.maxTs {
		w.maxTs, w.offOfMaxTs = h.MaxTimestamp, h.LastOffset()
	}
	if w.sinceIndex > w.interval {
		w.idx = binary.BigEndian.AppendUint32(w.idx, uint32(h.LastOffset()-w.base))
		w.idx = binary.BigEndian.AppendUint32(w.idx, uint32(w.pos))
		w.maybeTimeEntry(w.maxTs, w.offOfMaxTs)
		w.sinceIndex = 0
	}
	if _, err := w.log.Write(b); err != nil {
		return fmt.Errorf("storage: cleaner write: %w", err)
	}
	w.pos += int64(len(b))
	w.sinceIndex += int64(len(b))
	return nil
}

// finish writes the indexes, fsyncs everything and sets the mtime.
func (w *cleanedWriter) finish(mtime time.Time) error {
	w.maybeTimeEntry(w.maxTs, w.offOfMaxTs)
	err := w.log.Sync()
	if e := w.log.Close(); err == nil {
		err = e
	}
	if err != nil {
		return fmt.Errorf("storage: cleaner: %w", err)
	}
	for _, f := range []struct {
		suffix string
		data   []byte
	}{{indexFileSuffix, w.idx}, {timeIndexFileSuffix, w.tidx}} {
		if err := writeSynced(segmentPath(w.dir, w.base, f.suffix+cleanedFileSuffix), f.data); err != nil {
			return err
		}
	}
	for _, s := range []string{logFileSuffix, indexFileSuffix, timeIndexFileSuffix} {
		_ = os.Chtimes(segmentPath(w.dir, w.base, s+cleanedFileSuffix), mtime, mtime)
	}
	return nil
}

func (w *cleanedWriter) abort() {
	w.log.Close()
	removeCleanedFiles(w.dir, w.base)
}

func removeCleanedFiles(dir string, base int64) {
	for _, s := range []string{logFileSuffix, indexFileSuffix, timeIndexFileSuffix} {
		os.Remove(segmentPath(dir, base, s+cleanedFileSuffix))
		os.Remove(segmentPath(dir, base, s+swapFileSuffix))
	}
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("storage: cleaner: %w", err)
	}
	_, err = f.Write(data)
	if e := f.Sync(); err == nil {
		err = e
	}
	if e := f.Close(); err == nil {
		err = e
	}
	if err != nil {
		return fmt.Errorf("storage: cleaner: %w", err)
	}
	return nil
}

// cleanGroup rewrites one group into a .cleaned segment and swaps it in.
func (p *cleanPass) cleanGroup(group []cleanerSegment) error {
	base := group[0].base
	removeCleanedFiles(p.l.dir, base)
	w, err := newCleanedWriter(p.l.dir, base, p.snap.cfg.IndexIntervalBytes)
	if err != nil {
		return err
	}
	var mtime int64
	for i := range group {
		cs := &group[i]
		p.stats.SegmentsRead++
		p.stats.BytesRead += cs.size
		mtime = cs.lastModifiedMs
		err := p.c.forEachSegmentBatch(cs, &p.buf, func(record.BatchHeader) bool { return true },
			func(_ int64, batch []byte, h record.BatchHeader) error {
				out, err := p.filterBatch(batch, h)
				if err != nil || out == nil {
					return err
				}
				if h.IsTransactional() && !h.IsControl() {
					p.txnRetained[h.ProducerID] = true
				}
				return w.append(out)
			})
		if err != nil {
			w.abort()
			return err
		}
	}
	if err := w.finish(time.UnixMilli(mtime)); err != nil {
		w.abort()
		return err
	}
	swapped, err := p.swap(group)
	if err != nil || !swapped {
		removeCleanedFiles(p.l.dir, base)
		p.stats.Aborted = p.stats.Aborted || !swapped
		return err
	}
	p.stats.SegmentsWritten++
	p.stats.BytesWritten += w.pos
	return nil
}

// swap replaces the group's segments with the cleaned one (.cleaned to
// .swap, old segments to .deleted, .swap to the final names)
// under the Log's write lock. It returns false, changing nothing, if the
// log no longer holds exactly those segments with those sizes.
func (p *cleanPass) swap(group []cleanerSegment) (bool, error) {
	l := p.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false, nil
	}
	at := -1
	for i, s := range l.segments {
		if s == group[0].seg {
			at = i
			break
		}
	}
	if at < 0 || at+len(group) >= len(l.segments) { // the active segment is never replaced
		return false, nil
	}
	for k, cs := range group {
		if s := l.segments[at+k]; s != cs.seg || s.size != cs.size {
			return false, nil
		}
	}
	base := group[0].base
	for _, s := range []string{logFileSuffix, indexFileSuffix, timeIndexFileSuffix} {
		if err := os.Rename(segmentPath(l.dir, base, s+cleanedFileSuffix), segmentPath(l.dir, base, s+swapFileSuffix)); err != nil {
			return false, fmt.Errorf("storage: cleaner swap: %w", err)
		}
	}
	now := l.clock()
	due := now.Add(time.Duration(l.cfg.FileDeleteDelayMs) * time.Millisecond)
	for k, cs := range group {
		if err := cs.seg.renameToDeleted(); err != nil {
			return false, fmt.Errorf("storage: cleaner swap: %w", err)
		}
		l.pending = append(l.pending, pendingDelete{seg: cs.seg, due: due})
		if k > 0 {
			// The cleaned segment keeps the first base offset; snapshots
			// at the others no longer match a segment and are deleted.
			if l.producers != nil {
				if err := l.producers.DeleteSnapshot(cs.base); err != nil {
					l.logger.Warn("cleaner: delete producer snapshot", "offset", cs.base, "err", err)
				}
			} else {
				os.Remove(ProducerSnapshotPath(l.dir, cs.base))
			}
		}
	}
	for _, s := range []string{logFileSuffix, indexFileSuffix, timeIndexFileSuffix} {
		if err := os.Rename(segmentPath(l.dir, base, s+swapFileSuffix), segmentPath(l.dir, base, s)); err != nil {
			return false, fmt.Errorf("storage: cleaner swap: %w", err)
		}
	}
	seg, err := openSegment(l.dir, base, &l.cfg, now, 0, false, false)
	if err != nil {
		return false, fmt.Errorf("storage: cleaner: open cleaned segment %d: %w", base, err)
	}
	rest := append([]*Segment{seg}, l.segments[at+len(group):]...)
	l.segments = append(l.segments[:at:at], rest...)
	if err := syncDir(l.dir); err != nil {
		return true, err
	}
	return true, nil
}

// cleanLogLocked runs one pass; the caller holds c.mu.
func (c *Cleaner) cleanLogLocked(l *Log, firstDirty, uncleanable int64, now time.Time) (CleanStats, error) {
	snap, ok := snapshotForCleaning(l)
	if !ok {
		return CleanStats{}, ErrLogClosed
	}
	p := &cleanPass{c: c, l: l, snap: snap, nowMs: now.UnixMilli(),
		aborted: map[int64]bool{}, lastData: map[int64]int64{}, txnRetained: map[int64]bool{}}
	p.stats.FirstDirtyOffset = firstDirty
	firstOpen, dirtyRecords, err := p.scanTransactions(firstDirty)
	if err != nil {
		return p.stats, err
	}
	p.om = c.offsetMapLocked(dirtyRecords)
	if firstOpen >= 0 {
		uncleanable = max(min(uncleanable, roundDownToSegment(&snap, firstOpen)), firstDirty)
	}
	end, err := p.buildOffsetMap(firstDirty, uncleanable)
	if err != nil {
		return p.stats, err
	}
	p.stats.EndOffset = end
	if end <= firstDirty {
		return p.stats, nil
	}
	p.mapLatest = end - 1
	for _, g := range p.groupSegments(end) {
		if err := p.cleanGroup(g); err != nil {
			return p.stats, err
		}
		if p.stats.Aborted {
			return p.stats, nil
		}
	}
	return p.stats, c.writeCleanerCheckpoint(l, end)
}

// writeCleanerCheckpoint records endOffset for l and drops entries of
// partitions that no longer have a directory here.
func (c *Cleaner) writeCleanerCheckpoint(l *Log, end int64) error {
	cleanerCheckpointMu.Lock()
	defer cleanerCheckpointMu.Unlock()
	// A truncation during the pass (after its swap, or of segments the
	// pass did not touch) already lowered the file; do not raise it again
	// past the truncation point.
	if f := l.cleanerFloor.Load(); f != 0 && f-1 < end {
		end = f - 1
	}
	path := cleanerCheckpointPath(l)
	cp, err := ReadOffsetCheckpoint(path)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	for tp := range cp {
		if _, err := os.Stat(filepath.Join(dir, tp.String())); err != nil {
			delete(cp, tp)
		}
	}
	cp[l.tp] = end
	return WriteOffsetCheckpoint(path, cp)
}
