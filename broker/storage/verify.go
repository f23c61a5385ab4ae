package storage

// Checking batches before they are first served (issue 14, part 3: "a
// segment corrupted in the middle is detected by its CRC on read and never
// served as data").
//
// Kafka 2.8 does not check CRCs when it serves a fetch: its consumers check
// them (check.crcs), its followers check them before appending
// (AbstractFetcherThread logs a CorruptRecordException and retries the
// partition later) and recovery checks the segments past the recovery
// point. Klassik serves fetches with sendfile, so a CRC over every byte of
// every fetch would cost what the zero-copy path saves. It checks each
// batch once per process instead, and only where it has to:
//
//   - bytes this process appended were validated before the append (a
//     client's batches by record.ValidateBatch, a follower's by
//     Log.validate), and bytes that crash recovery re-read had their CRC
//     checked there: both are trusted;
//   - bytes that were already in a segment file when the segment was
//     opened and were not recovered lie below the segment's unverifiedEnd.
//     Before a read hands out any of them, every batch the read covers is
//     checked once (a pread and CRC-32C) and its range is remembered in
//     verifiedRanges, so later reads of it cost one lookup; once the whole
//     prefix is checked unverifiedEnd drops to 0 and reads cost one atomic
//     load.
//
// A batch that fails its check (or whose header is malformed) is never
// served: a read that reaches it stops before it, a read that starts at it
// answers CORRUPT_MESSAGE, and the broker logs an ERROR naming the segment
// file and the position (once per batch). CORRUPT_MESSAGE rather than
// KAFKA_STORAGE_ERROR: the directory is readable, so it stays online, and
// clients that get KAFKA_STORAGE_ERROR refresh their metadata and retry
// the same leader without a word, forever; the Java consumer raises
// CORRUPT_MESSAGE to the application ("Encountered corrupt message when
// fetching offset ..."), librdkafka reports it as a consumer error, and a
// follower logs it and retries after replica.fetch.backoff.ms without
// appending anything (it falls out of the ISR if the leader keeps it).
//
// The segment is not marked for recovery: recovery truncates a log at its
// first invalid batch and deletes everything after it, which on a leader
// would drop acknowledged records the followers still hold. The operator
// decides (move leadership away and rebuild the replica, or delete the
// records up to the damage).

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"
)

// posRange is a byte range [start, end) of a segment file.
type posRange struct{ start, end int64 }

// maxVerifiedRanges bounds the ranges one segment remembers: readers
// scattered over an old segment could otherwise grow the set without
// limit. Forgetting a range only means checking it again.
const maxVerifiedRanges = 32

// verifiedRanges is the set of byte ranges of one segment whose batches
// passed their check, kept sorted and disjoint; adjacent ranges merge.
type verifiedRanges struct {
	// mu guards the following.
	mu sync.Mutex
	r  []posRange
}

// coveredTo returns the end of the range holding pos, or pos if no range
// holds it.
func (v *verifiedRanges) coveredTo(pos int64) int64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	i, _ := slices.BinarySearchFunc(v.r, pos, func(r posRange, p int64) int {
		switch {
		case r.end <= p:
			return -1
		case r.start > p:
			return 1
		}
		return 0
	})
	if i < len(v.r) && v.r[i].start <= pos && pos < v.r[i].end {
		return v.r[i].end
	}
	return pos
}

