//go:build !race

package purgatory

import (
	"testing"
	"time"
)

// poolOp is a Releaser that is passed again as soon as it is Released.
type poolOp struct {
	ready    bool
	released int
}

func (o *poolOp) TryComplete() bool { return o.ready }
func (o *poolOp) OnComplete()       {}
func (o *poolOp) OnExpiration()     {}
func (o *poolOp) Released()         { o.released++ }

// A parked operation (watched under several keys, its timeout armed) that
// completes by CheckAndComplete, and one that times out, allocate nothing
// once entries, watch nodes and timers are there to be reused. (The race
// detector makes sync.Pool drop entries at random: not under -race.)
func TestParkedOperationsAllocateNothing(t *testing.T) {
	p, c := fake()
	keys := []string{"a", "b", "c"}
	op := &poolOp{}
	park := func() {
		op.ready = false
		p.TryCompleteElseWatch(op, time.Minute, keys...)
		op.ready = true
		if p.CheckAndComplete("b") != 1 {
			t.Fatal("not completed")
		}
	}
	park()
	if n := testing.AllocsPerRun(100, park); n != 0 {
		t.Fatalf("a parked operation completed by CheckAndComplete allocates %.1f times", n)
	}
	// Timeouts: FakeClock's Advance allocates itself, so count the
	// timers made instead: an entry's timer is reset for its next use.
	cc := &countClock{FakeClock: c}
	p = New("count", cc)
	for range 100 {
		op.ready = false
		p.TryCompleteElseWatch(op, time.Second, keys...)
		c.Advance(time.Second)
		if p.Delayed() != 0 {
			t.Fatal("not expired")
		}
	}
	if op.released != 202 || cc.made >= 10 {
		t.Fatalf("released %d times; %d timers made for 100 timeouts", op.released, cc.made)
	}
}

// countClock counts the timers made.
type countClock struct {
	*FakeClock
	made int
}

func (c *countClock) AfterFunc(d time.Duration, f func()) Timer {
	c.made++
	return c.FakeClock.AfterFunc(d, f)
}
