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

// kill9Leader kills -9 the current leader of partition p and waits for a
// new leader from p's ISR as it was before the kill; it returns the killed
// broker's index.
func (s *scenario) kill9Leader(p int32, what string) int {
	s.t.Helper()
	old, _ := s.c.PartitionState(s.topic, p)
	victim := s.c.Index(old.Leader)
	s.c.Kill9(victim)
	s.c.WaitFor(30*time.Second, what, func() bool {
		st, ok := s.c.PartitionState(s.topic, p)
		return ok && st.Leader >= 0 && st.Leader != old.Leader && slices.Contains(old.ISR, st.Leader)
	})
	return victim
}

// restartCaughtUp restarts broker i, waits for every ISR of the topic to be
// full again and then requires n more acknowledgements.
func (s *scenario) restartCaughtUp(i int, n int64, what string) {
	s.t.Helper()
	s.c.Restart(i)
	s.c.WaitFullISR(s.topic, int(s.partitions), 45*time.Second)
	s.progress(n, 20*time.Second, what)
}

// waitOutOfISR waits until broker f has left partition p's ISR while
// leader still leads it.
func (s *scenario) waitOutOfISR(p, f, leader int32) {
	s.t.Helper()
	s.c.WaitFor(30*time.Second, fmt.Sprintf("the paused follower out of partition %d's ISR", p), func() bool {
		st, ok := s.c.PartitionState(s.topic, p)
		return ok && !slices.Contains(st.ISR, f) && st.Leader == leader
	})
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

// notLedByController returns a partition whose leader is not the
// controller, so that failing its leader is only a leader failure; ok is
// false when the controller leads every partition.
func (s *scenario) notLedByController() (p int32, ok bool) {
	s.t.Helper()
	ctl, _ := s.c.Controller()
	for q := int32(0); q < s.partitions; q++ {
		if s.leader(q) != ctl {
			return q, true
		}
	}
	return -1, false
}

// waitLedWithout waits until every partition of the topic is led by a live
// broker other than gone.
func (s *scenario) waitLedWithout(gone int32) {
	s.t.Helper()
	s.c.WaitFor(30*time.Second, "every partition led by a live broker", func() bool {
		for p := int32(0); p < s.partitions; p++ {
			st, ok := s.c.PartitionState(s.topic, p)
			if !ok || st.Leader < 0 || st.Leader == gone {
				return false
			}
		}
		return true
	})
}

// finish stops the workload and checks the fault suite's invariants: every
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
