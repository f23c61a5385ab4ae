package storage

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/storage/record"
	"github.com/twmb/franz-go/pkg/kerr"
)

// modelRec is one record as the model remembers it; a nil value is a
// tombstone.
type modelRec struct {
	Off        int64
	Key, Value string
	Tombstone  bool
}

// modelBatch is one batch as the model remembers it. data holds the exact
// bytes while the batch is as appended; a cleaner pass that rewrites it
// (records dropped, delete horizon stamped) clears data, and from then on
// reads are checked record by record. base and last never change: the
// cleaner keeps a batch's base offset and last offset delta.
type modelBatch struct {
	base, last int64
	data       []byte
	recs       []modelRec
	// horizon is the delete horizon stamped by the first pass that
	// retained a tombstone of this batch (KIP-534); 0 means none.
	horizon int64
}

// logModel is the simple in-memory model of a Log: batches in order, the
// log start offset, the log end offset and how far a cleaner has compacted
// it.
type logModel struct {
	batches  []modelBatch
	logStart int64
	leo      int64
	// cleanedTo is the cleaner's checkpoint as the model expects it: the
	// end of the last pass, lowered by truncation below it (Kafka's
	// LogCleaner.maybeTruncateCheckpoint).
	cleanedTo int64
}

func (m *logModel) batchFor(off int64) (modelBatch, bool) {
	for _, b := range m.batches {
		if b.last >= off {
			return b, true
		}
	}
	return modelBatch{}, false
}

// recsFrom returns every record at or after from up to and including to.
func (m *logModel) recsFrom(from, to int64) []modelRec {
	var out []modelRec
	for _, b := range m.batches {
		for _, r := range b.recs {
			if r.Off >= from && r.Off <= to {
				out = append(out, r)
			}
		}
	}
	return out
}

func (m *logModel) truncateTo(off int64) {
	if off >= m.leo {
		return
	}
	n := 0
	for n < len(m.batches) && m.batches[n].last < off {
		n++
	}
	m.batches = m.batches[:n]
	m.leo = off
	if m.logStart > off {
		m.logStart = off
	}
	m.cleanedTo = min(m.cleanedTo, off)
}

// firstDirty is where the model expects the next cleaner pass to start.
func (m *logModel) firstDirty() int64 {
	if m.cleanedTo >= m.logStart && m.cleanedTo <= m.leo {
		return m.cleanedTo
	}
	return m.logStart
}

// compact applies one cleaner pass over [firstDirty, end) at nowMs: the
// offset map holds the latest offset of every key in the dirty section;
// every batch below end keeps the records at or above their key's latest
// offset (records of keys not in the map stay), and a tombstone goes once
// its batch's delete horizon has passed; the first pass that retains a
// tombstone stamps the horizon; emptied batches disappear.
func (m *logModel) compact(firstDirty, end, nowMs, deleteRetentionMs int64) {
	latest := map[string]int64{}
	for _, b := range m.batches {
		for _, r := range b.recs {
			if r.Off >= firstDirty && r.Off < end {
				latest[r.Key] = r.Off
			}
		}
	}
	kept := m.batches[:0]
	for _, b := range m.batches {
		if b.last >= end {
			kept = append(kept, b)
			continue
		}
		passed := b.horizon != 0 && nowMs >= b.horizon
		var recs []modelRec
		needHorizon := false
		for _, r := range b.recs {
			lo, ok := latest[r.Key]
			if ok && r.Off < lo {
				continue
			}
			if r.Tombstone && passed {
				continue
			}
			if r.Tombstone && b.horizon == 0 {
				needHorizon = true
			}
			recs = append(recs, r)
		}
		if len(recs) == 0 {
			continue
		}
		if len(recs) != len(b.recs) || needHorizon {
			b.data = nil
		}
		if needHorizon {
			b.horizon = nowMs + deleteRetentionMs
		}
		b.recs = recs
		kept = append(kept, b)
	}
	m.batches = kept
	m.cleanedTo = end
}

// modelKeys is small so that compaction finds duplicates.
var modelKeys = []string{"k0", "k1", "k2", "k3", "k4", "k5"}

// makeModelBatch builds a producer batch of n keyed records (about one in
// eight a tombstone) and returns it with the records the model keeps.
func makeModelBatch(rng *rand.Rand, n, valueSize int, ts int64, tag string) ([]byte, []modelRec) {
	opts := record.DefaultBuildOptions()
	opts.BaseTimestamp = ts
	recs := make([]record.Record, n)
	mrecs := make([]modelRec, n)
	for i := range recs {
		k := modelKeys[rng.IntN(len(modelKeys))]
		recs[i] = record.Record{OffsetDelta: int32(i), TimestampDelta: int64(i), Key: []byte(k)}
		mrecs[i] = modelRec{Off: int64(i), Key: k}
		if rng.IntN(8) == 0 {
			mrecs[i].Tombstone = true
			continue
		}
		v := make([]byte, valueSize)
		copy(v, fmt.Sprintf("%s-%d", tag, i))
		recs[i].Value = v
		mrecs[i].Value = string(v)
	}
	return record.Build(opts, recs), mrecs
}

