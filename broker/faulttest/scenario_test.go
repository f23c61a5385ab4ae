package faulttest_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/faulttest"
	"github.com/klassik/klassik/broker/testcluster"
)

func TestMain(m *testing.M) { os.Exit(faulttest.Main(m)) }

// scenario is one fault test's cluster, topic, checker and workload.
type scenario struct {
	t          *testing.T
	c          *faulttest.Cluster
	topic      string
	partitions int32
	chk        *testcluster.Checker
	w          *faulttest.Workload
	start      time.Time
}

// newScenario starts brokers processes, creates topic with the assignment
// and starts an idempotent acks=all workload on it, waiting for a first
// batch of acknowledgements.
func newScenario(t *testing.T, opts faulttest.Options, topic string, assignment map[int32][]int32) *scenario {
	t.Helper()
	return newScenarioRate(t, opts, topic, assignment, 10*time.Millisecond)
}

// newScenarioRate is newScenario producing one record per partition every
// interval.
func newScenarioRate(t *testing.T, opts faulttest.Options, topic string, assignment map[int32][]int32, interval time.Duration) *scenario {
	t.Helper()
	s := &scenario{t: t, topic: topic, partitions: int32(len(assignment)), chk: testcluster.NewChecker(), start: time.Now()}
	s.c = faulttest.Start(t, opts)
	s.c.CreateTopic(topic, assignment, nil)
	s.w = faulttest.StartWorkload(s.c, s.chk, faulttest.WorkloadOptions{Topic: topic, Partitions: s.partitions, Interval: interval, MaxRecords: 60000})
	t.Cleanup(func() { s.w.Stop() })
	s.progress(150, 20*time.Second, "first acknowledgements")
	return s
}

// progress requires n more acknowledgements within timeout.
func (s *scenario) progress(n int64, timeout time.Duration, what string) {
	s.t.Helper()
	if !s.w.WaitProgress(n, timeout) {
		s.t.Fatalf("no progress (%s): %d more acknowledgements not seen within %v; %s\n%s", what, n, timeout, s.w.Summary(), s.c.DumpState())
	}
}

// leader returns the current leader of partition p (from its state znode).
func (s *scenario) leader(p int32) int32 {
	s.t.Helper()
	st, ok := s.c.PartitionState(s.topic, p)
	if !ok {
		s.t.Fatalf("no state for %s-%d", s.topic, p)
	}
	return st.Leader
}

// finish stops the workload and checks the invariants: every
// acknowledged record is consumed exactly once, in order, at its offset
// (testcluster.Checker), and every ISR replica of every partition holds
// identical bytes up to the high watermark containing each acknowledged
// record exactly once.
func (s *scenario) finish() {
	s.t.Helper()
	acks, failed, firstErr := s.w.Stop()
	s.t.Logf("workload: %s", s.w.Summary())
	if failed > 0 {
		s.t.Logf("failed (never acknowledged, so not required to survive): %d, first: %v", failed, firstErr)
	}
	if len(acks) == 0 {
		s.t.Fatal("nothing was acknowledged")
	}
	n := s.c.ConsumeAll(s.topic, s.chk, 60*time.Second)
	rep := s.chk.Report()
	s.t.Logf("consumed %d records; checker: acked=%d consumed=%d problems=%d", n, rep.Acked, rep.Consumed, len(rep.Problems))
	if !rep.OK() {
		s.t.Errorf("delivery check failed (by partition and offset):\n%s", rep)
	}
	sum, f := s.c.CheckReplicas(s.topic, acks, 30*time.Second)
	s.t.Logf("replicas compared on disk: %s", sum)
	if len(f) > 0 {
		var b strings.Builder
		for i, x := range f {
			if i == 20 {
				b.WriteString("\n  ...")
				break
			}
			b.WriteString("\n  " + x.String())
		}
		s.t.Errorf("replica check failed:%s", b.String())
	}
	s.t.Logf("scenario took %v", time.Since(s.start).Round(100*time.Millisecond))
}

// TestKillLeaderMidProduce kills -9 the leader of partition 0 while the
// producer is running, waits for a new leader from the ISR, checks produce
// continues, then restarts the killed broker and waits for it to rejoin
// every ISR.
func TestKillLeaderMidProduce(t *testing.T) {
	s := newScenario(t, faulttest.Options{Brokers: 3}, "kill-leader", faulttest.RoundRobin(3, 3, 3))
	// Prefer a leader that is not the controller, so this is only a leader
	// failure.
	ctl, _ := s.c.Controller()
	p := int32(0)
	for q := int32(0); q < s.partitions; q++ {
		if s.leader(q) != ctl {
			p = q
			break
		}
	}
	old, _ := s.c.PartitionState(s.topic, p)
	victim := s.c.Index(old.Leader)
	s.c.Kill9(victim)
	s.c.WaitFor(30*time.Second, "a new leader of partition from its ISR", func() bool {
		st, ok := s.c.PartitionState(s.topic, p)
		return ok && st.Leader >= 0 && st.Leader != old.Leader && slices.Contains(old.ISR, st.Leader)
	})
	s.progress(300, 30*time.Second, "after the leader was killed")
	s.c.Restart(victim)
	s.c.WaitFullISR(s.topic, int(s.partitions), 45*time.Second)
	s.progress(150, 20*time.Second, "after the restart")
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
	s.c.WaitFor(30*time.Second, "every partition led by a live broker", func() bool {
		for p := int32(0); p < s.partitions; p++ {
			st, ok := s.c.PartitionState(s.topic, p)
			if !ok || st.Leader < 0 || st.Leader == ctl {
				return false
			}
		}
		return true
	})
	s.progress(300, 30*time.Second, "after the controller was killed")
	s.c.Restart(victim)
	s.c.WaitFullISR(s.topic, int(s.partitions), 45*time.Second)
	s.progress(150, 20*time.Second, "after the restart")
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
	s.c.Restart(victim)
	s.c.WaitFullISR(s.topic, 3, 45*time.Second)
	s.progress(150, 20*time.Second, "after the restart")
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
		s.c.Restart(i)
		s.c.WaitFullISR(s.topic, int(s.partitions), 45*time.Second)
		s.progress(100, 20*time.Second, "after the bounce")
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
		old, _ := s.c.PartitionState(s.topic, p)
		victim := s.c.Index(old.Leader)
		s.c.Kill9(victim)
		s.c.WaitFor(30*time.Second, "a new leader from the ISR", func() bool {
			st, ok := s.c.PartitionState(s.topic, p)
			return ok && st.Leader >= 0 && st.Leader != old.Leader && slices.Contains(old.ISR, st.Leader)
		})
		s.progress(150, 30*time.Second, "after the kill")
		s.c.Restart(victim)
		s.c.WaitFullISR(s.topic, int(s.partitions), 45*time.Second)
		s.progress(100, 20*time.Second, "after the restart")
	}
	s.finish()
}
