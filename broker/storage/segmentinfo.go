package storage

// SegmentInfo is a segment as the classic .log/.index figures draw it, for
// the web console: its base offset, its .log size, and the first entries of
// its sparse offset index.
type SegmentInfo struct {
	BaseOffset int64
	Size       int64
	// IndexEntries is the number of entries in the .index file.
	IndexEntries int
	// Index holds up to the asked number of entries, oldest first.
	Index []IndexEntry
}

// IndexEntry is one offset index entry: an absolute offset and the byte
// position of its batch in the .log file.
type IndexEntry struct {
	Offset   int64
	Position int32
}

// SegmentInfos describes up to maxSegments segments (the newest ones),
// each with at most maxEntries index entries. Lock order: Log.mu, then the
// index's own lock, as appends take them.
func (l *Log) SegmentInfos(maxSegments, maxEntries int) []SegmentInfo {
	l.mu.RLock()
	defer l.mu.RUnlock()
	segs := l.segments
	if len(segs) > maxSegments {
		segs = segs[len(segs)-maxSegments:]
	}
	out := make([]SegmentInfo, 0, len(segs))
	for _, s := range segs {
		si := SegmentInfo{BaseOffset: s.baseOffset, Size: s.size}
		if x := s.offsetIdx; x != nil {
			x.rlockMapped()
			si.IndexEntries = x.entries
			n := min(x.entries, maxEntries)
			if x.mmap == nil && n > 1 {
				n = 0 // could not be mapped: list no entries
			}
			for i := 0; i < n; i++ {
				off, pos := x.entryAtLocked(i)
				si.Index = append(si.Index, IndexEntry{Offset: off, Position: pos})
			}
			x.mu.RUnlock()
		}
		out = append(out, si)
	}
	return out
}
