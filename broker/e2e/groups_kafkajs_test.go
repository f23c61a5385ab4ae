package e2e_test

import (
	"path/filepath"
	"testing"
)

// The consumer-group suite with kafkajs members
// (testdata/clients/kafkajs_group.js; the shared driver is
// groups_driver_test.go).

func TestGroupsKafkaJS(t *testing.T) {
	node := requireTool(t, "node", "apt-get install -y nodejs")
	if err := fileExists(filepath.Join(clientsDir(t), "node_modules", "kafkajs", "package.json")); err != nil {
		t.Fatalf("kafkajs is not installed in testdata/clients: run (cd testdata/clients && npm ci) or bin/klassik-install-deps.sh: %v", err)
	}
	client := scriptClient("kafkajs", node, "kafkajs_group.js")
	client.zombieAfterFailover = true
	runGroupSuite(t, groupSuite{client: client,
		membershipAssignor: "roundrobin", failoverAssignor: "roundrobin"})
}
