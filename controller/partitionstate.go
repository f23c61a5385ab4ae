package controller

// PartitionStateMachine (Kafka's ZkPartitionStateMachine): the valid
// previous states of each state and the transitions that write ZooKeeper
// (initial leadership, elections).
// Transitions update the context, write state znodes through the store and
// add requests to the batch; the caller flushes the batch.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/loglevels"

	"github.com/go-zookeeper/zk"
)

// PartitionState is a partition's state in the partition state machine.
type PartitionState int8

const (
	NonExistentPartition PartitionState = iota
	NewPartition
	OnlinePartition
	OfflinePartition
)

func (s PartitionState) String() string { return partitionStates.name(s) }

// partitionStates names each partition state and lists the states a
// partition may come from.
var partitionStates = stateTable[PartitionState]{
	NonExistentPartition: {"NonExistentPartition", []PartitionState{OfflinePartition}},
	NewPartition:         {"NewPartition", []PartitionState{NonExistentPartition}},
	OnlinePartition:      {"OnlinePartition", []PartitionState{NewPartition, OnlinePartition, OfflinePartition}},
	OfflinePartition:     {"OfflinePartition", []PartitionState{NewPartition, OnlinePartition, OfflinePartition}},
}

// ErrIllegalStateTransition is returned for a transition outside the tables.
var ErrIllegalStateTransition = errors.New("controller: illegal state transition")

// ErrStateChangeFailed is returned when a partition could not be moved (no
// eligible leader, no live replica, a newer controller wrote the znode...).
var ErrStateChangeFailed = errors.New("controller: state change failed")

// electionSpec is the strategy argument of an OnlinePartition transition.
type electionSpec struct {
	strategy     ElectionStrategy
	allowUnclean bool // offline strategy only: forced by ElectLeaders(UNCLEAN)
}

type partitionStateMachine struct {
	ctx          *Context
	batch        *requestBatch
	store        partitionStateStore
	stateLog     *slog.Logger
	hist         *history
	uncleanDflt  func() bool
	onUnclean    func(common.TopicPartition)
	controllerID int32
}

func (m *partitionStateMachine) state(tp common.TopicPartition) PartitionState {
	return m.ctx.partitionStates[tp]
}

func (m *partitionStateMachine) setState(tp common.TopicPartition, to PartitionState, reason string, detail string) {
	from := m.state(tp)
	m.ctx.partitionStates[tp] = to
	// Kafka's levels: a transition that wrote a new leadership (a new
	// partition's first leader, an election) is an INFO line with the new
	// state; every other transition is TRACE, formatted only when enabled.
	switch {
	case detail != "":
		m.stateLog.Info(fmt.Sprintf("Changed partition %s from %s to %s with state %s", tp, from, to, detail),
			"topic", tp.Topic, "partition", tp.Partition, "from", from.String(), "to", to.String(), "reason", reason, "controller_epoch", m.ctx.Epoch, "state", detail)
	case traceEnabled(m.stateLog):
		m.stateLog.Log(context.Background(), loglevels.LevelTrace, fmt.Sprintf("Changed partition %s state from %s to %s", tp, from, to),
			"topic", tp.Topic, "partition", tp.Partition, "from", from.String(), "to", to.String(), "reason", reason, "controller_epoch", m.ctx.Epoch)
	}
	m.hist.recordChange(StateChange{Time: time.Now(), Kind: "partition", Topic: tp.Topic, Partition: tp.Partition, Replica: -1,
		From: from.String(), To: to.String(), Reason: reason, Detail: detail, ControllerEpoch: m.ctx.Epoch})
}

// traceEnabled reports whether the state-change logger writes TRACE
// lines: every successful transition is one, as in Kafka, so that a
// failover of many partitions formats none of them unless asked to.
func traceEnabled(l *slog.Logger) bool {
	return l.Enabled(context.Background(), loglevels.LevelTrace)
}

// initializeStates classifies every known partition as a new controller
// finds it: Online if its leader is live, Offline if it has a leadership
// but no live leader, New without one.
func (m *partitionStateMachine) initializeStates() {
	for _, tp := range m.ctx.AllPartitions() {
		l, ok := m.ctx.Leadership(tp)
		switch {
		case !ok:
			m.setState(tp, NewPartition, "controller startup: no leadership in ZooKeeper", "")
		case m.ctx.IsReplicaOnline(l.Leader, tp, false):
			m.setState(tp, OnlinePartition, "controller startup: leader is online", "")
		default:
			m.setState(tp, OfflinePartition, "controller startup: leader is offline", "")
		}
	}
}

