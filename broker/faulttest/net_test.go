package faulttest_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/faulttest"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/zkpaths"
)

// Network partitions (issue 14 part 1): each broker in its own network
// namespace (faulttest.Net), links cut with iptables DROP rules, an
// idempotent acks=all producer (RF=3, min.insync.replicas=2) running
// through the cut and the heal. Afterwards every case checks: every
// acknowledged record read exactly once, in order, from every ISR replica
// (identical bytes below the high watermark), one controller, every
// partition led, and the ISR full again (the issue asks for 15 s after the
// heal; the assertion allows 45 s, 3x, for a loaded machine, and the
// measured time is logged). The stall of writes per partition is measured
// and logged; where a bound is asserted it has 3x slack (see stallBound).

const (
	netSession = 6 * time.Second // zookeeper.session.timeout.ms
	netLag     = 3 * time.Second // replica.lag.time.max.ms (DefaultOverrides)
	netCut     = 10 * time.Second
	// isrWrite is one ISR change written to ZooKeeper and propagated,
	// generously; it only enters the asserted bound below.
	isrWrite = 1 * time.Second
	// fullISRBound is the 15 s, times 3 for a loaded machine.
	fullISRBound = 45 * time.Second
)

// netScenario is a scenario on a faulttest.Net.
type netScenario struct {
	*scenario
	n *faulttest.Net
}

// newNetScenario starts 3 brokers, each in its own namespace, a topic of 3
// partitions (each broker preferred leader of one), and the workload.
func newNetScenario(t *testing.T, topic string, degradable bool, overrides map[string]string) *netScenario {
	t.Helper()
	t.Parallel()
	n := faulttest.NewNet(t, 3, degradable)
	s := &scenario{t: t, topic: topic, partitions: 3, chk: testcluster.NewChecker(), start: time.Now()}
	s.c = n.Start(faulttest.Options{SessionTimeout: netSession, Overrides: overrides})
	s.c.CreateTopic(topic, faulttest.RoundRobin(3, 3, 3), nil)
	s.w = faulttest.StartWorkload(s.c, s.chk, faulttest.WorkloadOptions{Topic: topic, Partitions: 3, MaxRecords: 60000})
	t.Cleanup(func() { s.w.Stop() })
	s.progress(150, 20*time.Second, "first acknowledgements")
	return &netScenario{scenario: s, n: n}
}

// stallMeter measures, per partition, the longest time without a new
// acknowledgement from its start until stop (sampling every 20 ms).
type stallMeter struct {
	stop chan struct{}
	done chan struct{}

	// mu guards the following.
	mu      sync.Mutex
	longest map[int32]time.Duration
}

func startStallMeter(w *faulttest.Workload, partitions int32) *stallMeter {
	m := &stallMeter{stop: make(chan struct{}), done: make(chan struct{}), longest: map[int32]time.Duration{}}
	go func() { // sampler: ends at stop
		defer close(m.done)
		count := func() map[int32]int {
			c := map[int32]int{}
			for _, a := range w.Acks() {
				c[a.Partition]++
			}
			return c
		}
		prev := count()
		last := map[int32]time.Time{}
		start := time.Now()
		for p := int32(0); p < partitions; p++ {
			last[p] = start
		}
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			var now time.Time
			select {
			case <-m.stop:
				now = time.Now()
			case now = <-tick.C:
			}
			cur := count()
			m.mu.Lock()
			for p := int32(0); p < partitions; p++ {
				if gap := now.Sub(last[p]); gap > m.longest[p] {
					m.longest[p] = gap
				}
				if cur[p] > prev[p] {
					last[p] = now
				}
			}
			m.mu.Unlock()
			prev = cur
			select {
			case <-m.stop:
				return
			default:
			}
		}
	}()
	return m
}

// Stop ends the sampling and returns the longest stall per partition.
func (m *stallMeter) Stop() map[int32]time.Duration {
	select {
	case <-m.stop:
	default:
		close(m.stop)
	}
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.longest
}

