package storage

// Segment: one .log file with its .index and .timeindex (Kafka's
// LogSegment). All mutation happens under the owning Log's lock; reads take
// the Log's read lock and use pread, so they never move a shared file offset.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	logFileSuffix       = ".log"
	indexFileSuffix     = ".index"
	timeIndexFileSuffix = ".timeindex"
	txnIndexFileSuffix  = ".txnindex"
	snapshotFileSuffix  = ".snapshot"
	deletedFileSuffix   = ".deleted"
	cleanedFileSuffix   = ".cleaned"
	swapFileSuffix      = ".swap"

	// maxRelativeOffset: index entries store offset-base in an int32.
	maxRelativeOffset = math.MaxInt32
)

// filenamePrefixFromOffset renders the 20-digit zero-padded base offset.
func filenamePrefixFromOffset(offset int64) string {
	return fmt.Sprintf("%020d", offset)
}

// offsetFromFileName parses the base offset: the text before the first '.'.
func offsetFromFileName(name string) (int64, error) {
	i := 0
	for i < len(name) && name[i] != '.' {
		i++
	}
	return strconv.ParseInt(name[:i], 10, 64)
}

// Segment is one log segment.
type Segment struct {
	dir        string
	baseOffset int64
	log        *os.File
	logOpen    atomic.Bool // log is open and counted in segmentFiles
	offsetIdx  *OffsetIndex
	timeIdx    *TimeIndex
	// logDirty and txnDirty: the .log or the .txnindex was written or cut
	// since its last fsync (or, for a file not known to be durable, since
	// it was opened); flush fsyncs only a dirty file (the indexes keep
	// their own flag).
	logDirty, txnDirty atomic.Bool

	indexIntervalBytes int32
	rollJitterMs       int64
	created            time.Time

	// Fields below change only under the owning Log's write lock.
	size                      int64
	bytesSinceLastIndexEntry  int64
	maxTimestampSoFar         int64
	offsetOfMaxTimestampSoFar int64
	firstBatchTimestamp       int64 // max timestamp of the first append (time-based roll); -1 unknown
	hdr                       [batchHeaderSize]byte

	check readCheck // which bytes are checked before they are served (verify.go)
}

func segmentPath(dir string, base int64, suffix string) string {
	return filepath.Join(dir, filenamePrefixFromOffset(base)+suffix)
}

// createSegment creates a fresh segment, removing stale files with the same
// names first.
func createSegment(dir string, base int64, cfg *LogConfig, now time.Time, jitter int64) (*Segment, error) {
	for _, suf := range []string{logFileSuffix, indexFileSuffix, timeIndexFileSuffix, txnIndexFileSuffix} {
		if err := os.Remove(segmentPath(dir, base, suf)); err != nil && !os.IsNotExist(err) {
			return nil, fmt.Errorf("storage: remove stale segment file: %w", err)
		}
	}
	return openNewSegment(dir, base, cfg, now, jitter)
}

// openNewSegment creates the active segment at base in a directory known
// to hold none of its files.
func openNewSegment(dir string, base int64, cfg *LogConfig, now time.Time, jitter int64) (*Segment, error) {
	return openSegment(dir, base, cfg, now, jitter, true, true)
}

// openRegularFile is os.OpenFile(path, O_RDWR|O_CREATE, 0644) for a
// segment's files, which are regular files: os.OpenFile first tries to
// register every descriptor with the runtime's poller (four fcntl calls
// and an epoll_ctl that a regular file always refuses), which doubled
// the system calls of a new log's files; os.NewFile of a blocking
// descriptor does not try.
func openRegularFile(path string) (*os.File, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDWR|syscall.O_CREAT|syscall.O_CLOEXEC, 0o644)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}

