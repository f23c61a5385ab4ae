package controller

// Partition reassignment (KIP-455): the
// AlterPartitionReassignments/ListPartitionReassignments APIs and the legacy
// /admin/reassign_partitions znode. RS is replaced by the target set only
// after every target replica has joined the ISR, so the original replicas
// stay recoverable as RS − AR until then.

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/klassik/klassik/broker/common"

	"github.com/go-zookeeper/zk"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klassik/klassik/zkpaths"
)

// reassignTo computes the assignment that moves a to target:
// RS = distinct(target ++ origin), AR = RS − origin, RR = RS − target.
func (a ReplicaAssignment) reassignTo(target []int32) ReplicaAssignment {
	origin := a.OriginReplicas()
	var full []int32
	for _, r := range append(slices.Clone(target), origin...) {
		if !slices.Contains(full, r) {
			full = append(full, r)
		}
	}
	return ReplicaAssignment{Replicas: full, AddingReplicas: minus(full, origin), RemovingReplicas: minus(full, target)}
}

func equalAssignment(a, b ReplicaAssignment) bool {
	return slices.Equal(a.Replicas, b.Replicas) && slices.Equal(a.AddingReplicas, b.AddingReplicas) && slices.Equal(a.RemovingReplicas, b.RemovingReplicas)
}

// writeTopicAssignment rewrites /brokers/topics/<t> from the context
// (fenced, any version).
func (c *Controller) writeTopicAssignment(topic string) error {
	var topicID string
	if id := c.ctx.TopicID(topic); id != [16]byte{} {
		topicID = encodeTopicID(id)
	}
	_, err := c.zk.SetTopicAssignment(c.ctx.EpochZkVersion, topic, c.contextTopicAssignment(topic, topicID), -1)
	return err
}

// contextTopicAssignment is the topic znode's content as the context knows
// the topic's partitions (replicas, adding, removing).
func (c *Controller) contextTopicAssignment(topic, topicID string) zkpaths.TopicAssignment {
	ta := zkpaths.TopicAssignment{Partitions: map[int32][]int32{}, Adding: map[int32][]int32{}, Removing: map[int32][]int32{}, TopicID: topicID}
	for _, tp := range c.ctx.PartitionsForTopic(topic) {
		a, _ := c.ctx.Assignment(tp)
		ta.Partitions[tp.Partition] = a.Replicas
		ta.Adding[tp.Partition] = a.AddingReplicas
		ta.Removing[tp.Partition] = a.RemovingReplicas
	}
	return ta
}

// onPartitionReassignment is the entry point of every trigger: phase A
// (write RS/AR/RR, start the adding replicas) until the targets are all in
// the ISR, then phase B.
func (c *Controller) onPartitionReassignment(tp common.TopicPartition, target ReplicaAssignment) error {
	if c.ctx.topicsToDelete[tp.Topic] {
		c.ctx.deleteIneligible[tp.Topic] = true
	}
	cur, _ := c.ctx.Assignment(tp)
	if !equalAssignment(cur, target) {
		c.ctx.UpdateAssignment(tp, target)
		if err := c.writeTopicAssignment(tp.Topic); err != nil {
			c.ctx.UpdateAssignment(tp, cur)
			return err
		}
		// Replicas of a superseded or cancelled reassignment are deleted.
		if err := c.stopRemovedReplicas(tp, minus(cur.Replicas, target.Replicas), "reassignment changed"); err != nil {
			return err
		}
	}
	if target.IsBeingReassigned() {
		c.ctx.beingReassigned[tp] = true
	}
	complete, err := c.isReassignmentComplete(tp, target)
	if err != nil {
		return err
	}
	if !complete {
		// Phase A: new epoch so brokers accept the new replica set, then the
		// adding replicas start as followers.
		c.log.Info("partition reassignment in progress", "topic", tp.Topic, "partition", tp.Partition, "replicas", target.Replicas, "adding", target.AddingReplicas, "removing", target.RemovingReplicas)
		if err := c.updateLeaderEpochAndSend(tp, target); err != nil {
			return err
		}
		var adding []PartitionReplica
		for _, r := range target.AddingReplicas {
			adding = append(adding, PartitionReplica{tp, r})
		}
		_, err := c.replicaChange(adding, NewReplica, "reassignment: adding replica")
		return err
	}
	return c.completeReassignment(tp, target)
}

