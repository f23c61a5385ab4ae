package storage

// Common machinery of the .index and .timeindex files (Kafka's
// AbstractIndex): a flat array of fixed-size entries in a memory-mapped file
// that is preallocated to segment.index.bytes while its segment is active and
// trimmed to the exact entry count when the segment is rolled or closed.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
)

var errIndexCorrupt = errors.New("storage: corrupt index")

type mmapIndex struct {
	path       string
	baseOffset int64
	entrySize  int
	// offsetField is where in an entry its 4-byte offset relative to
	// baseOffset is stored.
	offsetField int

	// mu guards the following. Lookups take it shared; appends, resizes and
	// truncation take it exclusively, so a remap never pulls the mapping out
	// from under a concurrent lookup. The index holds no open file: every
	// operation that needs one opens it (indexfiles.go).
	mu       sync.RWMutex
	closed   bool
	mmap     []byte // len == current file length
	entries  int
	maxBytes int // preallocation target while active
	scratch  [16]byte
}

// openMmapIndex opens or creates an index file. The entry count is the file
// length divided by the entry size (so a file that was not trimmed reads as
// full of zero entries; the sanity check catches that). If active, the
// file is extended to maxBytes rounded down to whole entries.
func openMmapIndex(path string, baseOffset int64, entrySize, offsetField, maxBytes int, active bool) (*mmapIndex, error) {
	maxBytes = maxBytes / entrySize * entrySize
	f, size, err := openSizedFile(path, "index")
	if err != nil {
		return nil, err
	}
	f.Close()
	idx := &mmapIndex{path: path, baseOffset: baseOffset, entrySize: entrySize, offsetField: offsetField, maxBytes: maxBytes}
	idx.entries = int(size) / entrySize
	target := int(size)
	if active && target < maxBytes {
		target = maxBytes
	}
	if err := idx.remapLocked(target); err != nil {
		return nil, err
	}
	if idx.entries*entrySize > len(idx.mmap) {
		idx.entries = len(idx.mmap) / entrySize
	}
	return idx, nil
}

// remapLocked resizes the file to size bytes and maps it again, with a
// descriptor opened for the purpose and closed once mapped.
func (x *mmapIndex) remapLocked(size int) error {
	if x.closed {
		return fmt.Errorf("storage: index %s is closed", x.path)
	}
	if x.mmap != nil {
		if err := syscall.Munmap(x.mmap); err != nil {
			return fmt.Errorf("storage: munmap %s: %w", x.path, err)
		}
		x.mmap = nil
	}
	// The next write opens the file by its name again, in case the name
	// now points at a different file (a swap replaced it).
	indexFiles.forget(x)
	f, err := os.OpenFile(x.path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("storage: open index %s: %w", x.path, err)
	}
	defer f.Close()
	if err := f.Truncate(int64(size)); err != nil {
		return fmt.Errorf("storage: resize %s: %w", x.path, err)
	}
	if size == 0 {
		return nil
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("storage: mmap %s: %w", x.path, err)
	}
	x.mmap = m
	return nil
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
	if need <= len(x.mmap) {
		return nil
	}
	size := x.maxBytes
	if size < need {
		return fmt.Errorf("storage: index %s is full (%d entries)", x.path, x.entries)
	}
	return x.remapLocked(size)
}

// trim truncates the file to the valid entries (on roll and clean close).
func (x *mmapIndex) trim() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.remapLocked(x.entries * x.entrySize)
}

// resize extends (or shrinks) the file to n bytes rounded down to the entry
// size, keeping the valid entries.
func (x *mmapIndex) resize(n int) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	n = n / x.entrySize * x.entrySize
	x.maxBytes = n
	if x.entries*x.entrySize > n {
		x.entries = n / x.entrySize
	}
	return x.remapLocked(n)
}

// reset drops every entry and extends the file back to the maximum size.
func (x *mmapIndex) reset() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.entries = 0
	if err := x.remapLocked(0); err != nil {
		return err
	}
	return x.remapLocked(x.maxBytes)
}

// flush fsyncs the file; on Linux that writes back dirty pages of the
// shared mapping as well.
func (x *mmapIndex) flush() error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return nil
	}
	e, err := indexFiles.acquire(x)
	if err != nil {
		return err
	}
	defer indexFiles.release(e)
	return e.f.Sync()
}

func (x *mmapIndex) close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil
	}
	x.closed = true
	indexFiles.forget(x)
	var err error
	if x.mmap != nil {
		err = syscall.Munmap(x.mmap)
		x.mmap = nil
	}
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
// pwrite rather than through the mapping. A store into a page of the
// preallocated (sparse) file takes a page fault whose filesystem work
// (block reservation, journal) cost milliseconds per new page on ext4,
// which landed on the produce path every 512 entries and on the first
// append of every segment; pwrite into the same hole costs microseconds.
// Reads keep using the mapping: on Linux a MAP_SHARED mapping and
// pwrite share the page cache, so the entry is visible at once.
func (x *mmapIndex) writeEntryLocked(i int) error {
	e, err := indexFiles.acquire(x)
	if err != nil {
		return err
	}
	defer indexFiles.release(e)
	if _, err := e.f.WriteAt(x.scratch[:x.entrySize], int64(i*x.entrySize)); err != nil {
		return fmt.Errorf("storage: write index %s: %w", x.path, err)
	}
	return nil
}

// entryLocked returns the bytes of entry i.
func (x *mmapIndex) entryLocked(i int) []byte {
	return x.mmap[i*x.entrySize : (i+1)*x.entrySize]
}

// lastAtMostLocked returns the index of the last entry whose key is at
// most target, or -1; entries are sorted by key (offset for the offset
// index, timestamp for the time index).
func (x *mmapIndex) lastAtMostLocked(target int64, key func(i int) int64) int {
	lo, hi := 0, x.entries-1
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

// TruncateTo removes every entry with offset >= offset.
func (x *mmapIndex) TruncateTo(offset int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	n := x.entries
	for n > 0 && x.offsetAtLocked(n-1) >= offset {
		n--
	}
	x.entries = n
}

// checkEntries is the sanity check both indexes share: the file holds a
// whole number of entries, and check accepts every entry in order. check
// runs under the read lock.
func (x *mmapIndex) checkEntries(check func(i int) error) error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if len(x.mmap)%x.entrySize != 0 {
		return fmt.Errorf("%w: %s length %d not a multiple of %d", errIndexCorrupt, x.path, len(x.mmap), x.entrySize)
	}
	for i := 0; i < x.entries; i++ {
		if err := check(i); err != nil {
			return err
		}
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
