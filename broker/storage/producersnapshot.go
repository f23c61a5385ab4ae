package storage

// Producer-state snapshots (Kafka's ProducerStateManager snapshot half):
// one file per snapshot offset, <offset>.snapshot, holding every
// producer's last batch in Kafka's version 1 layout, and the list of them
// the manager keeps.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ProducerSnapshotSuffix is the file suffix of producer-state snapshots.
const ProducerSnapshotSuffix = ".snapshot"

// Producer snapshot layout, version 1: version int16, CRC-32C int32 of
// every byte after it, entry count int32, then 46-byte entries (producer
// id int64, epoch int16, last sequence int32, last offset int64, offset
// delta int32, timestamp int64, coordinator epoch int32, current
// transaction first offset int64).
const (
	producerSnapshotVersion   = 1
	producerSnapshotHeader    = 10 // version, crc, count
	producerSnapshotEntrySize = 46
)

// ErrCorruptProducerSnapshot reports a snapshot with an unknown version, a
// CRC mismatch or a bad length.
var ErrCorruptProducerSnapshot = errors.New("storage: corrupt producer snapshot")

// ProducerSnapshotPath returns "<dir>/<20-digit offset>.snapshot".
func ProducerSnapshotPath(dir string, offset int64) string {
	return filepath.Join(dir, fmt.Sprintf("%020d%s", offset, ProducerSnapshotSuffix))
}

// ListProducerSnapshots returns the offsets of the snapshot files in dir,
// ascending. A missing directory has none.
func ListProducerSnapshots(dir string) ([]int64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("storage: list producer snapshots: %w", err)
	}
	var offs []int64
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ProducerSnapshotSuffix) {
			continue
		}
		off, err := strconv.ParseInt(strings.TrimSuffix(name, ProducerSnapshotSuffix), 10, 64)
		if err != nil || off < 0 {
			continue
		}
		offs = append(offs, off)
	}
	sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
	return offs, nil
}

// TakeSnapshot writes a snapshot at MapEndOffset unless one at that offset
// (or later) was already written.
func (m *ProducerStateManager) TakeSnapshot() error {
	_, err := m.takeSnapshot(true)
	return err
}

// TakeSnapshotNoSync is TakeSnapshot without the fsyncs, for a roll (as
// Kafka's roll takes its snapshot): it returns the path written ("" if
// none), which the caller fsyncs (SyncProducerSnapshot) together with its
// directory off the append path, before the recovery point passes it. A
// crash before that may leave a torn file, which loading treats as any
// corrupt snapshot: deleted, and the state rebuilt from an older one.
func (m *ProducerStateManager) TakeSnapshotNoSync() (string, error) {
	return m.takeSnapshot(false)
}

func (m *ProducerStateManager) takeSnapshot(sync bool) (string, error) {
	if m.lastMapOffset <= m.lastSnapOffset {
		return "", nil
	}
	entries := make([]ProducerStateEntry, 0, len(m.producers))
	for _, e := range m.producers {
		entries = append(entries, *e)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].ProducerID < entries[j].ProducerID })
	path := ProducerSnapshotPath(m.dir, m.lastMapOffset)
	if err := writeProducerSnapshot(path, entries, sync); err != nil {
		return "", err
	}
	m.addSnapshot(m.lastMapOffset)
	m.lastSnapOffset = m.lastMapOffset
	return path, nil
}

// SyncProducerSnapshot fsyncs a snapshot written by TakeSnapshotNoSync. A
// snapshot deleted meanwhile (truncation, retention) is not an error. The
// caller fsyncs the directory for the rename.
func SyncProducerSnapshot(path string) error { return syncFile(path) }

func (m *ProducerStateManager) addSnapshot(off int64) {
	i := sort.Search(len(m.snapshots), func(i int) bool { return m.snapshots[i] >= off })
	if i < len(m.snapshots) && m.snapshots[i] == off {
		return
	}
	m.snapshots = append(m.snapshots, 0)
	copy(m.snapshots[i+1:], m.snapshots[i:])
	m.snapshots[i] = off
}

// Snapshots returns the offsets of the known snapshot files, ascending.
func (m *ProducerStateManager) Snapshots() []int64 { return append([]int64(nil), m.snapshots...) }

// LatestSnapshotOffset returns the newest snapshot's offset.
func (m *ProducerStateManager) LatestSnapshotOffset() (int64, bool) {
	if len(m.snapshots) == 0 {
		return 0, false
	}
	return m.snapshots[len(m.snapshots)-1], true
}

// OldestSnapshotOffset returns the oldest snapshot's offset.
func (m *ProducerStateManager) OldestSnapshotOffset() (int64, bool) {
	if len(m.snapshots) == 0 {
		return 0, false
	}
	return m.snapshots[0], true
}

// DeleteSnapshot removes the snapshot at off (file and index), if any.
func (m *ProducerStateManager) DeleteSnapshot(off int64) error {
	i := sort.Search(len(m.snapshots), func(i int) bool { return m.snapshots[i] >= off })
	if i < len(m.snapshots) && m.snapshots[i] == off {
		m.snapshots = append(m.snapshots[:i], m.snapshots[i+1:]...)
	}
	if err := os.Remove(ProducerSnapshotPath(m.dir, off)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("storage: delete producer snapshot: %w", err)
	}
	return nil
}

// DeleteSnapshotsBefore removes every snapshot below off.
func (m *ProducerStateManager) DeleteSnapshotsBefore(off int64) error {
	for _, s := range append([]int64(nil), m.snapshots...) {
		if s < off {
			if err := m.DeleteSnapshot(s); err != nil {
				return err
			}
		}
	}
	return nil
}

