package api

// OffsetForLeaderEpoch (key 23), versions 0–4 (flexible from 4).
//
// Behaviour: the leader answers from its leader-epoch cache the end offset
// of the requested epoch; FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH when
// current_leader_epoch is older or newer than its own.
//
// Authorization, as Kafka since KIP-320 (consumers use this API too to
// detect log truncation): ClusterAction on the Cluster allows every topic
// (followers); without it each topic needs Describe, and the partitions of
// a denied topic answer TOPIC_AUTHORIZATION_FAILED.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleOffsetForLeaderEpoch(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.OffsetForLeaderEpochRequest)
	if a.authorizer == nil || a.authorizeFiltering(ctx, r, kmsg.ACLOperationClusterAction, kmsg.ACLResourceTypeCluster, clusterResource) {
		return a.replicas.OffsetForLeaderEpoch(ctx, req), nil
	}
	check := a.topicChecker(ctx, r, kmsg.ACLOperationDescribe)
	passed := *req
	passed.Topics = nil
	var denied []kmsg.OffsetForLeaderEpochResponseTopic
	for _, t := range req.Topics {
		if check.allowed(t.Topic) {
			passed.Topics = append(passed.Topics, t)
			continue
		}
		rt := kmsg.NewOffsetForLeaderEpochResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, kerr.TopicAuthorizationFailed.Code
			rt.Partitions = append(rt.Partitions, rp)
		}
		denied = append(denied, rt)
	}
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	if len(passed.Topics) > 0 {
		resp = a.replicas.OffsetForLeaderEpoch(ctx, &passed)
	}
	resp.Topics = append(resp.Topics, denied...)
	return resp, nil
}
