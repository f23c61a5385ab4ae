package txn

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/klassik/klassik/broker/common"
)

// State is a transaction's state, with the byte Kafka writes in the
// transaction_status field of a __transaction_state value.
type State int8

// The states of TransactionMetadata.scala, with their wire bytes.
const (
	// Empty: the id has a producer id and epoch but no transaction.
	Empty State = 0
	// Ongoing: partitions (or a group's offsets) were added.
	Ongoing State = 1
	// PrepareCommit, PrepareAbort: EndTxn (or an abort by the
	// coordinator) was written; markers are being sent.
	PrepareCommit State = 2
	PrepareAbort  State = 3
	// CompleteCommit, CompleteAbort: every partition has its marker.
	CompleteCommit State = 4
	CompleteAbort  State = 5
	// Dead: the id is being expired; only its tombstone follows.
	Dead State = 6
	// PrepareEpochFence: the coordinator bumps the epoch of an Ongoing
	// transaction to abort it (never written as such: PrepareAbort with
	// the bumped epoch is).
	PrepareEpochFence State = 7

	noState State = -1
)

var stateNames = [...]string{"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort",
	"Dead", "PrepareEpochFence"}

// String is Kafka's name of the state (TransactionState.name), which
// DescribeTransactions and ListTransactions carry.
func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	if s == noState {
		return "None"
	}
	return fmt.Sprintf("Unknown(%d)", int8(s))
}

// StateFromName parses a Kafka state name (ListTransactions filters).
func StateFromName(name string) (State, bool) {
	for i, n := range stateNames {
		if n == name {
			return State(i), true
		}
	}
	return noState, false
}

// expirationAllowed: only an id with no transaction in flight (Empty,
// CompleteCommit, CompleteAbort) may be expired.
func (s State) expirationAllowed() bool {
	return s == Empty || s == CompleteCommit || s == CompleteAbort
}

// validPrevious is Kafka's table of the states a state may be entered
// from; every other transition is refused with an error.
var validPrevious = map[State][]State{
	Empty:             {Empty, CompleteCommit, CompleteAbort},
	Ongoing:           {Ongoing, Empty, CompleteCommit, CompleteAbort},
	PrepareCommit:     {Ongoing},
	PrepareAbort:      {Ongoing, PrepareEpochFence},
	CompleteCommit:    {PrepareCommit},
	CompleteAbort:     {PrepareAbort},
	Dead:              {Empty, CompleteAbort, CompleteCommit},
	PrepareEpochFence: {Ongoing},
}

// CanTransition reports whether Kafka allows from -> to.
func CanTransition(from, to State) bool {
	return slices.Contains(validPrevious[to], from)
}

const (
	noProducerID    int64 = -1
	noProducerEpoch int16 = -1
)

// epochExhausted: a producer may not be handed an epoch of
// math.MaxInt16, so the coordinator can always fence it with one more
// bump; at MaxInt16-1 the next InitProducerId rotates to a new producer
// id instead.
func epochExhausted(epoch int16) bool { return epoch >= math.MaxInt16-1 }

// txnMetadata is one transactional id's state (Kafka's
// TransactionMetadata). mu guards every field below it; a state change
// is prepared under mu (setting pending, which refuses other changes
// with CONCURRENT_TRANSACTIONS), written to the log with mu released,
// and completed under mu again.
type txnMetadata struct {
	id        string
	partition int32 // its __transaction_state partition

	// mu guards the following.
	mu                sync.Mutex
	producerID        int64
	lastProducerID    int64
	producerEpoch     int16
	lastProducerEpoch int16
	timeoutMs         int32
	state             State
	pending           State // noState when no change is in flight
	partitions        map[common.TopicPartition]struct{}
	startMs           int64 // first partition added; -1 in Empty
	lastUpdateMs      int64
	// failedEpochFence: a fence's bumped epoch may not have reached the
	// log, so the next fence reuses the epoch instead of bumping again
	// (the bumped epoch was never returned to a client).
	failedEpochFence bool
}

