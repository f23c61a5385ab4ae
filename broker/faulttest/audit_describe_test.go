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

// The kafka-topics.sh demand on real processes: while a follower is
// SIGSTOPped (inside its ZooKeeper session, so it is still registered and
// its kernel still accepts connections), `kafka-topics.sh
// --bootstrap-server <every broker, the paused one included> --describe
// --under-replicated-partitions` answers in bounded time and lists exactly
// the partitions the paused broker follows: they left the ISR after
// replica.lag.time.max.ms, while the one it leads keeps its full ISR
// (nobody can tell the paused leader apart from an idle one).
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
	c.WaitFor(15*time.Second, "the paused follower out of the ISR of every partition it follows", func() bool {
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
	var want strings.Builder
	for _, p := range followed {
		fmt.Fprintf(&want, "Partition: %d\t", p)
	}
	var out string
	var slowest time.Duration
	// The brokers' metadata learns the leader's ISR change through the
	// batched isr_change notifications (up to ~7.5 s), so poll the tool.
	listed := func() bool {
		start := time.Now()
		o, err := faulttest.RunTool(20*time.Second, "kafka-topics", "--bootstrap-server", bootstrap, "--describe", "--topic", topic, "--under-replicated-partitions")
		d := time.Since(start)
		slowest = max(slowest, d)
		t.Logf("describe took %v", d.Round(100*time.Millisecond))
		if err != nil {
			t.Fatalf("kafka-topics with a paused broker: %v", err)
		}
		if d > 12*time.Second {
			t.Fatalf("kafka-topics --describe took %v with one broker paused", d.Round(100*time.Millisecond))
		}
		out = o
		var got strings.Builder
		for _, l := range strings.Split(strings.TrimSpace(o), "\n") {
			if i := strings.Index(l, "Partition: "); i >= 0 {
				got.WriteString(l[i : i+strings.Index(l[i:], "\t")+1])
			}
		}
		return got.String() == want.String()
	}
	deadline := time.Now().Add(30 * time.Second)
	for !listed() {
		if time.Now().After(deadline) {
			t.Fatalf("--under-replicated-partitions with broker %d paused did not list exactly %v:\n%s", f, followed, out)
		}
		time.Sleep(500 * time.Millisecond)
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
