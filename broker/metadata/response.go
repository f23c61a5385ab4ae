package metadata

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka's ACL operation codes (AclOperation), used for the authorized
// operations bit fields of Metadata v8+.
const (
	opRead            = 3
	opWrite           = 4
	opCreate          = 5
	opDelete          = 6
	opAlter           = 7
	opDescribe        = 8
	opClusterAction   = 9
	opDescribeConfigs = 10
	opAlterConfigs    = 11
	opIdempotentWrite = 12
)

func bits(ops ...int) int32 {
	var v int32
	for _, o := range ops {
		v |= 1 << o
	}
	return v
}

// Without an authorizer Kafka reports every operation the resource type
// supports as authorized (AuthHelper.authorizedOperations).
var (
	// TopicAuthorizedOperations is the bit field for a topic: READ, WRITE,
	// CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS.
	TopicAuthorizedOperations = bits(opRead, opWrite, opCreate, opDelete, opAlter, opDescribe, opDescribeConfigs, opAlterConfigs)
	// ClusterAuthorizedOperations is the bit field for the cluster: CREATE,
	// ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS,
	// IDEMPOTENT_WRITE.
	ClusterAuthorizedOperations = bits(opCreate, opAlter, opDescribe, opClusterAction, opDescribeConfigs, opAlterConfigs, opIdempotentWrite)
)

// AuthorizedOperationsOmitted is Kafka's "not requested" value
// (Integer.MIN_VALUE).
const AuthorizedOperationsOmitted int32 = -2147483648

// IsInternal reports Kafka's internal topics.
func IsInternal(topic string) bool {
	return topic == "__consumer_offsets" || topic == "__transaction_state"
}

