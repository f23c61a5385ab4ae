package metadata

import (
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klassik/klassik/broker/common"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// LeaderDuringDelete is the leader id the controller sends in UpdateMetadata
// for partitions of a topic queued for deletion (Kafka's
// LeaderAndIsr.LeaderDuringDelete).
const LeaderDuringDelete = -2

// NoLeader is the leader id of a partition without a leader.
const NoLeader = -1

// PartitionState is the cached leadership of one partition, as last sent by
// the controller (Kafka's UpdateMetadataPartitionState).
type PartitionState struct {
	Leader          int32
	LeaderEpoch     int32
	ISR             []int32
	Replicas        []int32
	OfflineReplicas []int32
	ZkVersion       int32
	ControllerEpoch int32
}

func (p PartitionState) clone() PartitionState {
	p.ISR = slices.Clone(p.ISR)
	p.Replicas = slices.Clone(p.Replicas)
	p.OfflineReplicas = slices.Clone(p.OfflineReplicas)
	return p
}

// Endpoint is one listener of a live broker.
type Endpoint struct {
	Listener         string
	Host             string
	Port             int32
	SecurityProtocol int16
}

// Broker is a live broker with all its endpoints.
type Broker struct {
	ID        int32
	Rack      *string
	Endpoints []Endpoint
}

func (b Broker) endpoint(listener string) (Endpoint, bool) {
	for _, e := range b.Endpoints {
		if e.Listener == listener {
			return e, true
		}
	}
	return Endpoint{}, false
}

func (b Broker) clone() Broker {
	b.Endpoints = slices.Clone(b.Endpoints)
	if b.Rack != nil {
		r := *b.Rack
		b.Rack = &r
	}
	return b
}

type topicState struct {
	id         [16]byte
	partitions map[int32]PartitionState
}

// snapshot is an immutable view of the cache. Update builds a new one and
// swaps the pointer, so readers never lock and always see one consistent
// UpdateMetadata's worth of state (Kafka's MetadataSnapshot).
type snapshot struct {
	// gen numbers the snapshots of one Cache: each Update's is one more
	// than the one it replaces (Pinned.Generation).
	gen             uint64
	controllerID    int32
	controllerEpoch int32
	brokers         map[int32]Broker
	topics          map[string]*topicState
	byID            map[[16]byte]string
}

// DefaultCreatingTTL is how long MarkCreating keeps a topic in the "being
// created" state if it never shows up in an UpdateMetadata.
const DefaultCreatingTTL = 30 * time.Second

// Cache is Kafka's (ZooKeeper-mode) MetadataCache: the broker's view of live
// brokers and partition leadership, fed only by the controller's
// UpdateMetadata requests. It is safe for concurrent use: readers load an
// immutable snapshot, writers serialize on a mutex.
type Cache struct {
	brokerID int32
	snap     atomic.Pointer[snapshot]
	cluster  atomic.Pointer[string]
	now      func() time.Time

	// mu guards the following and serializes snapshot replacement.
	mu          sync.Mutex
	creating    map[string]time.Time // topic → mark expiry
	creatingTTL time.Duration
}

// New returns an empty cache for this broker: no live brokers, no topics,
// controller unknown (-1).
func New(brokerID int32, clusterID string) *Cache {
	c := &Cache{brokerID: brokerID, now: time.Now, creating: map[string]time.Time{}, creatingTTL: DefaultCreatingTTL}
	c.snap.Store(&snapshot{controllerID: -1, brokers: map[int32]Broker{}, topics: map[string]*topicState{}, byID: map[[16]byte]string{}})
	c.cluster.Store(&clusterID)
	return c
}

// BrokerID is the id of the broker owning the cache.
func (c *Cache) BrokerID() int32 { return c.brokerID }

// ClusterID is the cluster id reported in Metadata v2+.
func (c *Cache) ClusterID() string { return *c.cluster.Load() }

// SetClusterID sets the cluster id once it has been read from ZooKeeper.
func (c *Cache) SetClusterID(id string) { c.cluster.Store(&id) }

// listenerForSecurityProtocol names the implicit listener of UpdateMetadata
// v1–v2 endpoints, which carry only a security protocol id.
func listenerForSecurityProtocol(sp int16) string {
	switch sp {
	case 0:
		return "PLAINTEXT"
	case 1:
		return "SSL"
	case 2:
		return "SASL_PLAINTEXT"
	case 3:
		return "SASL_SSL"
	}
	return "UNKNOWN"
}

// Update applies an UpdateMetadata request (any version 0–8): the live
// broker list is replaced, the listed partition states are upserted, and a
// partition whose leader is LeaderDuringDelete is removed (with its topic
// once no partitions remain). It returns the removed partitions so the
// caller can complete delayed operations on them. Epoch checks (stale
// controller or broker epoch) are the caller's job, as in Kafka's
// ReplicaManager.
func (c *Cache) Update(req *kmsg.UpdateMetadataRequest) (deleted []common.TopicPartition) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.snap.Load()
	next := &snapshot{
		gen:             old.gen + 1,
		controllerID:    req.ControllerID,
		controllerEpoch: req.ControllerEpoch,
		brokers:         liveBrokers(req),
		topics:          make(map[string]*topicState, len(old.topics)),
		byID:            make(map[[16]byte]string, len(old.byID)),
	}
	// Topic states are shared with the old snapshot until touched.
	for name, ts := range old.topics {
		next.topics[name] = ts
	}
	for id, name := range old.byID {
		next.byID[id] = name
	}
	u := snapshotUpdate{next: next, touched: map[string]bool{}}
	if req.Version <= 4 {
		for _, p := range req.PartitionStates {
			u.apply(p.Topic, [16]byte{}, false, req.Version, p)
		}
	} else {
		for _, t := range req.TopicStates {
			for _, p := range t.PartitionStates {
				u.apply(t.Topic, t.TopicID, req.Version >= 7, req.Version, p)
			}
		}
	}
	for topic := range u.touched {
		if u.finishTopic(topic) {
			delete(c.creating, topic)
		}
	}
	sort.Slice(u.deleted, func(i, j int) bool {
		if u.deleted[i].Topic != u.deleted[j].Topic {
			return u.deleted[i].Topic < u.deleted[j].Topic
		}
		return u.deleted[i].Partition < u.deleted[j].Partition
	})
	c.snap.Store(next)
	return u.deleted
}

