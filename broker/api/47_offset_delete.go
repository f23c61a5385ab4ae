package api

// OffsetDelete (key 47), version 0.
//
// Behaviour: the group coordinator deletes the committed offsets of
// partitions no member of the group is subscribed to
// (GROUP_SUBSCRIBED_TO_TOPIC, NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND, ...).
//
// Authorization: Delete on the group, else the top-level error is
// GROUP_AUTHORIZATION_FAILED; then Read on each topic, the partitions of a
// denied topic answering TOPIC_AUTHORIZATION_FAILED. A group-level error of
// the coordinator is answered alone, as Kafka does.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleOffsetDelete(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.OffsetDeleteRequest)
	if !a.authorize(ctx, r, kmsg.ACLOperationDelete, kmsg.ACLResourceTypeGroup, req.Group) {
		resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return resp, nil
	}
	check := a.topicChecker(ctx, r, kmsg.ACLOperationRead)
	if check == nil {
		return a.groups.OffsetDelete(ctx, req), nil
	}
	passed := *req
	passed.Topics = []kmsg.OffsetDeleteRequestTopic{}
	var denied []kmsg.OffsetDeleteResponseTopic
	for _, t := range req.Topics {
		if check.allowed(t.Topic) {
			passed.Topics = append(passed.Topics, t)
			continue
		}
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rt.Partitions = append(rt.Partitions, kmsg.OffsetDeleteResponseTopicPartition{Partition: p.Partition,
				ErrorCode: kerr.TopicAuthorizationFailed.Code})
		}
		denied = append(denied, rt)
	}
	resp := a.groups.OffsetDelete(ctx, &passed)
	if resp.ErrorCode == 0 {
		resp.Topics = append(resp.Topics, denied...)
	}
	return resp, nil
}
