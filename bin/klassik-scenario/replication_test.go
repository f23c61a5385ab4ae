package main

import "testing"

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
		"/leader-epoch-checkpoint\n      0\n      2\n      0 0\n      2 1\n",
		`"leader_epoch":0,"isr":[1,2]}`)
}
