package faulttest_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker/faulttest"
	"github.com/klassik/klassik/zkpaths"
)

// ISR membership under faults: a paused follower leaves and rejoins the
// ISR (state znode and kafka-topics --describe, with and without
// --under-replicated-partitions), only an ISR member may lead after the
// leader dies (unclean election off), and an ISR below min.insync.replicas
// refuses acks=all writes.

// leaderAndFollower returns partition p's leader and a follower in its
// ISR that is not the controller, or any follower if there is none.
func leaderAndFollower(s *scenario, p int32) (leader, follower int32) {
	avoid, _ := s.c.Controller()
	return s.leader(p), nonLeaderFollower(s, p, avoid)
}

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
	const p = 0
	leader, f := leaderAndFollower(s, p)
	fi := s.c.Index(f)
	resume := s.c.Pause(fi)
	paused := time.Now()
	// The leader shrinks the ISR after replica.lag.time.max.ms; were the
	// follower's session to expire first on a starved machine, the
	// controller would remove it instead. Either way it leaves and the
	// leader stays, which is all this test asserts about the pause.
	s.waitOutOfISR(p, f, leader)
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
	resume()
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

// TestLeaderKilledWhileFollowerOutOfIsr: a follower F of partition 0 is
// paused until it leaves the ISR, the producer moves on, then the leader
// is killed -9 and F is continued. Only the remaining ISR member may become
// leader (unclean.leader.election.enable=false): never F, which lacks
// acknowledged records. F then truncates and catches up from the new
// leader, the killed broker returns, and no acknowledged record is lost.
func TestLeaderKilledWhileFollowerOutOfIsr(t *testing.T) {
	s := newScenario(t, faulttest.Options{Brokers: 3, SessionTimeout: 10 * time.Second}, "stale-follower", faulttest.RoundRobin(3, 3, 3))
	const p = 0
	leader, f := leaderAndFollower(s, p)
	var g int32 = -1
	for _, id := range []int32{1, 2, 3} {
		if id != leader && id != f {
			g = id
		}
	}
	fi := s.c.Index(f)
	resume := s.c.Pause(fi)
	s.waitOutOfISR(p, f, leader)
	s.progress(200, 30*time.Second, "with the follower out of the ISR")
	li := s.c.Index(leader)
	s.c.Kill9(li)
	resume()
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
	s.restartCaughtUp(li, 150, "after the restart")
	s.finish()
}

