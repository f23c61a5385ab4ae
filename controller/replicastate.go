package controller

// ReplicaStateMachine (Kafka's ZkReplicaStateMachine): the valid previous
// states of each state and the ISR shrink when a replica goes offline.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/loglevels"

	"github.com/go-zookeeper/zk"
)

// ReplicaState is a replica's state in the replica state machine.
type ReplicaState int8

const (
	NonExistentReplica ReplicaState = iota
	NewReplica
	OnlineReplica
	OfflineReplica
	ReplicaDeletionStarted
	ReplicaDeletionSuccessful
	ReplicaDeletionIneligible
)

func (s ReplicaState) String() string { return replicaStates.name(s) }

// replicaStates names each replica state and lists the states a replica
// may come from.
var replicaStates = stateTable[ReplicaState]{
	NonExistentReplica:        {"NonExistentReplica", []ReplicaState{ReplicaDeletionSuccessful}},
	NewReplica:                {"NewReplica", []ReplicaState{NonExistentReplica}},
	OnlineReplica:             {"OnlineReplica", []ReplicaState{NewReplica, OnlineReplica, OfflineReplica, ReplicaDeletionIneligible}},
	OfflineReplica:            {"OfflineReplica", []ReplicaState{NewReplica, OnlineReplica, OfflineReplica, ReplicaDeletionIneligible}},
	ReplicaDeletionStarted:    {"ReplicaDeletionStarted", []ReplicaState{OfflineReplica}},
	ReplicaDeletionSuccessful: {"ReplicaDeletionSuccessful", []ReplicaState{ReplicaDeletionStarted}},
	ReplicaDeletionIneligible: {"ReplicaDeletionIneligible", []ReplicaState{OfflineReplica, ReplicaDeletionStarted}},
}

type replicaStateMachine struct {
	ctx      *Context
	batch    *requestBatch
	store    partitionStateStore
	stateLog *slog.Logger
	hist     *history
	// current, set during startup and offlineAfterElection, lists the
	// partitions this controller elected in the same event and has already
	// sent. The elections left no offline replica in their ISRs, so
	// removeReplicaFromIsr has nothing to write for them and takes their
	// state from the cache instead of reading the znode (a new leader may
	// have changed its ISR since; that reaches the controller as any ISR
	// change does), and neither OnlineReplica nor OfflineReplica sends
	// them again unless it wrote them.
	current map[common.TopicPartition]bool
}

func (m *replicaStateMachine) state(r PartitionReplica) ReplicaState { return m.ctx.replicaStates[r] }

func (m *replicaStateMachine) setState(r PartitionReplica, to ReplicaState, reason string) {
	from := m.state(r)
	if to == NonExistentReplica {
		delete(m.ctx.replicaStates, r)
	} else {
		m.ctx.replicaStates[r] = to
	}
	if traceEnabled(m.stateLog) {
		m.stateLog.Log(context.Background(), loglevels.LevelTrace, fmt.Sprintf("Changed state of replica %d for partition %s from %s to %s", r.Replica, r.TopicPartition, from, to),
			"topic", r.Topic, "partition", r.Partition, "replica", r.Replica, "from", from.String(), "to", to.String(), "reason", reason, "controller_epoch", m.ctx.Epoch)
	}
	m.hist.recordChange(StateChange{Time: time.Now(), Kind: "replica", Topic: r.Topic, Partition: r.Partition, Replica: r.Replica,
		From: from.String(), To: to.String(), Reason: reason, ControllerEpoch: m.ctx.Epoch})
}

// initializeStates classifies every assigned replica as a new controller
// finds it: OnlineReplica if it is online, ReplicaDeletionIneligible
// otherwise (the state from which it may go OfflineReplica), and returns
// the two groups for startup.
func (m *replicaStateMachine) initializeStates() (online, offline []PartitionReplica) {
	for _, tp := range m.ctx.AllPartitions() {
		for _, r := range m.ctx.Replicas(tp) {
			pr := PartitionReplica{tp, r}
			if m.ctx.IsReplicaOnline(r, tp, false) {
				m.ctx.replicaStates[pr] = OnlineReplica
				online = append(online, pr)
			} else {
				m.ctx.replicaStates[pr] = ReplicaDeletionIneligible
				offline = append(offline, pr)
			}
		}
	}
	return online, offline
}

// startup moves the online replicas (from initializeStates) to
// OnlineReplica, which sends each the current leadership (the full state
// push of a new controller), and the offline ones to OfflineReplica, which
// takes them out of the ISRs. elected lists the partitions the partition
// state machine has just written and sent (see offlineAfterElection); they
// are not sent again.
func (m *replicaStateMachine) startup(online, offline []PartitionReplica, elected map[common.TopicPartition]bool) error {
	m.current = elected
	_, err := m.handleStateChanges(online, OnlineReplica, "controller startup")
	m.current = nil
	if err != nil {
		return err
	}
	_, err = m.offlineAfterElection(offline, elected, "controller startup")
	return err
}

