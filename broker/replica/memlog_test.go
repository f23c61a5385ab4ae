package replica

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"slices"
	"sync"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// memLog is an in-memory Log for unit tests of the manager's logic: it
// assigns offsets and leader epochs to magic-2 batches exactly where the
// real log does (header fields outside the CRC), checks CRCs, and keeps a
// leader epoch cache. The real storage is exercised by storage_test.go.
type memLog struct {
	mu              sync.Mutex
	batches         [][]byte
	logStart, leo   int64
	hw              int64
	epochs          []epochEntry
	maxMessageBytes int
	compactOnly     bool
	lso             int64 // < 0: LSO = HW; tests set it to simulate an open transaction
	aborted         []memAborted
}

type epochEntry struct {
	epoch int32
	start int64
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (l *memLog) AppendAsLeader(records []byte, leaderEpoch int32) (storage.AppendInfo, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var parsed [][]byte
	rest := records
	for len(rest) > 0 {
		if len(rest) < 61 {
			return storage.AppendInfo{}, kerr.CorruptMessage
		}
		n := int(int32(binary.BigEndian.Uint32(rest[8:])))
		if n < 49 || n+12 > len(rest) {
			return storage.AppendInfo{}, kerr.CorruptMessage
		}
		b := rest[:n+12]
		if b[16] != 2 {
			return storage.AppendInfo{}, kerr.UnsupportedForMessageFormat
		}
		if crc32.Checksum(b[21:], castagnoli) != binary.BigEndian.Uint32(b[17:]) {
			return storage.AppendInfo{}, kerr.CorruptMessage
		}
		if l.maxMessageBytes > 0 && len(b) > l.maxMessageBytes {
			return storage.AppendInfo{}, kerr.MessageTooLarge
		}
		parsed = append(parsed, bytes.Clone(b))
		rest = rest[n+12:]
	}
	if len(parsed) == 0 {
		return storage.AppendInfo{}, kerr.CorruptMessage
	}
	info := storage.AppendInfo{FirstOffset: l.leo, LogAppendTime: -1}
	for _, b := range parsed {
		binary.BigEndian.PutUint64(b[0:], uint64(l.leo))
		binary.BigEndian.PutUint32(b[12:], uint32(leaderEpoch))
		lastDelta := int64(int32(binary.BigEndian.Uint32(b[23:])))
		if len(l.epochs) == 0 || l.epochs[len(l.epochs)-1].epoch < leaderEpoch {
			l.assignLocked(leaderEpoch, l.leo)
		}
		l.batches = append(l.batches, b)
		info.NumMessages += int32(binary.BigEndian.Uint32(b[57:]))
		l.leo += lastDelta + 1
	}
	info.LastOffset = l.leo - 1
	info.LogStartOffset = l.logStart
	return info, nil
}

func (l *memLog) AppendAsCoordinator(records []byte, leaderEpoch int32) (storage.AppendInfo, error) {
	return l.AppendAsLeader(records, leaderEpoch)
}

// LastStableOffset: lso < 0 means "equal to the HW" (no open transaction).
func (l *memLog) LastStableOffset() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lso >= 0 && l.lso < l.hw {
		return l.lso
	}
	return l.hw
}

func (l *memLog) CollectAbortedTransactions(start, upper int64) ([]storage.AbortedTxn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []storage.AbortedTxn
	for _, a := range l.aborted {
		if a.last >= start && a.FirstOffset < upper {
			out = append(out, a.AbortedTxn)
		}
	}
	return out, nil
}

func (l *memLog) ActiveProducers() []storage.ProducerStateEntry { return nil }

type memAborted struct {
	storage.AbortedTxn
	last int64
}

type memRecords []byte

func (r memRecords) Len() int                 { return len(r) }
func (r memRecords) ReadAll() ([]byte, error) { return bytes.Clone(r), nil }
func (r memRecords) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(r)
	return int64(n), err
}

func batchBase(b []byte) int64 { return int64(binary.BigEndian.Uint64(b)) }
func batchLast(b []byte) int64 {
	return batchBase(b) + int64(int32(binary.BigEndian.Uint32(b[23:])))
}

