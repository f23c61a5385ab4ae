package main

import (
	"os"
	"strings"
	"testing"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

func TestMain(m *testing.M) { os.Exit(clitest.Main(m)) }

// zkCluster is a chroot on the shared real ZooKeeper with brokers 1-4
// registered and topic orders (3 partitions on 1,2), without a controller:
// what the tool writes stays for the test to read.
func zkCluster(t *testing.T) (string, *zkclient.Client) {
	t.Helper()
	connect, c := clitest.ZooKeeper(t, "", "", "", "")
	err := c.CreateTopic("orders", zkpaths.TopicAssignment{Version: 2, Partitions: map[int32][]int32{0: {1, 2}, 1: {2, 1}, 2: {1, 2}}}, map[string]string{"retention.ms": "1000"})
	if err != nil {
		t.Fatal(err)
	}
	return connect, c
}

func runZk(t *testing.T, connect string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut strings.Builder
	code := (&tool{out: &out, fixedStartIndex: 0}).run(append([]string{"--zookeeper", connect}, args...), &errOut)
	return out.String(), errOut.String(), code
}

const zkWarning = "Warning: --zookeeper is deprecated, and will be removed in a future version of Kafka.\n"

// TestZooKeeperExecuteAndVerify drives Kafka 2.x's legacy flow on a real
// ZooKeeper: --execute writes /admin/reassign_partitions (exactly the
// fields the controller accepts) and the throttle configs, refuses while
// the node exists, and --verify reports progress until the node is gone,
// then clears the throttles.
func TestZooKeeperExecuteAndVerify(t *testing.T) {
	connect, c := zkCluster(t)
	plan := clitest.WriteFile(t, `{"version":1,"partitions":[{"topic":"orders","partition":1,"replicas":[3,2],"log_dirs":["any","any"]},{"topic":"orders","partition":0,"replicas":[1,3]}]}`)

	out, errOut, code := runZk(t, connect, "--execute", "--reassignment-json-file", plan, "--throttle", "50000000")
	want := zkWarning +
		"Current partition replica assignment\n\n" +
		`{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,2],"log_dirs":["any","any"]},{"topic":"orders","partition":1,"replicas":[2,1],"log_dirs":["any","any"]}]}` + "\n\n" +
		"Save this to use as the --reassignment-json-file option during rollback\n" +
		youMustRunVerifyPeriodically + "\n" +
		"The inter-broker throttle limit was set to 50000000 B/s\n" +
		"Successfully started partition reassignments for orders-0,orders-1\n"
	if code != 0 || out != want || errOut != "" {
		t.Fatalf("execute: %d\n%s\nwant\n%s\nstderr %q", code, out, want, errOut)
	}
	data, _, err := c.Get(zkpaths.ReassignPartitionsPath)
	if err != nil || string(data) != `{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,3]},{"topic":"orders","partition":1,"replicas":[3,2]}]}` {
		t.Fatalf("znode %q %v", data, err)
	}
	if _, err := zkpaths.DecodeReassignment(data); err != nil {
		t.Fatalf("the controller's strict reader refuses the node: %v", err)
	}
	topicCfg, err := c.GetEntityConfigs(zkpaths.ConfigTypeTopic, "orders")
	if err != nil || topicCfg["leader.replication.throttled.replicas"] != "0:1,0:2,1:1,1:2" ||
		topicCfg["follower.replication.throttled.replicas"] != "0:3,1:3" || topicCfg["retention.ms"] != "1000" {
		t.Fatalf("topic throttles %v %v", topicCfg, err)
	}
	for _, id := range []string{"1", "2", "3"} {
		bc, err := c.GetEntityConfigs(zkpaths.ConfigTypeBroker, id)
		if err != nil || bc["leader.replication.throttled.rate"] != "50000000" || bc["follower.replication.throttled.rate"] != "50000000" {
			t.Fatalf("broker %s throttles %v %v", id, bc, err)
		}
	}
	if bc, _ := c.GetEntityConfigs(zkpaths.ConfigTypeBroker, "4"); len(bc) != 0 {
		t.Fatalf("broker 4 is not part of the move: %v", bc)
	}

	// A second request while the node exists.
	out, _, code = runZk(t, connect, "--execute", "--reassignment-json-file", plan)
	if code != 1 || out != zkWarning+cannotExecuteBecauseOfExisting+"\n" {
		t.Fatalf("second execute: %d %q", code, out)
	}

	verifyWarning := zkWarning + "Warning: because you are using the deprecated --zookeeper option, the results may be incomplete.  Use --bootstrap-server instead for more accurate results.\n"
	out, _, code = runZk(t, connect, "--verify", "--reassignment-json-file", plan)
	if code != 0 || out != verifyWarning+"Status of partition reassignment:\n"+
		"Reassignment of partition orders-0 is still in progress.\n"+
		"Reassignment of partition orders-1 is still in progress.\n" {
		t.Fatalf("verify in progress: %d %q", code, out)
	}

	// What the controller does when the moves complete: the assignment
	// becomes the target and the request node goes away.
	if _, err := c.UpdateTopicAssignment("orders", zkpaths.TopicAssignment{Version: 2, Partitions: map[int32][]int32{0: {1, 3}, 1: {3, 2}, 2: {1, 2}}}, -1); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(zkpaths.ReassignPartitionsPath, -1); err != nil {
		t.Fatal(err)
	}
	out, _, code = runZk(t, connect, "--verify", "--reassignment-json-file", plan)
	if code != 0 || out != verifyWarning+"Status of partition reassignment:\n"+
		"Reassignment of partition orders-0 is complete.\n"+
		"Reassignment of partition orders-1 is complete.\n"+
		"Clearing broker-level throttles on brokers 1,2,3,4\n"+
		"Clearing topic-level throttles on topic orders\n" {
		t.Fatalf("verify complete: %d %q", code, out)
	}
	topicCfg, _ = c.GetEntityConfigs(zkpaths.ConfigTypeTopic, "orders")
	if len(topicCfg) != 1 || topicCfg["retention.ms"] != "1000" {
		t.Fatalf("topic throttles left: %v", topicCfg)
	}
	for _, id := range []string{"1", "2", "3"} {
		if bc, _ := c.GetEntityConfigs(zkpaths.ConfigTypeBroker, id); len(bc) != 0 {
			t.Fatalf("broker %s throttles left: %v", id, bc)
		}
	}
	kids, err := c.Children(zkpaths.ConfigChangesPath)
	if err != nil || len(kids) == 0 {
		t.Fatalf("config changes must be notified: %v %v", kids, err)
	}

	// A request node Kafka cannot parse (an extra field) blocks --execute
	// but counts as nothing in progress for --verify.
	if _, err := c.Create(zkpaths.ReassignPartitionsPath, []byte(`{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,3],"log_dirs":["any","any"]}]}`), zkclient.Persistent); err != nil {
		t.Fatal(err)
	}
	if out, _, code := runZk(t, connect, "--execute", "--reassignment-json-file", plan); code != 1 || out != zkWarning+cannotExecuteBecauseOfExisting+"\n" {
		t.Fatalf("execute over an invalid node: %d %q", code, out)
	}
	if out, _, code := runZk(t, connect, "--verify", "--reassignment-json-file", plan, "--preserve-throttles"); code != 0 || !strings.HasSuffix(out, "Reassignment of partition orders-1 is complete.\n") {
		t.Fatalf("verify over an invalid node: %d %q", code, out)
	}
	if err := c.Delete(zkpaths.ReassignPartitionsPath, -1); err != nil {
		t.Fatal(err)
	}

	// A partition whose replica set differs from the file's target.
	other := clitest.WriteFile(t, `{"partitions":[{"topic":"orders","partition":2,"replicas":[4,1]}]}`)
	out, _, code = runZk(t, connect, "--verify", "--reassignment-json-file", other, "--preserve-throttles")
	if code != 0 || !strings.HasSuffix(out, "There is no active reassignment of partition orders-2, but replica set is 1,2 rather than 4,1.\n") {
		t.Fatalf("verify mismatch: %d %q", code, out)
	}
}

func TestZooKeeperExecuteErrors(t *testing.T) {
	connect, _ := zkCluster(t)
	cases := []struct{ plan, want string }{
		{`{"partitions":[{"topic":"orders","partition":7,"replicas":[1]},{"topic":"nope","partition":0,"replicas":[1]}]}`, "Error: The proposed assignment contains non-existent partitions: List(nope-0, orders-7)\n"},
		{`{"partitions":[{"topic":"orders","partition":0,"replicas":[1,9,8]}]}`, "Error: The proposed assignment contains non-existent brokerIDs: 8,9\n"},
		{`{"partitions":[{"topic":"orders","partition":0,"replicas":[1],"log_dirs":["/data"]}]}`, "Error: bootstrap-server needs to be provided when replica reassignments are present.\n"},
		{`{"partitions":[]}`, "Error: Partition reassignment list cannot be empty\n"},
	}
	for _, c := range cases {
		out, _, code := runZk(t, connect, "--execute", "--reassignment-json-file", clitest.WriteFile(t, c.plan))
		if code != 1 || out != zkWarning+c.want {
			t.Errorf("%s: %d %q, want %q", c.plan, code, out, c.want)
		}
	}
	out, _, code := runZk(t, connect, "--execute", "--reassignment-json-file", "/nonexistent/plan.json")
	if code != 1 || out != zkWarning+"Error: /nonexistent/plan.json\n" {
		t.Errorf("missing file: %d %q", code, out)
	}
}

func TestZooKeeperGenerate(t *testing.T) {
	connect, _ := zkCluster(t)
	topics := clitest.WriteFile(t, `{"topics":[{"topic":"orders"}],"version":1}`)
	out, errOut, code := runZk(t, connect, "--generate", "--topics-to-move-json-file", topics, "--broker-list", "2,3,4")
	want := zkWarning + "Current partition replica assignment\n" +
		`{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,2],"log_dirs":["any","any"]},{"topic":"orders","partition":1,"replicas":[2,1],"log_dirs":["any","any"]},{"topic":"orders","partition":2,"replicas":[1,2],"log_dirs":["any","any"]}]}` + "\n\n" +
		"Proposed partition reassignment configuration\n" +
		`{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[2,3],"log_dirs":["any","any"]},{"topic":"orders","partition":1,"replicas":[3,4],"log_dirs":["any","any"]},{"topic":"orders","partition":2,"replicas":[4,2],"log_dirs":["any","any"]}]}` + "\n"
	if code != 0 || out != want {
		t.Fatalf("generate: %d\n%s\nwant\n%s\n%s", code, out, want, errOut)
	}
}
