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
// Authorization, as Kafka's KafkaApis: a request carrying transactional
// batches needs a transactional id with Write on it, or every partition
// answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED (acks=0: the connection is
// closed); then each topic needs Write, decided once per topic, and the
// partitions of a denied topic answer TOPIC_AUTHORIZATION_FAILED while the
// others are appended (acks=0 closes the connection after appending them).
// Idempotent batches need no check here: InitProducerId checked
// IdempotentWrite when the producer got its id.
//
// Quotas (throttle.go): the request's size counts against the client's
// producer_byte_rate and its handler time against request_percentage
// (not for acks=0); a violated quota answers throttle_time_ms and mutes
// the connection, but the records are appended and acknowledged as usual.
// An acks=all request is recorded once it has appended, before its wait
// for the ISR (Kafka records it when the response is sent), as the wait
// may overlap the connection's next requests.
//
// acks=all: the response is deferred (network.Request.Defer): once the
// records are appended and the request parked in the produce purgatory,
// the connection may read and handle its next Produce while this one
// waits; responses still leave in request order.
//
// acks=0: no response is written; if any partition failed the manager
// returns an error and the connection is closed, the only way to tell such a
// client to refresh its metadata.

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/network"
)

func (a *Apis) handleProduce(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.ProduceRequest)
	if hasTransactionalRecords(req) &&
		(req.TransactionID == nil || !a.authorize(ctx, r, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTransactionalId, *req.TransactionID)) {
		if req.Acks == 0 {
			return nil, errors.New("api: produce with acks=0 denied for its transactional id")
		}
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		for _, t := range req.Topics {
			resp.Topics = append(resp.Topics, produceErrorTopic(t, kerr.TransactionalIDAuthorizationFailed.Code))
		}
		return resp, nil
	}
	var denied []kmsg.ProduceResponseTopic
	if check := a.topicChecker(ctx, r, kmsg.ACLOperationWrite); check != nil {
		passed := *req
		passed.Topics = nil
		for _, t := range req.Topics {
			if check.allowed(t.Topic) {
				passed.Topics = append(passed.Topics, t)
			} else {
				denied = append(denied, produceErrorTopic(t, kerr.TopicAuthorizationFailed.Code))
			}
		}
		if len(denied) > 0 {
			req = &passed
		}
	}
	var resp *kmsg.ProduceResponse
	var wait network.Waiter
	if len(req.Topics) > 0 || len(denied) == 0 {
		var err error
		resp, wait, err = a.replicas.ProduceInto(ctx, req, r.net.ClientIDOrEmpty(), r.net.KeptProduceResponse())
		if err != nil {
			return nil, err
		}
	}
	if len(denied) > 0 {
		if req.Acks == 0 {
			return nil, errors.New("api: produce with acks=0 denied for a topic")
		}
		if resp == nil {
			resp = req.ResponseKind().(*kmsg.ProduceResponse)
		}
		resp.Topics = append(resp.Topics, denied...)
	}
	a.produceQuota(ctx, r, req.Acks, resp)
	if resp == nil { // acks=0
		return nil, nil
	}
	if wait != nil {
		// acks=all: the connection may handle its next Produce while
		// this one waits for the ISR; the response keeps its place.
		return r.net.Defer(resp, wait)
	}
	return resp, nil
}

// produceQuota records the request's size against producer_byte_rate and,
// unless acks=0, its handler time against the request quota, and throttles
// by the larger (Kafka: the request quota does not apply to acks=0, the
// byte rate does, muting the connection without a response). The records
// are appended either way.
func (a *Apis) produceQuota(ctx context.Context, r *request, acks int16, resp *kmsg.ProduceResponse) {
	if a.quotas == nil {
		return
	}
	user, client := r.quotaIdentity()
	bw := a.quotas.Produce.Record(user, client, float64(r.net.Size), time.Now())
	var rq time.Duration
	if acks != 0 {
		rq = a.requestThrottle(ctx, r)
	}
	var out kmsg.Response
	if resp != nil {
		out = resp
	}
	a.throttleMax(r, out, bw, a.quotas.Produce, rq)
}

// produceErrorTopic answers every partition of t with code.
func produceErrorTopic(t kmsg.ProduceRequestTopic, code int16) kmsg.ProduceResponseTopic {
	rt := kmsg.NewProduceResponseTopic()
	rt.Topic = t.Topic
	for _, p := range t.Partitions {
		rp := kmsg.NewProduceResponseTopicPartition()
		rp.Partition, rp.ErrorCode = p.Partition, code
		rp.BaseOffset, rp.LogAppendTime, rp.LogStartOffset = -1, -1, -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	return rt
}

// hasTransactionalRecords reports whether the first batch of some
// partition is transactional (Kafka's RequestUtils.hasTransactionalRecords):
// a magic-2 batch with bit 4 of its attributes set. It reads two header
// bytes per partition.
func hasTransactionalRecords(req *kmsg.ProduceRequest) bool {
	const magicAt, attributesAt = 16, 21
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			b := p.Records
			if len(b) > attributesAt+1 && b[magicAt] == 2 && b[attributesAt+1]&0x10 != 0 {
				return true
			}
		}
	}
	return false
}
