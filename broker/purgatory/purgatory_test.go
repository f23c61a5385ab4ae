package purgatory

import (
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testOp completes when ready is set; it records callback order.
type testOp struct {
	ready     atomic.Bool
	tries     atomic.Int32
	completes atomic.Int32
	expires   atomic.Int32
	inside    atomic.Int32 // TryComplete calls in progress
	overlap   atomic.Bool
	// readyOnTry makes the n-th TryComplete call succeed (0 = never).
	readyOnTry int32
	mu         sync.Mutex
	events     []string
	done       chan struct{}
}

func newOp() *testOp { return &testOp{done: make(chan struct{})} }

func (o *testOp) TryComplete() bool {
	if o.inside.Add(1) != 1 {
		o.overlap.Store(true)
	}
	defer o.inside.Add(-1)
	n := o.tries.Add(1)
	return o.ready.Load() || (o.readyOnTry > 0 && n >= o.readyOnTry)
}

func (o *testOp) OnComplete() {
	if o.completes.Add(1) == 1 {
		close(o.done)
	}
	o.mu.Lock()
	o.events = append(o.events, "complete")
	o.mu.Unlock()
}

func (o *testOp) OnExpiration() {
	o.expires.Add(1)
	o.mu.Lock()
	o.events = append(o.events, "expire")
	o.mu.Unlock()
}

func (o *testOp) eventList() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return fmt.Sprint(o.events)
}

func fake() (*Purgatory, *FakeClock) {
	c := NewFakeClock(time.Unix(0, 0))
	return New("test", c), c
}

func TestImmediateCompletion(t *testing.T) {
	p, c := fake()
	op := newOp()
	op.ready.Store(true)
	if !p.TryCompleteElseWatch(op, time.Second, "k") {
		t.Fatal("ready op not completed")
	}
	if op.completes.Load() != 1 || op.expires.Load() != 0 || p.Watched("k") != 0 || p.Delayed() != 0 || c.Pending() != 0 {
		t.Fatalf("completes %d expires %d watched %d delayed %d timers %d", op.completes.Load(), op.expires.Load(), p.Watched("k"), p.Delayed(), c.Pending())
	}
}

// "tryComplete again after watching": a condition that becomes true
// between the first check and the watch must not be missed.
func TestSecondTryAfterWatching(t *testing.T) {
	p, c := fake()
	op := newOp()
	op.readyOnTry = 2
	if !p.TryCompleteElseWatch(op, time.Second, "k") {
		t.Fatal("second try did not complete")
	}
	if op.tries.Load() != 2 || p.Watched("k") != 0 || c.Pending() != 0 {
		t.Fatalf("tries %d watched %d timers %d", op.tries.Load(), p.Watched("k"), c.Pending())
	}
}

func TestCheckAndCompleteAcrossKeys(t *testing.T) {
	p, c := fake()
	op := newOp()
	if p.TryCompleteElseWatch(op, time.Minute, "a", "b", "a") {
		t.Fatal("completed early")
	}
	if p.Watched("a") != 1 || p.Watched("b") != 1 || p.Delayed() != 1 || c.Pending() != 1 {
		t.Fatalf("watched a=%d b=%d delayed %d timers %d", p.Watched("a"), p.Watched("b"), p.Delayed(), c.Pending())
	}
	if n := p.CheckAndComplete("b"); n != 0 {
		t.Fatalf("completed %d before ready", n)
	}
	op.ready.Store(true)
	if n := p.CheckAndComplete("b"); n != 1 {
		t.Fatalf("CheckAndComplete completed %d", n)
	}
	// Gone from every key, timer stopped, no expiration later.
	if p.Watched("a") != 0 || p.Watched("b") != 0 || p.Delayed() != 0 || c.Pending() != 0 {
		t.Fatalf("after completion: a=%d b=%d delayed %d timers %d", p.Watched("a"), p.Watched("b"), p.Delayed(), c.Pending())
	}
	if n := p.CheckAndComplete("a"); n != 0 {
		t.Fatal("completed twice")
	}
	c.Advance(time.Hour)
	if op.completes.Load() != 1 || op.expires.Load() != 0 {
		t.Fatalf("completes %d expires %d", op.completes.Load(), op.expires.Load())
	}
}

