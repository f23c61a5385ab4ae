package replica

import (
	"sync"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/zkpaths"
)

// The ISR writer persists the ISR changes leaders decide (Kafka 2.7+'s
// AlterIsrManager, here with the ZooKeeper-mode write): submitIsrChange
// queues a change and returns; one goroutine owned by the manager takes
// everything queued, writes it with one batched call of conditional writes
// (IsrUpdater.UpdateLeaderAndIsrsConditional: a few multis in flight, each
// write with the outcome it would have had alone), and applies each outcome
// under its partition's lock (applyIsrChange). Changes queued while a batch
// is being written go in the next one, so ten thousand followers rejoining
// cost a few round trips rather than ten thousand, and no fetch waits for
// ZooKeeper.

// isrWrite is one queued ISR change: the partition, its pending change
// (p.pendingIsr when queued) and the state to write.
type isrWrite struct {
	p      *Partition
	change *isrChange
	st     zkpaths.LeaderAndIsr
}

// isrWriter is the queue of the ISR writer goroutine.
type isrWriter struct {
	mu sync.Mutex
	// cond is signalled when applied grows or the writer stops.
	cond    sync.Cond
	queue   []isrWrite
	queued  uint64 // changes ever queued
	applied uint64 // changes whose outcome was applied (or found stale)
	started bool
	stopped bool          // Shutdown began: nothing more is queued
	wake    chan struct{} // capacity 1: something was queued
}

// enqueueIsrWrite queues w for the writer goroutine, starting it on first
// use. After Shutdown w is dropped (its partition stays pending, which no
// longer matters).
func (m *Manager) enqueueIsrWrite(w isrWrite) {
	iw := &m.isrWriter
	iw.mu.Lock()
	if iw.stopped {
		iw.mu.Unlock()
		return
	}
	if !iw.started {
		iw.started = true
		iw.cond.L = &iw.mu
		iw.wake = make(chan struct{}, 1)
		// Added under iw.mu before stopped is set, hence before
		// Shutdown's isrWG.Wait.
		m.isrWG.Add(1)
		go m.isrWriterLoop(iw.wake)
	}
	iw.queue = append(iw.queue, w)
	iw.queued++
	wake := iw.wake
	iw.mu.Unlock()
	select {
	case wake <- struct{}{}:
	default:
	}
}

// stopIsrWriter makes the writer refuse new changes and releases waiters;
// Shutdown calls it after closing done and before waiting for the
// goroutine.
func (m *Manager) stopIsrWriter() {
	iw := &m.isrWriter
	iw.mu.Lock()
	iw.stopped = true
	if iw.started {
		iw.cond.Broadcast()
	}
	iw.mu.Unlock()
}

// isrWriterLoop is the writer goroutine, owned by the manager; it exits
// when done is closed (a batch being written is finished first).
func (m *Manager) isrWriterLoop(wake <-chan struct{}) {
	defer m.isrWG.Done()
	iw := &m.isrWriter
	for {
		select {
		case <-m.done:
			return
		case <-wake:
		}
		for {
			iw.mu.Lock()
			batch := iw.queue
			iw.queue = nil
			iw.mu.Unlock()
			if len(batch) == 0 {
				break
			}
			m.writeIsrChanges(batch)
			iw.mu.Lock()
			iw.applied += uint64(len(batch))
			iw.cond.Broadcast()
			iw.mu.Unlock()
			select {
			case <-m.done:
				return
			default:
			}
		}
	}
}

// writeIsrChanges persists the changes of batch that are still pending and
// applies each outcome.
func (m *Manager) writeIsrChanges(batch []isrWrite) {
	live := batch[:0:0]
	for _, w := range batch {
		w.p.mu.RLock()
		current := w.p.pendingIsr == w.change
		w.p.mu.RUnlock()
		if current {
			live = append(live, w)
		}
	}
	if len(live) == 0 {
		return
	}
	tps := make([]common.TopicPartition, len(live))
	states := make([]zkpaths.LeaderAndIsr, len(live))
	for i, w := range live {
		tps[i], states[i] = w.p.tp, w.st
	}
	versions, errs := m.cfg.IsrUpdater.UpdateLeaderAndIsrsConditional(tps, states)
	for i, w := range live {
		m.applyIsrChange(w, versions[i], errs[i])
	}
}

// awaitIsrWrites waits until every ISR change queued before the call has
// been written and applied, or the writer stopped.
func (m *Manager) awaitIsrWrites() {
	iw := &m.isrWriter
	iw.mu.Lock()
	defer iw.mu.Unlock()
	if !iw.started {
		return
	}
	target := iw.queued
	for iw.applied < target && !iw.stopped {
		iw.cond.Wait()
	}
}