// openSizedFile opens path for reading and writing, creating it if
// needed, and returns it with its size; what names the file in errors.
func openSizedFile(path, what string) (*os.File, int64, error) {
	f, err := openRegularFile(path)
	if err != nil {
		return nil, 0, fmt.Errorf("storage: open %s: %w", what, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("storage: stat %s: %w", what, err)
	}
	return f, fi.Size(), nil
}

// openSegment opens (creating if needed) the files of a segment. active
// is a new segment (log.preallocate applies to it). synced tells
// that the files as found are durable (a new segment's empty files, whose
// existence the fsync of their directory makes durable; a segment loaded
// after a clean shutdown, which fsync'd it): they need no fsync until
// written.
func openSegment(dir string, base int64, cfg *LogConfig, now time.Time, jitter int64, active, synced bool) (s *Segment, err error) {
	if err := segmentFiles.acquire(); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			segmentFiles.release()
		}
	}()
	f, size, err := openSizedFile(segmentPath(dir, base, logFileSuffix), "segment")
	if err != nil {
		return nil, err
	}
	s = &Segment{
		dir:                       dir,
		baseOffset:                base,
		log:                       f,
		indexIntervalBytes:        cfg.IndexIntervalBytes,
		rollJitterMs:              jitter,
		created:                   now,
		size:                      size,
		maxTimestampSoFar:         -1,
		offsetOfMaxTimestampSoFar: base,
		firstBatchTimestamp:       -1,
	}
	s.check.init(size)
	s.logDirty.Store(!synced)
	s.txnDirty.Store(!synced)
	// The indexes of a new active segment are not extended here: the
	// first entry that needs room extends its file to segment.index.bytes
	// (ensureCapacityLocked), as for a segment reactivated after a restart.
	// A segment that never gets an index entry (most of many idle
	// partitions) then keeps empty index files, which its clean close
	// neither trims nor fsyncs.
	if s.offsetIdx, err = openOffsetIndex(segmentPath(dir, base, indexFileSuffix), base, cfg.maxIndexBytes(offsetIndexEntrySize), false, synced); err != nil {
		f.Close()
		return nil, err
	}
	if s.timeIdx, err = openTimeIndex(segmentPath(dir, base, timeIndexFileSuffix), base, cfg.maxIndexBytes(timeIndexEntrySize), false, synced); err != nil {
		s.offsetIdx.close()
		f.Close()
		return nil, err
	}
	if active && cfg.Preallocate && s.size == 0 {
		// log.preallocate: reserve segment.bytes up front; s.size tracks
		// the real data and recovery treats the zero tail as torn.
		s.logDirty.Store(true)
		_ = f.Truncate(cfg.SegmentBytes)
	}
	s.logOpen.Store(true)
	s.loadTimestamps()
	return s, nil
}

// loadTimestamps seeds maxTimestampSoFar from the time index (Kafka reads it
// lazily from the last entry) and the roll timestamp from the first batch.
func (s *Segment) loadTimestamps() {
	if s.timeIdx.numEntries() > 0 {
		s.maxTimestampSoFar, s.offsetOfMaxTimestampSoFar = s.timeIdx.LastEntry()
	}
	if s.size >= batchHeaderSize {
		if h, err := s.readHeader(0); err == nil {
			s.firstBatchTimestamp = h.MaxTimestamp
		}
	}
}

// BaseOffset is the offset the segment is named after.
func (s *Segment) BaseOffset() int64 { return s.baseOffset }

// Size is the number of valid bytes in the .log file.
func (s *Segment) Size() int64 { return s.size }

// File is the segment's open .log file (for readers using pread).
func (s *Segment) File() *os.File { return s.log }

// OffsetIndex returns the segment's offset index.
func (s *Segment) OffsetIndex() *OffsetIndex { return s.offsetIdx }

// TimeIndex returns the segment's time index.
func (s *Segment) TimeIndex() *TimeIndex { return s.timeIdx }

// MaxTimestamp is the largest batch timestamp seen (-1 if none).
func (s *Segment) MaxTimestamp() int64 { return s.maxTimestampSoFar }

// LargestTimestamp is the max timestamp, or the .log mtime if there is none
// (what timestamp lookups and time retention compare against).
func (s *Segment) LargestTimestamp() int64 {
	if s.maxTimestampSoFar >= 0 {
		return s.maxTimestampSoFar
	}
	if fi, err := s.log.Stat(); err == nil {
		return fi.ModTime().UnixMilli()
	}
	return 0
}

