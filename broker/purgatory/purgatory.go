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

// Releaser is an Operation that reuses its memory for later operations:
// the purgatory calls Released exactly once for each TryCompleteElseWatch of
// it, after its own last use of the operation (OnComplete and, after a
// timeout, OnExpiration have returned, and no TryComplete is running or
// will run). Until then the operation must not be passed again or reset.
// An operation handed back by CancelForKey gets no Released: its caller
// owns it from then on.
type Releaser interface {
	Released()
}

// released calls op's Released, if it has one.
func released(op Operation) {
	if r, ok := op.(Releaser); ok {
		r.Released()
	}
}

// entry is the purgatory's bookkeeping for one operation. Entries (with
// their watch nodes and timer) are reused, one operation after another
// (Purgatory.entries); each use is a generation of the entry.
//
// Who may touch an entry, and when. Anyone who finds an entry under
// Purgatory.mu (a CheckAndComplete or Shutdown snapshot, a timer callback,
// the TryCompleteElseWatch that watched it) remembers the generation it
// saw and may keep the pointer after releasing the lock, for as long as it
// likes: the memory stays valid (it is never freed while referenced), and
// everything such a holder does is checked against its generation, so a
// holder left behind by an earlier generation never acts on a later one:
//
//   - completing is a compare-and-swap of state from (gen, pending) to
//     (gen, completed), which fails for any other generation;
//   - TryComplete is called only under mu, after state was seen to be
//     (gen, pending) under mu; op is written only under mu;
//   - a timer callback acts only if its timer is still the entry's and
//     still armed (see timerSlot).
//
// The one that wins the compare-and-swap (the completer) owns the entry:
// it unregisters it, runs OnComplete (and OnExpiration), waits on mu for a
// TryComplete still in progress (a timeout completes without mu), clears
// op under mu, calls Released and only then returns the entry for reuse.
type entry struct {
	// state is gen<<1 | 1 when completed: the generation of the entry's
	// current (or last) use and whether that use has completed. A free
	// entry is completed.
	state atomic.Uint64
	// mu is Kafka's per-operation lock: it serializes TryComplete (and
	// the OnComplete that follows a successful one).
	mu sync.Mutex
	op Operation // guarded by mu; nil while free

	// The following are guarded by Purgatory.mu.
	nodes []watchNode // one per watch key, in the key's watch list
	slot  *timerSlot  // the entry's reusable timer, nil before the first
	armed bool        // slot is armed for the current generation
}

const completedBit = 1

// timerSlot is an entry's timer, kept across generations. Its callback
// acts only while the slot is the entry's and armed, both checked under
// Purgatory.mu. A completion by other means disarms it under that lock:
// when Stop prevents the call the slot stays for the entry's next
// generation; when the call has already started (Stop reports false) the
// slot is detached from the entry, so that late callback finds e.slot !=
// slot and does nothing, and the entry's next use makes a new slot. So a
// slot is reset only when no call is due from an earlier arming (Stop
// prevented it, or that call found the slot armed and disarmed it), and a
// call that finds its slot attached and armed is the current arming's.
type timerSlot struct {
	p *Purgatory
	e *entry
	t Timer
}

func (s *timerSlot) fire() { s.p.onTimer(s) }

