package controller

// Leader election strategies (Kafka's Election.scala and
// PartitionLeaderElectionAlgorithms). Pure functions: they
// get the assignment, the ISR read from ZooKeeper and liveness predicates and
// return the new leadership; the caller writes it.

import (
	"slices"

	"github.com/klassik/klassik/broker/common"
)

// ElectionStrategy names the four strategies: offline (a partition without
// a live leader), reassignment, preferred replica and controlled shutdown.
type ElectionStrategy int

const (
	// OfflineElection picks the first live ISR member (unclean when allowed).
	OfflineElection ElectionStrategy = iota
	// ReassignmentElection picks the first live ISR member of the target replicas.
	ReassignmentElection
	// PreferredElection picks the first assigned replica if it is live and in ISR.
	PreferredElection
	// ControlledShutdownElection avoids brokers that are shutting down.
	ControlledShutdownElection
)

func (s ElectionStrategy) String() string {
	switch s {
	case OfflineElection:
		return "OfflinePartitionLeaderElectionStrategy"
	case ReassignmentElection:
		return "ReassignPartitionLeaderElectionStrategy"
	case PreferredElection:
		return "PreferredReplicaPartitionLeaderElectionStrategy"
	case ControlledShutdownElection:
		return "ControlledShutdownPartitionLeaderElectionStrategy"
	}
	return "UnknownElectionStrategy"
}

// offlinePartitionLeader is the leader-choice rule for an offline partition:
// the first
// assigned replica that is live and in the ISR; failing that, when unclean
// election is enabled, the first live assigned replica. unclean reports that
// the second rule was used.
func offlinePartitionLeader(assignment, isr []int32, live func(int32) bool, uncleanEnabled bool) (leader int32, ok, unclean bool) {
	for _, r := range assignment {
		if live(r) && slices.Contains(isr, r) {
			return r, true, false
		}
	}
	if uncleanEnabled {
		for _, r := range assignment {
			if live(r) {
				return r, true, true
			}
		}
	}
	return NoLeader, false, false
}

// reassignPartitionLeader: first target replica that is live and in the ISR.
func reassignPartitionLeader(target, isr []int32, live func(int32) bool) (int32, bool) {
	for _, r := range target {
		if live(r) && slices.Contains(isr, r) {
			return r, true
		}
	}
	return NoLeader, false
}

// preferredReplicaPartitionLeader: the first assigned replica, only if live and in ISR.
func preferredReplicaPartitionLeader(assignment, isr []int32, live func(int32) bool) (int32, bool) {
	if len(assignment) == 0 {
		return NoLeader, false
	}
	r := assignment[0]
	if live(r) && slices.Contains(isr, r) {
		return r, true
	}
	return NoLeader, false
}

// controlledShutdownPartitionLeader: first assigned replica that is registered
// (live or shutting down), in the ISR and not shutting down.
func controlledShutdownPartitionLeader(assignment, isr []int32, liveOrShuttingDown func(int32) bool, shuttingDown func(int32) bool) (int32, bool) {
	for _, r := range assignment {
		if liveOrShuttingDown(r) && slices.Contains(isr, r) && !shuttingDown(r) {
			return r, true
		}
	}
	return NoLeader, false
}

// ElectionResult is the outcome of one partition's election.
type ElectionResult struct {
	common.TopicPartition
	// New is the new leadership (leader epoch bumped, partition epoch as read);
	// valid only when OK.
	New LeaderAndIsr
	OK  bool
	// Recipients are the replicas that get a LeaderAndIsr after the write.
	Recipients []int32
	// Unclean reports an unclean election (a leader outside the ISR).
	Unclean bool
}

func filter(xs []int32, keep func(int32) bool) []int32 {
	out := make([]int32, 0, len(xs))
	for _, x := range xs {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

// electOffline elects a leader for one offline partition and shrinks the
// ISR to its live members.
func electOffline(tp common.TopicPartition, cur LeaderAndIsr, assignment []int32, live func(int32) bool, uncleanAllowed bool) ElectionResult {
	res := ElectionResult{TopicPartition: tp, Recipients: filter(assignment, live)}
	leader, ok, unclean := offlinePartitionLeader(assignment, cur.ISR, live, uncleanAllowed)
	if !ok {
		return res
	}
	var isr []int32
	if slices.Contains(cur.ISR, leader) {
		isr = filter(cur.ISR, live)
	} else {
		isr = []int32{leader}
	}
	res.New = cur.newEpoch(leader, isr)
	if unclean {
		res.New.LeaderRecoveryState = RecoveryRecovering
	}
	res.OK, res.Unclean = true, unclean
	return res
}

// electReassign elects the first target replica that is live and in the
// ISR.
func electReassign(tp common.TopicPartition, cur LeaderAndIsr, a ReplicaAssignment, live func(int32) bool) ElectionResult {
	target := a.TargetReplicas()
	res := ElectionResult{TopicPartition: tp, Recipients: target}
	leader, ok := reassignPartitionLeader(target, cur.ISR, live)
	if ok {
		res.New, res.OK = cur.newEpoch(leader, cur.ISR), true
	}
	return res
}

// electPreferred elects the preferred (first assigned) replica if it is
// live and in the ISR.
func electPreferred(tp common.TopicPartition, cur LeaderAndIsr, assignment []int32, live func(int32) bool) ElectionResult {
	res := ElectionResult{TopicPartition: tp, Recipients: slices.Clone(assignment)}
	leader, ok := preferredReplicaPartitionLeader(assignment, cur.ISR, live)
	if ok {
		res.New, res.OK = cur.newEpoch(leader, cur.ISR), true
	}
	return res
}

// electControlledShutdown elects the first live ISR member that is not
// shutting down and removes the shutting-down brokers from the ISR.
func electControlledShutdown(tp common.TopicPartition, cur LeaderAndIsr, assignment []int32, liveOrSD, sd func(int32) bool) ElectionResult {
	res := ElectionResult{TopicPartition: tp, Recipients: filter(assignment, liveOrSD)}
	leader, ok := controlledShutdownPartitionLeader(assignment, cur.ISR, liveOrSD, sd)
	if ok {
		isr := filter(cur.ISR, func(r int32) bool { return !sd(r) })
		res.New, res.OK = cur.newEpoch(leader, isr), true
	}
	return res
}
