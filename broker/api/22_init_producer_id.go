package api

// InitProducerId (key 22), versions 0–4 (flexible from 2).
//
// Behaviour:
//   - transactional_id null (idempotent producer): any broker answers with a
//     new producer id and epoch 0, drawn from txn.ProducerIDManager (blocks
//     of 1000 claimed under /latest_producer_id_block);
//   - a transactional id goes to the transaction coordinator (broker/txn),
//     which answers NOT_COORDINATOR unless this broker leads the id's
//     __transaction_state partition; "" is INVALID_REQUEST, and so is a
//     producer id without an epoch or the reverse;
//   - authorization: Write on the transactional id
//     (TRANSACTIONAL_ID_AUTHORIZATION_FAILED); without one, IdempotentWrite
//     on the cluster or Write on some topic (CLUSTER_AUTHORIZATION_FAILED);
//   - a block allocation failure (ZooKeeper down) → COORDINATOR_NOT_AVAILABLE
//     (retriable), as Kafka's ProducerIdManager surfaces it.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleInitProducerID(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.InitProducerIDRequest)
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if req.TransactionalID != nil {
		if !a.authorize(ctx, r, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTransactionalId, *req.TransactionalID) {
			resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
			return resp, nil
		}
		if *req.TransactionalID == "" {
			resp.ErrorCode = kerr.InvalidRequest.Code
			return resp, nil
		}
		if a.txn == nil {
			resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
			return resp, nil
		}
		// The producer id and epoch are both given (KIP-360 recovery) or
		// both absent.
		if (req.ProducerID == -1) != (req.ProducerEpoch == -1) {
			resp.ErrorCode = kerr.InvalidRequest.Code
			return resp, nil
		}
		return a.txn.InitProducerID(ctx, req), nil
	}
	if !a.authorize(ctx, r, kmsg.ACLOperationIdempotentWrite, kmsg.ACLResourceTypeCluster, clusterResource) &&
		!a.authorizeAny(ctx, r, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTopic) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	id, err := a.pids.NextID(ctx)
	if err != nil {
		a.logger.Error("could not allocate a producer id block", "err", err)
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return resp, nil
	}
	resp.ProducerID, resp.ProducerEpoch = id, 0
	return resp, nil
}