// RemoveStraySnapshots deletes, at load, snapshots that match no segment
// base offset, except the newest stray one if it lies above every segment
// base (the one written at clean shutdown, at the log end).
func (m *ProducerStateManager) RemoveStraySnapshots(segmentBaseOffsets []int64) error {
	bases := map[int64]bool{}
	maxBase, haveBase := int64(0), false
	for _, b := range segmentBaseOffsets {
		bases[b] = true
		if !haveBase || b > maxBase {
			maxBase, haveBase = b, true
		}
	}
	snaps, err := ListProducerSnapshots(m.dir)
	if err != nil {
		return err
	}
	m.snapshots = snaps
	latestStray, haveStray := int64(0), false
	for _, s := range append([]int64(nil), m.snapshots...) {
		if bases[s] {
			continue
		}
		if haveStray {
			if err := m.DeleteSnapshot(latestStray); err != nil {
				return err
			}
		}
		latestStray, haveStray = s, true
	}
	if haveStray && haveBase && latestStray < maxBase {
		return m.DeleteSnapshot(latestStray)
	}
	return nil
}

// EncodeProducerSnapshot returns the version 1 bytes for entries (in
// the given order). Only each producer's last batch is persisted.
func EncodeProducerSnapshot(entries []ProducerStateEntry) []byte {
	b := make([]byte, producerSnapshotHeader, producerSnapshotHeader+producerSnapshotEntrySize*len(entries))
	binary.BigEndian.PutUint16(b, producerSnapshotVersion)
	binary.BigEndian.PutUint32(b[6:], uint32(len(entries)))
	for i := range entries {
		e := &entries[i]
		b = binary.BigEndian.AppendUint64(b, uint64(e.ProducerID))
		b = binary.BigEndian.AppendUint16(b, uint16(e.ProducerEpoch))
		b = binary.BigEndian.AppendUint32(b, uint32(e.LastSeq()))
		b = binary.BigEndian.AppendUint64(b, uint64(e.LastDataOffset()))
		b = binary.BigEndian.AppendUint32(b, uint32(e.lastOffsetDelta()))
		b = binary.BigEndian.AppendUint64(b, uint64(e.LastTimestamp))
		b = binary.BigEndian.AppendUint32(b, uint32(e.CoordinatorEpoch))
		b = binary.BigEndian.AppendUint64(b, uint64(e.CurrentTxnFirstOffset))
	}
	binary.BigEndian.PutUint32(b[2:], crc32.Checksum(b[6:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// DecodeProducerSnapshot parses version 1 bytes. Errors wrap
// ErrCorruptProducerSnapshot.
func DecodeProducerSnapshot(b []byte) ([]ProducerStateEntry, error) {
	if len(b) < producerSnapshotHeader {
		return nil, fmt.Errorf("%w: %d bytes", ErrCorruptProducerSnapshot, len(b))
	}
	if v := int16(binary.BigEndian.Uint16(b)); v != producerSnapshotVersion {
		return nil, fmt.Errorf("%w: unknown version %d", ErrCorruptProducerSnapshot, v)
	}
	stored := binary.BigEndian.Uint32(b[2:])
	if got := crc32.Checksum(b[6:], crc32.MakeTable(crc32.Castagnoli)); got != stored {
		return nil, fmt.Errorf("%w: stored crc %d, computed %d", ErrCorruptProducerSnapshot, stored, got)
	}
	n := int64(int32(binary.BigEndian.Uint32(b[6:])))
	if n < 0 || n*producerSnapshotEntrySize != int64(len(b)-producerSnapshotHeader) {
		return nil, fmt.Errorf("%w: %d entries in %d bytes", ErrCorruptProducerSnapshot, n, len(b))
	}
	out := make([]ProducerStateEntry, n)
	p := b[producerSnapshotHeader:]
	for i := range out {
		e := &out[i]
		e.ProducerID = int64(binary.BigEndian.Uint64(p))
		e.ProducerEpoch = int16(binary.BigEndian.Uint16(p[8:]))
		lastSeq := int32(binary.BigEndian.Uint32(p[10:]))
		lastOffset := int64(binary.BigEndian.Uint64(p[14:]))
		delta := int32(binary.BigEndian.Uint32(p[22:]))
		e.LastTimestamp = int64(binary.BigEndian.Uint64(p[26:]))
		e.CoordinatorEpoch = int32(binary.BigEndian.Uint32(p[34:]))
		e.CurrentTxnFirstOffset = int64(binary.BigEndian.Uint64(p[38:]))
		if e.CurrentTxnFirstOffset < 0 {
			e.CurrentTxnFirstOffset = -1
		}
		if lastOffset >= 0 {
			e.Batches = []ProducerBatchMetadata{{LastSeq: lastSeq, LastOffset: lastOffset, OffsetDelta: delta, Timestamp: e.LastTimestamp}}
		}
		p = p[producerSnapshotEntrySize:]
	}
	return out, nil
}

// ReadProducerSnapshot reads and decodes a snapshot file.
func ReadProducerSnapshot(path string) ([]ProducerStateEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("storage: read producer snapshot: %w", err)
	}
	entries, err := DecodeProducerSnapshot(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return entries, nil
}

// WriteProducerSnapshot writes a snapshot file durably: a temporary file,
// fsync, rename over path, fsync of the directory.
func WriteProducerSnapshot(path string, entries []ProducerStateEntry) error {
	return writeProducerSnapshot(path, entries, true)
}

func writeProducerSnapshot(path string, entries []ProducerStateEntry, sync bool) error {
	return writeFileRenamed(path, EncodeProducerSnapshot(entries), sync)
}
