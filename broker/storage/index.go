package storage

// Common machinery of the .index and .timeindex files (Kafka's
// AbstractIndex): a flat array of fixed-size entries in a file that is
// preallocated to segment.index.bytes while its segment is active and
// trimmed to the exact entry count when the segment is rolled or closed.
//
// An index is mapped lazily, as Kafka 2.1+'s LazyIndex: opening one reads
// its length and its first and last entries with pread and keeps no
// descriptor and no mapping. Appends go through pwrite (writeEntryLocked)
// and compare against the cached last entry; a lookup at or past the last
// entry (every fetch at the log end) is answered from that cache. Only a
// lookup that needs an earlier entry maps the file (mapLocked), and any
// change of the file's size unmaps it again, so an idle or tail-read
// replica holds no memory map: 10,000 replicas on each of three brokers
// stay far below vm.max_map_count (65,530). If the mapping cannot be made
// (out of map areas or descriptors) lookups fall back on the last entry
// alone, which is still a correct lower bound for the scan that follows.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
)

var errIndexCorrupt = errors.New("storage: corrupt index")

// indexKind is what differs between the offset and the time index.
type indexKind struct {
	entrySize int
	// offsetField is where in an entry its 4-byte offset relative to
	// the base offset is stored.
	offsetField int
	// ordered reports whether entry b may follow entry a.
	ordered func(a, b []byte) bool
}

type mmapIndex struct {
	path       string
	baseOffset int64
	entrySize  int
	// offsetField is where in an entry its 4-byte offset relative to
	// baseOffset is stored.
	offsetField int
	kind        *indexKind

	// mu guards the following. Lookups take it shared; appends, resizes and
	// truncation take it exclusively, so an unmap never pulls the mapping
	// out from under a concurrent lookup. The index holds no open file:
	// every operation that needs one opens it (indexfiles.go).
	mu      sync.RWMutex
	closed  bool
	size    int    // the file's length
	mmap    []byte // nil, or the whole file (len == size) once a lookup needed it
	entries int
	// first and last hold the first and the last entry (valid while
	// entries > 0), so appends and tail lookups need no mapping.
	first, last [16]byte
	// unchecked: the entries came from disk and their order has not been
	// walked yet; the walk runs when the file is first mapped (see
	// mapLocked). The O(1) checks run at load (sanityCheck).
	unchecked bool
	maxBytes  int // preallocation target while active
	// dirty: the file was written, extended or cut since its last fsync
	// (or, for a file not known to be durable, since it was opened);
	// flush fsyncs only a dirty file. Set under mu held exclusively,
	// cleared by flush.
	dirty   atomic.Bool
	scratch [16]byte
}

// openMmapIndex opens or creates an index file. The entry count is the file
// length divided by the entry size (so a file that was not trimmed reads as
// full of zero entries; the sanity check catches that). If active, the
// file is extended to maxBytes rounded down to whole entries. Nothing is
// mapped and no descriptor stays open.
//
// synced tells that the file as found is durable: it was just created
// (an empty file's existence is made durable by the fsync of its
// directory), or it was loaded after a clean shutdown, which fsync'd it.
func openMmapIndex(path string, baseOffset int64, kind *indexKind, maxBytes int, active, synced bool) (*mmapIndex, error) {
	entrySize := kind.entrySize
	maxBytes = maxBytes / entrySize * entrySize
	f, size, err := openSizedFile(path, "index")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	idx := &mmapIndex{path: path, baseOffset: baseOffset, entrySize: entrySize, offsetField: kind.offsetField,
		kind: kind, maxBytes: maxBytes, size: int(size)}
	idx.dirty.Store(!synced)
	idx.entries = int(size) / entrySize
	if idx.entries > 0 {
		if _, err := f.ReadAt(idx.first[:entrySize], 0); err != nil {
			return nil, fmt.Errorf("storage: read index %s: %w", path, err)
		}
		if _, err := f.ReadAt(idx.last[:entrySize], int64((idx.entries-1)*entrySize)); err != nil {
			return nil, fmt.Errorf("storage: read index %s: %w", path, err)
		}
		idx.unchecked = idx.entries > 2
	}
	if active && int(size) < maxBytes {
		if err := f.Truncate(int64(maxBytes)); err != nil {
			return nil, fmt.Errorf("storage: resize %s: %w", path, err)
		}
		idx.size = maxBytes
		idx.dirty.Store(true)
	}
	return idx, nil
}

