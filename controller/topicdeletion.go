package controller

// TopicDeletionManager. Deletion is driven by
// /admin/delete_topics/<t>: partitions go Offline → NonExistent (brokers
// learn leader -2), replicas Offline → ReplicaDeletionStarted (StopReplica
// with delete=true), and once every replica reported success the topic's
// znodes are removed (fenced). Replicas on dead brokers make the topic
// ineligible until the broker returns.

import (
	"slices"
)

type topicDeletionManager struct {
	c *Controller
}

func (d *topicDeletionManager) ctx() *Context { return d.c.ctx }

// init is the failover bootstrap: queue the topics marked for deletion
// (or drop the markers when delete.topic.enable is false), ineligible while
// a replica is offline or a partition is being reassigned.
func (d *topicDeletionManager) init() error {
	c := d.c
	children, err := c.zk.GetTopicDeletions()
	if err != nil {
		return err
	}
	if !c.cfg.DeleteTopicEnable {
		return c.zk.DeleteTopicDeletions(c.ctx.EpochZkVersion, children...)
	}
	for _, t := range children {
		if !c.ctx.HasTopic(t) {
			continue
		}
		c.ctx.topicsToDelete[t] = true
		for _, r := range c.ctx.ReplicasForTopic(t) {
			if !c.ctx.IsReplicaOnline(r.Replica, r.TopicPartition, true) {
				c.ctx.deleteIneligible[t] = true
			}
		}
		for _, tp := range c.ctx.PartitionsForTopic(t) {
			if c.ctx.beingReassigned[tp] {
				c.ctx.deleteIneligible[t] = true
			}
		}
	}
	return nil
}

// processTopicDeletion is the /admin/delete_topics children handler.
func (c *Controller) processTopicDeletion() error {
	children, err := c.zk.GetTopicDeletions()
	if err != nil {
		return err
	}
	var queued []string
	for _, t := range children {
		if !c.ctx.HasTopic(t) {
			c.log.Info("ignoring deletion request for a non-existent topic", "topic", t)
			if err := c.zk.DeleteTopicDeletions(c.ctx.EpochZkVersion, t); err != nil {
				return err
			}
			continue
		}
		queued = append(queued, t)
	}
	if len(queued) == 0 {
		return nil
	}
	if !c.cfg.DeleteTopicEnable {
		c.log.Info("delete.topic.enable is false; removing deletion requests", "topics", queued)
		return c.zk.DeleteTopicDeletions(c.ctx.EpochZkVersion, queued...)
	}
	for _, t := range queued {
		if c.ctx.topicsToDelete[t] {
			continue
		}
		c.log.Info("topic queued for deletion", "topic", t)
		for _, tp := range c.ctx.PartitionsForTopic(t) {
			if c.ctx.beingReassigned[tp] {
				c.ctx.deleteIneligible[t] = true
			}
		}
		c.ctx.topicsToDelete[t] = true
	}
	return c.deletion.resume()
}

// resumeForTopics makes the topics eligible again and resumes (a broker
// hosting their replicas came back).
func (d *topicDeletionManager) resumeForTopics(topics map[string]bool) error {
	for t := range topics {
		if d.ctx().topicsToDelete[t] {
			delete(d.ctx().deleteIneligible, t)
		}
	}
	return d.resume()
}

// failReplicaDeletion marks replicas ReplicaDeletionIneligible and their
// topics ineligible.
func (d *topicDeletionManager) failReplicaDeletion(replicas []PartitionReplica) error {
	var queued []PartitionReplica
	for _, r := range replicas {
		if d.ctx().topicsToDelete[r.Topic] {
			queued = append(queued, r)
			d.ctx().deleteIneligible[r.Topic] = true
		}
	}
	if _, err := d.c.replicaChange(queued, ReplicaDeletionIneligible, "replica deletion failed"); err != nil {
		return err
	}
	return d.resume()
}

// completeReplicaDeletion marks replicas ReplicaDeletionSuccessful.
func (d *topicDeletionManager) completeReplicaDeletion(replicas []PartitionReplica) error {
	if _, err := d.c.replicaChange(replicas, ReplicaDeletionSuccessful, "replica deletion succeeded"); err != nil {
		return err
	}
	return d.resume()
}

func (d *topicDeletionManager) replicasInState(t string, s ReplicaState) []PartitionReplica {
	var out []PartitionReplica
	for _, r := range d.ctx().ReplicasForTopic(t) {
		if d.ctx().replicaStates[r] == s {
			out = append(out, r)
		}
	}
	return out
}