// decodeRead returns the records of every whole batch in data (a read
// result may end in a partial batch) and the last offset covered.
func decodeRead(t *testing.T, data []byte) ([]modelRec, int64) {
	t.Helper()
	var out []modelRec
	last := int64(-1)
	for len(data) > 0 {
		batch, h, err := nextBatch(data)
		if err != nil {
			break
		}
		if err := record.CheckCRC(batch); err != nil {
			t.Fatalf("batch at %d: %v", h.BaseOffset, err)
		}
		hdr, err := record.ParseBatchHeader(batch)
		if err != nil {
			t.Fatal(err)
		}
		err = record.ForEachRecord(batch, func(r *record.Record) error {
			out = append(out, modelRec{Off: r.Offset(hdr), Key: string(r.Key), Value: string(r.Value), Tombstone: r.Value == nil})
			return nil
		})
		if err != nil {
			t.Fatalf("batch at %d: %v", h.BaseOffset, err)
		}
		last = h.LastOffset()
		data = data[len(batch):]
	}
	return out, last
}

// TestLogAgainstModel runs random interleavings of append, read, roll,
// truncate, retention, compaction and reopen against the model. A read
// must return exactly the model's batch holding the offset, byte for byte
// while the batch is as appended, and exactly the model's records once a
// cleaner pass has rewritten it.
func TestLogAgainstModel(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { runModel(t, seed, 300) })
	}
}

func runModel(t *testing.T, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, 42))
	// The log lives in <tmp>/t-0 so that the cleaner's
	// cleaner-offset-checkpoint lands in the test's own directory.
	dir := filepath.Join(t.TempDir(), "t-0")
	clock := newFakeClock()
	cfg := testConfig()
	cfg.SegmentBytes = int64(1500 + rng.IntN(3000))
	// compact,delete: the cleaner runs, and DeleteRecords and retention
	// still apply.
	cfg.CleanupPolicyCompact, cfg.CleanupPolicyDelete = true, true
	cfg.DeleteRetentionMs = 300
	ccfg := DefaultCleanerConfig()
	ccfg.DedupeBufferSize = 1 << 20
	ccfg.Clock = clock.Now
	r := &modelRun{t: t, rng: rng, dir: dir, clock: clock, cfg: cfg, cleaner: NewCleaner(nil, ccfg), m: &logModel{}}
	r.l = openTestLog(t, dir, cfg, clock)
	defer func() { r.l.Close() }()
	m := r.m
	for r.step = 0; r.step < steps; r.step++ {
		op := rng.IntN(100)
		switch {
		case op < 42:
			r.appendBatch()
		case op < 65:
			r.read()
		case op < 70:
			r.readOutOfRange()
		case op < 74:
			r.roll()
		case op < 79:
			r.truncate()
		case op < 85:
			r.deleteRecords()
		case op < 95:
			r.compact()
		default:
			r.reopen()
		}
		if r.l.LogEndOffset() != m.leo {
			t.Fatalf("step %d: LEO %d want %d", r.step, r.l.LogEndOffset(), m.leo)
		}
		if r.l.LogStartOffset() != m.logStart {
			t.Fatalf("step %d: log start %d want %d", r.step, r.l.LogStartOffset(), m.logStart)
		}
	}
	if r.compactions == 0 {
		t.Fatalf("seed %d: no cleaner pass compacted anything", seed)
	}
}

// modelRun is one run of the model test: the log, its model, and the
// state the steps share.
type modelRun struct {
	t           *testing.T
	rng         *rand.Rand
	dir         string
	clock       *fakeClock
	cfg         LogConfig
	cleaner     *Cleaner
	l           *Log
	m           *logModel
	epoch       int32
	compactions int
	step        int
}

