package controller

import (
	"strconv"
	"sync/atomic"

	gometrics "github.com/rcrowley/go-metrics"
)

// controllerMetrics are Kafka's KafkaController gauges and the unclean
// election meter, refreshed after every event by the event goroutine.
type controllerMetrics struct {
	activeControllerCount gometrics.Gauge
	offlinePartitions     gometrics.Gauge
	preferredImbalance    gometrics.Gauge
	globalTopics          gometrics.Gauge
	globalPartitions      gometrics.Gauge
	topicsToDelete        gometrics.Gauge
	replicasToDelete      gometrics.Gauge
	topicsIneligible      gometrics.Gauge
	replicasIneligible    gometrics.Gauge
	unclean               gometrics.Meter
	channel               *channelMetrics
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
		topicsToDelete:        g("TopicsToDeleteCount"),
		replicasToDelete:      g("ReplicasToDeleteCount"),
		topicsIneligible:      g("TopicsIneligibleToDeleteCount"),
		replicasIneligible:    g("ReplicasIneligibleToDeleteCount"),
		unclean:               gometrics.GetOrRegisterMeter("kafka.controller.ControllerStats.UncleanLeaderElectionsPerSec", r),
		channel:               newChannelMetrics(r),
	}
}

// update runs on the event goroutine (it reads the context).
func (m *controllerMetrics) update(c *Controller) {
	if !c.IsActive() {
		for _, g := range []gometrics.Gauge{m.activeControllerCount, m.offlinePartitions, m.preferredImbalance, m.globalTopics, m.globalPartitions, m.topicsToDelete,
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

// controllerStateValues are Kafka 2.8's ControllerState values (the
// ControllerState gauge); Idle, and any state Kafka does not name, is 0.
var controllerStateValues = map[string]int64{"Idle": 0, "ControllerChange": 1, "BrokerChange": 2, "TopicChange": 3,
	"TopicDeletion": 4, "AlterPartitionReassignment": 5, "AutoLeaderBalance": 6, "ManualLeaderBalance": 7,
	"ControlledShutdown": 8, "IsrChange": 9, "LeaderAndIsrResponseReceived": 10, "LogDirChange": 11,
	"ControllerShutdown": 12, "UncleanLeaderElectionEnable": 13, "TopicUncleanLeaderElectionEnable": 14,
	"ListPartitionReassignment": 15, "UpdateMetadataResponseReceived": 16, "UpdateFeatures": 17}

func controllerStateValue(state string) int64 { return controllerStateValues[state] }

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

// channelMetrics are Kafka's ControllerChannelManager metrics
// (kafka.controller:type=ControllerChannelManager): TotalQueueSize over
// every broker's queue, and per broker (broker-id=<id>) QueueSize and
// RequestRateAndQueueTimeMs, the time a request waited in the queue,
// registered while the controller has a sender for the broker. They
// outlive a channel manager (one per term as controller).
type channelMetrics struct {
	reg   gometrics.Registry
	total atomic.Int64 // requests queued on every sender
}

func newChannelMetrics(r gometrics.Registry) *channelMetrics {
	m := &channelMetrics{reg: r}
	r.GetOrRegister("kafka.controller.ControllerChannelManager.TotalQueueSize", gometrics.NewFunctionalGauge(m.total.Load))
	return m
}

func brokerTag(id int32) string { return ".broker-id=" + strconv.Itoa(int(id)) }

// addBroker registers s's gauges and returns its queue timer.
func (m *channelMetrics) addBroker(s *brokerSender) gometrics.Timer {
	const p = "kafka.controller.ControllerChannelManager."
	tag := brokerTag(s.id)
	m.reg.Unregister(p + "QueueSize" + tag) // a previous sender's
	_ = m.reg.Register(p+"QueueSize"+tag, gometrics.NewFunctionalGauge(func() int64 {
		s.mu.Lock()
		defer s.mu.Unlock()
		return int64(len(s.queue))
	}))
	return gometrics.GetOrRegisterTimer(p+"RequestRateAndQueueTimeMs"+tag, m.reg)
}

// removeBroker drops s's gauges and its discarded requests from the total.
// s's goroutine has ended.
func (m *channelMetrics) removeBroker(s *brokerSender) {
	const p = "kafka.controller.ControllerChannelManager."
	tag := brokerTag(s.id)
	s.mu.Lock()
	m.total.Add(-int64(len(s.queue)))
	s.queue = nil
	s.mu.Unlock()
	m.reg.Unregister(p + "QueueSize" + tag)
	m.reg.Unregister(p + "RequestRateAndQueueTimeMs" + tag)
}
