package replica

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/klassik/klassik/broker/common"
)

// delayedFetch is Kafka's DelayedFetch: a fetch that found fewer than
// min_bytes parks in the fetch purgatory, watched under each of its
// partitions, until enough bytes are readable, a partition errors or
// changes leader epoch, max_wait_ms passes, the request's connection goes
// away, or the broker shuts down. TryComplete re-reads the partitions
// (file ranges and index lookups, no copying); the response itself is built
// by the parked request's own goroutine after OnComplete signalled it.
//
// Ops are reused (fetchOpPool) with their done channel, on the same terms
// as delayedProduce: two users, the purgatory until Released and the
// parked request's goroutine until fetchWithWait is through with it; the
// second to let go returns the op to the pool, after draining the token
// OnComplete left if the request did not take it.
type delayedFetch struct {
	m      *Manager
	parts  []fetchPart
	params fetchParams
	first  []partRead // the reads when the fetch was parked
	tries  *readBuf   // TryComplete's reads
	ctx    context.Context
	done   chan struct{} // capacity 1: OnComplete's token
	refs   atomic.Int32  // users left: the purgatory and the request

	// mu is held by TryComplete; finished, set by finish, makes every
	// later TryComplete report true without reading.
	mu       sync.Mutex
	finished bool
}

func (d *delayedFetch) TryComplete() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.finished || d.ctx.Err() != nil {
		return true // the fetch is answered, or its connection closing
	}
	reads, total, hasErr := d.m.readParts(d.parts, d.params, false, d.tries)
	return total >= int(d.params.minBytes) || hasErr || leadershipChanged(d.first, reads)
}

// finish is called by the parked fetch once it no longer waits: when it
// returns, no TryComplete is reading the fetch's partitions and none will
// (the purgatory runs a timeout's OnComplete without the operation's
// lock, so one may still be under way when done is signalled), and the
// fetch may reuse its memory.
func (d *delayedFetch) finish() {
	d.mu.Lock()
	d.finished = true
	d.mu.Unlock()
}

// fetchOpPool holds free delayedFetches.
var fetchOpPool = sync.Pool{New: func() any { return &delayedFetch{done: make(chan struct{}, 1)} }}

// newDelayedFetch returns a free op, owned by the caller alone until it is
// passed to the purgatory.
func newDelayedFetch(m *Manager, ctx context.Context, parts []fetchPart, params fetchParams, first []partRead, tries *readBuf) *delayedFetch {
	d := fetchOpPool.Get().(*delayedFetch)
	d.m, d.ctx, d.parts, d.params, d.first, d.tries = m, ctx, parts, params, first, tries
	d.finished = false // no one else can reach d: no lock needed
	d.refs.Store(2)
	return d
}

// release ends one user's use of d; the last one returns d to the pool.
func (d *delayedFetch) release() {
	if d.refs.Add(-1) != 0 {
		return
	}
	select {
	case <-d.done: // a token the request did not take
	default:
	}
	// What d pointed to is the connection's memory: drop it.
	d.m, d.ctx, d.parts, d.first, d.tries = nil, nil, nil, nil, nil
	fetchOpPool.Put(d)
}

// Released implements purgatory.Releaser.
func (d *delayedFetch) Released() { d.release() }

func (d *delayedFetch) OnComplete() { d.done <- struct{}{} }
func (d *delayedFetch) OnExpiration() {
	if d.params.replicaID >= 0 {
		d.m.metrics.fetchExpiresFollower.Mark(1)
	} else {
		d.m.metrics.fetchExpiresConsumer.Mark(1)
	}
}

func partitionKey(tp common.TopicPartition) string {
	return cachedPartitionKey(tp)
}

// wakeFetches re-checks the fetches parked on tp (after an append, a
// high-watermark move or a role change). Never call it holding a
// Partition's lock: TryComplete takes partition read locks.
func (m *Manager) wakeFetches(tp common.TopicPartition) {
	m.fetches.CheckAndComplete(partitionKey(tp))
}