// keptNodesMax bounds the watch nodes a free entry keeps room for.
const keptNodesMax = 1024

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
	// entries holds the free entries (completed, op nil, no node in a
	// list, timer disarmed).
	entries sync.Pool

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
// expires op before returning if it cannot complete at once. An Operation
// value may be passed again only once the earlier pass has completed and,
// for a Releaser, once Released was called.
func (p *Purgatory) TryCompleteElseWatch(op Operation, timeout time.Duration, keys ...string) bool {
	// Nothing else can reach op yet: no entry is needed to try it.
	if op.TryComplete() {
		op.OnComplete()
		released(op)
		return true
	}
	e := p.getEntry()
	e.mu.Lock()
	gen := e.state.Load()>>1 + 1
	e.state.Store(gen << 1)
	e.op = op
	p.mu.Lock()
	closed := p.closed
	if !closed {
		p.pending[e] = struct{}{}
		if len(keys) > 0 {
			if cap(e.nodes) < len(keys) {
				e.nodes = make([]watchNode, len(keys))
			}
			e.nodes = e.nodes[:len(keys)]
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
		// claim fails only if CancelForKey or Shutdown got there
		// first; then OnComplete did not run here and we must not
		// report completion.
		if !p.claim(e, gen) {
			e.mu.Unlock()
			return false
		}
		op.OnComplete()
		e.op = nil
		e.mu.Unlock()
		p.free(e, op)
		return true
	}
	e.mu.Unlock()

	// From here on e may have completed and been reused: every use is
	// checked against gen.
	if closed || timeout <= 0 {
		p.expire(e, gen)
		return false
	}
	p.mu.Lock()
	if e.state.Load() == gen<<1 && !p.closed {
		// Armed under p.mu, so the callback (which takes p.mu) sees the
		// slot armed, and a completer (which disarms under p.mu) sees it
		// too.
		if e.slot == nil {
			s := &timerSlot{p: p, e: e}
			s.t = p.clock.AfterFunc(timeout, s.fire)
			e.slot = s
		} else {
			e.slot.t.Reset(timeout)
		}
		e.armed = true
	}
	p.mu.Unlock()
	return false
}

// getEntry returns a free entry.
func (p *Purgatory) getEntry() *entry {
	if e, ok := p.entries.Get().(*entry); ok {
		return e
	}
	e := new(entry)
	e.state.Store(completedBit) // generation 0, free
	return e
}

// free ends a completed generation of e, whose completer calls it after
// OnComplete (and OnExpiration) with e.op already cleared under e.mu: op
// is told it is released, and e is free for the next operation.
func (p *Purgatory) free(e *entry, op Operation) {
	released(op)
	p.entries.Put(e)
}

// onTimer is the timeout callback (Kafka's DelayedOperation.run).
func (p *Purgatory) onTimer(s *timerSlot) {
	e := s.e
	p.mu.Lock()
	if p.closed || e.slot != s || !e.armed {
		// Shut down (Shutdown expires every pending operation itself),
		// or a late call for a generation completed otherwise.
		p.mu.Unlock()
		return
	}
	e.armed = false
	st := e.state.Load()
	if st&completedBit != 0 || !e.state.CompareAndSwap(st, st|completedBit) {
		// Completed by another caller, which is about to unregister it.
		p.mu.Unlock()
		return
	}
	p.removeLocked(e)
	p.expiring.Add(1)
	p.mu.Unlock()
	defer p.expiring.Done()
	p.finishExpired(e)
}

// expire completes generation gen of e as timed out, unless it completed.
func (p *Purgatory) expire(e *entry, gen uint64) {
	if p.claim(e, gen) {
		p.finishExpired(e)
	}
}

// finishExpired is the completer's part of a timeout (or Shutdown): it
// runs without e.mu, as in Kafka, so a TryComplete may still be running;
// the lock taken before op is released waits for it.
func (p *Purgatory) finishExpired(e *entry) {
	// e.op was written before e was published under p.mu, which the
	// completer took since; only the completer changes it now.
	op := e.op
	op.OnComplete()
	op.OnExpiration()
	e.mu.Lock()
	e.op = nil
	e.mu.Unlock()
	p.free(e, op)
}

// claim is Kafka's forceComplete without the callbacks: the first caller
// for generation gen wins and unregisters the operation (its watch nodes,
// pending place and timer); the winner then runs OnComplete and frees e.
func (p *Purgatory) claim(e *entry, gen uint64) bool {
	if !e.state.CompareAndSwap(gen<<1, gen<<1|completedBit) {
		return false
	}
	p.mu.Lock()
	p.removeLocked(e)
	p.mu.Unlock()
	return true
}

// removeLocked unregisters a claimed entry and disarms its timer.
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
	if cap(e.nodes) > keptNodesMax {
		e.nodes = nil
	} else {
		e.nodes = e.nodes[:0]
	}
	if e.armed {
		e.armed = false
		if !e.slot.t.Stop() {
			// The callback has started: leave the slot to it.
			e.slot = nil
		}
	}
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

// watched is an entry found under a key, with the generation it was in.
type watched struct {
	e   *entry
	gen uint64
}

// appendWatchedLocked appends the operations watched under key to dst, in
// watch order.
func (p *Purgatory) appendWatchedLocked(dst []watched, key string) []watched {
	l := p.watchers[key]
	if l == nil {
		return dst
	}
	for nd := l.head; nd != nil; nd = nd.next {
		// An entry in a list is pending: its generation is current.
		dst = append(dst, watched{nd.e, nd.e.state.Load() >> 1})
	}
	return dst
}

// CheckAndComplete re-checks every operation watched under key and
// completes those whose TryComplete now succeeds. It returns how many it
// completed. Call it after anything that may satisfy an operation: an
// append or high-watermark move for a partition, a member joining a group.
func (p *Purgatory) CheckAndComplete(key string) int {
	var buf [16]watched // most keys have few operations: no allocation
	p.mu.Lock()
	ops := p.appendWatchedLocked(buf[:0], key)
	p.mu.Unlock()
	n := 0
	for _, w := range ops {
		e, pending := w.e, w.gen<<1
		if e.state.Load() != pending {
			continue // completed, perhaps reused since
		}
		e.mu.Lock()
		if e.state.Load() != pending || !e.op.TryComplete() || !p.claim(e, w.gen) {
			e.mu.Unlock()
			continue
		}
		op := e.op
		op.OnComplete()
		e.op = nil
		e.mu.Unlock()
		p.free(e, op)
		n++
	}
	return n
}

// CancelForKey stops watching every operation under key and returns them,
// without completing them or calling any callback (Kafka's cancelForKey,
// used when a group is removed). Their timers are stopped and they are
// forgotten under all their keys; no TryComplete of theirs is running when
// it returns.
func (p *Purgatory) CancelForKey(key string) []Operation {
	p.mu.Lock()
	var cancelled []*entry
	for _, w := range p.appendWatchedLocked(nil, key) {
		if !w.e.state.CompareAndSwap(w.gen<<1, w.gen<<1|completedBit) {
			continue
		}
		p.removeLocked(w.e)
		cancelled = append(cancelled, w.e)
	}
	p.mu.Unlock()
	var out []Operation
	for _, e := range cancelled {
		e.mu.Lock() // waits for a TryComplete in progress
		out = append(out, e.op)
		e.op = nil
		e.mu.Unlock()
		// No Released: the caller owns the operation now.
		p.entries.Put(e)
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
	var ops []watched
	for e := range p.pending {
		ops = append(ops, watched{e, e.state.Load() >> 1})
	}
	p.mu.Unlock()
	for _, w := range ops {
		p.expire(w.e, w.gen)
	}
	p.expiring.Wait()
}