// readHeader preads the 61-byte header of the batch at pos into s.hdr. The
// scratch buffer lives in the segment so the append and read paths do not
// allocate; callers hold the Log lock (readers the read lock, so two readers
// use readHeaderInto with their own buffer instead).
func (s *Segment) readHeader(pos int64) (batchHeader, error) {
	return s.readHeaderInto(pos, s.hdr[:])
}

func (s *Segment) readHeaderInto(pos int64, buf []byte) (batchHeader, error) {
	if pos+logOverhead > s.size {
		return batchHeader{}, errBatchTruncated
	}
	n := int64(batchHeaderSize)
	if pos+n > s.size {
		n = s.size - pos
	}
	if _, err := s.log.ReadAt(buf[:n], pos); err != nil && !errors.Is(err, io.EOF) {
		return batchHeader{}, err
	}
	h, err := parseBatchHeader(buf[:n])
	if err != nil {
		return h, err
	}
	if pos+int64(h.Size()) > s.size {
		return h, errBatchTruncated
	}
	return h, nil
}

// append writes one chunk of batches (one produce request's or fetch
// response's data for the partition) whose largest offset is
// largestOffset. maxTs/offsetOfMaxTs describe the chunk.
func (s *Segment) append(largestOffset, maxTs, offsetOfMaxTs int64, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	if largestOffset-s.baseOffset > maxRelativeOffset || largestOffset < s.baseOffset {
		return fmt.Errorf("storage: offset %d out of range for segment %d", largestOffset, s.baseOffset)
	}
	pos := s.size
	if err := s.indexBatch(pos, largestOffset, maxTs, offsetOfMaxTs); err != nil {
		return err
	}
	s.logDirty.Store(true)
	if err := injectedFault(FaultAppend, s.log.Name()); err != nil {
		if sw := (*ShortWrite)(nil); errors.As(err, &sw) && sw.N > 0 {
			s.log.WriteAt(data[:min(sw.N, len(data))], pos) // the torn part that reached the file
		}
		return fmt.Errorf("storage: write segment %d: %w", s.baseOffset, err)
	}
	if _, err := s.log.WriteAt(data, pos); err != nil {
		// Leave the size where it was; the torn bytes are beyond it and
		// overwritten by the next append or cut by recovery.
		return fmt.Errorf("storage: write segment %d: %w", s.baseOffset, err)
	}
	if s.size == 0 {
		s.firstBatchTimestamp = maxTs
	}
	s.size += int64(len(data))
	s.bytesSinceLastIndexEntry += int64(len(data))
	return nil
}

// indexBatch accounts for bytes about to sit at pos and ending at
// lastOffset (an append, or a batch recovery re-reads): it raises the
// segment's largest timestamp and, once more than index.interval.bytes
// were written since the last index entry, adds an offset index entry for
// pos and a time index entry for the largest timestamp so far. The caller
// adds the bytes to bytesSinceLastIndexEntry afterwards.
func (s *Segment) indexBatch(pos, lastOffset, maxTs, offsetOfMaxTs int64) error {
	if maxTs > s.maxTimestampSoFar {
		s.maxTimestampSoFar, s.offsetOfMaxTimestampSoFar = maxTs, offsetOfMaxTs
	}
	if s.bytesSinceLastIndexEntry <= int64(s.indexIntervalBytes) {
		return nil
	}
	if err := s.offsetIdx.Append(lastOffset, int32(pos)); err != nil {
		return err
	}
	if err := s.timeIdx.MaybeAppend(s.maxTimestampSoFar, s.offsetOfMaxTimestampSoFar, false); err != nil {
		// Take the offset entry back: the append fails as a whole, and
		// its retry at the same offsets must be able to index again.
		s.offsetIdx.TruncateTo(lastOffset)
		return err
	}
	s.bytesSinceLastIndexEntry = 0
	return nil
}

// batchPos is where a batch starts and its header.
type batchPos struct {
	pos int64
	h   batchHeader
}