// resizeFileLocked unmaps the index and sets its file's length to size,
// through a descriptor opened for the purpose. The next write opens the
// file by its name again, in case the name now points at a different
// file (a swap replaced it).
func (x *mmapIndex) resizeFileLocked(size int, zero bool) error {
	if x.closed {
		return fmt.Errorf("storage: index %s is closed", x.path)
	}
	if err := x.unmapLocked(); err != nil {
		return err
	}
	indexFiles.forget(x)
	f, err := os.OpenFile(x.path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("storage: open index %s: %w", x.path, err)
	}
	defer f.Close()
	if zero {
		if err := f.Truncate(0); err != nil {
			return fmt.Errorf("storage: resize %s: %w", x.path, err)
		}
	}
	x.dirty.Store(true)
	if err := f.Truncate(int64(size)); err != nil {
		return fmt.Errorf("storage: resize %s: %w", x.path, err)
	}
	x.size = size
	return nil
}

func (x *mmapIndex) unmapLocked() error {
	if x.mmap == nil {
		return nil
	}
	err := syscall.Munmap(x.mmap)
	x.mmap = nil
	mappedIndexes.Add(-1)
	if err != nil {
		return fmt.Errorf("storage: munmap %s: %w", x.path, err)
	}
	return nil
}

// mapLocked maps the whole file, with a descriptor closed once mapped.
// The first mapping of entries loaded from disk walks them (each must be
// ordered after the one before); an index that fails is emptied, with a
// warning, since a lookup through it could point past the batch it
// looks for: its segment is then scanned from the start, which is slow
// but right.
func (x *mmapIndex) mapLocked() error {
	if x.mmap != nil || x.closed || x.size == 0 {
		return nil
	}
	f, err := os.OpenFile(x.path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("storage: open index %s: %w", x.path, err)
	}
	defer f.Close()
	m, err := syscall.Mmap(int(f.Fd()), 0, x.size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("storage: mmap %s: %w", x.path, err)
	}
	x.mmap = m
	mappedIndexes.Add(1)
	if x.unchecked {
		x.unchecked = false
		for i := 1; i < x.entries; i++ {
			if !x.kind.ordered(x.entryLocked(i-1), x.entryLocked(i)) {
				slog.Warn("ignoring a corrupt index: its segment is scanned from the start", "index", x.path,
					"entry", i, "err", errIndexCorrupt)
				x.entries = 0
				break
			}
		}
	}
	return nil
}

// mappedIndexes counts the index mappings of the process (tests, metrics).
var mappedIndexes atomic.Int64

// rlockMapped takes x.mu shared with the entries readable: an index with
// entries before its last one is mapped first. If that fails the index
// stays unmapped and readers use the last entry only (lastAtMostLocked).
func (x *mmapIndex) rlockMapped() {
	x.mu.RLock()
	if x.entries <= 1 || x.mmap != nil || x.closed {
		return
	}
	x.mu.RUnlock()
	x.mu.Lock()
	if x.entries > 1 {
		if err := x.mapLocked(); err != nil {
			slog.Warn("cannot map index; looking up from its last entry only", "index", x.path, "err", err)
		}
	}
	x.mu.Unlock()
	x.mu.RLock()
}

func (x *mmapIndex) maxEntries() int { return x.maxBytes / x.entrySize }

// isFull reports whether no more entries fit.
func (x *mmapIndex) isFull() bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.entries >= x.maxEntries()
}

func (x *mmapIndex) numEntries() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.entries
}

// isMapped reports whether the file is mapped now (tests).
func (x *mmapIndex) isMapped() bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.mmap != nil
}

// sizeInBytes is the size of the valid entries.
func (x *mmapIndex) sizeInBytes() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.entries * x.entrySize
}

