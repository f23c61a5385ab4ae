package replica

import (
	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/storage"
)

// keptPartitionsMax bounds the partitions the slices of a fetchScratch
// keep room for between requests; a larger fetch uses memory of its own.
const keptPartitionsMax = 1 << 14

// fetchScratch is the memory one fetch works in: the request's partitions,
// the reads (at arrival and after a wait), the reads of a parked fetch's
// TryComplete, the purgatory keys and which session partitions returned
// data. A connection keeps one in its network.FetchScratch, so its fetches
// reuse it; what it references is dropped once the response it helped
// build is written (ReleaseReads).
type fetchScratch struct {
	parts    []fetchPart
	reads    readBuf
	tries    readBuf
	keys     []string
	returned []bool
}

// scratchOf returns the fetchScratch kept in kept, making it on first
// use, or a fresh one when there is no kept memory.
func scratchOf(kept *network.FetchScratch) *fetchScratch {
	if kept == nil {
		return new(fetchScratch)
	}
	sc, ok := kept.Slot.(*fetchScratch)
	if !ok {
		sc = new(fetchScratch)
		kept.Slot = sc
	}
	return sc
}

// ReleaseReads drops what the reads and keys of the fetch just answered
// referenced (records, segments, aborted-transaction lists), keeping the
// memory; the connection calls it once the answer is written.
func (sc *fetchScratch) ReleaseReads() {
	sc.reads.reset(0)
	sc.tries.reset(0)
	clear(sc.keys[:cap(sc.keys)])
	sc.keys = sc.keys[:0]
}

// keepParts keeps parts' memory for the next request, unless it is too
// large to keep.
func (sc *fetchScratch) keepParts(parts []fetchPart) {
	if cap(parts) > keptPartitionsMax {
		sc.parts = nil
		return
	}
	sc.parts = parts[:0]
}

// returnedFor returns n flags, all false.
func (sc *fetchScratch) returnedFor(n int) []bool {
	if cap(sc.returned) < n {
		sc.returned = make([]bool, n)
	}
	sc.returned = sc.returned[:n]
	clear(sc.returned)
	return sc.returned
}

// readBuf holds one pass of reads over a fetch's partitions and the file
// ranges their records point to.
type readBuf struct {
	reads []partRead
	files []storage.FileRecords
}

// reset returns n zero reads and file ranges. What the previous pass
// held (records, segments, aborted-transaction lists) is cleared, so the
// kept memory pins none of it.
func (b *readBuf) reset(n int) ([]partRead, []storage.FileRecords) {
	clear(b.reads)
	clear(b.files)
	if cap(b.reads) < n || cap(b.reads) > keptPartitionsMax {
		b.reads = make([]partRead, n)
		b.files = make([]storage.FileRecords, n)
	}
	b.reads, b.files = b.reads[:n], b.files[:n]
	return b.reads, b.files
}
