// The leader-choice cases in TestPartitionLeaderElectionAlgorithms are ported
// from Apache Kafka's
// core/src/test/scala/unit/kafka/controller/PartitionLeaderElectionAlgorithmsTest.scala
// (Apache License 2.0); inputs and expected leaders are Kafka's, the Go test
// code is ours.

package controller

import (
	"reflect"
	"slices"
	"testing"

	"github.com/klassik/klassik/broker/common"
)

func set(ids ...int32) func(int32) bool {
	return func(r int32) bool { return slices.Contains(ids, r) }
}

func TestPartitionLeaderElectionAlgorithms(t *testing.T) {
	type tc struct {
		name       string
		elect      func() (int32, bool)
		wantLeader int32
		wantOK     bool
		wantDirty  bool
	}
	var dirty bool
	offline := func(a, isr []int32, live func(int32) bool, unclean bool) func() (int32, bool) {
		return func() (int32, bool) {
			l, ok, u := offlinePartitionLeader(a, isr, live, unclean)
			dirty = u
			return l, ok
		}
	}
	cases := []tc{
		{"OfflinePartitionLeaderElection", offline([]int32{2, 4}, []int32{2, 4}, set(4), false), 4, true, false},
		{"OfflineLastIsrOfflineUncleanDisabled", offline([]int32{2, 4}, []int32{2}, set(4), false), NoLeader, false, false},
		{"OfflineLastIsrOfflineUncleanEnabled", offline([]int32{2, 4}, []int32{2}, set(4), true), 4, true, true},
		{"ReassignPartitionLeaderElection", func() (int32, bool) { return reassignPartitionLeader([]int32{2, 4}, []int32{2, 4}, set(4)) }, 4, true, false},
		{"ReassignWithNoLiveIsr", func() (int32, bool) { return reassignPartitionLeader([]int32{2, 4}, []int32{2}, set()) }, NoLeader, false, false},
		{"ReassignWithEmptyIsr", func() (int32, bool) { return reassignPartitionLeader([]int32{2, 4}, nil, set(2)) }, NoLeader, false, false},
		{"Preferred", func() (int32, bool) { return preferredReplicaPartitionLeader([]int32{2, 4}, []int32{2, 4}, set(2, 4)) }, 2, true, false},
		{"PreferredInIsrNotLive", func() (int32, bool) { return preferredReplicaPartitionLeader([]int32{2, 4}, []int32{2}, set()) }, NoLeader, false, false},
		{"PreferredNotInIsrLive", func() (int32, bool) { return preferredReplicaPartitionLeader([]int32{2, 4}, []int32{4}, set(2, 4)) }, NoLeader, false, false},
		{"PreferredNotInIsrNotLive", func() (int32, bool) { return preferredReplicaPartitionLeader([]int32{2, 4}, nil, set()) }, NoLeader, false, false},
		{"ControlledShutdown", func() (int32, bool) {
			return controlledShutdownPartitionLeader([]int32{2, 4}, []int32{2, 4}, set(2, 4), set(2))
		}, 4, true, false},
		{"ControlledShutdownLastIsrShuttingDown", func() (int32, bool) {
			return controlledShutdownPartitionLeader([]int32{2, 4}, []int32{2}, set(2, 4), set(2))
		}, NoLeader, false, false},
		{"ControlledShutdownAllIsrSimultaneouslyShutdown", func() (int32, bool) {
			return controlledShutdownPartitionLeader([]int32{2, 4}, []int32{2, 4}, set(2, 4), set(2, 4))
		}, NoLeader, false, false},
	}
	for _, c := range cases {
		dirty = false
		l, ok := c.elect()
		if l != c.wantLeader || ok != c.wantOK || dirty != c.wantDirty {
			t.Errorf("%s: got leader %d ok %v unclean %v, want %d %v %v", c.name, l, ok, dirty, c.wantLeader, c.wantOK, c.wantDirty)
		}
	}
}

// Every strategy bumps the leader epoch by exactly one
// and keeps the partition epoch as read.
func TestElectionResults(t *testing.T) {
	tp := common.TopicPartition{Topic: "t", Partition: 0}
	cur := LeaderAndIsr{Leader: 1, LeaderEpoch: 4, ISR: []int32{1, 2, 3}, PartitionEpoch: 9}

	r := electOffline(tp, cur, []int32{1, 2, 3}, set(2, 3), false)
	if !r.OK || r.New.Leader != 2 || !reflect.DeepEqual(r.New.ISR, []int32{2, 3}) || r.New.LeaderEpoch != 5 || r.New.PartitionEpoch != 9 {
		t.Fatalf("offline: %+v", r)
	}
	if !reflect.DeepEqual(r.Recipients, []int32{2, 3}) {
		t.Fatalf("offline recipients: %v", r.Recipients)
	}

	// Unclean: leader outside the ISR, ISR = [leader], RECOVERING.
	r = electOffline(tp, LeaderAndIsr{Leader: -1, LeaderEpoch: 2, ISR: []int32{1}}, []int32{1, 2}, set(2), true)
	if !r.OK || !r.Unclean || r.New.Leader != 2 || !reflect.DeepEqual(r.New.ISR, []int32{2}) || r.New.LeaderRecoveryState != RecoveryRecovering {
		t.Fatalf("unclean: %+v", r)
	}
	r = electOffline(tp, LeaderAndIsr{Leader: -1, LeaderEpoch: 2, ISR: []int32{1}}, []int32{1, 2}, set(2), false)
	if r.OK {
		t.Fatalf("clean election without live ISR must fail: %+v", r)
	}

	r = electPreferred(tp, LeaderAndIsr{Leader: 2, LeaderEpoch: 1, ISR: []int32{2, 1}}, []int32{1, 2}, set(1, 2))
	if !r.OK || r.New.Leader != 1 || !reflect.DeepEqual(r.New.ISR, []int32{2, 1}) || !reflect.DeepEqual(r.Recipients, []int32{1, 2}) {
		t.Fatalf("preferred: %+v", r)
	}

	r = electReassign(tp, LeaderAndIsr{Leader: 1, LeaderEpoch: 1, ISR: []int32{1, 2, 4}},
		ReplicaAssignment{Replicas: []int32{4, 2, 1}, AddingReplicas: []int32{4}, RemovingReplicas: []int32{1}}, set(1, 2, 4))
	if !r.OK || r.New.Leader != 4 || !reflect.DeepEqual(r.Recipients, []int32{4, 2}) {
		t.Fatalf("reassign: %+v", r)
	}

	r = electControlledShutdown(tp, LeaderAndIsr{Leader: 1, LeaderEpoch: 1, ISR: []int32{1, 2}}, []int32{1, 2, 3}, set(1, 2, 3), set(1))
	if !r.OK || r.New.Leader != 2 || !reflect.DeepEqual(r.New.ISR, []int32{2}) || !reflect.DeepEqual(r.Recipients, []int32{1, 2, 3}) {
		t.Fatalf("controlled shutdown: %+v", r)
	}
}