func newTxnMetadata(id string, partition int32, pid int64, timeoutMs int32, nowMs int64) *txnMetadata {
	return &txnMetadata{id: id, partition: partition, producerID: pid, lastProducerID: noProducerID,
		producerEpoch: noProducerEpoch, lastProducerEpoch: noProducerEpoch, timeoutMs: timeoutMs, state: Empty,
		pending: noState, partitions: map[common.TopicPartition]struct{}{}, startMs: -1, lastUpdateMs: nowMs}
}

// transit is the target of one state change (Kafka's TxnTransitMetadata):
// what is written to the log and then applied.
type transit struct {
	producerID        int64
	lastProducerID    int64
	producerEpoch     int16
	lastProducerEpoch int16
	timeoutMs         int32
	state             State
	partitions        []common.TopicPartition // sorted
	startMs           int64
	lastUpdateMs      int64
}

func (t transit) String() string {
	return fmt.Sprintf("{pid=%d epoch=%d last_epoch=%d state=%s partitions=%v timeout_ms=%d}", t.producerID,
		t.producerEpoch, t.lastProducerEpoch, t.state, t.partitions, t.timeoutMs)
}

// value is the record that persists t.
func (t transit) value() Value {
	return Value{ProducerID: t.producerID, ProducerEpoch: t.producerEpoch, TimeoutMs: t.timeoutMs, State: t.state,
		Partitions: t.partitions, LastUpdateMs: t.lastUpdateMs, StartMs: t.startMs}
}

func (m *txnMetadata) sortedPartitionsLocked() []common.TopicPartition {
	out := make([]common.TopicPartition, 0, len(m.partitions))
	for tp := range m.partitions {
		out = append(out, tp)
	}
	slices.SortFunc(out, common.TopicPartition.Compare)
	return out
}

// forEachTopic calls fn once per run of one topic's partitions in tps,
// in order: a list sorted or grouped by topic gives one call per topic.
func forEachTopic(tps []common.TopicPartition, fn func(topic string, partitions []int32)) {
	for i := 0; i < len(tps); {
		j := i
		var partitions []int32
		for ; j < len(tps) && tps[j].Topic == tps[i].Topic; j++ {
			partitions = append(partitions, tps[j].Partition)
		}
		fn(tps[i].Topic, partitions)
		i = j
	}
}

func (m *txnMetadata) pendingLocked() bool { return m.pending != noState }

// prepareLocked checks that the change to t.state is allowed and marks
// it pending. A change is refused while another is pending, with a
// negative producer id or epoch, or outside the valid-previous-state
// table.
func (m *txnMetadata) prepareLocked(state State, pid int64, epoch, lastEpoch int16, timeoutMs int32,
	parts []common.TopicPartition, startMs, nowMs int64) (transit, error) {
	if m.pendingLocked() {
		return transit{}, fmt.Errorf("txn: %s: preparing %s while %s is pending", m.id, state, m.pending)
	}
	if pid < 0 {
		return transit{}, fmt.Errorf("txn: %s: illegal new producer id %d", m.id, pid)
	}
	if epoch < 0 {
		return transit{}, fmt.Errorf("txn: %s: illegal new producer epoch %d", m.id, epoch)
	}
	if !CanTransition(m.state, state) {
		return transit{}, fmt.Errorf("txn: %s: illegal transition %s -> %s", m.id, m.state, state)
	}
	m.pending = state
	return transit{producerID: pid, lastProducerID: m.producerID, producerEpoch: epoch, lastProducerEpoch: lastEpoch,
		timeoutMs: timeoutMs, state: state, partitions: parts, startMs: startMs, lastUpdateMs: nowMs}, nil
}