// ValidTopicName applies Kafka's Topic.validate: 1–249 characters of
// [a-zA-Z0-9._-], and not "." or "..".
func ValidTopicName(name string) bool {
	if name == "" || name == "." || name == ".." || len(name) > 249 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// AllTopics reports whether a Metadata request asks for every topic: an
// empty list in v0, a null list in v1+.
func AllTopics(req *kmsg.MetadataRequest) bool {
	if req.Version == 0 {
		return len(req.Topics) == 0
	}
	return req.Topics == nil
}

// MissingTopics returns the requested topic names that are valid, unknown
// to the cache and not already being created: the candidates for
// auto-creation. It returns nil for an "all topics" request. The caller
// decides whether auto-creation applies (auto.create.topics.enable and
// allow_auto_topic_creation, implicitly true before v4), creates them, and
// calls MarkCreating before MetadataResponse.
func (c *Cache) MissingTopics(req *kmsg.MetadataRequest) []string {
	if AllTopics(req) {
		return nil
	}
	s := c.snap.Load()
	var out []string
	seen := map[string]bool{}
	for _, t := range req.Topics {
		if t.Topic == nil || seen[*t.Topic] {
			continue
		}
		name := *t.Topic
		seen[name] = true
		if _, ok := s.topics[name]; ok || !ValidTopicName(name) || c.isCreating(name) {
			continue
		}
		out = append(out, name)
	}
	return out
}

// MetadataResponse answers a Metadata request (v0–v12)
// from the cache for a client connected on listener. Auto-creation is not
// done here: topics the caller marked with MarkCreating are answered with
// LEADER_NOT_AVAILABLE, other unknown ones with UNKNOWN_TOPIC_OR_PARTITION.
func (c *Cache) MetadataResponse(req *kmsg.MetadataRequest, listener string) *kmsg.MetadataResponse {
	return c.Pin().MetadataResponse(req, listener)
}

// Pinned is one snapshot of the cache together with the cluster id, for
// answering Metadata requests from one consistent state and knowing which
// state that was (the api layer keeps encoded answers per generation).
type Pinned struct {
	c       *Cache
	s       *snapshot
	cluster string
}

// Pin returns the current state.
func (c *Cache) Pin() Pinned {
	return Pinned{c: c, s: c.snap.Load(), cluster: c.ClusterID()}
}

// Generation numbers the cache's snapshots: two Pinned with the same
// Generation (and ClusterID) of one Cache hold the same brokers, topics,
// partition states and controller. Every Update makes a new generation,
// whatever it changed.
func (p Pinned) Generation() uint64 { return p.s.gen }

// ClusterID is the cluster id pinned with the snapshot.
func (p Pinned) ClusterID() string { return p.cluster }

// Determines reports whether MetadataResponse's answer to req is fixed by
// the pinned state, the request's fields and the listener alone: true
// unless the request names a topic the snapshot does not hold. Such a
// topic is answered from the "being created" marks (which change without
// a new snapshot and expire with time), and the api layer may auto-create
// it.
func (p Pinned) Determines(req *kmsg.MetadataRequest) bool {
	if AllTopics(req) {
		return true
	}
	for _, t := range req.Topics {
		if t.Topic == nil {
			continue // by id: known or UNKNOWN_TOPIC_ID, from the snapshot
		}
		if _, ok := p.s.topics[*t.Topic]; !ok {
			return false
		}
	}
	return true
}

// MetadataResponse answers req from the pinned state, as
// Cache.MetadataResponse does from the current one.
func (p Pinned) MetadataResponse(req *kmsg.MetadataRequest, listener string) *kmsg.MetadataResponse {
	c, s := p.c, p.s
	v := req.Version
	resp := req.ResponseKind().(*kmsg.MetadataResponse)

	// Brokers: every live broker with an endpoint on this listener.
	for _, b := range s.brokers {
		e, ok := b.endpoint(listener)
		if !ok {
			continue
		}
		mb := kmsg.NewMetadataResponseBroker()
		mb.NodeID, mb.Host, mb.Port = b.ID, e.Host, e.Port
		if b.Rack != nil {
			r := *b.Rack
			mb.Rack = &r
		}
		resp.Brokers = append(resp.Brokers, mb)
	}
	sort.Slice(resp.Brokers, func(i, j int) bool { return resp.Brokers[i].NodeID < resp.Brokers[j].NodeID })

	if id := p.cluster; id != "" {
		resp.ClusterID = &id
	}
	resp.ControllerID = s.controllerID
	if v >= 8 && v <= 10 && req.IncludeClusterAuthorizedOperations {
		resp.AuthorizedOperations = ClusterAuthorizedOperations
	} else {
		resp.AuthorizedOperations = AuthorizedOperationsOmitted
	}

	topicOps := AuthorizedOperationsOmitted
	if v >= 8 && req.IncludeTopicAuthorizedOperations {
		topicOps = TopicAuthorizedOperations
	}

	if AllTopics(req) {
		names := make([]string, 0, len(s.topics))
		for name := range s.topics {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			resp.Topics = append(resp.Topics, c.topicMetadata(s, v, name, s.topics[name], listener, topicOps))
		}
		return resp
	}

	seen := map[string]bool{}
	seenID := map[[16]byte]bool{}
	for _, rt := range req.Topics {
		// v10–v11 carry topic ids in the request schema but Kafka does
		// not honour them: an id or a null name is an invalid request.
		if (v == 10 || v == 11) && (rt.Topic == nil || rt.TopicID != [16]byte{}) {
			resp.Topics = append(resp.Topics, errorTopic(rt.Topic, rt.TopicID, kerr.InvalidRequest.Code, topicOps))
			continue
		}
		if rt.Topic == nil {
			// v12: by id.
			if seenID[rt.TopicID] {
				continue
			}
			seenID[rt.TopicID] = true
			name, ok := s.byID[rt.TopicID]
			if !ok {
				resp.Topics = append(resp.Topics, errorTopic(nil, rt.TopicID, kerr.UnknownTopicID.Code, topicOps))
				continue
			}
			resp.Topics = append(resp.Topics, c.topicMetadata(s, v, name, s.topics[name], listener, topicOps))
			continue
		}
		name := *rt.Topic
		if seen[name] {
			continue // Kafka answers each distinct topic once
		}
		seen[name] = true
		if ts, ok := s.topics[name]; ok {
			resp.Topics = append(resp.Topics, c.topicMetadata(s, v, name, ts, listener, topicOps))
			continue
		}
		code := kerr.UnknownTopicOrPartition.Code
		switch {
		case !ValidTopicName(name):
			code = kerr.InvalidTopicException.Code
		case c.isCreating(name):
			code = kerr.LeaderNotAvailable.Code
		}
		n := name
		et := errorTopic(&n, [16]byte{}, code, topicOps)
		et.IsInternal = IsInternal(name)
		resp.Topics = append(resp.Topics, et)
	}
	return resp
}

func errorTopic(name *string, id [16]byte, code int16, ops int32) kmsg.MetadataResponseTopic {
	t := kmsg.NewMetadataResponseTopic()
	t.ErrorCode = code
	if name != nil {
		n := *name
		t.Topic = &n
	}
	t.TopicID = id
	t.AuthorizedOperations = ops
	t.Partitions = []kmsg.MetadataResponseTopicPartition{}
	return t
}

// topicMetadata builds one topic's entry the way Kafka's
// MetadataCache.getPartitionMetadata does.
func (c *Cache) topicMetadata(s *snapshot, v int16, name string, ts *topicState, listener string, ops int32) kmsg.MetadataResponseTopic {
	t := kmsg.NewMetadataResponseTopic()
	n := name
	t.Topic = &n
	t.TopicID = ts.id
	t.IsInternal = IsInternal(name)
	t.AuthorizedOperations = ops
	idx := make([]int32, 0, len(ts.partitions))
	for p := range ts.partitions {
		idx = append(idx, p)
	}
	sort.Slice(idx, func(i, j int) bool { return idx[i] < idx[j] })
	t.Partitions = make([]kmsg.MetadataResponseTopicPartition, 0, len(idx))

	// Only v0 reports REPLICA_NOT_AVAILABLE and lists only replicas that
	// are alive on this listener; later versions list all and let the
	// client notice the missing brokers.
	filter := v == 0
	aliveOnListener := func(id int32) bool {
		b, ok := s.brokers[id]
		if !ok {
			return false
		}
		_, ok = b.endpoint(listener)
		return ok
	}
	keep := func(ids []int32) []int32 {
		out := make([]int32, 0, len(ids))
		for _, id := range ids {
			if !filter || aliveOnListener(id) {
				out = append(out, id)
			}
		}
		return out
	}
	for _, p := range idx {
		st := ts.partitions[p]
		mp := kmsg.NewMetadataResponseTopicPartition()
		mp.Partition = p
		mp.LeaderEpoch = st.LeaderEpoch
		mp.Replicas = keep(st.Replicas)
		mp.ISR = keep(st.ISR)
		mp.OfflineReplicas = append([]int32{}, st.OfflineReplicas...)
		leader, alive := s.brokers[st.Leader]
		_, onListener := leader.endpoint(listener)
		switch {
		case !alive:
			mp.ErrorCode = kerr.LeaderNotAvailable.Code
			mp.Leader = NoLeader
		case !onListener:
			mp.Leader = NoLeader
			if v >= 6 {
				mp.ErrorCode = kerr.ListenerNotFound.Code
			} else {
				mp.ErrorCode = kerr.LeaderNotAvailable.Code
			}
		default:
			mp.Leader = st.Leader
			if filter && (len(mp.Replicas) < len(st.Replicas) || len(mp.ISR) < len(st.ISR)) {
				mp.ErrorCode = kerr.ReplicaNotAvailable.Code
			}
		}
		t.Partitions = append(t.Partitions, mp)
	}
	return t
}
