package zkpaths

import (
	"fmt"
	"sort"
	"strconv"
)

// TopicAssignmentVersion is the version written by Kafka 2.8+ (with topic_id).
const TopicAssignmentVersion = 3

// TopicAssignment is the content of /brokers/topics/<t> (TopicZNode): the
// full replica list per partition (element 0 = preferred leader), the
// replicas being added/removed by an in-flight reassignment, and the topic id.
type TopicAssignment struct {
	Version    int
	Partitions map[int32][]int32
	Adding     map[int32][]int32 // only partitions with a non-empty set
	Removing   map[int32][]int32
	TopicID    string // 22-char base64url, "" if the topic has none yet
}

// Encode writes the assignment. Version 3 (the default when Version is 0):
// {"partitions":{...},"topic_id":"...","adding_replicas":{...},"removing_replicas":{...},"version":3};
// version 2 omits topic_id; version 1 is {"version":1,"partitions":{...}}.
// Partitions with empty adding/removing sets are omitted from those maps.
func (t TopicAssignment) Encode() []byte {
	v := t.Version
	if v == 0 {
		v = TopicAssignmentVersion
	}
	if v == 1 {
		return newObj().int("version", 1).raw("partitions", appendPartitionMap(nil, t.Partitions)).bytes()
	}
	o := newObj().raw("partitions", appendPartitionMap(nil, t.Partitions))
	if v >= 3 && t.TopicID != "" {
		o.str("topic_id", t.TopicID)
	}
	o.raw("adding_replicas", appendPartitionMap(nil, nonEmpty(t.Adding)))
	o.raw("removing_replicas", appendPartitionMap(nil, nonEmpty(t.Removing)))
	o.int("version", int64(v))
	return o.bytes()
}

func nonEmpty(m map[int32][]int32) map[int32][]int32 {
	out := make(map[int32][]int32, len(m))
	for p, r := range m {
		if len(r) > 0 {
			out[p] = r
		}
	}
	return out
}

// DecodeTopicAssignment reads any version of a topic znode. Missing maps mean
// empty.
func DecodeTopicAssignment(data []byte) (TopicAssignment, error) {
	var v struct {
		Version    int                `json:"version"`
		Partitions map[string][]int32 `json:"partitions"`
		Adding     map[string][]int32 `json:"adding_replicas"`
		Removing   map[string][]int32 `json:"removing_replicas"`
		TopicID    *string            `json:"topic_id"`
	}
	if err := unmarshal("topic assignment", data, &v); err != nil {
		return TopicAssignment{}, err
	}
	t := TopicAssignment{Version: v.Version}
	var err error
	if t.Partitions, err = parsePartitionMap(v.Partitions); err != nil {
		return TopicAssignment{}, err
	}
	if t.Adding, err = parsePartitionMap(v.Adding); err != nil {
		return TopicAssignment{}, err
	}
	if t.Removing, err = parsePartitionMap(v.Removing); err != nil {
		return TopicAssignment{}, err
	}
	if v.TopicID != nil {
		if !ValidUUID(*v.TopicID) {
			return TopicAssignment{}, fmt.Errorf("zkpaths: topic assignment: bad topic_id %q", *v.TopicID)
		}
		t.TopicID = *v.TopicID
	}
	return t, nil
}

func parsePartitionMap(m map[string][]int32) (map[int32][]int32, error) {
	out := make(map[int32][]int32, len(m))
	for k, r := range m {
		p, err := ParsePartition(k)
		if err != nil {
			return nil, err
		}
		if r == nil {
			r = []int32{}
		}
		out[p] = r
	}
	return out, nil
}