// appendBatch appends a batch of 1-5 records as leader (now and then in a
// new leader epoch) and checks the offsets it got.
func (r *modelRun) appendBatch() {
	t, l, m, rng, clock, step := r.t, r.l, r.m, r.rng, r.clock, r.step
	n := 1 + rng.IntN(5)
	b, recs := makeModelBatch(rng, n, rng.IntN(200), clock.Now().UnixMilli(), fmt.Sprint(step))
	if rng.IntN(10) == 0 {
		r.epoch++
	}
	info, err := l.AppendAsLeader(b, r.epoch)
	if err != nil {
		t.Fatalf("step %d append: %v", step, err)
	}
	if info.FirstOffset != m.leo || info.LastOffset != m.leo+int64(n)-1 {
		t.Fatalf("step %d: append info %+v, model leo %d", step, info, m.leo)
	}
	for i := range recs {
		recs[i].Off += info.FirstOffset
	}
	m.batches = append(m.batches, modelBatch{base: info.FirstOffset, last: info.LastOffset, data: b, recs: recs})
	m.leo = info.LastOffset + 1
	clock.Advance(7)
}

// read reads from a random offset and checks the bytes and records
// against the model, and that a read bounded by maxOffset stops there.
func (r *modelRun) read() {
	t, l, m, rng, step := r.t, r.l, r.m, r.rng, r.step
	if m.leo == m.logStart {
		return
	}
	off := m.logStart + rng.Int64N(m.leo-m.logStart)
	fd, err := l.Read(off, int32(rng.IntN(600)), m.leo, true)
	if err != nil {
		t.Fatalf("step %d read %d: %v", step, off, err)
	}
	got, err := fd.Records.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want, ok := m.batchFor(off)
	if !ok {
		// The cleaner removed every batch from off to the end of
		// the inactive segments (tombstones past their horizon)
		// and the active segment is empty: nothing to return.
		if recs, _ := decodeRead(t, got); len(recs) != 0 {
			t.Fatalf("step %d: read at %d returned %+v, the model has nothing there", step, off, recs)
		}
		return
	}
	if want.data != nil && (len(got) < len(want.data) || !bytes.Equal(got[:len(want.data)], want.data)) {
		t.Fatalf("step %d: read at %d returned %d bytes not starting with batch %d-%d", step, off, len(got), want.base, want.last)
	}
	// A batch the cleaner rewrote keeps its base and last offset.
	if h, err := parseBatchHeader(got); err != nil || fd.FirstOffset != want.base ||
		h.BaseOffset != want.base || h.LastOffset() != want.last {
		t.Fatalf("step %d: read at %d starts with batch %d-%d (FirstOffset %d, %v), model batch %d-%d",
			step, off, h.BaseOffset, h.LastOffset(), fd.FirstOffset, err, want.base, want.last)
	}
	// Record by record: everything from off to the end of the
	// last whole batch returned is the model's.
	gotRecs, last := decodeRead(t, got)
	if last < want.last {
		t.Fatalf("step %d: read at %d covers up to %d, model batch ends at %d", step, off, last, want.last)
	}
	from := max(off, m.logStart)
	var gotFrom []modelRec
	for _, r := range gotRecs {
		if r.Off >= from {
			gotFrom = append(gotFrom, r)
		}
	}
	if wantRecs := m.recsFrom(from, last); !reflect.DeepEqual(gotFrom, wantRecs) {
		t.Fatalf("step %d: read at %d:\n got %+v\nwant %+v", step, off, gotFrom, wantRecs)
	}
	// Upper bound: nothing at or past maxOffset.
	if want.last+1 < m.leo {
		fd, err := l.Read(off, 1<<20, want.last+1, true)
		if err != nil {
			t.Fatal(err)
		}
		b, err := fd.Records.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if _, last := decodeRead(t, b); last != want.last {
			t.Fatalf("step %d: read bounded by %d ends at %d", step, want.last+1, last)
		}
		if want.data != nil && len(b) != len(want.data) {
			t.Fatalf("step %d: bounded read returned %d bytes, want %d", step, len(b), len(want.data))
		}
	}
}

// readOutOfRange checks that reads past the end or below the log start
// are OFFSET_OUT_OF_RANGE.
func (r *modelRun) readOutOfRange() {
	t, l, m, step := r.t, r.l, r.m, r.step
	if _, err := l.Read(m.leo+1, 100, m.leo+1, true); !errors.Is(err, kerr.OffsetOutOfRange) {
		t.Fatalf("step %d: read past end: %v", step, err)
	}
	if m.logStart > 0 {
		if _, err := l.Read(m.logStart-1, 100, m.leo, true); !errors.Is(err, kerr.OffsetOutOfRange) {
			t.Fatalf("step %d: read below start: %v", step, err)
		}
	}
}

// roll forces a new active segment.
func (r *modelRun) roll() {
	t, l, step := r.t, r.l, r.step
	if err := l.Roll(); err != nil {
		t.Fatalf("step %d roll: %v", step, err)
	}
}