// completeReassignment is phase B: elect a target replica if the leader
// is not one, stop and delete the removed replicas, write the final
// assignment and drop the znode entry.
func (c *Controller) completeReassignment(tp common.TopicPartition, a ReplicaAssignment) error {
	targets := a.TargetReplicas()
	removing := a.RemovingReplicas
	var targetReplicas []PartitionReplica
	for _, r := range targets {
		targetReplicas = append(targetReplicas, PartitionReplica{tp, r})
	}
	if _, err := c.replicaChange(targetReplicas, OnlineReplica, "reassignment complete"); err != nil {
		return err
	}
	done := ReplicaAssignment{Replicas: slices.Clone(targets)}
	c.ctx.UpdateAssignment(tp, done)
	if l, ok := c.ctx.Leadership(tp); !ok || !slices.Contains(targets, l.Leader) || !c.ctx.IsReplicaOnline(l.Leader, tp, false) {
		if _, err := c.partitionChange([]common.TopicPartition{tp}, OnlinePartition, &electionSpec{strategy: ReassignmentElection}, "reassignment: leader not in the target replicas"); err != nil {
			return err
		}
	} else if err := c.updateLeaderEpochAndSend(tp, done); err != nil {
		return err
	}
	if err := c.stopRemovedReplicas(tp, removing, "reassignment: removing replica"); err != nil {
		return err
	}
	if err := c.writeTopicAssignment(tp.Topic); err != nil {
		return err
	}
	if err := c.removeFromZkReassignment(tp, targets); err != nil {
		return err
	}
	delete(c.ctx.beingReassigned, tp)
	c.log.Info("partition reassignment complete", "topic", tp.Topic, "partition", tp.Partition, "replicas", targets)
	if err := c.sendUpdateMetadata(c.ctx.LiveOrShuttingDownBrokerIDs(), []common.TopicPartition{tp}); err != nil {
		return err
	}
	if c.ctx.topicsToDelete[tp.Topic] && c.deletion != nil {
		return c.deletion.resumeForTopics(map[string]bool{tp.Topic: true})
	}
	return nil
}

// stopRemovedReplicas moves replicas Offline → DeletionStarted →
// DeletionSuccessful → NonExistent without waiting for the brokers.
func (c *Controller) stopRemovedReplicas(tp common.TopicPartition, brokers []int32, reason string) error {
	if len(brokers) == 0 {
		return nil
	}
	var rs []PartitionReplica
	for _, b := range brokers {
		rs = append(rs, PartitionReplica{tp, b})
	}
	for _, target := range []ReplicaState{OfflineReplica, ReplicaDeletionStarted, ReplicaDeletionSuccessful, NonExistentReplica} {
		if _, err := c.replicaChange(rs, target, reason); err != nil {
			return err
		}
	}
	return nil
}

// isReassignmentComplete: no AR/RR, or every target replica is in the ISR
// as stored in ZooKeeper now.
func (c *Controller) isReassignmentComplete(tp common.TopicPartition, a ReplicaAssignment) (bool, error) {
	if !a.IsBeingReassigned() {
		return true, nil
	}
	states, err := c.psm.store.ReadStates([]common.TopicPartition{tp})
	if err != nil {
		return false, err
	}
	s, ok := states[tp]
	if !ok {
		return false, nil
	}
	c.ctx.PutLeadership(tp, s)
	for _, r := range a.TargetReplicas() {
		if !slices.Contains(s.ISR, r) {
			return false, nil
		}
	}
	return true, nil
}

// updateLeaderEpochAndSend bumps the leader epoch without changing leader or
// ISR and sends LeaderAndIsr with the assignment to the origin
// replicas (isNew=false) and the adding replicas (isNew=true).
func (c *Controller) updateLeaderEpochAndSend(tp common.TopicPartition, a ReplicaAssignment) error {
	var l LeaderIsrAndControllerEpoch
	for {
		states, err := c.psm.store.ReadStates([]common.TopicPartition{tp})
		if err != nil {
			return err
		}
		cur, ok := states[tp]
		if !ok {
			return fmt.Errorf("controller: reassignment of %s: no partition state", tp)
		}
		if cur.ControllerEpoch > c.ctx.Epoch {
			return fmt.Errorf("controller: reassignment of %s: state written by a newer controller epoch %d", tp, cur.ControllerEpoch)
		}
		next := cur.newEpoch(cur.Leader, cur.ISR)
		versions, errs, err := c.psm.store.UpdateStates(map[common.TopicPartition]LeaderAndIsr{tp: next}, c.ctx.Epoch)
		if err != nil {
			return err
		}
		if e := errs[tp]; e != nil {
			if errors.Is(e, zk.ErrBadVersion) {
				continue
			}
			return e
		}
		l = LeaderIsrAndControllerEpoch{LeaderAndIsr: next, ControllerEpoch: c.ctx.Epoch}
		l.PartitionEpoch = versions[tp]
		break
	}
	c.ctx.PutLeadership(tp, l)
	if err := c.batch.newBatch(); err != nil {
		return fmt.Errorf("%w: %v", errIllegalState, err)
	}
	c.batch.addLeaderAndIsr(a.OriginReplicas(), tp, l, a, false)
	c.batch.addLeaderAndIsr(a.AddingReplicas, tp, l, a, true)
	c.sendBatch()
	return nil
}