// electPending moves every New and Offline partition Online (as
// triggerOnlinePartitionStateChange does for all topics) and returns the
// ones it wrote a leadership for: an offline election leaves only live
// replicas in the ISR, and a new partition's ISR is its live replicas. A
// new controller calls it after initializeStates, the broker-failure
// handling after marking the partitions without a live leader Offline;
// both then hand the result to the replica state machine's
// offlineAfterElection in the same batch.
func (m *partitionStateMachine) electPending(reason string) (map[common.TopicPartition]bool, error) {
	var pending []common.TopicPartition
	for tp, s := range m.ctx.partitionStates {
		if s == NewPartition || s == OfflinePartition {
			pending = append(pending, tp)
		}
	}
	if _, err := m.triggerOnlinePartitionStateChange("", reason); err != nil {
		return nil, err
	}
	written := map[common.TopicPartition]bool{}
	for _, tp := range pending {
		if m.state(tp) == OnlinePartition {
			written[tp] = true
		}
	}
	return written, nil
}

// triggerOnlinePartitionStateChange moves New and Offline partitions (of one
// topic, or all when topic is empty) Online with the offline strategy; topics queued for deletion are
// left alone.
func (m *partitionStateMachine) triggerOnlinePartitionStateChange(topic, reason string) (map[common.TopicPartition]error, error) {
	var tps []common.TopicPartition
	for tp, s := range m.ctx.partitionStates {
		if topic != "" && tp.Topic != topic {
			continue
		}
		if (s == NewPartition || s == OfflinePartition) && !m.ctx.IsTopicQueuedForDeletion(tp.Topic) {
			tps = append(tps, tp)
		}
	}
	sortTPs(tps)
	if len(tps) == 0 {
		return nil, nil
	}
	return m.handleStateChanges(tps, OnlinePartition, &electionSpec{strategy: OfflineElection}, reason)
}

// handleStateChanges moves partitions to target. The returned map has an
// entry for every partition that failed; the error is non-nil only for
// ErrControllerMoved (or another store failure that aborts the whole call).
func (m *partitionStateMachine) handleStateChanges(tps []common.TopicPartition, target PartitionState, spec *electionSpec, reason string) (map[common.TopicPartition]error, error) {
	failed := map[common.TopicPartition]error{}
	var valid []common.TopicPartition
	for _, tp := range tps {
		from := m.state(tp)
		if !partitionStates.valid(from, target) {
			err := fmt.Errorf("%w: partition %s from %s to %s", ErrIllegalStateTransition, tp, from, target)
			m.stateLog.Error("Illegal partition state transition", "topic", tp.Topic, "partition", tp.Partition, "from", from.String(), "to", target.String(), "reason", reason)
			failed[tp] = err
			continue
		}
		valid = append(valid, tp)
	}
	switch target {
	case NewPartition, OfflinePartition, NonExistentPartition:
		for _, tp := range valid {
			m.setState(tp, target, reason, "")
		}
	case OnlinePartition:
		var uninit, toElect []common.TopicPartition
		for _, tp := range valid {
			if m.state(tp) == NewPartition {
				uninit = append(uninit, tp)
			} else {
				toElect = append(toElect, tp)
			}
		}
		if len(uninit) > 0 {
			if err := m.initializeLeaderAndIsr(uninit, failed, reason); err != nil {
				return failed, err
			}
		}
		if len(toElect) > 0 {
			if spec == nil {
				return failed, fmt.Errorf("controller: online transition of %v without an election strategy", toElect)
			}
			if err := m.electLeaders(toElect, *spec, failed, reason); err != nil {
				return failed, err
			}
		}
	}
	return failed, nil
}

