package controller

// ControllerContext (Kafka's ControllerContext): the controller's cached view
// of the cluster. It is owned by the event goroutine and has no locks; nothing
// outside the loop may touch it. It is reset on resignation.

import (
	"fmt"
	"slices"

	"github.com/klassik/klassik/broker/common"
)

// PartitionReplica names one replica: a partition on a broker.
type PartitionReplica struct {
	common.TopicPartition
	Replica int32
}

func (r PartitionReplica) String() string {
	return fmt.Sprintf("[Topic=%s,Partition=%d,Replica=%d]", r.Topic, r.Partition, r.Replica)
}

// Leader sentinels: no leader (offline partition), and the leader the
// brokers learn for a partition being deleted.
const (
	NoLeader            int32 = -1
	LeaderDuringDelete  int32 = -2
	EpochDuringDelete   int32 = -2
	UnknownLeaderEpoch  int32 = -1
	RecoveryRecovered   int8  = 0
	RecoveryRecovering  int8  = 1
	initialLeaderEpoch  int32 = 0
	initialPartitionEpc int32 = 0
)

// LeaderAndIsr is the leadership of one partition as stored in its state
// znode; PartitionEpoch is the znode's ZooKeeper version.
type LeaderAndIsr struct {
	Leader              int32
	LeaderEpoch         int32
	ISR                 []int32
	LeaderRecoveryState int8
	PartitionEpoch      int32
}

// newEpoch returns a copy with leader, ISR replaced and the leader epoch bumped
// by one, keeping the partition epoch as read (the write replaces it).
func (l LeaderAndIsr) newEpoch(leader int32, isr []int32) LeaderAndIsr {
	return LeaderAndIsr{
		Leader:              leader,
		LeaderEpoch:         l.LeaderEpoch + 1,
		ISR:                 slices.Clone(isr),
		LeaderRecoveryState: l.LeaderRecoveryState,
		PartitionEpoch:      l.PartitionEpoch,
	}
}

// LeaderIsrAndControllerEpoch is the leadership plus the epoch of the
// controller that wrote it.
type LeaderIsrAndControllerEpoch struct {
	LeaderAndIsr
	ControllerEpoch int32
}

// ReplicaAssignment is the replica list of a partition (RS) with the replicas
// an in-flight reassignment adds (AR) and removes (RR).
type ReplicaAssignment struct {
	Replicas         []int32
	AddingReplicas   []int32
	RemovingReplicas []int32
}

// IsBeingReassigned reports whether AR or RR is non-empty.
func (a ReplicaAssignment) IsBeingReassigned() bool {
	return len(a.AddingReplicas) > 0 || len(a.RemovingReplicas) > 0
}

// OriginReplicas is RS − AR, order preserved.
func (a ReplicaAssignment) OriginReplicas() []int32 { return minus(a.Replicas, a.AddingReplicas) }

// TargetReplicas is RS − RR, order preserved.
func (a ReplicaAssignment) TargetReplicas() []int32 { return minus(a.Replicas, a.RemovingReplicas) }