func (l *memLog) ReadRecords(start int64, maxBytes int32, maxOffset int64, minOne bool) (storage.Records, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if start < l.logStart || start > l.leo {
		return nil, kerr.OffsetOutOfRange
	}
	var out []byte
	for _, b := range l.batches {
		if batchLast(b) < start || batchBase(b) >= maxOffset {
			continue
		}
		if len(out)+len(b) > int(maxBytes) && !(minOne && len(out) == 0) {
			break
		}
		out = append(out, b...)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return memRecords(out), nil
}

func (l *memLog) LogStartOffset() int64 { l.mu.Lock(); defer l.mu.Unlock(); return l.logStart }
func (l *memLog) LogEndOffset() int64   { l.mu.Lock(); defer l.mu.Unlock(); return l.leo }
func (l *memLog) HighWatermark() int64  { l.mu.Lock(); defer l.mu.Unlock(); return l.hw }
func (l *memLog) SetHighWatermark(hw int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hw = min(max(hw, l.logStart), l.leo)
}
func (l *memLog) MaybeIncrementHighWatermark(hw int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if hw = min(hw, l.leo); hw > l.hw {
		l.hw = hw
		return true
	}
	return false
}

func (l *memLog) epochForOffsetLocked(off int64) int32 {
	e := int32(-1)
	for _, en := range l.epochs {
		if en.start <= off {
			e = en.epoch
		}
	}
	return e
}

func (l *memLog) FetchOffsetByTimestamp(ts int64) (int64, int64, int32, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch ts {
	case -2:
		return l.logStart, -1, l.epochForOffsetLocked(l.logStart), true, nil
	case -3:
		best, bestTs := int64(-1), int64(-1)
		for _, b := range l.batches {
			if mt := int64(binary.BigEndian.Uint64(b[35:])); mt > bestTs {
				best, bestTs = batchLast(b), mt
			}
		}
		if best < 0 {
			return -1, -1, -1, false, nil
		}
		return best, bestTs, l.epochForOffsetLocked(best), true, nil
	}
	for _, b := range l.batches {
		if batchLast(b) < l.logStart {
			continue
		}
		if mt := int64(binary.BigEndian.Uint64(b[35:])); mt >= ts {
			off := max(batchBase(b), l.logStart)
			return off, mt, l.epochForOffsetLocked(off), true, nil
		}
	}
	return -1, -1, -1, false, nil
}

func (l *memLog) DeleteRecordsBefore(off int64) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if off > l.logStart {
		l.logStart = off
	}
	return l.logStart, nil
}

func (l *memLog) assignLocked(epoch int32, start int64) {
	if n := len(l.epochs); n > 0 && l.epochs[n-1].epoch == epoch && l.epochs[n-1].start <= start {
		return
	}
	kept := l.epochs[:0]
	for _, e := range l.epochs {
		if e.epoch < epoch && e.start < start {
			kept = append(kept, e)
		}
	}
	l.epochs = append(kept, epochEntry{epoch, start})
}

func (l *memLog) AssignEpoch(epoch int32, start int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.assignLocked(epoch, start)
	return nil
}

func (l *memLog) LatestEpoch() (int32, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.epochs) == 0 {
		return -1, false
	}
	return l.epochs[len(l.epochs)-1].epoch, true
}

func (l *memLog) EndOffsetForEpoch(e int32) (int32, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e == -1 || len(l.epochs) == 0 {
		return -1, -1
	}
	if l.epochs[len(l.epochs)-1].epoch == e {
		return e, l.leo
	}
	var lo *epochEntry
	for i := range l.epochs {
		en := &l.epochs[i]
		if en.epoch > e {
			if lo == nil {
				return e, en.start
			}
			return lo.epoch, en.start
		}
		lo = en
	}
	return -1, -1
}

func (l *memLog) DeleteRecordsAllowed() bool { return !l.compactOnly }

func (l *memLog) CompressionType() string { return "producer" }

// SetTopicID accepts any id: the in-memory log keeps no partition.metadata.
func (l *memLog) SetTopicID([16]byte) error { return nil }

// memStore is an in-memory LogStore.
type memStore struct {
	mu      sync.Mutex
	logs    map[common.TopicPartition]*memLog
	deleted []common.TopicPartition
	maxMsg  int
	offline []string // OfflineDirs
}

func newMemStore() *memStore { return &memStore{logs: make(map[common.TopicPartition]*memLog)} }

func (s *memStore) GetOrCreateLog(tp common.TopicPartition, _ storage.LogConfig) (Log, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.logs[tp]
	if !ok {
		l = &memLog{maxMessageBytes: s.maxMsg, lso: -1}
		s.logs[tp] = l
	}
	return l, nil
}

func (s *memStore) GetLog(tp common.TopicPartition) (Log, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.logs[tp]
	if !ok {
		return nil, false
	}
	return l, true
}

func (s *memStore) OfflineDirs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.offline
}

func (s *memStore) DeleteLog(tp common.TopicPartition) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.logs, tp)
	s.deleted = append(s.deleted, tp)
	return nil
}

// makeBatch builds a valid magic-2 batch with one record per value, all
// with timestamp ts.
func makeBatch(ts int64, values ...string) []byte {
	return makeProducerBatch(-1, -1, -1, ts, values...)
}

