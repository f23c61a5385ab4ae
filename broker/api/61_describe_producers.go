package api

// DescribeProducers (key 61), version 0 (flexible; Kafka 3.0, KIP-664).
//
// Behaviour: a topic without Read answers TOPIC_AUTHORIZATION_FAILED for
// each of its partitions; the replica manager describes the active
// producers of the others from the local replica's producer state — a
// follower answers too, as in Kafka, so `kafka-transactions.sh
// describe-producers --broker-id` can ask any replica
// (UNKNOWN_TOPIC_OR_PARTITION where this broker hosts no replica).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleDescribeProducers(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DescribeProducersRequest)
	passed := *req
	passed.Topics = nil
	var denied []kmsg.DescribeProducersResponseTopic
	for _, t := range req.Topics {
		if a.authorize(ctx, r, kmsg.ACLOperationRead, kmsg.ACLResourceTypeTopic, t.Topic) {
			passed.Topics = append(passed.Topics, t)
			continue
		}
		rt := kmsg.NewDescribeProducersResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewDescribeProducersResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p, kerr.TopicAuthorizationFailed.Code
			rt.Partitions = append(rt.Partitions, rp)
		}
		denied = append(denied, rt)
	}
	resp := req.ResponseKind().(*kmsg.DescribeProducersResponse)
	if len(passed.Topics) > 0 {
		resp = a.replicas.DescribeProducers(ctx, &passed)
	}
	resp.Topics = append(resp.Topics, denied...)
	return resp, nil
}
