package controller

// ControllerEventManager: the queue and the single goroutine that processes
// controller events one at a time. ZooKeeper watch
// callbacks, RPC handlers and channel-manager callbacks only call put; the
// loop owns the Context and the state machines.

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	gometrics "github.com/rcrowley/go-metrics"
)

// event is one controller event. preempt is called instead of processing
// when the event is drained by clearAndPut or shutdown; events carrying a
// caller's callback answer it there (NOT_CONTROLLER / controller moved).
type event interface {
	// state is the ControllerState name used for the per-state timer.
	state() string
	preempt()
}

// queuedEvent wraps an event with its enqueue time and the exactly-once
// guard shared by processing and preemption.
type queuedEvent struct {
	ev       event
	enqueued time.Time
	claimed  atomic.Bool
	started  chan struct{} // closed when processing begins
}

func (q *queuedEvent) claim() bool { return q.claimed.CompareAndSwap(false, true) }

// awaitStarted blocks until the loop has started processing the event (or
// it was preempted, or done is closed).
func (q *queuedEvent) awaitStarted(done <-chan struct{}) {
	select {
	case <-q.started:
	case <-done:
	}
}

type eventManager struct {
	process func(event)
	now     func() time.Time

	queueTime gometrics.Histogram
	queueSize gometrics.Gauge
	stateTime func(state string) gometrics.Timer
	hist      *history // the console's history; nil records nothing
	// current is the ControllerState value of the event being processed
	// (0, Idle, between events): the KafkaController ControllerState gauge.
	current atomic.Int64

	wake chan struct{} // capacity 1: "the queue may be non-empty"
	stop chan struct{}
	done chan struct{}

	// mu guards the following.
	mu      sync.Mutex
	queue   []*queuedEvent
	started bool
	stopped bool
}

func newEventManager(process func(event), reg gometrics.Registry, now func() time.Time) *eventManager {
	m := &eventManager{
		process: process,
		now:     now,
		wake:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	if reg == nil {
		reg = gometrics.NewRegistry()
	}
	m.queueTime = gometrics.GetOrRegisterHistogram("kafka.controller.ControllerEventManager.EventQueueTimeMs", reg, gometrics.NewExpDecaySample(1028, 0.015))
	m.queueSize = gometrics.GetOrRegisterGauge("kafka.controller.ControllerEventManager.EventQueueSize", reg)
	m.stateTime = stateTimers(reg)
	reg.GetOrRegister("kafka.controller.KafkaController.ControllerState", gometrics.NewFunctionalGauge(m.current.Load))
	return m
}

// start launches the event goroutine; it runs until close.
func (m *eventManager) start() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started || m.stopped {
		return
	}
	m.started = true
	go m.run()
}

// put enqueues an event. After close the event is preempted immediately.
func (m *eventManager) put(ev event) *queuedEvent {
	q := &queuedEvent{ev: ev, enqueued: m.now(), started: make(chan struct{})}
	m.mu.Lock()
	if m.stopped {
		m.mu.Unlock()
		if q.claim() {
			ev.preempt()
		}
		return q
	}
	m.queue = append(m.queue, q)
	m.queueSize.Update(int64(len(m.queue)))
	m.mu.Unlock()
	m.signal()
	return q
}

// clearAndPut atomically drains the queue, preempting every drained event,
// then enqueues ev (Kafka's clearAndPut, used for session expiry).
func (m *eventManager) clearAndPut(ev event) *queuedEvent {
	q := &queuedEvent{ev: ev, enqueued: m.now(), started: make(chan struct{})}
	m.mu.Lock()
	drained := m.queue
	m.queue = nil
	if m.stopped {
		m.mu.Unlock()
		preemptAll(append(drained, q))
		return q
	}
	m.queue = append(m.queue, q)
	m.queueSize.Update(int64(len(m.queue)))
	m.mu.Unlock()
	preemptAll(drained)
	m.signal()
	return q
}

func preemptAll(qs []*queuedEvent) {
	for _, q := range qs {
		if q.claim() {
			q.ev.preempt()
			close(q.started)
		}
	}
}

func (m *eventManager) signal() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// size is the number of queued events (EventQueueSize).
func (m *eventManager) size() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.queue)
}

func (m *eventManager) take() *queuedEvent {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.queue) == 0 {
		return nil
	}
	q := m.queue[0]
	m.queue[0] = nil
	m.queue = m.queue[1:]
	m.queueSize.Update(int64(len(m.queue)))
	return q
}

func (m *eventManager) run() {
	defer close(m.done)
	for {
		select {
		case <-m.stop:
			return
		case <-m.wake:
		}
		for {
			select {
			case <-m.stop:
				return
			default:
			}
			q := m.take()
			if q == nil {
				break
			}
			if !q.claim() {
				continue
			}
			close(q.started)
			m.queueTime.Update(m.now().Sub(q.enqueued).Milliseconds())
			begin := m.now()
			m.current.Store(controllerStateValue(q.ev.state()))
			m.process(q.ev)
			m.current.Store(0)
			end := m.now()
			m.stateTime(q.ev.state()).Update(end.Sub(begin))
			m.hist.recordEvent(q.ev, q.enqueued, begin, end, false)
		}
	}
}

// close stops the loop after the event in progress, waits for it, and
// preempts everything still queued. Safe to call more than once.
func (m *eventManager) close() {
	m.mu.Lock()
	if m.stopped {
		m.mu.Unlock()
		<-m.done
		return
	}
	m.stopped = true
	started := m.started
	drained := m.queue
	m.queue = nil
	m.mu.Unlock()
	close(m.stop)
	if started {
		<-m.done
	} else {
		close(m.done)
	}
	preemptAll(drained)
}

// result is an API call's answer: its value, or the error the caller gets.
type result[T any] struct {
	val T
	err error
}

// await queues ev, an API call's event, and waits for the one result the
// event sends on reply, or for ctx to end.
func await[T any](ctx context.Context, c *Controller, ev event, reply <-chan result[T]) (T, error) {
	c.em.put(ev)
	select {
	case r := <-reply:
		return r.val, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}
