package replica

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/network"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// producePart is one partition of an acks=all produce waiting for the ISR.
type producePart struct {
	tp             common.TopicPartition
	requiredOffset int64 // last appended offset + 1
	code           int16 // REQUEST_TIMED_OUT until done
	done           bool
}

// delayedProduce is Kafka's DelayedProduce an
// acks=all produce that appended locally parks in the produce purgatory,
// watched under each appended partition, until the HW of every one of them
// passes its last appended offset, the partition stops being led here, the
// produce timeout runs out, or the request's connection goes away.
// A timeout completes the operation without the purgatory's per-operation
// lock, so a TryComplete may still be running when the parked request
// wakes up: mu makes the statuses it reads consistent.
//
// A produce request's op is also the network.Waiter of its deferred
// response: Wait, on the connection's writer, ends the wait and writes
// each partition's outcome into resp. Neither holds anything of the
// request or its frame, which the connection reuses meanwhile.
//
// Ops are reused (producePool), with their slices and done channel. An op
// has two users, and goes back to the pool when the second is through
// with it (refs counts them down):
//
//   - the purgatory, until it calls Released: after OnComplete and any
//     OnExpiration returned and with no TryComplete running or to come;
//   - the request's side (its owner), until it read the outcome: the
//     writer's Wait (the network layer drops a Waiter once Wait returned),
//     ProduceInto when the op completed before it returned, or
//     WaitForReplication.
//
// No one else can reach an op: the purgatory's late holders (a
// CheckAndComplete snapshot, a timer call started too late) check the
// entry's generation and never call into an op that is not theirs. done
// carries one token per use (OnComplete's); the last user drains a token
// the owner did not take before the op is reused.
type delayedProduce struct {
	m    *Manager
	ctx  context.Context
	done chan struct{} // capacity 1: OnComplete's token
	keys []string      // the watch keys of parts, in order
	refs atomic.Int32  // users left: the purgatory and the owner

	// resp and at are the produce response and where parts[i]'s code
	// goes (nil for WaitForReplication).
	resp *kmsg.ProduceResponse
	at   []respAt

	// mu guards the following.
	mu    sync.Mutex
	parts []producePart
}

// producePool holds free delayedProduces.
var producePool = sync.Pool{New: func() any { return &delayedProduce{done: make(chan struct{}, 1)} }}

// keptProducePartsMax bounds the partitions a pooled op keeps room for.
const keptProducePartsMax = 4096

// newDelayedProduce returns a free op for m and ctx, owned by the caller
// alone until it is passed to the purgatory.
func newDelayedProduce(m *Manager, ctx context.Context) *delayedProduce {
	d := producePool.Get().(*delayedProduce)
	d.m, d.ctx = m, ctx
	d.refs.Store(2)
	return d
}

// add appends an acks=all partition waiting for requiredOffset.
func (d *delayedProduce) add(tp common.TopicPartition, requiredOffset int64, at respAt) {
	d.parts = append(d.parts, producePart{tp: tp, requiredOffset: requiredOffset, code: kerr.RequestTimedOut.Code})
	d.keys = append(d.keys, partitionKey(tp))
	if d.resp != nil {
		d.at = append(d.at, at)
	}
}

// release ends one user's use of d; the last one returns d to the pool.
func (d *delayedProduce) release() {
	if d.refs.Add(-1) != 0 {
		return
	}
	select {
	case <-d.done: // a token the owner did not take
	default:
	}
	d.m, d.ctx, d.resp = nil, nil, nil
	if cap(d.parts) > keptProducePartsMax {
		d.parts, d.keys, d.at = nil, nil, nil
	}
	clear(d.keys)
	d.parts, d.keys, d.at = d.parts[:0], d.keys[:0], d.at[:0]
	producePool.Put(d)
}

// Released implements purgatory.Releaser.
func (d *delayedProduce) Released() { d.release() }

// respAt locates a partition in a ProduceResponse.
type respAt struct{ topic, part int }

// await blocks until the operation completed or its request's context
// ended; then it completes the operation (TryComplete releases it) and
// returns the context's error.
func (d *delayedProduce) await() error {
	select {
	case <-d.done:
		return nil
	case <-d.ctx.Done():
		d.m.produces.CheckAndComplete(d.keys[0])
		<-d.done
		return d.ctx.Err()
	}
}

