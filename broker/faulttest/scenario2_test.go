package faulttest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klassik/klassik/broker/faulttest"
	"github.com/klassik/klassik/zkpaths"
)

// nonLeaderFollower returns a follower in partition p's ISR that is not
// avoid (the controller), or any follower if there is none.
func nonLeaderFollower(s *scenario, p int32, avoid int32) int32 {
	st, _ := s.c.PartitionState(s.topic, p)
	var any int32 = -1
	for _, id := range st.ISR {
		if id == st.Leader {
			continue
		}
		if id != avoid {
			return id
		}
		any = id
	}
	return any
}

// describeIsr runs kafka-topics --describe and returns the Isr column of
// partition p. With viaZK it uses --zookeeper (Kafka 2.8's direct read of
// the state znodes); otherwise --bootstrap-server at every broker, which
// reports the brokers' metadata caches.
func describeIsr(t *testing.T, s *scenario, p int32, viaZK bool) (isr []int32, out string) {
	t.Helper()
	args := []string{"--bootstrap-server", strings.Join(s.c.Bootstrap(), ",")}
	if viaZK {
		args = []string{"--zookeeper", s.c.ZKConnect()}
	}
	args = append(args, "--describe", "--topic", s.topic)
	start := time.Now()
	out, err := faulttest.RunTool(30*time.Second, "kafka-topics", args...)
	if err != nil {
		t.Fatalf("kafka-topics --describe: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Logf("kafka-topics --describe took %v", d.Round(100*time.Millisecond))
	}
	re := regexp.MustCompile(`Partition: ` + strconv.Itoa(int(p)) + `\t.*Isr: ([0-9,]*)`)
	m := re.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("kafka-topics --describe has no line for partition %d:\n%s", p, out)
	}
	for _, f := range strings.Split(m[1], ",") {
		if f == "" {
			continue
		}
		id, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("bad Isr column %q", m[1])
		}
		isr = append(isr, int32(id))
	}
	return isr, out
}

// TestFollowerFallsBehindLeavesAndRejoinsIsr pauses a follower (SIGSTOP)
// for longer than replica.lag.time.max.ms (3s), meant to stay within its
// ZooKeeper session (20s here): the follower leaves the ISR while the
// leader stays — the state znode and kafka-topics --describe both show it
// — and, once resumed, it catches up and is added back. The assertions
// hold as well if a starved machine lets the session expire first (the
// controller then removes the follower from the ISR instead).
func TestFollowerFallsBehindLeavesAndRejoinsIsr(t *testing.T) {
	s := newScenario(t, faulttest.Options{Brokers: 3, SessionTimeout: 20 * time.Second}, "lagging", faulttest.RoundRobin(3, 3, 3))
	ctl, _ := s.c.Controller()
	const p = 0
	leader := s.leader(p)
	f := nonLeaderFollower(s, p, ctl)
	fi := s.c.Index(f)
	s.c.Pause(fi)
	paused := time.Now()
	resumed := false
	defer func() {
		if !resumed {
			s.c.Resume(fi)
		}
	}()
	// The leader shrinks the ISR after replica.lag.time.max.ms; were the
	// follower's session to expire first on a starved machine, the
	// controller would remove it instead. Either way it leaves and the
	// leader stays, which is all this test asserts about the pause.
	s.c.WaitFor(30*time.Second, "the paused follower out of partition 0's ISR", func() bool {
		st, ok := s.c.PartitionState(s.topic, p)
		return ok && !slices.Contains(st.ISR, f) && st.Leader == leader
	})
	t.Logf("follower %d left partition %d's ISR %v after the pause", f, p, time.Since(paused).Round(100*time.Millisecond))
	if ok, _, err := s.c.ZK().Exists(zkpaths.BrokerIDPath(f)); err == nil && !ok {
		t.Logf("the paused follower's session expired during the pause (%v)", time.Since(paused).Round(100*time.Millisecond))
	}
	// While a broker is stopped, --bootstrap-server mode may send one of
	// its requests (kadm's DescribeConfigs goes to any broker) to the
	// stopped broker, whose kernel accepts the connection, and then waits
	// for a timeout; so the paused state is shown with --zookeeper, which
	// reads the state znodes as Kafka 2.8's tool does.
	var isr []int32
	var out string
	s.c.WaitFor(30*time.Second, "kafka-topics --describe to show the shrunk ISR", func() bool {
		isr, out = describeIsr(t, s, p, true)
		return !slices.Contains(isr, f) && len(isr) == 2
	})
	t.Logf("kafka-topics --describe while paused (%v after the pause):\n%s", time.Since(paused).Round(100*time.Millisecond), out)
	s.c.Resume(fi)
	resumed = true
	s.c.WaitFor(30*time.Second, "the follower back in partition 0's ISR", func() bool {
		st, ok := s.c.PartitionState(s.topic, p)
		return ok && slices.Contains(st.ISR, f) && len(st.ISR) == 3
	})
	// The brokers' metadata caches learn of a leader's ISR change through
	// /isr_change_notification and the controller's UpdateMetadata; a
	// leader batches those notifications (every 2.5s, after 5s without
	// changes), so --bootstrap-server output may lag the znode by ~7.5s.
	s.c.WaitFor(30*time.Second, "kafka-topics --describe (--bootstrap-server) to show the full ISR again", func() bool {
		isr, out = describeIsr(t, s, p, false)
		return slices.Contains(isr, f) && len(isr) == 3
	})
	t.Logf("kafka-topics --describe after the rejoin:\n%s", out)
	s.c.WaitFullISR(s.topic, int(s.partitions), 30*time.Second)
	s.progress(150, 20*time.Second, "after the rejoin")
	s.finish()
}