// liveBrokers is the request's live broker list with every endpoint named
// by its listener (v0 has one PLAINTEXT endpoint, v1–v2 name it by
// security protocol).
func liveBrokers(req *kmsg.UpdateMetadataRequest) map[int32]Broker {
	out := make(map[int32]Broker, len(req.LiveBrokers))
	for _, lb := range req.LiveBrokers {
		b := Broker{ID: lb.ID}
		if req.Version >= 2 && lb.Rack != nil {
			r := *lb.Rack
			b.Rack = &r
		}
		if req.Version == 0 {
			b.Endpoints = []Endpoint{{Listener: "PLAINTEXT", Host: lb.Host, Port: lb.Port}}
		}
		for _, e := range lb.Endpoints {
			name := e.ListenerName
			if req.Version < 3 {
				name = listenerForSecurityProtocol(e.SecurityProtocol)
			}
			b.Endpoints = append(b.Endpoints, Endpoint{Listener: name, Host: e.Host, Port: e.Port, SecurityProtocol: e.SecurityProtocol})
		}
		out[b.ID] = b
	}
	return out
}

// snapshotUpdate applies one request's partition states to the next
// snapshot, copying a topic's state the first time it is touched.
type snapshotUpdate struct {
	next    *snapshot
	touched map[string]bool
	deleted []common.TopicPartition
}