// offlineAfterElection moves replicas to OfflineReplica (out of the ISRs)
// right after the partition state machine's electPending wrote the
// partitions in elected and the controller sent them. The elections left
// no offline replica in those partitions' ISRs, so the ISR shrink has
// nothing to write for them and neither reads their znodes again nor sends
// them a second time (see current): each broker gets each partition once,
// the elected ones in the elections' LeaderAndIsr, the others in the
// shrinks'. A new leader may already have changed its ISR since; that
// reaches the controller as any ISR change does.
func (m *replicaStateMachine) offlineAfterElection(replicas []PartitionReplica, elected map[common.TopicPartition]bool, reason string) (map[PartitionReplica]error, error) {
	m.current = elected
	defer func() { m.current = nil }()
	return m.handleStateChanges(replicas, OfflineReplica, reason)
}

// handleStateChanges moves replicas to target; per-replica failures are
// returned in the map, the error is for store failures that abort the call
// (ErrControllerMoved).
func (m *replicaStateMachine) handleStateChanges(replicas []PartitionReplica, target ReplicaState, reason string) (map[PartitionReplica]error, error) {
	failed := map[PartitionReplica]error{}
	// Group by broker as Kafka does, in broker order for determinism.
	byBroker := map[int32][]PartitionReplica{}
	for _, r := range replicas {
		byBroker[r.Replica] = append(byBroker[r.Replica], r)
	}
	for _, b := range sortedMapKeys(byBroker) {
		var valid []PartitionReplica
		for _, r := range byBroker[b] {
			from := m.state(r)
			if !replicaStates.valid(from, target) {
				failed[r] = fmt.Errorf("%w: replica %s from %s to %s", ErrIllegalStateTransition, r, from, target)
				m.stateLog.Error("Illegal replica state transition", "topic", r.Topic, "partition", r.Partition, "replica", r.Replica, "from", from.String(), "to", target.String(), "reason", reason)
				continue
			}
			valid = append(valid, r)
		}
		if err := m.doHandleStateChanges(b, valid, target, failed, reason); err != nil {
			return failed, err
		}
	}
	return failed, nil
}

func (m *replicaStateMachine) doHandleStateChanges(broker int32, replicas []PartitionReplica, target ReplicaState, failed map[PartitionReplica]error, reason string) error {
	switch target {
	case NewReplica:
		for _, r := range replicas {
			if l, ok := m.ctx.Leadership(r.TopicPartition); ok {
				if l.Leader == r.Replica {
					failed[r] = fmt.Errorf("%w: replica %d for partition %s cannot be moved to NewReplica state as it is being requested to become leader", ErrStateChangeFailed, r.Replica, r.TopicPartition)
					m.stateLog.Error(failed[r].Error(), "topic", r.Topic, "partition", r.Partition)
					continue
				}
				a, _ := m.ctx.Assignment(r.TopicPartition)
				m.batch.addLeaderAndIsr([]int32{r.Replica}, r.TopicPartition, l, a, true)
			}
			m.setState(r, NewReplica, reason)
		}
	case OnlineReplica:
		for _, r := range replicas {
			if m.state(r) == NewReplica {
				a, _ := m.ctx.Assignment(r.TopicPartition)
				if !slices.Contains(a.Replicas, r.Replica) {
					a.Replicas = append(slices.Clone(a.Replicas), r.Replica)
					m.ctx.UpdateAssignment(r.TopicPartition, a)
				}
			} else if l, ok := m.ctx.Leadership(r.TopicPartition); ok && !m.current[r.TopicPartition] {
				a, _ := m.ctx.Assignment(r.TopicPartition)
				m.batch.addLeaderAndIsr([]int32{r.Replica}, r.TopicPartition, l, a, false)
			}
			m.setState(r, OnlineReplica, reason)
		}
	case OfflineReplica:
		var withLeadership, withoutLeadership []common.TopicPartition
		sentVersion := map[common.TopicPartition]int32{} // current partitions: the version sent
		for _, r := range replicas {
			m.batch.addStopReplica([]int32{r.Replica}, r.TopicPartition, false)
			if l, ok := m.ctx.Leadership(r.TopicPartition); ok {
				withLeadership = append(withLeadership, r.TopicPartition)
				if m.current[r.TopicPartition] {
					sentVersion[r.TopicPartition] = l.PartitionEpoch
				}
			} else {
				withoutLeadership = append(withoutLeadership, r.TopicPartition)
			}
		}
		updated, errs, err := m.removeReplicaFromIsr(broker, withLeadership)
		if err != nil {
			return err
		}
		for _, tp := range sortedKeys(updated) {
			l := updated[tp]
			v, sent := sentVersion[tp]
			if !m.ctx.IsTopicQueuedForDeletion(tp.Topic) && !(sent && v == l.PartitionEpoch) {
				a, _ := m.ctx.Assignment(tp)
				others := filter(a.Replicas, func(x int32) bool { return x != broker })
				m.batch.addLeaderAndIsr(others, tp, l, a, false)
			}
			r := PartitionReplica{tp, broker}
			m.setState(r, OfflineReplica, reason)
		}
		for tp, e := range errs {
			failed[PartitionReplica{tp, broker}] = e
		}
		if len(withoutLeadership) > 0 {
			m.batch.addUpdateMetadata(m.ctx.LiveOrShuttingDownBrokerIDs(), withoutLeadership)
		}
		for _, tp := range withoutLeadership {
			m.setState(PartitionReplica{tp, broker}, OfflineReplica, reason)
		}
	case ReplicaDeletionStarted:
		for _, r := range replicas {
			m.batch.addStopReplica([]int32{r.Replica}, r.TopicPartition, true)
			m.setState(r, ReplicaDeletionStarted, reason)
		}
	case ReplicaDeletionSuccessful, ReplicaDeletionIneligible:
		for _, r := range replicas {
			m.setState(r, target, reason)
		}
	case NonExistentReplica:
		for _, r := range replicas {
			if a, ok := m.ctx.Assignment(r.TopicPartition); ok {
				keep := func(x int32) bool { return x != r.Replica }
				m.ctx.assignments[r.Topic][r.Partition] = ReplicaAssignment{
					Replicas:         filter(a.Replicas, keep),
					AddingReplicas:   filter(a.AddingReplicas, keep),
					RemovingReplicas: filter(a.RemovingReplicas, keep),
				}
			}
			m.setState(r, NonExistentReplica, reason)
		}
	}
	return nil
}