// cutAndHeal measures stalls from just before cut() until every partition
// has progressed after the heal, keeps the cut for netCut, and returns the
// heal time and the stalls.
func (s *netScenario) cutAndHeal(cut func(), during func()) (time.Time, map[int32]time.Duration) {
	s.t.Helper()
	m := startStallMeter(s.w, s.partitions)
	cutAt := time.Now()
	cut()
	if during != nil {
		during()
	}
	if d := netCut - time.Since(cutAt); d > 0 {
		time.Sleep(d) // the cut's length is the fault itself, not a verdict
	}
	s.n.Heal()
	healed := time.Now()
	s.waitEachPartitionProgress(30 * time.Second)
	return healed, m.Stop()
}

// waitEachPartitionProgress waits until every partition has new
// acknowledgements.
func (s *netScenario) waitEachPartitionProgress(timeout time.Duration) {
	s.t.Helper()
	count := func() map[int32]int {
		c := map[int32]int{}
		for _, a := range s.w.Acks() {
			c[a.Partition]++
		}
		return c
	}
	before := count()
	s.c.WaitFor(timeout, "new acknowledgements on every partition after the heal", func() bool {
		now := count()
		for p := int32(0); p < s.partitions; p++ {
			if now[p] <= before[p] {
				return false
			}
		}
		return true
	})
}

// reportStalls logs each partition's longest stall, marking the partitions
// the cut concerns, and fails a partition the cut does not concern that
// stalled longer than three times the session timeout (the bound
// is the session timeout; 3x is slack for a loaded machine).
func (s *netScenario) reportStalls(stalls map[int32]time.Duration, concerned map[int32]string) {
	s.t.Helper()
	for p := int32(0); p < s.partitions; p++ {
		if why, ok := concerned[p]; ok {
			s.t.Logf("stall: partition %d (%s): %v", p, why, stalls[p].Round(10*time.Millisecond))
			continue
		}
		s.t.Logf("stall: partition %d (not concerned by the cut; bound: session timeout %v): %v", p, netSession, stalls[p].Round(10*time.Millisecond))
		if stalls[p] > 3*netSession {
			s.t.Errorf("partition %d, which the cut does not concern, stalled %v, more than 3x the session timeout %v", p, stalls[p], netSession)
		}
	}
}

// converge checks the state after the heal: the ISR full (time logged,
// bounded by fullISRBound), one controller that every broker names, every
// partition led by a registered broker, progress, then the delivery and
// replica checks of finish.
func (s *netScenario) converge(healed time.Time) {
	s.t.Helper()
	s.c.WaitFullISR(s.topic, int(s.partitions), fullISRBound)
	s.t.Logf("ISR full %v after the heal (issue's bound 15s)", time.Since(healed).Round(10*time.Millisecond))
	s.oneController()
	for p := int32(0); p < s.partitions; p++ {
		st, _ := s.c.PartitionState(s.topic, p)
		ok, _, err := s.c.ZK().Exists(zkpaths.BrokerIDPath(st.Leader))
		if err != nil || !ok {
			s.t.Errorf("partition %d led by %d, which is not registered (%v)", p, st.Leader, err)
		}
		s.t.Logf("partition %d: leader %d epoch %d isr %v", p, st.Leader, st.LeaderEpoch, st.ISR)
	}
	s.progress(150, 20*time.Second, "after the heal")
	s.finish()
}

// oneController waits until /controller names a broker, every broker's
// metadata names that same controller, and it is the only broker whose
// ActiveControllerCount is 1.
func (s *netScenario) oneController() {
	s.t.Helper()
	cl := s.c.Client()
	var last string
	s.c.WaitFor(30*time.Second, "one controller named by every broker", func() bool {
		ctl, ok := s.c.Controller()
		if !ok {
			last = "no /controller"
			return false
		}
		for i := 0; i < s.c.N(); i++ {
			id := s.c.Node(i).ID
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			resp, err := cl.Broker(int(id)).Request(ctx, kmsg.NewPtrMetadataRequest())
			cancel()
			if err != nil {
				last = fmt.Sprintf("broker %d: %v", id, err)
				return false
			}
			if got := resp.(*kmsg.MetadataResponse).ControllerID; got != ctl {
				last = fmt.Sprintf("broker %d names controller %d, /controller holds %d", id, got, ctl)
				return false
			}
		}
		active, err := s.n.ActiveControllers()
		if err != nil || len(active) != 1 || active[0] != ctl {
			last = fmt.Sprintf("/controller holds %d, brokers with an active controller (ActiveControllerCount): %v (%v)", ctl, active, err)
			return false
		}
		last = fmt.Sprintf("controller %d (the only broker with ActiveControllerCount 1)", ctl)
		return true
	})
	s.t.Logf("one controller: %s", last)
}

