package controller

// The ZooKeeper operations the controller uses: the typed methods of
// zkpaths/zkclient (Kafka's KafkaZkClient) it calls, declared here as the
// narrow interface zkClient that *zkclient.Client satisfies, and the
// partitionStateStore the state machines write through, built on it.
//
// Errors are zkclient's: a missing znode matches zk.ErrNoNode, a lost
// conditional write zk.ErrBadVersion, an existing znode zk.ErrNodeExists,
// and a fenced write whose /controller_epoch check failed (or a lost
// election) ErrControllerMoved.

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// zkClient is what the controller needs from ZooKeeper. Every write takes
// the /controller_epoch version the controller was elected with and is
// fenced by it: one multi [check(/controller_epoch, epochZkVersion), op].
type zkClient interface {
	// Sessions and watches. Callbacks run on ZooKeeper client goroutines
	// and only enqueue events; watches re-arm themselves until cancelled.
	OnSessionExpired(fn func()) (cancel func())
	OnNewSession(fn func()) (cancel func())
	WatchData(path string, fn func()) (cancel func())
	WatchChildren(path string, fn func()) (cancel func())

	// Election: /controller and /controller_epoch.
	GetController() (id int32, ok bool, err error)
	RegisterControllerAndIncrementEpoch(brokerID int32) (epoch, epochZkVersion int32, err error)
	DeleteController(epochZkVersion int32) error

	// Brokers and topics.
	GetAllBrokers() ([]zkpaths.BrokerInfo, error)
	GetBroker(id int32) (info zkpaths.BrokerInfo, ok bool, err error)
	GetAllTopics() ([]string, error)
	GetTopicAssignment(topic string) (zkpaths.TopicAssignment, int32, error)
	SetTopicAssignment(epochZkVersion int32, topic string, a zkpaths.TopicAssignment, expectedVersion int32) (int32, error)
	GetEntityConfigs(entityType, name string) (map[string]string, error)

	// Partition state znodes.
	GetPartitionStates(tps []common.TopicPartition) (map[common.TopicPartition]zkpaths.LeaderAndIsr, error)
	CreatePartitionStates(epochZkVersion int32, states map[common.TopicPartition]zkpaths.LeaderAndIsr) (map[common.TopicPartition]zkclient.PartitionStateResult, error)
	UpdatePartitionStates(epochZkVersion int32, states map[common.TopicPartition]zkpaths.LeaderAndIsr) (map[common.TopicPartition]zkclient.PartitionStateResult, error)

	// Topic deletion.
	GetTopicDeletions() ([]string, error)
	DeleteTopicDeletions(epochZkVersion int32, topics ...string) error
	DeleteTopicZNode(epochZkVersion int32, topic string) error
	DeleteTopicConfigs(epochZkVersion int32, topics ...string) error

	// Admin requests and notifications written by tools and brokers.
	GetPartitionReassignment() ([]zkpaths.PartitionReplicas, bool, error)
	SetOrCreatePartitionReassignment(epochZkVersion int32, parts []zkpaths.PartitionReplicas) error
	DeletePartitionReassignment(epochZkVersion int32) error
	GetPreferredReplicaElection() ([]common.TopicPartition, bool, error)
	DeletePreferredReplicaElection(epochZkVersion int32) error
	GetAllIsrChangeNotifications() ([]string, error)
	GetPartitionsFromIsrChangeNotifications(names []string) ([]common.TopicPartition, error)
	DeleteIsrChangeNotifications(epochZkVersion int32, names ...string) error
	GetAllLogDirEventNotifications() ([]string, error)
	GetBrokerIDsFromLogDirEvents(names []string) ([]int32, error)
	DeleteLogDirEventNotifications(epochZkVersion int32, names ...string) error
}

var _ zkClient = (*zkclient.Client)(nil)

// zkStateStore implements partitionStateStore over zkClient for the current
// controller incarnation: it turns the controller's leaderships into the
// state znode's content and back.
type zkStateStore struct {
	zk  zkClient
	ctx *Context
}

