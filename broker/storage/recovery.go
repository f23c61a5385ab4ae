package storage

// Crash recovery of one segment (Kafka's LogSegment.recover): re-read the
// .log batch by batch, rebuild the indexes, and cut the file at the first
// batch that is torn, fails its CRC or breaks offset order. The load that
// calls it is in loader.go.

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strings"

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
		if pos == 0 {
			s.firstBatchTimestamp = h.MaxTimestamp
		}
		if err := s.indexBatch(pos, h.LastOffset(), h.MaxTimestamp, h.LastOffset()); err != nil {
			return 0, err
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
		s.logDirty.Store(true)
		if err := s.log.Truncate(pos); err != nil {
			return 0, fmt.Errorf("storage: truncate torn tail of segment %d: %w", s.baseOffset, err)
		}
	}
	s.size = pos
	s.check.trustAll() // every batch kept passed its CRC check above
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

func segmentBases(segs []*Segment) []int64 {
	out := make([]int64, len(segs))
	for i, s := range segs {
		out[i] = s.baseOffset
	}
	return out
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
