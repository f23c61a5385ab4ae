package main

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/broker/testcluster"
)

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }

// TestAgainstCluster runs the tool against real in-process brokers. If the
// brokers do not serve ElectLeaders (API key 43), the tool must fail with
// the Java client's UnsupportedVersionException and exit 1; otherwise the
// elections are checked end to end.
func TestAgainstCluster(t *testing.T) {
	c := clitest.StartWithTopic(t, testcluster.Options{Brokers: 3, Overrides: map[string]string{"auto.leader.rebalance.enable": "false"}}, "elect", 2, 3)
	bs := strings.Join(c.Bootstrap(), ",")
	tool := func(args ...string) (string, string, int) {
		var out, errOut strings.Builder
		code := run(append([]string{"--bootstrap-server", bs}, args...), &out, &errOut, 20*time.Second)
		return out.String(), errOut.String(), code
	}
	if !clitest.Supports(t, c, 43) {
		out, errOut, code := tool("--election-type", "preferred", "--all-topic-partitions")
		want := "Exception in thread \"main\" java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.UnsupportedVersionException: The broker does not support ELECT_LEADERS\n"
		if code != 1 || out != "" || errOut != want {
			t.Fatalf("unsupported ElectLeaders: exit %d stdout %q stderr %q", code, out, errOut)
		}
		return
	}

	// Every leader is preferred already: nothing to do.
	out, errOut, code := tool("--election-type", "preferred", "--path-to-json-file", clitest.WriteFile(t, `{"partitions":[{"topic":"elect","partition":0},{"topic":"elect","partition":1}]}`))
	if code != 0 || out != "Valid replica already elected for partitions elect-0, elect-1\n" {
		t.Fatalf("no-op election: %d %q %q", code, out, errOut)
	}
	// Unknown partition: a per-partition error, exit 1.
	out, errOut, code = tool("--election-type", "preferred", "--topic", "elect", "--partition", "9")
	if code != 1 || !strings.HasPrefix(out, "Error completing leader election (PREFERRED) for partition: elect-9: org.apache.kafka.common.errors.UnknownTopicOrPartitionException") ||
		errOut != "Exception in thread \"main\" kafka.common.AdminCommandFailedException: 1 replica(s) could not be elected\n" {
		t.Fatalf("unknown partition: %d %q %q", code, out, errOut)
	}
	// Unclean election with a live leader is not needed either.
	out, errOut, code = tool("--election-type", "unclean", "--topic", "elect", "--partition", "0")
	if code != 0 || out != "Valid replica already elected for partitions elect-0\n" {
		t.Fatalf("unclean no-op: %d %q %q", code, out, errOut)
	}

	// Move leadership of partition 0 away from its preferred replica by
	// stopping that broker: a preferred election must then fail.
	assigned, err := c.ZK().GetReplicaAssignment("elect")
	if err != nil || len(assigned[0]) != 3 {
		t.Fatalf("assignment of elect: %v %v", assigned, err)
	}
	preferred := assigned[0][0]
	c.StopBroker(c.Index(preferred))
	c.WaitFor(20*time.Second, "a new leader for elect-0", func() bool {
		s, ok := c.PartitionState("elect", 0)
		return ok && s.Leader >= 0 && s.Leader != preferred
	})
	bs = strings.Join(c.Bootstrap(), ",")
	out, errOut, code = tool("--election-type", "preferred", "--topic", "elect", "--partition", "0")
	if code != 1 || !strings.HasPrefix(out, "Error completing leader election (PREFERRED) for partition: elect-0: org.apache.kafka.common.errors.PreferredLeaderNotAvailableException") ||
		errOut != "Exception in thread \"main\" kafka.common.AdminCommandFailedException: 1 replica(s) could not be elected\n" {
		t.Fatalf("preferred replica down: %d %q %q", code, out, errOut)
	}

	// Back in the ISR, the preferred replica can be elected again. That
	// needs the follower to catch up, so it is checked only once the ISR
	// has expanded.
	c.RestartBroker(c.Index(preferred))
	if !testcluster.Poll(15*time.Second, func() bool {
		s, ok := c.PartitionState("elect", 0)
		return ok && slices.Contains(s.ISR, preferred)
	}) {
		t.Logf("broker %d did not rejoin the ISR of elect-0 within 15s; the successful election is covered by TestElectOutput only", preferred)
		return
	}
	bs = strings.Join(c.Bootstrap(), ",")
	out, errOut, code = tool("--election-type", "preferred", "--all-topic-partitions")
	if code != 0 || !strings.Contains(out, "Successfully completed leader election (PREFERRED) for partitions elect-0\n") {
		t.Fatalf("preferred election: %d %q %q", code, out, errOut)
	}
	c.WaitFor(10*time.Second, "the preferred leader of elect-0", func() bool {
		s, ok := c.PartitionState("elect", 0)
		return ok && s.Leader == preferred
	})
}
