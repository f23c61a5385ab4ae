package controller

// ISR changes written by partition leaders themselves (the classic path,
// before AlterPartition): a leader that shrank or expanded the ISR in the
// state znode writes /isr_change_notification/isr_change_<seq>; the
// controller re-reads those partitions' states, tells every broker through
// UpdateMetadata, checks reassignments waiting for the new replicas, and
// deletes the notifications.

import "github.com/klassik/klassik/broker/common"

func (c *Controller) processIsrChangeNotification() error {
	children, err := c.zk.GetAllIsrChangeNotifications()
	if err != nil {
		return err
	}
	notified, err := c.zk.GetPartitionsFromIsrChangeNotifications(children)
	if err != nil {
		return err
	}
	changed := map[common.TopicPartition]bool{}
	for _, tp := range notified {
		if _, ok := c.ctx.Assignment(tp); ok {
			changed[tp] = true
		}
	}
	tps := sortedKeys(changed)
	if len(tps) > 0 {
		states, err := c.psm.store.ReadStates(tps)
		if err != nil {
			return err
		}
		for tp, l := range states {
			c.ctx.PutLeadership(tp, l)
		}
		if err := c.sendUpdateMetadata(c.ctx.LiveOrShuttingDownBrokerIDs(), tps); err != nil {
			return err
		}
		if err := c.maybeCompleteReassignments(tps); err != nil {
			return err
		}
	}
	return c.zk.DeleteIsrChangeNotifications(c.ctx.EpochZkVersion, children...)
}