// "run(): if (forceComplete()) onExpiration()" — on timeout OnComplete runs
// first, then OnExpiration, once.
func TestTimeout(t *testing.T) {
	p, c := fake()
	op := newOp()
	p.TryCompleteElseWatch(op, 500*time.Millisecond, "k")
	c.Advance(499 * time.Millisecond)
	if op.completes.Load() != 0 {
		t.Fatal("expired early")
	}
	c.Advance(time.Millisecond)
	if got := op.eventList(); got != "[complete expire]" {
		t.Fatalf("events %s", got)
	}
	if p.Watched("k") != 0 || p.Delayed() != 0 {
		t.Fatal("expired op still watched")
	}
	op.ready.Store(true)
	if p.CheckAndComplete("k") != 0 || op.completes.Load() != 1 {
		t.Fatal("completed after expiry")
	}
}

func TestTimeoutsFireInOrder(t *testing.T) {
	p, c := fake()
	var order []int
	var mu sync.Mutex
	for i, d := range []time.Duration{300, 100, 200} {
		op := &orderOp{i: i, mu: &mu, order: &order}
		p.TryCompleteElseWatch(op, d*time.Millisecond)
	}
	c.Advance(time.Second)
	if fmt.Sprint(order) != "[1 2 0]" {
		t.Fatalf("expiry order %v", order)
	}
}

type orderOp struct {
	i     int
	mu    *sync.Mutex
	order *[]int
}

func (o *orderOp) TryComplete() bool { return false }
func (o *orderOp) OnComplete()       {}
func (o *orderOp) OnExpiration() {
	o.mu.Lock()
	*o.order = append(*o.order, o.i)
	o.mu.Unlock()
}

func TestZeroTimeoutExpiresAtOnce(t *testing.T) {
	p, c := fake()
	op := newOp()
	if p.TryCompleteElseWatch(op, 0, "k") {
		t.Fatal("reported completion by TryComplete")
	}
	if op.eventList() != "[complete expire]" || p.Delayed() != 0 || c.Pending() != 0 {
		t.Fatalf("events %s delayed %d", op.eventList(), p.Delayed())
	}
}

func TestCancelForKey(t *testing.T) {
	p, c := fake()
	a, b, other := newOp(), newOp(), newOp()
	p.TryCompleteElseWatch(a, time.Minute, "g", "x")
	p.TryCompleteElseWatch(b, time.Minute, "g")
	p.TryCompleteElseWatch(other, time.Minute, "h")
	got := p.CancelForKey("g")
	if len(got) != 2 || got[0] != Operation(a) || got[1] != Operation(b) {
		t.Fatalf("cancelled %v", got)
	}
	if p.Watched("g") != 0 || p.Watched("x") != 0 || p.Delayed() != 1 || c.Pending() != 1 {
		t.Fatalf("after cancel: g=%d x=%d delayed %d timers %d", p.Watched("g"), p.Watched("x"), p.Delayed(), c.Pending())
	}
	c.Advance(time.Hour)
	if a.completes.Load() != 0 || b.completes.Load() != 0 || other.expires.Load() != 1 {
		t.Fatal("cancelled ops got callbacks, or the other op did not expire")
	}
}

func TestShutdownExpiresPending(t *testing.T) {
	p, c := fake()
	ops := []*testOp{newOp(), newOp(), newOp()}
	for i, op := range ops {
		p.TryCompleteElseWatch(op, time.Minute, fmt.Sprint(i%2))
	}
	p.Shutdown()
	for i, op := range ops {
		if op.eventList() != "[complete expire]" {
			t.Fatalf("op %d events %s", i, op.eventList())
		}
	}
	if p.Delayed() != 0 || c.Pending() != 0 {
		t.Fatalf("delayed %d timers %d", p.Delayed(), c.Pending())
	}
	late := newOp()
	if p.TryCompleteElseWatch(late, time.Minute, "0") || late.eventList() != "[complete expire]" {
		t.Fatalf("op after shutdown: %s", late.eventList())
	}
	ready := newOp()
	ready.ready.Store(true)
	if !p.TryCompleteElseWatch(ready, time.Minute) {
		t.Fatal("a ready op still completes normally after shutdown")
	}
	p.Shutdown()
}