// prepareEpochFenceLocked bumps the epoch to abort an Ongoing
// transaction (InitProducerId of a new producer, or a timeout). The bump
// is skipped when the previous fence's write failed.
func (m *txnMetadata) prepareEpochFenceLocked() (transit, error) {
	if m.producerEpoch == math.MaxInt16 {
		return transit{}, fmt.Errorf("txn: %s: cannot fence producer epoch %d", m.id, m.producerEpoch)
	}
	epoch := m.producerEpoch + 1
	if m.failedEpochFence {
		epoch = m.producerEpoch
	}
	return m.prepareLocked(PrepareEpochFence, m.producerID, epoch, noProducerEpoch, m.timeoutMs,
		m.sortedPartitionsLocked(), m.startMs, m.lastUpdateMs)
}

// errFenced is returned by prepareIncrementEpochLocked when the
// request's expected epoch is neither the current nor the previous one.
var errFenced = fmt.Errorf("txn: producer fenced")

// prepareIncrementEpochLocked is InitProducerId's epoch bump. Without an
// expected epoch the epoch is bumped and the last epoch forgotten. With
// one (KIP-360): if it is the current epoch (or there is none yet), bump
// and remember the current one as last; if it is the last epoch, this is
// a retry of a bump whose answer was lost, so answer the current epoch
// unchanged; otherwise the producer is fenced.
func (m *txnMetadata) prepareIncrementEpochLocked(timeoutMs int32, expected *int16, nowMs int64) (transit, error) {
	if epochExhausted(m.producerEpoch) {
		return transit{}, fmt.Errorf("txn: %s: producer epoch %d exhausted", m.id, m.producerEpoch)
	}
	bumped := m.producerEpoch + 1
	next, last := bumped, noProducerEpoch
	if expected != nil {
		switch {
		case m.producerEpoch == noProducerEpoch || *expected == m.producerEpoch:
			next, last = bumped, m.producerEpoch
		case *expected == m.lastProducerEpoch:
			next, last = m.producerEpoch, m.lastProducerEpoch
		default:
			return transit{}, errFenced
		}
	}
	return m.prepareLocked(Empty, m.producerID, next, last, timeoutMs, nil, -1, nowMs)
}

// prepareRotateLocked moves the id to a new producer id at epoch 0 when
// the epochs of the old one are exhausted; with an expected epoch
// (KIP-360) the old epoch is remembered so a lost answer can be retried.
func (m *txnMetadata) prepareRotateLocked(pid int64, timeoutMs int32, nowMs int64, recordLast bool) (transit, error) {
	if m.state == Ongoing || m.state == PrepareCommit || m.state == PrepareAbort {
		return transit{}, fmt.Errorf("txn: %s: cannot rotate the producer id in %s", m.id, m.state)
	}
	last := noProducerEpoch
	if recordLast {
		last = m.producerEpoch
	}
	return m.prepareLocked(Empty, pid, 0, last, timeoutMs, nil, -1, nowMs)
}

// prepareAddPartitionsLocked starts (or extends) the transaction; its
// start time is set when it leaves Empty or Complete*.
func (m *txnMetadata) prepareAddPartitionsLocked(add []common.TopicPartition, nowMs int64) (transit, error) {
	start := m.startMs
	switch m.state {
	case Empty, CompleteCommit, CompleteAbort:
		start = nowMs
	}
	set := make(map[common.TopicPartition]struct{}, len(m.partitions)+len(add))
	for tp := range m.partitions {
		set[tp] = struct{}{}
	}
	for _, tp := range add {
		set[tp] = struct{}{}
	}
	parts := make([]common.TopicPartition, 0, len(set))
	for tp := range set {
		parts = append(parts, tp)
	}
	slices.SortFunc(parts, common.TopicPartition.Compare)
	return m.prepareLocked(Ongoing, m.producerID, m.producerEpoch, m.lastProducerEpoch, m.timeoutMs, parts, start, nowMs)
}

func (m *txnMetadata) prepareAbortOrCommitLocked(state State, nowMs int64) (transit, error) {
	return m.prepareLocked(state, m.producerID, m.producerEpoch, m.lastProducerEpoch, m.timeoutMs,
		m.sortedPartitionsLocked(), m.startMs, nowMs)
}

