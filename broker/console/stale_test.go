package console_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/console"
	"github.com/klassik/klassik/broker/testcluster"
)

// TestStaleViewWhenZooKeeperReadFails: when the serving broker's read of
// the cluster fails (here its ZooKeeper session expires while the read
// waits), /api/v1/cluster answers the last view it read, marked stale
// with the reason, instead of an error, and the next poll reads afresh.
func TestStaleViewWhenZooKeeperReadFails(t *testing.T) {
	c := startConsoleCluster(t, testcluster.Options{Brokers: 2, ZKProxy: true, SessionTimeout: 2 * time.Second})
	ctl, _ := c.Controller()
	serve := (c.Index(ctl) + 1) % c.N()
	id := c.BrokerID(serve)
	var first console.Cluster
	if err := c.get(t, serve, "/api/v1/cluster", &first); err != nil {
		t.Fatal(err)
	}
	if first.Stale != "" || len(first.Brokers) != 2 {
		t.Fatalf("first view: stale %q, %d brokers", first.Stale, len(first.Brokers))
	}
	c.PauseZK(serve)
	// Past the view's cache lifetime, so the next request reads ZooKeeper.
	time.Sleep(500 * time.Millisecond)
	type answer struct {
		cl  console.Cluster
		err error
	}
	done := make(chan answer, 1)
	go func() {
		var a answer
		cl := http.Client{Timeout: 2 * time.Minute}
		resp, err := cl.Get(c.urls[serve] + "/api/v1/cluster")
		if err == nil {
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = &statusError{resp.StatusCode}
			} else {
				err = json.NewDecoder(resp.Body).Decode(&a.cl)
			}
		}
		a.err = err
		done <- a
	}()
	c.WaitFor(60*time.Second, "the serving broker's registration to expire", func() bool {
		_, ok, err := c.ZK().GetBroker(id)
		return err == nil && !ok
	})
	c.ResumeZK(serve)
	var a answer
	select {
	case a = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("no answer after ZooKeeper came back")
	}
	if a.err != nil {
		t.Fatal(a.err)
	}
	if !strings.Contains(a.cl.Stale, "expired") || !a.cl.Time.Equal(first.Time) || len(a.cl.Brokers) != 2 {
		t.Fatalf("view after the failed read: stale %q, time %v (first %v), %d brokers", a.cl.Stale, a.cl.Time, first.Time, len(a.cl.Brokers))
	}
	c.WaitFor(60*time.Second, "a fresh view once the broker has a new session", func() bool {
		var cl console.Cluster
		return c.get(t, serve, "/api/v1/cluster", &cl) == nil && cl.Stale == "" && cl.Time.After(first.Time)
	})
}

type statusError struct{ code int }

func (e *statusError) Error() string { return http.StatusText(e.code) }