// ensureCapacityLocked makes room for one more entry (used when a trimmed
// index of a re-activated segment gets a new entry).
func (x *mmapIndex) ensureCapacityLocked() error {
	need := (x.entries + 1) * x.entrySize
	if need <= x.size {
		return nil
	}
	size := x.maxBytes
	if size < need {
		return fmt.Errorf("storage: index %s is full (%d entries)", x.path, x.entries)
	}
	return x.resizeFileLocked(size, false)
}

// trim truncates the file to the valid entries (on roll and clean close).
// A file already that long is left alone: truncating it to its own length
// would still change its times, which makes the fsync after it commit a
// journal transaction for nothing.
func (x *mmapIndex) trim() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.size == x.entries*x.entrySize && !x.closed {
		return nil
	}
	return x.resizeFileLocked(x.entries*x.entrySize, false)
}

// resize extends (or shrinks) the file to n bytes rounded down to the entry
// size, keeping the valid entries.
func (x *mmapIndex) resize(n int) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	n = n / x.entrySize * x.entrySize
	x.maxBytes = n
	if x.entries*x.entrySize > n {
		if err := x.setEntriesLocked(n / x.entrySize); err != nil {
			return err
		}
	}
	return x.resizeFileLocked(n, false)
}

// reactivate sets the maximum size to n rounded down to whole entries;
// the file keeps its length until an entry needs room (or is cut to n if
// longer).
func (x *mmapIndex) reactivate(n int) error {
	x.mu.Lock()
	n = n / x.entrySize * x.entrySize
	longer := x.size > n
	if !longer {
		x.maxBytes = n
	}
	x.mu.Unlock()
	if longer {
		return x.resize(n)
	}
	return nil
}

// setEntriesLocked drops the entries from n on and reloads the cached
// last entry.
func (x *mmapIndex) setEntriesLocked(n int) error {
	if n >= x.entries {
		return nil
	}
	if n > 0 {
		if x.mmap == nil {
			if err := x.mapLocked(); err != nil {
				return err
			}
		}
		if n > x.entries { // the first mapping found the entries corrupt
			return nil
		}
		copy(x.last[:x.entrySize], x.entryLocked(n-1))
	}
	x.entries = n
	return nil
}

// reset drops every entry and extends the file back to the maximum size,
// zeroed.
func (x *mmapIndex) reset() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.entries = 0
	x.unchecked = false
	return x.resizeFileLocked(x.maxBytes, true)
}

// flush fsyncs the file if it is dirty: a file not written, extended or
// cut since its last fsync has nothing to make durable. The flag is
// cleared before the fsync, so a write during it marks the file again;
// a failed fsync marks it again too.
func (x *mmapIndex) flush() error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed || !x.dirty.Swap(false) {
		return nil
	}
	e, err := indexFiles.acquire(x)
	if err != nil {
		x.dirty.Store(true)
		return err
	}
	defer indexFiles.release(e)
	if err := e.f.Sync(); err != nil {
		x.dirty.Store(true)
		return err
	}
	return nil
}

func (x *mmapIndex) close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil
	}
	indexFiles.forget(x)
	err := x.unmapLocked()
	x.closed = true
	return err
}

func (x *mmapIndex) renameTo(path string) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := os.Rename(x.path, path); err != nil && !os.IsNotExist(err) {
		return err
	}
	x.path = path
	return nil
}

// writeEntryLocked stores entry i (entrySize bytes in x.scratch) with
// pwrite rather than through a mapping, and makes it the cached last
// entry. A store into a page of the preallocated (sparse) file takes a
// page fault whose filesystem work (block reservation, journal) cost
// milliseconds per new page on ext4, which landed on the produce path
// every 512 entries and on the first append of every segment; pwrite into
// the same hole costs microseconds. A mapping made for a lookup sees the
// entry at once: on Linux a MAP_SHARED mapping and pwrite share the page
// cache.
func (x *mmapIndex) writeEntryLocked(i int) error {
	e, err := indexFiles.acquire(x)
	if err != nil {
		return err
	}
	defer indexFiles.release(e)
	x.dirty.Store(true)
	if _, err := e.f.WriteAt(x.scratch[:x.entrySize], int64(i*x.entrySize)); err != nil {
		return fmt.Errorf("storage: write index %s: %w", x.path, err)
	}
	if i == 0 {
		copy(x.first[:], x.scratch[:x.entrySize])
	}
	copy(x.last[:], x.scratch[:x.entrySize])
	return nil
}

