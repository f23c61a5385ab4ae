package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

func TestMain(m *testing.M) { os.Exit(zkserver.RunShared(m)) }

// racks are the racks of the three brokers registered for the ZooKeeper
// mode tests, as a running cluster would have them.
var racks = []string{"a", "b", "c"}

func runTool(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var out, errOut strings.Builder
	code := run(args, &out, &errOut)
	if errOut.Len() > 0 {
		t.Logf("stderr: %s", errOut.String())
	}
	return out.String(), code
}

func TestZooKeeperMode(t *testing.T) {
	connect, c := clitest.ZooKeeper(t, racks...)
	zk := func(args ...string) (string, int) {
		return runTool(t, append([]string{"--zookeeper", connect}, args...)...)
	}

	out, code := zk("--create", "--topic", "orders", "--partitions", "6", "--replication-factor", "3", "--config", "retention.ms=60000")
	if code != 0 || out != "Created topic orders.\n" {
		t.Fatalf("create: %d %q", code, out)
	}
	// The znodes are Kafka's: config first, then the assignment with a topic id.
	data, _, err := c.Get(zkpaths.TopicPath("orders"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := zkpaths.DecodeTopicAssignment(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Partitions) != 6 || a.TopicID == "" || a.Version != 3 {
		t.Fatalf("assignment %+v", a)
	}
	for p, r := range a.Partitions {
		if len(r) != 3 {
			t.Errorf("partition %d has replicas %v", p, r)
		}
	}
	cfgData, _, err := c.Get("/config/topics/orders")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Version int               `json:"version"`
		Config  map[string]string `json:"config"`
	}
	if err := json.Unmarshal(cfgData, &cfg); err != nil || cfg.Version != 1 || cfg.Config["retention.ms"] != "60000" {
		t.Fatalf("/config/topics/orders = %s (%v)", cfgData, err)
	}

	out, code = zk("--create", "--topic", "orders", "--partitions", "1", "--replication-factor", "1")
	if code != 1 || out != "Error while executing topic command : Topic 'orders' already exists.\n" {
		t.Errorf("duplicate create: %d %q", code, out)
	}
	if out, code = zk("--create", "--topic", "orders", "--partitions", "1", "--replication-factor", "1", "--if-not-exists"); code != 0 || out != "" {
		t.Errorf("--if-not-exists: %d %q", code, out)
	}
	out, code = zk("--create", "--topic", "big", "--partitions", "1", "--replication-factor", "4")
	if code != 1 || !strings.Contains(out, "Replication factor") || !strings.Contains(out, "larger than available brokers: 3") {
		t.Errorf("rf too large: %d %q", code, out)
	}
	if out, code = zk("--create", "--topic", "manual", "--replica-assignment", "3:1,1:2"); code != 0 {
		t.Errorf("manual create: %d %q", code, out)
	}
	if out, code = zk("--create", "--topic", "my.topic", "--partitions", "1", "--replication-factor", "1"); code != 0 || !strings.HasPrefix(out, "WARNING: Due to limitations in metric names") {
		t.Errorf("collision warning: %d %q", code, out)
	}
	out, code = zk("--create", "--topic", "my_topic", "--partitions", "1", "--replication-factor", "1")
	if code != 1 || !strings.Contains(out, "Topic 'my_topic' collides with existing topics: my.topic") {
		t.Errorf("collision: %d %q", code, out)
	}
	if out, code = zk("--create", "--topic", "bad/name", "--partitions", "1", "--replication-factor", "1"); code != 1 || !strings.Contains(out, "illegal") {
		t.Errorf("bad name: %d %q", code, out)
	}

	// Describe before any leader exists, then with partition states.
	out, code = zk("--describe", "--topic", "manual")
	want := "Topic: manual\tTopicId: [A-Za-z0-9_-]{22}\tPartitionCount: 2\tReplicationFactor: 2\tConfigs: \n" +
		"\tTopic: manual\tPartition: 0\tLeader: none\tReplicas: 3,1\tIsr: \n" +
		"\tTopic: manual\tPartition: 1\tLeader: none\tReplicas: 1,2\tIsr: \n"
	if code != 0 || !regexp.MustCompile("^"+want+"$").MatchString(out) {
		t.Errorf("describe manual: %d\n%q", code, out)
	}
	for p, st := range map[int32]zkpaths.LeaderAndIsr{0: {Leader: 3, LeaderEpoch: 0, ISR: []int32{3}, ControllerEpoch: 1}, 1: {Leader: 1, ISR: []int32{1, 2}, ControllerEpoch: 1}} {
		if _, err := c.CreateRecursive(zkpaths.PartitionStatePath("manual", p), st.Encode(), zkclient.Persistent); err != nil {
			t.Fatal(err)
		}
	}
	out, _ = zk("--describe", "--topic", "manual")
	if !strings.Contains(out, "\tTopic: manual\tPartition: 0\tLeader: 3\tReplicas: 3,1\tIsr: 3\n\tTopic: manual\tPartition: 1\tLeader: 1\tReplicas: 1,2\tIsr: 1,2\n") {
		t.Errorf("describe with states:\n%s", out)
	}
	if out, _ = zk("--describe", "--topic", "manual", "--under-replicated-partitions"); out != "\tTopic: manual\tPartition: 0\tLeader: 3\tReplicas: 3,1\tIsr: 3\n" {
		t.Errorf("under-replicated: %q", out)
	}
	if out, _ = zk("--describe", "--topics-with-overrides"); !strings.HasPrefix(out, "Topic: orders\t") || !strings.Contains(out, "Configs: retention.ms=60000\n") || strings.Count(out, "\n") != 1 {
		t.Errorf("topics-with-overrides: %q", out)
	}
	if out, code = zk("--describe", "--topic", "nope"); code != 1 || out != "Error while executing topic command : Topic 'nope' does not exist as expected\n" {
		t.Errorf("describe missing: %d %q", code, out)
	}

	// Alter: partitions and configs.
	out, code = zk("--alter", "--topic", "orders", "--partitions", "8")
	if code != 0 || !strings.HasSuffix(out, "Adding partitions succeeded!\n") {
		t.Errorf("alter partitions: %d %q", code, out)
	}
	a2, _, err := c.GetTopicAssignment("orders")
	if err != nil || len(a2.Partitions) != 8 || a2.TopicID != a.TopicID || len(a2.Partitions[7]) != 3 {
		t.Errorf("after alter: %+v %v", a2, err)
	}
	if out, code = zk("--alter", "--topic", "orders", "--partitions", "2"); code != 1 || !strings.Contains(out, "can only be increased") {
		t.Errorf("decrease: %d %q", code, out)
	}
	out, code = zk("--alter", "--topic", "orders", "--config", "segment.ms=1000", "--delete-config", "retention.ms")
	if code != 0 || !strings.Contains(out, "Updated config for topic orders.") {
		t.Errorf("alter config: %d %q", code, out)
	}
	if cfgs, err := c.GetEntityConfigs(zkpaths.ConfigTypeTopic, "orders"); err != nil || len(cfgs) != 1 || cfgs["segment.ms"] != "1000" {
		t.Errorf("configs after alter: %v %v", cfgs, err)
	}

	// Delete marks the topic; the list shows it as Kafka does.
	out, code = zk("--delete", "--topic", "manual")
	if code != 0 || out != "Topic manual is marked for deletion.\nNote: This will have no impact if delete.topic.enable is not set to true.\n" {
		t.Errorf("delete: %d %q", code, out)
	}
	if ok, _, err := c.Exists(zkpaths.DeleteTopicPath("manual")); err != nil || !ok {
		t.Errorf("/admin/delete_topics/manual missing: %v", err)
	}
	if out, _ = zk("--delete", "--topic", "manual"); out != "Topic manual is already marked for deletion.\n" {
		t.Errorf("second delete: %q", out)
	}
	if out, code = zk("--delete", "--topic", "nope", "--if-exists"); code != 0 || out != "" {
		t.Errorf("delete --if-exists: %d %q", code, out)
	}
	if out, _ = zk("--list"); out != "manual - marked for deletion\nmy.topic\norders\n" {
		t.Errorf("list: %q", out)
	}
	if out, _ = zk("--list", "--topic", "my.*"); out != "my.topic\n" {
		t.Errorf("list regex: %q", out)
	}
}

func TestZooKeeperModeInternalTopic(t *testing.T) {
	connect, _ := clitest.ZooKeeper(t, racks...)
	zk := func(args ...string) (string, int) {
		return runTool(t, append([]string{"--zookeeper", connect}, args...)...)
	}
	if out, code := zk("--create", "--topic", "__consumer_offsets", "--partitions", "1", "--replication-factor", "1"); code != 0 {
		t.Fatalf("create: %d %q", code, out)
	}
	if out, code := zk("--delete", "--topic", "__consumer_offsets"); code != 1 || !strings.Contains(out, "is a kafka internal topic and is not allowed to be marked for deletion") {
		t.Errorf("delete internal: %d %q", code, out)
	}
	if out, code := zk("--alter", "--topic", "__consumer_offsets", "--partitions", "3"); code != 1 || !strings.Contains(out, "cannot be changed") {
		t.Errorf("alter internal: %d %q", code, out)
	}
	if out, _ := zk("--list", "--exclude-internal"); out != "" {
		t.Errorf("list --exclude-internal: %q", out)
	}
}
