package api

// Produce (key 0), versions 0–9 (flexible from 9).
//
// Behaviour: delegated to the replica manager, which
// appends to the leader's log and applies every per-partition rule
// (UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, CORRUPT_MESSAGE,
// MESSAGE_TOO_LARGE, INVALID_RECORD, INVALID_REQUIRED_ACKS, producer-state
// errors, NOT_ENOUGH_REPLICAS, INVALID_TOPIC_EXCEPTION for client writes to
// internal topics — the client id travels in the context so that only
// "__admin_client" may write them, as in Kafka).
//
// Authorization: a request with a transactional id needs Write on it, or
// every partition answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
//
// acks=0: no response is written; if any partition failed the manager
// returns an error and the connection is closed, the only way to tell such a
// client to refresh its metadata.

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/replica"
)

func (a *Apis) handleProduce(ctx context.Context, r *request) (kmsg.Response, error) {
	ctx = replica.ContextWithClientID(ctx, r.net.ClientIDOrEmpty())
	req := r.body.(*kmsg.ProduceRequest)
	if req.TransactionID != nil && !a.authorize(ctx, r, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTransactionalId, *req.TransactionID) {
		if req.Acks == 0 {
			return nil, errors.New("api: produce with acks=0 denied for its transactional id")
		}
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		for _, t := range req.Topics {
			rt := kmsg.NewProduceResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewProduceResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, kerr.TransactionalIDAuthorizationFailed.Code
				rp.BaseOffset, rp.LogAppendTime, rp.LogStartOffset = -1, -1, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil
	}
	resp, err := a.replicas.ProduceOrClose(ctx, req)
	if err != nil {
		return nil, err
	}
	if resp == nil { // acks=0
		return nil, nil
	}
	return resp, nil
}