// translateOffset finds the first batch at or after startPos whose last
// offset is >= target, reading only batch headers. found is false if
// there is none.
func (s *Segment) translateOffset(target int64, startPos int64, buf []byte) (bp batchPos, found bool, err error) {
	pos := startPos
	for pos < s.size {
		h, err := s.readHeaderInto(pos, buf)
		if err != nil {
			return bp, false, fmt.Errorf("storage: segment %d position %d: %w", s.baseOffset, pos, err)
		}
		if h.LastOffset() >= target {
			return batchPos{pos: pos, h: h}, true, nil
		}
		pos += int64(h.Size())
	}
	return bp, false, nil
}

// lookup finds the batch holding target: the offset index gives the
// position of the last entry at or below it, then the batches from there
// are scanned.
func (s *Segment) lookup(target int64, buf []byte) (batchPos, bool, error) {
	_, pos := s.offsetIdx.Lookup(target)
	if int64(pos) > s.size {
		pos = 0 // defensive: never trust a position past the data
	}
	return s.translateOffset(target, int64(pos), buf)
}

// read returns the bytes from the batch holding startOffset, at most
// maxSize bytes (at least one batch when minOneMessage) and never past
// maxPosition.
func (s *Segment) read(startOffset int64, maxSize int32, maxPosition int64, minOneMessage bool, buf []byte) (FileRecords, int64, bool, error) {
	bp, found, err := s.lookup(startOffset, buf)
	if err != nil || !found {
		return FileRecords{}, 0, false, err
	}
	adjusted := int64(maxSize)
	if minOneMessage && int64(bp.h.Size()) > adjusted {
		adjusted = int64(bp.h.Size())
	}
	if maxPosition > s.size {
		maxPosition = s.size
	}
	n := maxPosition - bp.pos
	if n > adjusted {
		n = adjusted
	}
	if n < 0 {
		n = 0
	}
	return FileRecords{File: s.log, Pos: bp.pos, Size: int32(n)}, bp.h.BaseOffset, true, nil
}

// nextOffset scans from the last index entry to find the offset after the
// last batch (used at load time).
func (s *Segment) nextOffset() (int64, error) {
	off, pos := s.offsetIdx.Lookup(math.MaxInt64)
	next := s.baseOffset
	if off > s.baseOffset || pos > 0 {
		next = off
	}
	p := int64(pos)
	if p > s.size {
		p = 0
		next = s.baseOffset
	}
	for p < s.size {
		h, err := s.readHeader(p)
		if err != nil {
			return 0, fmt.Errorf("storage: segment %d position %d: %w", s.baseOffset, p, err)
		}
		next = h.NextOffset()
		p += int64(h.Size())
	}
	return next, nil
}

// truncateTo removes every batch whose last offset is >= offset and
// returns the number of bytes removed.
func (s *Segment) truncateTo(offset int64, now time.Time) (int64, error) {
	bp, found, err := s.lookup(offset, s.hdr[:])
	if err != nil {
		return 0, err
	}
	if !found {
		return 0, nil
	}
	s.offsetIdx.TruncateTo(offset)
	s.timeIdx.TruncateTo(offset)
	if err := s.truncateTxnIndex(offset); err != nil {
		return 0, err
	}
	removed := s.size - bp.pos
	s.logDirty.Store(true)
	if err := s.log.Truncate(bp.pos); err != nil {
		return 0, fmt.Errorf("storage: truncate segment %d: %w", s.baseOffset, err)
	}
	s.size = bp.pos
	s.check.truncate(s.size)
	s.bytesSinceLastIndexEntry = 0
	s.maxTimestampSoFar, s.offsetOfMaxTimestampSoFar = s.timeIdx.LastEntry()
	if s.size == 0 {
		s.created = now
		s.firstBatchTimestamp = -1
	}
	return removed, nil
}

