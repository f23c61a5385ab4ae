package api

// DeleteRecords (key 21), versions 0–2 (flexible from 2).
//
// Behaviour: the replica manager advances the log start offset on the
// leader (OFFSET_OUT_OF_RANGE beyond the high watermark,
// NOT_LEADER_OR_FOLLOWER, POLICY_VIOLATION for compact-only topics,
// INVALID_TOPIC_EXCEPTION for internal topics).
//
// Authorization: Delete on each topic; the partitions of a denied topic
// answer TOPIC_AUTHORIZATION_FAILED with low watermark −1.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleDeleteRecords(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DeleteRecordsRequest)
	check := a.topicChecker(ctx, r, kmsg.ACLOperationDelete)
	if check == nil {
		return a.replicas.DeleteRecords(ctx, req), nil
	}
	passed := *req
	passed.Topics = nil
	var denied []kmsg.DeleteRecordsResponseTopic
	for _, t := range req.Topics {
		if check.allowed(t.Topic) {
			passed.Topics = append(passed.Topics, t)
			continue
		}
		rt := kmsg.NewDeleteRecordsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewDeleteRecordsResponseTopicPartition()
			rp.Partition, rp.LowWatermark, rp.ErrorCode = p.Partition, -1, kerr.TopicAuthorizationFailed.Code
			rt.Partitions = append(rt.Partitions, rp)
		}
		denied = append(denied, rt)
	}
	resp := req.ResponseKind().(*kmsg.DeleteRecordsResponse)
	if len(passed.Topics) > 0 {
		resp = a.replicas.DeleteRecords(ctx, &passed)
	}
	resp.Topics = append(resp.Topics, denied...)
	return resp, nil
}
