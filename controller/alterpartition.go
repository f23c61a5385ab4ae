package controller

// AlterPartition (KIP-497, IBP ≥ 2.7): a partition leader asks the
// controller to write an ISR change. Klassik's
// brokers use the classic path by default (leaders write ZooKeeper and
// notify through /isr_change_notification); this is the controller side of the newer protocol.

import (
	"context"
	"errors"
	"slices"

	"github.com/klassik/klassik/broker/common"

	"github.com/go-zookeeper/zk"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type alterPartitionEvent struct {
	req   *kmsg.AlterPartitionRequest
	reply chan result[*kmsg.AlterPartitionResponse]
}

func (alterPartitionEvent) state() string { return "IsrChange" }

func (e alterPartitionEvent) preempt() {
	resp := e.req.ResponseKind().(*kmsg.AlterPartitionResponse)
	resp.ErrorCode = kerr.NotController.Code
	e.reply <- result[*kmsg.AlterPartitionResponse]{val: resp}
}

// AlterPartition applies a leader's ISR change request and returns the
// response to send (top-level NOT_CONTROLLER on a non-controller,
// STALE_BROKER_EPOCH for an old incarnation, else per-partition results).
func (c *Controller) AlterPartition(ctx context.Context, req *kmsg.AlterPartitionRequest) (*kmsg.AlterPartitionResponse, error) {
	reply := make(chan result[*kmsg.AlterPartitionResponse], 1)
	return await(ctx, c, alterPartitionEvent{req: req, reply: reply}, reply)
}

type alterPartitionItem struct {
	tp        common.TopicPartition
	topicIdx  int
	proposed  LeaderAndIsr
	err       error
	result    LeaderAndIsr
	succeeded bool
}

func (c *Controller) processAlterPartition(req *kmsg.AlterPartitionRequest) (*kmsg.AlterPartitionResponse, error) {
	resp := req.ResponseKind().(*kmsg.AlterPartitionResponse)
	if !c.IsActive() {
		resp.ErrorCode = kerr.NotController.Code
		return resp, nil
	}
	cached, ok := c.ctx.BrokerEpoch(req.BrokerID)
	if !ok || cached != req.BrokerEpoch {
		resp.ErrorCode = kerr.StaleBrokerEpoch.Code
		return resp, nil
	}
	items := c.checkAlterPartitionItems(req, resp)
	if err := c.writeAlterPartitionItems(items); err != nil {
		return nil, err
	}
	return resp, c.answerAlterPartition(items, resp)
}

// checkAlterPartitionItems reads the request's partitions (by topic id from
// v2) and checks each proposed change against the controller's view.
func (c *Controller) checkAlterPartitionItems(req *kmsg.AlterPartitionRequest, resp *kmsg.AlterPartitionResponse) []*alterPartitionItem {
	byID := map[[16]byte]string{}
	for t, id := range c.ctx.topicIDs {
		byID[id] = t
	}
	var items []*alterPartitionItem
	resp.Topics = make([]kmsg.AlterPartitionResponseTopic, len(req.Topics))
	for ti, t := range req.Topics {
		rt := &resp.Topics[ti]
		rt.Topic, rt.TopidID = t.Topic, t.TopicID
		name := t.Topic
		unknownID := false
		if req.Version >= 2 {
			n, ok := byID[t.TopicID]
			name, unknownID = n, !ok
		}
		for _, p := range t.Partitions {
			it := &alterPartitionItem{tp: common.TopicPartition{Topic: name, Partition: p.Partition}, topicIdx: ti}
			items = append(items, it)
			if unknownID {
				it.err = kerr.UnknownTopicID
				continue
			}
			isr := p.NewISR
			if req.Version >= 3 {
				isr = nil
				for _, e := range p.NewEpochISR {
					isr = append(isr, e.BrokerID)
				}
			}
			it.proposed = LeaderAndIsr{Leader: req.BrokerID, LeaderEpoch: p.LeaderEpoch, ISR: isr, LeaderRecoveryState: p.LeaderRecoveryState, PartitionEpoch: p.PartitionEpoch}
			it.result, it.succeeded, it.err = c.checkAlterPartition(it.tp, it.proposed, req.Version)
		}
	}
	return items
}

// writeAlterPartitionItems writes every accepted change, conditionally on
// the partition epoch; a lost race answers INVALID_UPDATE_VERSION.
func (c *Controller) writeAlterPartitionItems(items []*alterPartitionItem) error {
	updates := map[common.TopicPartition]LeaderAndIsr{}
	for _, it := range items {
		if it.err == nil && !it.succeeded {
			updates[it.tp] = it.proposed
		}
	}
	if len(updates) > 0 {
		versions, errs, err := c.psm.store.UpdateStates(updates, c.ctx.Epoch)
		if err != nil {
			return err
		}
		for _, it := range items {
			if _, ok := updates[it.tp]; !ok || it.err != nil {
				continue
			}
			if e := errs[it.tp]; e != nil {
				if errors.Is(e, zk.ErrBadVersion) {
					it.err = kerr.InvalidUpdateVersion
				} else {
					it.err = kerr.UnknownServerError
				}
				continue
			}
			l := LeaderIsrAndControllerEpoch{LeaderAndIsr: it.proposed, ControllerEpoch: c.ctx.Epoch}
			l.PartitionEpoch = versions[it.tp]
			c.ctx.PutLeadership(it.tp, l)
			it.result, it.succeeded = l.LeaderAndIsr, true
		}
	}
	return nil
}

// answerAlterPartition fills in each partition's outcome, tells every
// broker the new ISRs and completes reassignments that were waiting for
// them.
func (c *Controller) answerAlterPartition(items []*alterPartitionItem, resp *kmsg.AlterPartitionResponse) error {
	var all []common.TopicPartition
	for _, it := range items {
		if _, ok := c.ctx.Assignment(it.tp); ok {
			all = append(all, it.tp)
		}
		rp := kmsg.NewAlterPartitionResponseTopicPartition()
		rp.Partition = it.tp.Partition
		if it.err != nil {
			var ke *kerr.Error
			if errors.As(it.err, &ke) {
				rp.ErrorCode = ke.Code
			} else {
				rp.ErrorCode = kerr.UnknownServerError.Code
			}
		} else {
			rp.LeaderID, rp.LeaderEpoch, rp.ISR = it.result.Leader, it.result.LeaderEpoch, slices.Clone(it.result.ISR)
			rp.LeaderRecoveryState, rp.PartitionEpoch = it.result.LeaderRecoveryState, it.result.PartitionEpoch
		}
		resp.Topics[it.topicIdx].Partitions = append(resp.Topics[it.topicIdx].Partitions, rp)
	}
	if len(all) > 0 {
		if err := c.sendUpdateMetadata(c.ctx.LiveOrShuttingDownBrokerIDs(), all); err != nil {
			return err
		}
	}
	var done []common.TopicPartition
	for _, it := range items {
		if it.succeeded && it.err == nil {
			done = append(done, it.tp)
		}
	}
	return c.maybeCompleteReassignments(done)
}

// checkAlterPartition runs the per-partition checks in Kafka's order:
// known partition, leader is the requester, leader epoch and partition
// epoch match (an identical retry answers the current state), valid ISR. succeeded reports an idempotent retry answered with the current
// state.
func (c *Controller) checkAlterPartition(tp common.TopicPartition, p LeaderAndIsr, version int16) (LeaderAndIsr, bool, error) {
	cur, ok := c.ctx.Leadership(tp)
	switch {
	case !ok:
		return LeaderAndIsr{}, false, kerr.UnknownTopicOrPartition
	case p.PartitionEpoch > cur.PartitionEpoch || p.LeaderEpoch > cur.LeaderEpoch:
		return LeaderAndIsr{}, false, kerr.NotController
	case p.LeaderEpoch < cur.LeaderEpoch:
		return LeaderAndIsr{}, false, kerr.FencedLeaderEpoch
	case p.Leader != cur.Leader:
		// Klassik's hardening: only the current leader may change the ISR.
		return LeaderAndIsr{}, false, kerr.InvalidRequest
	case slices.Equal(p.ISR, cur.ISR) && p.LeaderRecoveryState == cur.LeaderRecoveryState && p.PartitionEpoch <= cur.PartitionEpoch:
		return cur.LeaderAndIsr, true, nil
	case p.PartitionEpoch < cur.PartitionEpoch:
		return LeaderAndIsr{}, false, kerr.InvalidUpdateVersion
	case p.LeaderRecoveryState != RecoveryRecovered && p.LeaderRecoveryState != RecoveryRecovering:
		return LeaderAndIsr{}, false, kerr.InvalidRequest
	case !validProposedIsr(p.Leader, p.ISR, c.ctx.Replicas(tp)):
		// Klassik's hardening: the leader stays in the
		// ISR, which holds assigned replicas only, each once.
		return LeaderAndIsr{}, false, kerr.InvalidRequest
	case p.LeaderRecoveryState == RecoveryRecovering && len(p.ISR) > 1:
		return LeaderAndIsr{}, false, kerr.InvalidRequest
	case cur.LeaderRecoveryState == RecoveryRecovered && p.LeaderRecoveryState == RecoveryRecovering:
		return LeaderAndIsr{}, false, kerr.InvalidRequest
	}
	for _, r := range p.ISR {
		if !c.ctx.IsLive(r) {
			if version >= 2 {
				return LeaderAndIsr{}, false, kerr.IneligibleReplica
			}
			return LeaderAndIsr{}, false, kerr.OperationNotAttempted
		}
	}
	return LeaderAndIsr{}, false, nil
}

func validProposedIsr(leader int32, isr, replicas []int32) bool {
	if !slices.Contains(isr, leader) {
		return false
	}
	seen := map[int32]bool{}
	for _, r := range isr {
		if seen[r] || !slices.Contains(replicas, r) {
			return false
		}
		seen[r] = true
	}
	return true
}