// resume is ResumeDeletions: retry failed replica deletions and start
// every queued topic that is eligible.
func (d *topicDeletionManager) resume() error {
	ctx := d.ctx()
	topics := make([]string, 0, len(ctx.topicsToDelete))
	for t := range ctx.topicsToDelete {
		topics = append(topics, t)
	}
	slices.Sort(topics)
	for _, t := range topics {
		if !ctx.topicsToDelete[t] {
			continue
		}
		all := ctx.ReplicasForTopic(t)
		if len(d.replicasInState(t, ReplicaDeletionSuccessful)) == len(all) {
			if err := d.completeDeleteTopic(t); err != nil {
				return err
			}
			continue
		}
		started := len(d.replicasInState(t, ReplicaDeletionStarted)) > 0
		if !started {
			if inel := d.replicasInState(t, ReplicaDeletionIneligible); len(inel) > 0 {
				// Retry: Ineligible → Offline, so deletion can start again.
				delete(ctx.deleteIneligible, t)
				if _, err := d.c.replicaChange(inel, OfflineReplica, "retrying topic deletion"); err != nil {
					return err
				}
			}
		}
		if !started && !ctx.deleteIneligible[t] {
			if err := d.onTopicDeletion(t); err != nil {
				return err
			}
		}
	}
	return nil
}

// onTopicDeletion starts (or restarts) deleting one topic.
func (d *topicDeletionManager) onTopicDeletion(t string) error {
	c, ctx := d.c, d.ctx()
	tps := ctx.PartitionsForTopic(t)
	if !ctx.deletionStarted[t] {
		ctx.deletionStarted[t] = true
		if _, err := c.partitionChange(tps, OfflinePartition, nil, "topic deletion"); err != nil {
			return err
		}
		if _, err := c.partitionChange(tps, NonExistentPartition, nil, "topic deletion"); err != nil {
			return err
		}
	}
	// Brokers learn leader -2 and drop the topic from their caches.
	if err := c.sendUpdateMetadata(ctx.LiveOrShuttingDownBrokerIDs(), tps); err != nil {
		return err
	}
	var dead, live []PartitionReplica
	for _, r := range ctx.ReplicasForTopic(t) {
		if ctx.replicaStates[r] == ReplicaDeletionSuccessful {
			continue
		}
		if ctx.IsReplicaOnline(r.Replica, r.TopicPartition, true) {
			live = append(live, r)
		} else {
			dead = append(dead, r)
		}
	}
	if len(dead) > 0 {
		ctx.deleteIneligible[t] = true
		if _, err := c.replicaChange(dead, ReplicaDeletionIneligible, "topic deletion: replica on a dead broker"); err != nil {
			return err
		}
	}
	if _, err := c.replicaChange(live, OfflineReplica, "topic deletion"); err != nil {
		return err
	}
	_, err := c.replicaChange(live, ReplicaDeletionStarted, "topic deletion")
	return err
}

// completeDeleteTopic removes the topic's znodes (fenced) and forgets it.
func (d *topicDeletionManager) completeDeleteTopic(t string) error {
	c, ctx := d.c, d.ctx()
	c.unwatchTopic(t)
	if _, err := c.replicaChange(d.replicasInState(t, ReplicaDeletionSuccessful), NonExistentReplica, "topic deletion complete"); err != nil {
		return err
	}
	v := ctx.EpochZkVersion
	if err := c.zk.DeleteTopicZNode(v, t); err != nil {
		return err
	}
	if err := c.zk.DeleteTopicConfigs(v, t); err != nil {
		return err
	}
	if err := c.zk.DeleteTopicDeletions(v, t); err != nil {
		return err
	}
	ctx.RemoveTopic(t)
	c.log.Info("deletion of topic successfully completed", "topic", t)
	return nil
}

func (c *Controller) processTopicDeletionStopReplicaResponse(e topicDeletionStopReplicaResponseEvent) error {
	if c.deletion == nil {
		return nil
	}
	var failed, ok []PartitionReplica
	for _, tp := range sortedKeys(e.errs) {
		if !c.ctx.deletionStarted[tp.Topic] {
			continue
		}
		r := PartitionReplica{tp, e.broker}
		if c.ctx.replicaStates[r] != ReplicaDeletionStarted {
			continue
		}
		if e.errs[tp] != nil {
			failed = append(failed, r)
		} else {
			ok = append(ok, r)
		}
	}
	if len(failed) > 0 {
		if err := c.deletion.failReplicaDeletion(failed); err != nil {
			return err
		}
	}
	if len(ok) > 0 {
		return c.deletion.completeReplicaDeletion(ok)
	}
	return nil
}
