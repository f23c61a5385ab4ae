package broker

// Replication throttles (Kafka's QuotaManagers.leader and .follower with
// the parts of TopicConfigHandler and BrokerConfigHandler that feed them):
// the throttled partitions come from each topic's
// leader/follower.replication.throttled.replicas, applied whenever the
// broker loads or reloads a topic's overrides (logConfigFor,
// applyTopicConfig), and the bounds from the broker's
// leader/follower.replication.throttled.rate.

import (
	"log/slog"
	"time"

	gometrics "github.com/rcrowley/go-metrics"

	"github.com/klassik/klassik/broker/replicaquota"
	"github.com/klassik/klassik/config"
)

// Topic and broker config keys of the replication throttles.
const (
	leaderThrottledReplicasKey   = "leader.replication.throttled.replicas"
	followerThrottledReplicasKey = "follower.replication.throttled.replicas"
)

type replicationQuotas struct {
	leader, follower *replicaquota.Manager
	brokerID         int32
	logger           *slog.Logger
}

func newReplicationQuotas(cfg *config.Config, brokerID int32, reg gometrics.Registry, logger *slog.Logger) *replicationQuotas {
	qc := replicaquota.Config{
		Samples: int(cfg.NumReplicationQuotaSamples),
		Window:  time.Duration(cfg.ReplicationQuotaWindowSizeSeconds) * time.Second,
	}
	q := &replicationQuotas{leader: replicaquota.New(qc), follower: replicaquota.New(qc), brokerID: brokerID,
		logger: logger.With("component", "replication-quotas")}
	if reg != nil {
		// Kafka's kafka.server:type=LeaderReplication / FollowerReplication
		// byte-rate (the quota's own windowed rate of throttled partitions).
		reg.GetOrRegister("kafka.server.LeaderReplication.byte-rate", gometrics.NewFunctionalGaugeFloat64(q.leader.Rate))
		reg.GetOrRegister("kafka.server.FollowerReplication.byte-rate", gometrics.NewFunctionalGaugeFloat64(q.follower.Rate))
	}
	return q
}

// applyTopic sets the topic's throttled partitions on this broker from
// its overrides (Kafka's TopicConfigHandler.updateThrottledList).
func (q *replicationQuotas) applyTopic(topic string, overrides map[string]string) {
	for key, m := range map[string]*replicaquota.Manager{leaderThrottledReplicasKey: q.leader, followerThrottledReplicasKey: q.follower} {
		if err := m.ApplyTopicConfig(topic, key, overrides, q.brokerID); err != nil {
			q.logger.Warn("ignoring an invalid throttled replica list", "topic", topic, "err", err)
		}
	}
}

// removeTopic forgets a deleted topic's throttles.
func (q *replicationQuotas) removeTopic(topic string) {
	q.leader.RemoveThrottle(topic)
	q.follower.RemoveThrottle(topic)
}

// setRates applies leader.replication.throttled.rate and
// follower.replication.throttled.rate (bytes/s; Long.MaxValue, the
// default, is no bound).
func (q *replicationQuotas) setRates(leader, follower int64) {
	if leader != q.leader.UpperBound() || follower != q.follower.UpperBound() {
		q.logger.Info("replication throttle rates", "leader_bytes_per_second", leader, "follower_bytes_per_second", follower)
	}
	q.leader.UpdateQuota(leader)
	q.follower.UpdateQuota(follower)
}

// followRates applies the rates of dyn now and after every change of
// leader.replication.throttled.rate or follower.replication.throttled.rate
// (Kafka's BrokerConfigHandler updating quotas.leader and .follower).
func (q *replicationQuotas) followRates(dyn *config.Dynamic) {
	apply := func(c *config.Config) {
		q.setRates(c.LeaderReplicationThrottledRate, c.FollowerReplicationThrottledRate)
	}
	dyn.Subscribe([]string{config.LeaderReplicationThrottledRateProp, config.FollowerReplicationThrottledRateProp},
		func(_, n *config.Config) { apply(n) })
	apply(dyn.Current())
}
