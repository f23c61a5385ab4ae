package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
)

// TestBootstrapMode drives the --bootstrap-server commands against franz-go's
// in-process fake cluster (kfake, 127.0.0.1 only). It checks the requests
// the tool sends and the output it prints; broker behaviour itself is
// Klassik's integration tests' business.
func TestBootstrapMode(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	bs := strings.Join(c.ListenAddrs(), ",")
	kt := func(args ...string) (string, int) {
		return runTool(t, append([]string{"--bootstrap-server", bs}, args...)...)
	}

	if out, code := kt("--create", "--topic", "events", "--partitions", "3", "--replication-factor", "2", "--config", "retention.ms=1000"); code != 0 || out != "Created topic events.\n" {
		t.Fatalf("create: %d %q", code, out)
	}
	if out, code := kt("--create", "--topic", "events", "--partitions", "3", "--replication-factor", "2"); code != 1 || out != "Error while executing topic command : Topic 'events' already exists.\n" {
		t.Errorf("duplicate: %d %q", code, out)
	}
	if out, code := kt("--create", "--topic", "events", "--if-not-exists"); code != 0 || out != "" {
		t.Errorf("--if-not-exists: %d %q", code, out)
	}
	if out, code := kt("--create", "--topic", "defaults"); code != 0 || out != "Created topic defaults.\n" {
		t.Errorf("create with cluster defaults: %d %q", code, out)
	}
	if out, code := kt("--list"); code != 0 || out != "defaults\nevents\n" {
		t.Errorf("list: %d %q", code, out)
	}
	out, code := kt("--describe", "--topic", "events")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	header := regexp.MustCompile(`^Topic: events\tTopicId: [A-Za-z0-9_-]{22}\tPartitionCount: 3\tReplicationFactor: 2\tConfigs: (.*,)?retention.ms=1000(,.*)?$`)
	if code != 0 || len(lines) != 4 || !header.MatchString(lines[0]) {
		t.Fatalf("describe: %d\n%s", code, out)
	}
	part := regexp.MustCompile(`^\tTopic: events\tPartition: [0-2]\tLeader: [0-9]+\tReplicas: [0-9]+,[0-9]+\tIsr: [0-9]+,[0-9]+$`)
	for i, l := range lines[1:] {
		if !part.MatchString(l) || !strings.Contains(l, "Partition: "+string(rune('0'+i))) {
			t.Errorf("partition line %q", l)
		}
	}
	if out, code := kt("--alter", "--topic", "events", "--partitions", "5"); code != 0 || out != "" {
		t.Errorf("alter: %d %q", code, out)
	}
	if out, _ := kt("--describe", "--topic", "events"); !strings.Contains(out, "PartitionCount: 5") {
		t.Errorf("after alter: %q", out)
	}
	if out, code := kt("--describe", "--topic", "nope"); code != 1 || out != "Error while executing topic command : Topic 'nope' does not exist as expected\n" {
		t.Errorf("describe missing: %d %q", code, out)
	}
	if out, code := kt("--delete", "--topic", "defaults"); code != 0 || out != "" {
		t.Errorf("delete: %d %q", code, out)
	}
	if out, _ := kt("--list"); out != "events\n" {
		t.Errorf("list after delete: %q", out)
	}
	if out, code := kt("--delete", "--topic", "defaults"); code != 1 || !strings.Contains(out, "does not exist as expected") {
		t.Errorf("delete missing: %d %q", code, out)
	}
}
