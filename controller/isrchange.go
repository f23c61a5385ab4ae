package controller

// ISR changes written by partition leaders themselves (the classic path,
// before AlterPartition): a leader that shrank or expanded the ISR in the
// state znode writes /isr_change_notification/isr_change_<seq>; the
// controller re-reads those partitions' states, tells every broker through
// UpdateMetadata, checks reassignments waiting for the new replicas, and
// deletes the notifications.

import "github.com/klassik/klassik/broker/common"

// pendingNotifications lists a notification queue (the sequential znodes
// brokers write under /isr_change_notification or
// /log_dir_event_notification) and reads what they carry; the caller
// deletes the listed znodes once it has handled them.
func pendingNotifications[T any](list func() ([]string, error), read func([]string) ([]T, error)) ([]string, []T, error) {
	children, err := list()
	if err != nil {
		return nil, nil, err
	}
	items, err := read(children)
	if err != nil {
		return nil, nil, err
	}
	return children, items, nil
}

func (c *Controller) processIsrChangeNotification() error {
	children, notified, err := pendingNotifications(c.zk.GetAllIsrChangeNotifications, c.zk.GetPartitionsFromIsrChangeNotifications)
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
