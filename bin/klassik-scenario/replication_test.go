package main

import (
	"strings"
	"testing"
)

// The replication scenarios as tests (replayScenario, scenario_test.go).

// TestHWTruncation is the process-level check of
// inter.broker.protocol.version=0.10.2: the returning replica keeps its
// record and the logs diverge; with leader epochs they are identical.
func TestHWTruncation(t *testing.T) {
	replayScenario(t, "hw-truncation", `IBP 0.10.2: offset 1 holds "m1" on broker 1 and "m2" on broker 2, both in the ISR; leader epochs: both hold 0:m0 1:m2`,
		"Diverged: A holds [0:m0 1:m1], B holds [0:m0 1:m2].",
		"Identical: [0:m0 1:m2] on both.",
		"| offset: 1 CreateTime: ",
		"payload: m1\n",
		"/leader-epoch-checkpoint\n      0\n      2\n      0 0\n      1 1\n",
		`"leader_epoch":0,"isr":[1,2]}`)
}

func TestUncleanElection(t *testing.T) {
	replayScenario(t, "unclean-election", "unclean election on: acknowledged b, c lost, offset 1 reused by d (0:a 1:d); off: offline until broker 1 returned, then 0:a 1:b 2:c intact",
		`"leader":-1,"version":1,"leader_epoch":2,"isr":[1]}`,
		`"leader":2,"version":1,"leader_recovery_state":1,`,
		"Partition: 0\tLeader: none\tReplicas: 1,2\tIsr: 1\n",
		"unclean-on's new leader holds [0:a]: the acknowledged \"b\" and \"c\" are gone.",
		"| offset: 1 CreateTime: ",
		"payload: d\n")
}

func TestAcks(t *testing.T) {
	out := replayScenario(t, "acks", "follower lost: acks=all 5/5 refused with NOT_ENOUGH_REPLICAS, acks=1 and acks=0 stored on one disk; leader lost: acks=1 ",
		"acks=all: 5 of 5 answered NOT_ENOUGH_REPLICAS; the leader's log grew by 0",
		"acks=1:   5 of 5 acknowledged by the leader alone.",
		"The leader's log ends at 10:",
		`"leader_epoch":1,"isr":[1]}`,
		"acks=all: not acknowledged (")
	if !strings.Contains(out, "acks=all never acknowledged)") {
		t.Errorf("the acks=all record of the lost leader was acknowledged")
	}
}
