package zkserver

import (
	"reflect"
	"testing"
	"time"
)

// Replies captured from Debian's ZooKeeper 3.8 (a three-node ensemble, one
// client with an ephemeral node and three watches).
const (
	leaderDump = "SessionTracker dump:\n" +
		"Session Sets (1)/(1):\n" +
		"1 expire at Wed Dec 02 00:21:00 UTC 2026:\n" +
		"\t0x2000319bde30000\n" +
		"ephemeral nodes dump:\n" +
		"Sessions with Ephemerals (1):\n" +
		"0x2000319bde30000:\n" +
		"\t/x/e\n" +
		"Connections dump:\n" +
		"Connections Sets (1)/(2):\n" +
		"2 expire at Wed Dec 02 00:21:06 UTC 2026:\n" +
		"\tip: /127.0.0.1:46744 sessionId: 0x0\n" +
		"\tip: /127.0.0.1:46734 sessionId: 0x2000319bde30000\n"
	followerDump = "SessionTracker dump:\n" +
		"Global Sessions(2):\n" +
		"0x2000319bde30000\t5000ms\n" +
		"0x1000319bde30001\t6000ms\n" +
		"ephemeral nodes dump:\n" +
		"Sessions with Ephemerals (1):\n" +
		"0x2000319bde30000:\n" +
		"\t/x/e\n" +
		"\t/x/d\n" +
		"Connections dump:\n" +
		"Connections Sets (1)/(1):\n" +
		"1 expire at Wed Dec 02 00:21:06 UTC 2026:\n" +
		"\tip: /127.0.0.1:37444 sessionId: 0x0\n"
	wchcReply = "0x2000319bde30000\n\t/x/missing\n\t/x/e\n\t/x\n\n"
	consReply = " /127.0.0.1:46776[0](queued=0,recved=1,sent=0)\n" +
		" /127.0.0.1:46734[1](queued=0,recved=7,sent=7,sid=0x2000319bde30000,lop=GETD,est=1796170855815,to=5000,lcxid=0x6,lzxid=0x100000003,lresp=52018960,llat=2,minlat=0,avglat=10,maxlat=28)\n\n"
)

const sid = int64(0x2000319bde30000)

func TestParseDump(t *testing.T) {
	d, err := ParseDump(leaderDump)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.Sessions, map[int64]bool{sid: true}) {
		t.Errorf("leader sessions %v", d.Sessions)
	}
	if !reflect.DeepEqual(d.Ephemerals, map[int64][]string{sid: {"/x/e"}}) {
		t.Errorf("leader ephemerals %v", d.Ephemerals)
	}
	d, err = ParseDump(followerDump)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.Sessions, map[int64]bool{sid: true, 0x1000319bde30001: true}) {
		t.Errorf("follower sessions %v", d.Sessions)
	}
	if !reflect.DeepEqual(d.Ephemerals, map[int64][]string{sid: {"/x/d", "/x/e"}}) {
		t.Errorf("follower ephemerals %v", d.Ephemerals)
	}
	if _, err := ParseDump("This ZooKeeper instance is not currently serving requests\n"); err == nil {
		t.Error("a non-serving reply parsed as a dump")
	}
}

func TestParseWatchesBySession(t *testing.T) {
	m, err := ParseWatchesBySession(wchcReply)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[int64][]string{sid: {"/x", "/x/e", "/x/missing"}}; !reflect.DeepEqual(m, want) {
		t.Errorf("got %v, want %v", m, want)
	}
	if m, err := ParseWatchesBySession("\n"); err != nil || len(m) != 0 {
		t.Errorf("empty reply: %v %v", m, err)
	}
	if _, err := ParseWatchesBySession("\t/x\n"); err == nil {
		t.Error("a path without a session parsed")
	}
}

func TestParseCons(t *testing.T) {
	c, err := ParseCons(consReply)
	if err != nil {
		t.Fatal(err)
	}
	want := []ConnInfo{{Remote: "127.0.0.1:46776"}, {Remote: "127.0.0.1:46734", SessionID: sid, Timeout: 5 * time.Second}}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got %+v, want %+v", c, want)
	}
}

// FuzzFourLetterParsers: no input panics the parsers; every session id
// they return came from a "0x" token, and every path of a session starts
// with '/' (dump) or is non-empty (wchc).
func FuzzFourLetterParsers(f *testing.F) {
	for _, s := range []string{leaderDump, followerDump, wchcReply, consReply, "", "\t", "0x\n\t/a", "SessionTracker dump:\nSessions with Ephemerals (1):\n\t/a\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if d, err := ParseDump(s); err == nil {
			for _, paths := range d.Ephemerals {
				for _, p := range paths {
					if p == "" || p[0] != '/' {
						t.Fatalf("ephemeral %q", p)
					}
				}
			}
		}
		if m, err := ParseWatchesBySession(s); err == nil {
			for _, paths := range m {
				for _, p := range paths {
					if p == "" {
						t.Fatal("empty watched path")
					}
				}
			}
		}
		_, _ = ParseCons(s)
	})
}
