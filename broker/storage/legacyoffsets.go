package storage

import "sort"

// FetchOffsetsBefore answers ListOffsets v0 (max_num_offsets, Kafka's
// fetchOffsetsBefore): candidates are (max(base, logStart), .log mtime) per
// segment plus (logEnd, now) when the active segment is non-empty; pick the
// newest candidate whose time <= ts (-1: the newest, -2: the oldest) and
// return up to maxNum offsets walking backwards, in descending order.
func (l *Log) FetchOffsetsBefore(ts int64, maxNum int) []int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed || maxNum <= 0 {
		return nil
	}
	type cand struct{ off, ms int64 }
	ls := l.logStartOffset.Load()
	cands := make([]cand, 0, len(l.segments)+1)
	for _, s := range l.segments {
		c := cand{off: max(s.baseOffset, ls)}
		if fi, err := s.log.Stat(); err == nil {
			c.ms = fi.ModTime().UnixMilli()
		}
		cands = append(cands, c)
	}
	if len(l.segments) > 0 && l.activeLocked().size > 0 {
		cands = append(cands, cand{off: l.logEndOffset.Load(), ms: l.clock().UnixMilli()})
	}
	start := len(cands) - 1
	switch ts {
	case LatestTimestamp:
	case EarliestTimestamp:
		start = 0
	default:
		for start >= 0 && cands[start].ms > ts {
			start--
		}
	}
	n := min(maxNum, start+1)
	out := make([]int64, 0, max(n, 0))
	for j := 0; j < n; j++ {
		out = append(out, cands[start].off)
		start--
	}
	sort.Slice(out, func(i, j int) bool { return out[i] > out[j] })
	return out
}
