package zktest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"
)

var acl = zk.WorldACL(zk.PermAll)

func recv(t *testing.T, ch <-chan zk.Event) zk.Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("watch channel closed without event")
		}
		return ev
	default:
		t.Fatal("no watch event")
	}
	return zk.Event{}
}

func silent(t *testing.T, ch <-chan zk.Event) {
	t.Helper()
	select {
	case ev := <-ch:
		t.Fatalf("unexpected event %+v", ev)
	default:
	}
}

func TestVersionsAndStats(t *testing.T) {
	s := NewServer()
	c, _ := s.Connect()
	if _, err := c.Create("/a/b", nil, 0, acl); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("missing parent: %v", err)
	}
	if _, err := c.Create("/a", nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create("/a", nil, 0, acl); !errors.Is(err, zk.ErrNodeExists) {
		t.Fatalf("dup: %v", err)
	}
	st, err := c.Set("/a", []byte("x"), 0)
	if err != nil || st.Version != 1 || st.DataLength != 1 || st.Mzxid <= st.Czxid {
		t.Fatalf("set: %+v %v", st, err)
	}
	if _, err := c.Set("/a", nil, 0); !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("stale set: %v", err)
	}
	data, _, _ := c.Get("/a")
	if string(data) != "x" {
		t.Fatalf("data %q", data)
	}
	if _, err := c.Create("/a/c", nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete("/a", -1); !errors.Is(err, zk.ErrNotEmpty) {
		t.Fatalf("delete non-empty: %v", err)
	}
	d, _, _ := c.Get("/a/c")
	if d != nil {
		t.Fatalf("null data came back as %v", d)
	}
}

func TestSequentialEphemeralAndExpiry(t *testing.T) {
	s := NewServer()
	c, ev := s.Connect()
	other, _ := s.Connect()
	_, _ = c.Create("/q", nil, 0, acl)
	p0, _ := c.Create("/q/n_", nil, zk.FlagSequence, acl)
	p1, _ := c.Create("/q/n_", nil, zk.FlagSequence, acl)
	if p0 != "/q/n_0000000000" || p1 != "/q/n_0000000001" {
		t.Fatalf("sequential %s %s", p0, p1)
	}
	if _, err := c.Create("/e", nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create("/e/x", nil, 0, acl); !errors.Is(err, zk.ErrNoChildrenForEphemerals) {
		t.Fatalf("child of ephemeral: %v", err)
	}
	_, st, _ := other.Exists("/e")
	if st.EphemeralOwner != c.SessionID() {
		t.Fatalf("owner %x", st.EphemeralOwner)
	}
	_, _, w, _ := other.ExistsW("/e")
	_, _, own, _ := c.GetW("/q")
	old := c.SessionID()
	for len(ev) > 0 {
		<-ev
	}
	s.Expire(c)
	if e := recv(t, w); e.Type != zk.EventNodeDeleted || e.Path != "/e" {
		t.Fatalf("other's watch: %+v", e)
	}
	if e := recv(t, own); e.Type != zk.EventNotWatching || !errors.Is(e.Err, zk.ErrSessionExpired) {
		t.Fatalf("own watch: %+v", e)
	}
	if c.SessionID() == old || c.State() != zk.StateHasSession {
		t.Fatalf("no new session")
	}
	var states []zk.State
	for len(ev) > 0 {
		states = append(states, (<-ev).State)
	}
	if len(states) != 4 || states[1] != zk.StateExpired || states[3] != zk.StateHasSession {
		t.Fatalf("session events %v", states)
	}
	c.Close()
	if _, _, err := c.Get("/q"); !errors.Is(err, zk.ErrClosing) {
		t.Fatalf("after close: %v", err)
	}
}

func TestWatchesAreOneShot(t *testing.T) {
	s := NewServer()
	c, _ := s.Connect()
	_, _, w, _ := c.ExistsW("/x")
	_, _ = c.Create("/x", nil, 0, acl)
	if e := recv(t, w); e.Type != zk.EventNodeCreated {
		t.Fatalf("%+v", e)
	}
	_, _, dw, _ := c.GetW("/x")
	_, _, cw, _ := c.ChildrenW("/x")
	_, _ = c.Set("/x", []byte("1"), -1)
	if e := recv(t, dw); e.Type != zk.EventNodeDataChanged {
		t.Fatalf("%+v", e)
	}
	silent(t, cw)
	_, _ = c.Set("/x", []byte("2"), -1) // dw already fired: nothing more
	_, _ = c.Create("/x/y", nil, 0, acl)
	if e := recv(t, cw); e.Type != zk.EventNodeChildrenChanged || e.Path != "/x" {
		t.Fatalf("%+v", e)
	}
}

func TestMultiIsAtomic(t *testing.T) {
	s := NewServer()
	c, _ := s.Connect()
	_, _ = c.Create("/v", []byte("0"), 0, acl)
	_, _, w, _ := c.ExistsW("/new")
	res, err := c.Multi(&zk.CreateRequest{Path: "/new", Acl: acl}, &zk.CheckVersionRequest{Path: "/v", Version: 3}, &zk.SetDataRequest{Path: "/v", Version: -1})
	if !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("err %v", err)
	}
	if res[0].Error != nil || !errors.Is(res[1].Error, zk.ErrBadVersion) || res[2].Error == nil {
		t.Fatalf("results %+v", res)
	}
	if _, _, ok := s.Get("/new"); ok {
		t.Fatal("first op applied")
	}
	silent(t, w)
	res, err = c.Multi(&zk.CheckVersionRequest{Path: "/v", Version: 0}, &zk.SetDataRequest{Path: "/v", Data: []byte("1"), Version: 0}, &zk.CreateRequest{Path: "/new", Acl: acl})
	if err != nil || res[1].Stat.Version != 1 || res[2].String != "/new" {
		t.Fatalf("multi: %+v %v", res, err)
	}
	recv(t, w)
}

// Persistent watches fire once per commit, on the writer's goroutine before
// the write returns, for exactly the changes their kind covers; Record
// keeps the committed transactions with their ops.
func TestPersistentWatchesAndRecord(t *testing.T) {
	s := NewServer()
	var got []string
	cancelData := s.WatchData("/a", func() { got = append(got, "data /a") })
	s.WatchChildren("/", func() { got = append(got, "children /") })
	s.Record()
	if err := s.Multi(&zk.CreateRequest{Path: "/a", Data: []byte("1")}); err != nil {
		t.Fatal(err)
	}
	c, _ := s.Connect()
	defer c.Close()
	if _, err := c.Set("/a", []byte("2"), -1); err != nil {
		t.Fatal(err)
	}
	// Delete and re-create in one transaction: one call per watcher.
	if err := s.Multi(&zk.DeleteRequest{Path: "/a", Version: -1}, &zk.CreateRequest{Path: "/a", Data: []byte("3")}); err != nil {
		t.Fatal(err)
	}
	want := []string{"data /a", "children /", "data /a", "data /a", "children /"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("callbacks %v, want %v", got, want)
	}
	cancelData()
	if _, err := c.Set("/a", []byte("4"), -1); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("a cancelled watch fired: %v", got)
	}
	rec := s.TakeRecord()
	if len(rec) != 4 || rec[1].Session != c.SessionID() || rec[1].Ops[0].Kind != "set" || string(rec[1].Ops[0].Data) != "2" ||
		len(rec[2].Ops) != 2 || rec[2].Ops[0].Kind != "delete" || rec[2].Ops[1].Kind != "create" {
		t.Fatalf("record %+v", rec)
	}
	if len(s.TakeRecord()) != 0 {
		t.Fatal("TakeRecord did not forget")
	}
}
