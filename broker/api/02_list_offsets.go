package api

// ListOffsets (key 2), versions 0–7 (flexible from 6).
//
// Behaviour: the replica manager answers earliest (−2), latest (−1), max
// timestamp (−3) and by-timestamp lookups on the leader, honouring the
// isolation level and current_leader_epoch fencing; v0 answers old-style
// offset lists.
//
// Authorization: Describe on each topic; the partitions of a denied topic
// answer TOPIC_AUTHORIZATION_FAILED (timestamp and offset −1) without
// reaching the replica manager.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleListOffsets(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.ListOffsetsRequest)
	check := a.topicChecker(ctx, r, kmsg.ACLOperationDescribe)
	if check == nil {
		return a.replicas.ListOffsets(ctx, req), nil
	}
	passed := *req
	passed.Topics = nil
	var denied []kmsg.ListOffsetsResponseTopic
	for _, t := range req.Topics {
		if check.allowed(t.Topic) {
			passed.Topics = append(passed.Topics, t)
			continue
		}
		rt := kmsg.NewListOffsetsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewListOffsetsResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, kerr.TopicAuthorizationFailed.Code
			rt.Partitions = append(rt.Partitions, rp)
		}
		denied = append(denied, rt)
	}
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	if len(passed.Topics) > 0 {
		resp = a.replicas.ListOffsets(ctx, &passed)
	}
	resp.Topics = append(resp.Topics, denied...)
	return resp, nil
}
