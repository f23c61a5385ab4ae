package controller

// The ZooKeeper operations the controller uses, as one narrow interface
// (zkAPI) implemented over zkpaths/zkclient in zkadapter.go, and the
// partitionStateStore built on it with zkpaths' codecs.

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"

	"github.com/klassik/klassik/zkpaths"
)

// zkStat is the part of a znode's stat the controller uses.
type zkStat struct {
	Version int32
	Czxid   int64
}

// zkAPI is what the controller needs from ZooKeeper. Missing nodes are
// reported as errors wrapping errNoNode, lost conditional writes as
// errBadVersion, existing nodes as errNodeExists, and failed fencing checks
// as ErrControllerMoved.
type zkAPI interface {
	GetData(path string) ([]byte, zkStat, error)
	GetChildren(path string) ([]string, error)
	// WatchData calls fn (from a ZooKeeper goroutine; it must only enqueue)
	// whenever the node is created, changed or deleted; the watch re-arms
	// itself until cancel is called.
	WatchData(path string, fn func()) (cancel func())
	// WatchChildren is the same for the node's child list.
	WatchChildren(path string, fn func()) (cancel func())
	// RegisterControllerAndIncrementEpoch runs the election multi of
	// controller.md §3.2 and returns the new epoch and the version of
	// /controller_epoch; losing wraps ErrControllerMoved.
	RegisterControllerAndIncrementEpoch(id int32) (epoch, epochZkVersion int32, err error)
	// Fenced writes: one multi [check(/controller_epoch, epochZkVersion), op].
	FencedCreate(epochZkVersion int32, path string, data []byte) error
	FencedSet(epochZkVersion int32, path string, data []byte, version int32) (newVersion int32, err error)
	FencedDelete(epochZkVersion int32, path string, version int32) error
	FencedDeleteRecursive(epochZkVersion int32, path string) error
	OnSessionExpired(fn func()) (cancel func())
	OnNewSession(fn func()) (cancel func())
}

var errNodeExists = errors.New("controller: znode already exists")

// zkStateStore implements partitionStateStore over zkAPI for the current
// controller incarnation.
type zkStateStore struct {
	zk  zkAPI
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

func (s *zkStateStore) ReadStates(tps []TopicPartition) (map[TopicPartition]LeaderIsrAndControllerEpoch, error) {
	out := map[TopicPartition]LeaderIsrAndControllerEpoch{}
	for _, tp := range tps {
		data, st, err := s.zk.GetData(zkpaths.PartitionStatePath(tp.Topic, tp.Partition))
		if errors.Is(err, errNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		l, err := zkpaths.DecodeLeaderAndIsr(data, st.Version)
		if err != nil {
			// An undecodable znode is treated like a missing one: the
			// partition fails rather than the whole event.
			continue
		}
		out[tp] = fromZk(l)
	}
	return out, nil
}

func (s *zkStateStore) CreateStates(states map[TopicPartition]LeaderIsrAndControllerEpoch) (map[TopicPartition]error, error) {
	errs := map[TopicPartition]error{}
	v := s.ctx.EpochZkVersion
	for _, tp := range sortedKeys(states) {
		// Parents are created with results ignored: they may exist.
		for _, p := range []string{zkpaths.TopicPartitionsPath(tp.Topic), zkpaths.TopicPartitionPath(tp.Topic, tp.Partition)} {
			if err := s.zk.FencedCreate(v, p, nil); err != nil && !errors.Is(err, errNodeExists) {
				if errors.Is(err, ErrControllerMoved) {
					return errs, err
				}
			}
		}
		err := s.zk.FencedCreate(v, zkpaths.PartitionStatePath(tp.Topic, tp.Partition), toZk(states[tp]).Encode())
		if errors.Is(err, ErrControllerMoved) {
			return errs, err
		}
		if err != nil {
			errs[tp] = err
		}
	}
	return errs, nil
}

func (s *zkStateStore) UpdateStates(states map[TopicPartition]LeaderAndIsr, controllerEpoch int32) (map[TopicPartition]int32, map[TopicPartition]error, error) {
	versions := map[TopicPartition]int32{}
	errs := map[TopicPartition]error{}
	for _, tp := range sortedKeys(states) {
		l := states[tp]
		data := toZk(LeaderIsrAndControllerEpoch{LeaderAndIsr: l, ControllerEpoch: controllerEpoch}).Encode()
		nv, err := s.zk.FencedSet(s.ctx.EpochZkVersion, zkpaths.PartitionStatePath(tp.Topic, tp.Partition), data, l.PartitionEpoch)
		if errors.Is(err, ErrControllerMoved) {
			return versions, errs, err
		}
		if err != nil {
			errs[tp] = err
			continue
		}
		versions[tp] = nv
	}
	return versions, errs, nil
}

func (s *zkStateStore) UncleanElectionEnabled(topic string, dflt bool) (bool, error) {
	data, _, err := s.zk.GetData(zkpaths.ConfigPath(zkpaths.ConfigTypeTopic, topic))
	if errors.Is(err, errNoNode) {
		return dflt, nil
	}
	if err != nil {
		return false, err
	}
	cfg, err := zkpaths.DecodeEntityConfig(data)
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