func TestRealClockTimeout(t *testing.T) {
	p := New("real", nil)
	defer p.Shutdown()
	op := newOp()
	p.TryCompleteElseWatch(op, 10*time.Millisecond, "k")
	select {
	case <-op.done:
	case <-time.After(5 * time.Second):
		t.Fatal("timeout never fired")
	}
	deadline := time.Now().Add(5 * time.Second)
	for op.expires.Load() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("OnExpiration not called")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestKeys(t *testing.T) {
	if TopicPartitionKey("a-1", 0) == TopicPartitionKey("a", 10) || TopicPartitionKey("t", 3) != "t-3" {
		t.Fatal("partition keys")
	}
	if GroupKey("g") == MemberKey("g", "") || MemberKey("a", "bc") == MemberKey("ab", "c") {
		t.Fatal("group keys")
	}
}

// Stress: producers of operations, completers flipping conditions and
// calling CheckAndComplete, real timers expiring the rest, then Shutdown.
// Every operation completes exactly once, TryComplete never overlaps for
// one operation, and nothing stays watched.
func TestStressExactlyOnce(t *testing.T) {
	p := New("stress", nil)
	const workers, perWorker, nkeys = 8, 300, 16
	var all sync.Map
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r := rand.New(rand.NewSource(int64(w)))
			for i := 0; i < perWorker; i++ {
				op := newOp()
				if r.Intn(10) == 0 {
					op.ready.Store(true)
				}
				all.Store(op, true)
				k1, k2 := fmt.Sprint(r.Intn(nkeys)), fmt.Sprint(r.Intn(nkeys))
				timeout := time.Duration(1+r.Intn(20)) * time.Millisecond
				if r.Intn(4) == 0 {
					timeout = time.Hour // left for CheckAndComplete or Shutdown
				}
				p.TryCompleteElseWatch(op, timeout, k1, k2)
			}
		}(w)
	}
	var cw sync.WaitGroup
	for w := 0; w < 4; w++ {
		cw.Add(1)
		go func(w int) {
			defer cw.Done()
			r := rand.New(rand.NewSource(int64(100 + w)))
			for {
				select {
				case <-stop:
					return
				default:
				}
				all.Range(func(k, _ any) bool {
					if r.Intn(50) == 0 {
						k.(*testOp).ready.Store(true)
					}
					return r.Intn(200) != 0
				})
				p.CheckAndComplete(fmt.Sprint(r.Intn(nkeys)))
				_ = p.Watched(fmt.Sprint(r.Intn(nkeys)))
			}
		}(w)
	}
	wg.Wait()
	time.Sleep(30 * time.Millisecond) // let short timers fire while completers run
	close(stop)
	cw.Wait()
	p.Shutdown()
	n := 0
	all.Range(func(k, _ any) bool {
		op := k.(*testOp)
		n++
		if op.completes.Load() != 1 {
			t.Errorf("op completed %d times", op.completes.Load())
		}
		if op.expires.Load() > 1 {
			t.Errorf("op expired %d times", op.expires.Load())
		}
		if op.overlap.Load() {
			t.Error("TryComplete calls overlapped for one operation")
		}
		return true
	})
	if n != workers*perWorker {
		t.Fatalf("%d ops", n)
	}
	if p.Delayed() != 0 {
		t.Fatalf("%d ops still delayed", p.Delayed())
	}
	for k := 0; k < nkeys; k++ {
		if w := p.Watched(fmt.Sprint(k)); w != 0 {
			t.Fatalf("key %d still watches %d", k, w)
		}
	}
}

