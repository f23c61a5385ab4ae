package storage

// Checking one producer's batches against its state (Kafka's
// ProducerAppendInfo): epoch fencing, sequence order, transaction markers.
// Changes are staged on a copy of the entry and committed to the manager
// only when the whole append is accepted.

import (
	"fmt"
	"math"

	"github.com/klassik/klassik/broker/storage/record"
	"github.com/twmb/franz-go/pkg/kerr"
)

// producerAppendInfo stages the effect of one append on one producer
// (Kafka's ProducerAppendInfo), so that a failed check changes nothing.
type producerAppendInfo struct {
	current *ProducerStateEntry // state before this append (never nil)
	updated *ProducerStateEntry // state after the batches seen so far
	started []int64             // first offsets of transactions begun here
	origin  AppendOrigin
	strict  bool // false: replaying appended data, never fail
}

func (m *ProducerStateManager) prepare(pid int64, origin AppendOrigin, strict bool) *producerAppendInfo {
	cur := m.producers[pid]
	if cur == nil {
		cur = newProducerStateEntry(pid)
	}
	upd := newProducerStateEntry(pid)
	upd.ProducerEpoch = cur.ProducerEpoch
	upd.CoordinatorEpoch = cur.CoordinatorEpoch
	upd.LastTimestamp = cur.LastTimestamp
	upd.CurrentTxnFirstOffset = cur.CurrentTxnFirstOffset
	return &producerAppendInfo{current: cur, updated: upd, origin: origin, strict: strict}
}

func (a *producerAppendInfo) checkEpoch(epoch int16, offset int64) error {
	if epoch < a.updated.ProducerEpoch && a.origin != OriginReplication && a.strict {
		return fmt.Errorf("storage: epoch of producer %d at offset %d is %d, smaller than the last seen epoch %d: %w",
			a.updated.ProducerID, offset, epoch, a.updated.ProducerEpoch, kerr.InvalidProducerEpoch)
	}
	return nil
}

// checkSequence applies the sequence rule: with the same epoch a batch
// must start at the last sequence + 1 (0 after 2^31-1), with a new epoch
// at 0; otherwise OUT_OF_ORDER_SEQUENCE_NUMBER. Kafka ≥ 2.5 (KIP-360) never
// answers UNKNOWN_PRODUCER_ID here: a producer the partition has no state
// for (expired, or its data deleted) may continue with any sequence.
func (a *producerAppendInfo) checkSequence(epoch int16, firstSeq int32, offset int64) error {
	if epoch != a.updated.ProducerEpoch {
		if firstSeq != 0 && a.updated.ProducerEpoch != record.NoProducerEpoch {
			return fmt.Errorf("storage: invalid sequence number for new epoch of producer %d at offset %d: %d (request epoch), %d (seq. number), %d (current producer epoch): %w",
				a.updated.ProducerID, offset, epoch, firstSeq, a.updated.ProducerEpoch, kerr.OutOfOrderSequenceNumber)
		}
		return nil
	}
	currentLast := record.NoSequence
	switch {
	case len(a.updated.Batches) > 0:
		currentLast = a.updated.LastSeq()
	case epoch == a.current.ProducerEpoch:
		currentLast = a.current.LastSeq()
	}
	if a.current.ProducerEpoch == record.NoProducerEpoch || inSequence(currentLast, firstSeq) {
		return nil
	}
	return fmt.Errorf("storage: out of order sequence number for producer %d at offset %d: %d (incoming seq. number), %d (current end sequence number): %w",
		a.updated.ProducerID, offset, firstSeq, currentLast, kerr.OutOfOrderSequenceNumber)
}

func inSequence(last, next int32) bool {
	return int64(next) == int64(last)+1 || (next == 0 && last == math.MaxInt32)
}

func decrementSequence(seq, dec int32) int32 {
	if seq < dec {
		return math.MaxInt32 - (dec - seq) + 1
	}
	return seq - dec
}

