package storage

// Reading a Log: fetches by offset (Kafka's Log.read) and ListOffsets by
// timestamp (Kafka's Log.fetchOffsetByTimestamp).

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Read returns the bytes starting at the batch holding startOffset, at most
// maxBytes (but one whole batch when minOneMessage) and none at or beyond
// maxOffset (exclusive, e.g. the high watermark). startOffset outside
// [logStartOffset, logEndOffset] is kerr.OffsetOutOfRange.
func (l *Log) Read(startOffset int64, maxBytes int32, maxOffset int64, minOneMessage bool) (FetchData, error) {
	if l.dirFailed.Load() {
		return FetchData{}, l.errOffline()
	}
	fd, err := l.read(startOffset, maxBytes, maxOffset, minOneMessage)
	return fd, l.ioFailed("read", err)
}

func (l *Log) read(startOffset int64, maxBytes int32, maxOffset int64, minOneMessage bool) (FetchData, error) {
	var buf [batchHeaderSize]byte
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return FetchData{}, ErrLogClosed
	}
	leo := l.logEndOffset.Load()
	ls := l.logStartOffset.Load()
	if startOffset < ls || startOffset > leo {
		return FetchData{}, fmt.Errorf("%w: offset %d not in [%d, %d] of %s", kerr.OffsetOutOfRange, startOffset, ls, leo, l.tp)
	}
	empty := FetchData{FirstOffset: -1}
	if maxOffset > leo {
		maxOffset = leo
	}
	if startOffset >= maxOffset {
		return empty, nil
	}
	i := l.floorSegmentLocked(startOffset)
	if i < 0 {
		i = 0
	}
	for ; i < len(l.segments); i++ {
		seg := l.segments[i]
		maxPos := seg.size
		if i+1 >= len(l.segments) || maxOffset < l.segments[i+1].baseOffset {
			// The upper bound falls in this segment: stop before the batch
			// that holds maxOffset.
			bp, found, err := seg.lookup(maxOffset, buf[:])
			if err != nil {
				return FetchData{}, err
			}
			if found {
				maxPos = bp.pos
			}
		}
		recs, first, found, err := seg.read(startOffset, maxBytes, maxPos, minOneMessage, buf[:])
		if err != nil {
			return FetchData{}, err
		}
		if found {
			if recs.Size == 0 {
				return empty, nil
			}
			// Bytes an earlier process wrote are checked before they are
			// first served (verify.go); a corrupt batch never is.
			n, bad, err := seg.checkRead(recs.Pos, recs.Pos+int64(recs.Size))
			if err != nil {
				return FetchData{}, err
			}
			if bad != nil {
				cerr := l.corruptError(seg, bad)
				if n == 0 {
					return FetchData{}, cerr
				}
				recs.Size = int32(n)
			}
			return FetchData{Records: recs, FirstOffset: first}, nil
		}
	}
	return empty, nil
}

// Special ListOffsets timestamps.
const (
	LatestTimestamp   = -1
	EarliestTimestamp = -2
	MaxTimestampQuery = -3
)

// FetchOffsetByTimestamp answers ListOffsets: the first offset whose
// timestamp is >= ts. -2 returns the log start offset, -1 the log end offset
// (the caller substitutes the high watermark / LSO for clients), -3 the
// batch holding the largest timestamp. found is false if no record
// qualifies.
func (l *Log) FetchOffsetByTimestamp(ts int64) (offset int64, timestamp int64, leaderEpoch int32, found bool, err error) {
	if l.dirFailed.Load() {
		return -1, -1, -1, false, l.errOffline()
	}
	offset, timestamp, leaderEpoch, found, err = l.fetchOffsetByTimestamp(ts)
	return offset, timestamp, leaderEpoch, found, l.ioFailed("read", err)
}

func (l *Log) fetchOffsetByTimestamp(ts int64) (offset int64, timestamp int64, leaderEpoch int32, found bool, err error) {
	var buf [batchHeaderSize]byte
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return -1, -1, -1, false, ErrLogClosed
	}
	ls := l.logStartOffset.Load()
	switch ts {
	case EarliestTimestamp:
		ep := int32(-1)
		if es := l.epochs.Entries(); len(es) > 0 && es[0].StartOffset <= ls {
			ep = es[0].Epoch
		}
		return ls, -1, ep, true, nil
	case LatestTimestamp:
		return l.logEndOffset.Load(), -1, l.epochs.LatestEpoch(), true, nil
	case MaxTimestampQuery:
		var best *Segment
		for _, s := range l.segments {
			if best == nil || s.maxTimestampSoFar > best.maxTimestampSoFar {
				best = s
			}
		}
		if best == nil || best.maxTimestampSoFar < 0 {
			return -1, -1, -1, false, nil
		}
		off := best.offsetOfMaxTimestampSoFar
		return off, best.maxTimestampSoFar, l.epochs.EpochForOffset(off), true, nil
	}
	if ts < 0 {
		return -1, -1, -1, false, fmt.Errorf("%w: timestamp %d", kerr.InvalidRequest, ts)
	}
	for _, s := range l.segments {
		if s.LargestTimestamp() < ts {
			continue
		}
		_, o := s.timeIdx.Lookup(ts)
		if o < ls {
			o = ls
		}
		_, pos := s.offsetIdx.Lookup(o)
		p := int64(pos)
		for p < s.size {
			h, err := s.readHeaderInto(p, buf[:])
			if err != nil {
				return -1, -1, -1, false, err
			}
			if h.MaxTimestamp >= ts && h.LastOffset() >= ls {
				off, rts, ok, err := findRecordByTimestamp(s.log, p, h, ts, ls)
				if err != nil {
					return -1, -1, -1, false, err
				}
				if ok {
					return off, rts, h.PartitionLeaderEpoch, true, nil
				}
			}
			p += int64(h.Size())
		}
	}
	return -1, -1, -1, false, nil
}