// truncate cuts the log back to a batch boundary, as replication does.
func (r *modelRun) truncate() {
	t, l, m, rng, step := r.t, r.l, r.m, r.rng, r.step
	if len(m.batches) == 0 {
		return
	}
	b := m.batches[rng.IntN(len(m.batches))]
	off := b.base
	if off < m.logStart {
		return
	}
	if err := l.TruncateTo(off); err != nil {
		t.Fatalf("step %d truncate %d: %v", step, off, err)
	}
	m.truncateTo(off)
}

// deleteRecords raises the log start offset (DeleteRecords), then runs
// retention and removes the deleted files.
func (r *modelRun) deleteRecords() {
	t, l, m, rng, clock, step := r.t, r.l, r.m, r.rng, r.clock, r.step
	l.SetHighWatermark(m.leo)
	if m.leo == m.logStart {
		return
	}
	off := m.logStart + rng.Int64N(m.leo-m.logStart+1)
	ls, err := l.DeleteRecordsBefore(off)
	if err != nil {
		t.Fatalf("step %d delete records %d: %v", step, off, err)
	}
	if ls != off && !(off < m.logStart) {
		t.Fatalf("step %d: new log start %d want %d", step, ls, off)
	}
	if off > m.logStart {
		m.logStart = off
	}
	if _, err := l.DeleteOldSegments(); err != nil {
		t.Fatal(err)
	}
	if err := l.deletePending(clock.Now()); err != nil {
		t.Fatal(err)
	}
	if bs := l.SegmentBaseOffsets(); bs[0] > m.logStart {
		t.Fatalf("step %d: first segment %d above log start %d", step, bs[0], m.logStart)
	}
}

// compact runs one cleaner pass, time moving on, and checks where it
// started and ended.
func (r *modelRun) compact() {
	t, l, m, rng, clock, cfg, cleaner, step := r.t, r.l, r.m, r.rng, r.clock, r.cfg, r.cleaner, r.step
	clock.Advance(time.Duration(rng.IntN(400)) * time.Millisecond)
	l.SetHighWatermark(m.leo)
	bases := l.SegmentBaseOffsets()
	active := bases[len(bases)-1]
	firstDirty := m.firstDirty()
	st, err := cleaner.CleanLog(l)
	if err != nil {
		t.Fatalf("step %d clean: %v", step, err)
	}
	if st.Aborted {
		t.Fatalf("step %d: pass aborted with no concurrent change: %+v", step, st)
	}
	if st.FirstDirtyOffset != firstDirty {
		t.Fatalf("step %d: pass started at %d, model's first dirty offset is %d", step, st.FirstDirtyOffset, firstDirty)
	}
	// With the high watermark at the end, no lag and a large offset
	// map, a pass cleans everything up to the active segment.
	if wantEnd := max(firstDirty, active); st.EndOffset != wantEnd {
		t.Fatalf("step %d: pass ended at %d, want %d (active segment %d)", step, st.EndOffset, wantEnd, active)
	}
	if st.EndOffset > firstDirty {
		m.compact(firstDirty, st.EndOffset, clock.Now().UnixMilli(), cfg.DeleteRetentionMs)
		r.compactions++
	}
	if err := l.deletePending(clock.Now()); err != nil {
		t.Fatal(err)
	}
	if bs := l.SegmentBaseOffsets(); bs[len(bs)-1] != active {
		t.Fatalf("step %d: active segment moved from %d to %d", step, active, bs[len(bs)-1])
	}
}

// reopen closes the log and loads it again (as an unclean start: full
// recovery).
func (r *modelRun) reopen() {
	t, l, m, clock, cfg, dir, step := r.t, r.l, r.m, r.clock, r.cfg, r.dir, r.step
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	r.l = openTestLog(t, dir, cfg, clock)
	l = r.l
	// Recovery finds the log end after the last batch. It is the
	// model's LEO unless a truncation made a compacted segment
	// active again and the cleaner had removed the batches at its
	// end; then, as in Kafka, the log ends after the last batch
	// left (nothing readable is lost: those offsets were empty).
	tail := int64(0)
	if n := len(m.batches); n > 0 {
		tail = m.batches[n-1].last + 1
	}
	if leo := l.LogEndOffset(); leo != m.leo && (tail == m.leo || leo < tail || leo > m.leo) {
		t.Fatalf("step %d: LEO after reopen %d want %d (last batch ends at %d)", step, leo, m.leo, tail)
	}
	m.leo = l.LogEndOffset()
	if ls := l.LogStartOffset(); ls > m.logStart {
		t.Fatalf("step %d: log start after reopen %d above %d", step, ls, m.logStart)
	} else {
		m.logStart = ls // the standalone log has no log-start checkpoint
	}
}
