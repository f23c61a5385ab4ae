package controller

// Broker membership (Kafka's BrokerChange and BrokerModifications events,
// onBrokerStartup, onBrokerFailure): the controller watches /brokers/ids,
// compares the registrations with its cached live brokers, and for new,
// bounced (re-registered with a larger czxid) and dead brokers updates the
// channel manager, the context and the replicas' states. A dead leader's
// partitions get a new leader before the dead replicas leave the ISR.

import (
	"fmt"
	"slices"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/zkpaths"
)

func (c *Controller) processBrokerChange() error {
	current, err := c.readBrokers()
	if err != nil {
		return err
	}
	var newIDs, deadIDs, bouncedIDs []int32
	for id, b := range current {
		old, known := c.ctx.LiveOrShuttingDownBroker(id)
		switch {
		case !known:
			newIDs = append(newIDs, id)
		case b.Epoch > old.Epoch:
			bouncedIDs = append(bouncedIDs, id)
		}
	}
	for _, id := range c.ctx.LiveOrShuttingDownBrokerIDs() {
		if _, ok := current[id]; !ok {
			deadIDs = append(deadIDs, id)
		}
	}
	slices.Sort(newIDs)
	slices.Sort(bouncedIDs)
	slices.Sort(deadIDs)
	if len(newIDs)+len(bouncedIDs)+len(deadIDs) == 0 {
		return nil
	}
	c.log.Info("broker change", "new", newIDs, "dead", deadIDs, "bounced", bouncedIDs, "live", sortedMapKeys(current))
	for _, id := range newIDs {
		c.channels.addBroker(current[id])
	}
	for _, id := range bouncedIDs {
		c.channels.removeBroker(id)
		c.channels.addBroker(current[id])
	}
	for _, id := range deadIDs {
		c.channels.removeBroker(id)
	}
	if err := c.brokersUp(newIDs, current); err != nil {
		return err
	}
	// A bounced broker (a newer registration epoch) fails and starts again.
	if err := c.brokersDown(bouncedIDs); err != nil {
		return err
	}
	if err := c.brokersUp(bouncedIDs, current); err != nil {
		return err
	}
	return c.brokersDown(deadIDs)
}

// brokersUp caches ids (registered as current has them) as live and runs
// onBrokerStartup for them; nothing when ids is empty.
func (c *Controller) brokersUp(ids []int32, current map[int32]Broker) error {
	if len(ids) == 0 {
		return nil
	}
	for _, id := range ids {
		c.ctx.AddLiveBroker(current[id])
	}
	return c.onBrokerStartup(ids)
}

// brokersDown drops ids from the live brokers and runs onBrokerFailure
// for them; nothing when ids is empty.
func (c *Controller) brokersDown(ids []int32) error {
	if len(ids) == 0 {
		return nil
	}
	for _, id := range ids {
		c.ctx.RemoveLiveBroker(id)
	}
	return c.onBrokerFailure(ids)
}

func (c *Controller) onBrokerStartup(newIDs []int32) error {
	c.log.Info("new broker startup callback", "brokers", newIDs)
	var existing []int32
	for _, id := range c.ctx.LiveOrShuttingDownBrokerIDs() {
		if !slices.Contains(newIDs, id) {
			existing = append(existing, id)
		}
	}
	if err := c.sendUpdateMetadata(existing, nil); err != nil {
		return err
	}
	var withLeadership []common.TopicPartition
	for _, tp := range c.ctx.AllPartitions() {
		if _, ok := c.ctx.Leadership(tp); ok && !c.ctx.IsTopicQueuedForDeletion(tp.Topic) {
			withLeadership = append(withLeadership, tp)
		}
	}
	if err := c.sendUpdateMetadata(newIDs, withLeadership); err != nil {
		return err
	}
	live, deleting := c.splitDeleting(c.ctx.ReplicasOnBrokers(newIDs))
	if _, err := c.replicaChange(live, OnlineReplica, fmt.Sprintf("broker %v started", newIDs)); err != nil {
		return err
	}
	if err := c.triggerOnline(fmt.Sprintf("broker %v started", newIDs)); err != nil {
		return err
	}
	if err := c.resumeReassignments(newIDs); err != nil {
		return err
	}
	if len(deleting) > 0 && c.deletion != nil {
		topics := map[string]bool{}
		for _, r := range deleting {
			topics[r.Topic] = true
		}
		if err := c.deletion.resumeForTopics(topics); err != nil {
			return err
		}
	}
	for _, id := range newIDs {
		c.watchBroker(id)
	}
	return nil
}

func (c *Controller) onBrokerFailure(dead []int32) error {
	c.log.Info("broker failure callback", "brokers", dead)
	if err := c.onReplicasBecomeOffline(c.ctx.ReplicasOnBrokers(dead), fmt.Sprintf("broker %v failed", dead)); err != nil {
		return err
	}
	for _, id := range dead {
		if cancel, ok := c.brokerWatches[id]; ok {
			cancel()
			delete(c.brokerWatches, id)
		}
	}
	return nil
}

// splitDeleting splits replicas into those of topics queued for deletion
// and the others, keeping their order.
func (c *Controller) splitDeleting(replicas []PartitionReplica) (others, deleting []PartitionReplica) {
	for _, r := range replicas {
		if c.ctx.IsTopicQueuedForDeletion(r.Topic) {
			deleting = append(deleting, r)
		} else {
			others = append(others, r)
		}
	}
	return others, deleting
}

