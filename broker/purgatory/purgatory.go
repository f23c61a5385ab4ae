package purgatory

import (
	"sync"
	"sync/atomic"
	"time"
)

// Operation is a delayed operation (Kafka's DelayedOperation): a request
// that waits for a condition (enough fetchable bytes, replication up to the
// produce offset, all group members joined) or for its timeout.
//
// The purgatory calls TryComplete while holding the operation's own lock,
// so calls for one operation never overlap; TryComplete must be quick, must
// not block and must not call back into the purgatory. OnComplete runs
// exactly once, whichever of condition, timeout, CheckAndComplete or
// Shutdown comes first; after a timeout (or Shutdown) OnExpiration runs
// right after OnComplete, as in Kafka.
type Operation interface {
	// TryComplete reports whether the operation can complete now.
	TryComplete() bool
	// OnComplete does the completion work, typically sending the response.
	OnComplete()
	// OnExpiration is called after OnComplete when the operation timed out.
	OnExpiration()
}

// entry is the purgatory's bookkeeping for one operation.
type entry struct {
	op        Operation
	completed atomic.Bool
	// mu is Kafka's per-operation lock: it serializes TryComplete (and
	// the OnComplete that follows a successful one).
	mu sync.Mutex

	// The following are guarded by Purgatory.mu.
	nodes []watchNode // one per watch key, in the key's watch list
	timer Timer
}

// watchNode is an entry's place in one key's watch list. The lists are
// intrusive (the nodes live in the entry's own slice) so that watching an
// operation under k keys costs one allocation, not one per key.
type watchNode struct {
	e          *entry
	list       *watchList
	prev, next *watchNode
}

// watchList is the operations watched under one key, oldest first. An
// emptied list stays in Purgatory.watchers for the next operation on its
// key (a partition's parked fetches come and go many times a second); the
// emptied ones are swept once they are many (sweepEmptyLocked).
type watchList struct {
	head, tail *watchNode
	n          int
}

func (l *watchList) pushBack(nd *watchNode) {
	nd.list, nd.prev, nd.next = l, l.tail, nil
	if l.tail != nil {
		l.tail.next = nd
	} else {
		l.head = nd
	}
	l.tail = nd
	l.n++
}

func (l *watchList) remove(nd *watchNode) {
	if nd.prev != nil {
		nd.prev.next = nd.next
	} else {
		l.head = nd.next
	}
	if nd.next != nil {
		nd.next.prev = nd.prev
	} else {
		l.tail = nd.prev
	}
	nd.list, nd.prev, nd.next = nil, nil, nil
	l.n--
}

// minEmptySweep is how many emptied watch lists the purgatory keeps before
// it sweeps them out; more only when they are under half of all lists.
const minEmptySweep = 1024

// Purgatory is Kafka's DelayedOperationPurgatory: operations are watched
// under keys (a partition, a group) and re-checked when something changes
// for a key (CheckAndComplete); each has a timeout.
type Purgatory struct {
	name  string
	clock Clock

	// expiring counts timer callbacks in progress, so Shutdown can wait
	// for them.
	expiring sync.WaitGroup

	// mu guards the following and entry.nodes / entry.timer.
	mu       sync.Mutex
	watchers map[string]*watchList
	empty    int // lists in watchers with no operation
	pending  map[*entry]struct{}
	closed   bool
}

// New returns a purgatory. name is used in logs and metrics (Kafka's
// purgatoryName: "Produce", "Fetch", "Rebalance", "Heartbeat" ...); a nil
// clock means the wall clock.
func New(name string, clock Clock) *Purgatory {
	if clock == nil {
		clock = RealClock()
	}
	return &Purgatory{name: name, clock: clock, watchers: map[string]*watchList{}, pending: map[*entry]struct{}{}}
}

// Name returns the purgatory's name.
func (p *Purgatory) Name() string { return p.name }

// TryCompleteElseWatch tries to complete op; if it cannot, it watches op
// under every key, tries once more (a change may have slipped in between
// the first try and the watching — the second try closes that gap), and
// arms its timeout. It returns true iff op completed during this call
// through TryComplete. A timeout ≤ 0, or a purgatory already shut down,
// expires op before returning if it cannot complete at once. Each
// Operation value must be passed at most once.
func (p *Purgatory) TryCompleteElseWatch(op Operation, timeout time.Duration, keys ...string) bool {
	e := &entry{op: op}
	e.mu.Lock()
	if op.TryComplete() {
		p.complete(e)
		e.mu.Unlock()
		return true
	}
	p.mu.Lock()
	closed := p.closed
	if !closed {
		p.pending[e] = struct{}{}
		if len(keys) > 0 {
			e.nodes = make([]watchNode, len(keys))
		}
		for i, k := range keys {
			l := p.watchers[k]
			switch {
			case l == nil:
				l = &watchList{}
				p.watchers[k] = l
			case l.tail != nil && l.tail.e == e:
				continue // a repeated key: e was just added to its list
			case l.n == 0:
				p.empty--
			}
			e.nodes[i].e = e
			l.pushBack(&e.nodes[i])
		}
	}
	p.mu.Unlock()
	if !closed && op.TryComplete() {
		// complete fails only if CancelForKey or Shutdown got there
		// first; then OnComplete did not run here and we must not
		// report completion.
		done := p.complete(e)
		e.mu.Unlock()
		return done
	}
	e.mu.Unlock()

	if closed || timeout <= 0 {
		p.expire(e)
		return false
	}
	t := p.clock.AfterFunc(timeout, func() { p.onTimer(e) })
	p.mu.Lock()
	if e.completed.Load() || p.closed {
		// Completed (or shut down) while we were arming the timer.
		t.Stop()
	} else {
		e.timer = t
	}
	p.mu.Unlock()
	return false
}

