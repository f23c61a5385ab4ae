package faulttest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/faulttest"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

// TestZooKeeperRestartPastSessionTimeout kills -9 a standalone ZooKeeper
// under an acks=all load, keeps it away for twice the session timeout and
// starts it again on the same data directory. The restarted server restores
// the sessions from its log and gives each a full timeout again, so a
// broker that reconnects in time keeps its session and one that does not
// finds it expired; the test accepts either decision but requires that
// every broker acts on it promptly: its old session connected again, or
// /brokers/ids/<id> registered again by a new session with a new broker
// epoch. Afterwards a controller leads, every ISR is full, acks=all writes
// are acknowledged, no ephemeral node or watch of an old session is left,
// and every acknowledged record is there exactly once.
//
// The times are logged, not judged: the deadlines only bound a hang.
// Before the client bounded the connect handshake, a broker whose
// reconnection met a server that accepted but did not answer waited ten
// read timeouts (67 s at a 10 s session timeout) before trying again.
func TestZooKeeperRestartPastSessionTimeout(t *testing.T) {
	const sessionTimeout = 6 * time.Second
	zs, err := zkserver.Start(zkserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { zs.Stop() })
	e := &zkserver.Ensemble{Servers: []*zkserver.Server{zs}}
	s := newZKScenarioOn(t, e, sessionTimeout, "zkrestart")
	regs := s.registrations()
	watchesBefore := s.stableWatches(regs)

	killed := time.Now()
	if err := zs.Kill(); err != nil {
		t.Fatal(err)
	}
	// Leaders with a full ISR need no ZooKeeper to acknowledge.
	s.progress(100, 30*time.Second, "with ZooKeeper killed")
	if d := 2*sessionTimeout - time.Since(killed); d > 0 {
		time.Sleep(d) // the outage's length is the fault, not a verdict
	}
	if err := zs.Restart(); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	t.Logf("ZooKeeper serving again %v after the kill", back.Sub(killed).Round(time.Millisecond))

	// Every broker acts on the server's decision about its session.
	noticed := map[int32]string{}
	s.c.WaitFor(120*time.Second, "every broker reconnected with its session or registered with a new one", func() bool {
		conns, err := e.Connections()
		if err != nil {
			return false
		}
		live := map[int64]bool{}
		for _, c := range conns {
			live[c.SessionID] = true
		}
		for id, before := range regs {
			if _, done := noticed[id]; done {
				continue
			}
			ok, st, err := s.c.ZK().Exists(fmt.Sprintf("/brokers/ids/%d", id))
			switch {
			case err != nil || !ok:
			case st.EphemeralOwner == before.owner && live[before.owner]:
				noticed[id] = fmt.Sprintf("broker %d kept session 0x%x: connected again %v after ZooKeeper was back", id, before.owner, time.Since(back).Round(time.Millisecond))
			case st.EphemeralOwner != before.owner && live[st.EphemeralOwner]:
				noticed[id] = fmt.Sprintf("broker %d's session 0x%x expired: registered again by session 0x%x (broker epoch %d -> %d) %v after ZooKeeper was back",
					id, before.owner, st.EphemeralOwner, before.epoch, st.Czxid, time.Since(back).Round(time.Millisecond))
			}
		}
		return len(noticed) == len(regs)
	})
	var lines []string
	for _, l := range noticed {
		lines = append(lines, l)
	}
	t.Logf("after the restart:\n  %s", strings.Join(lines, "\n  "))

	s.recovered("the ZooKeeper restart")
	t.Logf("acks=all writes acknowledged again %v after ZooKeeper was back", time.Since(back).Round(time.Millisecond))
	s.waitReconnected()
	expired := s.compareRegistrations(regs, false)
	t.Logf("%d of %d broker sessions expired", expired, len(regs))
	s.checkNoStaleSessionState(watchesBefore)
	// A metadata change after the restart completes.
	s.c.CreateTopic(s.topic+"-after", faulttest.RoundRobin(1, 3, 3), nil)
	s.finish()
}
