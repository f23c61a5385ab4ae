package controller

import gometrics "github.com/rcrowley/go-metrics"

// controllerMetrics are Kafka's KafkaController gauges and the unclean
// election meter, refreshed after every event by the event goroutine.
type controllerMetrics struct {
	activeControllerCount gometrics.Gauge
	offlinePartitions     gometrics.Gauge
	preferredImbalance    gometrics.Gauge
	globalTopics          gometrics.Gauge
	globalPartitions      gometrics.Gauge
	activeBrokers         gometrics.Gauge
	topicsToDelete        gometrics.Gauge
	replicasToDelete      gometrics.Gauge
	topicsIneligible      gometrics.Gauge
	replicasIneligible    gometrics.Gauge
	unclean               gometrics.Meter
}

func newControllerMetrics(r gometrics.Registry) *controllerMetrics {
	g := func(name string) gometrics.Gauge {
		return gometrics.GetOrRegisterGauge("kafka.controller.KafkaController."+name, r)
	}
	return &controllerMetrics{
		activeControllerCount: g("ActiveControllerCount"),
		offlinePartitions:     g("OfflinePartitionsCount"),
		preferredImbalance:    g("PreferredReplicaImbalanceCount"),
		globalTopics:          g("GlobalTopicCount"),
		globalPartitions:      g("GlobalPartitionCount"),
		activeBrokers:         g("ActiveBrokerCount"),
		topicsToDelete:        g("TopicsToDeleteCount"),
		replicasToDelete:      g("ReplicasToDeleteCount"),
		topicsIneligible:      g("TopicsIneligibleToDeleteCount"),
		replicasIneligible:    g("ReplicasIneligibleToDeleteCount"),
		unclean:               gometrics.GetOrRegisterMeter("kafka.controller.ControllerStats.UncleanLeaderElectionsPerSec", r),
	}
}

// update runs on the event goroutine (it reads the context).
func (m *controllerMetrics) update(c *Controller) {
	if !c.IsActive() {
		for _, g := range []gometrics.Gauge{m.activeControllerCount, m.offlinePartitions, m.preferredImbalance, m.globalTopics, m.globalPartitions, m.activeBrokers, m.topicsToDelete,
			m.replicasToDelete, m.topicsIneligible, m.replicasIneligible} {
			g.Update(0)
		}
		return
	}
	m.activeControllerCount.Update(1)
	m.offlinePartitions.Update(int64(c.ctx.OfflinePartitionCount()))
	m.preferredImbalance.Update(int64(c.ctx.PreferredReplicaImbalanceCount()))
	m.globalTopics.Update(int64(len(c.ctx.allTopics)))
	m.globalPartitions.Update(int64(c.ctx.PartitionCount()))
	m.activeBrokers.Update(int64(len(c.ctx.liveBrokers)))
	m.topicsToDelete.Update(int64(len(c.ctx.topicsToDelete)))
	m.updateDeletion(c.ctx)
}

// updateDeletion computes Kafka's topic deletion gauges: replicas of
// queued topics not yet deleted, topics with a replica that cannot be
// deleted now (ReplicaDeletionIneligible, e.g. on a dead broker), and
// those replicas.
func (m *controllerMetrics) updateDeletion(ctx *Context) {
	var toDelete, ineligibleTopics, ineligibleReplicas int64
	for t := range ctx.topicsToDelete {
		inel := false
		for _, r := range ctx.ReplicasForTopic(t) {
			switch ctx.replicaStates[r] {
			case ReplicaDeletionSuccessful:
				continue
			case ReplicaDeletionIneligible:
				ineligibleReplicas++
				inel = true
			}
			toDelete++
		}
		if inel {
			ineligibleTopics++
		}
	}
	m.replicasToDelete.Update(toDelete)
	m.topicsIneligible.Update(ineligibleTopics)
	m.replicasIneligible.Update(ineligibleReplicas)
}

// rateAndTimeMetricName is Kafka's ControllerState.rateAndTimeMetricName:
// "<State>RateAndTimeMs", except BrokerChange (LeaderElectionRateAndTimeMs,
// the older name Kafka kept) and AlterPartitionReassignment
// (PartitionReassignmentRateAndTimeMs).
func rateAndTimeMetricName(state string) string {
	switch state {
	case "BrokerChange":
		return "kafka.controller.ControllerStats.LeaderElectionRateAndTimeMs"
	case "AlterPartitionReassignment":
		return "kafka.controller.ControllerStats.PartitionReassignmentRateAndTimeMs"
	}
	return "kafka.controller.ControllerStats." + state + "RateAndTimeMs"
}

// controllerStates are Kafka 2.8's ControllerState values that have a
// rate-and-time timer; they are registered up front, as Kafka's
// ControllerStats does, so each is exported before its first event.
var controllerStates = []string{"ControllerChange", "BrokerChange", "TopicChange", "TopicDeletion",
	"AlterPartitionReassignment", "AutoLeaderBalance", "ManualLeaderBalance", "ControlledShutdown",
	"IsrChange", "LeaderAndIsrResponseReceived", "LogDirChange", "ControllerShutdown",
	"UncleanLeaderElectionEnable", "TopicUncleanLeaderElectionEnable", "ListPartitionReassignment",
	"UpdateFeatures"}

// stateTimers registers every state's timer in r and returns the lookup
// the event manager uses (a map read, no name building per event).
func stateTimers(r gometrics.Registry) func(state string) gometrics.Timer {
	timers := make(map[string]gometrics.Timer, len(controllerStates))
	for _, s := range controllerStates {
		timers[s] = gometrics.GetOrRegisterTimer(rateAndTimeMetricName(s), r)
	}
	return func(state string) gometrics.Timer {
		if t, ok := timers[state]; ok {
			return t
		}
		return gometrics.GetOrRegisterTimer(rateAndTimeMetricName(state), r)
	}
}