// makeProducerBatch is makeBatch for an idempotent producer.
func makeProducerBatch(pid int64, epoch int16, seq int32, ts int64, values ...string) []byte {
	var recs []byte
	for i, v := range values {
		r := kmsg.Record{OffsetDelta: int32(i), Value: []byte(v)}
		enc := r.AppendTo(nil)
		r.Length = int32(len(enc) - 1) // Length 0 took one varint byte
		recs = r.AppendTo(recs)
	}
	b := kmsg.RecordBatch{
		Magic:           2,
		LastOffsetDelta: int32(len(values) - 1),
		FirstTimestamp:  ts,
		MaxTimestamp:    ts,
		ProducerID:      pid,
		ProducerEpoch:   epoch,
		FirstSequence:   seq,
		NumRecords:      int32(len(values)),
		Records:         recs,
	}
	enc := b.AppendTo(nil)
	binary.BigEndian.PutUint32(enc[8:], uint32(len(enc)-12))
	binary.BigEndian.PutUint32(enc[17:], crc32.Checksum(enc[21:], castagnoli))
	return enc
}

// batchValues decodes the record values of every batch in data.
func batchValues(data []byte) (offsets []int64, values []string, err error) {
	for len(data) > 0 {
		var b kmsg.RecordBatch
		if len(data) < 12 {
			return nil, nil, io.ErrUnexpectedEOF
		}
		n := int(binary.BigEndian.Uint32(data[8:])) + 12
		if n > len(data) {
			return nil, nil, io.ErrUnexpectedEOF
		}
		if err := b.ReadFrom(data[:n]); err != nil {
			return nil, nil, err
		}
		rest := b.Records
		for i := int32(0); i < b.NumRecords; i++ {
			var r kmsg.Record
			l, used := binary.Varint(rest)
			if used <= 0 {
				return nil, nil, io.ErrUnexpectedEOF
			}
			end := used + int(l)
			if err := r.ReadFrom(rest[:end]); err != nil {
				return nil, nil, err
			}
			offsets = append(offsets, b.FirstOffset+int64(r.OffsetDelta))
			values = append(values, string(r.Value))
			rest = rest[end:]
		}
		data = data[n:]
	}
	return offsets, values, nil
}

// AppendAsFollower keeps the leader's offsets and epochs; like storage it
// refuses batches that start below the log end or leave a gap.
func (l *memLog) AppendAsFollower(records []byte) (storage.AppendInfo, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	info := storage.AppendInfo{FirstOffset: -1, LogAppendTime: -1}
	rest := records
	for len(rest) > 0 {
		if len(rest) < 61 {
			return info, kerr.CorruptMessage
		}
		n := int(int32(binary.BigEndian.Uint32(rest[8:])))
		if n < 49 || n+12 > len(rest) {
			return info, kerr.CorruptMessage
		}
		b := bytes.Clone(rest[:n+12])
		rest = rest[n+12:]
		if crc32.Checksum(b[21:], castagnoli) != binary.BigEndian.Uint32(b[17:]) {
			return info, kerr.CorruptMessage
		}
		if batchBase(b) != l.leo {
			return info, kerr.OffsetOutOfRange
		}
		epoch := int32(binary.BigEndian.Uint32(b[12:]))
		if len(l.epochs) == 0 || l.epochs[len(l.epochs)-1].epoch < epoch {
			l.assignLocked(epoch, l.leo)
		}
		if info.FirstOffset < 0 {
			info.FirstOffset = l.leo
		}
		l.batches = append(l.batches, b)
		info.NumMessages += int32(binary.BigEndian.Uint32(b[57:]))
		l.leo = batchLast(b) + 1
	}
	info.LastOffset = l.leo - 1
	info.LogStartOffset = l.logStart
	return info, nil
}

// TruncateTo drops whole batches at or after offset (leaders write batch
// boundaries the followers copy, so truncation points are boundaries).
func (l *memLog) TruncateTo(offset int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if offset >= l.leo {
		// As storage.Log: the epoch cache is still cut at the log end.
		l.epochs = slices.DeleteFunc(l.epochs, func(e epochEntry) bool { return e.start >= l.leo })
		return nil
	}
	kept := l.batches[:0]
	newLEO := l.logStart
	for _, b := range l.batches {
		if batchLast(b) < offset {
			kept = append(kept, b)
			newLEO = batchLast(b) + 1
		}
	}
	l.batches = kept
	l.leo = max(newLEO, min(offset, l.logStart))
	if l.hw > l.leo {
		l.hw = l.leo
	}
	ke := l.epochs[:0]
	for _, e := range l.epochs {
		if e.start < l.leo {
			ke = append(ke, e)
		}
	}
	l.epochs = ke
	return nil
}

func (l *memLog) TruncateFullyAndStartAt(offset int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.batches, l.epochs = nil, nil
	l.logStart, l.leo, l.hw = offset, offset, offset
	return nil
}
