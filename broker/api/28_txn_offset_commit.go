package api

// TxnOffsetCommit (key 28), versions 0–3 (flexible from 3; v3 carries the
// group generation and member, KIP-447).
//
// Behaviour, as KafkaApis checks before the group coordinator sees it:
//   - no Write on the transactional id: every partition answers
//     TRANSACTIONAL_ID_AUTHORIZATION_FAILED; no Read on the group:
//     GROUP_AUTHORIZATION_FAILED;
//   - a topic without Read answers TOPIC_AUTHORIZATION_FAILED, a partition
//     the metadata cache does not know UNKNOWN_TOPIC_OR_PARTITION; the
//     other partitions are still committed;
//   - the group coordinator writes them as pending transactional offsets,
//     visible once the transaction's COMMIT marker reaches the group's
//     __consumer_offsets partition (27_write_txn_markers.go).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleTxnOffsetCommit(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.TxnOffsetCommitRequest)
	answerAll := func(code int16) *kmsg.TxnOffsetCommitResponse {
		resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
		for _, t := range req.Topics {
			resp.Topics = append(resp.Topics, txnCommitTopicAnswer(t, func(int32) int16 { return code }))
		}
		return resp
	}
	if !a.authorize(ctx, r, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTransactionalId, req.TransactionalID) {
		return answerAll(kerr.TransactionalIDAuthorizationFailed.Code), nil
	}
	if !a.authorize(ctx, r, kmsg.ACLOperationRead, kmsg.ACLResourceTypeGroup, req.Group) {
		return answerAll(kerr.GroupAuthorizationFailed.Code), nil
	}
	var failed []kmsg.TxnOffsetCommitResponseTopic
	passed := *req
	passed.Topics = nil
	for _, t := range req.Topics {
		readable := a.authorize(ctx, r, kmsg.ACLOperationRead, kmsg.ACLResourceTypeTopic, t.Topic)
		ok := t
		ok.Partitions = nil
		bad := map[int32]int16{}
		for _, p := range t.Partitions {
			switch {
			case !readable:
				bad[p.Partition] = kerr.TopicAuthorizationFailed.Code
			case !a.meta.HasPartition(t.Topic, p.Partition):
				bad[p.Partition] = kerr.UnknownTopicOrPartition.Code
			default:
				ok.Partitions = append(ok.Partitions, p)
			}
		}
		if len(bad) > 0 {
			failedTopic := t
			failedTopic.Partitions = nil
			for _, p := range t.Partitions {
				if _, isBad := bad[p.Partition]; isBad {
					failedTopic.Partitions = append(failedTopic.Partitions, p)
				}
			}
			failed = append(failed, txnCommitTopicAnswer(failedTopic, func(p int32) int16 { return bad[p] }))
		}
		if len(ok.Partitions) > 0 {
			passed.Topics = append(passed.Topics, ok)
		}
	}
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	if len(passed.Topics) > 0 {
		resp = a.groups.TxnOffsetCommit(ctx, &passed)
	}
	resp.Topics = append(resp.Topics, failed...)
	return resp, nil
}

// txnCommitTopicAnswer answers every partition of t with code(partition).
func txnCommitTopicAnswer(t kmsg.TxnOffsetCommitRequestTopic, code func(int32) int16) kmsg.TxnOffsetCommitResponseTopic {
	rt := kmsg.NewTxnOffsetCommitResponseTopic()
	rt.Topic = t.Topic
	for _, p := range t.Partitions {
		rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
		rp.Partition, rp.ErrorCode = p.Partition, code(p.Partition)
		rt.Partitions = append(rt.Partitions, rp)
	}
	return rt
}