// leaderNotController returns a partition whose leader is not the
// controller, its leader's index and the controller's index.
func (s *netScenario) leaderNotController() (p int32, leader, ctl int) {
	s.t.Helper()
	q, ok := s.notLedByController()
	if !ok {
		s.t.Fatal("every partition is led by the controller")
	}
	c, _ := s.c.Controller()
	return q, s.c.Index(s.leader(q)), s.c.Index(c)
}

// ledBy returns the partitions broker index i leads, as the cut concerns
// them.
func (s *netScenario) ledBy(i int, why string) map[int32]string {
	out := map[int32]string{}
	for p := int32(0); p < s.partitions; p++ {
		if s.leader(p) == s.c.Node(i).ID {
			out[p] = why
		}
	}
	return out
}

// TestNetZombieLeader isolates a leader from ZooKeeper and the other
// brokers while the clients still reach it. Its ISR cannot shrink (the ISR
// write needs ZooKeeper) and its followers do not fetch, so its acks=all
// writes stall and are never acknowledged; its session expires and the
// controller elects a leader from the rest of the ISR. Beside it an acks=1
// producer writes to the same leader: those acknowledgements are only the
// zombie's own append, and the count lost when it rejoins (truncating to
// the new leader) is reported, not asserted (Kafka documents that acks=1
// can lose acknowledged records).
func TestNetZombieLeader(t *testing.T) {
	s := newNetScenario(t, "net-zombie", false, nil)
	p, li, _ := s.leaderNotController()
	old := s.c.Node(li).ID

	// The acks=1 side: its own topic with the same assignment, so the
	// zombie leads its partition p too.
	acks1 := s.topic + "-acks1"
	s.c.CreateTopic(acks1, faulttest.RoundRobin(3, 3, 3), nil)
	chk1 := testcluster.NewChecker()
	w1 := faulttest.StartWorkload(s.c, chk1, faulttest.WorkloadOptions{Topic: acks1, Partitions: 3, Prefix: "a1", MaxRecords: 60000,
		ClientOpts: []kgo.Opt{kgo.DisableIdempotentWrite(), kgo.RequiredAcks(kgo.LeaderAck())}})
	t.Cleanup(func() { w1.Stop() })
	if !w1.WaitProgress(150, 20*time.Second) {
		t.Fatalf("acks=1 workload: no progress: %s", w1.Summary())
	}

	healed, stalls := s.cutAndHeal(func() {
		s.n.Isolate(li, append(s.n.Others(li), faulttest.ZooKeeperEnd)...)
	}, func() {
		s.c.WaitFor(30*time.Second, "a new leader for the zombie's partition", func() bool {
			st, ok := s.c.PartitionState(s.topic, p)
			return ok && st.Leader >= 0 && st.Leader != old
		})
		t.Logf("new leader of partition %d: %d", p, s.leader(p))
		// A produce straight to the zombie, which still believes it
		// leads: it must not be acknowledged.
		code, off, err := faulttest.ProduceDirect(s.c.Node(li).Addr(), s.topic, p, []byte("zombie-probe"), 2*time.Second)
		switch {
		case err != nil:
			t.Logf("zombie produce: no answer (%v), not acknowledged", err)
		case code == 0:
			t.Errorf("the zombie leader %d acknowledged an acks=all produce at offset %d", old, off)
		default:
			t.Logf("zombie produce refused: %v", kerr.ErrorForCode(code))
		}
	})
	s.reportStalls(stalls, s.zombieConcerns(p, old))
	s.converge(healed)
	hw, err := s.c.HighWatermarks(s.topic)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < s.c.N(); i++ {
		dl, err := faulttest.ReadReplicaLog(s.c.Node(i).LogDir, s.topic, p, hw[p])
		if err != nil {
			t.Fatalf("broker %d: %v", s.c.Node(i).ID, err)
		}
		if offs := dl.ByID["zombie-probe"]; len(offs) > 0 {
			t.Errorf("broker %d holds the zombie's unacknowledged record below the high watermark at offsets %v", s.c.Node(i).ID, offs)
		}
	}

	acks, failed, _ := w1.Stop()
	n := s.c.ConsumeAll(acks1, chk1, 60*time.Second)
	rep := chk1.Report()
	lost := 0
	for _, pr := range rep.Problems {
		if pr.Kind == "lost" || pr.Kind == "moved" {
			lost++
		}
	}
	t.Logf("acks=1 beside the zombie leader: acknowledged %d, failed %d, consumed %d; acknowledged records lost: %d (checker: %d problems)",
		len(acks), failed, n, lost, len(rep.Problems))
}

