package api

// FindCoordinator (key 10), versions 0–4 (flexible from 3; v4 batches keys).
//
// Behaviour:
//   - key type 0 (group): the coordinator is the leader of partition
//     abs(javaHashCode(group)) % offsets.topic.num.partitions of
//     __consumer_offsets. A missing offsets topic is created (whatever
//     auto.create.topics.enable says) and the key answered
//     COORDINATOR_NOT_AVAILABLE; so is a partition without a live leader;
//   - key type 1 (transaction): the coordinator is the leader of partition
//     abs(javaHashCode(transactional.id)) % transaction.state.log.num.partitions
//     of __transaction_state, created on first use the same way;
//   - an internal topic is refused (COORDINATOR_NOT_AVAILABLE) while fewer
//     brokers are alive than its replication factor;
//   - authorization: Describe on the group (GROUP_AUTHORIZATION_FAILED) or
//     on the transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
//   - another key type → INVALID_REQUEST;
//   - errors carry node_id −1, host "", port −1.

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleFindCoordinator(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.FindCoordinatorRequest)
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	find := func(key string) (int32, string, int32, error) {
		switch req.CoordinatorType {
		case 0:
			if !a.authorize(ctx, r, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeGroup, key) {
				return -1, "", -1, kerr.GroupAuthorizationFailed
			}
			return a.coordinatorFor(ctx, key, r.listener())
		case 1:
			if a.txn == nil {
				return -1, "", -1, fmt.Errorf("%w: this broker runs no transaction coordinator", kerr.CoordinatorNotAvailable)
			}
			if !a.authorize(ctx, r, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTransactionalId, key) {
				return -1, "", -1, kerr.TransactionalIDAuthorizationFailed
			}
			return a.txnCoordinatorFor(ctx, key, r.listener())
		default:
			return -1, "", -1, fmt.Errorf("%w: unknown coordinator type %d", kerr.InvalidRequest, req.CoordinatorType)
		}
	}
	if req.Version >= 4 {
		for _, key := range req.CoordinatorKeys {
			c := kmsg.NewFindCoordinatorResponseCoordinator()
			c.Key = key
			var err error
			c.NodeID, c.Host, c.Port, err = find(key)
			if err != nil {
				c.NodeID, c.Host, c.Port = -1, "", -1
				c.ErrorCode, c.ErrorMessage = a.codeMessage(err, "find coordinator failed", "key", key)
			}
			resp.Coordinators = append(resp.Coordinators, c)
		}
		return resp, nil
	}
	var err error
	resp.NodeID, resp.Host, resp.Port, err = find(req.CoordinatorKey)
	if err != nil {
		resp.NodeID, resp.Host, resp.Port = -1, "", -1
		resp.ErrorCode, resp.ErrorMessage = a.codeMessage(err, "find coordinator failed", "key", req.CoordinatorKey)
		if req.Version < 1 {
			resp.ErrorMessage = nil
		}
	}
	return resp, nil
}