// onReplicasBecomeOffline handles replicas that went offline (their
// broker died, or their log directory failed), with Kafka's semantics:
// the partitions without a live leader are elected first (the offline
// strategy: a live ISR member, or any live replica if unclean election is
// on; one conditional write each with the ISR's live members and the
// leader epoch one higher), then the offline replicas leave the other
// ISRs (a leader among them leaves leader -1 behind when no election was
// possible). Kafka sends the elections and the ISR shrinks as two rounds
// and re-reads every elected partition's state znode before finding
// nothing to shrink there; here one batch carries both (each broker gets
// one LeaderAndIsr naming each of its partitions once, and one
// UpdateMetadata), and the elected partitions' state is taken from the
// cache, as in a controller failover (electPending, offlineAfterElection).
func (c *Controller) onReplicasBecomeOffline(replicas []PartitionReplica, reason string) error {
	others, deleting := c.splitDeleting(replicas)
	var offlineLeader []common.TopicPartition
	for _, tp := range c.ctx.AllPartitions() {
		l, ok := c.ctx.Leadership(tp)
		if !ok || c.ctx.IsTopicQueuedForDeletion(tp.Topic) {
			continue
		}
		if !c.ctx.IsReplicaOnline(l.Leader, tp, false) {
			offlineLeader = append(offlineLeader, tp)
		}
	}
	if err := c.batch.newBatch(); err != nil {
		return fmt.Errorf("%w: %v", errIllegalState, err)
	}
	if _, err := c.psm.handleStateChanges(offlineLeader, OfflinePartition, nil, reason); err != nil {
		c.batch.clear()
		return err
	}
	elected, err := c.psm.electPending(reason)
	if err != nil {
		c.batch.clear()
		return err
	}
	// The new leaders go out before the ISR shrinks are written: clients
	// wait for leaders, not for ISRs.
	c.sendBatch()
	if err := c.batch.newBatch(); err != nil {
		return fmt.Errorf("%w: %v", errIllegalState, err)
	}
	if _, err := c.rsm.offlineAfterElection(others, elected, reason); err != nil {
		c.batch.clear()
		return err
	}
	c.sendBatch()
	if len(deleting) > 0 && c.deletion != nil {
		if err := c.deletion.failReplicaDeletion(deleting); err != nil {
			return err
		}
	}
	if len(offlineLeader) == 0 && len(others) == 0 {
		return c.sendUpdateMetadata(c.ctx.LiveOrShuttingDownBrokerIDs(), nil)
	}
	return nil
}

func (c *Controller) processBrokerModification(id int32) error {
	info, ok, err := c.zk.GetBroker(id)
	if err != nil || !ok {
		return err
	}
	b := brokerFromZk(info)
	old, known := c.ctx.LiveOrShuttingDownBroker(id)
	if !known || sameEndpoints(old, b) {
		return nil
	}
	b.Epoch = old.Epoch
	c.log.Info("broker endpoints changed", "changed_broker", id)
	c.ctx.AddLiveBroker(b)
	oldEP, _ := interBrokerEndpoint(old, c.cfg.InterBrokerListener)
	newEP, _ := interBrokerEndpoint(b, c.cfg.InterBrokerListener)
	if oldEP != newEP {
		// Reconnect to the new address (queued requests are dropped; the
		// UpdateMetadata below and later batches carry the current state).
		c.channels.removeBroker(id)
		c.channels.addBroker(b)
	}
	return c.sendUpdateMetadata(c.ctx.LiveOrShuttingDownBrokerIDs(), nil)
}

// readBrokers reads every registration; unreadable ones are skipped by the
// client with a warning.
func (c *Controller) readBrokers() (map[int32]Broker, error) {
	infos, err := c.zk.GetAllBrokers()
	if err != nil {
		return nil, err
	}
	out := make(map[int32]Broker, len(infos))
	for _, info := range infos {
		out[info.ID] = brokerFromZk(info)
	}
	return out, nil
}

// brokerFromZk is the controller's view of a registration; its epoch is
// the registration znode's czxid.
func brokerFromZk(info zkpaths.BrokerInfo) Broker {
	b := Broker{ID: info.ID, Epoch: info.Epoch}
	if info.Rack != "" {
		r := info.Rack
		b.Rack = &r
	}
	for _, ep := range info.Endpoints {
		b.Endpoints = append(b.Endpoints, Endpoint{Listener: ep.ListenerName, Host: ep.Host, Port: ep.Port, SecurityProtocol: securityProtocolID(ep.SecurityProtocol)})
	}
	return b
}

func securityProtocolID(name string) int16 {
	switch name {
	case "SSL":
		return 1
	case "SASL_PLAINTEXT":
		return 2
	case "SASL_SSL":
		return 3
	}
	return 0
}

func (c *Controller) watchBroker(id int32) {
	if _, ok := c.brokerWatches[id]; ok {
		return
	}
	c.brokerWatches[id] = c.zk.WatchData(zkpaths.BrokerIDPath(id), func() { c.em.put(brokerModificationsEvent{id: id}) })
}
