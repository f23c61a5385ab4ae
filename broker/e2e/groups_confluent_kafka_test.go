package e2e_test

import "testing"

// The consumer-group suite with confluent-kafka (librdkafka) members
// (testdata/clients/confluent_kafka_group.py; the shared driver is
// groups_driver_test.go).

func TestGroupsConfluentKafka(t *testing.T) {
	requirePython(t, "confluent_kafka", "python3-confluent-kafka")
	runGroupSuite(t, groupSuite{client: scriptClient("confluent-kafka", "/usr/bin/python3", "confluent_kafka_group.py"),
		membershipAssignor: "cooperative-sticky", failoverAssignor: "cooperative-sticky"})
}
