package faulttest_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/faulttest"
)

// Crashes and restarts under load: kill -9 of a leader, of the controller,
// of a broker that is both, of leaders repeatedly, and SIGTERM bounces of
// every broker. The scenario driver is scenario_test.go.

// TestKillLeaderMidProduce kills -9 the leader of partition 0 while the
// producer is running, waits for a new leader from the ISR, checks produce
// continues, then restarts the killed broker and waits for it to rejoin
// every ISR.
func TestKillLeaderMidProduce(t *testing.T) {
	s := newScenario(t, faulttest.Options{Brokers: 3}, "kill-leader", faulttest.RoundRobin(3, 3, 3))
	// Prefer a leader that is not the controller, so this is only a leader
	// failure.
	p, ok := s.notLedByController()
	if !ok {
		p = 0
	}
	victim := s.kill9Leader(p, "a new leader of partition from its ISR")
	s.progress(300, 30*time.Second, "after the leader was killed")
	s.restartCaughtUp(victim, 150, "after the restart")
	s.finish()
}

// TestKillController kills -9 the controller mid-produce: another broker
// must win /controller, and the produce continues (the partitions the dead
// broker led move to live replicas).
func TestKillController(t *testing.T) {
	s := newScenario(t, faulttest.Options{Brokers: 3}, "kill-controller", faulttest.RoundRobin(3, 3, 3))
	ctl, ok := s.c.Controller()
	if !ok {
		t.Fatal("no controller")
	}
	victim := s.c.Index(ctl)
	s.c.Kill9(victim)
	s.c.WaitFor(30*time.Second, "a new controller", func() bool {
		id, ok := s.c.Controller()
		return ok && id != ctl
	})
	s.waitLedWithout(ctl)
	s.progress(300, 30*time.Second, "after the controller was killed")
	s.restartCaughtUp(victim, 150, "after the restart")
	s.finish()
}

// TestKillLeaderAndController kills -9 a broker that is both the controller
// and the leader of a partition: the new controller must elect a new leader
// for it from the ISR.
func TestKillLeaderAndController(t *testing.T) {
	s := newScenario(t, faulttest.Options{Brokers: 3}, "kill-both", faulttest.RoundRobin(3, 3, 3))
	// Every broker is the preferred leader of one partition, so the
	// controller leads one; which broker is the controller, and so which
	// partition, is whatever the election gave, read here.
	var ctl int32
	p := int32(-1)
	s.c.WaitFor(30*time.Second, "the controller leading a partition", func() bool {
		id, ok := s.c.Controller()
		if !ok {
			return false
		}
		ctl, p = id, -1
		for q := int32(0); q < s.partitions; q++ {
			if st, ok := s.c.PartitionState(s.topic, q); ok && st.Leader == id {
				p = q
			}
		}
		return p >= 0
	})
	old, _ := s.c.PartitionState(s.topic, p)
	victim := s.c.Index(ctl)
	s.c.Kill9(victim)
	s.c.WaitFor(30*time.Second, fmt.Sprintf("a new controller and a new leader of partition %d from its ISR", p), func() bool {
		id, ok := s.c.Controller()
		st, sok := s.c.PartitionState(s.topic, p)
		return ok && id != ctl && sok && st.Leader >= 0 && st.Leader != ctl && slices.Contains(old.ISR, st.Leader)
	})
	s.progress(300, 30*time.Second, "after the controller and leader was killed")
	s.restartCaughtUp(victim, 150, "after the restart")
	s.finish()
}

// TestBounceBrokers stops each broker in turn with SIGTERM (a controlled
// shutdown), restarts it and waits for every ISR to be full again, three
// rounds, while the producer runs.
func TestBounceBrokers(t *testing.T) {
	s := newScenario(t, faulttest.Options{Brokers: 3}, "bounce", faulttest.RoundRobin(3, 3, 3))
	for round := 0; round < 3; round++ {
		i := round % 3
		s.c.Stop(i)
		s.progress(100, 30*time.Second, "with a broker stopped")
		s.restartCaughtUp(i, 100, "after the bounce")
	}
	s.finish()
}

// TestKill9LeadersRepeatedly kills -9 the current leader of a different
// partition in each of three rounds, restarting it and waiting for full
// ISRs in between, so every broker crashes once while leading and the
// restarted brokers truncate by leader epoch and catch up each time. The
// producer runs three times faster than in the other scenarios, so each
// crash leaves appended but uncommitted batches behind.
func TestKill9LeadersRepeatedly(t *testing.T) {
	s := newScenarioRate(t, faulttest.Options{Brokers: 3}, "kill-repeatedly", faulttest.RoundRobin(3, 3, 3), 3*time.Millisecond)
	for round := int32(0); round < 3; round++ {
		p := round % s.partitions
		victim := s.kill9Leader(p, "a new leader from the ISR")
		s.progress(150, 30*time.Second, "after the kill")
		s.restartCaughtUp(victim, 100, "after the restart")
	}
	s.finish()
}
