package storage

// Producer state (Kafka's ProducerStateManager, ProducerStateEntry,
// ProducerAppendInfo): per partition, what the log last saw from each
// idempotent or transactional producer, used for sequence checks,
// duplicate detection, epoch fencing and transactions. Snapshot files are
// Kafka's version 1 format (producersnapshot.go).
//
// How the Log drives it (all calls under the Log's append lock; the
// manager has no lock of its own, like Kafka's @nonthreadsafe class):
//
//   - load:     m, _ := NewProducerStateManager(dir, cfg)
//               m.RemoveStraySnapshots(segmentBaseOffsets)
//               m.TruncateAndReload(logStart, logEnd, now)
//               replay every batch from m.MapEndOffset() to logEnd with
//               m.Append(batchBytes) (or AppendBatch), then
//               m.UpdateMapEndOffset(logEnd) and m.TakeSnapshot().
//   - leader append, before writing (offsets not yet assigned is fine):
//               dup, err := m.CheckAppend(data, OriginClient)
//               err -> fail the produce with its kerr code;
//               dup != nil -> append nothing, answer dup's offsets.
//               WriteTxnMarkers appends use OriginCoordinator.
//   - after the bytes are in the segment (offsets assigned):
//               txns, _ := m.Append(data)   // also advances MapEndOffset
//               for each txn with IsAborted: write a .txnindex entry
//               (ProducerID, FirstOffset, LastOffset, LastStableOffset).
//   - roll:     m.UpdateMapEndOffset(newBase); m.TakeSnapshotNoSync() (the flusher fsyncs it)
//   - close:    m.TakeSnapshot() (map end = log end)
//   - truncate: m.TruncateAndReload(logStart, newLogEnd, now) then replay
//               from MapEndOffset as at load; truncate fully:
//               m.TruncateFullyAndStartAt(offset)
//   - segment deleted: m.DeleteSnapshot(segment.baseOffset)
//   - log start offset raised: m.OnLogStartOffsetIncremented(lso)
//   - high watermark raised: m.OnHighWatermarkUpdated(hw); the LSO is
//               min(FirstUnstableOffset, HW)
//   - periodic: m.RemoveExpiredProducers(now) every
//               producer.id.expiration.check.interval.ms

import (
	"errors"
	"os"

	"github.com/klassik/klassik/broker/storage/record"
)

// numBatchesToRetain is how many batches per producer are remembered for
// duplicate detection (Kafka's NumBatchesToRetain; the producer allows at
// most 5 in-flight requests with idempotence).
const numBatchesToRetain = 5

// AppendOrigin says who is appending, which decides how strictly producer
// state is validated (Kafka's AppendOrigin).
type AppendOrigin int8

const (
	// OriginClient: produce requests; full validation and duplicate detection.
	OriginClient AppendOrigin = iota
	// OriginCoordinator: the group/transaction coordinators (offset commits,
	// WriteTxnMarkers); epoch and coordinator-epoch checks only.
	OriginCoordinator
	// OriginReplication: follower fetches and log recovery; never fails
	// for producer-state reasons.
	OriginReplication
)

// ProducerBatchMetadata is one remembered batch of a producer.
type ProducerBatchMetadata struct {
	LastSeq     int32
	LastOffset  int64
	OffsetDelta int32
	Timestamp   int64
}

// FirstSeq is the sequence of the batch's first record.
func (b ProducerBatchMetadata) FirstSeq() int32 { return decrementSequence(b.LastSeq, b.OffsetDelta) }

// FirstOffset is the offset of the batch's first record.
func (b ProducerBatchMetadata) FirstOffset() int64 { return b.LastOffset - int64(b.OffsetDelta) }

// ProducerStateEntry is the state of one producer id in one partition.
type ProducerStateEntry struct {
	ProducerID    int64
	ProducerEpoch int16
	// Batches holds up to 5 most recent data batches, oldest first.
	Batches          []ProducerBatchMetadata
	CoordinatorEpoch int32
	LastTimestamp    int64
	// CurrentTxnFirstOffset is the first offset of the open transaction,
	// -1 if none.
	CurrentTxnFirstOffset int64
}