// zombieConcerns names the partitions a cut leader concerns: its own.
func (s *netScenario) zombieConcerns(p int32, old int32) map[int32]string {
	return map[int32]string{p: fmt.Sprintf("led by the cut broker %d; bound: session timeout %v + election", old, netSession)}
}

// TestNetControllerCutFromZooKeeper cuts the controller from ZooKeeper
// only: brokers and clients still reach it. Its session expires, another
// broker becomes controller and moves the leadership off it; on the heal
// it must resign, re-register and rejoin every ISR. The automatic
// preferred leader election runs every 5 s, so the old controller gets its
// preferred partition back after rejoining (the first run lost a
// replica from the ISR for good there).
func TestNetControllerCutFromZooKeeper(t *testing.T) {
	s := newNetScenario(t, "net-controller", false, map[string]string{
		"auto.leader.rebalance.enable":            "true",
		"leader.imbalance.check.interval.seconds": "5",
	})
	ctl, _ := s.c.Controller()
	ci := s.c.Index(ctl)
	epoch, _, _, err := s.c.ZK().GetControllerEpoch()
	if err != nil {
		t.Fatal(err)
	}
	concerned := s.ledBy(ci, fmt.Sprintf("led by the old controller %d; bound: session timeout %v + election", ctl, netSession))
	healed, stalls := s.cutAndHeal(func() {
		s.n.Cut(faulttest.BrokerEnd(ci), faulttest.ZooKeeperEnd)
	}, func() {
		s.c.WaitFor(30*time.Second, "a new controller with a higher epoch", func() bool {
			id, ok := s.c.Controller()
			e, _, eok, err := s.c.ZK().GetControllerEpoch()
			return ok && id != ctl && eok && err == nil && e > epoch
		})
		c2, _ := s.c.Controller()
		active, err := s.n.ActiveControllers()
		// Logged, not asserted: the cut controller learns that its
		// session is gone only once it reaches ZooKeeper again (as in
		// Kafka); its writes are fenced by the /controller_epoch version.
		t.Logf("new controller %d; during the cut brokers with ActiveControllerCount 1: %v (%v)", c2, active, err)
	})
	s.reportStalls(stalls, concerned)
	s.converge(healed)
	// The preferred leaders come back (auto rebalance every 5 s).
	s.c.WaitFor(45*time.Second, "every partition back on its preferred leader", func() bool {
		a := s.c.Assignment(s.topic)
		for p, rs := range a {
			st, ok := s.c.PartitionState(s.topic, p)
			if !ok || st.Leader != rs[0] || !slices.Contains(st.ISR, rs[0]) || len(st.ISR) != len(rs) {
				return false
			}
		}
		return true
	})
}

