package api

// CreateTopics (key 19), versions 0–7 (flexible from 5).
//
// Behaviour:
//   - only the active controller serves it; other brokers answer every topic
//     NOT_CONTROLLER and clients re-route using Metadata's controller_id;
//   - per topic: named twice → INVALID_REQUEST; invalid name or a '.'/'_'
//     collision → INVALID_TOPIC_EXCEPTION; exists or marked for deletion →
//     TOPIC_ALREADY_EXISTS; partitions < 1 → INVALID_PARTITIONS; replication
//     factor < 1 or > registered brokers → INVALID_REPLICATION_FACTOR; counts
//     together with an explicit assignment → INVALID_REQUEST; bad assignment
//     (non-consecutive ids, duplicates, unknown brokers, uneven factor) →
//     INVALID_REPLICA_ASSIGNMENT; bad or null config → INVALID_CONFIG /
//     INVALID_REQUEST; v4+ −1 means the broker default;
//   - placement: controller.AssignReplicasToBrokers over the registered
//     brokers sorted by id, rack-aware when every broker has a rack (a mix
//     is refused, Kafka's "enforced" mode);
//   - validate_only (v1+) stops before writing; otherwise /config/topics/<t>
//     and /brokers/topics/<t> are written and the request waits up to
//     timeout_ms for every partition to have a leader in this broker's
//     metadata cache → else REQUEST_TIMED_OUT (the topic still exists);
//     timeout_ms ≤ 0 answers right after the ZooKeeper write;
//   - controller_mutation_rate (KIP-599): each created topic takes its
//     partitions from the principal's quota; from v6 a topic arriving while
//     the quota is exhausted is refused with THROTTLING_QUOTA_EXCEEDED,
//     earlier versions are created and only throttled (throttle.go);
//   - v5+ responses describe the topic: partitions, replication factor and
//     its configs (as DescribeConfigs without synonyms); v7+ the topic id.
//
// Authorization (after the controller and duplicate checks): Create on the
// Cluster or on the topic, else TOPIC_AUTHORIZATION_FAILED "Authorization
// failed."; a created topic the principal may not DescribeConfigs is
// answered without its configs, partition count and replication factor,
// with topic_config_error_code TOPIC_AUTHORIZATION_FAILED (v5+).

import (
	"context"
	"encoding/base64"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/controller"
)

