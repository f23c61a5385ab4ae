package controller

// One type per ControllerEvent. Events carry no
// ZooKeeper payload: handlers re-read the current state, because watches are
// one-shot and several changes may have been folded into one notification.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
)

type startupEvent struct{}

func (startupEvent) state() string { return "ControllerChange" }
func (startupEvent) preempt()      {}

// controllerChangeEvent: /controller was created, changed or deleted. The
// handler re-reads it: MaybeResign, and elect if it is gone (Kafka's
// ControllerChange and Reelect folded together; the read tells them apart).
type controllerChangeEvent struct{}

func (controllerChangeEvent) state() string { return "ControllerChange" }
func (controllerChangeEvent) preempt()      {}

// expireEvent: the ZooKeeper session expired. Enqueued with clear-and-put.
type expireEvent struct{}

func (expireEvent) state() string { return "ControllerChange" }
func (expireEvent) preempt()      {}

// reelectEvent: a new ZooKeeper session was established (Kafka's
// RegisterBrokerAndReelect; the broker re-registers itself through its own
// session handler, which runs first).
type reelectEvent struct{}

func (reelectEvent) state() string { return "ControllerChange" }
func (reelectEvent) preempt()      {}

type brokerChangeEvent struct{}

func (brokerChangeEvent) state() string { return "BrokerChange" }
func (brokerChangeEvent) preempt()      {}

type brokerModificationsEvent struct{ id int32 }

func (brokerModificationsEvent) state() string { return "BrokerChange" }
func (brokerModificationsEvent) preempt()      {}

type topicChangeEvent struct{}

func (topicChangeEvent) state() string { return "TopicChange" }
func (topicChangeEvent) preempt()      {}

type partitionModificationsEvent struct{ topic string }

func (partitionModificationsEvent) state() string { return "TopicChange" }
func (partitionModificationsEvent) preempt()      {}

type topicDeletionEvent struct{}

func (topicDeletionEvent) state() string { return "TopicDeletion" }
func (topicDeletionEvent) preempt()      {}

type isrChangeNotificationEvent struct{}

func (isrChangeNotificationEvent) state() string { return "IsrChange" }
func (isrChangeNotificationEvent) preempt()      {}

type autoPreferredReplicaLeaderElectionEvent struct{}

func (autoPreferredReplicaLeaderElectionEvent) state() string { return "AutoLeaderBalance" }
func (autoPreferredReplicaLeaderElectionEvent) preempt()      {}

type leaderAndIsrResponseEvent struct {
	broker int32
	resp   *kmsg.LeaderAndISRResponse
}

func (leaderAndIsrResponseEvent) state() string { return "LeaderAndIsrResponseReceived" }
func (leaderAndIsrResponseEvent) preempt()      {}

type topicDeletionStopReplicaResponseEvent struct {
	broker int32
	// errs has one entry per partition sent with delete=true; nil = success.
	errs map[common.TopicPartition]error
}

func (topicDeletionStopReplicaResponseEvent) state() string { return "TopicDeletion" }
func (topicDeletionStopReplicaResponseEvent) preempt()      {}

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
type topicUncleanLeaderElectionEnableEvent struct{ topic string }

func (topicUncleanLeaderElectionEnableEvent) state() string {
	return "TopicUncleanLeaderElectionEnable"
}
func (topicUncleanLeaderElectionEnableEvent) preempt() {}
