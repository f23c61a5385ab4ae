package controller

// The ZooKeeper operations the state machines need, behind one small
// interface so transitions run against an in-memory store in unit tests and
// against the fenced ZooKeeper client in production (zkstore.go).

import (
	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// ErrControllerMoved is raised when a fenced write fails its
// /controller_epoch check, or when this node finds it is no longer the
// controller. Handlers that see it resign; it is never retried. It is
// zkclient's sentinel, so the client's errors match it directly.
var ErrControllerMoved = zkclient.ErrControllerMoved

// partitionStateStore reads and writes partition state znodes. Every write is
// fenced by the controller epoch version; a fencing failure is returned as the
// overall error wrapping ErrControllerMoved.
type partitionStateStore interface {
	// ReadStates returns the state znodes that exist (with their version as
	// PartitionEpoch).
	ReadStates(tps []common.TopicPartition) (map[common.TopicPartition]LeaderIsrAndControllerEpoch, error)
	// CreateStates creates the state znodes (and their parents).
	CreateStates(states map[common.TopicPartition]LeaderIsrAndControllerEpoch) (map[common.TopicPartition]error, error)
	// UpdateStates writes new leaderships conditionally on PartitionEpoch and
	// returns the new versions; a lost race is reported per partition as an
	// error matching zk.ErrBadVersion (the caller re-reads and retries).
	UpdateStates(states map[common.TopicPartition]LeaderAndIsr, controllerEpoch int32) (map[common.TopicPartition]int32, map[common.TopicPartition]error, error)
	// UncleanElectionEnabled returns the topic's effective
	// unclean.leader.election.enable (override over the broker default).
	UncleanElectionEnabled(topic string, brokerDefault bool) (bool, error)
}
