package replica

import "sync"

// waiters is the wake-up side of fetch long-polling (the role Kafka's fetch
// purgatory plays for DelayedFetch): a parked fetch registers one waiter
// under every partition it reads, and appends, high-watermark moves and
// leadership changes on a partition poke the waiters of that partition. The
// parked request re-reads its partitions on each poke and decides itself
// whether to complete, so completion happens exactly once, on the
// connection's own goroutine, and needs no extra goroutine or lock order.
type waiters struct {
	// mu guards the following.
	mu   sync.Mutex
	byTP map[TopicPartition]map[*waiter]struct{}
}

type waiter struct {
	// ch has capacity 1: a poke while the fetch is busy re-reading is
	// remembered, further pokes are coalesced.
	ch chan struct{}
}

func newWaiters() *waiters {
	return &waiters{byTP: make(map[TopicPartition]map[*waiter]struct{})}
}

func (ws *waiters) add(tps []TopicPartition) *waiter {
	w := &waiter{ch: make(chan struct{}, 1)}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, tp := range tps {
		set := ws.byTP[tp]
		if set == nil {
			set = make(map[*waiter]struct{})
			ws.byTP[tp] = set
		}
		set[w] = struct{}{}
	}
	return w
}

func (ws *waiters) remove(w *waiter, tps []TopicPartition) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, tp := range tps {
		set := ws.byTP[tp]
		delete(set, w)
		if len(set) == 0 {
			delete(ws.byTP, tp)
		}
	}
}

// notify pokes every fetch parked on tp. It never blocks.
func (ws *waiters) notify(tp TopicPartition) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for w := range ws.byTP[tp] {
		select {
		case w.ch <- struct{}{}:
		default:
		}
	}
}

// count returns the number of waiters on tp (tests).
func (ws *waiters) count(tp TopicPartition) int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return len(ws.byTP[tp])
}