// add records [start, end) as checked, merging it with the ranges it
// overlaps or touches; beyond maxVerifiedRanges the shortest other range
// is forgotten.
func (v *verifiedRanges) add(start, end int64) {
	if end <= start {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	// The first range that ends at or after start, and the first that
	// starts after end: everything in between merges with [start, end).
	i := 0
	for i < len(v.r) && v.r[i].end < start {
		i++
	}
	j := i
	for j < len(v.r) && v.r[j].start <= end {
		start = min(start, v.r[j].start)
		end = max(end, v.r[j].end)
		j++
	}
	v.r = slices.Replace(v.r, i, j, posRange{start, end})
	if len(v.r) > maxVerifiedRanges {
		drop := -1
		for k, r := range v.r {
			if k != i && (drop < 0 || r.end-r.start < v.r[drop].end-v.r[drop].start) {
				drop = k
			}
		}
		v.r = slices.Delete(v.r, drop, drop+1)
	}
}

// truncate forgets everything at or beyond size.
func (v *verifiedRanges) truncate(size int64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	k := 0
	for _, r := range v.r {
		if r.start >= size {
			break
		}
		r.end = min(r.end, size)
		v.r[k] = r
		k++
	}
	v.r = v.r[:k]
}

// readCheck is a segment's record of which of its bytes still need a check
// before they are served.
type readCheck struct {
	// unverifiedEnd: bytes below it were in the file when the segment was
	// opened and were not recovered, so they are checked before they are
	// served; 0 once all of them were. Set at open, lowered by truncation
	// and recovery (under the Log's write lock) and by readers when the
	// whole prefix has been checked.
	unverifiedEnd atomic.Int64
	verified      verifiedRanges
	// loggedCorrupt is 1 + the position of the last corrupt batch logged
	// (0: none), so each one is logged once, not on every fetch.
	loggedCorrupt atomic.Int64
}

// init marks the first size bytes (those on disk at open) as unchecked.
func (c *readCheck) init(size int64) { c.unverifiedEnd.Store(size) }

// trustAll marks every byte as checked (recovery checked every CRC).
func (c *readCheck) trustAll() {
	c.unverifiedEnd.Store(0)
	c.verified.truncate(0)
}

// truncate follows the segment's .log being cut to size: bytes appended
// from there on are this process's own.
func (c *readCheck) truncate(size int64) {
	if c.unverifiedEnd.Load() > size {
		c.unverifiedEnd.Store(size)
	}
	c.verified.truncate(size)
}

// crcBufs are the scratch buffers that stream a batch through CRC-32C; only
// reads of unchecked bytes take one.
var crcBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// corruptBatch describes a batch that failed its check.
type corruptBatch struct {
	pos    int64
	reason string
}

// checkRead checks the batches of s that start in [pos, end) and are not
// yet known to be good (see the file comment) and returns how many bytes
// from pos may be served: end-pos when all are good, else up to the first
// bad batch, which is described in bad. err is an I/O error reading the
// file. Callers hold the owning Log's lock (shared is enough).
func (s *Segment) checkRead(pos, end int64) (n int64, bad *corruptBatch, err error) {
	ue := s.check.unverifiedEnd.Load()
	if pos >= ue {
		return end - pos, nil, nil // the common case: this process's bytes
	}
	var hdr [batchHeaderSize]byte
	var bufp *[]byte
	defer func() {
		if bufp != nil {
			crcBufs.Put(bufp)
		}
	}()
	p := pos
	for p < end && p < ue {
		if c := s.check.verified.coveredTo(p); c > p {
			p = c
			continue
		}
		h, herr := s.readHeaderInto(p, hdr[:])
		if herr != nil {
			if IsIOError(herr) {
				return p - pos, nil, herr
			}
			return p - pos, &corruptBatch{pos: p, reason: herr.Error()}, nil
		}
		if bufp == nil {
			bufp = crcBufs.Get().(*[]byte)
		}
		ok, cerr := checkCRCAt(s.log, p, h, *bufp)
		if cerr != nil {
			return p - pos, nil, cerr
		}
		if !ok {
			return p - pos, &corruptBatch{pos: p, reason: fmt.Sprintf("batch at offset %d fails its CRC-32C check", h.BaseOffset)}, nil
		}
		s.check.verified.add(p, p+int64(h.Size()))
		p += int64(h.Size())
	}
	if s.check.verified.coveredTo(0) >= ue {
		s.check.unverifiedEnd.CompareAndSwap(ue, 0)
	}
	return end - pos, nil, nil
}

// corruptError logs bad (once per batch) and returns the error a read
// that starts at it answers.
func (l *Log) corruptError(s *Segment, bad *corruptBatch) error {
	if s.check.loggedCorrupt.Swap(bad.pos+1) != bad.pos+1 {
		// The log's logger names the topic and partition.
		l.logger.Error("corrupt record batch in segment, not served",
			"file", s.log.Name(), "position", bad.pos, "reason", bad.reason)
	}
	return fmt.Errorf("%w: %s position %d: %s", kerr.CorruptMessage, s.log.Name(), bad.pos, bad.reason)
}