// onTimer is the timeout callback (Kafka's DelayedOperation.run).
func (p *Purgatory) onTimer(e *entry) {
	p.mu.Lock()
	if p.closed {
		// Shutdown expires every pending operation itself.
		p.mu.Unlock()
		return
	}
	p.expiring.Add(1)
	p.mu.Unlock()
	defer p.expiring.Done()
	p.expire(e)
}

func (p *Purgatory) expire(e *entry) {
	if p.complete(e) {
		e.op.OnExpiration()
	}
}

// complete is Kafka's forceComplete: the first caller wins, unregisters
// the operation, stops its timer and runs OnComplete.
func (p *Purgatory) complete(e *entry) bool {
	if !e.completed.CompareAndSwap(false, true) {
		return false
	}
	p.mu.Lock()
	p.removeLocked(e)
	if e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}
	p.mu.Unlock()
	e.op.OnComplete()
	return true
}

func (p *Purgatory) removeLocked(e *entry) {
	delete(p.pending, e)
	for i := range e.nodes {
		nd := &e.nodes[i]
		if l := nd.list; l != nil {
			l.remove(nd)
			if l.n == 0 {
				p.empty++
			}
		}
		nd.e = nil
	}
	e.nodes = nil
	p.sweepEmptyLocked()
}

// sweepEmptyLocked drops the emptied watch lists once there are at least
// minEmptySweep of them and they are at least half of all lists, so keys
// that come and go (a member's heartbeat key, a deleted topic's
// partitions) do not pile up, while a steady set of keys keeps its lists.
func (p *Purgatory) sweepEmptyLocked() {
	if p.empty < minEmptySweep || 2*p.empty < len(p.watchers) {
		return
	}
	for k, l := range p.watchers {
		if l.n == 0 {
			delete(p.watchers, k)
		}
	}
	p.empty = 0
}

// appendWatchedLocked appends the operations watched under key to dst, in
// watch order.
func (p *Purgatory) appendWatchedLocked(dst []*entry, key string) []*entry {
	l := p.watchers[key]
	if l == nil {
		return dst
	}
	for nd := l.head; nd != nil; nd = nd.next {
		dst = append(dst, nd.e)
	}
	return dst
}

// CheckAndComplete re-checks every operation watched under key and
// completes those whose TryComplete now succeeds. It returns how many it
// completed. Call it after anything that may satisfy an operation: an
// append or high-watermark move for a partition, a member joining a group.
func (p *Purgatory) CheckAndComplete(key string) int {
	var buf [16]*entry // most keys have few operations: no allocation
	p.mu.Lock()
	ops := p.appendWatchedLocked(buf[:0], key)
	p.mu.Unlock()
	n := 0
	for _, e := range ops {
		if e.completed.Load() {
			continue
		}
		e.mu.Lock()
		if !e.completed.Load() && e.op.TryComplete() && p.complete(e) {
			n++
		}
		e.mu.Unlock()
	}
	return n
}

// CancelForKey stops watching every operation under key and returns them,
// without completing them or calling any callback (Kafka's cancelForKey,
// used when a group is removed). Their timers are stopped and they are
// forgotten under all their keys.
func (p *Purgatory) CancelForKey(key string) []Operation {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Operation
	for _, e := range p.appendWatchedLocked(nil, key) {
		if !e.completed.CompareAndSwap(false, true) {
			continue
		}
		if e.timer != nil {
			e.timer.Stop()
			e.timer = nil
		}
		p.removeLocked(e)
		out = append(out, e.op)
	}
	return out
}

// Watched is the number of pending operations watched under key.
func (p *Purgatory) Watched(key string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l := p.watchers[key]; l != nil {
		return l.n
	}
	return 0
}

// Delayed is the number of pending operations (Kafka's
// NumDelayedOperations).
func (p *Purgatory) Delayed() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pending)
}

// Shutdown stops the timers and expires every pending operation
// (OnComplete then OnExpiration), so nothing waiting on a delayed response
// hangs; it waits for timeout callbacks already running. Later
// TryCompleteElseWatch calls expire their operation at once if it cannot
// complete. Safe to call more than once.
func (p *Purgatory) Shutdown() {
	p.mu.Lock()
	p.closed = true
	var ops []*entry
	for e := range p.pending {
		ops = append(ops, e)
	}
	p.mu.Unlock()
	for _, e := range ops {
		p.expire(e)
	}
	p.expiring.Wait()
}