func (a *Apis) handleCreateTopics(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.CreateTopicsRequest)
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	specs := make([]topicSpec, len(req.Topics))
	mayCreate := a.topicCreateChecker(ctx, r)
	// refused marks the entries answered before any creation was tried
	// (named twice, or not authorized); as in Kafka they keep a
	// topic_config_error_code for a missing DescribeConfigs.
	refused := make([]bool, len(req.Topics))
	names := map[string]int{}
	for _, t := range req.Topics {
		names[t.Topic]++
	}
	isController := a.controller != nil && a.controller.IsActive()
	mutations := a.mutationQuota(r, 6)
	for i, t := range req.Topics {
		refused[i] = isController && names[t.Topic] > 1
	}
	errs := eachTopic(a, req.Topics, func(t kmsg.CreateTopicsRequestTopic) string { return t.Topic },
		"create topics request from client contains multiple entries for topic %s",
		func(i int, t kmsg.CreateTopicsRequestTopic) error {
			if !mayCreate(t.Topic) {
				refused[i] = true
				return denied(kerr.TopicAuthorizationFailed, "Authorization failed.")
			}
			spec, err := a.planCreateTopic(ctx, t)
			if err == nil && !req.ValidateOnly {
				err = mutations.Record(float64(len(spec.assignment)))
			}
			if err == nil && !req.ValidateOnly {
				err = a.createTopic(ctx, spec)
			}
			specs[i] = spec
			return err
		})
	var waitFor []leaderWait
	describeConfigs := a.filteringTopicChecker(ctx, r, kmsg.ACLOperationDescribeConfigs)
	for i, t := range req.Topics {
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic = t.Topic
		rt.NumPartitions, rt.ReplicationFactor = -1, -1
		spec := specs[i]
		if errs[i] != nil {
			rt.ErrorCode, rt.ErrorMessage = a.codeMessage(errs[i], "create topic failed", "topic", t.Topic)
			if req.Version < 1 {
				rt.ErrorMessage = nil
			}
			if refused[i] && !describeConfigs.allowed(t.Topic) {
				rt.ConfigErrorCode = kerr.TopicAuthorizationFailed.Code
			}
		} else {
			if req.Version >= 5 {
				if describeConfigs.allowed(t.Topic) {
					rt.NumPartitions = int32(len(spec.assignment))
					rt.ReplicationFactor = spec.replicationFactor()
					for _, e := range a.describeTopicConfigs(spec.configs, nil, false, false) {
						c := kmsg.NewCreateTopicsResponseTopicConfig()
						c.Name, c.Value, c.ReadOnly, c.Source, c.IsSensitive = e.Name, e.Value, e.ReadOnly, int8(e.Source), e.IsSensitive
						rt.Configs = append(rt.Configs, c)
					}
				} else {
					rt.ConfigErrorCode = kerr.TopicAuthorizationFailed.Code
				}
			}
			if !req.ValidateOnly {
				waitFor = append(waitFor, leaderWait{idx: i, topic: spec.name, n: len(spec.assignment)})
			}
		}
		resp.Topics = append(resp.Topics, rt)
	}

	// Wait for leaders of everything just created, then fill in what the
	// wait found (topic ids come from ZooKeeper through the cache).
	for _, w := range a.awaitLeaders(ctx, req.TimeoutMillis, waitFor) {
		rt := &resp.Topics[w.idx]
		rt.ErrorCode = kerr.RequestTimedOut.Code
		if req.Version >= 1 {
			msg := fmt.Sprintf("timed out waiting for the leaders of topic %s to be elected", w.topic)
			rt.ErrorMessage = &msg
		}
	}
	if req.Version >= 7 {
		for _, w := range waitFor {
			if ta, _, err := a.zk.GetTopicAssignment(w.topic); err == nil {
				resp.Topics[w.idx].TopicID = decodeTopicID(ta.TopicID)
			}
		}
	}
	a.throttleMutations(r, resp, mutations)
	return resp, nil
}

// planCreateTopic turns one request entry into a validated topic spec.
func (a *Apis) planCreateTopic(ctx context.Context, t kmsg.CreateTopicsRequestTopic) (topicSpec, error) {
	configs := map[string]string{}
	for _, c := range t.Configs {
		if c.Value == nil {
			return topicSpec{}, fmt.Errorf("%w: null value not supported for topic configs: %s", kerr.InvalidConfig, c.Name)
		}
		configs[c.Name] = *c.Value
	}
	var assignment map[int32][]int32
	if len(t.ReplicaAssignment) > 0 {
		assignment = make(map[int32][]int32, len(t.ReplicaAssignment))
		for _, ra := range t.ReplicaAssignment {
			if _, dup := assignment[ra.Partition]; dup {
				return topicSpec{}, fmt.Errorf("%w: partition %d is assigned twice", kerr.InvalidReplicaAssignment, ra.Partition)
			}
			assignment[ra.Partition] = ra.Replicas
		}
	}
	return a.planTopic(ctx, t.Topic, createOptions{
		numPartitions:     t.NumPartitions,
		replicationFactor: t.ReplicationFactor,
		assignment:        assignment,
		configs:           configs,
		rackMode:          controller.RackAwareEnforced,
	})
}

// leadersElected reports whether the metadata cache knows topic with at
// least n partitions, each with a leader.
func (a *Apis) leadersElected(topic string, n int) bool {
	leaders, ok := a.meta.PartitionLeaders(topic)
	if !ok || len(leaders) < n {
		return false
	}
	for _, l := range leaders {
		if l < 0 {
			return false
		}
	}
	return true
}

// decodeTopicID converts the ZooKeeper form of a topic id (22 characters of
// base64url) into the wire form; a malformed id becomes the zero id.
func decodeTopicID(s string) [16]byte {
	var id [16]byte
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil && len(b) == 16 {
		copy(id[:], b)
	}
	return id
}