// prepareCompleteLocked targets CompleteCommit after PrepareCommit and
// CompleteAbort after PrepareAbort; the partition list is emptied.
func (m *txnMetadata) prepareCompleteLocked(nowMs int64) (transit, error) {
	state := CompleteAbort
	if m.state == PrepareCommit {
		state = CompleteCommit
	}
	// The prepare record is in the log, so an earlier failed fence is
	// now behind us.
	m.failedEpochFence = false
	return m.prepareLocked(state, m.producerID, m.producerEpoch, m.lastProducerEpoch, m.timeoutMs, nil, m.startMs, nowMs)
}

func (m *txnMetadata) prepareDeadLocked() (transit, error) {
	return m.prepareLocked(Dead, m.producerID, m.producerEpoch, m.lastProducerEpoch, m.timeoutMs, nil, m.startMs,
		m.lastUpdateMs)
}

// completeLocked applies t once its record is in the log. It checks what
// Kafka checks: t is the pending change; an Empty target keeps the epoch,
// bumps it by one or starts a new producer id at 0, with no partitions
// and no start time; the other targets keep producer id and epoch and
// the timeout; Ongoing only grows the partitions, Prepare* keeps them
// and the start time, Complete* clears them. PrepareEpochFence and Dead
// are never completed (the first becomes PrepareAbort, the second a
// removal).
func (m *txnMetadata) completeLocked(t transit) error {
	if m.pending == noState || m.pending != t.state {
		return fmt.Errorf("txn: %s: completing %v while %s is pending", m.id, t, m.pending)
	}
	sameProducer := t.producerID == m.producerID && t.producerEpoch == m.producerEpoch
	bad := false
	switch t.state {
	case Empty:
		validBump := t.producerEpoch == m.producerEpoch+1 || (t.producerEpoch == 0 && t.producerID != m.producerID)
		if (m.producerEpoch != t.producerEpoch && !validBump) || len(t.partitions) != 0 || t.startMs != -1 {
			bad = true
			break
		}
		m.timeoutMs = t.timeoutMs
		m.producerEpoch = t.producerEpoch
		m.lastProducerEpoch = t.lastProducerEpoch
		m.producerID = t.producerID
		m.lastProducerID = t.lastProducerID
	case Ongoing:
		if !sameProducer || m.timeoutMs != t.timeoutMs {
			bad = true
			break
		}
		for tp := range m.partitions {
			if _, ok := slices.BinarySearchFunc(t.partitions, tp, common.TopicPartition.Compare); !ok {
				bad = true
			}
		}
		if bad {
			break
		}
		m.startMs = t.startMs
		for _, tp := range t.partitions {
			m.partitions[tp] = struct{}{}
		}
	case PrepareCommit, PrepareAbort:
		if !sameProducer || m.timeoutMs != t.timeoutMs || m.startMs != t.startMs ||
			!slices.Equal(m.sortedPartitionsLocked(), t.partitions) {
			bad = true
		}
	case CompleteCommit, CompleteAbort:
		if !sameProducer || m.timeoutMs != t.timeoutMs || t.startMs == -1 {
			bad = true
			break
		}
		m.startMs = t.startMs
		clear(m.partitions)
	default:
		bad = true
	}
	if bad {
		return fmt.Errorf("txn: %s: unexpected transition from %s (pid=%d epoch=%d) to %v", m.id, m.state,
			m.producerID, m.producerEpoch, t)
	}
	m.lastUpdateMs = t.lastUpdateMs
	m.pending = noState
	m.state = t.state
	return nil
}

// removePartitionLocked drops a partition whose marker was written (or
// that no longer exists) while the transaction is being completed.
func (m *txnMetadata) removePartitionLocked(tp common.TopicPartition) {
	if m.state == PrepareCommit || m.state == PrepareAbort {
		delete(m.partitions, tp)
	}
}
