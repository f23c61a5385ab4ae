package controller

// Preferred and unclean leader elections requested by an administrator:
// the ElectLeaders RPC (trigger Admin) and the legacy
// /admin/preferred_replica_election znode (trigger ZK).

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/klassik/klassik/broker/common"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ElectionType is ElectLeaders' election_type.
type ElectionType int8

const (
	// ElectPreferred moves leadership to the first assigned replica.
	ElectPreferred ElectionType = 0
	// ElectUnclean elects a leader for leaderless partitions, outside the
	// ISR if needed.
	ElectUnclean ElectionType = 1
)

type electionTrigger int8

const (
	triggerAdmin electionTrigger = iota
	triggerZK
	triggerAuto
)

// ElectionOutcome is one partition's answer: the new (or current) leader,
// or a kerr error (ElectionNotNeeded, PreferredLeaderNotAvailable,
// EligibleLeadersNotAvailable, UnknownTopicOrPartition, InvalidTopicException).
type ElectionOutcome struct {
	Leader int32
	Err    error
}

type replicaLeaderElectionEvent struct {
	partitions []common.TopicPartition // nil: every partition (admin) / the znode's list (ZK)
	kind       ElectionType
	trigger    electionTrigger
	reply      chan result[map[common.TopicPartition]ElectionOutcome] // nil for ZK-triggered elections
}

func (replicaLeaderElectionEvent) state() string { return "ManualLeaderBalance" }

func (e replicaLeaderElectionEvent) preempt() {
	if e.reply != nil {
		e.reply <- result[map[common.TopicPartition]ElectionOutcome]{err: kerr.NotController}
	}
}

// ElectLeaders runs an election of the given type for partitions (nil
// means every partition) and returns the outcome per partition. The error
// is kerr.NotController when this broker is not the controller.
func (c *Controller) ElectLeaders(ctx context.Context, kind ElectionType, partitions []common.TopicPartition) (map[common.TopicPartition]ElectionOutcome, error) {
	reply := make(chan result[map[common.TopicPartition]ElectionOutcome], 1)
	return await(ctx, c, replicaLeaderElectionEvent{partitions: partitions, kind: kind, trigger: triggerAdmin, reply: reply}, reply)
}

func (c *Controller) processReplicaLeaderElection(e replicaLeaderElectionEvent) (map[common.TopicPartition]ElectionOutcome, error) {
	if !c.IsActive() {
		return nil, kerr.NotController
	}
	partitions := e.partitions
	if e.trigger == triggerZK {
		tps, exists, err := c.zk.GetPreferredReplicaElection()
		if !exists {
			return nil, err
		}
		if err != nil {
			c.log.Warn("ignoring an undecodable preferred replica election request", "err", err)
		}
		partitions = tps
	} else if partitions == nil {
		partitions = c.ctx.AllPartitions()
	}
	out := map[common.TopicPartition]ElectionOutcome{}
	var toElect []common.TopicPartition
	for _, tp := range partitions {
		if _, ok := c.ctx.Assignment(tp); !ok {
			out[tp] = ElectionOutcome{Leader: NoLeader, Err: kerr.UnknownTopicOrPartition}
			continue
		}
		if c.ctx.IsTopicQueuedForDeletion(tp.Topic) {
			out[tp] = ElectionOutcome{Leader: NoLeader, Err: kerr.InvalidTopicException}
			continue
		}
		l, has := c.ctx.Leadership(tp)
		switch e.kind {
		case ElectPreferred:
			if has && l.Leader == c.ctx.Replicas(tp)[0] {
				out[tp] = ElectionOutcome{Leader: l.Leader, Err: kerr.ElectionNotNeeded}
				continue
			}
		case ElectUnclean:
			if has && l.Leader != NoLeader && c.ctx.IsLive(l.Leader) {
				out[tp] = ElectionOutcome{Leader: l.Leader, Err: kerr.ElectionNotNeeded}
				continue
			}
		}
		toElect = append(toElect, tp)
	}
	if len(toElect) > 0 {
		spec := &electionSpec{strategy: PreferredElection}
		notAvailable := kerr.PreferredLeaderNotAvailable
		if e.kind == ElectUnclean {
			spec = &electionSpec{strategy: OfflineElection, allowUnclean: e.trigger == triggerAdmin}
			notAvailable = kerr.EligibleLeadersNotAvailable
		}
		failed, err := c.partitionChange(toElect, OnlinePartition, spec, "leader election requested by an administrator")
		if err != nil {
			return out, err
		}
		for _, tp := range toElect {
			if ferr := failed[tp]; ferr != nil {
				code := error(kerr.UnknownServerError)
				if errors.Is(ferr, ErrStateChangeFailed) || errors.Is(ferr, ErrIllegalStateTransition) {
					code = notAvailable
				}
				out[tp] = ElectionOutcome{Leader: NoLeader, Err: code}
				continue
			}
			l, _ := c.ctx.Leadership(tp)
			out[tp] = ElectionOutcome{Leader: l.Leader}
		}
	}
	if e.trigger == triggerZK {
		if err := c.zk.DeletePreferredReplicaElection(c.ctx.EpochZkVersion); err != nil {
			return out, err
		}
	}
	return out, nil
}

func (c *Controller) scheduleRebalance(d time.Duration) {
	if !c.cfg.AutoLeaderRebalanceEnable {
		return
	}
	if c.rebalanceTimer != nil {
		c.rebalanceTimer.Stop()
	}
	// The timer goroutine only enqueues; a late firing after resignation is
	// dropped by the handler's active check.
	em := c.em
	c.rebalanceTimer = time.AfterFunc(d, func() { em.put(autoPreferredReplicaLeaderElectionEvent{}) })
}

func (c *Controller) processAutoPreferredReplicaLeaderElection() error {
	// Rescheduled after every run, even a failed one, while still active.
	defer func() {
		if c.IsActive() {
			c.scheduleRebalance(c.cfg.LeaderImbalanceCheckInterval)
		}
	}()
	byPreferred := map[int32][]common.TopicPartition{}
	for _, tp := range c.ctx.AllPartitions() {
		if c.ctx.IsTopicQueuedForDeletion(tp.Topic) {
			continue
		}
		if rs := c.ctx.Replicas(tp); len(rs) > 0 {
			byPreferred[rs[0]] = append(byPreferred[rs[0]], tp)
		}
	}
	for _, b := range sortedMapKeys(byPreferred) {
		tps := byPreferred[b]
		var notPreferred []common.TopicPartition
		for _, tp := range tps {
			if l, ok := c.ctx.Leadership(tp); ok && l.Leader != b {
				notPreferred = append(notPreferred, tp)
			}
		}
		ratio := float64(len(notPreferred)) / float64(len(tps))
		if ratio <= float64(c.cfg.LeaderImbalancePerBrokerPercentage)/100 {
			continue
		}
		var candidates []common.TopicPartition
		for _, tp := range notPreferred {
			l, _ := c.ctx.Leadership(tp)
			if c.ctx.IsLive(b) && slices.Contains(l.ISR, b) {
				candidates = append(candidates, tp)
			}
		}
		if len(candidates) == 0 {
			continue
		}
		c.log.Info("leader imbalance above threshold; running preferred replica election", "preferred_broker", b, "ratio", ratio, "partitions", candidates)
		failed, err := c.partitionChange(candidates, OnlinePartition, &electionSpec{strategy: PreferredElection}, "auto preferred replica leader election")
		if err != nil {
			return err
		}
		for tp, e := range failed {
			c.log.Warn("preferred replica election failed", "topic", tp.Topic, "partition", tp.Partition, "err", e)
		}
	}
	return nil
}