func newProducerStateEntry(pid int64) *ProducerStateEntry {
	return &ProducerStateEntry{ProducerID: pid, ProducerEpoch: record.NoProducerEpoch, CoordinatorEpoch: -1,
		LastTimestamp: record.NoTimestamp, CurrentTxnFirstOffset: -1}
}

func (e *ProducerStateEntry) clone() *ProducerStateEntry {
	c := *e
	c.Batches = append([]ProducerBatchMetadata(nil), e.Batches...)
	return &c
}

// LastSeq is the last sequence appended, -1 if no data batch is known.
func (e *ProducerStateEntry) LastSeq() int32 {
	if len(e.Batches) == 0 {
		return record.NoSequence
	}
	return e.Batches[len(e.Batches)-1].LastSeq
}

// LastDataOffset is the last offset of the last data batch, -1 if none.
func (e *ProducerStateEntry) LastDataOffset() int64 {
	if len(e.Batches) == 0 {
		return -1
	}
	return e.Batches[len(e.Batches)-1].LastOffset
}

func (e *ProducerStateEntry) lastOffsetDelta() int32 {
	if len(e.Batches) == 0 {
		return 0
	}
	return e.Batches[len(e.Batches)-1].OffsetDelta
}

// maybeUpdateEpoch switches to a new epoch, forgetting the old batches.
func (e *ProducerStateEntry) maybeUpdateEpoch(epoch int16) {
	if e.ProducerEpoch != epoch {
		e.Batches = e.Batches[:0]
		e.ProducerEpoch = epoch
	}
}

func (e *ProducerStateEntry) addBatch(epoch int16, lastSeq int32, lastOffset int64, offsetDelta int32, ts int64) {
	e.maybeUpdateEpoch(epoch)
	if len(e.Batches) == numBatchesToRetain {
		copy(e.Batches, e.Batches[1:])
		e.Batches = e.Batches[:numBatchesToRetain-1]
	}
	e.Batches = append(e.Batches, ProducerBatchMetadata{LastSeq: lastSeq, LastOffset: lastOffset, OffsetDelta: offsetDelta, Timestamp: ts})
	e.LastTimestamp = ts
}

// findDuplicate returns the remembered batch with exactly h's sequence
// range and epoch.
func (e *ProducerStateEntry) findDuplicate(h record.BatchHeader) (ProducerBatchMetadata, bool) {
	if h.ProducerEpoch != e.ProducerEpoch {
		return ProducerBatchMetadata{}, false
	}
	first, last := h.BaseSequence, h.LastSequence()
	for _, b := range e.Batches {
		if b.FirstSeq() == first && b.LastSeq == last {
			return b, true
		}
	}
	return ProducerBatchMetadata{}, false
}

// DuplicateInfo describes the original append of a duplicate batch: the
// produce response carries these offsets (and the timestamp as log append
// time when the topic uses LogAppendTime) with no error.
type DuplicateInfo struct {
	FirstOffset int64
	LastOffset  int64
	Timestamp   int64
}

// CompletedTxn is a transaction closed by a COMMIT or ABORT marker.
type CompletedTxn struct {
	ProducerID  int64
	FirstOffset int64
	LastOffset  int64 // offset of the marker
	IsAborted   bool
	// LastStableOffset is the LSO once this transaction is complete: the
	// first offset of the earliest other open transaction, else
	// LastOffset+1 (the .txnindex column).
	LastStableOffset int64
}

type ongoingTxn struct {
	producerID  int64
	firstOffset int64
	lastOffset  int64 // -1 while undecided
}

// ProducerStateConfig holds the settings a manager needs.
type ProducerStateConfig struct {
	// ExpirationMs is producer.id.expiration.ms (default 86 400 000).
	ExpirationMs int64
}

// ProducerStateManager keeps the producer state of one partition. It is
// not safe for concurrent use: the owning Log serialises all calls under
// its append lock.
type ProducerStateManager struct {
	dir          string
	expirationMs int64

	producers map[int64]*ProducerStateEntry
	// snapshots holds the offsets of the snapshot files in dir, sorted.
	snapshots      []int64
	lastMapOffset  int64
	lastSnapOffset int64
	// ongoing holds undecided transactions keyed by first offset;
	// unreplicated holds decided ones whose marker is not yet below the HW.
	ongoing      map[int64]*ongoingTxn
	unreplicated map[int64]*ongoingTxn
}

