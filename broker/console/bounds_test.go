package console_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/console"
	"github.com/klassik/klassik/controller"
)

// fakeSource is a broker whose cluster lists peers at given console URLs.
type fakeSource struct {
	id    int32
	peers map[int32]string
	ctl   int32
}

func (f fakeSource) BrokerID() int32 { return f.id }
func (f fakeSource) Cluster(context.Context) (console.Cluster, error) {
	c := console.Cluster{ServedBy: f.id, Controller: f.ctl, Brokers: []console.Broker{{ID: f.id}}}
	for id, u := range f.peers {
		c.Brokers = append(c.Brokers, console.Broker{ID: id, Console: u})
	}
	return c, nil
}
func (f fakeSource) LocalReplicas() []console.Replica {
	return []console.Replica{{Broker: f.id, Topic: "t", IsLeader: true, LogEndOffset: 5, HighWatermark: 5}}
}
func (f fakeSource) History() controller.HistorySnapshot { return controller.HistorySnapshot{} }
func (f fakeSource) LocalGroups() []console.Group {
	return []console.Group{{Group: "g", Offsets: []console.Offset{{Topic: "t", Committed: 2}}}}
}
func (f fakeSource) Segments(string, int32) (console.Segments, bool) {
	return console.Segments{}, false
}

// TestSlowPeerIsBounded: a peer console that never answers costs one
// peer timeout, is reported as not answering, and leaves no goroutine
// behind once its connection is closed.
func TestSlowPeerIsBounded(t *testing.T) {
	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer hung.Close()
	defer close(release)
	before := runtime.NumGoroutine()
	h := console.New(fakeSource{id: 1, ctl: 2, peers: map[int32]string{2: hung.URL, 3: ""}}, slog.New(slog.DiscardHandler))
	srv := httptest.NewServer(h)
	defer srv.Close()

	get := func(path string, v any) {
		t.Helper()
		start := time.Now()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %v %v", path, resp.Status, err)
		}
		// The hung peer never answers: without the 1 s peer timeout the
		// request would wait for the test's end, so ten times the timeout
		// tells the two apart on any machine.
		if took := time.Since(start); took > 10*time.Second {
			t.Fatalf("%s took %v with a hung peer", path, took)
		}
	}
	checkPeers := func(path string, sts []console.PeerStatus) {
		t.Helper()
		for _, s := range sts {
			if s.OK != (s.ID == 1) || (s.ID == 3 && s.Error != "no console published") || (s.ID == 2 && s.Error == "") {
				t.Fatalf("%s: %+v: want only broker 1 answering, 2 timing out, 3 without a console", path, sts)
			}
		}
	}
	var reps console.Replicas
	get("/api/v1/replicas", &reps)
	checkPeers("replicas", reps.Brokers)
	if len(reps.Replicas) != 1 {
		t.Fatalf("replicas: %+v", reps.Replicas)
	}
	var gs console.Groups
	get("/api/v1/groups", &gs)
	checkPeers("groups", gs.Brokers)
	if len(gs.Groups) != 1 || gs.Groups[0].Offsets[0].HighWatermark != 5 || gs.Groups[0].Offsets[0].Lag != 3 {
		t.Fatalf("groups: %+v: want lag 3 behind the leader's high watermark 5", gs.Groups)
	}
	var ctl console.Controller
	get("/api/v1/controller", &ctl)
	if ctl.Source != -1 || ctl.Controller != 2 || !strings.HasPrefix(ctl.Error, "controller 2: ") {
		t.Fatalf("controller: %+v: want the unreachable controller's error", ctl)
	}
	srv.CloseClientConnections()
	hung.CloseClientConnections()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+4 { // the servers' own accept loops and idle conns
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines after the polls, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}