// TestNetFollowerCutFromLeader cuts one follower from its leader only (both
// still reach ZooKeeper, the controller and the clients). The leader drops
// it from the ISR after replica.lag.time.max.ms and acks=all writes go on;
// that partition's stall is bounded by replica.lag.time.max.ms plus one ISR
// write (asserted with 3x slack). The cut follower leads a partition the
// cut leader follows, which stalls the same way. The heal brings both back
// into the ISR.
func TestNetFollowerCutFromLeader(t *testing.T) {
	s := newNetScenario(t, "net-follower", false, nil)
	p, li, ci := s.leaderNotController()
	fi := 3 - li - ci // the third broker: neither leader of p nor controller
	lid, fid := s.c.Node(li).ID, s.c.Node(fi).ID
	bound := netLag + isrWrite
	concerned := map[int32]string{}
	for q := int32(0); q < s.partitions; q++ {
		if l := s.leader(q); l == lid || l == fid {
			concerned[q] = fmt.Sprintf("led by %d, follower %d cut; bound: replica.lag.time.max.ms %v + one ISR write", l, lid^fid^l, netLag)
		}
	}
	healed, stalls := s.cutAndHeal(func() {
		s.n.Cut(faulttest.BrokerEnd(li), faulttest.BrokerEnd(fi))
	}, func() {
		s.c.WaitFor(30*time.Second, "the cut follower out of the ISR", func() bool {
			st, ok := s.c.PartitionState(s.topic, p)
			return ok && st.Leader == lid && !slices.Contains(st.ISR, fid)
		})
	})
	s.reportStalls(stalls, concerned)
	for q := range concerned {
		// 3x slack over replica.lag.time.max.ms + one ISR write for a
		// loaded machine.
		if stalls[q] > 3*bound {
			t.Errorf("partition %d stalled %v, more than 3x (replica.lag.time.max.ms + one ISR write) = %v", q, stalls[q], 3*bound)
		}
	}
	s.converge(healed)
}

// TestNetBrokerCutFromEverything cuts one leader from ZooKeeper, the other
// brokers and the clients. Its session expires, its partition gets a leader
// from the rest of the ISR, and the other partitions lose it as a follower
// (ISR shrink after replica.lag.time.max.ms).
func TestNetBrokerCutFromEverything(t *testing.T) {
	s := newNetScenario(t, "net-isolated", false, nil)
	p, li, _ := s.leaderNotController()
	old := s.c.Node(li).ID
	healed, stalls := s.cutAndHeal(func() {
		s.n.Isolate(li, append(s.n.Others(li), faulttest.ZooKeeperEnd, faulttest.ClientsEnd)...)
	}, func() {
		s.c.WaitFor(30*time.Second, "a new leader for the isolated broker's partition", func() bool {
			st, ok := s.c.PartitionState(s.topic, p)
			return ok && st.Leader >= 0 && st.Leader != old
		})
	})
	s.reportStalls(stalls, s.zombieConcerns(p, old))
	s.converge(healed)
}

// TestNetClientCutFromLeader cuts the clients from one leader while
// requests are in flight (the workload always has one): the produce
// requests on the cut connection get no answer, the idempotent producer
// retries them after the heal, and nothing is written twice or lost. The
// cut partition waits for the heal (nothing in the cluster is wrong); the
// others go on.
func TestNetClientCutFromLeader(t *testing.T) {
	s := newNetScenario(t, "net-client", false, nil)
	p, li, _ := s.leaderNotController()
	healed, stalls := s.cutAndHeal(func() {
		s.n.Cut(faulttest.BrokerEnd(li), faulttest.ClientsEnd)
	}, nil)
	s.reportStalls(stalls, map[int32]string{p: fmt.Sprintf("its leader %d cut from the clients for %v", s.c.Node(li).ID, netCut)})
	s.converge(healed)
}

// TestNetDelayAndLoss degrades every inter-broker link with 200 ms of
// one-way delay and 5 % packet loss for the cut's length, then heals.
// acks=all writes slow down (each waits for the followers' next fetch
// round trip) but go on; the stalls are logged.
func TestNetDelayAndLoss(t *testing.T) {
	s := newNetScenario(t, "net-degraded", true, nil)
	before := s.w.Acked()
	healed, stalls := s.cutAndHeal(func() {
		s.n.Degrade(200*time.Millisecond, 0.05)
	}, nil)
	t.Logf("acknowledged from the degradation until every partition progressed after the heal: %d (before: %d)", s.w.Acked()-before, before)
	s.reportStalls(stalls, nil)
	s.converge(healed)
}