// NewProducerStateManager creates the manager for the partition directory
// dir and indexes the snapshot files found there. It loads no state; call
// TruncateAndReload.
func NewProducerStateManager(dir string, cfg ProducerStateConfig) (*ProducerStateManager, error) {
	m := newEmptyProducerStateManager(dir, cfg)
	snaps, err := ListProducerSnapshots(dir)
	if err != nil {
		return nil, err
	}
	m.snapshots = snaps
	return m, nil
}

// newEmptyProducerStateManager is NewProducerStateManager for a directory
// known to hold no snapshot (a log just created).
func newEmptyProducerStateManager(dir string, cfg ProducerStateConfig) *ProducerStateManager {
	if cfg.ExpirationMs <= 0 {
		cfg.ExpirationMs = 86400000
	}
	return &ProducerStateManager{dir: dir, expirationMs: cfg.ExpirationMs,
		producers: map[int64]*ProducerStateEntry{}, ongoing: map[int64]*ongoingTxn{}, unreplicated: map[int64]*ongoingTxn{}}
}

// Dir is the partition directory holding the snapshots.
func (m *ProducerStateManager) Dir() string { return m.dir }

// SetDir changes the directory after the partition directory was renamed
// (deletion, log dir move); the snapshot files moved with it.
func (m *ProducerStateManager) SetDir(dir string) { m.dir = dir }

// MapEndOffset is the offset up to which (exclusive) the state reflects
// the log.
func (m *ProducerStateManager) MapEndOffset() int64 { return m.lastMapOffset }

// UpdateMapEndOffset records that the state now covers the log below off.
func (m *ProducerStateManager) UpdateMapEndOffset(off int64) { m.lastMapOffset = off }

// LastEntry returns the state of a producer, or nil.
func (m *ProducerStateManager) LastEntry(pid int64) *ProducerStateEntry { return m.producers[pid] }

// ActiveProducers returns a copy of every producer's state.
func (m *ProducerStateManager) ActiveProducers() map[int64]ProducerStateEntry {
	out := make(map[int64]ProducerStateEntry, len(m.producers))
	for pid, e := range m.producers {
		out[pid] = *e.clone()
	}
	return out
}

// IsEmpty reports whether no producer state is held.
func (m *ProducerStateManager) IsEmpty() bool {
	return len(m.producers) == 0 && len(m.unreplicated) == 0
}

// Check validates one batch against the current state without changing
// it (for a single-batch append; CheckAppend handles several). See
// CheckAppend for the results.
func (m *ProducerStateManager) Check(batch []byte, h record.BatchHeader, origin AppendOrigin) (*DuplicateInfo, error) {
	if !h.HasProducerID() {
		return nil, nil
	}
	if origin == OriginClient {
		if e := m.producers[h.ProducerID]; e != nil {
			if d, ok := e.findDuplicate(h); ok {
				return &DuplicateInfo{FirstOffset: d.FirstOffset(), LastOffset: d.LastOffset, Timestamp: d.Timestamp}, nil
			}
		}
	}
	a := m.prepare(h.ProducerID, origin, true)
	_, err := a.appendBatch(batch, h)
	return nil, err
}

// CheckAppend validates the batches of one append (data, a concatenation
// of v2 batches) against the producer state without changing it. It
// returns the original offsets when the first duplicate batch is found
// (Kafka answers the whole append as that duplicate), or an error wrapping
// kerr.InvalidProducerEpoch, kerr.OutOfOrderSequenceNumber,
// kerr.InvalidTxnState or kerr.TransactionCoordinatorFenced. It may be
// called before offsets are assigned: offsets only appear in messages.
func (m *ProducerStateManager) CheckAppend(data []byte, origin AppendOrigin) (*DuplicateInfo, error) {
	if origin == OriginReplication {
		return nil, nil
	}
	staged := map[int64]*producerAppendInfo{}
	var dup *DuplicateInfo
	err := record.ForEachBatch(data, func(batch []byte, h record.BatchHeader) error {
		if !h.HasProducerID() {
			return nil
		}
		if origin == OriginClient {
			if e := m.producers[h.ProducerID]; e != nil {
				if d, ok := e.findDuplicate(h); ok {
					dup = &DuplicateInfo{FirstOffset: d.FirstOffset(), LastOffset: d.LastOffset, Timestamp: d.Timestamp}
					return errStopIteration
				}
			}
		}
		a := staged[h.ProducerID]
		if a == nil {
			a = m.prepare(h.ProducerID, origin, true)
			staged[h.ProducerID] = a
		}
		_, err := a.appendBatch(batch, h)
		return err
	})
	if errors.Is(err, errStopIteration) {
		return dup, nil
	}
	return nil, err
}