func (u *snapshotUpdate) mutable(topic string) *topicState {
	ts := u.next.topics[topic]
	if u.touched[topic] {
		return ts
	}
	cp := &topicState{partitions: map[int32]PartitionState{}}
	if ts != nil {
		cp.id = ts.id
		for p, s := range ts.partitions {
			cp.partitions[p] = s
		}
	}
	u.next.topics[topic] = cp
	u.touched[topic] = true
	return cp
}

// apply upserts one partition state; a leader of LeaderDuringDelete
// removes the partition instead.
func (u *snapshotUpdate) apply(topic string, id [16]byte, hasID bool, version int16, p kmsg.UpdateMetadataRequestTopicPartition) {
	ts := u.mutable(topic)
	if hasID && id != ([16]byte{}) && id != ts.id {
		// A recreated topic gets a new id; forget the old one.
		if ts.id != ([16]byte{}) && u.next.byID[ts.id] == topic {
			delete(u.next.byID, ts.id)
		}
		ts.id = id
	}
	if p.Leader == LeaderDuringDelete {
		if _, ok := ts.partitions[p.Partition]; ok {
			u.deleted = append(u.deleted, common.TopicPartition{Topic: topic, Partition: p.Partition})
		}
		delete(ts.partitions, p.Partition)
		return
	}
	st := PartitionState{
		Leader: p.Leader, LeaderEpoch: p.LeaderEpoch, ZkVersion: p.ZKVersion, ControllerEpoch: p.ControllerEpoch,
		ISR: slices.Clone(p.ISR), Replicas: slices.Clone(p.Replicas),
	}
	if version >= 4 {
		st.OfflineReplicas = slices.Clone(p.OfflineReplicas)
	}
	ts.partitions[p.Partition] = st
}

// finishTopic drops a touched topic left without partitions (and its id)
// or indexes its id. It reports whether the topic is present.
func (u *snapshotUpdate) finishTopic(topic string) bool {
	ts := u.next.topics[topic]
	if len(ts.partitions) == 0 {
		delete(u.next.topics, topic)
		if ts.id != ([16]byte{}) && u.next.byID[ts.id] == topic {
			delete(u.next.byID, ts.id)
		}
		return false
	}
	if ts.id != ([16]byte{}) {
		u.next.byID[ts.id] = topic
	}
	return true
}

// MarkCreating records that the caller has started creating these topics
// (auto-creation from Metadata). Until a topic appears in an UpdateMetadata
// or the mark expires, MetadataResponse answers it with
// LEADER_NOT_AVAILABLE instead of UNKNOWN_TOPIC_OR_PARTITION.
func (c *Cache) MarkCreating(topics ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	exp := c.now().Add(c.creatingTTL)
	for _, t := range topics {
		c.creating[t] = exp
	}
}

// SetCreatingTTL changes how long a MarkCreating mark lasts.
func (c *Cache) SetCreatingTTL(d time.Duration) {
	c.mu.Lock()
	c.creatingTTL = d
	c.mu.Unlock()
}

func (c *Cache) isCreating(topic string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	exp, ok := c.creating[topic]
	if ok && !c.now().Before(exp) {
		delete(c.creating, topic)
		return false
	}
	return ok
}

// ControllerID is the controller id of the last UpdateMetadata, -1 before
// the first.
func (c *Cache) ControllerID() int32 { return c.snap.Load().controllerID }

// ControllerEpoch is the controller epoch of the last UpdateMetadata.
func (c *Cache) ControllerEpoch() int32 { return c.snap.Load().controllerEpoch }