// initializeLeaderAndIsr gives new partitions their first leadership:
// leader = the first live assigned replica, ISR = the live assigned
// replicas, leader epoch 0, written by creating the state znode.
func (m *partitionStateMachine) initializeLeaderAndIsr(tps []common.TopicPartition, failed map[common.TopicPartition]error, reason string) error {
	toCreate := map[common.TopicPartition]LeaderIsrAndControllerEpoch{}
	for _, tp := range tps {
		live := filter(m.ctx.Replicas(tp), func(r int32) bool { return m.ctx.IsReplicaOnline(r, tp, false) })
		if len(live) == 0 {
			err := fmt.Errorf("%w: encountered error during state change of partition %s from New to Online, assigned replicas are %v, live brokers are %v; no assigned replica is alive",
				ErrStateChangeFailed, tp, m.ctx.Replicas(tp), m.ctx.LiveOrShuttingDownBrokerIDs())
			m.stateLog.Error(err.Error(), "topic", tp.Topic, "partition", tp.Partition)
			failed[tp] = err
			continue
		}
		toCreate[tp] = LeaderIsrAndControllerEpoch{
			LeaderAndIsr:    LeaderAndIsr{Leader: live[0], LeaderEpoch: initialLeaderEpoch, ISR: live, PartitionEpoch: initialPartitionEpc},
			ControllerEpoch: m.ctx.Epoch,
		}
	}
	if len(toCreate) == 0 {
		return nil
	}
	errs, err := m.store.CreateStates(toCreate)
	if err != nil {
		return err
	}
	for _, tp := range sortedKeys(toCreate) {
		l := toCreate[tp]
		if e := errs[tp]; e != nil {
			failed[tp] = fmt.Errorf("%w: creating the state znode of %s: %v", ErrStateChangeFailed, tp, e)
			m.stateLog.Error("Failed to initialize partition leadership", "topic", tp.Topic, "partition", tp.Partition, "err", e)
			continue
		}
		m.ctx.PutLeadership(tp, l)
		a, _ := m.ctx.Assignment(tp)
		m.batch.addLeaderAndIsr(l.ISR, tp, l, a, true)
		m.setState(tp, OnlinePartition, reason, l.String())
	}
	return nil
}

// electLeaders elects with spec and writes each new leadership
// conditionally on the partition epoch, retrying partitions whose conditional write
// lost a race with a leader's ISR update.
//
// The first round elects from the cached leadership (what this controller
// last read or wrote, with its znode version) instead of reading every
// state znode first as Kafka does: the write is conditional on that
// version, so a state changed behind the cache (a leader's ISR update)
// fails with BadVersion and the partition is elected again from a fresh
// read. The outcome is the same; the round trip per partition is gone.
func (m *partitionStateMachine) electLeaders(tps []common.TopicPartition, spec electionSpec, failed map[common.TopicPartition]error, reason string) error {
	remaining := tps
	for round := 0; len(remaining) > 0; round++ {
		retry, err := m.electLeadersOnce(remaining, spec, failed, reason, round == 0)
		if err != nil {
			return err
		}
		remaining = retry
	}
	return nil
}

