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

// offsetIndexKind: an entry may follow another if both its offset and its
// position are larger.
var offsetIndexKind = &indexKind{entrySize: offsetIndexEntrySize, offsetField: offsetIndexOffsetField,
	ordered: func(a, b []byte) bool {
		return int32(binary.BigEndian.Uint32(b)) > int32(binary.BigEndian.Uint32(a)) &&
			int32(binary.BigEndian.Uint32(b[4:])) > int32(binary.BigEndian.Uint32(a[4:]))
	}}

func openOffsetIndex(path string, baseOffset int64, maxBytes int, active, synced bool) (*OffsetIndex, error) {
	x, err := openMmapIndex(path, baseOffset, offsetIndexKind, maxBytes, active, synced)
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
	x.rlockMapped()
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
	x.rlockMapped()
	defer x.mu.RUnlock()
	found := x.lastAtMostLocked(target, x.offsetAtLocked)
	if found < 0 {
		return x.baseOffset, 0
	}
	return x.entryAtLocked(found)
}

// sanityCheck is the load-time check of the index: length a multiple of
// 8, the first entry at or above the base offset with a position >= 0,
// the last after the first with a position inside the .log (O(1), as
// Kafka's). The walk of every entry (both columns strictly increasing)
// runs when the file is first mapped (mapLocked), so together a damaged
// index is never trusted to steer a read; an untrimmed zero tail fails
// the "after the first" rule.
func (x *OffsetIndex) sanityCheck(logSize int64) error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if err := x.quickCheckLocked(); err != nil || x.entries == 0 {
		return err
	}
	if _, pos := x.entryAtLocked(0); pos < 0 {
		return fmt.Errorf("%w: %s first position %d", errIndexCorrupt, x.path, pos)
	}
	if _, pos := x.entryAtLocked(x.entries - 1); int64(pos) >= logSize {
		return fmt.Errorf("%w: %s last position %d beyond the log (%d bytes)", errIndexCorrupt, x.path, pos, logSize)
	}
	return nil
}
