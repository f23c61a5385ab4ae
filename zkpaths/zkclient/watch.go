package zkclient

import (
	"errors"
	"time"

	"github.com/go-zookeeper/zk"
)

type watchKind int

const (
	dataWatch watchKind = iota
	childrenWatch
)

// watch is one registered handler (Kafka's ZNodeChangeHandler /
// ZNodeChildChangeHandler). Its goroutine arms a one-shot ZooKeeper watch
// through a read, waits for it to fire, re-arms it and only then calls fn,
// so a change after fn started always produces another call.
type watch struct {
	path   string
	kind   watchKind
	fn     func()
	cancel chan struct{}
}

// WatchData calls fn whenever the node at path is created, changed or
// deleted (an exists-watch, so the node may be missing when registering).
// The watch is re-armed after it fires and after a new session; after a new
// session fn is called once, since changes may have been missed. fn must be
// cheap (enqueue an event and return); it runs on a goroutine owned by the
// Client and must re-read the node itself. cancel stops the watch.
func (c *Client) WatchData(path string, fn func()) (cancel func()) {
	return c.addWatch(path, dataWatch, fn)
}

// WatchChildren calls fn whenever the set of children of path changes (and
// when path is deleted or, if it was missing, created). Same re-arm and
// callback rules as WatchData.
func (c *Client) WatchChildren(path string, fn func()) (cancel func()) {
	return c.addWatch(path, childrenWatch, fn)
}

func (c *Client) addWatch(path string, kind watchKind, fn func()) func() {
	w := &watch{path: path, kind: kind, fn: fn, cancel: make(chan struct{})}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return func() {} // closed: nothing to watch with
	}
	id := c.nextHandlerID
	c.nextHandlerID++
	c.watches[id] = w
	// Counted under mu, before Close can start waiting: a WaitGroup must not
	// be incremented from zero concurrently with Wait.
	c.wg.Add(1)
	c.mu.Unlock()
	// Arm synchronously so that a change made right after WatchX returns is
	// seen; the goroutine then owns the watch.
	gen, _ := c.sessionState()
	ch, err := c.arm(w)
	go c.runWatch(w, ch, gen, err)
	return func() {
		c.mu.Lock()
		if _, ok := c.watches[id]; ok {
			delete(c.watches, id)
			close(w.cancel)
		}
		c.mu.Unlock()
	}
}

// arm issues the watching read for w.
func (c *Client) arm(w *watch) (<-chan zk.Event, error) {
	var ch <-chan zk.Event
	err := c.retry(func() (err error) {
		p := c.abs(w.path)
		switch w.kind {
		case dataWatch:
			_, _, ch, err = c.conn.ExistsW(p)
		case childrenWatch:
			_, _, ch, err = c.conn.ChildrenW(p)
			if errors.Is(err, zk.ErrNoNode) {
				// A children watch needs the node; wait for its creation.
				_, _, ch, err = c.conn.ExistsW(p)
			}
		}
		return err
	})
	return ch, err
}

// runWatch is the goroutine of one watch; it exits on Client close or cancel.
func (c *Client) runWatch(w *watch, ch <-chan zk.Event, armedGen uint64, armErr error) {
	defer c.wg.Done()
	for {
		if armErr != nil {
			// Usually session expiry or closing: wait for a new session.
			if !c.waitNewSession(w, armedGen) {
				return
			}
			armedGen, _ = c.sessionState()
			ch, armErr = c.arm(w)
			if armErr == nil {
				c.call(w)
			}
			continue
		}
		select {
		case <-c.stop:
			return
		case <-w.cancel:
			return
		case ev, ok := <-ch:
			if !ok || ev.Type == zk.EventNotWatching {
				armErr = errors.New("watch lost")
				if ev.Err != nil {
					armErr = ev.Err
				}
				continue
			}
			armedGen, _ = c.sessionState()
			ch, armErr = c.arm(w)
			c.call(w)
		}
	}
}

func (c *Client) call(w *watch) {
	select {
	case <-w.cancel:
		return
	case <-c.stop:
		return
	default:
	}
	w.fn()
}

// waitNewSession blocks until the session generation passes gen. It returns
// false on close or cancel. It also wakes periodically so that a watch whose
// arming failed for another reason (e.g. a long outage) is retried.
func (c *Client) waitNewSession(w *watch, gen uint64) bool {
	for {
		cur, ch := c.sessionState()
		if cur > gen {
			return true
		}
		t := time.NewTimer(c.sessionTimeout)
		select {
		case <-c.stop:
			t.Stop()
			return false
		case <-w.cancel:
			t.Stop()
			return false
		case <-ch:
			t.Stop()
		case <-t.C:
			if c.conn.State() == zk.StateHasSession {
				return true
			}
		}
	}
}
