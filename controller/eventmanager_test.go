package controller

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gometrics "github.com/rcrowley/go-metrics"
)

type testEvent struct {
	id        int
	preempted *atomic.Int32
	block     chan struct{}
}

func (e *testEvent) state() string { return "Test" }
func (e *testEvent) preempt()      { e.preempted.Add(1) }

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// "Exactly one goroutine processes controller events,
// FIFO, one at a time."
func TestEventManagerFIFOAndSingleGoroutine(t *testing.T) {
	var mu sync.Mutex
	var order []int
	var running atomic.Int32
	var overlap atomic.Bool
	reg := gometrics.NewRegistry()
	m := newEventManager(func(e event) {
		if running.Add(1) > 1 {
			overlap.Store(true)
		}
		mu.Lock()
		order = append(order, e.(*testEvent).id)
		mu.Unlock()
		running.Add(-1)
	}, reg, time.Now)
	m.start()
	var pre atomic.Int32
	for i := range 100 {
		m.put(&testEvent{id: i, preempted: &pre})
	}
	waitFor(t, "100 events", func() bool { mu.Lock(); defer mu.Unlock(); return len(order) == 100 })
	m.close()
	for i, v := range order {
		if v != i {
			t.Fatalf("out of order at %d: %v", i, order[:i+1])
		}
	}
	if overlap.Load() {
		t.Fatal("two events processed concurrently")
	}
	if h := reg.Get("kafka.controller.ControllerEventManager.EventQueueTimeMs").(gometrics.Histogram); h.Count() != 100 {
		t.Fatalf("queue time samples = %d", h.Count())
	}
}

// Clear-and-put drains the queue, preempting each drained event
// exactly once, then enqueues the new event.
func TestEventManagerClearAndPut(t *testing.T) {
	block := make(chan struct{})
	var processed []int
	var mu sync.Mutex
	m := newEventManager(func(e event) {
		te := e.(*testEvent)
		if te.block != nil {
			<-te.block
		}
		mu.Lock()
		processed = append(processed, te.id)
		mu.Unlock()
	}, nil, time.Now)
	m.start()
	var pre atomic.Int32
	first := m.put(&testEvent{id: 0, preempted: &pre, block: block})
	first.awaitStarted(m.done)
	for i := 1; i <= 5; i++ {
		m.put(&testEvent{id: i, preempted: &pre})
	}
	expire := m.clearAndPut(&testEvent{id: 99, preempted: &pre})
	if pre.Load() != 5 {
		t.Fatalf("preempted %d, want 5", pre.Load())
	}
	close(block)
	expire.awaitStarted(m.done)
	waitFor(t, "expire processed", func() bool { mu.Lock(); defer mu.Unlock(); return len(processed) == 2 })
	m.close()
	if processed[0] != 0 || processed[1] != 99 {
		t.Fatalf("processed %v", processed)
	}
	// After close, put preempts immediately.
	m.put(&testEvent{id: 100, preempted: &pre})
	if pre.Load() != 6 {
		t.Fatalf("put after close not preempted: %d", pre.Load())
	}
}

func TestEventManagerCloseWaitsAndPreemptsQueue(t *testing.T) {
	block := make(chan struct{})
	var done atomic.Bool
	m := newEventManager(func(e event) {
		if te := e.(*testEvent); te.block != nil {
			<-te.block
			done.Store(true)
		}
	}, nil, time.Now)
	m.start()
	var pre atomic.Int32
	q := m.put(&testEvent{id: 0, preempted: &pre, block: block})
	q.awaitStarted(m.done)
	m.put(&testEvent{id: 1, preempted: &pre})
	// Let the running event finish only once close has begun, so event 1
	// is still queued when close drains the queue.
	go func() {
		for {
			m.mu.Lock()
			stopped := m.stopped
			m.mu.Unlock()
			if stopped {
				break
			}
			time.Sleep(time.Millisecond)
		}
		close(block)
	}()
	m.close()
	if !done.Load() {
		t.Fatal("close returned before the running event finished")
	}
	if pre.Load() != 1 {
		t.Fatalf("preempted %d", pre.Load())
	}
	m.close() // idempotent
}
