package faulttest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/faulttest"
	"github.com/klassik/klassik/zkpaths"
)

// Reassignment under load through kafka-reassign-partitions.

// TestReassignUnderLoad moves a topic from brokers {1,2,3} to {2,3,4} with
// kafka-reassign-partitions --execute (ZooKeeper mode:
// /admin/reassign_partitions) while the producer runs: the reassignment
// completes, broker 4 holds byte-identical copies, and no acknowledged
// write is lost.
func TestReassignUnderLoad(t *testing.T) {
	from := map[int32][]int32{0: {1, 2, 3}, 1: {2, 3, 1}, 2: {3, 1, 2}}
	to := map[int32][]int32{0: {2, 3, 4}, 1: {3, 4, 2}, 2: {4, 2, 3}}
	s := newScenario(t, faulttest.Options{Brokers: 4}, "reassign", from)
	s.progress(600, 20*time.Second, "some data before the move")

	type part struct {
		Topic     string   `json:"topic"`
		Partition int32    `json:"partition"`
		Replicas  []int32  `json:"replicas"`
		LogDirs   []string `json:"log_dirs"`
	}
	plan := struct {
		Version    int    `json:"version"`
		Partitions []part `json:"partitions"`
	}{Version: 1}
	for p := int32(0); p < 3; p++ {
		plan.Partitions = append(plan.Partitions, part{Topic: s.topic, Partition: p, Replicas: to[p], LogDirs: []string{"any", "any", "any"}})
	}
	data, _ := json.Marshal(plan)
	file := filepath.Join(t.TempDir(), "reassign.json")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := faulttest.RunTool(30*time.Second, "kafka-reassign-partitions", "--zookeeper", s.c.ZKConnect(), "--reassignment-json-file", file, "--execute")
	if err != nil {
		t.Fatalf("kafka-reassign-partitions --execute: %v", err)
	}
	t.Logf("kafka-reassign-partitions --execute:\n%s", out)
	s.c.WaitFor(60*time.Second, "the reassignment to complete", func() bool {
		if ok, _, err := s.c.ZK().Exists(zkpaths.ReassignPartitionsPath); err != nil || ok {
			return false
		}
		a := s.c.Assignment(s.topic)
		for p, rs := range to {
			st, ok := s.c.PartitionState(s.topic, p)
			if !slices.Equal(a[p], rs) || !ok || !slices.Contains(rs, st.Leader) {
				return false
			}
		}
		return true
	})
	s.c.WaitFullISR(s.topic, 3, 30*time.Second)
	out, err = faulttest.RunTool(30*time.Second, "kafka-reassign-partitions", "--zookeeper", s.c.ZKConnect(), "--reassignment-json-file", file, "--verify")
	if err != nil {
		t.Fatalf("kafka-reassign-partitions --verify: %v", err)
	}
	t.Logf("kafka-reassign-partitions --verify:\n%s", out)
	s.progress(150, 20*time.Second, "after the reassignment")
	s.finish()
}
