package controller

// Log-directory failures: a broker whose log dir fails
// writes /log_dir_event_notification/log_dir_event_<seq>; the controller
// re-sends LeaderAndIsr for everything the broker hosts and learns from the
// per-partition KAFKA_STORAGE_ERROR answers which replicas are offline.

import (
	"errors"
	"fmt"
	"slices"

	"github.com/klassik/klassik/broker/common"

	"github.com/twmb/franz-go/pkg/kerr"
)

type logDirEventNotificationEvent struct{ noReply }

func (logDirEventNotificationEvent) state() string { return "LogDirChange" }

func (c *Controller) processLogDirEventNotification() error {
	children, ids, err := pendingNotifications(c.zk.GetAllLogDirEventNotifications, c.zk.GetBrokerIDsFromLogDirEvents)
	if err != nil {
		return err
	}
	// The notifications are deleted whatever happens next.
	defer func() {
		if derr := c.zk.DeleteLogDirEventNotifications(c.ctx.EpochZkVersion, children...); derr != nil {
			c.log.Warn("could not delete the log dir event notifications", "znodes", children, "err", derr)
		}
	}()
	slices.Sort(ids)
	if len(ids) == 0 {
		return nil
	}
	c.log.Info("log directory failure reported; re-sending leadership to learn the offline replicas", "brokers", ids)
	replicas, _ := c.splitDeleting(c.ctx.ReplicasOnBrokers(ids))
	_, err = c.replicaChange(replicas, OnlineReplica, fmt.Sprintf("log directory failure on brokers %v", ids))
	return err
}

// processLeaderAndIsrResponse learns offline replicas from a broker's
// answer: partitions answered
// KAFKA_STORAGE_ERROR are on an offline log dir; those answered NONE are not.
func (c *Controller) processLeaderAndIsrResponse(e leaderAndIsrResponseEvent) error {
	if err := kerr.ErrorForCode(e.resp.ErrorCode); err != nil {
		c.log.Warn("LeaderAndIsr failed on broker", "target_broker", e.broker, "err", err)
		return nil
	}
	byID := map[[16]byte]string{}
	for t, id := range c.ctx.topicIDs {
		byID[id] = t
	}
	offline := map[common.TopicPartition]bool{}
	online := map[common.TopicPartition]bool{}
	record := func(tp common.TopicPartition, code int16) {
		switch err := kerr.ErrorForCode(code); {
		case err == nil:
			online[tp] = true
		case errors.Is(err, kerr.KafkaStorageError):
			offline[tp] = true
		default:
			c.log.Debug("LeaderAndIsr partition error", "target_broker", e.broker, "topic", tp.Topic, "partition", tp.Partition, "err", err)
		}
	}
	for _, t := range e.resp.Topics {
		name, ok := byID[t.TopicID]
		if !ok {
			continue
		}
		for _, p := range t.Partitions {
			record(common.TopicPartition{Topic: name, Partition: p.Partition}, p.ErrorCode)
		}
	}
	for _, p := range e.resp.Partitions {
		record(common.TopicPartition{Topic: p.Topic, Partition: p.Partition}, p.ErrorCode)
	}
	prev := c.ctx.offlineDirs[e.broker]
	next := map[common.TopicPartition]bool{}
	for tp := range prev {
		if !online[tp] {
			next[tp] = true
		}
	}
	var newlyOffline []PartitionReplica
	for _, tp := range sortedKeys(offline) {
		if !prev[tp] {
			newlyOffline = append(newlyOffline, PartitionReplica{tp, e.broker})
		}
		next[tp] = true
	}
	c.ctx.offlineDirs[e.broker] = next
	if len(newlyOffline) == 0 {
		return nil
	}
	c.log.Warn("replicas on an offline log directory", "target_broker", e.broker, "replicas", len(newlyOffline))
	return c.onReplicasBecomeOffline(newlyOffline, fmt.Sprintf("log directory failure on broker %d", e.broker))
}