var errStopIteration = errors.New("storage: stop iteration")

// AppendBatch applies one batch that is now in the log (offsets assigned)
// and returns the transaction it completed, if any, with its
// LastStableOffset computed. It never fails for producer-state reasons
// (the check happened before the write); errors only report undecodable
// control records. It does not move MapEndOffset.
func (m *ProducerStateManager) AppendBatch(batch []byte, h record.BatchHeader) (*CompletedTxn, error) {
	if !h.HasProducerID() {
		return nil, nil
	}
	a := m.prepare(h.ProducerID, OriginReplication, false)
	done, err := a.appendBatch(batch, h)
	if err != nil {
		return nil, err
	}
	m.commit(a)
	if done != nil {
		done.LastStableOffset = m.lastStableOffset(done)
		m.completeTxn(done)
	}
	return done, nil
}

// Append applies every batch of data (as written to the log) and moves
// MapEndOffset past the last one. It returns the completed transactions in
// log order; the Log writes a .txnindex entry for each aborted one.
func (m *ProducerStateManager) Append(data []byte) ([]CompletedTxn, error) {
	var txns []CompletedTxn
	err := record.ForEachBatch(data, func(batch []byte, h record.BatchHeader) error {
		done, err := m.AppendBatch(batch, h)
		if err != nil {
			return err
		}
		if done != nil {
			txns = append(txns, *done)
		}
		if h.NextOffset() > m.lastMapOffset {
			m.lastMapOffset = h.NextOffset()
		}
		return nil
	})
	return txns, err
}

// lastStableOffset: the first offset of the earliest open transaction of
// another producer, else the marker offset + 1.
func (m *ProducerStateManager) lastStableOffset(done *CompletedTxn) int64 {
	best := int64(-1)
	for first, t := range m.ongoing {
		if t.producerID != done.ProducerID && (best < 0 || first < best) {
			best = first
		}
	}
	if best >= 0 {
		return best
	}
	return done.LastOffset + 1
}

func (m *ProducerStateManager) completeTxn(done *CompletedTxn) {
	t := m.ongoing[done.FirstOffset]
	if t == nil {
		// Replaying from a snapshot taken mid-transaction may see a marker
		// whose start was never registered; nothing to move.
		return
	}
	delete(m.ongoing, done.FirstOffset)
	t.lastOffset = done.LastOffset
	m.unreplicated[done.FirstOffset] = t
}

// FirstUnstableOffset is the smallest first offset of a transaction that
// is undecided or decided above the high watermark; ok is false if none.
// The partition's LSO is min(FirstUnstableOffset, HW).
func (m *ProducerStateManager) FirstUnstableOffset() (int64, bool) {
	best, ok := int64(0), false
	for _, set := range []map[int64]*ongoingTxn{m.ongoing, m.unreplicated} {
		for first := range set {
			if !ok || first < best {
				best, ok = first, true
			}
		}
	}
	return best, ok
}

// FirstUndecidedOffset is the first offset of the earliest open transaction.
func (m *ProducerStateManager) FirstUndecidedOffset() (int64, bool) {
	best, ok := int64(0), false
	for first := range m.ongoing {
		if !ok || first < best {
			best, ok = first, true
		}
	}
	return best, ok
}

// OnHighWatermarkUpdated forgets decided transactions whose marker is now
// below hw, letting the LSO advance.
func (m *ProducerStateManager) OnHighWatermarkUpdated(hw int64) { m.removeUnreplicated(hw) }

func (m *ProducerStateManager) removeUnreplicated(off int64) {
	for first, t := range m.unreplicated {
		if t.lastOffset >= 0 && t.lastOffset < off {
			delete(m.unreplicated, first)
		}
	}
}

