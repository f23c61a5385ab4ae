package main

import (
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// zkWithTopics is a chroot on the shared real ZooKeeper holding the
// assignment znodes of two topics (no controller runs, so an election
// request stays in place).
func zkWithTopics(t *testing.T) (string, *zkclient.Client) {
	t.Helper()
	connect, c := clitest.ZooKeeper(t)
	for topic, parts := range map[string]map[int32][]int32{
		"orders":   {0: {1, 2}, 1: {2, 3}},
		"payments": {0: {3, 1}},
	} {
		if err := c.CreateTopic(topic, zkpaths.TopicAssignment{Version: 2, Partitions: parts}, nil); err != nil {
			t.Fatalf("create %s: %v", topic, err)
		}
	}
	return connect, c
}

// TestZooKeeperMode writes /admin/preferred_replica_election on a real
// ZooKeeper and checks the znode's exact JSON and the tool's messages.
func TestZooKeeperMode(t *testing.T) {
	connect, c := zkWithTopics(t)
	tool := func(args ...string) (string, string, int) {
		var out, errOut strings.Builder
		code := run(append([]string{"--zookeeper", connect}, args...), &out, &errOut, 10*time.Second)
		return out.String(), errOut.String(), code
	}
	header := deprecation + "\n" +
		"Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.\n" +
		"Use --bootstrap-server instead to specify a broker to connect to.\n"

	file := clitest.WriteFile(t, `{"partitions":[{"topic":"orders","partition":1},{"topic":"nope","partition":0},{"topic":"orders","partition":7}]}`)
	out, errOut, code := tool("--path-to-json-file", file)
	want := header +
		"Created preferred replica election path with orders-1\n" +
		"Successfully started preferred replica election for partitions Set(orders-1)\n" +
		"Skipping preferred replica leader election for partition nope-0 since it doesn't exist.\n" +
		"Skipping preferred replica leader election for partition orders-7 since it doesn't exist.\n"
	if code != 0 || out != want || errOut != "" {
		t.Fatalf("with file: %d\n%s\nwant\n%s\nstderr %q", code, out, want, errOut)
	}
	data, _, err := c.Get(zkpaths.PreferredReplicaElectionPath)
	if err != nil || string(data) != `{"version":1,"partitions":[{"topic":"orders","partition":1}]}` {
		t.Fatalf("znode %q %v", data, err)
	}

	// A second request while the first is pending is refused.
	out, errOut, code = tool()
	if code != 1 || out != header || errOut != "Exception in thread \"main\" kafka.common.AdminCommandFailedException: Admin command failed\n"+
		"Caused by: kafka.admin.AdminOperationException: Preferred replica leader election currently in progress for orders-1. Aborting operation\n" {
		t.Fatalf("in progress: %d %q %q", code, out, errOut)
	}

	// Without a file every partition is requested.
	if err := c.Delete(zkpaths.PreferredReplicaElectionPath, -1); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = tool()
	if code != 0 || out != header+"Created preferred replica election path with orders-0,orders-1,payments-0\n"+
		"Successfully started preferred replica election for partitions Set(orders-0, orders-1, payments-0)\n" {
		t.Fatalf("all partitions: %d %q %q", code, out, errOut)
	}
	data, _, err = c.Get(zkpaths.PreferredReplicaElectionPath)
	if err != nil || string(data) != `{"version":1,"partitions":[{"topic":"orders","partition":0},{"topic":"orders","partition":1},{"topic":"payments","partition":0}]}` {
		t.Fatalf("znode %q %v", data, err)
	}
	if tps, err := zkpaths.DecodePreferredReplicaElection(data); err != nil || len(tps) != 3 {
		t.Fatalf("decode: %v %v", tps, err)
	}
}
