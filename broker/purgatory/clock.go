package purgatory

import (
	"sort"
	"sync"
	"time"
)

// Clock is the time source of a purgatory; tests inject a FakeClock and
// advance it instead of sleeping.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine (or, for FakeClock, in the
	// goroutine that advances time past the deadline) after d.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc; Stop reports whether it prevented the call.
// Reset schedules the call again, d from now, as time.Timer.Reset does for
// a timer made by time.AfterFunc: a call already started is not undone.
type Timer interface {
	Stop() bool
	Reset(d time.Duration) bool
}

type realClock struct{}

// RealClock is the wall clock.
func RealClock() Clock { return realClock{} }

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// FakeClock is a manually advanced Clock. Due callbacks run synchronously
// inside Advance, in deadline order, without FakeClock's lock held (so a
// callback may schedule new timers).
type FakeClock struct {
	// mu guards the following.
	mu     sync.Mutex
	now    time.Time
	seq    int
	timers map[*fakeTimer]struct{}
}

type fakeTimer struct {
	c   *FakeClock
	at  time.Time
	seq int
	f   func()
}

// NewFakeClock returns a FakeClock at start.
func NewFakeClock(start time.Time) *FakeClock {
	return &FakeClock{now: start, timers: map[*fakeTimer]struct{}{}}
}

// Now returns the fake time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc schedules f at Now()+d.
func (c *FakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &fakeTimer{c: c, at: c.now.Add(d), seq: c.seq, f: f}
	c.timers[t] = struct{}{}
	return t
}

// Pending is the number of scheduled, unstopped, unfired timers.
func (c *FakeClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// Advance moves time forward by d and runs every callback due by then.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	target := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		var due []*fakeTimer
		for t := range c.timers {
			if !t.at.After(target) {
				due = append(due, t)
			}
		}
		if len(due) == 0 {
			c.now = target
			c.mu.Unlock()
			return
		}
		sort.Slice(due, func(i, j int) bool {
			if !due[i].at.Equal(due[j].at) {
				return due[i].at.Before(due[j].at)
			}
			return due[i].seq < due[j].seq
		})
		t := due[0]
		delete(c.timers, t)
		if t.at.After(c.now) {
			c.now = t.at
		}
		c.mu.Unlock()
		t.f()
	}
}

// Reset schedules t again at Now()+d; it reports whether t was pending.
func (t *fakeTimer) Reset(d time.Duration) bool {
	c := t.c
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.timers[t]
	c.seq++
	t.at, t.seq = c.now.Add(d), c.seq
	c.timers[t] = struct{}{}
	return ok
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	_, ok := t.c.timers[t]
	delete(t.c.timers, t)
	return ok
}
