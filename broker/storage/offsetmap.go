package storage

// OffsetMap: the cleaner's bounded key -> latest offset table (Kafka's
// SkimpyOffsetMap). Memory is fixed at creation: a flat byte
// array of 24-byte slots, each the MD5 of a key followed by the latest
// offset seen for it. Keys are identified by their hash only; a collision
// lets the later offset win for both keys, which Kafka accepts as
// astronomically unlikely with 128-bit hashes.

import (
	"crypto/md5"
	"encoding/binary"
	"fmt"
)

const (
	offsetMapHashSize  = md5.Size // 16
	offsetMapEntrySize = offsetMapHashSize + 8
)

// OffsetMap is not safe for concurrent use; each cleaner goroutine owns one.
type OffsetMap struct {
	slots   []byte
	nslots  int
	entries int
	latest  int64 // largest offset ever put, -1 if none
	// lookups and probes count hash-table work, for the cleaner's stats.
	lookups, probes int64
}

// NewOffsetMap allocates a map using memory bytes (at least one slot).
func NewOffsetMap(memory int) *OffsetMap {
	n := memory / offsetMapEntrySize
	if n < 1 {
		n = 1
	}
	return &OffsetMap{slots: make([]byte, n*offsetMapEntrySize), nslots: n, latest: -1}
}

// Slots is the capacity in entries.
func (m *OffsetMap) Slots() int { return m.nslots }

// Size is the number of distinct key hashes stored.
func (m *OffsetMap) Size() int { return m.entries }

// LatestOffset is the largest offset put since the last Clear, -1 if none.
func (m *OffsetMap) LatestOffset() int64 { return m.latest }

// Utilization is Size/Slots.
func (m *OffsetMap) Utilization() float64 { return float64(m.entries) / float64(m.nslots) }

// Clear empties the map for the next cleaning pass.
func (m *OffsetMap) Clear() {
	clear(m.slots)
	m.entries, m.latest, m.lookups, m.probes = 0, -1, 0, 0
}

// slotFor returns the byte position of the attempt-th probe for hash h.
// The first probes take successive 4-byte windows of the hash as the slot
// number; once the windows run out, the last window is stepped linearly,
// so every slot is eventually visited.
func (m *OffsetMap) slotFor(h *[offsetMapHashSize]byte, attempt int) int {
	win := min(attempt, offsetMapHashSize-4)
	probe := int64(binary.BigEndian.Uint32(h[win:])) + int64(max(0, attempt-(offsetMapHashSize-4)))
	return int(probe%int64(m.nslots)) * offsetMapEntrySize
}

func isZeroHash(b []byte) bool {
	for _, c := range b[:offsetMapHashSize] {
		if c != 0 {
			return false
		}
	}
	return true
}

// Put records offset as the latest offset of key. It fails only when every
// slot holds another key; the cleaner stops filling well before that
// (log.cleaner.io.buffer.load.factor).
func (m *OffsetMap) Put(key []byte, offset int64) error {
	h := keyHash(key)
	slot, empty := m.find(&h)
	if slot == nil {
		return fmt.Errorf("storage: offset map full (%d slots)", m.nslots)
	}
	if empty {
		copy(slot, h[:])
		m.entries++
	}
	binary.BigEndian.PutUint64(slot[offsetMapHashSize:], uint64(offset))
	m.latest = max(m.latest, offset)
	return nil
}

// Get returns the latest offset stored for key, or -1.
func (m *OffsetMap) Get(key []byte) int64 {
	h := keyHash(key)
	slot, empty := m.find(&h)
	if slot == nil || empty {
		return -1
	}
	return int64(binary.BigEndian.Uint64(slot[offsetMapHashSize:]))
}

// keyHash is the MD5 of key as the map stores it. The all-zero hash marks
// an empty slot, so the (practically impossible) real one is nudged to
// stay distinguishable.
func keyHash(key []byte) [offsetMapHashSize]byte {
	h := md5.Sum(key)
	if isZeroHash(h[:]) {
		h[offsetMapHashSize-1] = 1
	}
	return h
}

// find probes for hash h: it returns the slot holding h (empty false), or
// the first empty slot on h's probe sequence (empty true), or nil when
// every probed slot holds another hash.
func (m *OffsetMap) find(h *[offsetMapHashSize]byte) (slot []byte, empty bool) {
	m.lookups++
	for attempt := 0; attempt < m.nslots+offsetMapHashSize; attempt++ {
		m.probes++
		p := m.slotFor(h, attempt)
		slot := m.slots[p : p+offsetMapEntrySize]
		if isZeroHash(slot) {
			return slot, true
		}
		if [offsetMapHashSize]byte(slot[:offsetMapHashSize]) == *h {
			return slot, false
		}
	}
	return nil, false
}
