package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/testcluster"
)

// --describe --under-replicated-partitions and --unavailable-partitions
// against a real three-broker cluster: a stopped follower makes exactly the
// partitions it replicates under-replicated, and a partition whose only
// replica is on the stopped broker is unavailable (Leader: none). Then the
// describe stays bounded while DescribeConfigs stalls on two of the three
// brokers (a SIGSTOPped broker looks like this from the client's side: the
// connection is open and nothing answers).
func TestAgainstClusterFiltersAndStalledBroker(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3})
	bs := strings.Join(c.Bootstrap(), ",")
	kt := func(args ...string) (string, int) {
		return runTool(t, append([]string{"--bootstrap-server", bs}, args...)...)
	}
	ctrl, _ := c.Controller()
	ci := c.Index(ctrl)
	a, b := c.BrokerID(ci), c.BrokerID((ci+1)%3)
	victimIdx := (ci + 2) % 3
	v := c.BrokerID(victimIdx)

	// mixed-0 does not involve the victim, mixed-1 does; solo lives only on
	// the victim.
	assign := fmt.Sprintf("%d:%d,%d:%d", a, b, a, v)
	if out, code := kt("--create", "--topic", "mixed", "--replica-assignment", assign); code != 0 {
		t.Fatalf("create mixed: %d %q", code, out)
	}
	if out, code := kt("--create", "--topic", "solo", "--replica-assignment", fmt.Sprint(v)); code != 0 {
		t.Fatalf("create solo: %d %q", code, out)
	}
	c.WaitFor(15*time.Second, "leaders and full ISRs", func() bool {
		for _, tp := range []struct {
			topic string
			p     int32
			isr   int
		}{{"mixed", 0, 2}, {"mixed", 1, 2}, {"solo", 0, 1}} {
			s, ok := c.PartitionState(tp.topic, tp.p)
			if !ok || s.Leader < 0 || len(s.ISR) != tp.isr {
				return false
			}
		}
		return true
	})
	if out, code := kt("--describe", "--under-replicated-partitions"); code != 0 || out != "" {
		t.Fatalf("under-replicated with every broker up: %d %q", code, out)
	}
	if out, code := kt("--describe", "--unavailable-partitions"); code != 0 || out != "" {
		t.Fatalf("unavailable with every broker up: %d %q", code, out)
	}

	c.StopBroker(victimIdx)
	c.WaitFor(20*time.Second, "the victim out of mixed-1's ISR and solo offline", func() bool {
		s, ok := c.PartitionState("mixed", 1)
		so, ok2 := c.PartitionState("solo", 0)
		return ok && ok2 && len(s.ISR) == 1 && so.Leader < 0
	})
	wantUR := fmt.Sprintf("\tTopic: mixed\tPartition: 1\tLeader: %d\tReplicas: %d,%d\tIsr: %d\n", a, a, v, a)
	wantUA := fmt.Sprintf("\tTopic: solo\tPartition: 0\tLeader: none\tReplicas: %d\tIsr: %d\n", v, v)
	// Brokers learn the new state through UpdateMetadata; poll the tool.
	var out string
	ok := testcluster.Poll(20*time.Second, func() bool {
		out, _ = kt("--describe", "--topic", "mixed", "--under-replicated-partitions")
		return out == wantUR
	})
	if !ok {
		t.Errorf("--under-replicated-partitions: %q, want %q", out, wantUR)
	}
	ok = testcluster.Poll(20*time.Second, func() bool {
		out, _ = kt("--describe", "--unavailable-partitions")
		return out == wantUA
	})
	if !ok {
		t.Errorf("--unavailable-partitions: %q, want %q", out, wantUA)
	}

	// Stall DescribeConfigs on the two running brokers but one.
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // runs before the cluster's Close
	stalled := 0
	for i := 0; i < c.N(); i++ {
		if i == victimIdx || stalled == 1 {
			continue
		}
		stalled++
		c.Intercept(i, int16(kmsg.DescribeConfigs), func(ctx context.Context, _ *network.Request) (kmsg.Response, bool, error) {
			select {
			case <-ctx.Done():
			case <-release:
			}
			return nil, false, nil
		})
	}
	header := regexp.MustCompile(`(?m)^Topic: mixed\tTopicId: \S+\tPartitionCount: 2\tReplicationFactor: 2\tConfigs: .*$`)
	for round := 0; round < 3; round++ { // each run is a fresh client with its own broker choices
		start := time.Now()
		out, code := kt("--describe", "--topic", "mixed")
		took := time.Since(start)
		if code != 0 || !header.MatchString(out) || !strings.Contains(out, "Partition: 0\tLeader: ") {
			t.Fatalf("describe with a stalled broker: %d %q", code, out)
		}
		// One stalled attempt (3 s) plus the answer; with kgo's default
		// 10 s overhead per stalled request it took about 20 s. 14 s
		// leaves a loaded machine 11 s and still tells the two apart.
		t.Logf("describe with a stalled broker took %v", took)
		if took > 14*time.Second {
			t.Errorf("describe with a stalled broker took %v", took)
		}
	}
}
