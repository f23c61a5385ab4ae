package purgatory

import (
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// lateClock is a FakeClock whose Stop never prevents a call: a timer
// stopped while pending reports false, as a time.Timer does when its
// callback has just started, and its callback is kept for the test to
// run late.
type lateClock struct {
	*FakeClock
	mu   sync.Mutex
	late []func()
}

type lateTimer struct {
	c *lateClock
	t Timer
	f func()
}

func (c *lateClock) AfterFunc(d time.Duration, f func()) Timer {
	return &lateTimer{c: c, t: c.FakeClock.AfterFunc(d, f), f: f}
}

func (t *lateTimer) Stop() bool {
	if t.t.Stop() {
		t.c.mu.Lock()
		t.c.late = append(t.c.late, t.f)
		t.c.mu.Unlock()
	}
	return false
}

func (t *lateTimer) Reset(d time.Duration) bool { return t.t.Reset(d) }

func (c *lateClock) runLate() {
	c.mu.Lock()
	late := c.late
	c.late = nil
	c.mu.Unlock()
	for _, f := range late {
		f()
	}
}

// entryOf returns the entry watched first under key.
func entryOf(p *Purgatory, key string) *entry {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.appendWatchedLocked(nil, key)
	if len(w) == 0 {
		return nil
	}
	return w[0].e
}

// A timer whose callback had started when its operation completed
// otherwise must not expire the operation that reuses the entry.
func TestLateTimerCallbackDoesNotExpireTheNextUse(t *testing.T) {
	c := &lateClock{FakeClock: NewFakeClock(time.Unix(0, 0))}
	p := New("late", c)
	reused := 0
	for i := range 50 {
		a := newOp()
		p.TryCompleteElseWatch(a, time.Minute, "k")
		ea := entryOf(p, "k")
		a.ready.Store(true)
		if p.CheckAndComplete("k") != 1 {
			t.Fatalf("round %d: a not completed", i)
		}
		b := newOp()
		p.TryCompleteElseWatch(b, time.Minute, "k")
		if entryOf(p, "k") == ea {
			reused++
		}
		c.runLate() // a's timer callback, which had "started"
		if b.completes.Load() != 0 || p.Watched("k") != 1 || p.Delayed() != 1 {
			t.Fatalf("round %d: a late timer call completed the next operation (completes %d, watched %d)", i, b.completes.Load(), p.Watched("k"))
		}
		b.ready.Store(true)
		if p.CheckAndComplete("k") != 1 || b.eventList() != "[complete]" || a.eventList() != "[complete]" {
			t.Fatalf("round %d: a %s, b %s", i, a.eventList(), b.eventList())
		}
		c.runLate()
	}
	if reused == 0 {
		t.Fatal("no entry was reused: the test did not test reuse")
	}
	// A timer that fired normally is reset, not remade, for the next use.
	op := newOp()
	p.TryCompleteElseWatch(op, time.Second, "t")
	c.Advance(time.Second)
	if op.eventList() != "[complete expire]" {
		t.Fatalf("timeout: %s", op.eventList())
	}
	next := newOp()
	p.TryCompleteElseWatch(next, time.Second, "t")
	c.Advance(999 * time.Millisecond)
	if next.completes.Load() != 0 {
		t.Fatal("the reset timer fired early")
	}
	c.Advance(time.Millisecond)
	if next.eventList() != "[complete expire]" {
		t.Fatalf("reset timer: %s", next.eventList())
	}
}

// relOp is an operation its owner reuses once Released: it checks that
// the purgatory never calls it outside a pass, nor after Released.
type relOp struct {
	t         *testing.T
	ready     atomic.Bool
	inPass    atomic.Bool // between TryCompleteElseWatch and Released
	completes atomic.Int32
	expires   atomic.Int32
	inside    atomic.Int32
	done      chan struct{} // OnComplete's token
	released  chan struct{} // Released's token
}

func (o *relOp) check(what string) {
	if !o.inPass.Load() {
		o.t.Errorf("%s called outside a pass (after Released)", what)
	}
}

func (o *relOp) TryComplete() bool {
	o.check("TryComplete")
	if o.inside.Add(1) != 1 {
		o.t.Error("TryComplete calls overlapped")
	}
	defer o.inside.Add(-1)
	return o.ready.Load()
}

func (o *relOp) OnComplete() {
	o.check("OnComplete")
	o.completes.Add(1)
	o.done <- struct{}{}
}

func (o *relOp) OnExpiration() {
	o.check("OnExpiration")
	if o.completes.Load() != 1 {
		o.t.Error("OnExpiration before OnComplete")
	}
	o.expires.Add(1)
}

func (o *relOp) Released() {
	o.check("Released")
	o.inPass.Store(false)
	o.released <- struct{}{}
}

// Operations reused as soon as they are Released, completed by
// CheckAndComplete, by real timers and at once, with entries reused under
// them: every pass completes exactly once, and nothing calls an operation
// between its Released and its next pass.
func TestStressReuse(t *testing.T) {
	p := New("reuse", nil)
	const workers, perWorker, nkeys = 6, 300, 8
	ops := make([]*relOp, workers)
	for i := range ops {
		ops[i] = &relOp{t: t, done: make(chan struct{}, 1), released: make(chan struct{}, 1)}
	}
	stop := make(chan struct{})
	var cw sync.WaitGroup
	for w := range 3 {
		cw.Add(1)
		go func() {
			defer cw.Done()
			r := rand.New(rand.NewSource(int64(100 + w)))
			for {
				select {
				case <-stop:
					return
				default:
				}
				if r.Intn(3) == 0 {
					ops[r.Intn(len(ops))].ready.Store(true)
				}
				p.CheckAndComplete(fmt.Sprint(r.Intn(nkeys)))
			}
		}()
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := ops[w]
			r := rand.New(rand.NewSource(int64(w)))
			for i := range perWorker {
				o.ready.Store(r.Intn(8) == 0)
				o.completes.Store(0)
				o.expires.Store(0)
				o.inPass.Store(true)
				timeout := time.Duration(r.Intn(3000)) * time.Microsecond
				p.TryCompleteElseWatch(o, timeout, fmt.Sprint(r.Intn(nkeys)), fmt.Sprint(r.Intn(nkeys)))
				<-o.done
				<-o.released
				if o.completes.Load() != 1 || o.expires.Load() > 1 {
					t.Errorf("worker %d pass %d: completes %d expires %d", w, i, o.completes.Load(), o.expires.Load())
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	cw.Wait()
	p.Shutdown()
	if p.Delayed() != 0 || p.watchedTotal() != 0 {
		t.Fatalf("delayed %d watched %d", p.Delayed(), p.watchedTotal())
	}
}