func minus(a, b []int32) []int32 {
	out := make([]int32, 0, len(a))
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// Endpoint is one advertised listener of a broker.
type Endpoint struct {
	Listener         string
	Host             string
	Port             int32
	SecurityProtocol int16 // Kafka's SecurityProtocol id: 0 PLAINTEXT, 1 SSL, 2 SASL_PLAINTEXT, 3 SASL_SSL
}

// Broker is a registered broker as the controller caches it.
type Broker struct {
	ID        int32
	Endpoints []Endpoint
	Rack      *string
	Epoch     int64 // czxid of /brokers/ids/<id>
}

// Endpoint returns the endpoint for listener, if registered.
func (b Broker) Endpoint(listener string) (Endpoint, bool) {
	for _, e := range b.Endpoints {
		if e.Listener == listener {
			return e, true
		}
	}
	return Endpoint{}, false
}

func sameEndpoints(a, b Broker) bool {
	if !slices.Equal(a.Endpoints, b.Endpoints) {
		return false
	}
	if (a.Rack == nil) != (b.Rack == nil) {
		return false
	}
	return a.Rack == nil || *a.Rack == *b.Rack
}

// Context is the controller's in-memory state (Kafka's ControllerContext).
type Context struct {
	Epoch          int32
	EpochZkVersion int32

	// interBrokerListener selects the endpoint used for LiveLeaders; it is
	// configuration, so Reset keeps it.
	interBrokerListener string

	liveBrokers      map[int32]Broker
	shuttingDown     map[int32]bool
	allTopics        map[string]bool
	topicIDs         map[string][16]byte
	assignments      map[string]map[int32]ReplicaAssignment
	leadership       map[common.TopicPartition]LeaderIsrAndControllerEpoch
	partitionStates  map[common.TopicPartition]PartitionState
	replicaStates    map[PartitionReplica]ReplicaState
	beingReassigned  map[common.TopicPartition]bool
	offlineDirs      map[int32]map[common.TopicPartition]bool
	topicsToDelete   map[string]bool
	deletionStarted  map[string]bool
	deleteIneligible map[string]bool
}

// NewContext returns an empty context.
func NewContext() *Context {
	c := &Context{}
	c.Reset()
	return c
}

// Reset clears everything (resignation).
func (c *Context) Reset() {
	*c = Context{
		interBrokerListener: c.interBrokerListener,
		liveBrokers:         map[int32]Broker{},
		shuttingDown:        map[int32]bool{},
		allTopics:           map[string]bool{},
		topicIDs:            map[string][16]byte{},
		assignments:         map[string]map[int32]ReplicaAssignment{},
		leadership:          map[common.TopicPartition]LeaderIsrAndControllerEpoch{},
		partitionStates:     map[common.TopicPartition]PartitionState{},
		replicaStates:       map[PartitionReplica]ReplicaState{},
		beingReassigned:     map[common.TopicPartition]bool{},
		offlineDirs:         map[int32]map[common.TopicPartition]bool{},
		topicsToDelete:      map[string]bool{},
		deletionStarted:     map[string]bool{},
		deleteIneligible:    map[string]bool{},
	}
}

// --- brokers ---

// AddLiveBroker records a registered broker (live or shutting down).
func (c *Context) AddLiveBroker(b Broker) { c.liveBrokers[b.ID] = b }

// RemoveLiveBroker forgets a broker and its shutting-down mark.
func (c *Context) RemoveLiveBroker(id int32) {
	delete(c.liveBrokers, id)
	delete(c.shuttingDown, id)
	delete(c.offlineDirs, id)
}

// LiveOrShuttingDownBroker returns a registered broker.
func (c *Context) LiveOrShuttingDownBroker(id int32) (Broker, bool) {
	b, ok := c.liveBrokers[id]
	return b, ok
}

// IsLiveOrShuttingDown reports whether id is registered.
func (c *Context) IsLiveOrShuttingDown(id int32) bool { _, ok := c.liveBrokers[id]; return ok }

// IsLive reports whether id is registered and not shutting down.
func (c *Context) IsLive(id int32) bool { return c.IsLiveOrShuttingDown(id) && !c.shuttingDown[id] }

// LiveOrShuttingDownBrokerIDs returns the registered ids, sorted.
func (c *Context) LiveOrShuttingDownBrokerIDs() []int32 {
	return sortedMapKeys(c.liveBrokers)
}

// LiveOrShuttingDownBrokers returns the registered brokers sorted by id.
func (c *Context) LiveOrShuttingDownBrokers() []Broker {
	out := make([]Broker, 0, len(c.liveBrokers))
	for _, id := range c.LiveOrShuttingDownBrokerIDs() {
		out = append(out, c.liveBrokers[id])
	}
	return out
}

// BrokerEpoch returns the cached epoch of a registered broker.
func (c *Context) BrokerEpoch(id int32) (int64, bool) {
	b, ok := c.liveBrokers[id]
	return b.Epoch, ok
}

// SetShuttingDown marks a broker as in controlled shutdown.
func (c *Context) SetShuttingDown(id int32) { c.shuttingDown[id] = true }

// IsShuttingDown reports the controlled-shutdown mark.
func (c *Context) IsShuttingDown(id int32) bool { return c.shuttingDown[id] }

// IsReplicaOnline: the broker is live (or, with includeShuttingDown, merely
// registered) and the partition is not on one of its failed log dirs.
func (c *Context) IsReplicaOnline(broker int32, tp common.TopicPartition, includeShuttingDown bool) bool {
	registered := c.IsLiveOrShuttingDown(broker)
	live := registered && (includeShuttingDown || !c.shuttingDown[broker])
	return live && !c.offlineDirs[broker][tp]
}

// --- topics and assignments ---

// AllTopics returns the known topics, sorted.
func (c *Context) AllTopics() []string {
	return sortedMapKeys(c.allTopics)
}

// HasTopic reports whether the topic is known.
func (c *Context) HasTopic(t string) bool { return c.allTopics[t] }

// AddTopic records a topic name.
func (c *Context) AddTopic(t string) { c.allTopics[t] = true }

// SetTopicID records a topic id.
func (c *Context) SetTopicID(t string, id [16]byte) { c.topicIDs[t] = id }

// TopicID returns the topic id, zero if none.
func (c *Context) TopicID(t string) [16]byte { return c.topicIDs[t] }

// UpdateAssignment sets a partition's assignment.
func (c *Context) UpdateAssignment(tp common.TopicPartition, a ReplicaAssignment) {
	m := c.assignments[tp.Topic]
	if m == nil {
		m = map[int32]ReplicaAssignment{}
		c.assignments[tp.Topic] = m
	}
	m[tp.Partition] = a
	if a.IsBeingReassigned() {
		c.beingReassigned[tp] = true
	}
}

// Assignment returns a partition's assignment.
func (c *Context) Assignment(tp common.TopicPartition) (ReplicaAssignment, bool) {
	a, ok := c.assignments[tp.Topic][tp.Partition]
	return a, ok
}

// Replicas returns RS of a partition (nil if unknown).
func (c *Context) Replicas(tp common.TopicPartition) []int32 {
	return c.assignments[tp.Topic][tp.Partition].Replicas
}

// PartitionsForTopic returns the topic's partitions sorted by id.
func (c *Context) PartitionsForTopic(t string) []common.TopicPartition {
	out := make([]common.TopicPartition, 0, len(c.assignments[t]))
	for p := range c.assignments[t] {
		out = append(out, common.TopicPartition{Topic: t, Partition: p})
	}
	sortTPs(out)
	return out
}

// AllPartitions returns every known partition, sorted.
func (c *Context) AllPartitions() []common.TopicPartition {
	var out []common.TopicPartition
	for t := range c.assignments {
		for p := range c.assignments[t] {
			out = append(out, common.TopicPartition{Topic: t, Partition: p})
		}
	}
	sortTPs(out)
	return out
}

// PartitionCount is the number of known partitions.
func (c *Context) PartitionCount() int {
	n := 0
	for _, m := range c.assignments {
		n += len(m)
	}
	return n
}

// ReplicasOnBrokers returns every (partition, replica) hosted by the brokers.
func (c *Context) ReplicasOnBrokers(brokers []int32) []PartitionReplica {
	var out []PartitionReplica
	for _, tp := range c.AllPartitions() {
		for _, r := range c.Replicas(tp) {
			if slices.Contains(brokers, r) {
				out = append(out, PartitionReplica{tp, r})
			}
		}
	}
	return out
}

// ReplicasForTopic returns all replicas of a topic.
func (c *Context) ReplicasForTopic(t string) []PartitionReplica {
	var out []PartitionReplica
	for _, tp := range c.PartitionsForTopic(t) {
		for _, r := range c.Replicas(tp) {
			out = append(out, PartitionReplica{tp, r})
		}
	}
	return out
}

// RemoveTopic forgets everything about a topic.
func (c *Context) RemoveTopic(t string) {
	for _, tp := range c.PartitionsForTopic(t) {
		delete(c.leadership, tp)
		delete(c.partitionStates, tp)
		delete(c.beingReassigned, tp)
		for _, r := range c.Replicas(tp) {
			delete(c.replicaStates, PartitionReplica{tp, r})
		}
	}
	delete(c.allTopics, t)
	delete(c.topicIDs, t)
	delete(c.assignments, t)
	delete(c.topicsToDelete, t)
	delete(c.deletionStarted, t)
	delete(c.deleteIneligible, t)
}

// --- leadership ---

// PutLeadership caches a partition's leadership.
func (c *Context) PutLeadership(tp common.TopicPartition, l LeaderIsrAndControllerEpoch) {
	c.leadership[tp] = l
}

// Leadership returns the cached leadership.
func (c *Context) Leadership(tp common.TopicPartition) (LeaderIsrAndControllerEpoch, bool) {
	l, ok := c.leadership[tp]
	return l, ok
}

// --- deletion ---

// IsTopicQueuedForDeletion reports whether the topic is queued for deletion.
func (c *Context) IsTopicQueuedForDeletion(t string) bool { return c.topicsToDelete[t] }

// LeaderEpochForStopReplica is -2 while the topic is queued for deletion,
// else the cached leader epoch, else -1.
func (c *Context) LeaderEpochForStopReplica(tp common.TopicPartition) int32 {
	if c.IsTopicQueuedForDeletion(tp.Topic) {
		return EpochDuringDelete
	}
	if l, ok := c.leadership[tp]; ok {
		return l.LeaderEpoch
	}
	return UnknownLeaderEpoch
}

// OfflinePartitionCount counts OfflinePartition partitions, excluding topics
// whose deletion started (Kafka's OfflinePartitionsCount).
func (c *Context) OfflinePartitionCount() int {
	n := 0
	for tp, s := range c.partitionStates {
		if s == OfflinePartition && !c.deletionStarted[tp.Topic] {
			n++
		}
	}
	return n
}

// PreferredReplicaImbalanceCount counts partitions led by a broker other than
// their first replica (topics queued for deletion excluded).
func (c *Context) PreferredReplicaImbalanceCount() int {
	n := 0
	for tp, l := range c.leadership {
		if c.IsTopicQueuedForDeletion(tp.Topic) {
			continue
		}
		rs := c.Replicas(tp)
		if len(rs) > 0 && l.Leader != rs[0] {
			n++
		}
	}
	return n
}

func sortTPs(tps []common.TopicPartition) {
	slices.SortFunc(tps, common.TopicPartition.Compare)
}