// kafka-topics --describe --under-replicated-partitions on real processes
// while a follower is SIGSTOPped: with --bootstrap-server naming every
// broker, the paused one included (its kernel still accepts connections),
// the tool answers in bounded time and lists exactly the partitions whose
// ISR in ZooKeeper is smaller than their replica set. Those always include
// every partition the paused broker follows (they leave the ISR after
// replica.lag.time.max.ms). The partition it leads is listed only if its
// ZooKeeper session expired during the pause and the controller moved the
// leadership away (a busy machine can stretch the pause past the session);
// while the session lives nobody can tell the paused leader from an idle
// one, so that partition keeps its full ISR. The expected list is therefore
// read from the state znodes around each run of the tool, never assumed.
func TestDescribeUnderReplicatedWithPausedBroker(t *testing.T) {
	c := faulttest.Start(t, faulttest.Options{Brokers: 3, SessionTimeout: 20 * time.Second})
	const topic = "paused"
	c.CreateTopic(topic, faulttest.RoundRobin(3, 3, 3), nil)
	c.WaitFullISR(topic, 3, 30*time.Second)
	ctl, _ := c.Controller()
	var f int32 = -1
	for i := 0; i < c.N(); i++ {
		if id := c.Node(i).ID; id != ctl {
			f = id
			break
		}
	}
	var followed []int32
	for p, rs := range c.Assignment(topic) {
		st, ok := c.PartitionState(topic, p)
		if ok && st.Leader != f && slices.Contains(rs, f) {
			followed = append(followed, p)
		}
	}
	sort.Slice(followed, func(i, j int) bool { return followed[i] < followed[j] })
	if len(followed) == 0 {
		t.Fatalf("broker %d follows no partition of %s", f, topic)
	}
	fi := c.Index(f)
	resume := c.Pause(fi)
	// A follower leaves the ISR only when it is behind the leader's end
	// offset for replica.lag.time.max.ms, so write to the partitions it
	// follows (acks=1: the paused broker is not needed for the answer).
	cl := c.Client(kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, p := range followed {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Value: []byte("behind")}).FirstErr(); err != nil {
			t.Fatalf("produce to %s-%d: %v", topic, p, err)
		}
	}
	c.WaitFor(30*time.Second, "the paused follower out of the ISR of every partition it follows", func() bool {
		for _, p := range followed {
			if st, ok := c.PartitionState(topic, p); !ok || slices.Contains(st.ISR, f) {
				return false
			}
		}
		return true
	})

	bootstrap := strings.Join(c.Bootstrap(), ",")
	if !strings.Contains(bootstrap, c.Node(fi).Addr()) {
		t.Fatalf("bootstrap %s lacks the paused broker %s", bootstrap, c.Node(fi).Addr())
	}
	// underReplicated lists, from the state znodes, the partitions whose
	// ISR is smaller than their replica set, as the tool's lines print them.
	assignment := c.Assignment(topic)
	underReplicated := func() (string, []int32) {
		var b strings.Builder
		var ps []int32
		for p := int32(0); p < int32(len(assignment)); p++ {
			if st, ok := c.PartitionState(topic, p); ok && len(st.ISR) < len(assignment[p]) {
				fmt.Fprintf(&b, "Partition: %d\t", p)
				ps = append(ps, p)
			}
		}
		return b.String(), ps
	}
	var out, want string
	var wantParts []int32
	var slowest time.Duration
	// The brokers' metadata learns the leader's ISR change through the
	// batched isr_change notifications (up to ~7.5 s), so poll the tool
	// until it agrees with the state znodes read just before and just after
	// it ran (so the znodes did not move under the run).
	listed := func() bool {
		before, _ := underReplicated()
		start := time.Now()
		// The tool's own deadline is the bound: a paused broker must not
		// make it hang.
		o, err := faulttest.RunTool(20*time.Second, "kafka-topics", "--bootstrap-server", bootstrap, "--describe", "--topic", topic, "--under-replicated-partitions")
		d := time.Since(start)
		slowest = max(slowest, d)
		t.Logf("describe took %v", d.Round(100*time.Millisecond))
		if err != nil {
			t.Fatalf("kafka-topics with a paused broker: %v", err)
		}
		out = o
		want, wantParts = underReplicated()
		var got strings.Builder
		for _, l := range strings.Split(strings.TrimSpace(o), "\n") {
			if i := strings.Index(l, "Partition: "); i >= 0 {
				got.WriteString(l[i : i+strings.Index(l[i:], "\t")+1])
			}
		}
		return before == want && got.String() == want
	}
	deadline := time.Now().Add(45 * time.Second)
	for !listed() {
		if time.Now().After(deadline) {
			t.Fatalf("--under-replicated-partitions with broker %d paused did not list exactly the partitions with a short ISR in ZooKeeper %v (it follows %v):\n%s", f, wantParts, followed, out)
		}
		time.Sleep(500 * time.Millisecond)
	}
	for _, p := range followed {
		if !slices.Contains(wantParts, p) {
			t.Errorf("partition %d, followed by the paused broker %d, is not under-replicated (listed %v)", p, f, wantParts)
		}
	}
	if len(wantParts) > len(followed) {
		t.Logf("broker %d's session expired during the pause: its led partition moved and is listed too", f)
	}
	t.Logf("slowest describe with broker %d paused: %v\n%s", f, slowest.Round(100*time.Millisecond), out)
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.Contains(l, "Topic: "+topic+"\t") || strings.Contains(l, fmt.Sprintf("Leader: %d\t", f)) {
			t.Errorf("unexpected line %q", l)
		}
	}
	resume()
	c.WaitFullISR(topic, 3, 30*time.Second)
}
