package faulttest_test

import (
	"testing"
	"time"

	"github.com/klassik/klassik/broker/faulttest"
	"github.com/klassik/klassik/zkpaths"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Fencing of a paused zombie: a leader or the controller SIGSTOPped past
// its ZooKeeper session must not act once continued.

// TestPausedLeaderPastSessionIsFenced pauses the leader of a partition
// (SIGSTOP) for longer than its ZooKeeper session: the session expires, the
// controller elects another leader from the ISR, and when the process is
// continued it must not act as leader: a produce it receives at once (sent
// while it was stopped, so it is the first thing it reads) must not be
// acknowledged, and that record must not appear in the log. The broker then
// re-registers and rejoins every ISR.
func TestPausedLeaderPastSessionIsFenced(t *testing.T) {
	s := newScenario(t, faulttest.Options{Brokers: 3}, "zombie", faulttest.RoundRobin(3, 3, 3))
	p, ok := s.notLedByController()
	if !ok {
		ctl, _ := s.c.Controller()
		t.Fatalf("every partition is led by the controller %d", ctl)
	}
	old, _ := s.c.PartitionState(s.topic, p)
	zi := s.c.Index(old.Leader)
	resume := s.c.Pause(zi)
	s.c.WaitFor(30*time.Second, "the paused leader's session to expire and a new leader", func() bool {
		ok, _, err := s.c.ZK().Exists(zkpaths.BrokerIDPath(old.Leader))
		st, sok := s.c.PartitionState(s.topic, p)
		return err == nil && !ok && sok && st.Leader >= 0 && st.Leader != old.Leader
	})
	s.progress(200, 30*time.Second, "with the old leader paused")

	// The kernel accepts the connection and buffers the request while the
	// process is stopped, so the zombie reads it first thing on SIGCONT,
	// before it can learn that its session is gone.
	type result struct {
		code int16
		off  int64
		err  error
	}
	res := make(chan result, 1)
	written := make(chan struct{})
	go func() { // ends when the zombie answers or the connection deadline passes
		code, off, err := faulttest.ProduceDirectNotify(s.c.Node(zi).Addr(), s.topic, p, []byte("zombie-0"), 3*time.Second, func() { close(written) })
		res <- result{code, off, err}
	}()
	// Continue the zombie only once the probe's request sits in its socket
	// buffer (or the probe gave up before writing).
	var r result
	select {
	case <-written:
		resume()
		r = <-res
	case r = <-res:
		resume()
	}
	switch {
	case r.err != nil:
		t.Logf("zombie produce: no response (%v), not acknowledged", r.err)
	case r.code == 0:
		t.Errorf("the zombie (old leader %d, session expired) acknowledged an acks=all produce at offset %d", old.Leader, r.off)
	default:
		t.Logf("zombie produce refused: %v", kerr.ErrorForCode(r.code))
	}

	s.c.WaitFullISR(s.topic, int(s.partitions), 45*time.Second)
	s.progress(150, 20*time.Second, "after the zombie rejoined")
	s.finish()
	hw, err := s.c.HighWatermarks(s.topic)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < s.c.N(); i++ {
		dl, err := faulttest.ReadReplicaLog(s.c.Node(i).LogDir, s.topic, p, hw[p])
		if err != nil {
			t.Fatalf("broker %d: %v", s.c.Node(i).ID, err)
		}
		if offs := dl.ByID["zombie-0"]; len(offs) > 0 {
			t.Errorf("broker %d holds the zombie's unacknowledged record below the high watermark at offsets %v", s.c.Node(i).ID, offs)
		}
	}
}

// TestPausedControllerPastSessionIsFenced pauses the controller (SIGSTOP)
// past its ZooKeeper session: another broker becomes controller with a
// higher epoch. When continued, the old controller must not act: the
// controller epoch in /controller_epoch and in every partition state stays
// at least the new one, /controller keeps the new controller, and the old
// one rejoins as a plain broker and every ISR fills again.
func TestPausedControllerPastSessionIsFenced(t *testing.T) {
	s := newScenario(t, faulttest.Options{Brokers: 3}, "zombie-controller", faulttest.RoundRobin(3, 3, 3))
	old, ok := s.c.Controller()
	if !ok {
		t.Fatal("no controller")
	}
	oldEpoch, _, _, err := s.c.ZK().GetControllerEpoch()
	if err != nil {
		t.Fatal(err)
	}
	zi := s.c.Index(old)
	resume := s.c.Pause(zi)
	var newCtl, newEpoch int32
	s.c.WaitFor(30*time.Second, "a new controller with a higher epoch", func() bool {
		id, ok := s.c.Controller()
		e, _, eok, err := s.c.ZK().GetControllerEpoch()
		newCtl, newEpoch = id, e
		return ok && id != old && eok && err == nil && e > oldEpoch
	})
	s.waitLedWithout(old)
	s.progress(200, 30*time.Second, "with the old controller paused")
	before := map[int32]int32{} // leader epoch per partition before the resume
	for p := int32(0); p < s.partitions; p++ {
		st, _ := s.c.PartitionState(s.topic, p)
		before[p] = st.LeaderEpoch
	}
	resume()
	// Watch the fenced controller from its continuation until it has
	// re-registered as a plain broker and every ISR is full again: a leader
	// election (a new leader epoch) written with an older controller epoch,
	// a /controller change or an older /controller_epoch would be the
	// zombie's.
	assignment := s.c.Assignment(s.topic)
	s.c.WaitFor(45*time.Second, "the old controller re-registered and every ISR full, with no write of the zombie", func() bool {
		if id, ok := s.c.Controller(); ok && id != newCtl {
			t.Fatalf("/controller changed from %d to %d after the old controller %d was continued", newCtl, id, old)
		}
		if e, _, _, err := s.c.ZK().GetControllerEpoch(); err == nil && e < newEpoch {
			t.Fatalf("/controller_epoch went back from %d to %d", newEpoch, e)
		}
		full := true
		for p := int32(0); p < s.partitions; p++ {
			st, ok := s.c.PartitionState(s.topic, p)
			if ok && st.LeaderEpoch > before[p] && st.ControllerEpoch < newEpoch {
				t.Fatalf("partition %d: leader epoch %d (leader %d) written with controller epoch %d, older than the new controller's %d",
					p, st.LeaderEpoch, st.Leader, st.ControllerEpoch, newEpoch)
			}
			full = full && ok && st.Leader >= 0 && len(st.ISR) == len(assignment[p])
		}
		registered, _, err := s.c.ZK().Exists(zkpaths.BrokerIDPath(old))
		return full && err == nil && registered
	})
	for p := int32(0); p < s.partitions; p++ {
		st, _ := s.c.PartitionState(s.topic, p)
		t.Logf("partition %d: leader %d epoch %d isr %v controller_epoch %d", p, st.Leader, st.LeaderEpoch, st.ISR, st.ControllerEpoch)
	}
	s.progress(150, 20*time.Second, "after the old controller rejoined")
	s.finish()
}
