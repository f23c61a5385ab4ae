package controller

// Controlled shutdown (Kafka's ControlledShutdown event): a broker about to
// stop asks the controller to move leadership away first. The controller
// marks it shutting down, elects new leaders for the partitions it leads
// (from the ISR minus the broker), stops its follower replicas and
// answers with the partitions it still leads; the broker retries until that
// list is empty. Partitions with a single replica are left alone.

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klassik/klassik/broker/common"
)

// ControlledShutdown moves leadership away from brokerID and returns the partitions it still leads. Errors are kerr values:
// StaleControllerEpoch when this broker is not the controller,
// StaleBrokerEpoch, BrokerNotAvailable.
func (c *Controller) ControlledShutdown(ctx context.Context, brokerID int32, brokerEpoch int64) ([]common.TopicPartition, error) {
	reply := make(chan result[[]common.TopicPartition], 1)
	return await(ctx, c, controlledShutdownEvent{id: brokerID, brokerEpoch: brokerEpoch, reply: reply}, reply)
}

func (c *Controller) processControlledShutdown(id int32, brokerEpoch int64) ([]common.TopicPartition, error) {
	if !c.IsActive() {
		return nil, kerr.StaleControllerEpoch
	}
	cached, ok := c.ctx.BrokerEpoch(id)
	if brokerEpoch != -1 && ok && brokerEpoch < cached {
		return nil, kerr.StaleBrokerEpoch
	}
	if !ok {
		return nil, kerr.BrokerNotAvailable
	}
	c.ctx.SetShuttingDown(id)
	c.log.Info("controlled shutdown requested", "shutting_down_broker", id)
	start := time.Now()
	var led []common.TopicPartition
	var followed []PartitionReplica
	for _, tp := range c.ctx.AllPartitions() {
		rs := c.ctx.Replicas(tp)
		l, has := c.ctx.Leadership(tp)
		if len(rs) <= 1 || !slices.Contains(rs, id) || !has || c.ctx.IsTopicQueuedForDeletion(tp.Topic) {
			continue
		}
		if l.Leader == id {
			led = append(led, tp)
		} else {
			followed = append(followed, PartitionReplica{tp, id})
		}
	}
	reason := fmt.Sprintf("controlled shutdown of broker %d", id)
	if _, err := c.partitionChange(led, OnlinePartition, &electionSpec{strategy: ControlledShutdownElection}, reason); err != nil {
		return nil, err
	}
	elected := time.Now()
	shrunk := elected
	if len(followed) > 0 {
		if err := c.batch.newBatch(); err != nil {
			return nil, fmt.Errorf("%w: %v", errIllegalState, err)
		}
		for _, r := range followed {
			c.batch.addStopReplica([]int32{id}, r.TopicPartition, false)
		}
		c.sendBatch()
		if _, err := c.replicaChange(followed, OfflineReplica, reason); err != nil {
			return nil, err
		}
		shrunk = time.Now()
	}
	var remaining []common.TopicPartition
	for _, tp := range c.ctx.AllPartitions() {
		l, has := c.ctx.Leadership(tp)
		if has && l.Leader == id && len(c.ctx.Replicas(tp)) > 1 && !c.ctx.IsTopicQueuedForDeletion(tp.Topic) {
			remaining = append(remaining, tp)
		}
	}
	// Where a controlled shutdown's time goes: the elections of the
	// partitions it led (found, state znodes written, LeaderAndIsr
	// queued), then the ISR shrinks of those it follows (their StopReplica
	// queued, state znodes written, LeaderAndIsr and UpdateMetadata
	// queued). Queued requests are sent by the channel's own goroutines.
	c.log.Info("controlled shutdown handled", "shutting_down_broker", id, "led", len(led), "followed", len(followed),
		"remaining", len(remaining), "elections_ms", elected.Sub(start).Milliseconds(),
		"isr_shrinks_ms", shrunk.Sub(elected).Milliseconds(), "elapsed_ms", time.Since(start).Milliseconds())
	return remaining, nil
}

func (c *Controller) replyControlledShutdown(e controlledShutdownEvent) error {
	remaining, err := c.processControlledShutdown(e.id, e.brokerEpoch)
	loopErr, reply := rpcOutcome(err, kerr.StaleControllerEpoch)
	e.reply <- result[[]common.TopicPartition]{val: remaining, err: reply}
	return loopErr
}