// SortedPartitions returns the partition ids in ascending order.
func (t TopicAssignment) SortedPartitions() []int32 {
	ps := make([]int32, 0, len(t.Partitions))
	for p := range t.Partitions {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ps
}

// LeaderRecoveryState values (KIP-704).
const (
	LeaderRecovered  int8 = 0
	LeaderRecovering int8 = 1
)

// NoLeader is the leader value of an offline partition.
const NoLeader int32 = -1

// LeaderAndIsr is the content of a partition state znode
// (TopicPartitionStateZNode, kafka.api.LeaderAndIsr plus controller epoch).
// ZkVersion is the znode's data version (the partition epoch); it is not part
// of the JSON.
type LeaderAndIsr struct {
	Leader              int32
	LeaderEpoch         int32
	ISR                 []int32
	LeaderRecoveryState int8
	ControllerEpoch     int32
	ZkVersion           int32
}

// Encode writes {"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2,3]},
// with "leader_recovery_state" after "version" only when RECOVERING.
func (s LeaderAndIsr) Encode() []byte {
	o := newObj().int("controller_epoch", int64(s.ControllerEpoch)).int("leader", int64(s.Leader)).int("version", 1)
	if s.LeaderRecoveryState != LeaderRecovered {
		o.int("leader_recovery_state", int64(s.LeaderRecoveryState))
	}
	isr := s.ISR
	if isr == nil {
		isr = []int32{}
	}
	return o.int("leader_epoch", int64(s.LeaderEpoch)).ints("isr", isr).bytes()
}

// DecodeLeaderAndIsr reads a state znode; zkVersion is copied into the result.
func DecodeLeaderAndIsr(data []byte, zkVersion int32) (LeaderAndIsr, error) {
	if s, ok := decodeLeaderAndIsrFast(data, zkVersion); ok {
		return s, nil
	}
	return decodeLeaderAndIsrJSON(data, zkVersion)
}

// decodeLeaderAndIsrJSON is the general decoder (encoding/json: any
// whitespace, key order and unknown keys).
func decodeLeaderAndIsrJSON(data []byte, zkVersion int32) (LeaderAndIsr, error) {
	var v struct {
		Leader          *int32  `json:"leader"`
		LeaderEpoch     *int32  `json:"leader_epoch"`
		ISR             []int32 `json:"isr"`
		ControllerEpoch *int32  `json:"controller_epoch"`
		LRS             *int8   `json:"leader_recovery_state"`
	}
	if err := unmarshal("partition state", data, &v); err != nil {
		return LeaderAndIsr{}, err
	}
	if v.Leader == nil || v.LeaderEpoch == nil || v.ISR == nil || v.ControllerEpoch == nil {
		return LeaderAndIsr{}, fmt.Errorf("zkpaths: partition state: missing leader, leader_epoch, isr or controller_epoch")
	}
	s := LeaderAndIsr{Leader: *v.Leader, LeaderEpoch: *v.LeaderEpoch, ISR: v.ISR, ControllerEpoch: *v.ControllerEpoch, ZkVersion: zkVersion}
	if v.LRS != nil {
		if *v.LRS != LeaderRecovered && *v.LRS != LeaderRecovering {
			return LeaderAndIsr{}, fmt.Errorf("zkpaths: partition state: bad leader_recovery_state %d", *v.LRS)
		}
		s.LeaderRecoveryState = *v.LRS
	}
	return s, nil
}

// Equal compares the decoded content (not ZkVersion).
func (s LeaderAndIsr) Equal(o LeaderAndIsr) bool {
	if s.Leader != o.Leader || s.LeaderEpoch != o.LeaderEpoch || s.ControllerEpoch != o.ControllerEpoch ||
		s.LeaderRecoveryState != o.LeaderRecoveryState || len(s.ISR) != len(o.ISR) {
		return false
	}
	for i := range s.ISR {
		if s.ISR[i] != o.ISR[i] {
			return false
		}
	}
	return true
}

func (s LeaderAndIsr) String() string {
	return "leader=" + strconv.Itoa(int(s.Leader)) + " leader_epoch=" + strconv.Itoa(int(s.LeaderEpoch)) +
		fmt.Sprintf(" isr=%v", s.ISR) + " controller_epoch=" + strconv.Itoa(int(s.ControllerEpoch)) +
		" zk_version=" + strconv.Itoa(int(s.ZkVersion))
}
