package storage

// TransactionIndex: the .txnindex of a segment, one 34-byte entry per
// aborted transaction whose ABORT marker is in the segment (Kafka's
// TransactionIndex). Created lazily, never preallocated.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

const txnIndexEntrySize = 34

// AbortedTxn is one .txnindex entry.
type AbortedTxn struct {
	ProducerID       int64
	FirstOffset      int64
	LastOffset       int64
	LastStableOffset int64
}

func encodeAbortedTxn(b []byte, t AbortedTxn) {
	binary.BigEndian.PutUint16(b, 0)
	binary.BigEndian.PutUint64(b[2:], uint64(t.ProducerID))
	binary.BigEndian.PutUint64(b[10:], uint64(t.FirstOffset))
	binary.BigEndian.PutUint64(b[18:], uint64(t.LastOffset))
	binary.BigEndian.PutUint64(b[26:], uint64(t.LastStableOffset))
}

// readTxnIndex reads every entry of a segment's .txnindex (missing file:
// none). A version other than 0 or a torn tail is an error.
func readTxnIndex(path string) ([]AbortedTxn, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(data)%txnIndexEntrySize != 0 {
		return nil, fmt.Errorf("%w: %s length %d not a multiple of %d", errIndexCorrupt, path, len(data), txnIndexEntrySize)
	}
	out := make([]AbortedTxn, 0, len(data)/txnIndexEntrySize)
	for p := 0; p < len(data); p += txnIndexEntrySize {
		e := data[p:]
		if v := binary.BigEndian.Uint16(e); v != 0 {
			return nil, fmt.Errorf("%w: %s entry version %d", errIndexCorrupt, path, v)
		}
		out = append(out, AbortedTxn{
			ProducerID:       int64(binary.BigEndian.Uint64(e[2:])),
			FirstOffset:      int64(binary.BigEndian.Uint64(e[10:])),
			LastOffset:       int64(binary.BigEndian.Uint64(e[18:])),
			LastStableOffset: int64(binary.BigEndian.Uint64(e[26:])),
		})
	}
	return out, nil
}

// appendTxnIndex appends one entry to the segment's .txnindex.
func (s *Segment) appendTxnIndex(t AbortedTxn) error {
	s.txnDirty.Store(true)
	f, err := os.OpenFile(segmentPath(s.dir, s.baseOffset, txnIndexFileSuffix), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	var b [txnIndexEntrySize]byte
	encodeAbortedTxn(b[:], t)
	_, err = f.Write(b[:])
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// truncateTxnIndex removes entries with lastOffset >= offset.
func (s *Segment) truncateTxnIndex(offset int64) error {
	path := segmentPath(s.dir, s.baseOffset, txnIndexFileSuffix)
	entries, err := readTxnIndex(path)
	if err != nil || len(entries) == 0 {
		return err
	}
	n := 0
	for n < len(entries) && entries[n].LastOffset < offset {
		n++
	}
	if n == len(entries) {
		return nil
	}
	s.txnDirty.Store(true)
	return os.Truncate(path, int64(n*txnIndexEntrySize))
}

// abortedTxnLocked records an aborted transaction in the active segment.
func (l *Log) abortedTxnLocked(t CompletedTxn) {
	e := AbortedTxn{ProducerID: t.ProducerID, FirstOffset: t.FirstOffset, LastOffset: t.LastOffset, LastStableOffset: t.LastStableOffset}
	if err := l.activeLocked().appendTxnIndex(e); err != nil {
		l.logger.Warn("writing .txnindex entry", "err", err)
	}
}

// CollectAbortedTransactions returns the aborted transactions a
// READ_COMMITTED fetch of [startOffset, upperBound) must report:
// entries with lastOffset >= startOffset and firstOffset < upperBound,
// from the segment holding startOffset onwards, stopping after the first
// segment with an entry whose lastStableOffset >= upperBound.
func (l *Log) CollectAbortedTransactions(startOffset, upperBound int64) ([]AbortedTxn, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	i := l.floorSegmentLocked(startOffset)
	if i < 0 {
		i = 0
	}
	var out []AbortedTxn
	for ; i < len(l.segments); i++ {
		entries, err := readTxnIndex(segmentPath(l.dir, l.segments[i].baseOffset, txnIndexFileSuffix))
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		stop := false
		for _, e := range entries {
			if e.LastOffset >= startOffset && e.FirstOffset < upperBound {
				out = append(out, e)
			}
			if e.LastStableOffset >= upperBound {
				stop = true
			}
		}
		if stop {
			break
		}
	}
	return out, nil
}