// shouldRoll reports whether the append of size bytes must go to a new
// segment: the segment would exceed segment.bytes; it is non-empty and
// its time is up (the append's max timestamp minus the first append's, or
// wall time since creation when timestamps are unknown, beyond the roll
// time less this segment's jitter); an index is full; or the append's last
// offset does not fit an index entry relative to the base.
func (s *Segment) shouldRoll(cfg *LogConfig, size int, maxTsInAppend, lastOffset int64, now time.Time) bool {
	if s.size > cfg.SegmentBytes-int64(size) {
		return true
	}
	if s.size > 0 {
		var waited int64
		if s.firstBatchTimestamp >= 0 {
			waited = maxTsInAppend - s.firstBatchTimestamp
		} else {
			waited = now.Sub(s.created).Milliseconds()
		}
		if waited > cfg.rollMs()-s.rollJitterMs {
			return true
		}
	}
	if s.offsetIdx.isFull() || s.timeIdx.isFull() {
		return true
	}
	return lastOffset-s.baseOffset > maxRelativeOffset
}

// onBecomeInactive offers the final time-index entry and trims the indexes
// and a preallocated .log when the segment stops being active.
func (s *Segment) onBecomeInactive() error {
	if err := s.timeIdx.MaybeAppend(s.maxTimestampSoFar, s.offsetOfMaxTimestampSoFar, true); err != nil {
		return err
	}
	if err := s.offsetIdx.trim(); err != nil {
		return err
	}
	if err := s.timeIdx.trim(); err != nil {
		return err
	}
	if fi, err := s.log.Stat(); err == nil && fi.Size() > s.size {
		s.logDirty.Store(true)
		if err := s.log.Truncate(s.size); err != nil {
			return err
		}
	}
	return nil
}

// flush fsyncs the .log and both indexes, each only if it was written
// since its last fsync: a file with nothing new has nothing to make
// durable, and an fsync of it still costs a device cache flush. Each flag
// is cleared before its fsync (a write during it marks the file again)
// and set again when the fsync fails.
func (s *Segment) flush() error {
	if err := injectedFault(FaultFlush, s.log.Name()); err != nil {
		return fmt.Errorf("storage: fsync segment %d: %w", s.baseOffset, err)
	}
	if s.logDirty.Swap(false) {
		if err := s.log.Sync(); err != nil {
			s.logDirty.Store(true)
			return fmt.Errorf("storage: fsync segment %d: %w", s.baseOffset, err)
		}
	}
	if err := s.offsetIdx.flush(); err != nil {
		return err
	}
	if err := s.timeIdx.flush(); err != nil {
		return err
	}
	// The .txnindex is appended with plain writes; make it as durable as
	// the records it describes.
	if !s.txnDirty.Swap(false) {
		return nil
	}
	if err := syncFile(segmentPath(s.dir, s.baseOffset, txnIndexFileSuffix)); err != nil {
		s.txnDirty.Store(true)
		return err
	}
	return nil
}

// close closes all files without trimming.
func (s *Segment) close() error {
	err := s.offsetIdx.close()
	if e := s.timeIdx.close(); err == nil {
		err = e
	}
	if s.logOpen.CompareAndSwap(true, false) {
		if e := s.log.Close(); err == nil {
			err = e
		}
		segmentFiles.release()
	}
	return err
}

// renameToDeleted appends ".deleted" to every file of the segment. The
// files stay open so in-flight reads finish; they are removed after
// file.delete.delay.ms.
func (s *Segment) renameToDeleted() error {
	for _, suf := range []string{logFileSuffix, txnIndexFileSuffix} {
		p := segmentPath(s.dir, s.baseOffset, suf)
		if err := os.Rename(p, p+deletedFileSuffix); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	if err := s.offsetIdx.renameTo(segmentPath(s.dir, s.baseOffset, indexFileSuffix) + deletedFileSuffix); err != nil {
		return err
	}
	return s.timeIdx.renameTo(segmentPath(s.dir, s.baseOffset, timeIndexFileSuffix) + deletedFileSuffix)
}

// deleteFiles closes and removes the (renamed) files.
func (s *Segment) deleteFiles() error {
	err := s.close()
	for _, suf := range []string{logFileSuffix, indexFileSuffix, timeIndexFileSuffix, txnIndexFileSuffix} {
		// Only the renamed files: a new segment with the same base
		// offset may exist by now (truncate fully and restart at it).
		q := segmentPath(s.dir, s.baseOffset, suf) + deletedFileSuffix
		if e := os.Remove(q); e != nil && !os.IsNotExist(e) && err == nil {
			err = e
		}
	}
	return err
}
