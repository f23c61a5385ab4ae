package api

// AddPartitionsToTxn (key 24), versions 0–3 (flexible from 3).
//
// Behaviour, as KafkaApis checks before the coordinator sees the request:
//   - no Write on the transactional id: every partition answers
//     TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
//   - a topic without Write answers TOPIC_AUTHORIZATION_FAILED, a partition
//     the metadata cache does not know UNKNOWN_TOPIC_OR_PARTITION; when any
//     partition failed so, the others answer OPERATION_NOT_ATTEMPTED and
//     nothing is added;
//   - otherwise the transaction coordinator adds them (broker/txn).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleAddPartitionsToTxn(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.AddPartitionsToTxnRequest)
	if !a.authorize(ctx, r, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTransactionalId, req.TransactionalID) {
		return addPartitionsAnswer(req, func(string, int32) int16 { return kerr.TransactionalIDAuthorizationFailed.Code }), nil
	}
	writable := map[string]bool{}
	failed := false
	for _, t := range req.Topics {
		if _, seen := writable[t.Topic]; !seen {
			writable[t.Topic] = a.authorize(ctx, r, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTopic, t.Topic)
		}
		for _, p := range t.Partitions {
			failed = failed || !writable[t.Topic] || !a.meta.HasPartition(t.Topic, p)
		}
	}
	if failed {
		return addPartitionsAnswer(req, func(topic string, p int32) int16 {
			switch {
			case !writable[topic]:
				return kerr.TopicAuthorizationFailed.Code
			case !a.meta.HasPartition(topic, p):
				return kerr.UnknownTopicOrPartition.Code
			default:
				return kerr.OperationNotAttempted.Code
			}
		}), nil
	}
	return a.txn.AddPartitionsToTxn(ctx, req), nil
}

// addPartitionsAnswer answers every partition of req with code(topic, p).
func addPartitionsAnswer(req *kmsg.AddPartitionsToTxnRequest, code func(topic string, p int32) int16) *kmsg.AddPartitionsToTxnResponse {
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewAddPartitionsToTxnResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p, code(t.Topic, p)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