// AliveBrokers returns the live brokers sorted by id.
func (c *Cache) AliveBrokers() []Broker {
	s := c.snap.Load()
	out := make([]Broker, 0, len(s.brokers))
	for _, b := range s.brokers {
		out = append(out, b.clone())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// IsAlive reports whether broker id is in the live broker list.
func (c *Cache) IsAlive(id int32) bool {
	_, ok := c.snap.Load().brokers[id]
	return ok
}

// Broker returns a live broker.
func (c *Cache) Broker(id int32) (Broker, bool) {
	b, ok := c.snap.Load().brokers[id]
	if !ok {
		return Broker{}, false
	}
	return b.clone(), true
}

// Endpoint returns the host and port of a live broker on a listener.
func (c *Cache) Endpoint(id int32, listener string) (host string, port int32, ok bool) {
	b, ok := c.snap.Load().brokers[id]
	if !ok {
		return "", 0, false
	}
	e, ok := b.endpoint(listener)
	return e.Host, e.Port, ok
}

// Topics returns the known topic names, sorted.
func (c *Cache) Topics() []string {
	s := c.snap.Load()
	out := make([]string, 0, len(s.topics))
	for t := range s.topics {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Contains reports whether the topic is known.
func (c *Cache) Contains(topic string) bool {
	_, ok := c.snap.Load().topics[topic]
	return ok
}

// Partition returns the cached state of one partition.
func (c *Cache) Partition(topic string, partition int32) (PartitionState, bool) {
	ts, ok := c.snap.Load().topics[topic]
	if !ok {
		return PartitionState{}, false
	}
	p, ok := ts.partitions[partition]
	if !ok {
		return PartitionState{}, false
	}
	return p.clone(), true
}

// Partitions returns every partition state of a topic, keyed by index.
func (c *Cache) Partitions(topic string) map[int32]PartitionState {
	ts, ok := c.snap.Load().topics[topic]
	if !ok {
		return nil
	}
	out := make(map[int32]PartitionState, len(ts.partitions))
	for p, s := range ts.partitions {
		out[p] = s.clone()
	}
	return out
}

// NumPartitions returns the number of cached partitions of a topic.
func (c *Cache) NumPartitions(topic string) (int, bool) {
	ts, ok := c.snap.Load().topics[topic]
	if !ok {
		return 0, false
	}
	return len(ts.partitions), true
}

// TopicID returns the topic id (UpdateMetadata v7+); ok is false for unknown
// topics and for topics without an id.
func (c *Cache) TopicID(topic string) ([16]byte, bool) {
	ts, ok := c.snap.Load().topics[topic]
	if !ok || ts.id == ([16]byte{}) {
		return [16]byte{}, false
	}
	return ts.id, true
}

// TopicName returns the name of a topic id.
func (c *Cache) TopicName(id [16]byte) (string, bool) {
	name, ok := c.snap.Load().byID[id]
	return name, ok
}

// HasPartition reports whether the cluster knows the partition (it is in
// the last UpdateMetadata), hosted here or not.
func (c *Cache) HasPartition(topic string, partition int32) bool {
	ts, ok := c.snap.Load().topics[topic]
	if !ok {
		return false
	}
	_, ok = ts.partitions[partition]
	return ok
}

// BrokerEndpoint is one live broker's endpoint on a given listener.
type BrokerEndpoint struct {
	ID   int32
	Host string
	Port int32
	Rack *string
}

// AliveEndpoints lists the live brokers with their endpoint on listener,
// sorted by id; brokers without that listener are left out.
func (c *Cache) AliveEndpoints(listener string) []BrokerEndpoint {
	var out []BrokerEndpoint
	for _, b := range c.AliveBrokers() {
		if e, ok := b.endpoint(listener); ok {
			out = append(out, BrokerEndpoint{ID: b.ID, Host: e.Host, Port: e.Port, Rack: b.Rack})
		}
	}
	return out
}

// PartitionLeaders returns the leader of every cached partition of topic
// (-1 = none); ok is false when the topic is unknown.
func (c *Cache) PartitionLeaders(topic string) (leaders map[int32]int32, ok bool) {
	ts, ok := c.snap.Load().topics[topic]
	if !ok {
		return nil, false
	}
	leaders = make(map[int32]int32, len(ts.partitions))
	for p, s := range ts.partitions {
		leaders[p] = s.Leader
	}
	return leaders, true
}
