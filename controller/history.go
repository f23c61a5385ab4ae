package controller

// A bounded in-memory history of what the controller did, for the web
// console: the events the loop processed (with their queue and processing
// times) and the partition and replica state changes (from, to, reason),
// the same lines state.change.logger writes. Two ring buffers under one
// mutex; the event goroutine appends, HTTP handlers copy snapshots.

import (
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"
)

// History sizes: enough for a teaching cluster's last minutes, small enough
// that a snapshot stays a few tens of kilobytes.
const (
	historyEvents       = 200
	historyStateChanges = 500
)

// EventRecord is one processed (or preempted) controller event.
type EventRecord struct {
	// Name is the event type (BrokerChange, IsrChangeNotification, ...).
	Name string `json:"name"`
	// State is the ControllerState whose timer the event fed.
	State      string    `json:"state"`
	Enqueued   time.Time `json:"enqueued"`
	QueueMs    float64   `json:"queue_ms"`
	ProcessMs  float64   `json:"process_ms"`
	Preempted  bool      `json:"preempted,omitempty"`
	Controller int32     `json:"controller_epoch"`
}

// StateChange is one partition or replica state transition.
type StateChange struct {
	Time time.Time `json:"time"`
	// Kind is "partition" or "replica".
	Kind      string `json:"kind"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Replica is the broker id of the replica (replica changes only, else -1).
	Replica         int32  `json:"replica"`
	From            string `json:"from"`
	To              string `json:"to"`
	Reason          string `json:"reason"`
	Detail          string `json:"detail,omitempty"`
	ControllerEpoch int32  `json:"controller_epoch"`
}

// HistorySnapshot is a copy of the controller's recent history, oldest
// first.
type HistorySnapshot struct {
	Active       bool          `json:"active"`
	Epoch        int32         `json:"controller_epoch"`
	QueueSize    int           `json:"queue_size"`
	Events       []EventRecord `json:"events"`
	StateChanges []StateChange `json:"state_changes"`
}

type ring[T any] struct {
	buf  []T
	next int
	full bool
}

func (r *ring[T]) add(v T) {
	r.buf[r.next] = v
	r.next = (r.next + 1) % len(r.buf)
	if r.next == 0 {
		r.full = true
	}
}

func (r *ring[T]) snapshot() []T {
	if !r.full {
		return append([]T(nil), r.buf[:r.next]...)
	}
	out := make([]T, 0, len(r.buf))
	out = append(out, r.buf[r.next:]...)
	return append(out, r.buf[:r.next]...)
}

// history is safe for concurrent use; a nil *history records nothing (unit
// tests build state machines without one).
type history struct {
	epoch func() int32

	// mu guards the following.
	mu      sync.Mutex
	events  ring[EventRecord]
	changes ring[StateChange]
}

func newHistory(epoch func() int32) *history {
	return &history{
		epoch:   epoch,
		events:  ring[EventRecord]{buf: make([]EventRecord, historyEvents)},
		changes: ring[StateChange]{buf: make([]StateChange, historyStateChanges)},
	}
}

// eventName turns an event's Go type (brokerChangeEvent) into Kafka's
// event name (BrokerChange).
func eventName(ev event) string {
	n := fmt.Sprintf("%T", ev)
	n = n[strings.LastIndexByte(n, '.')+1:]
	n = strings.TrimSuffix(n, "Event")
	if n == "" {
		return "Unknown"
	}
	r := []rune(n)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

func (h *history) recordEvent(ev event, enqueued, begin, end time.Time, preempted bool) {
	if h == nil {
		return
	}
	rec := EventRecord{
		Name: eventName(ev), State: ev.state(), Enqueued: enqueued,
		QueueMs:   float64(begin.Sub(enqueued).Microseconds()) / 1000,
		ProcessMs: float64(end.Sub(begin).Microseconds()) / 1000,
		Preempted: preempted, Controller: h.epoch(),
	}
	h.mu.Lock()
	h.events.add(rec)
	h.mu.Unlock()
}

func (h *history) recordChange(sc StateChange) {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.changes.add(sc)
	h.mu.Unlock()
}

// History returns a copy of the controller's recent events and state
// changes, the current queue size and whether this broker is the active
// controller. The history survives resignation (it shows what this
// broker did while it was the controller).
func (c *Controller) History() HistorySnapshot {
	s := HistorySnapshot{Active: c.IsActive(), Epoch: c.Epoch(), QueueSize: c.em.size()}
	c.hist.mu.Lock()
	s.Events = c.hist.events.snapshot()
	s.StateChanges = c.hist.changes.snapshot()
	c.hist.mu.Unlock()
	return s
}