// cachedStates returns the cached leadership of each of tps, read from
// ZooKeeper for the partitions without one.
func cachedStates(ctx *Context, store partitionStateStore, tps []common.TopicPartition) (map[common.TopicPartition]LeaderIsrAndControllerEpoch, error) {
	out := make(map[common.TopicPartition]LeaderIsrAndControllerEpoch, len(tps))
	var missing []common.TopicPartition
	for _, tp := range tps {
		if l, ok := ctx.Leadership(tp); ok {
			out[tp] = l
		} else {
			missing = append(missing, tp)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	read, err := store.ReadStates(missing)
	if err != nil {
		return nil, err
	}
	for tp, l := range read {
		out[tp] = l
	}
	return out, nil
}

func (m *partitionStateMachine) electLeadersOnce(tps []common.TopicPartition, spec electionSpec, failed map[common.TopicPartition]error, reason string, fromCache bool) ([]common.TopicPartition, error) {
	var states map[common.TopicPartition]LeaderIsrAndControllerEpoch
	var err error
	if fromCache {
		states, err = cachedStates(m.ctx, m.store, tps)
	} else {
		states, err = m.store.ReadStates(tps)
	}
	if err != nil {
		return nil, err
	}
	live := func(tp common.TopicPartition) func(int32) bool {
		return func(r int32) bool { return m.ctx.IsReplicaOnline(r, tp, false) }
	}
	results := map[common.TopicPartition]ElectionResult{}
	updates := map[common.TopicPartition]LeaderAndIsr{}
	// The topic's unclean election setting, read once per topic and call.
	type uncleanSetting struct {
		on  bool
		err error
	}
	uncleanByTopic := map[string]uncleanSetting{}
	// From the cache, a partition that cannot be elected is elected again
	// from a fresh read before it fails: the cache may miss a change made
	// behind it (a leader's ISR expansion the controller has not been told
	// of yet), and no write would catch that when nothing is written.
	var fresh []common.TopicPartition
	for _, tp := range tps {
		cur, ok := states[tp]
		if !ok {
			failed[tp] = fmt.Errorf("%w: partition state znode of %s does not exist", ErrStateChangeFailed, tp)
			continue
		}
		if cur.ControllerEpoch > m.ctx.Epoch {
			if fromCache {
				fresh = append(fresh, tp)
				continue
			}
			failed[tp] = fmt.Errorf("%w: aborted leader election for partition %s since the state znode was written by controller epoch %d, newer than ours (%d)", ErrStateChangeFailed, tp, cur.ControllerEpoch, m.ctx.Epoch)
			m.stateLog.Error(failed[tp].Error(), "topic", tp.Topic, "partition", tp.Partition)
			continue
		}
		a, _ := m.ctx.Assignment(tp)
		var res ElectionResult
		switch spec.strategy {
		case OfflineElection:
			unclean := spec.allowUnclean
			if !unclean && len(filter(cur.ISR, live(tp))) == 0 {
				u, ok := uncleanByTopic[tp.Topic]
				if !ok {
					u.on, u.err = m.store.UncleanElectionEnabled(tp.Topic, m.uncleanDflt())
					uncleanByTopic[tp.Topic] = u
				}
				if err := u.err; err != nil {
					failed[tp] = fmt.Errorf("%w: reading the unclean election config of %s: %v", ErrStateChangeFailed, tp.Topic, err)
					continue
				}
				unclean = u.on
			}
			res = electOffline(tp, cur.LeaderAndIsr, a.Replicas, live(tp), unclean)
		case ReassignmentElection:
			res = electReassign(tp, cur.LeaderAndIsr, a, live(tp))
		case PreferredElection:
			res = electPreferred(tp, cur.LeaderAndIsr, a.Replicas, live(tp))
		case ControlledShutdownElection:
			res = electControlledShutdown(tp, cur.LeaderAndIsr, a.Replicas, m.ctx.IsLiveOrShuttingDown, m.ctx.IsShuttingDown)
		}
		if !res.OK {
			if fromCache {
				fresh = append(fresh, tp)
				continue
			}
			failed[tp] = fmt.Errorf("%w: failed to elect leader for partition %s under strategy %s (assigned replicas %v, isr %v, live brokers %v)",
				ErrStateChangeFailed, tp, spec.strategy, a.Replicas, cur.ISR, m.ctx.LiveOrShuttingDownBrokerIDs())
			m.stateLog.Error(failed[tp].Error(), "topic", tp.Topic, "partition", tp.Partition)
			continue
		}
		results[tp] = res
		updates[tp] = res.New
	}
	if len(updates) == 0 {
		return fresh, nil
	}
	versions, errs, err := m.store.UpdateStates(updates, m.ctx.Epoch)
	if err != nil {
		return nil, err
	}
	retry := fresh
	for _, tp := range sortedKeys(updates) {
		if e := errs[tp]; e != nil {
			if errors.Is(e, zk.ErrBadVersion) {
				retry = append(retry, tp)
				continue
			}
			failed[tp] = fmt.Errorf("%w: writing the state of %s: %v", ErrStateChangeFailed, tp, e)
			continue
		}
		res := results[tp]
		l := LeaderIsrAndControllerEpoch{LeaderAndIsr: res.New, ControllerEpoch: m.ctx.Epoch}
		l.PartitionEpoch = versions[tp]
		m.ctx.PutLeadership(tp, l)
		if res.Unclean {
			m.stateLog.Warn(fmt.Sprintf("Unclean leader election: partition %s now led by %d which was not in the ISR %v; possible data loss", tp, res.New.Leader, states[tp].ISR),
				"topic", tp.Topic, "partition", tp.Partition, "leader", res.New.Leader)
			if m.onUnclean != nil {
				m.onUnclean(tp)
			}
		}
		a, _ := m.ctx.Assignment(tp)
		m.batch.addLeaderAndIsr(res.Recipients, tp, l, a, false)
		m.setState(tp, OnlinePartition, reason, l.String())
	}
	return retry, nil
}

func (l LeaderIsrAndControllerEpoch) String() string {
	return fmt.Sprintf("LeaderAndIsr(leader=%d, leaderEpoch=%d, isr=%v, leaderRecoveryState=%d, partitionEpoch=%d) controllerEpoch=%d",
		l.Leader, l.LeaderEpoch, l.ISR, l.LeaderRecoveryState, l.PartitionEpoch, l.ControllerEpoch)
}

func sortedKeys[V any](m map[common.TopicPartition]V) []common.TopicPartition {
	out := make([]common.TopicPartition, 0, len(m))
	for tp := range m {
		out = append(out, tp)
	}
	sortTPs(out)
	return out
}
