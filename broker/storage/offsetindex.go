package storage

// OffsetIndex: the sparse offset -> position index of one segment (Kafka's
// OffsetIndex). Entries are 8 bytes: relative offset int32, position int32.

import (
	"encoding/binary"
	"fmt"
)

// An offset index entry is the relative offset, then the position.
const (
	offsetIndexEntrySize   = 8
	offsetIndexOffsetField = 0
)

// OffsetIndex maps offsets to byte positions in a segment's .log file.
type OffsetIndex struct{ *mmapIndex }

func openOffsetIndex(path string, baseOffset int64, maxBytes int, active bool) (*OffsetIndex, error) {
	x, err := openMmapIndex(path, baseOffset, offsetIndexEntrySize, offsetIndexOffsetField, maxBytes, active)
	if err != nil {
		return nil, err
	}
	return &OffsetIndex{x}, nil
}

func (x *OffsetIndex) entryAtLocked(i int) (int64, int32) {
	e := x.entryLocked(i)
	return x.offsetAtLocked(i), int32(binary.BigEndian.Uint32(e[4:]))
}

// Entry returns the absolute offset and position of entry i.
func (x *OffsetIndex) Entry(i int) (offset int64, position int32) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.entryAtLocked(i)
}

// LastOffset is the offset of the last entry, or the base offset if empty.
func (x *OffsetIndex) LastOffset() int64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.entries == 0 {
		return x.baseOffset
	}
	off, _ := x.entryAtLocked(x.entries - 1)
	return off
}

// Append adds an entry. Offsets must strictly increase.
func (x *OffsetIndex) Append(offset int64, position int32) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	rel, err := x.relativeOffset(offset)
	if err != nil {
		return err
	}
	if x.entries > 0 {
		last, lastPos := x.entryAtLocked(x.entries - 1)
		if offset <= last || position < lastPos {
			return fmt.Errorf("storage: index entry (%d,%d) not after (%d,%d) in %s", offset, position, last, lastPos, x.path)
		}
	}
	if x.entries >= x.maxEntries() {
		return fmt.Errorf("storage: index %s is full", x.path)
	}
	if err := x.ensureCapacityLocked(); err != nil {
		return err
	}
	binary.BigEndian.PutUint32(x.scratch[:], rel)
	binary.BigEndian.PutUint32(x.scratch[4:], uint32(position))
	if err := x.writeEntryLocked(x.entries); err != nil {
		return err
	}
	x.entries++
	return nil
}

// Lookup returns the last entry with offset <= target, or (base, 0).
func (x *OffsetIndex) Lookup(target int64) (offset int64, position int32) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	found := x.lastAtMostLocked(target, x.offsetAtLocked)
	if found < 0 {
		return x.baseOffset, 0
	}
	return x.entryAtLocked(found)
}

// sanityCheck validates the whole index: length a multiple of 8, every
// entry at or above the base offset, both columns strictly increasing and
// every position inside the .log. Kafka only runs an O(1) check; walking
// the (trimmed, small) file costs little at load and means a damaged index
// is rebuilt instead of steering reads to wrong positions. An untrimmed
// zero tail fails the "increasing" rule.
func (x *OffsetIndex) sanityCheck(logSize int64) error {
	prevOff, prevPos := x.baseOffset-1, int32(-1)
	return x.checkEntries(func(i int) error {
		off, pos := x.entryAtLocked(i)
		if off <= prevOff || pos <= prevPos || int64(pos) >= logSize {
			return fmt.Errorf("%w: %s entry %d (%d, %d) out of order or beyond the log", errIndexCorrupt, x.path, i, off, pos)
		}
		prevOff, prevPos = off, pos
		return nil
	})
}
