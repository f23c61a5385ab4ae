package controller

// One type per ControllerEvent. Events carry no
// ZooKeeper payload: handlers re-read the current state, because watches are
// one-shot and several changes may have been folded into one notification.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
)

// noReply is embedded by the events nobody waits on: preempting one just
// drops it (the events of API calls answer their caller instead).
type noReply struct{}

func (noReply) preempt() {}

type startupEvent struct{ noReply }

func (startupEvent) state() string { return "ControllerChange" }

// controllerChangeEvent: /controller was created, changed or deleted. The
// handler re-reads it: MaybeResign, and elect if it is gone (Kafka's
// ControllerChange and Reelect folded together; the read tells them apart).
type controllerChangeEvent struct{ noReply }

func (controllerChangeEvent) state() string { return "ControllerChange" }

// expireEvent: the ZooKeeper session expired. Enqueued with clear-and-put.
type expireEvent struct{ noReply }

func (expireEvent) state() string { return "ControllerChange" }

// reelectEvent: a new ZooKeeper session was established (Kafka's
// RegisterBrokerAndReelect; the broker re-registers itself through its own
// session handler, which runs first).
type reelectEvent struct{ noReply }

func (reelectEvent) state() string { return "ControllerChange" }

type brokerChangeEvent struct{ noReply }

func (brokerChangeEvent) state() string { return "BrokerChange" }

type brokerModificationsEvent struct {
	noReply
	id int32
}

func (brokerModificationsEvent) state() string { return "BrokerChange" }

type topicChangeEvent struct{ noReply }

func (topicChangeEvent) state() string { return "TopicChange" }

type partitionModificationsEvent struct {
	noReply
	topic string
}

func (partitionModificationsEvent) state() string { return "TopicChange" }

type topicDeletionEvent struct{ noReply }

func (topicDeletionEvent) state() string { return "TopicDeletion" }

type isrChangeNotificationEvent struct{ noReply }

func (isrChangeNotificationEvent) state() string { return "IsrChange" }

type autoPreferredReplicaLeaderElectionEvent struct{ noReply }

func (autoPreferredReplicaLeaderElectionEvent) state() string { return "AutoLeaderBalance" }

type leaderAndIsrResponseEvent struct {
	noReply
	broker int32
	resp   *kmsg.LeaderAndISRResponse
}

func (leaderAndIsrResponseEvent) state() string { return "LeaderAndIsrResponseReceived" }

type topicDeletionStopReplicaResponseEvent struct {
	noReply
	broker int32
	// errs has one entry per partition sent with delete=true; nil = success.
	errs map[common.TopicPartition]error
}

func (topicDeletionStopReplicaResponseEvent) state() string { return "TopicDeletion" }

type controlledShutdownEvent struct {
	id          int32
	brokerEpoch int64
	reply       chan result[[]common.TopicPartition] // buffered, capacity 1
}

func (controlledShutdownEvent) state() string { return "ControlledShutdown" }

// preempt fails the request with "controller moved", which the wire encodes
// as STALE_CONTROLLER_EPOCH; the broker retries against the next controller.
func (e controlledShutdownEvent) preempt() {
	e.reply <- result[[]common.TopicPartition]{err: kerr.StaleControllerEpoch}
}

// topicUncleanLeaderElectionEnableEvent: the topic's unclean election
// override was turned on.
type topicUncleanLeaderElectionEnableEvent struct {
	noReply
	topic string
}

func (topicUncleanLeaderElectionEnableEvent) state() string {
	return "TopicUncleanLeaderElectionEnable"
}
