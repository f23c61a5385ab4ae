package api

// Metadata (key 3), versions 0–12 (flexible from 9).
//
// Behaviour: the response is built by the metadata cache
// (brokers on the request's listener, controller id, cluster id, partition
// leaders/ISR/epochs, LEADER_NOT_AVAILABLE, LISTENER_NOT_FOUND, ...). This
// layer adds auto-creation, as Kafka's KafkaApis does in ZooKeeper mode:
//   - a requested topic (never for "all topics") that the cache answers with
//     UNKNOWN_TOPIC_OR_PARTITION is created when auto.create.topics.enable
//     is true and the request allows it (allow_auto_topic_creation, v4+;
//     implicitly true before v4), with num.partitions and
//     default.replication.factor and rack-aware placement in "safe" mode;
//   - such a topic is answered LEADER_NOT_AVAILABLE with no partitions (also
//     when it already existed in ZooKeeper but is not in the cache yet);
//     the client retries until the controller has elected leaders;
//   - a failed creation answers the failure's code (INVALID_TOPIC_EXCEPTION
//     for a bad name, INVALID_REPLICATION_FACTOR with too few brokers, ...).
//     Internal topic names are never auto-created here (they are created by
//     their coordinators).
//
// Without an authorizer, an answer that needs no auto-creation is sent
// from its encoding kept for the cache's current generation
// (metadata_answers.go); the bytes are those the cache would build.
//
// Authorization, as Kafka's KafkaApis: Describe on each topic, decided once
// per topic. A topic the principal may not Describe is left out of an
// "all topics" answer and, when named, answered TOPIC_AUTHORIZATION_FAILED
// with no partitions, so its existence is not disclosed. A named topic that
// does not exist and would be auto-created needs Create on the Cluster or
// on the topic, else TOPIC_AUTHORIZATION_FAILED. topic_authorized_operations
// (v8+, when requested) is the bit field of the operations the principal
// may perform on each answered topic, cluster_authorized_operations (v8–v10,
// when requested) that of the cluster, 0 without Describe on it; −2^31
// when not requested.

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/controller"
)

func (a *Apis) handleMetadata(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.MetadataRequest)
	if a.authorizer == nil {
		// The answer is the metadata cache's alone unless it may
		// auto-create: reuse its encoding (metadata_answers.go). With an
		// authorizer it depends on the principal and is built each time.
		if resp, ok := a.cachedMetadata(ctx, req, r.listener()); ok {
			return resp, nil
		}
	}
	resp := a.meta.MetadataResponse(req, r.listener())
	allTopics := req.Topics == nil || (req.Version == 0 && len(req.Topics) == 0)
	allow := req.Version < 4 || req.AllowAutoTopicCreation
	autoCreate := !allTopics && allow && a.conf().AutoCreateTopicsEnable && a.zk != nil
	if a.authorizer == nil && !autoCreate {
		return resp, nil
	}
	// Hiding a topic from an "all topics" answer refuses nothing: such
	// denials are not logged as refusals, as in Kafka.
	describe := a.topicChecker(ctx, r, kmsg.ACLOperationDescribe)
	if allTopics && describe != nil {
		describe.filtering = true
	}
	mayCreate := a.topicCreateChecker(ctx, r)
	withOps := req.Version >= 8 && req.IncludeTopicAuthorizedOperations && a.authorizer != nil
	out := resp.Topics[:0]
	for _, t := range resp.Topics {
		if t.Topic == nil { // v12 by id, unknown
			if withOps {
				t.AuthorizedOperations = authorizedOperationsOmitted
			}
			out = append(out, t)
			continue
		}
		name := *t.Topic
		if !describe.allowed(name) {
			if !allTopics {
				// Neither the id of a topic named nor the name of a topic
				// asked by id (v12) is disclosed.
				denied := metadataDeniedTopic(t.Topic, [16]byte{}, false)
				if requestedByID(req, t.TopicID) {
					denied.Topic, denied.TopicID = nil, t.TopicID
				}
				out = append(out, denied)
			}
			continue
		}
		unknown := t.ErrorCode == kerr.UnknownTopicOrPartition.Code || t.ErrorCode == kerr.InvalidTopicException.Code
		if autoCreate && unknown {
			if !mayCreate(name) {
				out = append(out, metadataDeniedTopic(t.Topic, t.TopicID, config.IsInternalTopic(name)))
				continue
			}
			if t.ErrorCode == kerr.UnknownTopicOrPartition.Code && !config.IsInternalTopic(name) {
				t.ErrorCode = a.autoCreate(ctx, name)
				t.Partitions = nil
			}
		}
		if withOps {
			t.AuthorizedOperations = a.authorizedOperations(ctx, r, kmsg.ACLResourceTypeTopic, name)
		}
		out = append(out, t)
	}
	resp.Topics = out
	if a.authorizer != nil && req.Version >= 8 && req.Version <= 10 && req.IncludeClusterAuthorizedOperations {
		resp.AuthorizedOperations = a.clusterAuthorizedOperations(ctx, r)
	}
	return resp, nil
}

// topicCreateChecker answers whether the principal may create a topic:
// Create on the Cluster (asked at most once) or on the topic.
func (a *Apis) topicCreateChecker(ctx context.Context, r *request) func(topic string) bool {
	if a.authorizer == nil {
		return func(string) bool { return true }
	}
	asked, cluster := false, false
	perTopic := a.topicChecker(ctx, r, kmsg.ACLOperationCreate)
	return func(topic string) bool {
		if !asked {
			asked = true
			cluster = a.authorizeFiltering(ctx, r, kmsg.ACLOperationCreate, kmsg.ACLResourceTypeCluster, clusterResource)
		}
		return cluster || perTopic.allowed(topic)
	}
}

// requestedByID reports whether a v12+ request named the topic by its id.
func requestedByID(req *kmsg.MetadataRequest, id [16]byte) bool {
	if req.Version < 12 || id == [16]byte{} {
		return false
	}
	for _, t := range req.Topics {
		if t.Topic == nil && t.TopicID == id {
			return true
		}
	}
	return false
}

// metadataDeniedTopic is the entry of a topic the principal may not see
// or create: TOPIC_AUTHORIZATION_FAILED, no partitions.
func metadataDeniedTopic(name *string, id [16]byte, internal bool) kmsg.MetadataResponseTopic {
	t := kmsg.NewMetadataResponseTopic()
	t.Topic, t.TopicID, t.IsInternal = name, id, internal
	t.ErrorCode = kerr.TopicAuthorizationFailed.Code
	t.AuthorizedOperations = authorizedOperationsOmitted
	t.Partitions = []kmsg.MetadataResponseTopicPartition{}
	return t
}

// autoCreate creates a topic with the broker defaults and returns the code
// the Metadata response carries for it.
func (a *Apis) autoCreate(ctx context.Context, topic string) int16 {
	spec, err := a.planTopic(ctx, topic, createOptions{numPartitions: -1, replicationFactor: -1, rackMode: controller.RackAwareSafe})
	if err == nil {
		err = a.createTopic(ctx, spec)
	}
	if err == nil || errors.Is(err, kerr.TopicAlreadyExists) {
		return kerr.LeaderNotAvailable.Code
	}
	return a.errorCode(err, "auto topic creation failed", "topic", topic)
}