// TestPausedLeaderPastSessionIsFenced pauses the leader of a partition
// (SIGSTOP) for longer than its ZooKeeper session: the session expires, the
// controller elects another leader from the ISR, and when the process is
// continued it must not act as leader: a produce it receives at once (sent
// while it was stopped, so it is the first thing it reads) must not be
// acknowledged, and that record must not appear in the log. The broker then
// re-registers and rejoins every ISR.
func TestPausedLeaderPastSessionIsFenced(t *testing.T) {
	s := newScenario(t, faulttest.Options{Brokers: 3}, "zombie", faulttest.RoundRobin(3, 3, 3))
	ctl, _ := s.c.Controller()
	p := int32(-1)
	for q := int32(0); q < s.partitions; q++ {
		if s.leader(q) != ctl {
			p = q
			break
		}
	}
	if p < 0 {
		t.Fatalf("every partition is led by the controller %d", ctl)
	}
	old, _ := s.c.PartitionState(s.topic, p)
	zi := s.c.Index(old.Leader)
	s.c.Pause(zi)
	resumed := false
	defer func() {
		if !resumed {
			s.c.Resume(zi)
		}
	}()
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
		s.c.Resume(zi)
		resumed = true
		r = <-res
	case r = <-res:
		s.c.Resume(zi)
		resumed = true
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

// TestReassignUnderLoad moves a topic from brokers {1,2,3} to {2,3,4} with
// kafka-reassign-partitions --execute (ZooKeeper mode:
// /admin/reassign_partitions) while the producer runs: the reassignment
// completes, broker 4 holds byte-identical copies, and no acknowledged
// write is lost.
func TestReassignUnderLoad(t *testing.T) {
	from := map[int32][]int32{0: {1, 2, 3}, 1: {2, 3, 1}, 2: {3, 1, 2}}
	to := map[int32][]int32{0: {2, 3, 4}, 1: {3, 4, 2}, 2: {4, 2, 3}}
	s := newScenario(t, faulttest.Options{Brokers: 4}, "reassign", from)
	s.progress(600, 20*time.Second, "some data before the move")

	type part struct {
		Topic     string   `json:"topic"`
		Partition int32    `json:"partition"`
		Replicas  []int32  `json:"replicas"`
		LogDirs   []string `json:"log_dirs"`
	}
	plan := struct {
		Version    int    `json:"version"`
		Partitions []part `json:"partitions"`
	}{Version: 1}
	for p := int32(0); p < 3; p++ {
		plan.Partitions = append(plan.Partitions, part{Topic: s.topic, Partition: p, Replicas: to[p], LogDirs: []string{"any", "any", "any"}})
	}
	data, _ := json.Marshal(plan)
	file := filepath.Join(t.TempDir(), "reassign.json")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := faulttest.RunTool(30*time.Second, "kafka-reassign-partitions", "--zookeeper", s.c.ZKConnect(), "--reassignment-json-file", file, "--execute")
	if err != nil {
		t.Fatalf("kafka-reassign-partitions --execute: %v", err)
	}
	t.Logf("kafka-reassign-partitions --execute:\n%s", out)
	s.c.WaitFor(60*time.Second, "the reassignment to complete", func() bool {
		if ok, _, err := s.c.ZK().Exists(zkpaths.ReassignPartitionsPath); err != nil || ok {
			return false
		}
		a := s.c.Assignment(s.topic)
		for p, rs := range to {
			st, ok := s.c.PartitionState(s.topic, p)
			if !slices.Equal(a[p], rs) || !ok || !slices.Contains(rs, st.Leader) {
				return false
			}
		}
		return true
	})
	s.c.WaitFullISR(s.topic, 3, 30*time.Second)
	out, err = faulttest.RunTool(30*time.Second, "kafka-reassign-partitions", "--zookeeper", s.c.ZKConnect(), "--reassignment-json-file", file, "--verify")
	if err != nil {
		t.Fatalf("kafka-reassign-partitions --verify: %v", err)
	}
	t.Logf("kafka-reassign-partitions --verify:\n%s", out)
	s.progress(150, 20*time.Second, "after the reassignment")
	s.finish()
}

// TestPreferredElectionAfterBounce bounces broker 1 (SIGTERM, restart):
// controlled shutdown moves its leadership away and, with
// auto.leader.rebalance.enable=false, nothing moves it back, until
// ElectLeaders (PREFERRED, as kafka-leader-election.sh sends) restores the
// preferred leader of every partition.
func TestPreferredElectionAfterBounce(t *testing.T) {
	s := newScenario(t, faulttest.Options{Brokers: 3}, "preferred", faulttest.RoundRobin(3, 3, 3))
	s.c.Stop(0)
	s.progress(100, 30*time.Second, "with broker 1 stopped")
	s.c.Restart(0)
	s.c.WaitFullISR(s.topic, int(s.partitions), 45*time.Second)
	if l := s.leader(0); l == 1 {
		t.Fatalf("partition 0 is led by broker 1 again without an election (auto.leader.rebalance.enable=false)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := s.c.Admin().ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{s.topic: {0: {}, 1: {}, 2: {}}})
	if err != nil {
		t.Fatalf("ElectLeaders: %v", err)
	}
	for p, r := range res[s.topic] {
		if r.Err != nil && !errors.Is(r.Err, kerr.ElectionNotNeeded) {
			t.Errorf("ElectLeaders partition %d: %v %s", p, r.Err, r.ErrMessage)
		}
	}
	assignment := s.c.Assignment(s.topic)
	s.c.WaitFor(20*time.Second, "every partition led by its preferred replica", func() bool {
		for p, rs := range assignment {
			st, ok := s.c.PartitionState(s.topic, p)
			if !ok || st.Leader != rs[0] {
				return false
			}
		}
		return true
	})
	s.progress(150, 20*time.Second, "after the election")
	s.finish()
}

// TestAutoLeaderRebalanceAfterBounce is the same bounce with
// auto.leader.rebalance.enable=true and a one-second imbalance check: the
// controller itself moves leadership back to the preferred replicas.
func TestAutoLeaderRebalanceAfterBounce(t *testing.T) {
	s := newScenario(t, faulttest.Options{Brokers: 3, Overrides: map[string]string{
		"auto.leader.rebalance.enable":            "true",
		"leader.imbalance.check.interval.seconds": "1",
	}}, "rebalance", faulttest.RoundRobin(3, 3, 3))
	s.c.Stop(0)
	s.progress(100, 30*time.Second, "with broker 1 stopped")
	s.c.Restart(0)
	assignment := s.c.Assignment(s.topic)
	s.c.WaitFor(30*time.Second, "every partition led by its preferred replica again", func() bool {
		for p, rs := range assignment {
			st, ok := s.c.PartitionState(s.topic, p)
			if !ok || st.Leader != rs[0] || len(st.ISR) != 3 {
				return false
			}
		}
		return true
	})
	s.progress(150, 20*time.Second, "after the rebalance")
	s.finish()
}

// TestMinInsyncReplicasWithTwoBrokersDown kills -9 two of three brokers:
// the survivor leads every partition with an ISR of one, below
// min.insync.replicas=2, so no acks=all write may be acknowledged (a direct
// produce gets NOT_ENOUGH_REPLICAS, and the workload's acknowledgements
// stop). Once both are back, the producer's retried batches complete, each
// exactly once.
func TestMinInsyncReplicasWithTwoBrokersDown(t *testing.T) {
	s := newScenario(t, faulttest.Options{Brokers: 3}, "min-isr", faulttest.RoundRobin(3, 3, 3))
	survivor, ok := s.c.Controller() // no controller failover needed
	if !ok {
		t.Fatal("no controller")
	}
	var victims []int
	for i := 0; i < s.c.N(); i++ {
		if s.c.Node(i).ID != survivor {
			victims = append(victims, i)
		}
	}
	for _, i := range victims {
		s.c.Kill9(i)
	}
	s.c.WaitFor(30*time.Second, "the survivor leading every partition alone", func() bool {
		for p := int32(0); p < s.partitions; p++ {
			st, ok := s.c.PartitionState(s.topic, p)
			if !ok || st.Leader != survivor || !slices.Equal(st.ISR, []int32{survivor}) {
				return false
			}
		}
		return true
	})
	// The state znode is the controller's word; the survivor applies its
	// LeaderAndIsr a moment later. A fresh acks=all produce is answered
	// NOT_ENOUGH_REPLICAS once the survivor's own ISR is the one member
	// (before that it waits for the dead followers and times out); it must
	// never be acknowledged. Each attempt carries its own id.
	for p := int32(0); p < s.partitions; p++ {
		attempt := 0
		s.c.WaitFor(30*time.Second, fmt.Sprintf("partition %d's leader refusing acks=all below min.insync.replicas", p), func() bool {
			attempt++
			val := []byte(fmt.Sprintf("minisr-%d-%d", p, attempt))
			code, off, err := faulttest.ProduceDirect(s.c.Node(s.c.Index(survivor)).Addr(), s.topic, p, val, 2*time.Second)
			switch {
			case err != nil:
				t.Fatalf("produce to the survivor: %v", err)
			case code == 0:
				t.Fatalf("acks=all produce to partition %d with ISR [%d] below min.insync.replicas=2 acknowledged at offset %d", p, survivor, off)
			case code == kerr.NotEnoughReplicas.Code || code == kerr.NotEnoughReplicasAfterAppend.Code:
				t.Logf("partition %d: produce with the ISR below min.insync.replicas: %v", p, kerr.ErrorForCode(code))
				return true
			}
			t.Logf("partition %d: produce answered %v (the survivor has not applied the shrunk ISR yet)", p, kerr.ErrorForCode(code))
			return false
		})
	}
	// From here until the restarts the survivor's ISR is itself alone, so
	// no record appended from now on may be acknowledged: every
	// acknowledgement seen before the restarts lies below the end offsets
	// read now (records appended earlier may still have their answers in
	// flight). Let the workload hand the producer more records first.
	ends, err := s.c.HighWatermarks(s.topic)
	if err != nil {
		t.Fatalf("end offsets with two brokers down: %v", err)
	}
	sent := s.w.Sent()
	s.c.WaitFor(30*time.Second, "the workload to send 100 more records with the ISR below min.insync.replicas", func() bool {
		return s.w.Sent() >= sent+100
	})
	for _, a := range s.w.Acks() {
		if a.Offset >= ends[a.Partition] {
			t.Errorf("record %s acknowledged at offset %d of partition %d, appended while the ISR was [%d] below min.insync.replicas (end was %d)",
				a.ID, a.Offset, a.Partition, survivor, ends[a.Partition])
		}
	}
	for _, i := range victims {
		s.c.Restart(i)
	}
	s.c.WaitFullISR(s.topic, int(s.partitions), 45*time.Second)
	s.progress(150, 30*time.Second, "after both brokers returned")
	s.finish()
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
	s.c.Pause(zi)
	resumed := false
	defer func() {
		if !resumed {
			s.c.Resume(zi)
		}
	}()
	var newCtl, newEpoch int32
	s.c.WaitFor(30*time.Second, "a new controller with a higher epoch", func() bool {
		id, ok := s.c.Controller()
		e, _, eok, err := s.c.ZK().GetControllerEpoch()
		newCtl, newEpoch = id, e
		return ok && id != old && eok && err == nil && e > oldEpoch
	})
	s.c.WaitFor(30*time.Second, "every partition led by a live broker", func() bool {
		for p := int32(0); p < s.partitions; p++ {
			st, ok := s.c.PartitionState(s.topic, p)
			if !ok || st.Leader < 0 || st.Leader == old {
				return false
			}
		}
		return true
	})
	s.progress(200, 30*time.Second, "with the old controller paused")
	before := map[int32]int32{} // leader epoch per partition before the resume
	for p := int32(0); p < s.partitions; p++ {
		st, _ := s.c.PartitionState(s.topic, p)
		before[p] = st.LeaderEpoch
	}
	s.c.Resume(zi)
	resumed = true
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

// TestLeaderKilledWhileFollowerOutOfIsr: a follower F of partition 0 is
// paused until it leaves the ISR, the producer moves on, then the leader
// is killed -9 and F is continued. Only the remaining ISR member may become
// leader (unclean.leader.election.enable=false): never F, which lacks
// acknowledged records. F then truncates and catches up from the new
// leader, the killed broker returns, and no acknowledged record is lost.
func TestLeaderKilledWhileFollowerOutOfIsr(t *testing.T) {
	s := newScenario(t, faulttest.Options{Brokers: 3, SessionTimeout: 10 * time.Second}, "stale-follower", faulttest.RoundRobin(3, 3, 3))
	ctl, _ := s.c.Controller()
	const p = 0
	leader := s.leader(p)
	f := nonLeaderFollower(s, p, ctl)
	var g int32 = -1
	for _, id := range []int32{1, 2, 3} {
		if id != leader && id != f {
			g = id
		}
	}
	fi := s.c.Index(f)
	s.c.Pause(fi)
	resumed := false
	defer func() {
		if !resumed {
			s.c.Resume(fi)
		}
	}()
	s.c.WaitFor(30*time.Second, "the paused follower out of partition 0's ISR", func() bool {
		st, ok := s.c.PartitionState(s.topic, p)
		return ok && !slices.Contains(st.ISR, f) && st.Leader == leader
	})
	s.progress(200, 30*time.Second, "with the follower out of the ISR")
	li := s.c.Index(leader)
	s.c.Kill9(li)
	s.c.Resume(fi)
	resumed = true
	s.c.WaitFor(30*time.Second, "the remaining ISR member leading partition 0", func() bool {
		st, ok := s.c.PartitionState(s.topic, p)
		if ok && st.Leader == f {
			t.Fatalf("broker %d, out of the ISR, was elected leader of partition 0 (state %+v)", f, st)
		}
		return ok && st.Leader == g
	})
	s.c.WaitFor(30*time.Second, "the continued follower back in partition 0's ISR", func() bool {
		st, ok := s.c.PartitionState(s.topic, p)
		if ok && st.Leader == f {
			t.Fatalf("broker %d became leader of partition 0 before rejoining the ISR", f)
		}
		return ok && st.Leader == g && slices.Contains(st.ISR, f)
	})
	s.progress(150, 30*time.Second, "after the follower rejoined")
	s.c.Restart(li)
	s.c.WaitFullISR(s.topic, int(s.partitions), 45*time.Second)
	s.progress(150, 20*time.Second, "after the restart")
	s.finish()
}