// entryLocked returns the bytes of entry i: the cached first or last
// entry, or the mapping's (callers needing other entries use rlockMapped
// and check x.mmap).
func (x *mmapIndex) entryLocked(i int) []byte {
	switch {
	case x.mmap != nil:
		return x.mmap[i*x.entrySize : (i+1)*x.entrySize]
	case i == x.entries-1:
		return x.last[:x.entrySize]
	case i == 0:
		return x.first[:x.entrySize]
	}
	// Unmapped (the mapping failed) and not the first or last entry:
	// read it from the file, or give the zero entry (base offset,
	// position or timestamp 0), a lower bound of every entry.
	b := make([]byte, x.entrySize)
	if f, err := os.Open(x.path); err == nil {
		f.ReadAt(b, int64(i*x.entrySize))
		f.Close()
	}
	return b
}

// lastAtMostLocked returns the index of the last entry whose key is at
// most target, or -1; entries are sorted by key (offset for the offset
// index, timestamp for the time index). An unmapped index answers from
// its last entry alone (the tail lookups that never map, or a failed
// mapping): the last entry if it qualifies, else none.
func (x *mmapIndex) lastAtMostLocked(target int64, key func(i int) int64) int {
	if x.entries == 0 {
		return -1
	}
	if key(x.entries-1) <= target {
		return x.entries - 1
	}
	if x.mmap == nil {
		return -1
	}
	lo, hi := 0, x.entries-2
	found := -1
	for lo <= hi {
		mid := int(uint(lo+hi) >> 1)
		if key(mid) <= target {
			found = mid
			lo = mid + 1
		} else {
			hi = mid - 1
		}
	}
	return found
}

// offsetAtLocked returns the absolute offset stored in entry i.
func (x *mmapIndex) offsetAtLocked(i int) int64 {
	return x.baseOffset + int64(int32(binary.BigEndian.Uint32(x.entryLocked(i)[x.offsetField:])))
}

// TruncateTo removes every entry with offset >= offset. If the entries
// cannot be mapped, all are dropped: an index is only a hint.
func (x *mmapIndex) TruncateTo(offset int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.entries == 0 || x.offsetAtLocked(x.entries-1) < offset {
		return
	}
	if x.entries > 1 && x.mmap == nil {
		if err := x.mapLocked(); err != nil {
			slog.Warn("cannot map index to truncate it; dropping its entries", "index", x.path, "err", err)
			x.entries = 0
			return
		}
	}
	n := x.entries
	for n > 0 && x.offsetAtLocked(n-1) >= offset {
		n--
	}
	if n > 0 {
		copy(x.last[:x.entrySize], x.entryLocked(n-1))
	}
	x.entries = n
}

// quickCheckLocked is the load-time check both indexes share: the file
// holds a whole number of entries, the first entry is not below the base
// offset and the last may follow the first. Together with the walk of
// every entry when the file is first mapped it checks every pair.
func (x *mmapIndex) quickCheckLocked() error {
	if x.size%x.entrySize != 0 {
		return fmt.Errorf("%w: %s length %d not a multiple of %d", errIndexCorrupt, x.path, x.size, x.entrySize)
	}
	if x.entries == 0 {
		return nil
	}
	if x.offsetAtLocked(0) < x.baseOffset {
		return fmt.Errorf("%w: %s first entry below base offset %d", errIndexCorrupt, x.path, x.baseOffset)
	}
	if x.entries > 1 && !x.kind.ordered(x.first[:x.entrySize], x.last[:x.entrySize]) {
		return fmt.Errorf("%w: %s last entry not after the first", errIndexCorrupt, x.path)
	}
	return nil
}

// relativeOffset is offset minus the base offset, which an entry stores
// in 4 bytes.
func (x *mmapIndex) relativeOffset(offset int64) (uint32, error) {
	rel := offset - x.baseOffset
	if rel < 0 || rel > maxRelativeOffset {
		return 0, fmt.Errorf("storage: offset %d not relative to base %d", offset, x.baseOffset)
	}
	return uint32(rel), nil
}