var _ network.Waiter = (*delayedProduce)(nil)

// Wait implements network.Waiter for a produce request's op: after it
// returned, d belongs to the pool.
func (d *delayedProduce) Wait() error {
	defer d.release()
	if err := d.await(); err != nil {
		return err
	}
	d.fill()
	return nil
}

// fill writes each partition's final code into the response; call it
// once OnComplete's token was taken.
func (d *delayedProduce) fill() {
	for i, w := range d.at {
		d.resp.Topics[w.topic].Partitions[w.part].ErrorCode = d.code(i)
	}
}

// code returns the final status of parts[i], read after completion.
func (d *delayedProduce) code(i int) int16 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.parts[i].code
}

func (d *delayedProduce) TryComplete() bool {
	if d.ctx.Err() != nil {
		return true // the connection is closing: release the entry
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	all := true
	for i := range d.parts {
		pp := &d.parts[i]
		if pp.done {
			continue
		}
		if code, ok := d.m.checkEnoughReplicasReachOffset(pp.tp, pp.requiredOffset); ok {
			pp.code, pp.done = code, true
		} else {
			all = false
		}
	}
	return all
}

func (d *delayedProduce) OnComplete() { d.done <- struct{}{} }
func (d *delayedProduce) OnExpiration() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, pp := range d.parts {
		if !pp.done {
			d.m.metrics.expiredProduce(pp.tp)
		}
	}
}

// checkEnoughReplicasReachOffset decides one acks=all partition: done with
// NOT_LEADER_OR_FOLLOWER when this broker no longer leads the partition;
// done once the HW reached requiredOffset, with NONE if the maximal ISR
// still has min.insync.replicas members and NOT_ENOUGH_REPLICAS_AFTER_APPEND
// otherwise (the records are in the log and will be visible, but the
// durability asked for was not reached); else not done.
func (m *Manager) checkEnoughReplicasReachOffset(tp common.TopicPartition, requiredOffset int64) (int16, bool) {
	p, ok := m.Partition(tp)
	if !ok {
		return kerr.NotLeaderForPartition.Code, true
	}
	minISR := m.minISR(tp.Topic) // resolved before the lock
	p.mu.RLock()
	defer p.mu.RUnlock()
	if !p.isLeaderLocked() {
		return kerr.NotLeaderForPartition.Code, true
	}
	if p.log.HighWatermark() < requiredOffset {
		return 0, false
	}
	if len(p.maximalIsrLocked()) < minISR {
		return kerr.NotEnoughReplicasAfterAppend.Code, true
	}
	return 0, true
}

// wakeProduces re-checks the acks=all produces parked on tp. Never call it
// holding a Partition's lock.
func (m *Manager) wakeProduces(tp common.TopicPartition) {
	m.produces.CheckAndComplete(partitionKey(tp))
}

// wakeOnHighWatermark re-checks everything parked on tp after its HW rose
// or its role changed. The acks=all produces go first: they are what a
// follower's fetch raising the HW completes, and re-reading the parked
// fetches (the other followers', consumers') would otherwise delay their
// responses.
func (m *Manager) wakeOnHighWatermark(tp common.TopicPartition) {
	m.wakeProduces(tp)
	m.wakeFetches(tp)
}

// WaitForReplication waits until the ISR holds a partition's records up to
// lastOffset (the HW passed it), as an acks=all produce does, for at most
// timeout. It returns NONE, NOT_ENOUGH_REPLICAS_AFTER_APPEND,
// NOT_LEADER_OR_FOLLOWER or REQUEST_TIMED_OUT (kerr codes). Coordinators
// call it after AppendToLocalLog(acks=-1) to answer only once their write
// is durable, like Kafka's appendRecords with a DelayedProduce; it must not
// be called holding a lock that the fetch path needs.
func (m *Manager) WaitForReplication(ctx context.Context, tp common.TopicPartition, lastOffset int64, timeout time.Duration) int16 {
	op := newDelayedProduce(m, ctx)
	defer op.release()
	op.add(tp, lastOffset+1, respAt{})
	m.produces.TryCompleteElseWatch(op, timeout, op.keys...)
	if op.await() != nil {
		return kerr.RequestTimedOut.Code
	}
	return op.code(0)
}