// A key given twice watches the operation once; completing it empties
// every list it was in, and the order within a key is the watch order.
func TestRepeatedKeysAndWatchOrder(t *testing.T) {
	p, _ := fake()
	a, b, c := newOp(), newOp(), newOp()
	p.TryCompleteElseWatch(a, time.Minute, "k", "k", "x", "k")
	p.TryCompleteElseWatch(b, time.Minute, "x", "k")
	p.TryCompleteElseWatch(c, time.Minute, "k")
	if p.Watched("k") != 3 || p.Watched("x") != 2 || p.watchedTotal() != 5 {
		t.Fatalf("watched k=%d x=%d total=%d, want 3, 2, 5", p.Watched("k"), p.Watched("x"), p.watchedTotal())
	}
	p.mu.Lock()
	order := p.appendWatchedLocked(nil, "k")
	p.mu.Unlock()
	if len(order) != 3 || order[0].e.op != Operation(a) || order[1].e.op != Operation(b) || order[2].e.op != Operation(c) {
		t.Fatalf("watch order under k is not a, b, c")
	}
	b.ready.Store(true)
	if n := p.CheckAndComplete("x"); n != 1 {
		t.Fatalf("CheckAndComplete(x) completed %d, want 1", n)
	}
	if p.Watched("k") != 2 || p.Watched("x") != 1 {
		t.Fatalf("after b: watched k=%d x=%d, want 2, 1", p.Watched("k"), p.Watched("x"))
	}
	a.ready.Store(true)
	c.ready.Store(true)
	if n := p.CheckAndComplete("k"); n != 2 {
		t.Fatalf("CheckAndComplete(k) completed %d, want 2", n)
	}
	if p.Watched("k") != 0 || p.Watched("x") != 0 || p.Delayed() != 0 || p.watchedTotal() != 0 {
		t.Fatalf("after all: k=%d x=%d delayed=%d total=%d", p.Watched("k"), p.Watched("x"), p.Delayed(), p.watchedTotal())
	}
}

// Keys that come and go (a member's heartbeat key) do not pile up: the
// emptied lists are swept once there are many, while the keys still
// watched keep theirs.
func TestEmptiedListsAreSwept(t *testing.T) {
	p, _ := fake()
	keep := newOp()
	p.TryCompleteElseWatch(keep, time.Minute, "steady")
	for i := range 10 * minEmptySweep {
		op := newOp()
		k := fmt.Sprint("member-", i)
		p.TryCompleteElseWatch(op, time.Minute, k)
		op.ready.Store(true)
		if p.CheckAndComplete(k) != 1 {
			t.Fatalf("op %d did not complete", i)
		}
		p.mu.Lock()
		lists, empty := len(p.watchers), p.empty
		p.mu.Unlock()
		if lists > 2*minEmptySweep+1 || empty > lists {
			t.Fatalf("after %d keys: %d watch lists (%d empty)", i+1, lists, empty)
		}
	}
	if p.Watched("steady") != 1 || p.Delayed() != 1 {
		t.Fatalf("the steady key's operation: watched %d, delayed %d", p.Watched("steady"), p.Delayed())
	}
}

// Watching an operation costs the same allocations under 1 key as under
// 64 (its watch nodes are one slice), and re-watching keys whose lists
// exist allocates nothing for the lists; waking a key allocates nothing.
func TestWatchAllocationsDoNotGrowWithKeys(t *testing.T) {
	p, _ := fake()
	keys := make([]string, 64)
	for i := range keys {
		keys[i] = fmt.Sprint("t-", i)
	}
	watch := func(keys []string) float64 {
		return testing.AllocsPerRun(200, func() {
			op := &Funcs{TryCompleteFunc: func() bool { return false }}
			p.TryCompleteElseWatch(op, time.Minute, keys...)
			p.CancelForKey(keys[0])
		})
	}
	one, many := watch(keys[:1]), watch(keys)
	if many != one {
		t.Fatalf("watching under 64 keys allocates %.1f times, under 1 key %.1f", many, one)
	}
	op := &Funcs{TryCompleteFunc: func() bool { return false }}
	p.TryCompleteElseWatch(op, time.Minute, keys...)
	if n := testing.AllocsPerRun(200, func() { p.CheckAndComplete(keys[7]) }); n != 0 {
		t.Fatalf("CheckAndComplete allocates %.1f times", n)
	}
}