// --- /admin/reassign_partitions ---

type zkPartitionReassignmentEvent struct{ noReply }

func (zkPartitionReassignmentEvent) state() string { return "AlterPartitionReassignment" }

func (c *Controller) readZkReassignment() ([]zkpaths.PartitionReplicas, bool, error) {
	return c.zk.GetPartitionReassignment()
}

// writeZkReassignment rewrites /admin/reassign_partitions with the
// partitions still in progress, deleting it when none is left.
func (c *Controller) writeZkReassignment(parts []zkpaths.PartitionReplicas) error {
	if len(parts) == 0 {
		return c.zk.DeletePartitionReassignment(c.ctx.EpochZkVersion)
	}
	return c.zk.SetOrCreatePartitionReassignment(c.ctx.EpochZkVersion, parts)
}

// removeFromZkReassignment drops tp from the znode if it is listed there
// with exactly this target.
func (c *Controller) removeFromZkReassignment(tp common.TopicPartition, target []int32) error {
	parts, ok, err := c.readZkReassignment()
	if err != nil || !ok {
		return err
	}
	kept := parts[:0:0]
	for _, p := range parts {
		if p.Topic == tp.Topic && p.Partition == tp.Partition && slices.Equal(p.Replicas, target) {
			continue
		}
		kept = append(kept, p)
	}
	if len(kept) == len(parts) {
		return nil
	}
	return c.writeZkReassignment(kept)
}

