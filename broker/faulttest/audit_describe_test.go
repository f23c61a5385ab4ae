package faulttest_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker/faulttest"
)

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
func TestAuditDescribeUnderReplicatedWithPausedBroker(t *testing.T) {
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
	c.Pause(fi)
	resumed := false
	defer func() {
		if !resumed {
			c.Resume(fi)
		}
	}()
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
	c.Resume(fi)
	resumed = true
	c.WaitFullISR(topic, 3, 30*time.Second)
}