func toZk(l LeaderIsrAndControllerEpoch) zkpaths.LeaderAndIsr {
	return zkpaths.LeaderAndIsr{Leader: l.Leader, LeaderEpoch: l.LeaderEpoch, ISR: l.ISR, LeaderRecoveryState: l.LeaderRecoveryState, ControllerEpoch: l.ControllerEpoch, ZkVersion: l.PartitionEpoch}
}

func fromZk(s zkpaths.LeaderAndIsr) LeaderIsrAndControllerEpoch {
	return LeaderIsrAndControllerEpoch{
		LeaderAndIsr:    LeaderAndIsr{Leader: s.Leader, LeaderEpoch: s.LeaderEpoch, ISR: s.ISR, LeaderRecoveryState: s.LeaderRecoveryState, PartitionEpoch: s.ZkVersion},
		ControllerEpoch: s.ControllerEpoch,
	}
}

func (s *zkStateStore) ReadStates(tps []common.TopicPartition) (map[common.TopicPartition]LeaderIsrAndControllerEpoch, error) {
	states, err := s.zk.GetPartitionStates(tps)
	if err != nil {
		return nil, err
	}
	out := make(map[common.TopicPartition]LeaderIsrAndControllerEpoch, len(states))
	for tp, l := range states {
		out[tp] = fromZk(l)
	}
	return out, nil
}

func (s *zkStateStore) CreateStates(states map[common.TopicPartition]LeaderIsrAndControllerEpoch) (map[common.TopicPartition]error, error) {
	in := make(map[common.TopicPartition]zkpaths.LeaderAndIsr, len(states))
	for tp, l := range states {
		in[tp] = toZk(l)
	}
	res, err := s.zk.CreatePartitionStates(s.ctx.EpochZkVersion, in)
	if err != nil {
		return nil, err
	}
	errs := map[common.TopicPartition]error{}
	for tp, r := range res {
		if r.Err != nil {
			errs[tp] = r.Err
		}
	}
	return errs, nil
}

func (s *zkStateStore) UpdateStates(states map[common.TopicPartition]LeaderAndIsr, controllerEpoch int32) (map[common.TopicPartition]int32, map[common.TopicPartition]error, error) {
	in := make(map[common.TopicPartition]zkpaths.LeaderAndIsr, len(states))
	for tp, l := range states {
		in[tp] = toZk(LeaderIsrAndControllerEpoch{LeaderAndIsr: l, ControllerEpoch: controllerEpoch})
	}
	res, err := s.zk.UpdatePartitionStates(s.ctx.EpochZkVersion, in)
	if err != nil {
		return nil, nil, err
	}
	versions := map[common.TopicPartition]int32{}
	errs := map[common.TopicPartition]error{}
	for tp, r := range res {
		if r.Err != nil {
			errs[tp] = r.Err
			continue
		}
		versions[tp] = r.ZkVersion
	}
	return versions, errs, nil
}

func (s *zkStateStore) UncleanElectionEnabled(topic string, dflt bool) (bool, error) {
	cfg, err := s.zk.GetEntityConfigs(zkpaths.ConfigTypeTopic, topic)
	if err != nil {
		return false, err
	}
	v, ok := cfg["unclean.leader.election.enable"]
	if !ok {
		return dflt, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("controller: topic %s: unclean.leader.election.enable=%q: %w", topic, v, err)
	}
	return b, nil
}

// isNoNode reports a missing znode.
func isNoNode(err error) bool { return errors.Is(err, zk.ErrNoNode) }

// decodeTopicID turns the znode's base64url topic id into the wire UUID.
func decodeTopicID(s string) [16]byte {
	var id [16]byte
	if s == "" {
		return id
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return id
	}
	copy(id[:], b)
	return id
}

// encodeTopicID is the inverse of decodeTopicID.
func encodeTopicID(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }
