package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/console"
)

// recordingHandler keeps every log record as "LEVEL msg key=value ...".
type recordingHandler struct {
	mu    sync.Mutex
	lines []string
}

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler            { return h }
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", r.Level, r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	h.mu.Lock()
	h.lines = append(h.lines, b.String())
	h.mu.Unlock()
	return nil
}

func (h *recordingHandler) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.lines
	h.lines = nil
	return out
}

// While the console's ZooKeeper reads fail, every poll gets the last good
// view marked stale, but the failure is logged once when it starts, once
// each time its reason changes and once when a read works again (with
// how many failed), not at every poll.
func TestConsoleClusterReadFailureLoggedOnChange(t *testing.T) {
	h := &recordingHandler{}
	now := time.Unix(1000, 0)
	var next error // the outcome of the next read
	s := newConsoleSource(&Broker{logger: slog.New(h)})
	s.now = func() time.Time { return now }
	s.read = func() (console.Cluster, error) {
		if next != nil {
			return console.Cluster{}, next
		}
		return console.Cluster{ServedBy: 1, Time: now}, nil
	}
	poll := func() console.Cluster {
		t.Helper()
		now = now.Add(500 * time.Millisecond) // a page's poll interval, past the cache's life
		c, err := s.Cluster(context.Background())
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		return c
	}
	expect := func(what string, want ...string) {
		t.Helper()
		got := h.take()
		if len(got) != len(want) {
			t.Fatalf("%s: logged %q, want %d lines like %q", what, got, len(want), want)
		}
		for i := range want {
			if !strings.HasPrefix(got[i], want[i]) {
				t.Fatalf("%s: line %d is %q, want it to start with %q", what, i, got[i], want[i])
			}
		}
	}

	// Before any good read a failure has no view to show: an error.
	next = errors.New("zk: could not connect to a server")
	if _, err := s.Cluster(context.Background()); err == nil {
		t.Fatal("no error without a view to show")
	}
	expect("first read failing", "WARN console: reading the cluster from ZooKeeper failed")
	next = nil
	first := poll()
	expect("first good read", "INFO console: reading the cluster from ZooKeeper works again")

	next = errors.New("zk: connection closed")
	for i := 0; i < 20; i++ {
		if c := poll(); c.Stale != "zk: connection closed" || !c.Time.Equal(first.Time) {
			t.Fatalf("poll %d during the outage: stale %q, time %v, want the first view (%v) marked stale", i, c.Stale, c.Time, first.Time)
		}
	}
	expect("20 failed polls, one reason", "WARN console: reading the cluster from ZooKeeper failed; the console shows the last good view")

	next = errors.New("zk: session has been expired by the server")
	for i := 0; i < 5; i++ {
		poll()
	}
	expect("a new reason", "WARN console: reading the cluster from ZooKeeper failed; the console shows the last good view, marked stale (logged again when the reason changes and when reads work again) err=zk: session has been expired by the server failed_reads=21")

	next = nil
	if c := poll(); c.Stale != "" || !c.Time.After(first.Time) {
		t.Fatalf("after the outage: stale %q, time %v", c.Stale, c.Time)
	}
	for i := 0; i < 5; i++ {
		poll()
	}
	expect("recovery", "INFO console: reading the cluster from ZooKeeper works again failed_reads=25 failing_for=12.5s")

	// The next outage is logged again from its start.
	next = errors.New("zk: connection closed")
	poll()
	poll()
	expect("a second outage", "WARN console: reading the cluster from ZooKeeper failed; the console shows the last good view, marked stale (logged again when the reason changes and when reads work again) err=zk: connection closed failed_reads=1")
}
