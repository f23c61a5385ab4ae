package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/broker/testcluster"
)

func startCluster(t *testing.T, topic string, partitions int32, rf int16) *testcluster.Cluster {
	t.Helper()
	return clitest.StartWithTopic(t, testcluster.Options{Brokers: 3}, topic, partitions, rf)
}

func runBootstrap(t *testing.T, c *testcluster.Cluster, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut strings.Builder
	code := (&tool{out: &out, fixedStartIndex: 0}).run(append([]string{"--bootstrap-server", strings.Join(c.Bootstrap(), ",")}, args...), &errOut)
	return out.String(), errOut.String(), code
}

// TestBootstrapMode runs the admin-API actions against real brokers.
// --generate needs only Metadata. The others need ListPartitionReassignments
// and AlterPartitionReassignments (API keys 46 and 45), which the brokers
// serve: a reassignment is executed, verified, listed and cancelled end to
// end.
func TestBootstrapMode(t *testing.T) {
	c := startCluster(t, "moves", 3, 2)

	topics := clitest.WriteFile(t, `{"topics":[{"topic":"moves"}],"version":1}`)
	out, errOut, code := runBootstrap(t, c, "--generate", "--topics-to-move-json-file", topics, "--broker-list", "1,2,3")
	wantProposal := "Proposed partition reassignment configuration\n" +
		`{"version":1,"partitions":[{"topic":"moves","partition":0,"replicas":[1,2],"log_dirs":["any","any"]},{"topic":"moves","partition":1,"replicas":[2,3],"log_dirs":["any","any"]},{"topic":"moves","partition":2,"replicas":[3,1],"log_dirs":["any","any"]}]}` + "\n"
	if code != 0 || !strings.HasPrefix(out, "Current partition replica assignment\n{\"version\":1,\"partitions\":[{\"topic\":\"moves\",\"partition\":0,") || !strings.HasSuffix(out, "\n\n"+wantProposal) {
		t.Fatalf("generate: %d %q %q", code, out, errOut)
	}
	out, _, code = runBootstrap(t, c, "--generate", "--topics-to-move-json-file", clitest.WriteFile(t, `{"topics":[{"topic":"absent"}]}`), "--broker-list", "1,2")
	if code != 1 || out != "Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host this topic-partition.\n" {
		t.Fatalf("generate unknown topic: %d %q", code, out)
	}

	listOK, alterOK := clitest.Supports(t, c, 46), clitest.Supports(t, c, 45)
	assigned, err := c.ZK().GetReplicaAssignment("moves")
	if err != nil || len(assigned[0]) != 2 {
		t.Fatalf("assignment of moves: %v %v", assigned, err)
	}
	cur := assigned[0]
	var spare int32
	for id := int32(1); id <= 3; id++ {
		if !slices.Contains(cur, id) {
			spare = id
		}
	}
	target := []int32{spare, cur[0]}
	plan := clitest.WriteFile(t, `{"version":1,"partitions":[{"topic":"moves","partition":0,"replicas":[`+joinInts(target, ",")+`]}]}`)

	if !listOK {
		t.Fatalf("brokers do not serve ListPartitionReassignments (key 46)")
	}
	if !alterOK {
		t.Fatalf("brokers serve ListPartitionReassignments but not AlterPartitionReassignments")
	}

	out, errOut, code = runBootstrap(t, c, "--list")
	if code != 0 || out != "No partition reassignments found.\n" {
		t.Fatalf("list: %d %q %q", code, out, errOut)
	}
	out, errOut, code = runBootstrap(t, c, "--execute", "--reassignment-json-file", plan)
	if code != 0 || !strings.HasPrefix(out, "Current partition replica assignment\n\n") ||
		!strings.HasSuffix(out, "Save this to use as the --reassignment-json-file option during rollback\nSuccessfully started partition reassignment for moves-0\n") {
		t.Fatalf("execute: %d %q %q", code, out, errOut)
	}
	c.WaitFor(30*time.Second, "--verify to report moves-0 complete", func() bool {
		out, _, code := runBootstrap(t, c, "--verify", "--reassignment-json-file", plan, "--preserve-throttles")
		return code == 0 && out == "Status of partition reassignment:\nReassignment of partition moves-0 is complete.\n\n"
	})
	c.WaitFor(10*time.Second, "the new assignment in ZooKeeper", func() bool {
		a, err := c.ZK().GetReplicaAssignment("moves")
		return err == nil && slices.Equal(a[0], target)
	})
	out, errOut, code = runBootstrap(t, c, "--verify", "--reassignment-json-file", plan)
	if code != 0 || out != "Status of partition reassignment:\nReassignment of partition moves-0 is complete.\n\n"+
		"Clearing broker-level throttles on brokers 1,2,3\nClearing topic-level throttles on topic moves\n" {
		t.Fatalf("verify with throttle clearing: %d %q %q", code, out, errOut)
	}
	out, errOut, code = runBootstrap(t, c, "--cancel", "--reassignment-json-file", plan, "--preserve-throttles")
	if code != 0 || out != "None of the specified partition reassignments are active.\nNone of the specified partition moves are active.\n" {
		t.Fatalf("cancel: %d %q %q", code, out, errOut)
	}
	bad := clitest.WriteFile(t, `{"version":1,"partitions":[{"topic":"moves","partition":1,"replicas":[1,7]}]}`)
	out, _, code = runBootstrap(t, c, "--execute", "--reassignment-json-file", bad)
	if code != 1 || out != "Error: Unknown broker id 7\n" {
		t.Fatalf("unknown broker: %d %q", code, out)
	}
}

// TestZooKeeperModeWithController submits a reassignment the legacy way
// and lets the cluster's controller carry it out: the node disappears,
// the assignment becomes the target and --verify says so.
func TestZooKeeperModeWithController(t *testing.T) {
	c := startCluster(t, "legacy", 1, 2)
	a, err := c.ZK().GetReplicaAssignment("legacy")
	if err != nil {
		t.Fatal(err)
	}
	var spare int32
	for id := int32(1); id <= 3; id++ {
		if !slices.Contains(a[0], id) {
			spare = id
		}
	}
	target := []int32{a[0][1], spare}
	plan := clitest.WriteFile(t, `{"version":1,"partitions":[{"topic":"legacy","partition":0,"replicas":[`+joinInts(target, ",")+`]}]}`)
	out, errOut, code := runZk(t, c.ZKConnect(), "--execute", "--reassignment-json-file", plan)
	if code != 0 || !strings.HasSuffix(out, "Successfully started partition reassignment for legacy-0\n") {
		t.Fatalf("execute: %d %q %q", code, out, errOut)
	}
	c.WaitFor(30*time.Second, "the controller to complete the reassignment", func() bool {
		ok, _, err := c.ZK().Exists("/admin/reassign_partitions")
		if err != nil || ok {
			return false
		}
		a, err := c.ZK().GetReplicaAssignment("legacy")
		return err == nil && slices.Equal(a[0], target)
	})
	out, _, code = runZk(t, c.ZKConnect(), "--verify", "--reassignment-json-file", plan)
	if code != 0 || !strings.Contains(out, "Reassignment of partition legacy-0 is complete.\nClearing broker-level throttles on brokers 1,2,3\nClearing topic-level throttles on topic legacy\n") {
		t.Fatalf("verify: %d %q", code, out)
	}
}