// appendData applies a data batch.
func (a *producerAppendInfo) appendData(h record.BatchHeader) error {
	if err := a.checkEpoch(h.ProducerEpoch, h.BaseOffset); err != nil {
		return err
	}
	if a.origin == OriginClient && a.strict {
		if err := a.checkSequence(h.ProducerEpoch, h.BaseSequence, h.BaseOffset); err != nil {
			return err
		}
	}
	a.updated.addBatch(h.ProducerEpoch, h.LastSequence(), h.LastOffset(), int32(h.LastOffset()-h.BaseOffset), h.MaxTimestamp)
	switch {
	case a.updated.CurrentTxnFirstOffset >= 0 && !h.IsTransactional():
		if a.strict {
			return fmt.Errorf("storage: expected transactional write from producer %d at offset %d: %w",
				h.ProducerID, h.BaseOffset, kerr.InvalidTxnState)
		}
	case a.updated.CurrentTxnFirstOffset < 0 && h.IsTransactional():
		a.updated.CurrentTxnFirstOffset = h.BaseOffset
		a.started = append(a.started, h.BaseOffset)
	}
	return nil
}

// appendMarker applies a COMMIT/ABORT control batch; it returns the
// completed transaction, if the producer had one open.
func (a *producerAppendInfo) appendMarker(h record.BatchHeader, t record.ControlType, coordEpoch int32, ts int64) (*CompletedTxn, error) {
	if err := a.checkEpoch(h.ProducerEpoch, h.BaseOffset); err != nil {
		return nil, err
	}
	if a.updated.CoordinatorEpoch > coordEpoch && a.origin != OriginReplication && a.strict {
		return nil, fmt.Errorf("storage: invalid coordinator epoch for producer %d at offset %d: %d (zombie), %d (current): %w",
			h.ProducerID, h.BaseOffset, coordEpoch, a.updated.CoordinatorEpoch, kerr.TransactionCoordinatorFenced)
	}
	var done *CompletedTxn
	if a.updated.CurrentTxnFirstOffset >= 0 {
		done = &CompletedTxn{ProducerID: h.ProducerID, FirstOffset: a.updated.CurrentTxnFirstOffset,
			LastOffset: h.BaseOffset, IsAborted: t == record.ControlAbort}
	}
	a.updated.maybeUpdateEpoch(h.ProducerEpoch)
	a.updated.CurrentTxnFirstOffset = -1
	a.updated.CoordinatorEpoch = coordEpoch
	a.updated.LastTimestamp = ts
	return done, nil
}

// appendBatch applies one batch (data or control) to a staged append.
func (a *producerAppendInfo) appendBatch(batch []byte, h record.BatchHeader) (*CompletedTxn, error) {
	if !h.IsControl() {
		return nil, a.appendData(h)
	}
	var (
		found      bool
		t          record.ControlType
		coordEpoch int32
		ts         int64
	)
	err := record.ForEachRecord(batch, func(r *record.Record) error {
		if found {
			return nil
		}
		found = true
		var err error
		if _, t, err = record.ParseControlKey(r.Key); err != nil {
			return err
		}
		if _, coordEpoch, err = record.ParseEndTxnMarker(r.Value); err != nil {
			return err
		}
		ts = r.Timestamp(h)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("storage: control batch at offset %d: %w", h.BaseOffset, err)
	}
	if !found {
		// An emptied control batch: the cleaner removed the whole
		// transaction, so there is nothing to complete.
		return nil, nil
	}
	if t == record.ControlUnknown {
		return nil, nil
	}
	return a.appendMarker(h, t, coordEpoch, ts)
}

// commit makes a staged append the producer's state (Kafka's update).
func (m *ProducerStateManager) commit(a *producerAppendInfo) {
	pid := a.updated.ProducerID
	cur := m.producers[pid]
	if cur == nil {
		m.producers[pid] = a.updated
	} else {
		cur.maybeUpdateEpoch(a.updated.ProducerEpoch)
		for _, b := range a.updated.Batches {
			if len(cur.Batches) == numBatchesToRetain {
				copy(cur.Batches, cur.Batches[1:])
				cur.Batches = cur.Batches[:numBatchesToRetain-1]
			}
			cur.Batches = append(cur.Batches, b)
		}
		cur.CoordinatorEpoch = a.updated.CoordinatorEpoch
		cur.CurrentTxnFirstOffset = a.updated.CurrentTxnFirstOffset
		cur.LastTimestamp = a.updated.LastTimestamp
	}
	for _, first := range a.started {
		m.ongoing[first] = &ongoingTxn{producerID: pid, firstOffset: first, lastOffset: -1}
	}
}