// removeReplicaFromIsr takes an offline replica out of the ISRs: shrink the ISR of every
// partition that still lists the replica (never emptying it), dropping the
// replica as leader if it led, bumping the leader epoch. Partitions where the
// replica was not in the ISR are returned unchanged so their state is re-sent.
//
// In the first round a partition whose cached ISR lists the replica is
// shrunk from the cache, conditionally on the cached znode version (a
// state changed behind the cache fails with BadVersion and is re-read in
// the next round); only the others are read first, so that a replica a
// leader has just added back to the ISR is still removed, as Kafka does.
// A partition in m.current is not read either: its cache is the znode.
func (m *replicaStateMachine) removeReplicaFromIsr(replica int32, tps []common.TopicPartition) (map[common.TopicPartition]LeaderIsrAndControllerEpoch, map[common.TopicPartition]error, error) {
	done := map[common.TopicPartition]LeaderIsrAndControllerEpoch{}
	errs := map[common.TopicPartition]error{}
	remaining := tps
	for round := 0; len(remaining) > 0; round++ {
		var states map[common.TopicPartition]LeaderIsrAndControllerEpoch
		var err error
		if round == 0 {
			var toRead []common.TopicPartition
			states = map[common.TopicPartition]LeaderIsrAndControllerEpoch{}
			for _, tp := range remaining {
				if l, ok := m.ctx.Leadership(tp); ok && (slices.Contains(l.ISR, replica) || m.current[tp]) {
					states[tp] = l
				} else {
					toRead = append(toRead, tp)
				}
			}
			var read map[common.TopicPartition]LeaderIsrAndControllerEpoch
			if len(toRead) > 0 {
				read, err = m.store.ReadStates(toRead)
			}
			for tp, l := range read {
				states[tp] = l
			}
		} else {
			states, err = m.store.ReadStates(remaining)
		}
		if err != nil {
			return nil, nil, err
		}
		updates := map[common.TopicPartition]LeaderAndIsr{}
		for _, tp := range remaining {
			cur, ok := states[tp]
			if !ok {
				if !m.ctx.IsTopicQueuedForDeletion(tp.Topic) {
					errs[tp] = fmt.Errorf("%w: failed to update the ISR of %s: no state znode", ErrStateChangeFailed, tp)
				}
				continue
			}
			if cur.ControllerEpoch > m.ctx.Epoch {
				errs[tp] = fmt.Errorf("%w: leader and ISR path of %s written by controller epoch %d, newer than ours (%d)", ErrStateChangeFailed, tp, cur.ControllerEpoch, m.ctx.Epoch)
				continue
			}
			if !slices.Contains(cur.ISR, replica) {
				m.ctx.PutLeadership(tp, cur)
				done[tp] = cur
				continue
			}
			leader := cur.Leader
			if leader == replica {
				leader = NoLeader
			}
			isr := cur.ISR
			if len(isr) > 1 { // the last ISR member is never removed
				isr = filter(cur.ISR, func(x int32) bool { return x != replica })
			}
			updates[tp] = cur.newEpoch(leader, isr)
		}
		remaining = nil
		if len(updates) == 0 {
			break
		}
		versions, werrs, err := m.store.UpdateStates(updates, m.ctx.Epoch)
		if err != nil {
			return nil, nil, err
		}
		for _, tp := range sortedKeys(updates) {
			if e := werrs[tp]; e != nil {
				if errors.Is(e, zk.ErrBadVersion) {
					remaining = append(remaining, tp)
				} else {
					errs[tp] = e
				}
				continue
			}
			l := LeaderIsrAndControllerEpoch{LeaderAndIsr: updates[tp], ControllerEpoch: m.ctx.Epoch}
			l.PartitionEpoch = versions[tp]
			m.ctx.PutLeadership(tp, l)
			done[tp] = l
		}
	}
	return done, errs, nil
}
