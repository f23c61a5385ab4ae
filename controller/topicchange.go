package controller

// Topics and partitions (Kafka's TopicChange and PartitionModifications
// events, onNewPartitionCreation): the controller watches /brokers/topics
// and each topic znode; a new topic or new partitions go NewPartition ->
// OnlinePartition (leader = first live replica of the assignment, ISR = the
// live replicas) and their replicas NewReplica -> OnlineReplica.

import (
	"errors"
	"fmt"
	"slices"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

func (c *Controller) processTopicChange() error {
	topics, err := c.zk.GetAllTopics()
	if err != nil {
		return err
	}
	now := map[string]bool{}
	for _, t := range topics {
		now[t] = true
	}
	var added, deleted []string
	for t := range now {
		if !c.ctx.HasTopic(t) {
			added = append(added, t)
		}
	}
	for _, t := range c.ctx.AllTopics() {
		if !now[t] {
			deleted = append(deleted, t)
		}
	}
	slices.Sort(added)
	for _, t := range deleted {
		c.unwatchTopic(t)
		c.ctx.RemoveTopic(t)
	}
	var newPartitions []common.TopicPartition
	for _, t := range added {
		c.ctx.AddTopic(t)
		c.watchTopic(t)
		if err := c.loadTopicAssignment(t); err != nil {
			return err
		}
		newPartitions = append(newPartitions, c.ctx.PartitionsForTopic(t)...)
	}
	if len(added)+len(deleted) > 0 {
		c.log.Info("topic change", "new", added, "deleted", deleted)
	}
	if len(newPartitions) > 0 {
		return c.onNewPartitionCreation(newPartitions)
	}
	return nil
}

func (c *Controller) processPartitionModifications(t string) error {
	if !c.ctx.HasTopic(t) {
		return nil
	}
	ta, version, err := c.zk.GetTopicAssignment(t)
	if isNoNode(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("controller: reading topic %s: %w", t, err)
	}
	var toAdd []common.TopicPartition
	for p := range ta.Partitions {
		tp := common.TopicPartition{Topic: t, Partition: p}
		if _, ok := c.ctx.Assignment(tp); !ok {
			toAdd = append(toAdd, tp)
		}
	}
	if len(toAdd) == 0 {
		return nil
	}
	sortTPs(toAdd)
	if c.ctx.IsTopicQueuedForDeletion(t) {
		// Undo the addition: rewrite the znode with the known partitions.
		c.log.Info("restoring the partition assignment of a topic queued for deletion", "topic", t, "ignored", toAdd)
		_, err := c.zk.SetTopicAssignment(c.ctx.EpochZkVersion, t, c.contextTopicAssignment(t, ta.TopicID), version)
		return err
	}
	c.log.Info("new partitions for topic", "topic", t, "partitions", toAdd)
	for _, tp := range toAdd {
		c.ctx.UpdateAssignment(tp, assignmentFromZk(ta, tp.Partition))
	}
	return c.onNewPartitionCreation(toAdd)
}

// onNewPartitionCreation takes new partitions NewPartition ->
// OnlinePartition and their replicas NewReplica -> OnlineReplica.
func (c *Controller) onNewPartitionCreation(tps []common.TopicPartition) error {
	var replicas []PartitionReplica
	for _, tp := range tps {
		for _, r := range c.ctx.Replicas(tp) {
			replicas = append(replicas, PartitionReplica{tp, r})
		}
	}
	reason := "new partition creation"
	if _, err := c.partitionChange(tps, NewPartition, nil, reason); err != nil {
		return err
	}
	if _, err := c.replicaChange(replicas, NewReplica, reason); err != nil {
		return err
	}
	if _, err := c.partitionChange(tps, OnlinePartition, &electionSpec{strategy: OfflineElection}, reason); err != nil {
		return err
	}
	_, err := c.replicaChange(replicas, OnlineReplica, reason)
	return err
}

func (c *Controller) watchTopic(t string) {
	if _, ok := c.topicWatches[t]; ok {
		return
	}
	c.topicWatches[t] = c.zk.WatchData(zkpaths.TopicPath(t), func() { c.em.put(partitionModificationsEvent{topic: t}) })
}

func (c *Controller) unwatchTopic(t string) {
	if cancel, ok := c.topicWatches[t]; ok {
		cancel()
		delete(c.topicWatches, t)
	}
}

// readTopicAssignment reads /brokers/topics/<t>, back-filling a topic id
// (fenced) when it has none (IBP ≥ 2.8 behaviour).
func (c *Controller) readTopicAssignment(t string) (zkpaths.TopicAssignment, bool, error) {
	ta, version, err := c.zk.GetTopicAssignment(t)
	if isNoNode(err) {
		return zkpaths.TopicAssignment{}, false, nil
	}
	if errors.Is(err, zkclient.ErrUndecodable) {
		c.log.Error("ignoring an undecodable topic znode", "topic", t, "err", err)
		return zkpaths.TopicAssignment{}, false, nil
	}
	if err != nil {
		return zkpaths.TopicAssignment{}, false, err
	}
	if ta.TopicID == "" {
		ta.TopicID = zkpaths.RandomUUID()
		ta.Version = zkpaths.TopicAssignmentVersion
		if _, err := c.zk.SetTopicAssignment(c.ctx.EpochZkVersion, t, ta, version); err != nil {
			if errors.Is(err, ErrControllerMoved) {
				return ta, false, err
			}
			// Someone rewrote the znode meanwhile; its data watch brings us back.
			c.log.Warn("could not back-fill the topic id", "topic", t, "err", err)
			ta.TopicID = ""
		}
	}
	return ta, true, nil
}

func assignmentFromZk(ta zkpaths.TopicAssignment, p int32) ReplicaAssignment {
	return ReplicaAssignment{Replicas: slices.Clone(ta.Partitions[p]), AddingReplicas: slices.Clone(ta.Adding[p]), RemovingReplicas: slices.Clone(ta.Removing[p])}
}

func (c *Controller) loadTopicAssignment(t string) error {
	ta, ok, err := c.readTopicAssignment(t)
	if err != nil || !ok {
		return err
	}
	c.ctx.SetTopicID(t, decodeTopicID(ta.TopicID))
	for p := range ta.Partitions {
		c.ctx.UpdateAssignment(common.TopicPartition{Topic: t, Partition: p}, assignmentFromZk(ta, p))
	}
	return nil
}

// processTopicUncleanLeaderElectionEnable elects leaders for the topic's
// leaderless partitions once unclean election was enabled for it.
func (c *Controller) processTopicUncleanLeaderElectionEnable(topic string) error {
	if !c.ctx.HasTopic(topic) || c.ctx.IsTopicQueuedForDeletion(topic) {
		return nil
	}
	return c.triggerOnlineForTopic(topic, "unclean.leader.election.enable turned on for the topic")
}