// processZkPartitionReassignment starts the reassignments listed in
// /admin/reassign_partitions (the legacy tool path); invalid entries are
// dropped from the znode.
func (c *Controller) processZkPartitionReassignment() error {
	parts, ok, err := c.readZkReassignment()
	if !ok {
		return nil
	}
	if err != nil {
		c.log.Error("invalid /admin/reassign_partitions; deleting it", "err", err)
		return c.writeZkReassignment(nil)
	}
	var failed []common.TopicPartition
	for _, p := range parts {
		tp := common.TopicPartition{Topic: p.Topic, Partition: p.Partition}
		cur, known := c.ctx.Assignment(tp)
		if !known || c.ctx.IsTopicQueuedForDeletion(tp.Topic) || len(p.Replicas) == 0 {
			failed = append(failed, tp)
			continue
		}
		if err := c.onPartitionReassignment(tp, cur.reassignTo(p.Replicas)); err != nil {
			if errors.Is(err, ErrControllerMoved) {
				return err
			}
			c.log.Error("partition reassignment failed", "topic", tp.Topic, "partition", tp.Partition, "err", err)
			failed = append(failed, tp)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	parts, _, err = c.readZkReassignment()
	if err != nil {
		return err
	}
	kept := parts[:0:0]
	for _, p := range parts {
		if !slices.Contains(failed, common.TopicPartition{Topic: p.Topic, Partition: p.Partition}) {
			kept = append(kept, p)
		}
	}
	return c.writeZkReassignment(kept)
}

// maybeCompleteReassignments checks reassigning partitions for completion
// (after ISR changes): done once every target replica is in the ISR.
func (c *Controller) maybeCompleteReassignments(tps []common.TopicPartition) error {
	for _, tp := range tps {
		if !c.ctx.beingReassigned[tp] {
			continue
		}
		a, _ := c.ctx.Assignment(tp)
		done, err := c.isReassignmentComplete(tp, a)
		if err != nil {
			return err
		}
		if done {
			if err := c.onPartitionReassignment(tp, a); err != nil {
				return err
			}
		}
	}
	return nil
}

// resumeReassignments restarts every in-progress reassignment (failover)
// or only those whose target includes one of brokers.
func (c *Controller) resumeReassignments(brokers []int32) error {
	for _, tp := range sortedKeys(c.ctx.beingReassigned) {
		a, ok := c.ctx.Assignment(tp)
		if !ok {
			continue
		}
		if brokers != nil && !slices.ContainsFunc(a.TargetReplicas(), func(r int32) bool { return slices.Contains(brokers, r) }) {
			continue
		}
		if err := c.onPartitionReassignment(tp, a); err != nil {
			if errors.Is(err, ErrControllerMoved) {
				return err
			}
			c.log.Error("resuming partition reassignment failed", "topic", tp.Topic, "partition", tp.Partition, "err", err)
		}
	}
	return nil
}

// --- API ---

type apiReassignmentEvent struct {
	targets map[common.TopicPartition][]int32 // nil slice = cancel
	reply   chan result[map[common.TopicPartition]error]
}

func (apiReassignmentEvent) state() string { return "AlterPartitionReassignment" }
func (e apiReassignmentEvent) preempt() {
	e.reply <- result[map[common.TopicPartition]error]{err: kerr.NotController}
}

type listReassignmentsEvent struct {
	partitions []common.TopicPartition // nil = all
	reply      chan result[map[common.TopicPartition]ReplicaAssignment]
}

func (listReassignmentsEvent) state() string { return "ListPartitionReassignment" }
func (e listReassignmentsEvent) preempt() {
	e.reply <- result[map[common.TopicPartition]ReplicaAssignment]{err: kerr.NotController}
}

// AlterPartitionReassignments starts, changes or (with a nil target)
// cancels reassignments. The per-partition errors are kerr values
// (nil = accepted); the overall error is kerr.NotController on a
// non-controller.
func (c *Controller) AlterPartitionReassignments(ctx context.Context, targets map[common.TopicPartition][]int32) (map[common.TopicPartition]error, error) {
	reply := make(chan result[map[common.TopicPartition]error], 1)
	return await(ctx, c, apiReassignmentEvent{targets: targets, reply: reply}, reply)
}

// ListPartitionReassignments returns the partitions (of partitions, or all
// when nil) with a reassignment in progress.
func (c *Controller) ListPartitionReassignments(ctx context.Context, partitions []common.TopicPartition) (map[common.TopicPartition]ReplicaAssignment, error) {
	reply := make(chan result[map[common.TopicPartition]ReplicaAssignment], 1)
	return await(ctx, c, listReassignmentsEvent{partitions: partitions, reply: reply}, reply)
}

func (c *Controller) processListReassignments(e listReassignmentsEvent) result[map[common.TopicPartition]ReplicaAssignment] {
	if !c.IsActive() {
		return result[map[common.TopicPartition]ReplicaAssignment]{err: kerr.NotController}
	}
	out := map[common.TopicPartition]ReplicaAssignment{}
	tps := e.partitions
	if tps == nil {
		tps = c.ctx.AllPartitions()
	}
	for _, tp := range tps {
		if a, ok := c.ctx.Assignment(tp); ok && a.IsBeingReassigned() {
			out[tp] = a
		}
	}
	return result[map[common.TopicPartition]ReplicaAssignment]{val: out}
}

func (c *Controller) processApiReassignment(e apiReassignmentEvent) (map[common.TopicPartition]error, error) {
	if !c.IsActive() {
		return nil, kerr.NotController
	}
	errs := map[common.TopicPartition]error{}
	toStart := map[common.TopicPartition]ReplicaAssignment{}
	for _, tp := range sortedKeys(e.targets) {
		target := e.targets[tp]
		cur, known := c.ctx.Assignment(tp)
		if !known || c.ctx.IsTopicQueuedForDeletion(tp.Topic) {
			errs[tp] = kerr.UnknownTopicOrPartition
			continue
		}
		if target == nil {
			if !cur.IsBeingReassigned() {
				errs[tp] = kerr.NoReassignmentInProgress
				continue
			}
			toStart[tp] = cur.reassignTo(cur.OriginReplicas())
			continue
		}
		if err := c.validateReassignmentTarget(cur, target); err != nil {
			errs[tp] = err
			continue
		}
		toStart[tp] = cur.reassignTo(target)
	}
	// The API wins over the znode.
	if len(toStart) > 0 {
		parts, ok, err := c.readZkReassignment()
		if err == nil && ok {
			kept := parts[:0:0]
			for _, p := range parts {
				if _, ok := toStart[common.TopicPartition{Topic: p.Topic, Partition: p.Partition}]; !ok {
					kept = append(kept, p)
				}
			}
			if len(kept) != len(parts) {
				if err := c.writeZkReassignment(kept); err != nil {
					return errs, err
				}
			}
		}
	}
	for _, tp := range sortedKeys(toStart) {
		if err := c.onPartitionReassignment(tp, toStart[tp]); err != nil {
			if errors.Is(err, ErrControllerMoved) {
				return errs, err
			}
			c.log.Error("partition reassignment failed", "topic", tp.Topic, "partition", tp.Partition, "err", err)
			errs[tp] = kerr.UnknownServerError
			continue
		}
		errs[tp] = nil
	}
	return errs, nil
}

func (c *Controller) validateReassignmentTarget(cur ReplicaAssignment, target []int32) error {
	if len(target) == 0 {
		return fmt.Errorf("%w: empty replica list", kerr.InvalidReplicaAssignment)
	}
	seen := map[int32]bool{}
	for _, r := range target {
		if r < 0 || seen[r] {
			return fmt.Errorf("%w: duplicate or negative replica in %v", kerr.InvalidReplicaAssignment, target)
		}
		seen[r] = true
	}
	for _, r := range minus(target, cur.OriginReplicas()) {
		if !c.ctx.IsLive(r) {
			return fmt.Errorf("%w: replica %d is not a live broker", kerr.InvalidReplicaAssignment, r)
		}
	}
	return nil
}
