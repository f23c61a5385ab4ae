package storage

// TimeIndex: the sparse timestamp -> offset index of one segment (Kafka's
// TimeIndex). Entries are 12 bytes: timestamp int64, relative offset int32.

import (
	"encoding/binary"
	"fmt"
)

// A time index entry is the timestamp, then the relative offset.
const (
	timeIndexEntrySize   = 12
	timeIndexOffsetField = 8
)

// TimeIndex maps timestamps to offsets.
type TimeIndex struct{ *mmapIndex }

// timeIndexKind: an entry may follow another if its timestamp is larger
// and its offset not smaller.
var timeIndexKind = &indexKind{entrySize: timeIndexEntrySize, offsetField: timeIndexOffsetField,
	ordered: func(a, b []byte) bool {
		return int64(binary.BigEndian.Uint64(b)) > int64(binary.BigEndian.Uint64(a)) &&
			int32(binary.BigEndian.Uint32(b[8:])) >= int32(binary.BigEndian.Uint32(a[8:]))
	}}

func openTimeIndex(path string, baseOffset int64, maxBytes int, active, synced bool) (*TimeIndex, error) {
	x, err := openMmapIndex(path, baseOffset, timeIndexKind, maxBytes, active, synced)
	if err != nil {
		return nil, err
	}
	return &TimeIndex{x}, nil
}

func (x *TimeIndex) entryAtLocked(i int) (int64, int64) {
	e := x.entryLocked(i)
	return int64(binary.BigEndian.Uint64(e)), x.offsetAtLocked(i)
}

func (x *TimeIndex) timestampAtLocked(i int) int64 {
	ts, _ := x.entryAtLocked(i)
	return ts
}

// Entry returns the timestamp and absolute offset of entry i.
func (x *TimeIndex) Entry(i int) (timestamp, offset int64) {
	x.rlockMapped()
	defer x.mu.RUnlock()
	return x.entryAtLocked(i)
}

// LastEntry returns the last entry or (-1, base) when empty.
func (x *TimeIndex) LastEntry() (timestamp, offset int64) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.entries == 0 {
		return -1, x.baseOffset
	}
	return x.entryAtLocked(x.entries - 1)
}

// isFull: the time index reserves its last slot for the entry written
// when the segment rolls or closes.
func (x *TimeIndex) isFull() bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.entries >= x.maxEntries()-1
}

// MaybeAppend adds (ts, offset) if ts is larger than the last entry's
// timestamp. skipFullCheck is used by the final entry on roll/close.
func (x *TimeIndex) MaybeAppend(ts, offset int64, skipFullCheck bool) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !skipFullCheck && x.entries >= x.maxEntries()-1 {
		return fmt.Errorf("storage: time index %s is full", x.path)
	}
	if x.entries > 0 {
		lastTs, lastOff := x.entryAtLocked(x.entries - 1)
		if offset < lastOff {
			return fmt.Errorf("storage: time index entry offset %d below last %d in %s", offset, lastOff, x.path)
		}
		if ts <= lastTs {
			return nil
		}
	} else if ts < 0 {
		return nil
	}
	rel, err := x.relativeOffset(offset)
	if err != nil {
		return err
	}
	if x.entries >= x.maxEntries() {
		return nil // no room even for the final entry; harmless, the segment is read-only now
	}
	if err := x.ensureCapacityLocked(); err != nil {
		return err
	}
	binary.BigEndian.PutUint64(x.scratch[:], uint64(ts))
	binary.BigEndian.PutUint32(x.scratch[timeIndexOffsetField:], rel)
	if err := x.writeEntryLocked(x.entries); err != nil {
		return err
	}
	x.entries++
	return nil
}

// Lookup returns the last entry with timestamp <= target, or (-1, base).
func (x *TimeIndex) Lookup(target int64) (timestamp, offset int64) {
	x.rlockMapped()
	defer x.mu.RUnlock()
	found := x.lastAtMostLocked(target, x.timestampAtLocked)
	if found < 0 {
		return -1, x.baseOffset
	}
	return x.entryAtLocked(found)
}

// sanityCheck is the load-time check of the time index (see
// OffsetIndex.sanityCheck): the first timestamp >= 0 and offset at or
// above the base, the last entry after the first with an offset below
// nextOffset; the walk of every entry (timestamps strictly increase,
// offsets never decrease) runs when the file is first mapped.
func (x *TimeIndex) sanityCheck(nextOffset int64) error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if err := x.quickCheckLocked(); err != nil || x.entries == 0 {
		return err
	}
	if ts, _ := x.entryAtLocked(0); ts < 0 {
		return fmt.Errorf("%w: %s first timestamp %d", errIndexCorrupt, x.path, ts)
	}
	if _, off := x.entryAtLocked(x.entries - 1); off >= nextOffset {
		return fmt.Errorf("%w: %s last offset %d not below %d", errIndexCorrupt, x.path, off, nextOffset)
	}
	return nil
}
