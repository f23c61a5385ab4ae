package storage

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// modelBatch is one batch as the model remembers it.
type modelBatch struct {
	base, last int64
	data       []byte
}

// logModel is the simple in-memory model of a Log: batches in order, the
// log start offset and the log end offset.
type logModel struct {
	batches  []modelBatch
	logStart int64
	leo      int64
}

func (m *logModel) batchFor(off int64) (modelBatch, bool) {
	for _, b := range m.batches {
		if b.last >= off {
			return b, true
		}
	}
	return modelBatch{}, false
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
}

// TestLogAgainstModel runs random interleavings of append, read, roll,
// truncate, retention and reopen against the model. Every read must return
// exactly the model's batch holding the offset, byte for byte.
func TestLogAgainstModel(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { runModel(t, seed, 250) })
	}
}

func runModel(t *testing.T, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, 42))
	dir := t.TempDir()
	clock := newFakeClock()
	cfg := testConfig()
	cfg.SegmentBytes = int64(1500 + rng.IntN(3000))
	l := openTestLog(t, dir, cfg, clock)
	defer func() { l.Close() }()
	m := &logModel{}
	epoch := int32(0)
	for step := 0; step < steps; step++ {
		op := rng.IntN(100)
		switch {
		case op < 45: // append
			n := 1 + rng.IntN(5)
			b := makeBatch(n, rng.IntN(200), clock.Now().UnixMilli(), fmt.Sprint(step))
			if rng.IntN(10) == 0 {
				epoch++
			}
			info, err := l.AppendAsLeader(b, epoch)
			if err != nil {
				t.Fatalf("step %d append: %v", step, err)
			}
			if info.FirstOffset != m.leo || info.LastOffset != m.leo+int64(n)-1 {
				t.Fatalf("step %d: append info %+v, model leo %d", step, info, m.leo)
			}
			m.batches = append(m.batches, modelBatch{info.FirstOffset, info.LastOffset, b})
			m.leo = info.LastOffset + 1
			clock.Advance(7)
		case op < 70: // read
			if m.leo == m.logStart {
				continue
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
				t.Fatalf("model has no batch for %d", off)
			}
			if len(got) < len(want.data) || !bytes.Equal(got[:len(want.data)], want.data) {
				t.Fatalf("step %d: read at %d returned %d bytes not starting with batch %d-%d", step, off, len(got), want.base, want.last)
			}
			if fd.FirstOffset != want.base {
				t.Fatalf("step %d: FirstOffset %d want %d", step, fd.FirstOffset, want.base)
			}
			// Upper bound: nothing at or past maxOffset.
			if want.last+1 < m.leo {
				fd, err := l.Read(off, 1<<20, want.last+1, true)
				if err != nil {
					t.Fatal(err)
				}
				if fd.Records.Len() != len(want.data) {
					t.Fatalf("step %d: bounded read returned %d bytes, want %d", step, fd.Records.Len(), len(want.data))
				}
			}
		case op < 75: // out of range reads
			if _, err := l.Read(m.leo+1, 100, m.leo+1, true); !errors.Is(err, kerr.OffsetOutOfRange) {
				t.Fatalf("step %d: read past end: %v", step, err)
			}
			if m.logStart > 0 {
				if _, err := l.Read(m.logStart-1, 100, m.leo, true); !errors.Is(err, kerr.OffsetOutOfRange) {
					t.Fatalf("step %d: read below start: %v", step, err)
				}
			}
		case op < 79:
			if err := l.Roll(); err != nil {
				t.Fatalf("step %d roll: %v", step, err)
			}
		case op < 85: // truncate (replication), usually at a batch boundary
			if len(m.batches) == 0 {
				continue
			}
			b := m.batches[rng.IntN(len(m.batches))]
			off := b.base
			if off < m.logStart {
				continue
			}
			if err := l.TruncateTo(off); err != nil {
				t.Fatalf("step %d truncate %d: %v", step, off, err)
			}
			m.truncateTo(off)
		case op < 92: // DeleteRecords + retention
			l.SetHighWatermark(m.leo)
			if m.leo == m.logStart {
				continue
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
		default: // reopen (treated as unclean: full recovery)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l = openTestLog(t, dir, cfg, clock)
			if l.LogEndOffset() != m.leo {
				t.Fatalf("step %d: LEO after reopen %d want %d", step, l.LogEndOffset(), m.leo)
			}
			if ls := l.LogStartOffset(); ls > m.logStart {
				t.Fatalf("step %d: log start after reopen %d above %d", step, ls, m.logStart)
			} else {
				m.logStart = ls // the standalone log has no log-start checkpoint
			}
		}
		if l.LogEndOffset() != m.leo {
			t.Fatalf("step %d: LEO %d want %d", step, l.LogEndOffset(), m.leo)
		}
		if l.LogStartOffset() != m.logStart {
			t.Fatalf("step %d: log start %d want %d", step, l.LogStartOffset(), m.logStart)
		}
	}
}