// OnLogStartOffsetIncremented drops decided transactions and producers
// entirely below the new log start offset and moves MapEndOffset
// up to it if needed.
func (m *ProducerStateManager) OnLogStartOffsetIncremented(logStart int64) {
	m.removeUnreplicated(logStart)
	for pid, e := range m.producers {
		if belowLogStart(e, logStart) {
			delete(m.producers, pid)
		}
	}
	if m.lastMapOffset < logStart {
		m.lastMapOffset = logStart
	}
	if off, ok := m.LatestSnapshotOffset(); ok {
		m.lastSnapOffset = off
	} else {
		m.lastSnapOffset = logStart
	}
}

// belowLogStart: the producer's last data lies below the log start offset
// and it has no open transaction, so the log no longer holds its state.
func belowLogStart(e *ProducerStateEntry, logStart int64) bool {
	last := e.LastDataOffset()
	return last >= 0 && last < logStart && e.CurrentTxnFirstOffset < 0
}

func (m *ProducerStateManager) isExpired(nowMs int64, e *ProducerStateEntry) bool {
	return e.CurrentTxnFirstOffset < 0 && nowMs-e.LastTimestamp >= m.expirationMs
}

// RemoveExpiredProducers drops producers idle for producer.id.expiration.ms
// without an open transaction.
func (m *ProducerStateManager) RemoveExpiredProducers(nowMs int64) {
	for pid, e := range m.producers {
		if m.isExpired(nowMs, e) {
			delete(m.producers, pid)
		}
	}
}

// TruncateAndReload deletes snapshots outside (logStart, logEnd] and, if
// the state does not already end at logEnd, reloads it from the newest
// valid snapshot (corrupt ones are deleted), or starts empty at logStart.
// The caller then replays the log from MapEndOffset to logEnd.
func (m *ProducerStateManager) TruncateAndReload(logStart, logEnd, nowMs int64) error {
	for _, off := range append([]int64(nil), m.snapshots...) {
		if off > logEnd || off <= logStart {
			if err := m.DeleteSnapshot(off); err != nil {
				return err
			}
		}
	}
	if logEnd != m.lastMapOffset {
		m.producers = map[int64]*ProducerStateEntry{}
		m.ongoing = map[int64]*ongoingTxn{}
		m.unreplicated = map[int64]*ongoingTxn{}
		return m.loadFromSnapshot(logStart, nowMs)
	}
	m.OnLogStartOffsetIncremented(logStart)
	return nil
}

func (m *ProducerStateManager) loadFromSnapshot(logStart, nowMs int64) error {
	for len(m.snapshots) > 0 {
		off := m.snapshots[len(m.snapshots)-1]
		entries, err := ReadProducerSnapshot(ProducerSnapshotPath(m.dir, off))
		if err != nil {
			if errors.Is(err, ErrCorruptProducerSnapshot) || errors.Is(err, os.ErrNotExist) {
				if derr := m.DeleteSnapshot(off); derr != nil {
					return derr
				}
				continue
			}
			return err
		}
		for i := range entries {
			e := &entries[i]
			if m.isExpired(nowMs, e) || belowLogStart(e, logStart) {
				continue
			}
			m.loadEntry(e)
		}
		m.lastSnapOffset, m.lastMapOffset = off, off
		return nil
	}
	m.lastSnapOffset, m.lastMapOffset = logStart, logStart
	return nil
}

func (m *ProducerStateManager) loadEntry(e *ProducerStateEntry) {
	c := e.clone()
	m.producers[c.ProducerID] = c
	if c.CurrentTxnFirstOffset >= 0 {
		m.ongoing[c.CurrentTxnFirstOffset] = &ongoingTxn{producerID: c.ProducerID, firstOffset: c.CurrentTxnFirstOffset, lastOffset: -1}
	}
}

// TruncateFullyAndStartAt clears all state and deletes every snapshot.
func (m *ProducerStateManager) TruncateFullyAndStartAt(off int64) error {
	m.producers = map[int64]*ProducerStateEntry{}
	m.ongoing = map[int64]*ongoingTxn{}
	m.unreplicated = map[int64]*ongoingTxn{}
	for _, s := range append([]int64(nil), m.snapshots...) {
		if err := m.DeleteSnapshot(s); err != nil {
			return err
		}
	}
	m.lastSnapOffset = 0
	m.lastMapOffset = off
	return nil
}
