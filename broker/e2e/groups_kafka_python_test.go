package e2e_test

import "testing"

// The consumer-group suite with kafka-python members
// (testdata/clients/kafka_python_group.py; the shared driver is
// groups_driver_test.go).

func TestGroupsKafkaPython(t *testing.T) {
	requirePython(t, "kafka", "python3-kafka")
	runGroupSuite(t, groupSuite{client: scriptClient("kafka-python", "/usr/bin/python3", "kafka_python_group.py"),
		membershipAssignor: "range", failoverAssignor: "roundrobin"})
}
